//! Reactive compaction: the API's "prompt is too long" compacts once and the request is tried
//! again; a summary request too long itself is retried without the oldest rounds.

use serde_json::json;
use tine_compaction::{CompactionConfig, MAX_TOO_LONG_RETRIES, TRUNCATED_MARKER};
use tine_mock_api::{Fault, Reply, Rule, Scenario};
use tine_query_loop::{CompactBoundary, CompactTrigger, Terminal, Transition};

use super::harness::{
    Options, World, body, continued_rule, is_summary, server, session, summary_rule,
};

fn reading_scenario(window: u64) -> Scenario {
    let read = |name: &str| Reply::tool_use("Read", json!({"file_path": name}));
    Scenario::new()
        .rule(summary_rule())
        .rule(continued_rule("Done after a reactive compaction."))
        .rule(Rule::new().assistant_turns(0).reply(read("a.txt")))
        .rule(Rule::new().assistant_turns(1).reply(read("b.txt")))
        .rule(Rule::new().assistant_turns(2).reply(read("c.txt")))
        .default_reply(Reply::text("All read."))
        .context_window(window)
}

fn auto_off() -> Options {
    Options {
        config: CompactionConfig {
            auto_enabled: false,
            ..CompactionConfig::default()
        },
        ..Options::default()
    }
}

#[tokio::test]
async fn prompt_too_long_compacts_once_dropping_rounds_the_summary_cannot_fit() {
    let world = World::new();
    for name in ["a.txt", "b.txt", "c.txt"] {
        world.big_file(name, 12_000);
    }
    // Request 4 (~46k) is over the window; so is the summary request on the same history.
    let server = server(reading_scenario(40_000)).await;
    let mut s = session(&world, &server, auto_off()).await;
    let turn = s.turn("read the three files").await;
    assert_eq!(turn.terminal, Terminal::Completed);
    assert_eq!(turn.result, "Done after a reactive compaction.");
    let transitions: Vec<Transition> = s
        .events()
        .into_iter()
        .filter_map(|e| match e {
            tine_query_loop::QueryEvent::Transition(t) => Some(t),
            _ => None,
        })
        .collect();
    assert!(transitions.contains(&Transition::ReactiveCompact));

    let log = server.requests();
    let statuses: Vec<(bool, u16)> = log.iter().map(|r| (is_summary(r), r.status)).collect();
    assert_eq!(
        statuses,
        [
            (false, 200),
            (false, 200),
            (false, 200),
            (false, 400), // prompt is too long
            (true, 400),  // the summary request on the same history: too long too
            (true, 200),  // without the oldest rounds
            (false, 200), // the turn goes on from the summary
        ]
    );
    assert!(
        log[3]
            .error
            .as_deref()
            .unwrap_or("")
            .contains("prompt is too long")
    );
    // The retry left out whole rounds from the start, and says so first.
    let retry = body(&log[5]);
    let messages = retry["messages"].as_array().unwrap();
    assert!(messages[0].to_string().contains(TRUNCATED_MARKER));
    assert_eq!(messages[1]["role"], "assistant");
    assert!(
        !retry.to_string().contains("a.txt line 0"),
        "a.txt's round went"
    );
    assert!(retry.to_string().contains("c.txt line 0"));

    let boundary: CompactBoundary = s
        .transcript()
        .into_iter()
        .filter_map(|v| serde_json::from_value(v).ok())
        .find_map(|r| CompactBoundary::from_record(&r))
        .unwrap();
    assert_eq!(boundary.trigger, CompactTrigger::Reactive);
    assert!(boundary.rounds_dropped >= 1, "{boundary:?}");
    assert_eq!(boundary.dropped.files_read, ["a.txt", "b.txt", "c.txt"]);
    // A reactive compaction's failure count stays clean after a success.
    assert_eq!(s.compactor.consecutive_failures(), 0);
}

#[tokio::test]
async fn a_summary_that_never_fits_gives_up_after_three_retries() {
    let world = World::new();
    for name in ["a.txt", "b.txt", "c.txt"] {
        world.big_file(name, 12_000);
    }
    let scenario = reading_scenario(40_000);
    // Every summary request is refused, whatever its size.
    let mut scenario = scenario;
    scenario.rules[0] = summary_rule().fault(Fault::prompt_too_long());
    let server = server(scenario).await;
    let mut s = session(&world, &server, auto_off()).await;
    let turn = s.turn("read the three files").await;
    assert!(
        matches!(turn.terminal, Terminal::PromptTooLong { .. }),
        "{:?}",
        turn.terminal
    );
    let summaries = server.requests().into_iter().filter(is_summary).count();
    assert_eq!(summaries, 1 + MAX_TOO_LONG_RETRIES as usize);
    assert_eq!(s.compactor.consecutive_failures(), 1);
    // The history is untouched.
    assert_eq!(s.engine.messages().len(), 7);
}
