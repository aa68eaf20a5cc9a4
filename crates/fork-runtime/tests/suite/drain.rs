//! Draining at exit really stops what it gives up on: a job honouring its token is cancelled,
//! one ignoring it is aborted (its future dropped before `drain` returns), and an aborted job's
//! fork stops its tools (a Bash command's processes are killed, not left running).

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::json;
use tine_api_client::{ContentBlock, Message};
use tine_fork_runtime::{
    BackgroundJob, DrainReport, ForkParams, JobContext, JobError, JobOutcome, run_forked_agent,
};
use tine_mock_api::{Reply, Rule, Scenario};
use tine_query_loop::AllowAll;

use tine_test_support::eventually;

use super::harness::session;

/// Sets its flag when dropped: proof that a job's future is gone.
struct DropFlag(Arc<AtomicBool>);
impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// Never looks at its token.
struct Stubborn {
    dropped: Arc<AtomicBool>,
}
impl BackgroundJob for Stubborn {
    fn name(&self) -> &str {
        "stubborn"
    }
    fn run(&self, _ctx: JobContext) -> BoxFuture<'static, Result<JobOutcome, JobError>> {
        let flag = DropFlag(Arc::clone(&self.dropped));
        Box::pin(async move {
            let _flag = flag;
            loop {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
    }
}

/// Stops when its token is cancelled, and says so.
struct Polite {
    honoured: Arc<AtomicBool>,
}
impl BackgroundJob for Polite {
    fn name(&self) -> &str {
        "polite"
    }
    fn run(&self, ctx: JobContext) -> BoxFuture<'static, Result<JobOutcome, JobError>> {
        let honoured = Arc::clone(&self.honoured);
        Box::pin(async move {
            ctx.cancel.cancelled().await;
            honoured.store(true, Ordering::SeqCst);
            Err::<JobOutcome, JobError>("cancelled".into())
        })
    }
}

#[tokio::test]
async fn a_job_ignoring_cancellation_is_aborted_and_one_honouring_it_is_cancelled() {
    let dropped = Arc::new(AtomicBool::new(false));
    let honoured = Arc::new(AtomicBool::new(false));
    let (d, h) = (Arc::clone(&dropped), Arc::clone(&honoured));
    let mut s = session(Scenario::new().default_reply(Reply::text("OK.")), |p| {
        p.with_job(Arc::new(Stubborn { dropped: d }))
            .with_job(Arc::new(Polite { honoured: h }))
    })
    .await;
    s.engine.submit("go", |_| {}).await;
    assert_eq!(s.pipeline.pending(), 2);

    let report = s.pipeline.drain(Duration::from_millis(50)).await;
    assert_eq!(
        report,
        DrainReport {
            finished: 0,
            cancelled: 2,
            aborted: 1
        }
    );
    assert!(
        dropped.load(Ordering::SeqCst),
        "the stubborn job's future is gone when drain returns"
    );
    assert!(
        honoured.load(Ordering::SeqCst),
        "the polite job saw its token"
    );
    assert_eq!(s.pipeline.pending(), 0);
    let cancelled = s.events.cancelled();
    assert_eq!(cancelled.len(), 2, "{cancelled:?}");
    assert!(cancelled.contains(&"stubborn".to_owned()));
    assert!(cancelled.contains(&"polite".to_owned()));
}

#[tokio::test]
async fn cancel_all_aborts_a_job_that_ignores_its_token() {
    let dropped = Arc::new(AtomicBool::new(false));
    let d = Arc::clone(&dropped);
    let mut s = session(Scenario::new().default_reply(Reply::text("OK.")), |p| {
        p.with_job(Arc::new(Stubborn { dropped: d }))
    })
    .await;
    s.engine.submit("go", |_| {}).await;
    s.pipeline.cancel_all();
    eventually("the job to be dropped", || s.pipeline.pending() == 0).await;
    assert!(
        dropped.load(Ordering::SeqCst),
        "the job's future was dropped"
    );
    assert_eq!(s.events.cancelled(), ["stubborn"]);
}

/// Runs a fork (whose model starts a long Bash command) and ignores its token, as a job
/// awaiting a fork does.
struct Forking;
impl BackgroundJob for Forking {
    fn name(&self) -> &str {
        "forking"
    }
    fn run(&self, ctx: JobContext) -> BoxFuture<'static, Result<JobOutcome, JobError>> {
        Box::pin(async move {
            let prompt = vec![Message::user(vec![ContentBlock::text("<bash-probe> go")])];
            let fork = ForkParams::new(ctx.cache_safe, prompt, Arc::new(AllowAll), "forking");
            let result = run_forked_agent(&ctx.parent, fork).await?;
            Ok(JobOutcome::new(
                format!("{} requests", result.requests),
                serde_json::Value::Null,
            ))
        })
    }
}

/// Whether process `pid` still runs (a zombie has ended).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let state = stat.rsplit_once(')')?.1.trim_start().chars().next()?;
            Some(state != 'Z' && state != 'X')
        })
        .unwrap_or(false)
}

#[cfg(unix)]
#[tokio::test]
async fn an_aborted_jobs_fork_kills_its_running_command() {
    let scenario = Scenario::new()
        .rule(
            Rule::new()
                .marker("<bash-probe>")
                .tool_results(false)
                .reply(Reply::text("Running it.").with_tool_use(
                    "Bash",
                    json!({"command": "echo $$ > pid.txt && exec sleep 60", "timeout": 120000}),
                )),
        )
        .default_reply(Reply::text("OK."));
    let mut s = session(scenario, |p| p.with_job(Arc::new(Forking))).await;
    s.engine.submit("go", |_| {}).await;
    let pid_file = s.project.cwd().join("pid.txt");
    let read_pid = |path: &Path| -> Option<u32> {
        std::fs::read_to_string(path)
            .ok()
            .and_then(|t| t.trim().parse().ok())
    };
    eventually("the fork's command to start", || {
        read_pid(&pid_file).is_some()
    })
    .await;
    let pid = read_pid(&pid_file).unwrap();
    assert!(alive(pid));

    let report = s.pipeline.drain(Duration::from_millis(10)).await;
    assert_eq!(report.cancelled, 1);
    assert_eq!(report.aborted, 1, "the job ignores its token");
    eventually("the fork's command to be killed", || !alive(pid)).await;
}
