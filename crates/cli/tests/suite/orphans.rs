//! No process of tine outlives a `kill -9` of it: the shell of a running command, what the shell
//! put in the background, and a `run_in_background` shell all end within seconds (parent-death
//! signal and the session's watchdog); with the watchdog killed too, the next tine of the same
//! `TINE_HOME` reaps them at start. Each test sleeps for its own durations, and counts only the
//! processes of its own `TINE_HOME`, so parallel tests never see each other's.

use std::path::Path;
use std::time::Duration;

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::json;
use tine_e2e::Project;
use tine_e2e::tine_mock_api::{MockServer, Reply, Rule, Scenario};
use tokio::process::Child;

use super::{mock, tine};

/// Generous bounds so a broken build fails instead of hanging.
const PATIENCE: Duration = Duration::from_secs(60);
/// How long the processes may outlive tine's death.
const GRACE: Duration = Duration::from_secs(5);
const POLL: Duration = Duration::from_millis(20);

/// The running (not zombie) `sleep SECONDS` processes started under `home`, for each of
/// `seconds`: their pids.
fn sleeps(home: &Path, seconds: &[u32]) -> Vec<i32> {
    let home_entry = format!("TINE_HOME={}", home.display());
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let argv: Vec<&[u8]> = cmdline.split(|&b| b == 0).collect();
        let is_ours = argv.first().is_some_and(|a| a.ends_with(b"sleep"))
            && seconds
                .iter()
                .any(|s| argv.get(1) == Some(&s.to_string().as_bytes()));
        if !is_ours {
            continue;
        }
        let Ok(environ) = std::fs::read(entry.path().join("environ")) else {
            continue;
        };
        if !environ
            .split(|&b| b == 0)
            .any(|e| e == home_entry.as_bytes())
        {
            continue;
        }
        let running = std::fs::read_to_string(entry.path().join("stat"))
            .ok()
            .and_then(|stat| {
                let (_, rest) = stat.rsplit_once(')')?;
                rest.split_whitespace().next().map(|state| state != "Z")
            })
            .unwrap_or(false);
        if running {
            found.push(pid);
        }
    }
    found
}

/// Waits until all of `seconds` run under `home`.
async fn wait_for_sleeps(home: &Path, seconds: &[u32]) {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while sleeps(home, seconds).len() < seconds.len() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the command's sleeps {seconds:?} never all ran"
        );
        tokio::time::sleep(POLL).await;
    }
}

/// The sleeps still running after `GRACE` (polled: returns as soon as none is left).
async fn left_after_grace(home: &Path, seconds: &[u32]) -> Vec<i32> {
    let deadline = tokio::time::Instant::now() + GRACE;
    loop {
        let left = sleeps(home, seconds);
        if left.is_empty() || tokio::time::Instant::now() >= deadline {
            return left;
        }
        tokio::time::sleep(POLL).await;
    }
}

/// Kills `child` with SIGKILL and reaps it.
async fn kill_9(child: &mut Child) {
    let pid = Pid::from_raw(i32::try_from(child.id().unwrap()).unwrap());
    kill(pid, Signal::SIGKILL).unwrap();
    tokio::time::timeout(PATIENCE, child.wait())
        .await
        .expect("tine did not die")
        .unwrap();
}

/// `tine -p` whose model makes the Bash `calls`, one a turn, and the mock it talks to.
async fn start(project: &Project, calls: &[serde_json::Value]) -> (Child, MockServer) {
    let mut scenario = Scenario::new();
    for (turn, input) in calls.iter().enumerate() {
        scenario = scenario.rule(
            Rule::new()
                .assistant_turns(turn)
                .reply(Reply::tool_use("Bash", input.clone())),
        );
    }
    let server = mock(scenario.default_reply(Reply::text("Done."))).await;
    let child = tine(project, &server)
        .args(["-p", "run it", "--allowedTools", "Bash"])
        .spawn();
    (child, server)
}

#[tokio::test]
async fn sigkill_mid_command_leaves_no_process_of_it() {
    let project = Project::new();
    let seconds = [3303, 3304];
    let command = json!({"command": "sleep 3303 & sleep 3304"});
    let (mut child, _server) = start(&project, &[command]).await;
    wait_for_sleeps(project.home(), &seconds).await;

    kill_9(&mut child).await;
    let left = left_after_grace(project.home(), &seconds).await;
    assert_eq!(
        left,
        Vec::<i32>::new(),
        "processes left after SIGKILL of tine"
    );
}

#[tokio::test]
async fn sigkill_leaves_no_background_shell() {
    let project = Project::new();
    let seconds = [3305, 3306, 3307];
    let background = json!({"command": "sleep 3305 & sleep 3306", "run_in_background": true});
    // The foreground call keeps the turn going while the background shell runs.
    let foreground = json!({"command": "sleep 3307"});
    let (mut child, _server) = start(&project, &[background, foreground]).await;
    wait_for_sleeps(project.home(), &seconds).await;

    kill_9(&mut child).await;
    let left = left_after_grace(project.home(), &seconds).await;
    assert_eq!(
        left,
        Vec::<i32>::new(),
        "processes left after SIGKILL of tine"
    );
}

/// The pids of the watchdogs of session `tine_pid`.
fn watchdogs_of(tine_pid: u32) -> Vec<i32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let argv: Vec<&[u8]> = cmdline.split(|&b| b == 0).collect();
        if argv.get(1) == Some(&&b"__watchdog"[..])
            && argv.get(2) == Some(&tine_pid.to_string().as_bytes())
        {
            found.push(pid);
        }
    }
    found
}

#[tokio::test]
async fn the_next_start_reaps_what_a_killed_session_and_its_watchdog_left() {
    let project = Project::new();
    let seconds = [3308];
    // The shell forks the sleep and waits: the parent-death signal kills the shell only.
    let command = json!({"command": "sleep 3308 & wait"});
    let (mut child, _server) = start(&project, &[command]).await;
    wait_for_sleeps(project.home(), &seconds).await;
    let tine_pid = child.id().unwrap();
    let watchdogs = watchdogs_of(tine_pid);
    assert_eq!(watchdogs.len(), 1, "one watchdog for the session");
    kill(Pid::from_raw(watchdogs[0]), Signal::SIGKILL).unwrap();
    kill_9(&mut child).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        sleeps(project.home(), &seconds).len(),
        1,
        "with its watchdog killed too, the background sleep outlives the session"
    );
    let record = project.home().join("run").join(format!("{tine_pid}.pgids"));
    assert!(record.exists(), "the dead session's record is left");

    let server = mock(Scenario::new().default_reply(Reply::text("Hello."))).await;
    tine(&project, &server)
        .args(["-p", "hi"])
        .run()
        .await
        .assert_success();
    let left = left_after_grace(project.home(), &seconds).await;
    assert_eq!(left, Vec::<i32>::new(), "the next start reaped the session");
    assert!(!record.exists(), "and removed its record");
}
