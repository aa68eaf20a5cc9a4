//! The forks' parent is the live engine's: after a tool result too large to keep resending was
//! replaced by a preview, the memory fork's request repeats the main thread's last request
//! byte for byte up to the end of its messages, preview included, and reads it all from the
//! cache.

use serde_json::Value;
use tine_fork_runtime::BackgroundEvent;
use tine_memory::{EXTRACTION_JOB, EXTRACTION_MARKER};
use tine_mock_api::{Reply, Rule, Scenario};
use tine_session::{Op, SessionEvent, TurnOutcome};

use super::support::{Running, World, http_client, server};

/// `value` without its cache breakpoints, which are not part of the cache key.
fn without_breakpoints(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| k.as_str() != "cache_control")
                .map(|(k, v)| (k.clone(), without_breakpoints(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_breakpoints).collect()),
        other => other.clone(),
    }
}

#[tokio::test]
async fn a_forks_prefix_equals_the_parents_request_after_a_replaced_tool_result() {
    let world = World::new();
    world.project_settings(r#"{"autoMemoryExtractEvery": 1}"#);
    let line = "x".repeat(80);
    let big: String = (0..1900).map(|i| format!("{i:05} {line}\n")).collect();
    std::fs::write(world.cwd.join("big.txt"), &big).unwrap();
    let path = world.cwd.join("big.txt").display().to_string();
    let scenario = Scenario::new()
        .rule(
            Rule::new()
                .named("extract")
                .marker(EXTRACTION_MARKER)
                .reply(Reply::text("Nothing to save.")),
        )
        .rule(
            Rule::new()
                .tool_results(false)
                .last_user_contains("read big.txt")
                .reply(
                    Reply::text("Reading.")
                        .with_tool_use("Read", serde_json::json!({"file_path": path})),
                ),
        )
        .rule(
            Rule::new()
                .tool_results(true)
                .reply(Reply::text("It is a long list.")),
        )
        .default_reply(Reply::text("Hm."));
    let server = server(scenario).await;
    let mut s = Running::start(world.options(http_client(&server))).await;
    s.handle
        .submit(Op::Prompt("please read big.txt for the project".into()))
        .unwrap();
    assert_eq!(s.turn_end().await.outcome, TurnOutcome::Completed);
    s.seen_or_until(|e| match e {
        SessionEvent::Background(BackgroundEvent::Finished { job, .. })
            if job == EXTRACTION_JOB =>
        {
            Some(())
        }
        _ => None,
    })
    .await;
    s.shutdown().await;

    let requests = server.requests();
    let body =
        |r: &tine_mock_api::RequestRecord| -> Value { serde_json::from_slice(&r.body).unwrap() };
    let is_fork = |r: &tine_mock_api::RequestRecord| {
        String::from_utf8_lossy(&r.body).contains(EXTRACTION_MARKER)
    };
    let parent = requests.iter().filter(|r| !is_fork(r)).last().unwrap();
    let fork = requests.iter().find(|r| is_fork(r)).unwrap();
    let (parent_body, fork_body) = (body(parent), body(fork));

    // The parent's tool result went out as a preview, not whole.
    let parent_messages = parent_body["messages"].as_array().unwrap();
    let parent_text = serde_json::to_string(parent_messages).unwrap();
    assert!(
        parent_text.contains("Output too large"),
        "the result was not replaced"
    );
    assert!(parent_text.len() < big.len() / 10);

    for key in ["model", "system", "tools"] {
        assert_eq!(
            without_breakpoints(&parent_body[key]),
            without_breakpoints(&fork_body[key]),
            "{key} differs"
        );
    }
    let fork_messages = fork_body["messages"].as_array().unwrap();
    assert!(fork_messages.len() > parent_messages.len());
    for (i, (p, f)) in parent_messages.iter().zip(fork_messages).enumerate() {
        assert_eq!(
            serde_json::to_string(&without_breakpoints(p)).unwrap(),
            serde_json::to_string(&without_breakpoints(f)).unwrap(),
            "message {i} differs"
        );
    }
    // And the cache agrees: the fork read the parent's whole prompt.
    let parent_usage = parent.usage.as_ref().unwrap();
    let parent_prompt = parent_usage.input_tokens
        + parent_usage.cache_read_input_tokens
        + parent_usage.cache_creation_input_tokens;
    let fork_usage = fork.usage.as_ref().unwrap();
    assert!(
        fork_usage.cache_read_input_tokens >= parent_prompt,
        "fork read {} of the parent's {parent_prompt}",
        fork_usage.cache_read_input_tokens
    );
}
