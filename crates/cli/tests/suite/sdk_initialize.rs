//! What the TypeScript Agent SDK sends in `initialize` rather than on the command line (its
//! system prompt, its in-process MCP servers, its other MCP servers under
//! `--await-initialize`, `disallowedTools`), the result lines' SDK subtypes and `errors`, and
//! the stream's uuids being the transcript's (so `--resume-session-at` takes one an app saw).
//! Through the binary against the mock; the test plays the app.

use serde_json::{Value, json};
use tine_e2e::tine_mock_api::{Reply, Rule, Scenario};
use tine_e2e::{Project, request_bodies};

use super::mcp_session::server_binary;
use super::sdk_control::App;
use super::{mock, tine, tool_names};

/// The app's in-process server `calc` (one tool, `add`), answering one `mcp_message`.
fn calc_answer(message: &Value) -> Value {
    let id = message["id"].clone();
    let result = match message["method"].as_str() {
        Some("initialize") => json!({
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "calc", "version": "1.0.0"},
        }),
        Some("tools/list") => json!({"tools": [{
            "name": "add",
            "description": "Adds two numbers",
            "inputSchema": {"type": "object", "properties": {
                "a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]},
        }]}),
        Some("tools/call") => {
            let args = &message["params"]["arguments"];
            let sum = args["a"].as_f64().unwrap_or(0.0) + args["b"].as_f64().unwrap_or(0.0);
            json!({"content": [{"type": "text", "text": format!("the sum is {sum}")}]})
        }
        // A notification has no answer; its response body is empty.
        _ => return json!({"jsonrpc": "2.0", "result": {}}),
    };
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// Reads lines, answering every `mcp_message` for `calc`, until `pick` says yes.
async fn serve_until(app: &mut App, what: &str, pick: impl Fn(&Value) -> bool) -> Value {
    loop {
        let line = app.until(what, |_| true).await;
        if line["type"] == "control_request" && line["request"]["subtype"] == "mcp_message" {
            assert_eq!(line["request"]["server_name"], "calc", "{line}");
            let answer = calc_answer(&line["request"]["message"]);
            app.send_json(json!({"type": "control_response", "response": {
                "subtype": "success",
                "request_id": line["request_id"],
                "response": {"mcp_response": answer},
            }}))
            .await;
            continue;
        }
        if pick(&line) {
            return line;
        }
    }
}

fn system_text(body: &Value) -> String {
    body["system"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|b| b["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn initialize_carries_the_system_prompt_the_servers_and_the_disallowed_tools() {
    let server = mock(
        Scenario::new()
            .rule(
                Rule::new()
                    .last_user_contains("add them")
                    .reply(Reply::tool_use("mcp__calc__add", json!({"a": 2, "b": 40}))),
            )
            .rule(
                Rule::new()
                    .tool_results(true)
                    .reply(Reply::text("It is 42.")),
            )
            .default_reply(Reply::text("ok")),
    )
    .await;
    let project = Project::new();
    let stdio = json!({"tst": {"type": "stdio",
        "command": server_binary().display().to_string(), "args": ["--no-resources"]}});
    let mut app = App::start(
        &project,
        &server,
        &["--await-initialize", "--allowedTools", "mcp__calc__add"],
    );
    app.request(
        "req_1",
        json!({"subtype": "initialize", "hooks": null,
               "systemPrompt": ["You are a terse calculator."],
               "appendSystemPrompt": "Always show the sum.",
               "sdkMcpServers": ["calc"],
               "mcpServers": stdio,
               "disallowedTools": ["Bash"]}),
    )
    .await;
    let answer = serve_until(&mut app, "initialize's answer", |v| {
        v["type"] == "control_response" && v["response"]["request_id"] == "req_1"
    })
    .await;
    let answer = &answer["response"];
    assert_eq!(answer["subtype"], "success", "{answer}");
    assert_eq!(answer["response"]["mcp_servers_applied"], true);
    assert_eq!(answer["response"]["disallowed_tools_applied"], true);
    app.user("add them").await;
    let result = serve_until(&mut app, "the result", |v| v["type"] == "result").await;
    assert_eq!(result["subtype"], "success", "{result}");
    assert_eq!(result["result"], "It is 42.");

    let bodies = request_bodies(&server);
    // The app's prompt replaces tine's; what it appends follows.
    let system = system_text(&bodies[0]);
    assert!(
        system.starts_with("You are a terse calculator.")
            && system.contains("Always show the sum."),
        "{system}"
    );
    assert!(!system.contains("You are tine"), "{system}");
    let names = tool_names(&bodies[0]);
    assert!(names.iter().any(|n| n == "mcp__calc__add"), "{names:?}");
    assert!(names.iter().any(|n| n == "mcp__tst__echo"), "{names:?}");
    assert!(!names.iter().any(|n| n == "Bash"), "{names:?}");
    // The model read what the app's server answered.
    assert!(
        bodies[1]["messages"].to_string().contains("the sum is 42"),
        "{}",
        bodies[1]["messages"]
    );
    let (status, _) = app.finish().await;
    assert!(status.success());
}

#[tokio::test]
async fn an_empty_system_prompt_part_sends_no_system() {
    let server = mock(Scenario::new().default_reply(Reply::text("ok"))).await;
    let project = Project::new();
    let mut app = App::start(&project, &server, &[]);
    // The TypeScript SDK's default: `systemPrompt: [""]`.
    app.request(
        "req_1",
        json!({"subtype": "initialize", "systemPrompt": [""]}),
    )
    .await;
    app.response("req_1").await;
    app.user("hello").await;
    app.result().await;
    let body = &request_bodies(&server)[0];
    assert!(body.get("system").is_none(), "{}", body["system"]);
    // A prompt that is neither a string nor strings is refused, by name.
    let mut bad = App::start(&project, &server, &[]);
    bad.request("req_1", json!({"subtype": "initialize", "systemPrompt": 7}))
        .await;
    let refused = bad.response("req_1").await;
    assert_eq!(refused["subtype"], "error");
    assert!(
        refused["error"].as_str().unwrap().contains("systemPrompt"),
        "{refused}"
    );
    bad.finish().await;
    app.finish().await;
}

#[tokio::test]
async fn results_speak_the_sdks_subtypes_with_errors() {
    let server = mock(
        Scenario::new()
            .rule(
                Rule::new()
                    .last_user_contains("loop")
                    .reply(Reply::tool_use("Glob", json!({"pattern": "*"}))),
            )
            .default_reply(Reply::tool_use("Glob", json!({"pattern": "*.rs"}))),
    )
    .await;
    let project = Project::new();
    let mut app = App::start(&project, &server, &["--max-turns", "1"]);
    app.request("req_1", json!({"subtype": "initialize"})).await;
    app.response("req_1").await;
    app.user("loop").await;
    let result = app.result().await;
    assert_eq!(result["subtype"], "error_max_turns", "{result}");
    assert_eq!(result["is_error"], true);
    assert!(
        result["errors"][0]
            .as_str()
            .unwrap()
            .contains("--max-turns"),
        "{result}"
    );
    assert_eq!(result["stop_reason"], "tool_use");
    app.finish().await;
}

#[tokio::test]
async fn the_streams_uuids_are_the_transcripts_and_resume_session_at_takes_one() {
    let server = mock(
        Scenario::new()
            .rule(
                Rule::new()
                    .last_user_contains("what was the word")
                    .first_user_contains("banana")
                    .reply(Reply::text("The word was banana.")),
            )
            .default_reply(Reply::text("Noted.")),
    )
    .await;
    let project = Project::new();
    let mut app = App::start(&project, &server, &[]);
    app.request("req_1", json!({"subtype": "initialize"})).await;
    app.response("req_1").await;
    app.user("remember banana").await;
    let first = app.until("the reply", |v| v["type"] == "assistant").await;
    app.result().await;
    app.user("remember cherry").await;
    let result = app.result().await;
    let (_, seen) = app.finish().await;
    let id = result["session_id"].as_str().unwrap().to_owned();
    let uuid = first["uuid"].as_str().unwrap().to_owned();
    assert!(
        first["message"]["id"].as_str().unwrap().starts_with("msg_"),
        "{first}"
    );
    // Every assistant line's uuid is a record of the transcript.
    let records = project.transcript(&id);
    for line in seen.iter().filter(|v| v["type"] == "assistant") {
        assert!(
            records.iter().any(|r| r["uuid"] == line["uuid"]),
            "{line} is not in the transcript"
        );
    }
    // Resumed at the first reply: cherry was never said.
    let out = tine(&project, &server)
        .args(["-p", "what was the word?", "--output-format", "json"])
        .args(["-r", &id, "--fork-session", "--resume-session-at", &uuid])
        .run()
        .await;
    out.assert_success();
    assert_eq!(out.json()["result"], "The word was banana.");
    let bodies = request_bodies(&server);
    let sent = bodies.last().unwrap()["messages"].to_string();
    assert!(!sent.contains("cherry"), "{sent}");
}

#[tokio::test]
async fn set_model_default_goes_back_to_the_sessions_model() {
    let server = mock(Scenario::new().default_reply(Reply::text("ok"))).await;
    let project = Project::new();
    let mut app = App::start(&project, &server, &["--model", "claude-opus-4-1"]);
    app.request("req_1", json!({"subtype": "initialize"})).await;
    app.response("req_1").await;
    app.request("req_2", json!({"subtype": "set_model", "model": "haiku"}))
        .await;
    assert_eq!(app.response("req_2").await["subtype"], "success");
    app.user("one").await;
    app.result().await;
    // The SDK's `setModel()` sends no model; its model list's first entry is "default".
    app.request("req_3", json!({"subtype": "set_model"})).await;
    assert_eq!(app.response("req_3").await["subtype"], "success");
    app.user("two").await;
    app.result().await;
    app.request("req_4", json!({"subtype": "set_model", "model": "default"}))
        .await;
    app.response("req_4").await;
    app.user("three").await;
    app.result().await;
    let models: Vec<Value> = request_bodies(&server)
        .iter()
        .map(|b| b["model"].clone())
        .collect();
    assert_eq!(models.len(), 3);
    assert!(
        models[0].as_str().unwrap().starts_with("claude-haiku"),
        "{models:?}"
    );
    assert_eq!(models[1], "claude-opus-4-1");
    assert_eq!(models[2], "claude-opus-4-1");
    app.finish().await;
}
