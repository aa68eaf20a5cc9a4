//! Manual compaction (`/compact [focus]`) between turns: focus, hooks, memory's hook, the log,
//! resume from the boundary, cancellation.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use tine_compaction::{CONTINUATION_PREFIX, SUMMARY_INSTRUCTION_MARKER, compact_log};
use tine_fork_runtime::{JobContext, JobOutcome};
use tine_mock_api::{Reply, Rule, Scenario};
use tine_query_loop::{CompactError, CompactTrigger, Terminal};

use super::harness::{
    Options, SUMMARY, World, body, is_summary, prompt_tokens, server, session, summary_rule,
};

fn scenario() -> Scenario {
    Scenario::new()
        .rule(summary_rule())
        .rule(
            Rule::new()
                .last_user_contains("what next")
                .reply(Reply::text("Next: the parser.")),
        )
        .rule(
            Rule::new()
                .assistant_turns(0)
                .reply(Reply::tool_use("Read", json!({"file_path": "notes.md"}))),
        )
        .default_reply(Reply::text("Read the notes."))
}

#[tokio::test]
async fn compact_now_summarizes_with_the_focus_and_the_session_resumes_from_it() {
    let world = World::new();
    world.big_file("notes.md", 3_000);
    let server = server(scenario()).await;
    let extracted: Arc<Mutex<Vec<usize>>> = Arc::default();
    let seen = Arc::clone(&extracted);
    let hook: tine_compaction::BeforeCompaction = Arc::new(move |ctx: JobContext| {
        seen.lock().unwrap().push(ctx.cache_safe.messages.len());
        Box::pin(async { Ok(JobOutcome::new("saved 1 memory", serde_json::Value::Null)) })
    });
    let mut s = session(
        &world,
        &server,
        Options {
            hooks: true,
            before_compaction: Some(hook),
            ..Options::default()
        },
    )
    .await;
    let turn = s.turn("read the notes").await;
    assert_eq!(turn.terminal, Terminal::Completed);
    let parent = server.requests().last().cloned().unwrap();

    let boundary = s
        .engine
        .compact_now(Some("keep the parser design"))
        .await
        .unwrap();
    assert_eq!(boundary.trigger, CompactTrigger::Manual);
    assert_eq!(boundary.messages_summarized, 4);
    assert_eq!(
        boundary.focus.as_deref(),
        Some("keep the parser design\n\nkeep the ledger format")
    );
    // Memory saw the whole history before it went.
    assert_eq!(*extracted.lock().unwrap(), [4]);

    let summary = server.requests().into_iter().find(is_summary).unwrap();
    let text = body(&summary)["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .to_string();
    assert!(text.contains(SUMMARY_INSTRUCTION_MARKER));
    assert!(text.contains("keep the parser design"), "the focus");
    assert!(
        text.contains("keep the ledger format"),
        "what PreCompact printed"
    );
    // Between turns the parent's last request is the cached prefix: all of it is read.
    assert_eq!(
        summary.usage.unwrap().cache_read_input_tokens,
        prompt_tokens(&parent)
    );
    assert_eq!(summary.usage.unwrap().cache_creation_input_tokens, 0);
    // The PreCompact hook got Claude Code's input.
    let input: serde_json::Value =
        serde_json::from_slice(&std::fs::read(world.cwd.join("pre-compact.json")).unwrap())
            .unwrap();
    assert_eq!(input["trigger"], "manual");
    assert_eq!(input["custom_instructions"], "keep the parser design");

    let history = s.engine.messages().to_vec();
    assert_eq!(history.len(), 1);
    let first = serde_json::to_string(&history[0]).unwrap();
    assert!(first.contains(CONTINUATION_PREFIX) && first.contains(SUMMARY));
    assert!(
        !first.contains("without asking"),
        "a manual compaction waits for the user"
    );
    assert!(first.contains("POST-HOOK-CONTEXT"));
    assert!(first.contains("notes.md line 0"), "the file read is back");

    // The log shows what went.
    let log = compact_log(&world.home, &world.cwd, None).await.unwrap();
    assert!(log.contains("1 compaction"), "{log}");
    assert!(log.contains("(manual)"), "{log}");
    assert!(log.contains("- user: read the notes"), "{log}");
    assert!(log.contains("files read: notes.md"), "{log}");

    // Resume (a new process, as `tine -c` after `tine -c -p /compact`) starts at the boundary:
    // the summary, never the summarized messages again.
    let id = s.engine.session_id().clone();
    drop(s);
    let mut resumed = session(
        &world,
        &server,
        Options {
            session_id: Some(id),
            resume: true,
            ..Options::default()
        },
    )
    .await;
    assert_eq!(resumed.engine.messages().len(), 1);
    let turn = resumed.turn("what next?").await;
    assert_eq!(turn.result, "Next: the parser.");
    let last = server.requests().last().cloned().unwrap();
    let messages = body(&last)["messages"].as_array().unwrap().clone();
    assert_eq!(messages.len(), 2);
    assert!(messages[0].to_string().contains(CONTINUATION_PREFIX));
    // The resumed process knows the prefix changed on purpose (the transcript says so): the
    // request after the compaction is not reported as a cache break.
    assert!(resumed.detector.take_breaks().is_empty());
    assert!(resumed.detector.reference().is_some());
}

#[tokio::test]
async fn cancelling_the_turn_stops_the_summary_and_keeps_the_history() {
    let world = World::new();
    let scenario = Scenario::new()
        .rule(summary_rule().reply(Reply::text("<summary>late</summary>").latency_ms(10_000)))
        .default_reply(Reply::text("Hello."));
    let server = server(scenario).await;
    let mut s = session(&world, &server, Options::default()).await;
    s.turn("hi").await;
    let cancel = s.engine.cancellation();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        cancel.cancel();
    });
    let result = s.engine.compact_now(None).await;
    assert_eq!(result.unwrap_err(), CompactError::Cancelled);
    assert_eq!(s.engine.messages().len(), 2);
    // The summary request was sent and abandoned; nothing was written.
    assert_eq!(
        server.requests().len(),
        1 + usize::from(server.requests().iter().any(is_summary))
    );
    assert!(
        !s.transcript()
            .iter()
            .any(|r| r["data"]["subtype"] == "compact_boundary")
    );
}
