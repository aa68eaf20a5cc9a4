//! Cancellation: `interrupt` stops the running turn and nothing else. The memory extraction an
//! earlier turn started goes on and lands; the session takes the next prompt; later turns'
//! forks still run.

use tine_fork_runtime::BackgroundEvent;
use tine_memory::{EXTRACTION_JOB, EXTRACTION_MARKER};
use tine_mock_api::{Reply, Rule, Scenario};
use tine_query_loop::QueryEvent;
use tine_session::{Op, SessionEvent, TurnOutcome};

use super::support::{Gate, GatedClient, Running, World, files_under, http_client, server};

const TOPIC: &str =
    "---\nname: Indentation\ndescription: the user prefers tabs\ntype: feedback\n---\nUse tabs.\n";

fn started_request(e: &SessionEvent) -> Option<()> {
    matches!(e, SessionEvent::Query(QueryEvent::RequestStart { .. })).then_some(())
}

#[tokio::test]
async fn interrupt_ends_the_running_turn_and_the_session_takes_the_next_prompt() {
    let world = World::new();
    let scenario = Scenario::new()
        .rule(
            Rule::new()
                .last_user_contains("slow")
                .reply(Reply::text("Too late.").latency_ms(600_000)),
        )
        .default_reply(Reply::text("Quick."));
    let server = server(scenario).await;
    let mut options = world.options(http_client(&server));
    options.bare = true;
    let mut s = Running::start(options).await;
    s.handle.submit(Op::Prompt("be slow".into())).unwrap();
    s.until(started_request).await;
    s.interrupt();
    let end = s.turn_end().await;
    assert_eq!(end.outcome, TurnOutcome::Interrupted);
    s.handle.submit(Op::Prompt("now be quick".into())).unwrap();
    let end = s.turn_end().await;
    assert_eq!(end.outcome, TurnOutcome::Completed);
    assert_eq!(end.result.unwrap().result, "Quick.");
    s.shutdown().await;
}

#[tokio::test]
async fn interrupting_a_turn_leaves_the_previous_turns_extraction_running_and_it_lands() {
    let world = World::new();
    // Extract after every turn, so the first turn's fork starts at its end.
    world.project_settings(r#"{"autoMemoryExtractEvery": 1}"#);
    let mem = world.memory_dir();
    let scenario = Scenario::new()
        .rule(
            Rule::new()
                .named("extract")
                .marker(EXTRACTION_MARKER)
                .tool_results(false)
                .reply(Reply::text("Saving.").with_tool_use(
                    "Write",
                    serde_json::json!({
                        "file_path": mem.join("feedback_tabs.md").display().to_string(),
                        "content": TOPIC,
                    }),
                )),
        )
        .rule(
            Rule::new()
                .last_user_contains("slow")
                .reply(Reply::text("Too late.").latency_ms(600_000)),
        )
        .default_reply(Reply::text("Noted: tabs."));
    let server = server(scenario).await;
    // The extraction fork's request is held until the next turn has been interrupted.
    let gate = Gate::new(EXTRACTION_MARKER);
    let client = std::sync::Arc::new(GatedClient {
        inner: http_client(&server),
        gate: std::sync::Arc::clone(&gate),
    });
    let mut s = Running::start(world.options(client)).await;
    assert!(s.info.memory, "auto memory should be on");

    s.handle
        .submit(Op::Prompt(
            "I prefer tabs over spaces in this project".into(),
        ))
        .unwrap();
    assert_eq!(s.turn_end().await.outcome, TurnOutcome::Completed);
    gate.arrived.notified().await;

    s.handle.submit(Op::Prompt("now be slow".into())).unwrap();
    s.until(started_request).await;
    s.interrupt();
    assert_eq!(s.turn_end().await.outcome, TurnOutcome::Interrupted);

    gate.open();
    let outcome = s
        .until(|e| match e {
            SessionEvent::Background(BackgroundEvent::Finished { job, outcome })
                if job == EXTRACTION_JOB =>
            {
                Some(outcome.clone())
            }
            SessionEvent::Background(
                BackgroundEvent::Cancelled { job } | BackgroundEvent::Failed { job, .. },
            ) if job == EXTRACTION_JOB => {
                panic!("the extraction did not survive the interruption: {e:?}")
            }
            _ => None,
        })
        .await;
    assert_eq!(outcome.summary, "saved 1 memory: feedback_tabs.md");
    assert_eq!(
        std::fs::read_to_string(mem.join("feedback_tabs.md")).unwrap(),
        TOPIC
    );

    // A later turn still runs, and so does its fork (the session's token is untouched).
    s.handle
        .submit(Op::Prompt("thanks, and I like short functions".into()))
        .unwrap();
    assert_eq!(s.turn_end().await.outcome, TurnOutcome::Completed);
    let (report, events) = s.shutdown().await;
    assert_eq!(report.drain.cancelled, 0);
    let extractions = events
        .iter()
        .filter(|e| matches!(e, SessionEvent::Background(BackgroundEvent::Started { job }) if job == EXTRACTION_JOB))
        .count();
    assert!(extractions >= 2, "{events:?}");
    assert!(files_under(&mem).contains(&"feedback_tabs.md".to_owned()));
}
