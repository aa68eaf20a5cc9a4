//! Issue 37: compaction never summarizes the current turn's prompt and never grows the
//! context. A first prompt behind a prefix already over the threshold is sent as it is; later,
//! what came before the prompt is summarized and the turn follows the summary whole.

use serde_json::json;
use tine_compaction::{CONTINUATION_PREFIX, CompactionConfig};
use tine_mock_api::{Reply, Rule, Scenario};
use tine_query_loop::{CompactBoundary, Terminal, TranscriptRecord};

use super::harness::{
    Options, SUMMARY, World, body, continued_rule, is_summary, server, session, summary_rule,
};

/// A window so small that every request is over the auto-compact level.
fn tiny_window() -> CompactionConfig {
    CompactionConfig {
        window_cap: Some(21_000),
        ..CompactionConfig::default()
    }
}

#[tokio::test]
async fn a_first_prompt_over_the_threshold_is_sent_whole_not_summarized() {
    let world = World::new();
    let server = server(
        Scenario::new()
            .rule(summary_rule())
            .default_reply(Reply::text("Hello there, friend!")),
    )
    .await;
    let mut s = session(
        &world,
        &server,
        Options {
            config: tiny_window(),
            user_context: Some("<env>ctx</env>".into()),
            ..Options::default()
        },
    )
    .await;
    let turn = s.turn("Say hello in five words.").await;
    assert_eq!(turn.terminal, Terminal::Completed);
    assert_eq!(turn.result, "Hello there, friend!");
    let log = server.requests();
    assert!(!log.iter().any(is_summary), "nothing to summarize");
    assert_eq!(log.len(), 1);
    let sent = body(&log[0])["messages"].to_string();
    assert!(sent.contains("Say hello in five words."), "{sent}");
    assert!(!sent.contains(CONTINUATION_PREFIX));
    assert!(s.compactor.reports().is_empty());
    assert_eq!(s.compactor.consecutive_failures(), 0, "not a failure");
}

#[tokio::test]
async fn what_came_before_is_summarized_and_the_new_prompt_follows_whole() {
    let world = World::new();
    world.big_file("a.txt", 3_000);
    let scenario = Scenario::new()
        .rule(summary_rule())
        .rule(continued_rule("Continued with the new prompt."))
        .rule(
            Rule::new()
                .assistant_turns(0)
                .reply(Reply::tool_use("Read", json!({"file_path": "a.txt"}))),
        )
        .default_reply(Reply::text("Read it."));
    let server = server(scenario).await;
    // The auto-compact level is 10k: the first turn's requests (about 5.6k, then 9k with the
    // file) are below it; the second prompt (about 2.8k tokens) takes the next one over.
    let mut s = session(
        &world,
        &server,
        Options {
            config: CompactionConfig {
                window_cap: Some(20_000 + 13_000 + 10_000),
                ..CompactionConfig::default()
            },
            ..Options::default()
        },
    )
    .await;
    assert_eq!(s.turn("read a.txt").await.terminal, Terminal::Completed);
    assert!(!server.requests().iter().any(is_summary));
    let prompt = format!(
        "now count the lines, keep this exact wording: ZEBRA-42. {}",
        "Some context for the count. ".repeat(400)
    );
    let turn = s.turn(&prompt).await;
    assert_eq!(turn.terminal, Terminal::Completed);
    let log = server.requests();
    assert_eq!(turn.result, "Continued with the new prompt.");

    let summary = log.iter().find(|r| is_summary(r)).expect("a summary");
    // The summary saw only what came before the new prompt.
    let summarized = body(summary)["messages"].to_string();
    assert!(!summarized.contains("ZEBRA-42"), "{summarized}");
    // The request after it: one message, the summary then the prompt as it was written.
    let after = body(log.last().unwrap());
    let messages = after["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 1);
    let text = messages[0].to_string();
    let summary_at = text.find(SUMMARY).unwrap();
    let prompt_at = text.find("ZEBRA-42").unwrap();
    assert!(prompt_at > summary_at);
    assert!(text.contains("latest message follows"));

    let records: Vec<TranscriptRecord> = s
        .transcript()
        .into_iter()
        .map(|v| serde_json::from_value(v).unwrap())
        .collect();
    let b = records
        .iter()
        .find_map(CompactBoundary::from_record)
        .expect("a boundary");
    assert_eq!(b.dropped.user_prompts, ["read a.txt"]);
    assert!(b.tokens_after < b.tokens_before, "{b:?}");
    assert_eq!(b.messages_summarized, 4);
}
