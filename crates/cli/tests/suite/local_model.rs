//! Issue 37: a small local model behind an OpenAI-compatible server, as llama-cpp-python's
//! serves SmolLM2 with an 8,192-token window: no usage in the stream, a token counter at
//! `/extras/tokenize/count`, and a request refused when prompt + `max_tokens` pass the window
//! (the mock's `llama-cpp` dialect with `check_output_room`). Through the binary: the first
//! prompt reaches the model whole (no compaction of the only message), `max_tokens` fits what
//! the window leaves, usage is counted (estimated) and marked so, the reported window is the
//! server's, `--verbose` names the chat-completions path, the prefix is lean, and `-c` goes on.

use serde_json::{Value, json};
use tine_e2e::Project;
use tine_e2e::tine_mock_api::{
    ChatDialect, MockConfig, MockServer, Reply, RequestRecord, Rule, Scenario,
};

use super::wire::{Wire, tine_on};

const WINDOW: u64 = 8_192;
const MARKER: &str = "Your task is to write a detailed summary of the conversation so far";

async fn llama_server(scenario: Scenario) -> MockServer {
    let scenario = scenario.context_window(WINDOW).check_output_room(true);
    MockServer::start(MockConfig::new(scenario).chat_dialect(ChatDialect::LlamaCpp))
        .await
        .unwrap()
}

fn chat_requests(server: &MockServer) -> Vec<RequestRecord> {
    server
        .requests()
        .into_iter()
        .filter(|r| r.path == "/v1/chat/completions")
        .collect()
}

fn raw(r: &RequestRecord) -> Value {
    serde_json::from_slice(&r.body).unwrap()
}

fn local(project: &Project, server: &MockServer) -> tine_e2e::TineRun {
    tine_on(Wire::OpenAi, project, server).env("TINE_CONTEXT_WINDOW", WINDOW.to_string())
}

#[tokio::test]
async fn the_first_prompt_reaches_a_small_model_with_room_for_its_reply() {
    let server = llama_server(
        Scenario::new()
            .rule(
                Rule::new()
                    .last_user_contains(MARKER)
                    .reply(Reply::text("<summary>s</summary>")),
            )
            .default_reply(Reply::text("Hello there, my good friend.")),
    )
    .await;
    let project = Project::new();
    let out = local(&project, &server)
        .args([
            "-p",
            "Say hello in five words.",
            "--output-format",
            "json",
            "--verbose",
        ])
        .run()
        .await;
    out.assert_success();
    let result = out.json();
    assert_eq!(result["result"], "Hello there, my good friend.");

    // One request: the prompt itself, never a summary of it.
    let log = chat_requests(&server);
    assert_eq!(log.len(), 1, "{}", out.stderr);
    let body = raw(&log[0]);
    let sent = body["messages"].to_string();
    assert!(sent.contains("Say hello in five words."), "{sent}");
    assert!(!sent.contains(MARKER));
    assert!(!out.stderr.contains("compacted"), "{}", out.stderr);

    // max_tokens fits what the window leaves after the prompt, as the server counts it.
    let max_tokens = body["max_tokens"]
        .as_u64()
        .or_else(|| body["max_completion_tokens"].as_u64())
        .expect("a max_tokens");
    let prompt = log[0].usage.expect("the mock counted it").prompt_tokens();
    assert!(
        prompt + max_tokens <= WINDOW,
        "prompt {prompt} + max_tokens {max_tokens} > {WINDOW}"
    );
    assert!(max_tokens >= 1_024, "room for an answer: {max_tokens}");

    // The lean profile: the core tools and a short system prompt, said once.
    let tools: Vec<&str> = body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    assert_eq!(tools, ["Bash", "Edit", "Glob", "Grep", "Read", "Write"]);
    assert!(out.stderr.contains("a lean prompt"), "{}", out.stderr);
    assert!(prompt < 3_000, "the lean prefix is {prompt} tokens");

    // Usage: the stream had none; the server's token counter counted it; marked estimated.
    let usage = &result["usage"];
    assert!(usage["input_tokens"].as_u64().unwrap() > 0, "{usage}");
    assert!(usage["output_tokens"].as_u64().unwrap() > 0, "{usage}");
    assert_eq!(usage["estimated"], true, "{usage}");
    assert!(
        server
            .requests()
            .iter()
            .any(|r| r.path == "/extras/tokenize/count"),
        "the server's tokenizer was asked"
    );
    let model = &result["modelUsage"]["qwen2.5-coder:7b"];
    assert_eq!(model["contextWindow"], WINDOW, "{model}");
    assert_eq!(model["estimated"], true, "{model}");

    // --verbose names the path the request went to, and says the usage is an estimate.
    assert!(
        out.stderr.contains("POST /v1/chat/completions"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("POST /v1/messages"), "{}", out.stderr);
    assert!(out.stderr.contains("(estimated"), "{}", out.stderr);

    // -c goes on with the same small window.
    let next = local(&project, &server)
        .args([
            "-c",
            "-p",
            "And now in three words.",
            "--output-format",
            "json",
        ])
        .run()
        .await;
    next.assert_success();
    let log = chat_requests(&server);
    let last = raw(log.last().unwrap())["messages"].to_string();
    assert!(last.contains("Say hello in five words."), "{last}");
    assert!(last.contains("And now in three words."), "{last}");
}

#[tokio::test]
async fn a_local_models_call_that_is_not_json_or_names_no_tool_gets_an_error_it_recovers_from() {
    let server = llama_server(
        Scenario::new()
            .rule(
                Rule::new()
                    .assistant_turns(0)
                    .reply(Reply::text("").with_raw_tool_call("Read", "{\"file_path\": notes.txt")),
            )
            .rule(
                Rule::new()
                    .assistant_turns(1)
                    .reply(Reply::tool_use("Raed", json!({"file_path": "notes.txt"}))),
            )
            .rule(
                Rule::new()
                    .assistant_turns(2)
                    .reply(Reply::tool_use("Read", json!({"file_path": "notes.txt"}))),
            )
            .default_reply(Reply::text("The notes say: ship on Friday.")),
    )
    .await;
    let project = Project::new();
    project.write("notes.txt", "ship on Friday\n");
    let out = local(&project, &server)
        .args(["-p", "What does notes.txt say?", "--output-format", "json"])
        .run()
        .await;
    out.assert_success();
    assert_eq!(out.json()["result"], "The notes say: ship on Friday.");
    let log = chat_requests(&server);
    assert_eq!(log.len(), 4, "{}", out.stderr);
    // Each bad call came back as a tool result the model could act on: the JSON that did not
    // parse (naming the fields Read requires), then the unknown tool (naming the tools).
    let tool_results = |i: usize| -> Vec<String> {
        raw(&log[i])["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "tool")
            .map(|m| m["content"].to_string())
            .collect()
    };
    let first = tool_results(1);
    assert_eq!(first.len(), 1, "{first:?}");
    assert!(first[0].contains("file_path"), "{first:?}");
    let second = tool_results(2);
    assert!(
        second[1].contains("Raed") && second[1].contains("Read"),
        "{second:?}"
    );
    let third = tool_results(3);
    assert!(third[2].contains("ship on Friday"), "{third:?}");
}

#[tokio::test]
async fn a_bigger_window_keeps_the_whole_prompt_unless_asked() {
    let scenario = Scenario::new()
        .default_reply(Reply::text("ok"))
        .context_window(32_768);
    let server = MockServer::start(MockConfig::new(scenario).chat_dialect(ChatDialect::LlamaCpp))
        .await
        .unwrap();
    let project = Project::new();
    // 32k: the full set; TINE_PROMPT_PROFILE=lean asks for the lean one anyway.
    for (window, profile, lean) in [("32768", None, false), ("32768", Some("lean"), true)] {
        let mut run = tine_on(Wire::OpenAi, &project, &server).env("TINE_CONTEXT_WINDOW", window);
        if let Some(profile) = profile {
            run = run.env("TINE_PROMPT_PROFILE", profile);
        }
        run.args(["-p", "hi"]).run().await.assert_success();
        let body = raw(chat_requests(&server).last().unwrap());
        let tools = body["tools"].as_array().unwrap().len();
        assert_eq!(tools == 6, lean, "{window} {profile:?}: {tools} tools");
    }
}
