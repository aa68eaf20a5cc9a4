use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::json;
use tine_config::SessionId;
use tine_query_loop::hooks::{HookFailure, stop_commands_from_settings};
use tine_query_loop::{
    HookError, PostSamplingHooks, PostSamplingSummary, StopHookCommand, StopHookInput,
    StopHookOutcome, run_stop_hooks,
};

fn input(cwd: &Path, active: bool) -> StopHookInput {
    StopHookInput::new(
        SessionId::parse("sess-1").unwrap(),
        PathBuf::from("/t/s.jsonl"),
        cwd.to_path_buf(),
        active,
    )
}

fn cmd(command: &str) -> StopHookCommand {
    StopHookCommand {
        command: command.into(),
        timeout: Duration::from_secs(30),
    }
}

#[test]
fn settings_shape_is_claude_code_compatible() {
    let settings = json!({"hooks": {
        "Stop": [
            {"matcher": "", "hooks": [
                {"type": "command", "command": "a.sh", "timeout": 5},
                {"type": "prompt", "prompt": "ignored"},
                {"type": "command", "command": "a.sh"}
            ]},
            {"hooks": [{"type": "command", "command": "b.sh"}]}
        ],
        "PreToolUse": [{"matcher": "Bash", "hooks": []}]
    }});
    let commands = stop_commands_from_settings(&settings).unwrap();
    assert_eq!(
        commands,
        vec![
            StopHookCommand {
                command: "a.sh".into(),
                timeout: Duration::from_secs(5)
            },
            StopHookCommand {
                command: "b.sh".into(),
                timeout: Duration::from_secs(60)
            },
        ]
    );
    assert!(stop_commands_from_settings(&json!({})).unwrap().is_empty());
    assert!(stop_commands_from_settings(&json!({"hooks": {"Stop": 3}})).is_err());
}

#[tokio::test]
async fn no_hooks_means_continue() {
    let dir = tempfile::tempdir().unwrap();
    let report = run_stop_hooks(&[], &input(dir.path(), false)).await;
    assert_eq!(report.outcome, StopHookOutcome::Continue);
}

#[tokio::test]
async fn hook_receives_the_input_json_on_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let seen = dir.path().join("seen.json");
    let hook = cmd(&format!("cat > '{}'", seen.display()));
    let report = run_stop_hooks(&[hook], &input(dir.path(), true)).await;
    assert_eq!(report.outcome, StopHookOutcome::Continue);
    assert!(report.failures.is_empty(), "{:?}", report.failures);
    let got: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&seen).unwrap()).unwrap();
    assert_eq!(
        got,
        json!({
            "session_id": "sess-1",
            "transcript_path": "/t/s.jsonl",
            "cwd": dir.path().to_str().unwrap(),
            "hook_event_name": "Stop",
            "stop_hook_active": true
        })
    );
}

#[tokio::test]
async fn exit_code_2_blocks_with_stderr_as_reason() {
    let dir = tempfile::tempdir().unwrap();
    let hook = cmd("echo 'tests still fail: run cargo test' >&2; exit 2");
    let report = run_stop_hooks(&[hook], &input(dir.path(), false)).await;
    assert_eq!(
        report.outcome,
        StopHookOutcome::Block {
            reason: "tests still fail: run cargo test".into()
        }
    );
}

#[tokio::test]
async fn json_decision_block_blocks_and_reasons_join_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let hooks = [
        cmd(r#"echo '{"decision": "block", "reason": "first"}'"#),
        cmd("true"),
        cmd(
            r#"sleep 0.1; echo '{"decision": "block", "reason": "second", "systemMessage": "note"}'"#,
        ),
    ];
    let report = run_stop_hooks(&hooks, &input(dir.path(), false)).await;
    assert_eq!(
        report.outcome,
        StopHookOutcome::Block {
            reason: "first\n\nsecond".into()
        }
    );
    assert_eq!(report.system_messages, ["note"]);
}

#[tokio::test]
async fn continue_false_halts_and_wins_over_block() {
    let dir = tempfile::tempdir().unwrap();
    let hooks = [
        cmd("echo no >&2; exit 2"),
        cmd(r#"echo '{"continue": false, "stopReason": "budget spent"}'"#),
    ];
    let report = run_stop_hooks(&hooks, &input(dir.path(), false)).await;
    assert_eq!(
        report.outcome,
        StopHookOutcome::Halt {
            reason: Some("budget spent".into())
        }
    );
}

#[tokio::test]
async fn other_nonzero_exit_is_a_non_blocking_failure() {
    let dir = tempfile::tempdir().unwrap();
    let hooks = [cmd("echo boom >&2; exit 1"), cmd("echo '{nope'")];
    let report = run_stop_hooks(&hooks, &input(dir.path(), false)).await;
    assert_eq!(report.outcome, StopHookOutcome::Continue);
    match report.failures.as_slice() {
        [
            HookFailure::Failed { stderr, .. },
            HookFailure::InvalidOutput { .. },
        ] => {
            assert_eq!(stderr, "boom");
        }
        other => panic!("unexpected failures {other:?}"),
    }
}

#[tokio::test]
async fn timeout_kills_the_hook_and_its_children() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("survived");
    // The background child would write the marker if it outlived the kill.
    let hook = StopHookCommand {
        command: format!("(sleep 2; touch '{}') & sleep 30", marker.display()),
        timeout: Duration::from_millis(300),
    };
    let report = run_stop_hooks(&[hook], &input(dir.path(), false)).await;
    assert_eq!(report.outcome, StopHookOutcome::Continue);
    assert!(matches!(
        report.failures.as_slice(),
        [HookFailure::Timeout { .. }]
    ));
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert!(
        !marker.exists(),
        "a child of the timed-out hook kept running"
    );
}

#[tokio::test]
async fn missing_shell_command_is_reported_not_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let report = run_stop_hooks(
        &[cmd("definitely-not-a-command-tine")],
        &input(dir.path(), false),
    )
    .await;
    assert_eq!(report.outcome, StopHookOutcome::Continue);
    assert_eq!(report.failures.len(), 1);
}

#[tokio::test]
async fn post_sampling_hooks_run_concurrently_and_contain_failures() {
    let hooks: PostSamplingHooks<u32> = PostSamplingHooks::new();
    let ran = Arc::new(AtomicUsize::new(0));
    // Two hooks that each wait for the other: only concurrent execution finishes.
    let barrier = Arc::new(tokio::sync::Barrier::new(2));
    for name in ["a", "b"] {
        let ran = Arc::clone(&ran);
        let barrier = Arc::clone(&barrier);
        hooks.register(name, move |n: u32| {
            let ran = Arc::clone(&ran);
            let barrier = Arc::clone(&barrier);
            async move {
                barrier.wait().await;
                ran.fetch_add(n as usize, Ordering::SeqCst);
                Ok::<(), HookError>(())
            }
        });
    }
    hooks.register("fails", |_| async {
        Err::<(), HookError>("disk full".into())
    });
    hooks.register("panics", |_| async { panic!("hook bug") });
    #[allow(unreachable_code)]
    hooks.register(
        "panics-before-await",
        |_| -> std::future::Ready<Result<(), HookError>> { panic!("sync bug") },
    );

    let summary = hooks.run(3).await;
    assert_eq!(
        summary,
        PostSamplingSummary {
            succeeded: 2,
            failed: 1,
            panicked: 2
        }
    );
    assert_eq!(ran.load(Ordering::SeqCst), 6);

    let shared = Arc::new(hooks);
    let again = shared.spawn(1).await.unwrap();
    assert_eq!(again.succeeded, 2);
}
