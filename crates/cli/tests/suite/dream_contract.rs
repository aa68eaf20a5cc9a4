//! Issue 16's lock and rollback items through the real binary: sixteen `tine -p` sessions
//! ending at once make exactly one dream; a dream cancelled by SIGTERM rolls the lock back and
//! says so on a line of its own; a dream whose process is SIGKILLed leaves the lock's mtime at
//! the last consolidation, so the next session consolidates.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use nix::sys::signal::Signal;
use serde_json::json;
use tine_config::SessionId;
use tine_e2e::Project;
use tine_e2e::tine_mock_api::{MockServer, Reply, Rule, Scenario};
use tine_memory::{Acquire, ConsolidationLock, DREAM_MARKER, default_memory_dir};

use super::{mock, tine};

/// Generous bounds so a broken build fails instead of hanging; nothing asserts on durations.
const PATIENCE: Duration = Duration::from_secs(90);
const POLL: Duration = Duration::from_millis(25);

fn memory_dir(project: &Project) -> PathBuf {
    default_memory_dir(project.home(), project.cwd())
}

/// A consolidation two days ago, recorded as a dream records it.
fn consolidated_two_days_ago(mem: &Path) -> SystemTime {
    std::fs::create_dir_all(mem).unwrap();
    let when = SystemTime::now() - Duration::from_secs(48 * 3_600);
    match ConsolidationLock::try_acquire(mem, |_| true).unwrap() {
        Acquire::Acquired(lock) => lock.commit(when).unwrap(),
        other => panic!("{other:?}"),
    }
    when
}

fn lock_mtime(mem: &Path) -> SystemTime {
    std::fs::metadata(ConsolidationLock::path(mem))
        .unwrap()
        .modified()
        .unwrap()
}

/// Five earlier sessions of the project, touched after the last consolidation.
fn earlier_sessions(project: &Project) {
    let dir = project.transcripts_dir();
    std::fs::create_dir_all(&dir).unwrap();
    for _ in 0..5 {
        let id = SessionId::new_random();
        std::fs::write(
            dir.join(format!("{id}.jsonl")),
            "{\"type\":\"summary\",\"summary\":\"an earlier session\"}\n",
        )
        .unwrap();
    }
}

/// The first request of each dream: its last message is the dream's prompt.
fn dreams_started(server: &MockServer) -> usize {
    server
        .requests()
        .iter()
        .filter_map(|r| r.json())
        .filter(|b| {
            b["messages"]
                .as_array()
                .and_then(|m| m.last())
                .is_some_and(|last| last.to_string().contains(DREAM_MARKER))
        })
        .count()
}

/// A dream that looks around, then says it is done; every other request is answered at once.
fn quick_dream(hang_first: bool) -> Scenario {
    let mut scenario = Scenario::new();
    if hang_first {
        scenario = scenario.rule(
            Rule::new()
                .named("hanging-dream")
                .times(1)
                .last_user_contains(DREAM_MARKER)
                .reply(Reply::text("Looking at the memory directory...").chunk_delay_ms(120_000)),
        );
    }
    scenario
        .rule(Rule::new().last_user_contains(DREAM_MARKER).reply(
            Reply::text("Nothing to merge.").with_tool_use("Glob", json!({"pattern": "*.md"})),
        ))
        .rule(
            Rule::new()
                .tool_results(true)
                .reply(Reply::text("Consolidated: nothing to change.")),
        )
        .default_reply(Reply::text("OK."))
}

async fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while !done() {
        assert!(tokio::time::Instant::now() < deadline, "never: {what}");
        tokio::time::sleep(POLL).await;
    }
}

#[tokio::test]
async fn sixteen_sessions_ending_at_once_make_exactly_one_dream() {
    let server = mock(quick_dream(false)).await;
    let project = Project::new();
    let mem = memory_dir(&project);
    earlier_sessions(&project);
    for round in 0..2 {
        let before = consolidated_two_days_ago(&mem);
        let started = dreams_started(&server);
        let children: Vec<_> = (0..16)
            .map(|i| {
                tine(&project, &server)
                    .env_remove("TINE_DISABLE_AUTO_MEMORY")
                    .args(["-p", &format!("round {round}, session {i}")])
                    .spawn()
            })
            .collect();
        for child in children {
            let out = tokio::time::timeout(PATIENCE, child.wait_with_output())
                .await
                .expect("a session did not end")
                .unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        assert_eq!(
            dreams_started(&server) - started,
            1,
            "round {round}: exactly one of sixteen sessions consolidates"
        );
        assert!(lock_mtime(&mem) > before + Duration::from_secs(47 * 3_600));
    }
}

/// A `-p` session whose dream hangs on its first request, spawned; returns once the dream's
/// request is in.
async fn session_dreaming(project: &Project, server: &MockServer) -> tokio::process::Child {
    let child = tine(project, server)
        .env_remove("TINE_DISABLE_AUTO_MEMORY")
        .args(["-p", "anything new?"])
        .spawn();
    eventually("the dream's first request", || dreams_started(server) == 1).await;
    child
}

fn signal(child: &tokio::process::Child, signal: Signal) {
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id().unwrap()).unwrap());
    nix::sys::signal::kill(pid, signal).unwrap();
}

#[tokio::test]
async fn a_dream_cancelled_by_sigterm_rolls_the_lock_back_and_says_so() {
    let server = mock(quick_dream(true)).await;
    let project = Project::new();
    let mem = memory_dir(&project);
    earlier_sessions(&project);
    let before = consolidated_two_days_ago(&mem);

    let child = session_dreaming(&project, &server).await;
    // Mid-dream the lock is held and its mtime has not moved.
    assert!(matches!(
        ConsolidationLock::try_acquire(&mem, |_| true).unwrap(),
        Acquire::Held
    ));
    assert_eq!(lock_mtime(&mem), before);
    signal(&child, Signal::SIGTERM);
    let out = tokio::time::timeout(PATIENCE, child.wait_with_output())
        .await
        .expect("tine did not stop after SIGTERM")
        .unwrap();
    assert_eq!(out.status.code(), Some(143));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = stderr
        .lines()
        .find(|l| l.starts_with("tine: dream: "))
        .unwrap_or_else(|| panic!("no dream line in {stderr}"));
    assert!(line.contains("rolled back"), "{line}");
    // The signal stopped the dream at once: the run did not wait out the drain's grace.
    assert!(!stderr.contains("did not finish within"), "{stderr}");
    assert_eq!(lock_mtime(&mem), before, "rolled back");

    // The next session consolidates.
    let out = tine(&project, &server)
        .env_remove("TINE_DISABLE_AUTO_MEMORY")
        .args(["-p", "and now?"])
        .run()
        .await;
    out.assert_success();
    assert_eq!(dreams_started(&server), 2);
    assert!(out.stderr.contains("tine: dream: "), "{}", out.stderr);
    assert!(lock_mtime(&mem) > before + Duration::from_secs(47 * 3_600));
}

#[tokio::test]
async fn a_sigkilled_dream_does_not_lock_consolidation_out() {
    let server = mock(quick_dream(true)).await;
    let project = Project::new();
    let mem = memory_dir(&project);
    earlier_sessions(&project);
    let before = consolidated_two_days_ago(&mem);

    let mut child = session_dreaming(&project, &server).await;
    let body = std::fs::read_to_string(ConsolidationLock::path(&mem)).unwrap();
    assert_eq!(body.trim(), child.id().unwrap().to_string(), "its PID");
    signal(&child, Signal::SIGKILL);
    child.wait().await.unwrap();
    // Nothing could roll back: the mtime never moved, and the kernel released the lock.
    assert_eq!(lock_mtime(&mem), before);

    let out = tine(&project, &server)
        .env_remove("TINE_DISABLE_AUTO_MEMORY")
        .args(["-p", "and now?", "--output-format", "stream-json"])
        .run()
        .await;
    out.assert_success();
    let dream = out
        .json_lines()
        .into_iter()
        .find(|l| l["type"] == "system" && l["subtype"] == "dream")
        .unwrap_or_else(|| panic!("no dream line: {}", out.stdout));
    assert_eq!(dream["data"]["status"], "completed", "{dream}");
    assert_eq!(dreams_started(&server), 2);
    assert!(lock_mtime(&mem) > before + Duration::from_secs(47 * 3_600));
}
