//! One turn through `query()`: the scripted model on the bundled simulator lists the project
//! with Glob, reads a file with Read, then answers. Prints every event of the loop as it
//! comes: requests, tool calls and results, text, usage and the terminal.
//!
//!     cargo run -p tine-query-loop --example one_turn

use std::sync::Arc;

use futures::StreamExt;
use serde_json::json;
use tine_api_client::{ClientConfig, Credentials, HttpClient, Message, ModelClient};
use tine_mock_api::{MockConfig, MockServer, Reply, Rule, Scenario};
use tine_query_loop::{
    QueryEvent, QueryParams, RequestTemplate, query, system_prompt_blocks, tool_definitions,
};
use tine_tools::{GlobTool, ReadTool, Tool, ToolContext};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let project = tempfile::tempdir()?;
    std::fs::write(
        project.path().join("main.rs"),
        "fn main() {\n    println!(\"hi\");\n}\n",
    )?;

    // The scripted model: Glob on its first reply, Read on its second, then a text answer.
    let scenario = Scenario::new()
        .rule(
            Rule::new()
                .assistant_turns(0)
                .reply(Reply::tool_use("Glob", json!({"pattern": "*.rs"}))),
        )
        .rule(
            Rule::new()
                .assistant_turns(1)
                .reply(Reply::tool_use("Read", json!({"file_path": "main.rs"}))),
        )
        .default_reply(Reply::text("main.rs prints \"hi\"; nothing else is here."));
    let server = MockServer::start(MockConfig::new(scenario)).await?;
    let client: Arc<dyn ModelClient> = Arc::new(HttpClient::new(ClientConfig::new(
        server.base_url(),
        Credentials::api_key("offline"),
    ))?);

    let tools: Arc<[Arc<dyn Tool>]> = Arc::from(vec![
        Arc::new(GlobTool) as Arc<dyn Tool>,
        Arc::new(ReadTool) as Arc<dyn Tool>,
    ]);
    let template = RequestTemplate {
        model: "claude-sonnet-4-5".into(),
        system: Arc::new(system_prompt_blocks("You are a coding agent.")),
        tools: tool_definitions(&tools),
        thinking: None,
        skip_cache_write: false,
        replacements: None,
        effort: None,
    };
    // Defaults: every call allowed, no hooks, no compactor, no turn cap.
    let params = QueryParams::new(client, template, tools, ToolContext::new(project.path()));

    let mut events = query(params, vec![Message::user("What does this project do?")]);
    while let Some(event) = events.next().await {
        match event {
            QueryEvent::RequestStart { turn, .. } => println!("-- request {turn}"),
            QueryEvent::ToolUseStart { name, .. } => println!("tool call: {name}"),
            QueryEvent::ToolResult { tool, output, .. } => {
                println!("tool result ({tool}): {}", output.summary)
            }
            QueryEvent::TextDelta { text } => print!("{text}"),
            QueryEvent::Usage { usage, .. } => println!(
                "\n   usage: input {}, cache read {}, output {}",
                usage.input_tokens, usage.cache_read_input_tokens, usage.output_tokens
            ),
            QueryEvent::Transition(transition) => println!("   -> {transition:?}"),
            QueryEvent::Terminal(terminal) => println!("terminal: {terminal:?}"),
            _ => {}
        }
    }
    server.stop().await;
    Ok(())
}
