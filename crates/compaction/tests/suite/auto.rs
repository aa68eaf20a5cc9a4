//! Automatic compaction: a session crossing the threshold mid-turn compacts on the parent's
//! cache and finishes its turn; the circuit breaker; the warning.

use serde_json::json;
use tine_compaction::{CONTINUATION_PREFIX, CompactionConfig, SUMMARY_INSTRUCTION_MARKER};
use tine_mock_api::{Fault, Reply, Rule, Scenario};
use tine_query_loop::{CompactBoundary, QueryEvent, Terminal, TranscriptRecord};

use super::harness::{
    Options, SUMMARY, World, body, continued_rule, is_summary, prompt_tokens, server, session,
    summary_rule, unmarked_messages,
};

/// Reads a.txt, b.txt, c.txt one turn after another, then says "All read." (unless compacted).
fn reading_scenario() -> Scenario {
    let read = |name: &str| Reply::tool_use("Read", json!({"file_path": name}));
    Scenario::new()
        .rule(summary_rule())
        .rule(continued_rule("Finished after compaction."))
        .rule(Rule::new().assistant_turns(0).reply(read("a.txt")))
        .rule(Rule::new().assistant_turns(1).reply(read("b.txt")))
        .rule(Rule::new().assistant_turns(2).reply(read("c.txt")))
        .default_reply(Reply::text("All read."))
}

/// Auto compaction between the third read and the request after it: the window is capped so
/// the threshold (effective − 13k) falls between those two requests' sizes.
fn config_between_third_and_fourth() -> CompactionConfig {
    // Each file is about 12k tokens; the base prompt (system, tools, first message) is below
    // 10k: request 3 carries about 34k, request 4 about 46k. Threshold 40k.
    CompactionConfig {
        window_cap: Some(40_000 + 13_000 + 20_000),
        ..CompactionConfig::default()
    }
}

#[tokio::test]
async fn crossing_the_threshold_compacts_on_the_parent_cache_and_finishes_the_turn() {
    let world = World::new();
    for name in ["a.txt", "b.txt", "c.txt"] {
        world.big_file(name, 12_000);
    }
    let server = server(reading_scenario()).await;
    let mut s = session(
        &world,
        &server,
        Options {
            config: config_between_third_and_fourth(),
            user_context: Some("<env>the project's instructions</env>".into()),
            ..Options::default()
        },
    )
    .await;
    let turn = s.turn("read the three files").await;
    assert_eq!(turn.terminal, Terminal::Completed);
    assert_eq!(turn.result, "Finished after compaction.");

    let log = server.requests();
    let rules: Vec<&str> = log
        .iter()
        .map(|r| r.rule.as_deref().unwrap_or(""))
        .collect();
    assert_eq!(
        rules,
        ["rules[2]", "rules[3]", "rules[4]", "summary", "continued"],
        "three reads, the summary, the continued turn"
    );
    let (parent, summary, after) = (&log[2], &log[3], &log[4]);
    assert!(prompt_tokens(parent) < 40_000, "{}", prompt_tokens(parent));
    assert!(
        prompt_tokens(summary) > 40_000,
        "{}",
        prompt_tokens(summary)
    );

    // The summary request is the parent's: same system, same tools, the parent's messages byte
    // for byte, then the instruction as the last user message.
    let (p, q) = (body(parent), body(summary));
    assert_eq!(p["system"], q["system"]);
    assert_eq!(p["tools"], q["tools"]);
    assert_eq!(p["model"], q["model"]);
    let (pm, qm) = (unmarked_messages(parent), unmarked_messages(summary));
    assert_eq!(pm[..], qm[..pm.len()]);
    let last = qm.last().unwrap();
    assert_eq!(last["role"], "user");
    assert!(last.to_string().contains(SUMMARY_INSTRUCTION_MARKER));
    assert!(q.get("max_tokens").is_some());

    // It read the parent's whole cached prefix: everything the parent's request sent.
    let usage = summary.usage.unwrap();
    assert_eq!(usage.cache_read_input_tokens, prompt_tokens(parent));
    // And wrote nothing: its breakpoint is where the parent's was, so neither the last round
    // (read by no later request, the history being replaced) nor the instruction is cached.
    assert_eq!(usage.cache_creation_input_tokens, 0, "{usage:?}");
    assert_eq!(
        usage.input_tokens,
        prompt_tokens(summary) - prompt_tokens(parent)
    );
    let report = &s.compactor.reports()[0];
    assert_eq!(report.cache_read_share(), Some(1.0));

    // The new history: the user context, the summary (scratchpad gone), the last file read.
    let messages = body(after)["messages"].as_array().unwrap().clone();
    assert_eq!(messages.len(), 1, "one user message replaces the history");
    let text = messages[0].to_string();
    assert!(text.contains("the project's instructions"));
    assert!(text.contains(CONTINUATION_PREFIX));
    assert!(text.contains(SUMMARY));
    assert!(!text.contains("SCRATCHPAD"));
    assert!(text.contains("without asking the user"));
    // The turn's prompt is never summarized away: it follows the summary as it was written.
    assert!(text.contains("latest message follows"), "{text}");
    let summary_at = text.find(SUMMARY).unwrap();
    let prompt_at = text.rfind("read the three files").unwrap();
    assert!(prompt_at > summary_at, "the prompt comes after the summary");
    assert!(
        text.contains("c.txt line 0: some content"),
        "the last file read"
    );
    assert!(
        text.contains("1\\tc.txt line 0"),
        "numbered as Read numbers lines"
    );
    for older in ["a.txt", "b.txt"] {
        assert!(
            text.contains(&format!(
                "{older} was read before the conversation was compacted; at"
            )),
            "{older} referenced"
        );
        assert!(
            !text.contains(&format!("{older} line 0")),
            "{older} not attached"
        );
    }
    assert!(prompt_tokens(after) < 30_000, "{}", prompt_tokens(after));
    assert_eq!(s.engine.messages().len(), 2, "summary, then the reply");

    // No cache break reported for the deliberate change of prefix.
    assert!(s.detector.take_breaks().is_empty());

    // The boundary record says what was dropped.
    let records: Vec<TranscriptRecord> = s
        .transcript()
        .into_iter()
        .map(|v| serde_json::from_value(v).unwrap())
        .collect();
    let boundaries: Vec<CompactBoundary> = records
        .iter()
        .filter_map(CompactBoundary::from_record)
        .collect();
    assert_eq!(boundaries.len(), 1);
    let b = &boundaries[0];
    assert_eq!(b.trigger, tine_query_loop::CompactTrigger::Auto);
    assert_eq!(b.messages_summarized, 7);
    assert!(
        b.tokens_before > 40_000 && b.tokens_after < b.tokens_before / 2,
        "{b:?}"
    );
    // The prompt was kept, so it is not among what went.
    assert_eq!(b.dropped.user_messages, 0);
    assert!(b.dropped.user_prompts.is_empty(), "{:?}", b.dropped);
    assert_eq!(b.dropped.files_read, ["a.txt", "b.txt", "c.txt"]);
    assert_eq!(b.dropped.tool_calls.get("Read"), Some(&3));
    // The files are 12k tokens each: the last one read comes back cut to 5k, the older ones
    // as references.
    assert_eq!(b.files_reattached.len(), 1);
    assert!(b.files_reattached[0].ends_with("c.txt"));
    assert_eq!(b.summary_cache_read_tokens, prompt_tokens(parent));
    assert!(
        s.events()
            .iter()
            .any(|e| matches!(e, QueryEvent::HistoryReplaced { .. }))
    );
}

#[tokio::test]
async fn three_failures_in_a_row_stop_auto_compaction_for_the_session() {
    let world = World::new();
    // Each round brings enough to summarize (the first request, the prompt alone, has none).
    let read = |n: usize| Reply::tool_use("Read", json!({"file_path": format!("f{n}.txt")}));
    let mut scenario = Scenario::new().rule(summary_rule().fault(Fault::http(500)));
    for n in 0..5 {
        world.big_file(&format!("f{n}.txt"), 1_500);
        scenario = scenario.rule(Rule::new().assistant_turns(n).reply(read(n)));
    }
    let scenario = scenario.default_reply(Reply::text("Globbed."));
    let server = server(scenario).await;
    // A window so small that every request is over the threshold.
    let mut s = session(
        &world,
        &server,
        Options {
            config: CompactionConfig {
                window_cap: Some(21_000),
                ..CompactionConfig::default()
            },
            ..Options::default()
        },
    )
    .await;
    let turn = s.turn("look around").await;
    assert_eq!(
        turn.terminal,
        Terminal::Completed,
        "the turn goes on without it"
    );
    assert_eq!(turn.result, "Globbed.");
    let log = server.requests();
    assert_eq!(log.iter().filter(|r| is_summary(r)).count(), 3);
    assert_eq!(log.iter().filter(|r| !is_summary(r)).count(), 6);
    assert!(s.compactor.auto_tripped());
    // The warning still reaches the UI, saying it is off now.
    let warnings: Vec<_> = s
        .events()
        .into_iter()
        .filter_map(|e| match e {
            QueryEvent::ContextWarning(w) => Some(w),
            _ => None,
        })
        .collect();
    assert_eq!(warnings.len(), 6);
    assert!(warnings[0].auto_compact_at.is_some());
    assert_eq!(warnings[5].auto_compact_at, None);
    assert!(warnings[5].to_string().contains("run /compact"));
}

#[tokio::test]
async fn a_full_context_warns_before_the_threshold_and_disabled_auto_never_compacts() {
    let world = World::new();
    world.big_file("a.txt", 20_000);
    let scenario = Scenario::new()
        .rule(summary_rule())
        .rule(
            Rule::new()
                .assistant_turns(0)
                .reply(Reply::tool_use("Read", json!({"file_path": "a.txt"}))),
        )
        .default_reply(Reply::text("Read it."));
    let server = server(scenario).await;
    // Effective window 30k: the second request (~28k) is past 85% but auto is off.
    let mut s = session(
        &world,
        &server,
        Options {
            config: CompactionConfig {
                window_cap: Some(50_000),
                auto_enabled: false,
                ..CompactionConfig::default()
            },
            ..Options::default()
        },
    )
    .await;
    let turn = s.turn("read a").await;
    assert_eq!(turn.terminal, Terminal::Completed);
    assert!(!server.requests().iter().any(is_summary));
    let warning = s
        .events()
        .into_iter()
        .find_map(|e| match e {
            QueryEvent::ContextWarning(w) => Some(w),
            _ => None,
        })
        .expect("a warning");
    assert!(warning.percent_full() >= 85, "{warning}");
    assert_eq!(warning.effective_window, 30_000);
}
