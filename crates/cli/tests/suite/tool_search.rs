//! Deferred tools behind ToolSearch (issue 36), through the real binary against the mock, with
//! tine-mcp's stdio test server offering 120 generated tools (`--tools 120`): the first
//! request carries the core tools, ToolSearch and Claude Code's deferred placeholder, and the
//! first user message names the deferred tools; a `select:` ToolSearch loads a tool, which is
//! then called, and the request after the ToolSearch reads the previous request's whole prompt
//! from the mock's cache (deferred tools are outside the prefix, as on the API); a call to a
//! deferred tool before loading it gets Claude Code's advice and the turn goes on; permission
//! rules and hooks hold for a loaded tool (a deny rule after a resume too); a memory fork
//! after a ToolSearch and a `-c` resume send the same array and read the parent's prefix;
//! `toolSearch: never` keeps every tool in the array (and costs what deferral saves); over
//! chat completions the array stays fixed and the loaded schema goes as text.

use serde_json::{Value, json};
use tine_e2e::tine_mock_api::{MockServer, Reply, Rule, Scenario};
use tine_e2e::{Project, RunOutput, TineRun};

use super::mcp_session::{late_server_session, server_binary};
use super::wire::{Wire, model_bodies, tine_on};
use super::{mock, tine};

/// The loaded tool of these tests.
const TOOL: &str = "mcp__big__tool_007";

/// `{"mcpServers": {"big": the test server with 120 generated tools}}`.
fn big_server() -> String {
    json!({"mcpServers": {"big": {
        "command": server_binary().display().to_string(),
        "args": ["--tools", "120", "--no-resources"],
    }}})
    .to_string()
}

fn with_big(run: TineRun) -> TineRun {
    run.env("TINE_MCP_TIMEOUT", "30000")
        .args(["--mcp-config", &big_server()])
}

fn tool_search(query: &str) -> Reply {
    Reply::tool_use("ToolSearch", json!({"query": query}))
}

/// Selects [`TOOL`], calls it, then says "Done.".
fn select_then_call() -> Scenario {
    select_then_call_after(Scenario::new(), 0)
}

/// `scenario`'s rules, then: at assistant turn `turn` select [`TOOL`], at the next call it,
/// then say "Done.".
fn select_then_call_after(scenario: Scenario, turn: usize) -> Scenario {
    scenario
        .rule(
            Rule::new()
                .assistant_turns(turn)
                .reply(tool_search(&format!("select:{TOOL}"))),
        )
        .rule(
            Rule::new()
                .assistant_turns(turn + 1)
                .reply(Reply::tool_use(TOOL, json!({"id": "42"}))),
        )
        .default_reply(Reply::text("Done."))
}

/// Runs tine with the big server and `args`, and checks it succeeded.
async fn run_big(project: &Project, server: &MockServer, args: &[&str]) -> RunOutput {
    let out = with_big(tine(project, server)).args(args).run().await;
    out.assert_success();
    out
}

fn bodies(server: &MockServer) -> Vec<Value> {
    server
        .requests()
        .iter()
        .filter(|r| r.path == "/v1/messages")
        .filter_map(|r| r.json())
        .collect()
}

fn usages(server: &MockServer) -> Vec<tine_e2e::tine_mock_api::Usage> {
    server
        .requests()
        .iter()
        .filter(|r| r.path == "/v1/messages")
        .map(|r| r.usage.expect("an answered request"))
        .collect()
}

/// (name, defer_loading) of each tool a request sent.
fn tools(body: &Value) -> Vec<(String, bool)> {
    body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .map(|t| {
                    (
                        t["name"].as_str().unwrap_or_default().to_owned(),
                        t["defer_loading"] == json!(true),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

fn tools_json(body: &Value) -> String {
    serde_json::to_string(&body["tools"]).unwrap()
}

/// The first user message's text.
fn first_user_text(body: &Value) -> String {
    body["messages"][0]["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|b| b["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The blocks of a request's last message.
fn last_blocks(body: &Value) -> Vec<Value> {
    body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .and_then(|m| m["content"].as_array())
        .cloned()
        .unwrap_or_default()
}

fn result_text(block: &Value) -> String {
    match &block["content"] {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

#[tokio::test]
async fn the_first_request_carries_only_the_core_tools_tool_search_and_the_reminder() {
    let server = mock(Scenario::new().default_reply(Reply::text("Hi."))).await;
    let project = Project::new();
    run_big(&project, &server, &["-p", "hello"]).await;
    let body = &bodies(&server)[0];
    let sent = tools(body);
    let names: Vec<&str> = sent.iter().map(|(n, _)| n.as_str()).collect();
    assert!(
        !names.iter().any(|n| n.starts_with("mcp__")),
        "no MCP tool in the array: {names:?}"
    );
    for core in ["Bash", "Edit", "Read", "Write", "ToolSearch"] {
        assert!(names.contains(&core), "{core} in {names:?}");
    }
    for deferred in ["WebFetch", "NotebookEdit", "BashOutput", "KillShell"] {
        assert!(!names.contains(&deferred), "{deferred} deferred: {names:?}");
    }
    assert_eq!(
        sent.iter()
            .filter(|(_, deferred)| *deferred)
            .collect::<Vec<_>>(),
        [&("DeferredToolPlaceholder".to_owned(), true)],
        "the placeholder is the one deferred entry"
    );
    let text = first_user_text(body);
    assert!(
        text.contains(
            "The following deferred tools are now available via ToolSearch. Their schemas are \
             NOT loaded"
        ),
        "{text}"
    );
    for name in [
        "mcp__big__tool_000",
        "mcp__big__tool_119",
        "mcp__big__echo",
        "WebFetch",
    ] {
        assert!(
            text.contains(&format!("\n{name}\n")),
            "{name} named: {text}"
        );
    }
}

#[tokio::test]
async fn a_select_loads_the_tool_without_a_cache_break_and_it_is_called() {
    let server = mock(select_then_call()).await;
    let project = Project::new();
    let out = run_big(
        &project,
        &server,
        &["-p", "use tool 7", "--allowedTools", "mcp__big"],
    )
    .await;
    assert!(out.stdout.contains("Done."), "{}", out.stdout);
    let bodies = bodies(&server);
    assert_eq!(bodies.len(), 3);
    // The ToolSearch result: the reference alone, "Tool loaded." beside it.
    let results = last_blocks(&bodies[1]);
    assert_eq!(
        results[0]["content"],
        json!([{"type": "tool_reference", "tool_name": TOOL}])
    );
    assert_eq!(results[1]["text"], "Tool loaded.");
    // The array after it: the first request's bytes, then the loaded tool, deferred.
    let first = tools_json(&bodies[0]);
    let second = tools_json(&bodies[1]);
    assert!(
        second.starts_with(first.trim_end_matches(']')),
        "the bytes before the loaded tool are the first request's"
    );
    assert_eq!(
        tools(&bodies[1]).last(),
        Some(&(TOOL.to_owned(), true)),
        "appended with defer_loading"
    );
    assert_eq!(tools_json(&bodies[2]), second, "and kept");
    // The request after the ToolSearch read the first request's whole prompt.
    let usage = usages(&server);
    assert_eq!(
        usage[1].cache_read_input_tokens,
        usage[0].prompt_tokens(),
        "{usage:?}"
    );
    assert_eq!(
        usage[2].cache_read_input_tokens,
        usage[1].prompt_tokens(),
        "{usage:?}"
    );
    // The loaded tool ran.
    let ran = last_blocks(&bodies[2]);
    assert!(
        result_text(&ran[0]).contains("tool_007 ok: {\"id\":\"42\"}"),
        "{ran:?}"
    );
}

#[tokio::test]
async fn a_call_before_loading_gets_claude_codes_advice_and_the_turn_goes_on() {
    let scenario = select_then_call_after(
        Scenario::new().rule(
            Rule::new()
                .assistant_turns(0)
                .reply(Reply::tool_use(TOOL, json!({"identifier": 42}))),
        ),
        1,
    );
    let server = mock(scenario).await;
    let project = Project::new();
    let out = run_big(
        &project,
        &server,
        &["-p", "use tool 7", "--allowedTools", "mcp__big"],
    )
    .await;
    assert!(out.stdout.contains("Done."), "{}", out.stdout);
    let bodies = bodies(&server);
    assert_eq!(bodies.len(), 4);
    let advice = &last_blocks(&bodies[1])[0];
    assert_eq!(advice["is_error"], true);
    let text = result_text(advice);
    assert!(
        text.starts_with(&format!("InputValidationError: {TOOL} was called with")),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "Load the tool first: call ToolSearch with query \"select:{TOOL}\", then retry this call."
        )),
        "{text}"
    );
    assert!(text.contains("\"required\":[\"id\"]"), "the schema: {text}");
    let ran = result_text(&last_blocks(&bodies[3])[0]);
    assert!(ran.contains("tool_007 ok"), "{ran}");
}

#[tokio::test]
async fn permission_rules_and_hooks_hold_for_a_loaded_tool() {
    // Without a rule allowing it, a loaded MCP tool asks, and headless an ask is a denial.
    let server = mock(select_then_call()).await;
    let project = Project::new();
    run_big(&project, &server, &["-p", "use tool 7"]).await;
    let denied = result_text(&last_blocks(&bodies(&server)[2])[0]);
    assert!(
        denied.contains(&format!("Permission to use {TOOL} was denied")),
        "{denied}"
    );

    // A PreToolUse hook that blocks it, though a rule allows it.
    let server = mock(select_then_call()).await;
    let project = Project::new();
    project.write(
        ".tine/settings.json",
        &json!({"hooks": {"PreToolUse": [{"matcher": "mcp__big__.*", "hooks": [
            {"type": "command", "command": "echo 'not tool 7' >&2; exit 2"}
        ]}]}})
        .to_string(),
    );
    run_big(
        &project,
        &server,
        &["-p", "use tool 7", "--allowedTools", "mcp__big"],
    )
    .await;
    let blocked = result_text(&last_blocks(&bodies(&server)[2])[0]);
    assert!(
        blocked.contains("blocked by a PreToolUse hook"),
        "{blocked}"
    );
    assert!(blocked.contains("not tool 7"), "{blocked}");
}

#[tokio::test]
async fn a_deny_rule_on_a_tool_loaded_before_a_resume_still_denies() {
    let server = mock(
        Scenario::new()
            .rule(
                Rule::new()
                    .first_user_contains("load it")
                    .assistant_turns(0)
                    .reply(tool_search(&format!("select:{TOOL}"))),
            )
            .rule(
                Rule::new()
                    .last_user_contains("now call it")
                    .reply(Reply::tool_use(TOOL, json!({"id": "1"}))),
            )
            .default_reply(Reply::text("Done.")),
    )
    .await;
    let project = Project::new();
    run_big(
        &project,
        &server,
        &["-p", "load it", "--allowedTools", "mcp__big"],
    )
    .await;
    let loaded = bodies(&server).len();
    // The next session denies the tool: it is in neither the tools nor the array, and the
    // history's reference to it is not sent (the API would refuse it).
    project.write(
        ".tine/settings.json",
        &json!({"permissions": {"deny": [TOOL]}}).to_string(),
    );
    run_big(
        &project,
        &server,
        &["-c", "-p", "now call it", "--allowedTools", "mcp__big"],
    )
    .await;
    let bodies = bodies(&server);
    let resumed = &bodies[loaded];
    assert!(!tools(resumed).iter().any(|(n, _)| n == TOOL));
    assert!(!resumed["messages"].to_string().contains("tool_reference"));
    let refused = result_text(&last_blocks(&bodies[loaded + 1])[0]);
    assert!(refused.contains("No such tool available"), "{refused}");
    assert!(!refused.contains("tool_007 ok"), "{refused}");
}

#[tokio::test]
async fn a_memory_fork_after_a_tool_search_sends_the_same_array_and_reads_the_prefix() {
    let scenario = select_then_call_after(
        Scenario::new().rule(
            Rule::new()
                .marker("<memory-extraction>")
                .reply(Reply::text("Nothing to save.")),
        ),
        0,
    );
    let server = mock(scenario).await;
    let project = Project::new();
    with_big(tine(&project, &server))
        .env_remove("TINE_DISABLE_AUTO_MEMORY")
        .args(["-p", "use tool 7", "--allowedTools", "mcp__big"])
        .run()
        .await
        .assert_success();
    let bodies = bodies(&server);
    let usage = usages(&server);
    let fork = bodies
        .iter()
        .position(|b| b.to_string().contains("<memory-extraction>"))
        .expect("a memory extraction request");
    let parent = fork - 1;
    assert_eq!(
        tools_json(&bodies[fork]),
        tools_json(&bodies[parent]),
        "the fork's array is the parent's, the loaded tool included"
    );
    assert!(tools(&bodies[fork]).contains(&(TOOL.to_owned(), true)));
    assert_eq!(
        usage[fork].cache_read_input_tokens,
        usage[parent].prompt_tokens(),
        "{usage:?}"
    );
}

#[tokio::test]
async fn continue_after_a_tool_search_sends_the_same_array_and_reads_the_prefix() {
    let server = mock(select_then_call()).await;
    let project = Project::new();
    run_big(
        &project,
        &server,
        &["-p", "use tool 7", "--allowedTools", "mcp__big"],
    )
    .await;
    let before = bodies(&server).len();
    run_big(
        &project,
        &server,
        &["-c", "-p", "thanks", "--allowedTools", "mcp__big"],
    )
    .await;
    let bodies = bodies(&server);
    let usage = usages(&server);
    assert_eq!(tools_json(&bodies[before]), tools_json(&bodies[before - 1]));
    assert!(tools(&bodies[before]).contains(&(TOOL.to_owned(), true)));
    assert_eq!(
        usage[before].cache_read_input_tokens,
        usage[before - 1].prompt_tokens(),
        "{usage:?}"
    );
}

#[tokio::test]
async fn tool_search_never_keeps_every_tool_in_the_array() {
    let deferred = mock(Scenario::new().default_reply(Reply::text("Hi."))).await;
    let project = Project::new();
    run_big(&project, &deferred, &["-p", "hello"]).await;

    let server = mock(Scenario::new().default_reply(Reply::text("Hi."))).await;
    let project = Project::new();
    project.write(
        ".tine/settings.json",
        &json!({"toolSearch": "never"}).to_string(),
    );
    run_big(&project, &server, &["-p", "hello"]).await;
    let body = &bodies(&server)[0];
    let sent = tools(body);
    let names: Vec<&str> = sent.iter().map(|(n, _)| n.as_str()).collect();
    assert!(!names.contains(&"ToolSearch") && !names.contains(&"DeferredToolPlaceholder"));
    assert!(names.contains(&"WebFetch") && names.contains(&"mcp__big__tool_119"));
    assert_eq!(
        names.iter().filter(|n| n.starts_with("mcp__big__")).count(),
        128
    );
    assert!(sent.iter().all(|(_, deferred)| !deferred));
    assert!(!first_user_text(body).contains("deferred tools"));
    // What deferral saves on the first request.
    let (with, without) = (
        usages(&deferred)[0].prompt_tokens(),
        usages(&server)[0].prompt_tokens(),
    );
    assert!(
        with * 10 <= without * 4,
        "at least 60% fewer: {with} vs {without}"
    );
}

#[tokio::test]
async fn over_chat_completions_the_array_stays_fixed_and_the_schema_goes_as_text() {
    let server = mock(select_then_call()).await;
    let project = Project::new();
    let out = with_big(tine_on(Wire::OpenAi, &project, &server))
        .args(["-p", "use tool 7", "--allowedTools", "mcp__big"])
        .run()
        .await;
    out.assert_success();
    let records: Vec<Value> = server
        .requests()
        .iter()
        .filter(|r| r.path == "/v1/chat/completions")
        .filter_map(|r| r.json())
        .collect();
    assert_eq!(records.len(), 3);
    let array = |body: &Value| body["tools"].to_string();
    assert_eq!(array(&records[0]), array(&records[1]));
    assert_eq!(array(&records[1]), array(&records[2]));
    assert!(!array(&records[0]).contains("mcp__big__tool_"));
    assert!(array(&records[0]).contains("ToolSearch"));
    assert!(!array(&records[0]).contains("DeferredToolPlaceholder"));
    let loaded = records[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .expect("the ToolSearch result")["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        loaded.starts_with("<functions>\n<function>{\"description\":"),
        "{loaded}"
    );
    assert!(loaded.contains(&format!("\"name\":\"{TOOL}\"")), "{loaded}");
    let forms = model_bodies(&server);
    let ran = result_text(&last_blocks(&forms[2])[0]);
    assert!(ran.contains("tool_007 ok"), "{ran}");
}

#[tokio::test]
async fn a_restart_with_tool_search_defers_the_new_tools_and_keeps_the_array() {
    let scenario = Scenario::new()
        .rule(
            Rule::new()
                .tool_results(false)
                .last_user_contains("echo it")
                .reply(tool_search("select:mcp__late__echo")),
        )
        .rule(Rule::new().marker("Tool loaded.").reply(Reply::tool_use(
            "mcp__late__echo",
            json!({"text": "late but here"}),
        )))
        .default_reply(Reply::text("ok"));
    let server = mock(scenario).await;
    let project = Project::new();
    let out = late_server_session(
        &project,
        &server,
        &["hello", "/mcp restart late", "echo it"],
    )
    .await;
    assert!(out.stdout.contains("connected (8 tools)"), "{}", out.stdout);
    let bodies = bodies(&server);
    // The array before the restart, byte for byte, on every request up to the load.
    let first = tools_json(&bodies[0]);
    let echo_it = bodies
        .iter()
        .position(|b| b["messages"].to_string().contains("echo it"))
        .expect("the request of 'echo it'");
    assert_eq!(
        tools_json(&bodies[echo_it]),
        first,
        "the restart kept the array"
    );
    // The prompt after the restart names the new deferred tools.
    let prompt = bodies[echo_it]["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .to_string();
    assert!(
        prompt.contains("The following deferred tools are now available via ToolSearch"),
        "{prompt}"
    );
    assert!(prompt.contains("mcp__late__echo"), "{prompt}");
    // ToolSearch finds it; it loads and runs.
    let last = bodies.last().unwrap();
    assert!(tools(last).contains(&("mcp__late__echo".to_owned(), true)));
    assert!(
        tools_json(last).starts_with(first.trim_end_matches(']')),
        "appended after the same bytes"
    );
    let ran = result_text(&last_blocks(last)[0]);
    assert!(ran.contains("late but here"), "{ran}");
}
