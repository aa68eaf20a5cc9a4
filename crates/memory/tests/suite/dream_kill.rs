//! A dream that is killed from the UI, cancelled with the session, or fails rolls the lock
//! back, and the next eligible session consolidates; so does one after a process SIGKILLed
//! mid-dream (this test binary run again as the dreaming process).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use tine_api_client::{ClientConfig, Credentials, HttpClient, ModelClient, RetryPolicy};
use tine_config::SessionId;
use tine_fork_runtime::{BackgroundEvent, BackgroundJob, ParentContext, SessionLocation};
use tine_memory::{
    Acquire, ConsolidationLock, DREAM_JOB, DREAM_MARKER, DirSource, DreamCommand, DreamOptions,
    DreamStatus, MemoryDir, guard_memory_writes,
};
use tine_mock_api::{Fault, MockServer, Reply, Rule, Scenario};
use tine_query_loop::{RequestTemplate, system_prompt_blocks};
use tine_tools::ToolContext;
use tokio_util::sync::CancellationToken;

use super::dream_support::{Probe, consolidated_at, dream_job, lock_mtime, past_sessions};
use tine_test_support::eventually;

use super::harness::{Extracted, World, big_system_prompt, server, session_with, tool_setup};

const CHILD_HOME: &str = "TINE_DREAM_KILL_HOME";
const CHILD_CWD: &str = "TINE_DREAM_KILL_CWD";
const CHILD_MEM: &str = "TINE_DREAM_KILL_MEM";
const CHILD_URL: &str = "TINE_DREAM_KILL_URL";

/// The first dream request hangs mid-stream (so it can be killed); later ones finish at once.
fn hanging_then_quick() -> Scenario {
    Scenario::new()
        .rule(
            Rule::new()
                .named("hanging-dream")
                .times(1)
                .last_user_contains(DREAM_MARKER)
                .reply(Reply::text("Looking at the memory directory...").chunk_delay_ms(120_000)),
        )
        .rule(
            Rule::new()
                .named("quick-dream")
                .last_user_contains(DREAM_MARKER)
                .reply(Reply::text("Nothing to consolidate.")),
        )
        .default_reply(Reply::text("OK."))
}

fn dream_requests(server: &MockServer) -> usize {
    server
        .requests()
        .iter()
        .filter(|r| String::from_utf8_lossy(&r.body).contains(DREAM_MARKER))
        .count()
}

#[tokio::test]
async fn a_dream_killed_from_the_ui_rolls_back_and_the_next_session_consolidates() {
    let world = World::new();
    let server = server(hanging_then_quick()).await;
    let start = SystemTime::now();
    let prior = start - Duration::from_secs(48 * 3_600);
    consolidated_at(world.mem(), prior);
    past_sessions(&world, 5, start);
    let probe = Probe::at(start);
    let job = dream_job(&world, &probe);
    let s = {
        let jobs: Vec<Arc<dyn BackgroundJob>> = vec![job.clone()];
        let mut s = session_with(&world, &server, None, jobs, true).await;
        s.engine.submit("hello", |_| {}).await;
        s
    };
    eventually("the dream's request", || dream_requests(&server) == 1).await;
    let task = job.task().expect("a dream task");
    assert!(task.is_running());
    assert_eq!(task.state().sessions_reviewing, 5);
    assert_eq!(task.state().prior_mtime, Some(prior));
    // The lock is held (another session is refused) but not dated yet.
    assert!(matches!(
        ConsolidationLock::try_acquire(world.mem(), |_| true).unwrap(),
        Acquire::Held
    ));
    assert_eq!(lock_mtime(world.mem()), prior);

    assert!(!job.kill("dream-nope"));
    assert!(job.kill(&task.id()));
    s.wait().await;
    assert_eq!(task.state().status, DreamStatus::Killed);
    assert_eq!(lock_mtime(world.mem()), prior, "rolled back");
    let events = s.events.of(DREAM_JOB);
    match events.last() {
        Some(BackgroundEvent::Finished { outcome, .. }) => {
            assert_eq!(outcome.data()["status"], "killed", "{outcome:?}");
            assert!(outcome.summary.contains("rolled back"));
        }
        other => panic!("{other:?}"),
    }

    // The next eligible turn (after the scan throttle) consolidates.
    probe.advance(Duration::from_secs(11 * 60));
    let mut s = s;
    s.engine.submit("hello again", |_| {}).await;
    s.wait().await;
    assert_eq!(dream_requests(&server), 2);
    assert_eq!(lock_mtime(world.mem()), probe.now());
    let task = job.task().unwrap();
    assert!(matches!(task.state().status, DreamStatus::Completed { .. }));
}

#[tokio::test]
async fn a_cancelled_or_failed_dream_rolls_the_lock_back() {
    let world = World::new();
    let scenario = Scenario::new()
        .rule(
            Rule::new()
                .times(1)
                .last_user_contains(DREAM_MARKER)
                .reply(Reply::text("...").chunk_delay_ms(120_000)),
        )
        .rule(
            Rule::new()
                .last_user_contains(DREAM_MARKER)
                .fault(Fault::http(400)),
        )
        .default_reply(Reply::text("OK."));
    let server = server(scenario).await;
    let start = SystemTime::now();
    let prior = start - Duration::from_secs(30 * 3_600);
    consolidated_at(world.mem(), prior);
    past_sessions(&world, 6, start);
    let probe = Probe::at(start);
    let job = dream_job(&world, &probe);
    let jobs: Vec<Arc<dyn BackgroundJob>> = vec![job.clone()];
    let mut s = session_with(&world, &server, None, jobs, true).await;

    // Cancelled with the session (exit, Ctrl-C): the pipeline drops the dream.
    s.engine.submit("hello", |_| {}).await;
    eventually("the dream's request", || dream_requests(&server) == 1).await;
    s.pipeline.cancel_all();
    eventually("the cancellation", || {
        s.events
            .of(DREAM_JOB)
            .iter()
            .any(|e| matches!(e, BackgroundEvent::Cancelled { .. }))
    })
    .await;
    assert_eq!(lock_mtime(world.mem()), prior);
    eventually("the task to end", || !job.task().unwrap().is_running()).await;
    assert_eq!(job.task().unwrap().state().status, DreamStatus::Killed);

    // Failed (the API refuses): rolled back, reported as a failure.
    let mut s = session_with(
        &world,
        &server,
        None,
        vec![job.clone() as Arc<dyn BackgroundJob>],
        true,
    )
    .await;
    probe.advance(Duration::from_secs(11 * 60));
    s.engine.submit("hello", |_| {}).await;
    let report = s.pipeline.drain(Duration::from_secs(30)).await;
    assert_eq!(report.cancelled, 0);
    eventually("the failure event", || {
        s.events
            .of(DREAM_JOB)
            .iter()
            .any(|e| matches!(e, BackgroundEvent::Failed { .. }))
    })
    .await;
    assert_eq!(lock_mtime(world.mem()), prior);
    assert!(matches!(
        job.task().unwrap().state().status,
        DreamStatus::Failed { .. }
    ));
    s.engine.submit("bye", |_| {}).await;
}

#[tokio::test]
async fn a_sigkilled_dream_does_not_lock_consolidation_out() {
    let world = World::new();
    let server = server(hanging_then_quick()).await;
    let start = SystemTime::now();
    let prior = start - Duration::from_secs(48 * 3_600);
    consolidated_at(world.mem(), prior);
    past_sessions(&world, 5, start);

    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "suite::dream_kill::dreaming_process",
            "--ignored",
            "--test-threads=1",
            "--nocapture",
        ])
        .env(CHILD_HOME, &world.home)
        .env(CHILD_CWD, &world.cwd)
        .env(CHILD_MEM, world.mem())
        .env(CHILD_URL, server.base_url())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    eventually("the child's dream request", || dream_requests(&server) == 1).await;
    // Mid-dream: it holds the lock, its PID is in the body, the mtime has not moved.
    assert!(matches!(
        ConsolidationLock::try_acquire(world.mem(), |_| true).unwrap(),
        Acquire::Held
    ));
    let body = std::fs::read_to_string(ConsolidationLock::path(world.mem())).unwrap();
    assert_eq!(body.trim(), child.id().to_string());
    assert_eq!(lock_mtime(world.mem()), prior);

    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    assert_eq!(lock_mtime(world.mem()), prior);

    // The next session that ends consolidates.
    let probe = Probe::at(SystemTime::now());
    let job = dream_job(&world, &probe);
    let mut s = session_with(
        &world,
        &server,
        None,
        vec![job.clone() as Arc<dyn BackgroundJob>],
        true,
    )
    .await;
    s.engine.submit("hello", |_| {}).await;
    s.wait().await;
    assert_eq!(dream_requests(&server), 2);
    assert!(matches!(
        job.task().unwrap().state().status,
        DreamStatus::Completed { .. }
    ));
    assert_eq!(lock_mtime(world.mem()), probe.now());
    let body = std::fs::read_to_string(ConsolidationLock::path(world.mem())).unwrap();
    assert_eq!(body.trim(), std::process::id().to_string());
}

/// The child half of `a_sigkilled_dream_does_not_lock_consolidation_out`: `tine memory
/// dream`'s path (a minimal parent) against the parent's mock, which never finishes answering.
#[tokio::test]
#[ignore = "run as a child process by a_sigkilled_dream_does_not_lock_consolidation_out"]
async fn dreaming_process() {
    let var = |key: &str| PathBuf::from(std::env::var_os(key).expect(key));
    let (home, cwd, mem) = (var(CHILD_HOME), var(CHILD_CWD), var(CHILD_MEM));
    let url = std::env::var(CHILD_URL).unwrap();
    let client: Arc<dyn ModelClient> = Arc::new(
        HttpClient::new(
            ClientConfig::new(url, Credentials::api_key("test-key"))
                .with_retry(RetryPolicy::none()),
        )
        .unwrap(),
    );
    let (tools, defs) = tool_setup();
    let tools = guard_memory_writes(&tools, &mem).unwrap();
    let parent = Arc::new(ParentContext::new(
        client,
        tools.into(),
        ToolContext::new(&cwd),
        SessionLocation {
            home,
            cwd,
            session_id: SessionId::new_random(),
        },
    ));
    let template = RequestTemplate {
        model: "claude-sonnet-4-5".into(),
        system: Arc::new(system_prompt_blocks(&big_system_prompt())),
        tools: defs,
        thinking: None,
        skip_cache_write: false,
        replacements: None,
        effort: None,
    };
    let command = DreamCommand {
        dir: MemoryDir::new(mem, DirSource::Env),
        parent,
        template,
        options: DreamOptions::default(),
        permissions: None,
        cancel: CancellationToken::new(),
    };
    let result = tine_memory::dream_now(command, |_| {}).await;
    panic!("the dream was meant to hang until killed: {result:?}");
}
