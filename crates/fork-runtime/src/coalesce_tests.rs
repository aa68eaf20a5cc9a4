use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::json;
use tine_api_client::{ContentBlock, Message, ScriptedClient};
use tine_config::SessionId;
use tine_query_loop::{RequestTemplate, system_prompt_blocks};
use tine_tools::ToolContext;
use tokio_util::sync::CancellationToken;

use super::*;
use crate::cache_safe::CacheSafeParams;
use crate::job_outcome::NotRun;
use crate::subagent::{ParentContext, SessionLocation};

/// Records the message count of every context it runs for.
#[derive(Default)]
struct Recorder {
    ran: Mutex<Vec<usize>>,
    not_due: AtomicBool,
    failing: AtomicBool,
    flushes: bool,
}

impl CoalescedWork for Recorder {
    type Report = usize;
    type Error = std::io::Error;

    fn name(&self) -> &str {
        "recorder"
    }

    fn due(&self, _ctx: &JobContext) -> bool {
        !self.not_due.load(Ordering::SeqCst)
    }

    fn flushes(&self) -> bool {
        self.flushes
    }

    fn run_once<'a>(&'a self, ctx: &'a JobContext) -> BoxFuture<'a, Result<usize, std::io::Error>> {
        Box::pin(async move {
            let n = ctx.cache_safe.messages.len();
            self.ran.lock().unwrap().push(n);
            if self.failing.load(Ordering::SeqCst) {
                return Err(std::io::Error::other("disk full"));
            }
            Ok(n)
        })
    }

    fn outcome(&self, reports: Vec<usize>, error: Option<std::io::Error>) -> JobOutcome {
        let error = error.map(|e| e.to_string());
        JobOutcome::new(
            format!("{reports:?}"),
            json!({"runs": reports, "error": error}),
        )
    }
}

/// A turn's context holding `n` messages.
fn ctx(n: usize) -> JobContext {
    let dir = std::env::temp_dir();
    let parent = ParentContext::new(
        Arc::new(ScriptedClient::new()),
        Arc::from(Vec::new()),
        ToolContext::new(&dir),
        SessionLocation {
            home: dir.clone(),
            cwd: dir,
            session_id: SessionId::new_random(),
        },
    );
    let template = RequestTemplate {
        model: "m".to_owned(),
        system: Arc::new(system_prompt_blocks("s")),
        tools: tine_query_loop::tool_definitions(&[]),
        thinking: None,
        skip_cache_write: false,
        replacements: None,
        effort: None,
    };
    let messages = (0..n)
        .map(|i| Message::user(vec![ContentBlock::text(format!("m{i}"))]))
        .collect::<Vec<_>>();
    JobContext {
        cache_safe: Arc::new(CacheSafeParams {
            template,
            messages: Arc::from(messages),
        }),
        parent: Arc::new(parent),
        cancel: CancellationToken::new(),
    }
}

fn ran(job: &CoalescingJob<Recorder>) -> Vec<usize> {
    job.work().ran.lock().unwrap().clone()
}

#[tokio::test]
async fn a_trigger_during_a_run_waits_and_the_latest_runs_after_it() {
    let job = CoalescingJob::new(Recorder::default());
    let running = job.start(ctx(1), Trigger::Forced);
    assert!(job.is_running());
    // The turn waits; the pipeline's start during the run reports that it was stashed.
    assert!(!job.should_run(&ctx(2)));
    let stashed = job.start(ctx(3), Trigger::Forced).await.unwrap();
    assert!(stashed.detail::<Recorded>().is_none());
    assert_eq!(stashed.detail::<NotRun>().map(|n| n.status), Some(STASHED));
    assert_eq!(stashed.data(), json!({"status": "stashed"}));
    let outcome = running.await.unwrap();
    assert_eq!(ran(&job), [1, 3]);
    assert_eq!(outcome.summary, "[1, 3]");
    assert!(!job.is_running());
    assert!(job.should_run(&ctx(4)));
}

/// Only here to show that a detail of another type reads as `None`.
#[derive(serde::Serialize)]
struct Recorded;

#[tokio::test]
async fn a_waiting_turn_runs_only_if_still_due_and_a_forced_one_always() {
    let job = CoalescingJob::new(Recorder::default());
    job.work().not_due.store(true, Ordering::SeqCst);
    let running = job.start(ctx(1), Trigger::Forced);
    assert!(!job.should_run(&ctx(2)));
    running.await.unwrap();
    assert_eq!(ran(&job), [1]);
    // Not due: the pipeline starts nothing.
    assert!(!job.should_run(&ctx(3)));

    let running = job.start(ctx(4), Trigger::Forced);
    assert!(!job.should_run(&ctx(5)));
    // A forced trigger stays forced when a turn replaces its context.
    let _ = job.start(ctx(6), Trigger::Forced).await;
    assert!(!job.should_run(&ctx(7)));
    running.await.unwrap();
    assert_eq!(ran(&job), [1, 4, 7]);
}

#[tokio::test]
async fn a_pinned_trigger_is_not_replaced() {
    let job = CoalescingJob::new(Recorder::default());
    let running = job.start(ctx(1), Trigger::Forced);
    let _ = job.start(ctx(2), Trigger::Pinned).await;
    let _ = job.start(ctx(3), Trigger::Forced).await;
    assert!(!job.should_run(&ctx(4)));
    running.await.unwrap();
    assert_eq!(ran(&job), [1, 2]);
}

#[tokio::test]
async fn every_run_failing_fails_the_job_and_a_dropped_run_clears_the_slot() {
    let job = CoalescingJob::new(Recorder::default());
    job.work().failing.store(true, Ordering::SeqCst);
    let error = job.start(ctx(1), Trigger::Forced).await.unwrap_err();
    assert_eq!(error.to_string(), "disk full");

    let dropped = job.start(ctx(2), Trigger::Forced);
    assert!(!job.should_run(&ctx(3)));
    drop(dropped);
    assert!(!job.is_running());
    job.work().failing.store(false, Ordering::SeqCst);
    // The waiting trigger went with the dropped run.
    let outcome = job.start(ctx(4), Trigger::Forced).await.unwrap();
    assert_eq!(outcome.data(), json!({"runs": [4], "error": null}));
}

#[tokio::test]
async fn a_flush_runs_the_last_turn_only_for_work_that_flushes() {
    let job = CoalescingJob::new(Recorder::default());
    job.work().not_due.store(true, Ordering::SeqCst);
    assert!(!job.should_run(&ctx(2)));
    assert!(job.flush().is_none());

    let job = CoalescingJob::new(Recorder {
        flushes: true,
        ..Recorder::default()
    });
    job.work().not_due.store(true, Ordering::SeqCst);
    assert!(job.flush().is_none(), "no turn yet");
    assert!(!job.should_run(&ctx(2)));
    let flushed = job.flush().expect("the last turn is flushed");
    assert_eq!(flushed.await.unwrap().summary, "[2]");
    // During a run, the flush waits for the trailing run, forced.
    let running = job.start(ctx(3), Trigger::Forced);
    assert!(job.flush().is_none());
    running.await.unwrap();
    assert_eq!(ran(&job), [2, 3, 2]);
}
