//! An Agent SDK app's in-process server (`"type": "sdk"` in `--mcp-config`, as the SDKs pass
//! it) given to a run no SDK app drives: the binary says, at start-up and in `/mcp`, that such
//! a server needs the SDK's control protocol; the run goes on without its tools.

use serde_json::json;
use tine_e2e::tine_mock_api::{Reply, Scenario};
use tine_e2e::{Project, request_bodies};

use super::{mock, tine};

fn sdk_config() -> String {
    json!({"mcpServers": {"calc": {"type": "sdk", "name": "calc"}}}).to_string()
}

#[tokio::test]
async fn an_sdk_server_without_an_sdk_app_is_a_clear_warning_and_no_tools() {
    let project = Project::new();
    let server = mock(Scenario::new().default_reply(Reply::text("Hi."))).await;
    let out = tine(&project, &server)
        .args(["--mcp-config", &sdk_config(), "-p", "hi"])
        .run()
        .await;
    out.assert_success();
    assert!(out.stdout.contains("Hi."), "{}", out.stdout);
    assert!(
        out.stderr.contains("MCP server calc")
            && out.stderr.contains("need the Agent SDK's control protocol"),
        "{}",
        out.stderr
    );
    let bodies = request_bodies(&server);
    let tools = bodies[0]["tools"].to_string();
    assert!(!tools.contains("mcp__calc"), "{tools}");
}

#[tokio::test]
async fn slash_mcp_lists_an_sdk_server_as_failed_with_why() {
    let project = Project::new();
    let server = mock(Scenario::new().default_reply(Reply::text("Hi."))).await;
    let out = tine(&project, &server)
        .args(["--mcp-config", &sdk_config(), "-p", "/mcp"])
        .run()
        .await;
    out.assert_success();
    assert!(
        out.stdout
            .contains("calc (dynamic, --mcp-config (inline JSON)): failed (sdk MCP servers need"),
        "{}",
        out.stdout
    );
    assert!(request_bodies(&server).is_empty(), "/mcp asked the model");
}
