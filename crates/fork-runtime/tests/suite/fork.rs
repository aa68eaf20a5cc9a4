//! Byte identity and cache sharing of a fork against the mock.

use std::sync::Arc;

use serde_json::{Value, json};
use tine_api_client::{ContentBlock, Message};
use tine_fork_runtime::{ForkParams, run_forked_agent};
use tine_mock_api::{Reply, Rule, Scenario};
use tine_query_loop::{AllowAll, Terminal};

use super::harness::{USER_CONTEXT, session};

fn scenario() -> Scenario {
    Scenario::new()
        .rule(
            Rule::new()
                .marker("<fork-probe>")
                .reply(Reply::text("fork: nothing to add")),
        )
        .rule(
            Rule::new()
                .tool_results(false)
                .last_user_regex(r"read (\S+)")
                .unwrap()
                .reply(Reply::text("Reading.").with_tool_use("Read", json!({"file_path": "$1"}))),
        )
        .rule(
            Rule::new()
                .tool_results(true)
                .reply(Reply::text("The notes say hello.")),
        )
        .default_reply(Reply::text("OK."))
}

/// The request's cache key parts with breakpoints removed: tools, system, messages.
fn key_parts(body: &Value) -> (Value, Value, Vec<Value>) {
    fn strip(v: &Value) -> Value {
        match v {
            Value::Object(m) => Value::Object(
                m.iter()
                    .filter(|(k, _)| k.as_str() != "cache_control")
                    .map(|(k, v)| (k.clone(), strip(v)))
                    .collect(),
            ),
            Value::Array(a) => Value::Array(a.iter().map(strip).collect()),
            other => other.clone(),
        }
    }
    (
        strip(&body["tools"]),
        strip(&body["system"]),
        body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(strip)
            .collect(),
    )
}

#[tokio::test]
async fn a_fork_repeats_the_parents_prefix_byte_for_byte_and_reads_it_all_from_cache() {
    fork_shares_the_prefix("hello\n".to_owned(), false).await;
}

#[tokio::test]
async fn a_replaced_oversized_tool_result_serializes_the_same_in_the_fork() {
    let line = format!("{}\n", "data ".repeat(16));
    fork_shares_the_prefix(line.repeat(1_900), true).await;
}

async fn fork_shares_the_prefix(notes_text: String, expect_replaced: bool) {
    let mut s = session(scenario(), |p| p).await;
    let notes = s.project.cwd().join("notes.txt");
    std::fs::write(&notes, notes_text).unwrap();
    let turn = s
        .engine
        .submit(&format!("read {}", notes.display()), |_| {})
        .await;
    assert_eq!(turn.terminal, Terminal::Completed, "{:?}", turn.terminal);
    let cache_safe = s
        .pipeline
        .slot()
        .get()
        .expect("the pipeline saved the params");
    assert_eq!(cache_safe.messages.len(), 4);

    let result = run_forked_agent(
        &s.parent,
        ForkParams::new(
            Arc::clone(&cache_safe),
            vec![Message::user(vec![ContentBlock::text(
                "<fork-probe> anything worth remembering?",
            )])],
            Arc::new(AllowAll),
            "test_fork",
        ),
    )
    .await
    .unwrap();
    assert_eq!(result.terminal, Terminal::Completed);
    assert_eq!(result.requests, 1);

    let log = s.server.requests();
    assert_eq!(log.len(), 3);
    let (parent, fork) = (&log[1], &log[2]);
    let parent_usage = parent.usage.unwrap();
    let fork_usage = fork.usage.unwrap();

    let parent_text = String::from_utf8_lossy(&parent.body).into_owned();
    assert_eq!(parent_text.contains("Output too large"), expect_replaced);
    // Byte identity up to the end of the parent's messages (breakpoints are not in the key).
    let (pt, ps, pm) = key_parts(&parent.json().unwrap());
    let (ft, fs, fm) = key_parts(&fork.json().unwrap());
    assert_eq!(
        serde_json::to_vec(&pt).unwrap(),
        serde_json::to_vec(&ft).unwrap(),
        "tools"
    );
    assert_eq!(
        serde_json::to_vec(&ps).unwrap(),
        serde_json::to_vec(&fs).unwrap(),
        "system"
    );
    assert_eq!(
        fm.len(),
        pm.len() + 2,
        "parent's final answer + fork prompt"
    );
    // The user context is the first block of the first message, in the parent and the fork.
    assert_eq!(pm[0]["content"][0]["text"], USER_CONTEXT);
    for (i, (a, b)) in pm.iter().zip(&fm).enumerate() {
        assert_eq!(
            serde_json::to_vec(a).unwrap(),
            serde_json::to_vec(b).unwrap(),
            "message {i}"
        );
    }

    // Everything the parent's last request had cached, the fork read from the cache.
    let parent_cached =
        parent_usage.cache_read_input_tokens + parent_usage.cache_creation_input_tokens;
    assert!(parent_cached > 1000, "{parent_usage:?}");
    assert!(
        fork_usage.cache_read_input_tokens >= parent_cached,
        "fork read {} < parent cached {}",
        fork_usage.cache_read_input_tokens,
        parent_cached
    );
    let first = result.first_request_usage.unwrap();
    assert_eq!(
        first.cache_read_input_tokens,
        fork_usage.cache_read_input_tokens
    );
}

#[tokio::test]
async fn skip_cache_write_reads_the_parent_entry_and_writes_nothing_new() {
    let mut s = session(scenario(), |p| p).await;
    let notes = s.project.cwd().join("notes.txt");
    std::fs::write(&notes, "hello\n").unwrap();
    s.engine
        .submit(&format!("read {}", notes.display()), |_| {})
        .await;
    let cache_safe = s.pipeline.slot().get().unwrap();
    let mut params = ForkParams::new(
        cache_safe,
        vec![Message::user(vec![ContentBlock::text(
            "<fork-probe> summarize",
        )])],
        Arc::new(AllowAll),
        "compact_like",
    );
    params.skip_cache_write = true;
    params.max_turns = Some(1);
    let result = run_forked_agent(&s.parent, params).await.unwrap();
    assert_eq!(result.terminal, Terminal::Completed);
    let body = s.server.requests()[2].json().unwrap();
    let messages = body["messages"].as_array().unwrap();
    let marked: Vec<bool> = messages
        .iter()
        .map(|m| m.to_string().contains("cache_control"))
        .collect();
    let n = marked.len();
    assert!(marked[n - 2] && !marked[n - 1], "{marked:?}");
    assert!(result.usage.cache_read_input_tokens > 0);
}

#[tokio::test]
async fn a_fork_with_a_transcript_writes_a_sidechain_file() {
    let mut s = session(scenario(), |p| p).await;
    s.engine.submit("hello there", |_| {}).await;
    let cache_safe = s.pipeline.slot().get().unwrap();
    let mut params = ForkParams::new(
        cache_safe,
        vec![Message::user(vec![ContentBlock::text("<fork-probe> go")])],
        Arc::new(AllowAll),
        "agent",
    );
    params.skip_transcript = false;
    let result = run_forked_agent(&s.parent, params).await.unwrap();
    let path = tine_config::subagent_transcript_path(
        s.project.home(),
        s.project.cwd(),
        &s.parent.session.session_id,
        &result.agent_id,
    )
    .unwrap();
    let read = tine_query_loop::read_transcript(&path).await.unwrap();
    assert_eq!(read.records.len(), 2, "prompt + reply");
    assert!(read.records.iter().all(|r| r.is_sidechain));
}
