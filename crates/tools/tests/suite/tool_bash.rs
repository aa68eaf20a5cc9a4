use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use tine_tools::BashTool;
use tine_tools::{BackgroundTasks, TaskStatus};
use tine_tools::{BashOutputTool, KillShellTool};
use tine_tools::{ProgressSink, Tool, ToolDisplay, ToolProgress};

use super::support::{context, run};

/// Whether a process with this pid still exists (zombies count as gone).
fn alive(pid: &str) -> bool {
    assert!(pid.parse::<u32>().is_ok(), "not a pid: {pid:?}");
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat.contains(") Z "),
        Err(_) => false,
    }
}

#[tokio::test]
async fn runs_a_command_and_merges_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(dir.path());
    let out = run(
        &BashTool,
        json!({"command": "echo out; echo err >&2"}),
        &ctx,
    )
    .await;
    assert!(!out.is_error, "{}", out.content);
    assert_eq!(out.content, "out\nerr");
}

#[tokio::test]
async fn nonzero_exit_is_an_error_with_the_code() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(dir.path());
    let out = run(&BashTool, json!({"command": "echo partial; exit 3"}), &ctx).await;
    assert!(out.is_error);
    assert_eq!(out.content, "partial\nExit code 3");
    assert!(matches!(
        out.display,
        ToolDisplay::Shell {
            exit_code: Some(3),
            ..
        }
    ));
}

#[tokio::test]
async fn working_directory_persists_between_calls() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    let ctx = context(dir.path());
    let out = run(&BashTool, json!({"command": "cd sub && echo moved"}), &ctx).await;
    assert!(!out.is_error, "{}", out.content);
    assert_eq!(ctx.cwd(), dir.path().canonicalize().unwrap().join("sub"));
    let out = run(&BashTool, json!({"command": "pwd"}), &ctx).await;
    assert_eq!(out.content, ctx.cwd().display().to_string());
    // A failing command after a cd still moves (the shell's state is what counts) ...
    run(&BashTool, json!({"command": "cd .. ; false"}), &ctx).await;
    assert_eq!(ctx.cwd(), dir.path().canonicalize().unwrap());
}

#[tokio::test]
async fn timeout_kills_the_whole_process_group() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(dir.path());
    let pid_file = dir.path().join("pid");
    // A grandchild in the background that would outlive a plain kill of the shell.
    let command = format!(
        "sleep 30 & echo $! > {}; echo started; wait",
        pid_file.display()
    );
    let out = run(&BashTool, json!({"command": command, "timeout": 500}), &ctx).await;
    assert!(out.is_error);
    assert!(out.content.starts_with("started\n"), "{}", out.content);
    assert!(out.content.contains("timed out"), "{}", out.content);
    assert!(matches!(
        out.display,
        ToolDisplay::Shell {
            timed_out: true,
            ..
        }
    ));
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    let pid = pid.trim();
    for _ in 0..50 {
        if !alive(pid) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the background sleep {pid} survived the timeout");
}

#[tokio::test]
async fn cancellation_kills_the_command() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(dir.path());
    let pid_file = dir.path().join("pid");
    let command = format!("echo $$ > {}; sleep 30", pid_file.display());
    let token = ctx.cancellation().clone();
    let watcher_file = pid_file.clone();
    tokio::spawn(async move {
        while !std::fs::read_to_string(&watcher_file).is_ok_and(|pid| pid.ends_with('\n')) {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        token.cancel();
    });
    let out = run(&BashTool, json!({"command": command}), &ctx).await;
    assert!(out.is_error);
    assert!(out.content.contains("cancelled"), "{}", out.content);
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    assert!(!alive(pid.trim()));
}

#[tokio::test]
async fn long_output_is_truncated_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(dir.path());
    let out = run(&BashTool, json!({"command": "seq 1 100000"}), &ctx).await;
    assert!(!out.is_error);
    assert!(out.content.len() < 31_000, "{}", out.content.len());
    assert!(out.content.starts_with("1\n2\n3\n"));
    assert!(out.content.ends_with("99999\n100000"));
    assert!(out.content.contains("[output truncated:"), "no note");
    assert!(matches!(
        out.display,
        ToolDisplay::Shell {
            truncated: true,
            ..
        }
    ));
}

#[derive(Default)]
struct Collect(Mutex<Vec<ToolProgress>>);

impl ProgressSink for Collect {
    fn report(&self, progress: ToolProgress) {
        self.0.lock().unwrap().push(progress);
    }
}

#[tokio::test]
async fn progress_reports_lines_while_running() {
    let dir = tempfile::tempdir().unwrap();
    let sink = Arc::new(Collect::default());
    let ctx = context(dir.path()).with_progress(sink.clone());
    run(&BashTool, json!({"command": "seq 1 5; sleep 1.5"}), &ctx).await;
    let reports = sink.0.lock().unwrap().clone();
    assert!(!reports.is_empty());
    assert_eq!(reports[0].lines, 5);
    assert_eq!(
        BashTool.render_progress(&reports[0]).split(", ").nth(1),
        Some("5 lines")
    );
}

#[tokio::test]
async fn background_task_output_is_read_later_and_can_be_killed() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(dir.path());
    let out = run(
        &BashTool,
        json!({"command": "echo one; echo two", "run_in_background": true}),
        &ctx,
    )
    .await;
    assert!(!out.is_error, "{}", out.content);
    let ToolDisplay::Shell {
        background_task: Some(id),
        ..
    } = out.display
    else {
        panic!("no task id");
    };
    assert_eq!(
        ctx.ext_or_default::<BackgroundTasks>().wait(&id).await,
        Some(TaskStatus::Exited(Some(0)))
    );
    let read = run(&BashOutputTool, json!({"bash_id": id}), &ctx).await;
    assert!(
        read.content.contains("<status>exited with code 0</status>"),
        "{}",
        read.content
    );
    assert!(read.content.contains("one\ntwo"), "{}", read.content);
    // Only new output on the next read.
    let again = run(&BashOutputTool, json!({"bash_id": id}), &ctx).await;
    assert!(!again.content.contains("one"), "{}", again.content);

    let out = run(
        &BashTool,
        json!({"command": "sleep 30", "run_in_background": true}),
        &ctx,
    )
    .await;
    let ToolDisplay::Shell {
        background_task: Some(id),
        ..
    } = out.display
    else {
        panic!("no task id");
    };
    let killed = run(&KillShellTool, json!({"shell_id": id}), &ctx).await;
    assert!(!killed.is_error, "{}", killed.content);
    assert_eq!(
        ctx.ext_or_default::<BackgroundTasks>().status(&id),
        Some(TaskStatus::Killed)
    );

    let unknown = run(&BashOutputTool, json!({"bash_id": "bash_99"}), &ctx).await;
    assert!(unknown.is_error);
    assert!(
        unknown.content.contains("known ids: bash_1, bash_2"),
        "{}",
        unknown.content
    );
}

#[tokio::test]
async fn timeout_above_the_maximum_is_clamped_not_refused() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(dir.path());
    let out = run(
        &BashTool,
        json!({"command": "true", "timeout": 9_000_000}),
        &ctx,
    )
    .await;
    assert!(!out.is_error, "{}", out.content);
}

#[test]
fn declarations() {
    let dir = std::env::temp_dir();
    let ctx = tine_tools::ToolContext::new(dir);
    assert!(BashTool.is_destructive(&json!({"command": "rm -rf build"})));
    assert!(!BashTool.is_destructive(&json!({"command": "ls"})));
    assert_eq!(
        BashTool.permission_target(&json!({"command": "ls"}), &ctx),
        tine_permissions::PermissionTarget::Bash {
            command: "ls".into(),
            cwd: ctx.cwd(),
        }
    );
    assert!(!BashTool.is_read_only(&json!({"command": "rm x"})));
}

#[tokio::test]
async fn a_process_left_in_the_background_does_not_hold_the_call() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(dir.path());
    let pid_file = dir.path().join("pid");
    let command = format!("sleep 30 & echo $! > {}; echo hi", pid_file.display());
    let out = run(
        &BashTool,
        json!({"command": command, "timeout": 20000}),
        &ctx,
    )
    .await;
    assert!(!out.is_error, "{}", out.content);
    assert_eq!(out.content, "hi");
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    // Clean up the sleeper (it is in the command's process group).
    let _ = std::process::Command::new("kill").arg(pid.trim()).status();
}

#[tokio::test]
async fn dropping_the_registry_kills_running_tasks() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    {
        let ctx = context(dir.path());
        let command = format!("echo $$ > {}; sleep 30", pid_file.display());
        let out = run(
            &BashTool,
            json!({"command": command, "run_in_background": true}),
            &ctx,
        )
        .await;
        assert!(!out.is_error, "{}", out.content);
        for _ in 0..200 {
            if std::fs::read_to_string(&pid_file).is_ok_and(|pid| pid.ends_with('\n')) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    for _ in 0..100 {
        if !alive(pid.trim()) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("background task {} survived its registry", pid.trim());
}
