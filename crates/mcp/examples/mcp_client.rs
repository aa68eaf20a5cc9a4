//! An MCP client against a tiny server: the crate's test server (streamable HTTP, in-process
//! on 127.0.0.1) is configured as `--mcp-config` JSON would give it; the manager connects,
//! lists its tools as tine tools named `mcp__SERVER__TOOL`, and calls two of them.
//!
//!     cargo run -p tine-mcp --example mcp_client

use serde_json::json;
use tine_config::LoadedSettings;
use tine_mcp::test_server::{TestServer, serve_http};
use tine_mcp::{LIST_RESOURCES_TOOL, McpManager, McpOptions, McpSources};
use tine_tools::{ToolContext, run_tool};
use tokio_util::sync::CancellationToken;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let scratch = tempfile::tempdir()?;
    let stop = CancellationToken::new();
    let addr = serve_http(TestServer::default(), stop.clone()).await?;

    // What `tine -p ... --mcp-config '{"mcpServers": ...}'` hands the manager.
    let config =
        json!({"mcpServers": {"demo": {"type": "http", "url": format!("http://{addr}/mcp")}}});
    let sources = McpSources::new(scratch.path()).with_flag_configs([config.to_string()]);
    let settings = LoadedSettings::default();
    let options = McpOptions::new(&scratch.path().join("tine-home"));
    let (manager, tools, warnings) = McpManager::start(&sources, &settings, options).await;
    for warning in &warnings {
        println!("warning: {}", warning.message);
    }
    for server in manager.statuses() {
        println!(
            "server {} ({}): {}",
            server.name, server.origin, server.status
        );
    }
    let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
    println!("tools: {}", names.join(", "));

    let ctx = ToolContext::new(scratch.path());
    for (name, input) in [
        ("mcp__demo__echo", json!({"text": "hello over MCP"})),
        ("mcp__demo__add", json!({"a": 1.5, "b": 2})),
        (LIST_RESOURCES_TOOL, json!({})),
    ] {
        let Some(tool) = tools.iter().find(|t| t.name() == name) else {
            println!("{name}: not offered");
            continue;
        };
        let output = run_tool(tool.as_ref(), input, &ctx).await;
        println!(
            "{name} -> {}{}",
            output.content.trim(),
            if output.is_error { " (error)" } else { "" }
        );
    }

    manager.shutdown().await;
    stop.cancel();
    Ok(())
}
