//! The dream's gates, cheapest first, on a clock the test moves: a failing time gate costs one
//! `stat` and no directory scan; the session scan runs at most every 10 minutes; the current
//! session does not count; and once all pass the dream runs and dates the lock.

use std::sync::Arc;
use std::time::Duration;

use tine_fork_runtime::BackgroundJob;
use tine_memory::{
    DREAM_MARKER, DreamIo, DreamJob, DreamOptions, GateOutcome, ScanThrottle,
    recorded_consolidation,
};
use tine_mock_api::{Reply, Rule, Scenario};

use super::dream_support::{
    Probe, consolidated_at, dream_job, lock_mtime, past_sessions, transcripts,
};
use super::harness::{World, server, session_with};

fn quick_dream() -> Scenario {
    Scenario::new()
        .rule(
            Rule::new()
                .last_user_contains(DREAM_MARKER)
                .reply(Reply::text("Nothing to consolidate.")),
        )
        .default_reply(Reply::text("OK."))
}

const HOUR: Duration = Duration::from_secs(3_600);

#[tokio::test]
async fn gates_run_cheapest_first_and_a_failing_time_gate_costs_one_stat() {
    let world = World::new();
    let server = server(quick_dream()).await;
    let start = std::time::SystemTime::now();
    let probe = Probe::at(start);
    // Consolidated an hour ago.
    consolidated_at(world.mem(), start - HOUR);
    let job = dream_job(&world, &probe);
    let mut s = session_with(&world, &server, None, vec![], true).await;
    s.engine.submit("hello", |_| {}).await;
    let ctx = s.job_context();

    // 1 h since the last consolidation: one stat, no scan, no dream.
    assert!(!job.should_run(&ctx));
    assert_eq!(probe.counts(), (1, 0));
    assert!(!job.should_run(&ctx));
    assert_eq!(probe.counts(), (2, 0));

    // 25 h: the time gate passes, the scan runs, and finds too few sessions (the current
    // one, whose transcript is there, does not count).
    probe.advance(24 * HOUR);
    past_sessions(&world, 2, start);
    assert!(
        transcripts(&world)
            .join(format!("{}.jsonl", ctx.parent.session.session_id))
            .exists()
    );
    match job.gate(&ctx).unwrap() {
        GateOutcome::TooFewSessions {
            found: 2,
            needed: 5,
        } => {}
        other => panic!("{other:?}"),
    }
    assert_eq!(probe.counts(), (3, 1));

    // Within 10 minutes the scan is not repeated, even with enough sessions now.
    past_sessions(&world, 3, start);
    probe.advance(Duration::from_secs(9 * 60));
    assert!(!job.should_run(&ctx));
    assert_eq!(probe.counts(), (4, 1));

    // Sessions older than the last consolidation and files that are not transcripts do
    // not count.
    past_sessions(&world, 4, start - 2 * HOUR);
    std::fs::write(transcripts(&world).join("notes.txt"), "x").unwrap();

    // After 10 minutes: 5 sessions, the lock is taken, the dream runs.
    probe.advance(Duration::from_secs(60));
    assert!(job.should_run(&ctx));
    assert_eq!(probe.counts(), (5, 2));
    let outcome = job.run(ctx.clone()).await.unwrap();
    assert_eq!(outcome.data()["status"], "completed", "{outcome:?}");
    assert_eq!(outcome.data()["sessions_reviewed"], 5);
    assert_eq!(outcome.summary, "nothing to improve");
    assert_eq!(lock_mtime(world.mem()), probe.now());
    let dreams: Vec<_> = server
        .requests()
        .into_iter()
        .filter(|r| String::from_utf8_lossy(&r.body).contains(DREAM_MARKER))
        .collect();
    assert_eq!(dreams.len(), 1);
    let body = String::from_utf8_lossy(&dreams[0].body);
    for id in outcome.data()["sessions"].as_array().unwrap() {
        assert!(
            body.contains(id.as_str().unwrap()),
            "{id} named in the prompt"
        );
    }
    let prompt = &body[body.find(DREAM_MARKER).unwrap()..];
    assert!(!prompt.contains(ctx.parent.session.session_id.as_str()));

    // Just consolidated: back to one stat per turn.
    let (stats, scans) = probe.counts();
    probe.advance(HOUR);
    assert!(!job.should_run(&ctx));
    assert_eq!(probe.counts(), (stats + 1, scans));
}

#[tokio::test]
async fn disabled_means_no_io_at_all_and_settings_tune_the_gates() {
    let world = World::new();
    let server = server(quick_dream()).await;
    let probe = Probe::at(std::time::SystemTime::now());
    let off = DreamJob::with_io(
        world.memory.clone(),
        DreamOptions {
            enabled: false,
            ..DreamOptions::default()
        },
        Arc::clone(&probe) as Arc<dyn DreamIo>,
        ScanThrottle::new(),
    )
    .unwrap();
    let mut s = session_with(&world, &server, None, vec![], true).await;
    s.engine.submit("hello", |_| {}).await;
    let ctx = s.job_context();
    assert!(!off.should_run(&ctx));
    assert_eq!(probe.counts(), (0, 0));

    // Never consolidated (no lock file) and min sessions 1: the first gate pass dreams.
    let eager = DreamJob::with_io(
        world.memory.clone(),
        DreamOptions {
            min_sessions: 1,
            min_hours: 0.5,
            ..DreamOptions::default()
        },
        Arc::clone(&probe) as Arc<dyn DreamIo>,
        ScanThrottle::new(),
    )
    .unwrap();
    past_sessions(&world, 1, probe.now());
    assert!(eager.should_run(&ctx));
    // While it holds the lock, another session's job is refused at the lock gate.
    let relaxed = DreamOptions {
        min_sessions: 0,
        ..DreamOptions::default()
    };
    let other_relaxed = DreamJob::with_io(
        world.memory.clone(),
        relaxed,
        Arc::clone(&probe) as Arc<dyn DreamIo>,
        ScanThrottle::new(),
    )
    .unwrap();
    assert!(matches!(
        other_relaxed.gate(&ctx).unwrap(),
        GateOutcome::Locked
    ));
    let outcome = eager.run(ctx.clone()).await.unwrap();
    assert_eq!(outcome.data()["status"], "completed");
    let meta = std::fs::metadata(world.mem().join(".consolidate-lock")).unwrap();
    assert_eq!(
        recorded_consolidation(meta.len(), meta.modified().unwrap()),
        Some(probe.now())
    );
    // The eager job is due again after its 0.5 h; the other keeps its 24 h.
    probe.advance(Duration::from_secs(31 * 60));
    assert!(matches!(
        other_relaxed.gate(&ctx).unwrap(),
        GateOutcome::TooSoon { .. }
    ));
    past_sessions(&world, 1, probe.now());
    assert!(eager.should_run(&ctx));
}
