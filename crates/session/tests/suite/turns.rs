//! Submissions and their events: a turn's text, tool calls, usage and cost, the transcript,
//! commands, and the order of everything.

use serde_json::json;
use tine_mock_api::{Reply, Rule, Scenario};
use tine_query_loop::QueryEvent;
use tine_session::{MAIN_SOURCE, Op, SessionEvent, TurnOutcome};

use super::support::{Running, World, http_client, server};

#[tokio::test]
async fn a_prompt_streams_its_reply_and_ends_with_the_cost_of_every_request() {
    let world = World::new();
    std::fs::write(world.cwd.join("notes.txt"), "alpha\nbeta\n").unwrap();
    let notes = world.cwd.join("notes.txt").display().to_string();
    let scenario = Scenario::new()
        .rule(
            Rule::new()
                .tool_results(false)
                .last_user_contains("read the notes")
                .reply(Reply::text("Reading.").with_tool_use("Read", json!({"file_path": notes}))),
        )
        .rule(
            Rule::new()
                .tool_results(true)
                .reply(Reply::text("They say alpha and beta.")),
        )
        .default_reply(Reply::text("Hello."));
    let server = server(scenario).await;
    let mut options = world.options(http_client(&server));
    options.bare = true;
    let mut s = Running::start(options).await;

    let id = s
        .handle
        .submit(Op::Prompt("read the notes".into()))
        .unwrap();
    let (at, end) = s.turn_end_of().await;
    assert_eq!(at, Some(id));
    assert_eq!(end.outcome, TurnOutcome::Completed);
    let result = end.result.as_ref().unwrap();
    assert_eq!(result.result, "They say alpha and beta.");
    assert_eq!(result.num_turns, 2);
    // Two main-thread requests, priced; nothing else ran (bare: no memory).
    let main = &end.cost.by_source[MAIN_SOURCE];
    assert_eq!(main.requests, 2);
    assert!(main.cost_usd > 0.0);
    assert_eq!(end.cost.total(), *main);

    // In order: the turn starts, the loop's events, the tool's input once its reply is
    // complete, then its result, the loop's end, and the turn's end.
    let position = |pred: &dyn Fn(&SessionEvent) -> bool| s.seen.iter().position(pred).unwrap();
    let started = position(&|e| matches!(e, SessionEvent::TurnStarted));
    let input = position(&|e| matches!(e, SessionEvent::ToolInput { tool, .. } if tool == "Read"));
    let tool_result =
        position(&|e| matches!(e, SessionEvent::Query(QueryEvent::ToolResult { .. })));
    let terminal = position(&|e| matches!(e, SessionEvent::Query(QueryEvent::Terminal(_))));
    let ended = position(&|e| matches!(e, SessionEvent::TurnEnded(_)));
    assert!(started < input && input < tool_result && tool_result < terminal && terminal < ended);
    let text: String = s
        .seen
        .iter()
        .filter_map(|e| match e {
            SessionEvent::Query(QueryEvent::TextDelta { text }) => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(text, "Reading.They say alpha and beta.");
    // A status line's figures after each request: the second read the first's prefix.
    let reports: Vec<_> = s
        .seen
        .iter()
        .filter_map(|e| match e {
            SessionEvent::Usage(report) => Some(report.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(reports.len(), 2);
    // Each request counted and billed as it ends (folded by the loop's LoopTotals).
    let main = |i: usize| reports[i].cost.by_source[MAIN_SOURCE];
    assert_eq!((main(0).requests, main(1).requests), (1, 2));
    assert!(main(0).cost_usd > 0.0 && main(1).cost_usd > main(0).cost_usd);
    assert!(main(1).usage.total_input_tokens() > main(0).usage.total_input_tokens());
    assert!(reports[1].context_tokens > 0);
    // The default model (Opus 5.5) has a million-token window.
    assert_eq!(reports[1].context_window, 1_000_000);

    let transcript = s.info.transcript_path.clone();
    let (report, events) = s.shutdown().await;
    assert_eq!(report.cost.by_source[MAIN_SOURCE].requests, 2);
    assert!(
        !events.iter().any(|e| matches!(e, SessionEvent::Notice(_))),
        "no warnings expected: {events:?}"
    );
    let lines = std::fs::read_to_string(transcript).unwrap();
    assert!(lines.contains("They say alpha and beta."));
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn submissions_run_one_at_a_time_in_order_and_each_ends_once() {
    let world = World::new();
    let scenario = Scenario::new()
        .rule(
            Rule::new()
                .last_user_contains("first")
                .reply(Reply::text("One.")),
        )
        .rule(
            Rule::new()
                .last_user_contains("second")
                .reply(Reply::text("Two.")),
        );
    let server = server(scenario).await;
    let mut options = world.options(http_client(&server));
    options.bare = true;
    let mut s = Running::start(options).await;
    let first = s.handle.submit(Op::Prompt("first".into())).unwrap();
    let cost = s
        .handle
        .submit(Op::Command {
            name: "cost".into(),
            args: String::new(),
        })
        .unwrap();
    let second = s.handle.submit(Op::Prompt("second".into())).unwrap();
    let ends = [
        s.turn_end_of().await,
        s.turn_end_of().await,
        s.turn_end_of().await,
    ];
    assert_eq!(
        ends.map(|(id, _)| id),
        [Some(first), Some(cost), Some(second)]
    );
    let (output, at) = s
        .seen
        .iter()
        .zip(&s.seen_ids)
        .find_map(|(e, at)| match e {
            SessionEvent::CommandOutput(output) => Some((output.clone(), *at)),
            _ => None,
        })
        .unwrap();
    assert_eq!(at, Some(cost));
    assert!(output.text.contains("Total cost: $"), "{}", output.text);
    assert!(output.text.contains("- main: $"), "{}", output.text);
    assert!(
        output.text.contains("read from the cache"),
        "{}",
        output.text
    );
    // The second turn's request carries the first turn's exchange.
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert!(String::from_utf8_lossy(&requests[1].body).contains("One."));
    s.shutdown().await;
}

#[tokio::test]
async fn an_unknown_command_is_sent_as_text_and_the_session_goes_on() {
    let world = World::new();
    let server = server(Scenario::new().default_reply(Reply::text("Fine."))).await;
    let mut options = world.options(http_client(&server));
    options.bare = true;
    let mut s = Running::start(options).await;
    s.handle
        .submit(Op::Command {
            name: "nope".into(),
            args: String::new(),
        })
        .unwrap();
    let end = s.turn_end().await;
    assert_eq!(end.outcome, TurnOutcome::Completed);
    let body = String::from_utf8_lossy(&server.requests()[0].body).into_owned();
    assert!(body.contains("\"/nope\""), "{body}");
    s.handle.submit(Op::Prompt("hi".into())).unwrap();
    assert_eq!(s.turn_end().await.outcome, TurnOutcome::Completed);
    let (_, events) = s.shutdown().await;
    assert!(
        events
            .iter()
            .all(|e| !matches!(e, SessionEvent::Query(QueryEvent::Retry(_))))
    );
}

#[tokio::test]
async fn settings_warnings_are_events_not_output() {
    let world = World::new();
    world.project_settings(r#"{"noSuchSetting": 1}"#);
    let server = server(Scenario::new().default_reply(Reply::text("Fine."))).await;
    let mut options = world.options(http_client(&server));
    options.bare = true;
    let s = Running::start(options).await;
    let (_, events) = s.shutdown().await;
    let notices: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            SessionEvent::Notice(n) => Some(n.text.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert!(notices[0].contains("noSuchSetting"), "{notices:?}");
}

#[tokio::test]
async fn the_context_figure_is_shown_against_the_endpoints_configured_window() {
    use std::sync::Arc;
    use tine_api_client::{OpenAiClient, OpenAiConfig, RetryPolicy};

    let world = World::new();
    let server = server(Scenario::new().default_reply(Reply::text("Hello."))).await;
    // A local model on an OpenAI-compatible server, loaded with a 32k window.
    let mut config =
        OpenAiConfig::new(server.openai_base_url(), "test-key").with_retry(RetryPolicy::none());
    config.context_window = Some(32_768);
    let mut options = world.options(Arc::new(OpenAiClient::new(config).unwrap()));
    options.bare = true;
    options.model = Some("qwen2.5-coder:7b".into());
    let mut s = Running::start(options).await;
    s.handle.submit(Op::Prompt("hi".into())).unwrap();
    let end = s.turn_end().await;
    assert_eq!(end.outcome, TurnOutcome::Completed);
    let windows: Vec<u64> = s
        .seen
        .iter()
        .filter_map(|e| match e {
            SessionEvent::Usage(report) => Some(report.context_window),
            _ => None,
        })
        .collect();
    assert!(!windows.is_empty());
    assert!(windows.iter().all(|w| *w == 32_768), "{windows:?}");
    s.shutdown().await;
}
