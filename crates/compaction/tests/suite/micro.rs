//! Micro-compaction: after an idle gap longer than the cache's lifetime, old tool results are
//! cleared, and every later request and fork serializes them the same way.

use std::time::Duration;

use serde_json::json;
use tine_compaction::{CACHE_TTL, CLEARED_TOOL_RESULT, ManualClock};
use tine_mock_api::{MockClock, MockConfig, MockServer, Reply, Rule, Scenario};
use tine_query_loop::{QueryEvent, Terminal};

use super::harness::{Options, World, is_summary, session, summary_rule, unmarked_messages};

fn scenario() -> Scenario {
    let mut scenario = Scenario::new().rule(summary_rule()).rule(
        Rule::new()
            .last_user_contains("again")
            .reply(Reply::text("Again.")),
    );
    for i in 0..7 {
        scenario = scenario.rule(Rule::new().assistant_turns(i).reply(Reply::tool_use(
            "Read",
            json!({"file_path": format!("f{i}.txt")}),
        )));
    }
    scenario.default_reply(Reply::text("Read them all."))
}

fn tool_results(messages: &[serde_json::Value]) -> Vec<String> {
    messages
        .iter()
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .filter(|b| b["type"] == "tool_result")
        .map(|b| b["content"].to_string())
        .collect()
}

#[tokio::test]
async fn an_idle_gap_past_the_cache_ttl_clears_all_but_the_last_five_results() {
    let world = World::new();
    for i in 0..7 {
        world.big_file(&format!("f{i}.txt"), 100);
    }
    let mock_clock = MockClock::manual();
    let server = MockServer::start(MockConfig::new(scenario()).clock(mock_clock.clone()))
        .await
        .unwrap();
    let clock = ManualClock::default();
    let mut s = session(
        &world,
        &server,
        Options {
            clock: Some(clock.clone()),
            ..Options::default()
        },
    )
    .await;
    assert_eq!(s.turn("read the files").await.terminal, Terminal::Completed);

    // A short pause changes nothing.
    clock.advance(Duration::from_secs(60));
    s.turn("again").await;
    let warm = server.requests().last().cloned().unwrap();
    assert!(!String::from_utf8_lossy(&warm.body).contains(CLEARED_TOOL_RESULT));

    // Past the cache's lifetime the old results go.
    clock.advance(CACHE_TTL + Duration::from_secs(1));
    mock_clock.advance(CACHE_TTL + Duration::from_secs(1));
    s.turn("again").await;
    let cold = server.requests().last().cloned().unwrap();
    let results = tool_results(&unmarked_messages(&cold));
    assert_eq!(results.len(), 7);
    let cleared = format!("\"{CLEARED_TOOL_RESULT}\"");
    assert_eq!(results.iter().filter(|r| **r == cleared).count(), 2);
    assert!(results[..2].iter().all(|r| *r == cleared));
    assert!(results[2..].iter().all(|r| r.contains("line 0")));
    assert!(
        s.events()
            .iter()
            .any(|e| matches!(e, QueryEvent::ToolResultsCleared { count: 2 }))
    );
    // A deliberate change: no break reported.
    assert!(s.detector.take_breaks().is_empty());
    // The transcript keeps them whole; the clearing is one annotation beside them, for resume.
    let transcript = std::fs::read_to_string(s.engine.transcript_path()).unwrap();
    let (records, notes): (Vec<&str>, Vec<&str>) = transcript
        .lines()
        .partition(|l| !l.starts_with("{\"type\":\"content_replacement\""));
    assert!(records.iter().all(|l| !l.contains(CLEARED_TOOL_RESULT)));
    assert_eq!(notes.len(), 1, "{transcript}");
    assert_eq!(
        notes[0].matches(CLEARED_TOOL_RESULT).count(),
        2,
        "{}",
        notes[0]
    );

    // The next request and a fork on this history send the same bytes for them.
    s.turn("again").await;
    let after = server.requests().last().cloned().unwrap();
    let next = unmarked_messages(&after);
    let cold_messages = unmarked_messages(&cold);
    assert_eq!(next[..cold_messages.len()], cold_messages[..]);
    assert_eq!(
        after.usage.unwrap().cache_read_input_tokens,
        cold.usage.unwrap().prompt_tokens()
    );
    s.engine.compact_now(None).await.unwrap();
    let summary = server
        .requests()
        .into_iter()
        .rev()
        .find(is_summary)
        .unwrap();
    let forked = unmarked_messages(&summary);
    assert_eq!(forked[..next.len()], next[..]);
}
