//! Scripted conversations: the shipped scenarios driven the way an agent loop drives them.

use std::path::Path;

use serde_json::{Value, json};
use tine_mock_api::{Reply, Rule, Scenario};

use super::support::*;

fn scenario_file(name: &str) -> Scenario {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios")
        .join(name);
    Scenario::from_file(&path).unwrap()
}

fn tools() -> Value {
    json!([
        {"name": "Bash", "description": "Run a command", "input_schema": {"type": "object"}},
        {"name": "Edit", "description": "Edit a file", "input_schema": {"type": "object"}},
        {"name": "Read", "description": "Read a file", "input_schema": {"type": "object"}},
    ])
}

/// Runs a loop: send, append the assistant turn, answer each tool_use with a tool_result.
async fn run_loop(server: &tine_mock_api::MockServer, task: &str, max_turns: usize) -> Vec<Value> {
    let mut messages = vec![json!({"role": "user", "content": task})];
    let mut replies = Vec::new();
    for _ in 0..max_turns {
        let b = json!({"model": "claude-test", "max_tokens": 4000, "tools": tools(), "messages": messages});
        let (status, reply) = post_json(server, &b).await;
        assert_eq!(status, 200, "{reply}");
        messages.push(json!({"role": "assistant", "content": reply["content"]}));
        let results: Vec<Value> = reply["content"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|b| b["type"] == "tool_use")
            .map(|b| json!({"type": "tool_result", "tool_use_id": b["id"], "content": "ok"}))
            .collect();
        let done = reply["stop_reason"] != "tool_use";
        replies.push(reply);
        if done {
            break;
        }
        messages.push(json!({"role": "user", "content": results}));
    }
    replies
}

#[tokio::test]
async fn demo_scenario_reads_edits_runs_and_reports() {
    let server = start(scenario_file("demo.json")).await;
    let replies = run_loop(&server, "Please fix the typo in src/hello.txt", 6).await;
    assert_eq!(replies.len(), 4);
    let tool = |r: &Value| {
        r["content"]
            .as_array()
            .unwrap()
            .iter()
            .find(|b| b["type"] == "tool_use")
            .cloned()
    };
    let read = tool(&replies[0]).unwrap();
    assert_eq!(read["name"], "Read");
    assert_eq!(read["input"], json!({"file_path": "src/hello.txt"}));
    assert_eq!(read["id"], "toolu_mock_0001");
    let edit = tool(&replies[1]).unwrap();
    assert_eq!(edit["name"], "Edit");
    assert_eq!(edit["input"]["old_string"], "Helo");
    assert_eq!(edit["input"]["file_path"], "src/hello.txt");
    let bash = tool(&replies[2]).unwrap();
    assert_eq!(bash["input"], json!({"command": "cat src/hello.txt"}));
    assert_eq!(replies[3]["stop_reason"], "end_turn");
    let rules: Vec<String> = server
        .requests()
        .iter()
        .map(|r| r.rule.clone().unwrap())
        .collect();
    assert_eq!(
        rules,
        [
            "demo: read the file",
            "demo: edit the file",
            "demo: run a command",
            "demo: report"
        ]
    );
    server.stop().await;
}

#[tokio::test]
async fn example_scenario_parses_and_answers() {
    let server = start(scenario_file("example.json")).await;
    assert_eq!(post_json(&server, &body("hi")).await.0, 429);
    let (_, v) = post_json(&server, &body("hello there")).await;
    assert_eq!(v["content"][0]["text"], "Hello! What shall we work on?");
    let (_, v) = post_json(&server, &body("hello again")).await;
    assert_eq!(
        v["content"][0]["text"], "OK.",
        "the greeting rule was used once"
    );
    server.stop().await;
}

#[tokio::test]
async fn system_and_marker_rules_route_forks_and_side_queries() {
    let server = start(
        Scenario::new()
            .rule(
                Rule::new()
                    .marker("<fork-boilerplate>")
                    .reply(Reply::text("fork child")),
            )
            .rule(
                Rule::new()
                    .system_contains("memory selector")
                    .max_tokens_at_most(256)
                    .reply(Reply::text("[]")),
            )
            .rule(
                Rule::new()
                    .last_user_regex(r"(\d+) \+ (\d+)")
                    .unwrap()
                    .reply(Reply::text("$1 plus $2")),
            ),
    )
    .await;
    let mut fork = body("x");
    fork["messages"] = json!([{"role": "user", "content": [{"type": "text", "text": "<fork-boilerplate>do it</fork-boilerplate>"}]}]);
    assert_eq!(
        post_json(&server, &fork).await.1["content"][0]["text"],
        "fork child"
    );
    let mut side = body("pick");
    side["system"] = json!("You are a memory selector.");
    side["max_tokens"] = json!(256);
    assert_eq!(
        post_json(&server, &side).await.1["content"][0]["text"],
        "[]"
    );
    assert_eq!(
        post_json(&server, &body("what is 2 + 3?")).await.1["content"][0]["text"],
        "2 plus 3"
    );
    server.stop().await;
}
