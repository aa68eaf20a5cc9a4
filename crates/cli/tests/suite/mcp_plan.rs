//! Plan mode and MCP tools through the real binary, with tine-mcp's stdio test server: a tool
//! whose `readOnlyHint` is true runs in plan mode (as Claude Code counts read-only tools) when a
//! rule allows it, and still needs that approval; a tool without the hint is refused by plan
//! mode even with a rule.

use serde_json::json;
use tine_e2e::tine_mock_api::{Reply, Rule, Scenario};
use tine_e2e::{Project, request_bodies};

use super::mcp_session::server_binary;
use super::{mock, tine};

fn calling(tool: &str, input: serde_json::Value) -> Scenario {
    Scenario::new()
        .rule(
            Rule::new()
                .assistant_turns(0)
                .reply(Reply::tool_use(tool, input)),
        )
        .rule(Rule::new().tool_results(true).reply(Reply::text("Done.")))
        .default_reply(Reply::text("Anything else?"))
}

/// The text of the tool results the second request carries.
fn results(server: &tine_e2e::tine_mock_api::MockServer) -> String {
    let bodies = request_bodies(server);
    bodies[1]["messages"]
        .as_array()
        .and_then(|m| m.last())
        .map(|m| m["content"].to_string())
        .unwrap_or_default()
}

async fn run_in_plan(
    tool: &str,
    input: serde_json::Value,
    rule: Option<&str>,
) -> (String, serde_json::Value) {
    let project = Project::new();
    let servers = json!({"mcpServers": {"srv": {
        "command": server_binary().display().to_string(),
        "args": ["--no-resources"],
    }}})
    .to_string();
    let server = mock(calling(tool, input)).await;
    let mut run = tine(&project, &server)
        .env("TINE_MCP_TIMEOUT", "30000")
        .args(["--mcp-config", servers.as_str()])
        .args([
            "--permission-mode",
            "plan",
            "-p",
            "go",
            "--output-format",
            "json",
        ]);
    if let Some(rule) = rule {
        run = run.args(["--allowedTools", rule]);
    }
    let out = run.run().await;
    out.assert_success();
    (results(&server), out.json())
}

#[tokio::test]
async fn a_read_only_mcp_tool_runs_in_plan_mode_when_allowed_and_others_are_refused() {
    let (text, result) = run_in_plan(
        "mcp__srv__echo",
        json!({"text": "planned echo"}),
        Some("mcp__srv"),
    )
    .await;
    assert!(text.contains("planned echo"), "{text}");
    assert_eq!(result["permission_denials"], json!([]), "{result}");

    // Without a rule the read-only tool still needs approval (headless: refused, not by plan).
    let (text, result) = run_in_plan("mcp__srv__echo", json!({"text": "unasked"}), None).await;
    assert!(!text.contains("unasked\""), "{text}");
    assert!(!text.contains("plan mode"), "{text}");
    assert_eq!(
        result["permission_denials"].as_array().map(Vec::len),
        Some(1),
        "{result}"
    );

    // A tool without readOnlyHint is refused by plan mode even with the server's rule.
    let (text, result) =
        run_in_plan("mcp__srv__add", json!({"a": 1, "b": 2}), Some("mcp__srv")).await;
    assert!(text.contains("plan mode"), "{text}");
    assert_eq!(
        result["permission_denials"].as_array().map(Vec::len),
        Some(1),
        "{result}"
    );
}
