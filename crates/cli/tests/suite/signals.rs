//! Signals and tool processes: SIGTERM and SIGHUP end a run like Ctrl-C (the turn is cancelled,
//! the running command's whole process group is killed) with 128 + the signal's number, and no
//! tool process, foreground or `run_in_background`, outlives tine.

use std::path::Path;
use std::time::Duration;

use nix::sys::signal::Signal;
use serde_json::json;
use tine_e2e::Project;
use tine_e2e::tine_mock_api::{Reply, Rule, Scenario};

use super::{mock, tine};

/// Generous bounds so a broken build fails instead of hanging; nothing asserts on durations.
const PATIENCE: Duration = Duration::from_secs(60);
const POLL: Duration = Duration::from_millis(20);

/// The pid written to `path` once it is there (whole: a line ending in a newline).
async fn wait_for_pid(path: &Path) -> i32 {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        if let Ok(text) = std::fs::read_to_string(path)
            && text.ends_with('\n')
        {
            return text.trim().parse().unwrap();
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{} never appeared",
            path.display()
        );
        tokio::time::sleep(POLL).await;
    }
}

/// Processes of group `pgid` that are still running (zombies waiting to be reaped by whoever
/// inherited them do not count: they run nothing).
fn live_members(pgid: i32) -> Vec<i32> {
    let mut live = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // `pid (comm) state ppid pgrp ...`; comm may hold spaces and parentheses.
        let Some(rest) = stat.rsplit_once(')').map(|(_, rest)| rest) else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.get(2) == Some(&pgid.to_string().as_str()) && fields.first() != Some(&"Z") {
            live.push(pid);
        }
    }
    live
}

/// Waits until group `pgid` has no running process; panics naming the survivors otherwise.
async fn assert_group_ends(pgid: i32) {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        let live = live_members(pgid);
        if live.is_empty() {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "processes {live:?} of the tool's group {pgid} outlived tine"
        );
        tokio::time::sleep(POLL).await;
    }
}

/// A model that runs a long command which first writes its shell's pid (= its group id).
fn long_command_scenario(pid_file: &Path) -> Scenario {
    let command = format!("echo $$ > '{}'; sleep 300", pid_file.display());
    Scenario::new()
        .rule(
            Rule::new()
                .assistant_turns(0)
                .reply(Reply::tool_use("Bash", json!({"command": command}))),
        )
        .default_reply(Reply::text("Done."))
}

async fn a_signal_mid_command_kills_the_group_and_exits_with(signal: Signal, code: i32) {
    let project = Project::new();
    let pid_file = project.root().join("shell.pid");
    let server = mock(long_command_scenario(&pid_file)).await;
    let mut child = tine(&project, &server)
        .args(["-p", "wait a while", "--allowedTools", "Bash"])
        .spawn();
    let pgid = wait_for_pid(&pid_file).await;
    assert!(!live_members(pgid).is_empty(), "the command is running");

    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id().unwrap()).unwrap());
    nix::sys::signal::kill(pid, signal).unwrap();
    let status = tokio::time::timeout(PATIENCE, child.wait())
        .await
        .unwrap_or_else(|_| panic!("tine did not stop after {signal}"))
        .unwrap();
    assert_eq!(status.code(), Some(code), "{signal}: {status:?}");
    assert_group_ends(pgid).await;
    // The turn was cancelled, not finished: no request followed the tool call.
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn sigterm_mid_command_exits_143_and_kills_the_command() {
    a_signal_mid_command_kills_the_group_and_exits_with(Signal::SIGTERM, 143).await;
}

#[tokio::test]
async fn sighup_mid_command_exits_129_and_kills_the_command() {
    a_signal_mid_command_kills_the_group_and_exits_with(Signal::SIGHUP, 129).await;
}

#[tokio::test]
async fn a_background_shell_does_not_outlive_tine() {
    let project = Project::new();
    let pid_file = project.root().join("background.pid");
    let started = format!("echo $$ > '{}'; sleep 300", pid_file.display());
    // The second call waits for the pid file, so the background shell is surely running when
    // the turn ends.
    let wait = format!(
        "while [ ! -s '{}' ]; do sleep 0.05; done",
        pid_file.display()
    );
    let scenario = Scenario::new()
        .rule(Rule::new().assistant_turns(0).reply(Reply::tool_use(
            "Bash",
            json!({"command": started, "run_in_background": true}),
        )))
        .rule(
            Rule::new()
                .assistant_turns(1)
                .reply(Reply::tool_use("Bash", json!({"command": wait}))),
        )
        .default_reply(Reply::text("The server is up."));
    let server = mock(scenario).await;
    let out = tine(&project, &server)
        .args(["-p", "start a server", "--allowedTools", "Bash"])
        .run()
        .await;
    out.assert_success();
    assert_eq!(out.stdout, "The server is up.\n");
    let pgid = wait_for_pid(&pid_file).await;
    assert_group_ends(pgid).await;
}

#[tokio::test]
async fn sigterm_kills_background_shells_too() {
    let project = Project::new();
    let background_pid = project.root().join("background.pid");
    let foreground_pid = project.root().join("foreground.pid");
    let scenario = Scenario::new()
        .rule(Rule::new().assistant_turns(0).reply(Reply::tool_use(
            "Bash",
            json!({
                "command": format!("echo $$ > '{}'; sleep 300", background_pid.display()),
                "run_in_background": true,
            }),
        )))
        .rule(Rule::new().assistant_turns(1).reply(Reply::tool_use(
            "Bash",
            json!({"command": format!("echo $$ > '{}'; sleep 300", foreground_pid.display())}),
        )))
        .default_reply(Reply::text("Done."));
    let server = mock(scenario).await;
    let mut child = tine(&project, &server)
        .args(["-p", "start a server, then wait", "--allowedTools", "Bash"])
        .spawn();
    let background = wait_for_pid(&background_pid).await;
    let foreground = wait_for_pid(&foreground_pid).await;
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id().unwrap()).unwrap());
    nix::sys::signal::kill(pid, Signal::SIGTERM).unwrap();
    let status = tokio::time::timeout(PATIENCE, child.wait())
        .await
        .expect("tine did not stop after SIGTERM")
        .unwrap();
    assert_eq!(status.code(), Some(143));
    assert_group_ends(foreground).await;
    assert_group_ends(background).await;
}

#[tokio::test]
async fn a_process_a_command_left_running_does_not_outlive_tine() {
    let project = Project::new();
    let pid_file = project.root().join("left.pid");
    // `&` inside a foreground command: the shell exits, the sleep stays in its group.
    let command = format!(
        "sleep 300 >/dev/null 2>&1 & echo $$ > '{}'",
        pid_file.display()
    );
    let scenario = Scenario::new()
        .rule(
            Rule::new()
                .assistant_turns(0)
                .reply(Reply::tool_use("Bash", json!({"command": command}))),
        )
        .default_reply(Reply::text("Left it running."));
    let server = mock(scenario).await;
    let out = tine(&project, &server)
        .args(["-p", "start something", "--allowedTools", "Bash"])
        .run()
        .await;
    out.assert_success();
    let pgid = wait_for_pid(&pid_file).await;
    assert_group_ends(pgid).await;
}
