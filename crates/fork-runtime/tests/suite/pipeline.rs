//! The stop-hook pipeline: params saved, jobs started without blocking, failures contained,
//! drain bounded, user hooks still run.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures::future::BoxFuture;
use tine_fork_runtime::{BackgroundEvent, BackgroundJob, JobContext, JobError, JobOutcome};
use tine_mock_api::{Reply, Scenario};
use tine_query_loop::hooks::StopHookOutcome;
use tine_query_loop::{StopContext, StopHooks, Terminal};

use super::harness::session;

struct Failing;
impl BackgroundJob for Failing {
    fn name(&self) -> &str {
        "failing"
    }
    fn run(&self, _ctx: JobContext) -> BoxFuture<'static, Result<JobOutcome, JobError>> {
        Box::pin(async { Err::<JobOutcome, JobError>("disk full".into()) })
    }
}

struct Panicking;
impl BackgroundJob for Panicking {
    fn name(&self) -> &str {
        "panicking"
    }
    fn run(&self, _ctx: JobContext) -> BoxFuture<'static, Result<JobOutcome, JobError>> {
        Box::pin(async { panic!("a bug in a job") })
    }
}

struct Counting(Arc<AtomicUsize>);
impl BackgroundJob for Counting {
    fn name(&self) -> &str {
        "counting"
    }
    fn run(&self, ctx: JobContext) -> BoxFuture<'static, Result<JobOutcome, JobError>> {
        let n = Arc::clone(&self.0);
        Box::pin(async move {
            n.fetch_add(1, Ordering::SeqCst);
            Ok(JobOutcome::new(
                format!("saw {} messages", ctx.cache_safe.messages.len()),
                serde_json::Value::Null,
            ))
        })
    }
}

struct Sleepy;
impl BackgroundJob for Sleepy {
    fn name(&self) -> &str {
        "sleepy"
    }
    fn run(&self, ctx: JobContext) -> BoxFuture<'static, Result<JobOutcome, JobError>> {
        Box::pin(async move {
            ctx.cancel.cancelled().await;
            Err::<JobOutcome, JobError>("cancelled".into())
        })
    }
}

#[tokio::test]
async fn failing_and_panicking_jobs_leave_the_main_loop_untouched() {
    let count = Arc::new(AtomicUsize::new(0));
    let c = Arc::clone(&count);
    let mut s = session(
        Scenario::new().default_reply(Reply::text("OK.")),
        move |p| {
            p.with_job(Arc::new(Failing))
                .with_job(Arc::new(Panicking))
                .with_job(Arc::new(Counting(c)))
        },
    )
    .await;
    for prompt in ["first", "second"] {
        let turn = s.engine.submit(prompt, |_| {}).await;
        assert_eq!(turn.terminal, Terminal::Completed);
        assert_eq!(turn.result, "OK.");
        s.pipeline.drain(Duration::from_secs(5)).await;
    }
    assert_eq!(
        count.load(Ordering::SeqCst),
        2,
        "the job ran after each turn"
    );
    let events = s.events.all();
    assert!(events.iter().any(|e| matches!(e, BackgroundEvent::Failed { job, error } if job == "failing" && error.contains("disk full"))));
    assert!(
        events
            .iter()
            .any(|e| matches!(e, BackgroundEvent::Failed { job, .. } if job == "panicking"))
    );
    assert!(events.iter().any(|e| matches!(e, BackgroundEvent::Finished { job, outcome } if job == "counting" && outcome.summary == "saw 4 messages")));
}

#[tokio::test]
async fn drain_is_bounded_and_cancels_what_is_left() {
    let mut s = session(Scenario::new().default_reply(Reply::text("OK.")), |p| {
        p.with_job(Arc::new(Sleepy))
    })
    .await;
    s.engine.submit("go", |_| {}).await;
    assert_eq!(s.pipeline.pending(), 1);
    let report = s.pipeline.drain(Duration::from_millis(100)).await;
    assert_eq!(report.cancelled, 1);
    assert_eq!(report.finished, 0);
    assert_eq!(s.pipeline.pending(), 0);
}

struct BlockOnce(AtomicUsize);
impl StopHooks for BlockOnce {
    fn on_stop<'a>(&'a self, _ctx: StopContext<'a>) -> BoxFuture<'a, StopHookOutcome> {
        Box::pin(async move {
            if self.0.fetch_add(1, Ordering::SeqCst) == 0 {
                StopHookOutcome::Block {
                    reason: "one more thing".into(),
                }
            } else {
                StopHookOutcome::Continue
            }
        })
    }
}

#[tokio::test]
async fn user_hooks_run_after_the_jobs_and_a_continuation_does_not_save_twice() {
    let count = Arc::new(AtomicUsize::new(0));
    let c = Arc::clone(&count);
    let mut s = session(
        Scenario::new().default_reply(Reply::text("OK.")),
        move |p| {
            p.with_job(Arc::new(Counting(c)))
                .with_user_hooks(Arc::new(BlockOnce(AtomicUsize::new(0))))
        },
    )
    .await;
    let turn = s.engine.submit("go", |_| {}).await;
    assert_eq!(turn.terminal, Terminal::Completed);
    assert_eq!(turn.num_turns, 2, "the hook's block made a second request");
    s.pipeline.drain(Duration::from_secs(5)).await;
    assert_eq!(count.load(Ordering::SeqCst), 1);
    // the saved params are those of the turn's first stop (the second ran with the hook active)
    assert!(s.pipeline.slot().get().is_some());
}

/// Runs every other turn and keeps the skipped turn's size for `flush`.
struct EveryOther {
    turns: AtomicUsize,
    deferred: std::sync::Mutex<Option<usize>>,
}
impl BackgroundJob for EveryOther {
    fn name(&self) -> &str {
        "every_other"
    }
    fn should_run(&self, ctx: &JobContext) -> bool {
        let due = self.turns.fetch_add(1, Ordering::SeqCst) % 2 == 1;
        *self.deferred.lock().unwrap() = (!due).then(|| ctx.cache_safe.messages.len());
        due
    }
    fn run(&self, ctx: JobContext) -> BoxFuture<'static, Result<JobOutcome, JobError>> {
        let n = ctx.cache_safe.messages.len();
        Box::pin(async move {
            Ok(JobOutcome::new(
                format!("ran at {n}"),
                serde_json::Value::Null,
            ))
        })
    }
    fn flush(&self) -> Option<BoxFuture<'static, Result<JobOutcome, JobError>>> {
        let n = self.deferred.lock().unwrap().take()?;
        Some(Box::pin(async move {
            Ok(JobOutcome::new(
                format!("flushed at {n}"),
                serde_json::Value::Null,
            ))
        }))
    }
}

#[tokio::test]
async fn a_declined_turn_starts_nothing_and_flush_runs_what_was_deferred() {
    let job = Arc::new(EveryOther {
        turns: AtomicUsize::new(0),
        deferred: std::sync::Mutex::new(None),
    });
    let j = Arc::clone(&job);
    let mut s = session(
        Scenario::new().default_reply(Reply::text("OK.")),
        move |p| p.with_job(j),
    )
    .await;
    let finished = |s: &super::harness::Session| -> Vec<String> {
        s.events
            .all()
            .into_iter()
            .filter_map(|e| match e {
                BackgroundEvent::Finished { outcome, .. } => Some(outcome.summary),
                _ => None,
            })
            .collect()
    };
    let started = |s: &super::harness::Session| {
        s.events
            .all()
            .iter()
            .filter(|e| matches!(e, BackgroundEvent::Started { .. }))
            .count()
    };
    s.engine.submit("one", |_| {}).await;
    assert_eq!(s.pipeline.pending(), 0, "a declined turn spawns no task");
    s.engine.submit("two", |_| {}).await;
    s.engine.submit("three", |_| {}).await;
    s.pipeline.drain(Duration::from_secs(5)).await;
    assert_eq!(finished(&s), ["ran at 4"]);
    assert_eq!(started(&s), 1, "no event for the declined turns");

    // Flush (idle, exit): the deferred third turn runs; a second flush finds nothing.
    assert_eq!(s.pipeline.flush(), 1);
    assert_eq!(s.pipeline.flush(), 0);
    s.pipeline.drain(Duration::from_secs(5)).await;
    assert_eq!(finished(&s), ["ran at 4", "flushed at 6"]);
}
