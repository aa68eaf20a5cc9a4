//! The user's command hooks through [`Hooks`], the one runner every event goes through: what
//! a hook is told on stdin, how its exit code and JSON are read (Stop's verdicts, the
//! compaction events' context), timeouts, and the post-sampling registry.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Map, Value, json};
use tine_config::SessionId;
use tine_config::settings::{LoadedSettings, SettingsError, SettingsSource, parse_layer};
use tine_query_loop::hooks::{
    DEFAULT_HOOK_TIMEOUT, HookCommand, HookConfig, HookEvent, HookRunFailure, Hooks, Matcher,
};
use tine_query_loop::{
    CompactTrigger, HookError, PostSamplingHooks, PostSamplingSummary, StopHookOutcome,
};

/// The hooks of one project settings text, and what could not be understood.
fn from_settings(text: &str) -> (HookConfig, Vec<SettingsError>) {
    let mut errors = Vec::new();
    let layer = parse_layer(
        SettingsSource::Project,
        Some(Path::new("/p/.tine/settings.json")),
        PathBuf::from("/p"),
        text,
        &mut errors,
    );
    let loaded = LoadedSettings {
        layers: layer.into_iter().collect(),
        errors,
    };
    let (config, mut errors) = HookConfig::from_settings(&loaded);
    errors.extend(loaded.errors);
    (config, errors)
}

fn hooks_in(cwd: &Path, config: HookConfig) -> Hooks {
    Hooks::new(
        config,
        SessionId::parse("sess-1").unwrap(),
        PathBuf::from("/t/s.jsonl"),
        cwd.to_path_buf(),
    )
}

fn command(event: HookEvent, matcher: &str, command: &str, timeout: Duration) -> HookCommand {
    HookCommand {
        event,
        matcher: Matcher::parse(matcher).unwrap(),
        matcher_text: matcher.to_owned(),
        command: command.to_owned(),
        timeout,
        origin: String::new(),
        env: Vec::new(),
    }
}

/// Stop hooks running `commands` in `cwd`, each with a 30 s timeout.
fn stop_hooks(cwd: &Path, commands: &[&str]) -> Hooks {
    let commands = commands
        .iter()
        .map(|c| command(HookEvent::Stop, "", c, Duration::from_secs(30)))
        .collect();
    hooks_in(cwd, HookConfig::from_commands(commands))
}

/// What the Stop hooks said, failures and system messages included.
async fn run_stop(hooks: &Hooks) -> tine_query_loop::hooks::HookOutcome {
    hooks.run(HookEvent::Stop, None, Map::new()).await
}

#[test]
fn stop_settings_in_claude_code_shape_are_read_in_order_once() {
    let (config, errors) = from_settings(
        r#"{"hooks": {
            "Stop": [
                {"matcher": "", "hooks": [
                    {"type": "command", "command": "a.sh", "timeout": 5},
                    {"type": "command", "command": "a.sh", "timeout": 5}
                ]},
                {"hooks": [{"type": "command", "command": "b.sh"}]}
            ],
            "PreToolUse": [{"matcher": "Bash", "hooks": []}]
        }}"#,
    );
    assert!(errors.is_empty(), "{errors:?}");
    let stop: Vec<(&str, Duration)> = config
        .matching(HookEvent::Stop, None)
        .into_iter()
        .map(|c| (c.command.as_str(), c.timeout))
        .collect();
    assert_eq!(
        stop,
        [
            ("a.sh", Duration::from_secs(5)),
            ("b.sh", DEFAULT_HOOK_TIMEOUT)
        ]
    );
    assert!(from_settings("{}").0.is_empty());
    let (_, errors) = from_settings(r#"{"hooks": {"Stop": 3}}"#);
    assert!(errors.iter().any(SettingsError::is_fatal), "{errors:?}");
}

#[tokio::test]
async fn no_hooks_means_continue() {
    let dir = tempfile::tempdir().unwrap();
    let hooks = stop_hooks(dir.path(), &[]);
    assert_eq!(hooks.stop(false).await, StopHookOutcome::Continue);
}

#[tokio::test]
async fn hook_receives_the_input_json_on_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let seen = dir.path().join("seen.json");
    let hooks = stop_hooks(dir.path(), &[&format!("cat > '{}'", seen.display())]);
    assert_eq!(hooks.stop(true).await, StopHookOutcome::Continue);
    let got: Value = serde_json::from_str(&std::fs::read_to_string(&seen).unwrap()).unwrap();
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
    let hooks = stop_hooks(
        dir.path(),
        &["echo 'tests still fail: run cargo test' >&2; exit 2"],
    );
    assert_eq!(
        hooks.stop(false).await,
        StopHookOutcome::Block {
            reason: "tests still fail: run cargo test".into()
        }
    );
}

#[tokio::test]
async fn json_decision_block_blocks_and_reasons_join_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let told = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&told);
    let hooks = stop_hooks(
        dir.path(),
        &[
            r#"echo '{"decision": "block", "reason": "first"}'"#,
            "true",
            r#"sleep 0.1; echo '{"decision": "block", "reason": "second", "systemMessage": "note"}'"#,
        ],
    )
    .with_notifier(Arc::new(move |event, message| {
        sink.lock().unwrap().push((event, message.to_owned()));
    }));
    assert_eq!(
        hooks.stop(false).await,
        StopHookOutcome::Block {
            reason: "first\n\nsecond".into()
        }
    );
    assert_eq!(
        *told.lock().unwrap(),
        [(HookEvent::Stop, "Stop hook: note".to_owned())]
    );
}

#[tokio::test]
async fn continue_false_halts_and_wins_over_block() {
    let dir = tempfile::tempdir().unwrap();
    let hooks = stop_hooks(
        dir.path(),
        &[
            "echo no >&2; exit 2",
            r#"echo '{"continue": false, "stopReason": "budget spent"}'"#,
        ],
    );
    assert_eq!(
        hooks.stop(false).await,
        StopHookOutcome::Halt {
            reason: Some("budget spent".into())
        }
    );
}

#[tokio::test]
async fn other_nonzero_exit_is_a_non_blocking_failure() {
    let dir = tempfile::tempdir().unwrap();
    let hooks = stop_hooks(dir.path(), &["echo boom >&2; exit 1", "echo '{nope'"]);
    assert_eq!(hooks.stop(false).await, StopHookOutcome::Continue);
    let outcome = run_stop(&hooks).await;
    match outcome.failures.as_slice() {
        [
            HookRunFailure::Failed { stderr, .. },
            HookRunFailure::InvalidOutput { .. },
        ] => assert_eq!(stderr, "boom"),
        other => panic!("unexpected failures {other:?}"),
    }
}

#[tokio::test]
async fn timeout_kills_the_hook_and_its_children() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("survived");
    // The background child would write the marker if it outlived the kill.
    let hooks = hooks_in(
        dir.path(),
        HookConfig::from_commands(vec![command(
            HookEvent::Stop,
            "",
            &format!("(sleep 2; touch '{}') & sleep 30", marker.display()),
            Duration::from_millis(300),
        )]),
    );
    let outcome = run_stop(&hooks).await;
    assert!(outcome.blocks.is_empty() && outcome.stop.is_none());
    assert!(matches!(
        outcome.failures.as_slice(),
        [HookRunFailure::Timeout { .. }]
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
    let hooks = stop_hooks(dir.path(), &["definitely-not-a-command-tine"]);
    assert_eq!(hooks.stop(false).await, StopHookOutcome::Continue);
    assert_eq!(run_stop(&hooks).await.failures.len(), 1);
}

#[tokio::test]
async fn compaction_hooks_get_the_trigger_and_return_what_they_print() {
    let dir = tempfile::tempdir().unwrap();
    let (config, errors) = from_settings(
        r#"{"hooks": {
            "PreCompact": [{"hooks": [{"type": "command", "command": "cat > pre.json; echo ' keep the ledger '"}]}],
            "PostCompact": [
                {"matcher": "manual", "hooks": [{"type": "command", "command": "echo after"}]},
                {"matcher": "auto", "hooks": [{"type": "command", "command": "cat > post.json"}]}
            ]
        }}"#,
    );
    assert!(errors.is_empty(), "{errors:?}");
    let hooks = hooks_in(dir.path(), config);
    // A reactive compaction ("prompt is too long") is `auto` to hooks, as in Claude Code.
    let kept = hooks
        .pre_compact(CompactTrigger::Reactive, Some("focus"))
        .await;
    assert_eq!(kept, ["keep the ledger"]);
    let input: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("pre.json")).unwrap()).unwrap();
    assert_eq!(input["hook_event_name"], "PreCompact");
    assert_eq!(input["trigger"], "auto");
    assert_eq!(input["custom_instructions"], "focus");
    assert_eq!(input["session_id"], "sess-1");

    assert!(
        hooks
            .post_compact(CompactTrigger::Auto, "the summary")
            .await
            .is_empty()
    );
    let input: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("post.json")).unwrap()).unwrap();
    assert_eq!(input["hook_event_name"], "PostCompact");
    assert_eq!(input["compact_summary"], "the summary");
    assert_eq!(
        hooks
            .post_compact(CompactTrigger::Manual, "the summary")
            .await,
        ["after"]
    );
    // Without a focus, custom_instructions is empty.
    hooks.pre_compact(CompactTrigger::Manual, None).await;
    let input: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("pre.json")).unwrap()).unwrap();
    assert_eq!(input["custom_instructions"], "");
}

#[tokio::test]
async fn compaction_hook_output_is_text_or_additional_context() {
    let dir = tempfile::tempdir().unwrap();
    let pre = |c: &str| command(HookEvent::PreCompact, "", c, Duration::from_secs(30));
    let hooks = hooks_in(
        dir.path(),
        HookConfig::from_commands(vec![
            pre("echo ' keep the schema '"),
            pre(r#"echo '{"hookSpecificOutput": {"additionalContext": "ctx"}}'"#),
            pre(r#"echo '{"continue": true}'"#),
            pre("true"),
        ]),
    );
    assert_eq!(
        hooks.pre_compact(CompactTrigger::Manual, None).await,
        ["keep the schema", "ctx"]
    );
}

#[tokio::test]
async fn a_compaction_hook_that_fails_or_blocks_is_told_and_never_stops_it() {
    let dir = tempfile::tempdir().unwrap();
    let told = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&told);
    let pre = |c: &str| command(HookEvent::PreCompact, "", c, Duration::from_secs(30));
    let hooks = hooks_in(
        dir.path(),
        HookConfig::from_commands(vec![
            pre("echo 'not now' >&2; exit 2"),
            pre("echo broken >&2; exit 1"),
            pre(r#"echo '{"continue": false, "stopReason": "no"}'"#),
            pre("echo kept"),
        ]),
    )
    .with_notifier(Arc::new(move |_, message| {
        sink.lock().unwrap().push(message.to_owned());
    }));
    assert_eq!(
        hooks.pre_compact(CompactTrigger::Auto, None).await,
        ["kept"]
    );
    let told = told.lock().unwrap();
    assert_eq!(told.len(), 2, "{told:?}");
    assert!(told.iter().any(|m| m.contains("broken")), "{told:?}");
    assert!(
        told.iter()
            .any(|m| m.contains("not now") && m.contains("compaction goes on")),
        "{told:?}"
    );
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
