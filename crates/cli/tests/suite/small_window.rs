//! A local model with a small window (`TINE_CONTEXT_WINDOW=32768` on the openai wire): auto
//! compaction plans for that window with the scaled reserve and buffer (threshold 23,211
//! tokens, `Thresholds::for_window`), so it fires once, near the threshold, and not on every
//! request as Claude's 20k reserve and 13k buffer (threshold 0) would make it.

use serde_json::{Value, json};
use tine_e2e::Project;
use tine_e2e::tine_mock_api::{MockServer, Reply, RequestRecord, Rule, Scenario};

use super::mock;
use super::wire::{Wire, tine_on};

const MARKER: &str = "Your task is to write a detailed summary of the conversation so far";
const CONTINUED: &str = "This session is being continued from an earlier conversation";
/// 32768 − 32768/6 − 32768/8.
const THRESHOLD: u64 = 23_211;
/// Each file is about this many tokens.
const FILE_TOKENS: u64 = 4_000;

fn scenario(reads: usize) -> Scenario {
    let mut scenario = Scenario::new()
        .rule(
            Rule::new()
                .last_user_contains(MARKER)
                .named("summary")
                .reply(Reply::text(
                    "<analysis>notes</analysis><summary>The user had files read.</summary>",
                )),
        )
        .rule(
            Rule::new()
                .first_user_contains(CONTINUED)
                .last_user_contains(CONTINUED)
                .named("continued")
                .reply(Reply::text("Finished after compaction.")),
        );
    for i in 0..reads {
        scenario = scenario.rule(
            Rule::new()
                .assistant_turns(i)
                .named(&format!("read{i}"))
                .reply(Reply::tool_use(
                    "Read",
                    json!({"file_path": format!("f{i}.txt")}),
                )),
        );
    }
    scenario.default_reply(Reply::text("All read."))
}

fn project_with_files(n: usize) -> Project {
    let project = Project::new();
    for i in 0..n {
        let mut text = String::new();
        let mut line = 0;
        while (text.len() as u64) < FILE_TOKENS * 4 {
            text.push_str(&format!("f{i} line {line}: the content of a file\n"));
            line += 1;
        }
        project.write(&format!("f{i}.txt"), &text);
    }
    project
}

fn is_summary(r: &RequestRecord) -> bool {
    r.messages_form()
        .and_then(|b| b["messages"].as_array()?.last().map(Value::to_string))
        .is_some_and(|last| last.contains(MARKER))
}

fn model_requests(server: &MockServer) -> Vec<RequestRecord> {
    server
        .requests()
        .into_iter()
        .filter(|r| r.path == "/v1/chat/completions")
        .collect()
}

fn prompt_tokens(r: &RequestRecord) -> u64 {
    r.usage.map_or(0, |u| u.prompt_tokens())
}

#[tokio::test]
async fn a_32k_local_model_compacts_once_near_its_scaled_threshold() {
    let server = mock(scenario(8)).await;
    let project = project_with_files(8);
    let out = tine_on(Wire::OpenAi, &project, &server)
        .env("TINE_CONTEXT_WINDOW", "32768")
        .args(["-p", "read the files", "--output-format", "json"])
        .run()
        .await;
    out.assert_success();
    assert_eq!(out.json()["result"], "Finished after compaction.");

    let log = model_requests(&server);
    let rules: Vec<&str> = log
        .iter()
        .map(|r| r.rule.as_deref().unwrap_or(""))
        .collect();
    assert_eq!(log.iter().filter(|r| is_summary(r)).count(), 1, "{rules:?}");
    let at = log.iter().position(is_summary).unwrap_or(0);
    // Several requests went out below the threshold before it: not compacting on every request.
    assert!(at >= 3, "{rules:?}");
    for r in &log[..at] {
        assert!(prompt_tokens(r) < THRESHOLD, "{} tokens", prompt_tokens(r));
    }
    // The summary request carries the conversation that crossed it: at most one file past it
    // (plus the instruction).
    let crossed = prompt_tokens(&log[at]);
    assert!(
        (THRESHOLD..THRESHOLD + FILE_TOKENS + 3_000).contains(&crossed),
        "the summary request had {crossed} tokens; threshold {THRESHOLD}"
    );
    // The conversation goes on from the summary and ends the turn, below the threshold: the
    // files put back get at most half the room left under it (Claude's 50k budget is sized
    // for a 200k window), so the next request does not compact again.
    assert_eq!(rules[at + 1], "continued", "{rules:?}");
    assert_eq!(log.len(), at + 2, "{rules:?}");
    let after = prompt_tokens(&log[at + 1]);
    assert!(
        after < THRESHOLD,
        "the request after compaction had {after} tokens"
    );
}
