//! Going idle: `flush_background` starts what a batching job put off (the memory extraction
//! of fewer turns than `autoMemoryExtractEvery`), so the memories are saved without waiting
//! for the exit; the main thread's background shells are the front end's to list.

use tine_fork_runtime::BackgroundEvent;
use tine_memory::{EXTRACTION_JOB, EXTRACTION_MARKER};
use tine_mock_api::{Reply, Rule, Scenario};
use tine_session::{Op, SessionEvent, TurnOutcome};

use super::support::{Running, World, http_client, server};

const TOPIC: &str =
    "---\nname: Indentation\ndescription: the user prefers tabs\ntype: feedback\n---\nUse tabs.\n";

#[tokio::test]
async fn going_idle_starts_the_batched_extraction_before_the_exit() {
    let world = World::new();
    // A batch of five turns: one turn alone extracts nothing until something flushes it.
    world.project_settings(r#"{"autoMemoryExtractEvery": 5}"#);
    let mem = world.memory_dir();
    let scenario = Scenario::new()
        .rule(
            Rule::new()
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
        .default_reply(Reply::text("Noted: tabs."));
    let server = server(scenario).await;
    let mut s = Running::start(world.options(http_client(&server))).await;
    assert!(s.info.memory, "auto memory should be on");
    s.handle
        .submit(Op::Prompt(
            "I prefer tabs over spaces in this project".into(),
        ))
        .unwrap();
    assert_eq!(s.turn_end().await.outcome, TurnOutcome::Completed);
    let extraction_started = |e: &SessionEvent| matches!(e, SessionEvent::Background(BackgroundEvent::Started { job }) if job == EXTRACTION_JOB);
    assert!(
        !s.seen.iter().any(extraction_started),
        "the batch of one turn ran at once: {:?}",
        s.seen
    );

    s.submit(Op::FlushBackground);
    let outcome = s
        .until(|e| match e {
            SessionEvent::Background(BackgroundEvent::Finished { job, outcome })
                if job == EXTRACTION_JOB =>
            {
                Some(outcome.clone())
            }
            _ => None,
        })
        .await;
    assert_eq!(outcome.summary, "saved 1 memory: feedback_tabs.md");
    assert_eq!(
        std::fs::read_to_string(mem.join("feedback_tabs.md")).unwrap(),
        TOPIC
    );
    assert!(
        !s.seen.iter().any(
            |e| matches!(e, SessionEvent::Task(task) if task.kind == tine_session::TaskKind::Shell)
        ),
        "no background shell was started"
    );
    s.shutdown().await;
}
