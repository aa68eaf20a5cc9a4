//! An app's hook callbacks (the Agent SDK's) through [`Hooks`] and the loop, with a fake app:
//! what a callback is told, its answer read as a command hook's JSON (deny, rewritten input,
//! context, blocks), a timeout and an error as failed hooks, settings' commands running beside
//! callbacks, and each run reported to an observer as it starts and ends.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use futures::future::BoxFuture;
use serde_json::{Map, Value, json};
use tine_api_client::{ContentBlock, Message, MessageContent, ScriptedClient, StopReason, reply};
use tine_config::SessionId;
use tine_query_loop::hooks::{
    HookCallbacks, HookCommand, HookConfig, HookEvent, HookHandler, HookPhase, HookRun,
    HookRunFailure, HookRunOutcome, Hooks, Matcher, PromptVerdict, SessionStartSource,
    SubagentStop, callback_hooks_from_json,
};
use tine_query_loop::{CompactTrigger, QueryEvent, StopHookOutcome, Terminal, query};

use super::support::params;

type Answer = Arc<dyn Fn(Value) -> BoxFuture<'static, Result<Value, String>> + Send + Sync>;

/// An app with callbacks by id; records every call.
#[derive(Default)]
struct FakeApp {
    answers: Mutex<HashMap<String, Answer>>,
    calls: Mutex<Vec<(String, Value, Option<String>)>>,
}

impl FakeApp {
    fn answering(self, id: &str, answer: Value) -> Self {
        self.with(id, move |_| {
            let answer = answer.clone();
            Box::pin(async move { Ok(answer) })
        })
    }

    fn with(
        self,
        id: &str,
        answer: impl Fn(Value) -> BoxFuture<'static, Result<Value, String>> + Send + Sync + 'static,
    ) -> Self {
        self.answers
            .lock()
            .unwrap()
            .insert(id.to_owned(), Arc::new(answer));
        self
    }

    fn calls(&self) -> Vec<(String, Value, Option<String>)> {
        self.calls.lock().unwrap().clone()
    }
}

impl HookCallbacks for FakeApp {
    fn call(
        &self,
        callback_id: &str,
        input: Value,
        tool_use_id: Option<String>,
    ) -> BoxFuture<'static, Result<Value, String>> {
        self.calls
            .lock()
            .unwrap()
            .push((callback_id.to_owned(), input.clone(), tool_use_id));
        let answer = self.answers.lock().unwrap().get(callback_id).cloned();
        match answer {
            Some(answer) => answer(input),
            None => {
                let id = callback_id.to_owned();
                Box::pin(async move { Err(format!("no callback {id}")) })
            }
        }
    }
}

/// Hooks in `cwd`: `commands` from settings, then the app's `hooks` (the SDK's JSON).
fn hooks_with(cwd: &Path, commands: Vec<HookCommand>, hooks: Value, app: Arc<FakeApp>) -> Hooks {
    let (callbacks, warnings) = callback_hooks_from_json(&hooks).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    Hooks::new(
        HookConfig::from_commands(commands).with_callbacks(callbacks, app),
        SessionId::parse("sess-1").unwrap(),
        PathBuf::from("/t/s.jsonl"),
        cwd.to_path_buf(),
    )
}

fn command(event: HookEvent, matcher: &str, command: &str) -> HookCommand {
    HookCommand {
        event,
        matcher: Matcher::parse(matcher).unwrap(),
        matcher_text: matcher.to_owned(),
        command: command.to_owned(),
        timeout: Duration::from_secs(30),
        origin: String::new(),
        env: Vec::new(),
    }
}

fn bash_call(id: &str, command: &str) -> tine_api_client::ResponseMessage {
    reply(
        vec![ContentBlock::tool_use(
            id,
            "Bash",
            json!({"command": command}),
        )],
        StopReason::ToolUse,
    )
}

/// The text of the tool result the model read in the second request.
fn result_read(client: &ScriptedClient) -> (bool, String) {
    let requests = client.requests();
    let MessageContent::Blocks(blocks) = &requests[1].messages.last().unwrap().content else {
        panic!("no blocks");
    };
    blocks
        .iter()
        .find_map(|b| match b {
            ContentBlock::ToolResult(r) => Some((
                r.is_error.unwrap_or(false),
                match &r.content {
                    Some(tine_api_client::ToolResultContent::Text(t)) => t.clone(),
                    other => format!("{other:?}"),
                },
            )),
            _ => None,
        })
        .unwrap()
}

async fn run_loop(client: &ScriptedClient, dir: &Path, hooks: Hooks) -> Vec<QueryEvent> {
    let mut p = params(client, dir);
    p.hooks = Some(hooks);
    query(p, vec![Message::user(vec![ContentBlock::text("go")])])
        .collect()
        .await
}

#[tokio::test]
async fn a_pretooluse_callback_denies_a_bash_call_and_the_settings_hook_runs_beside_it() {
    let dir = tempfile::tempdir().unwrap();
    let app = Arc::new(FakeApp::default().answering(
        "hook_0",
        json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
            "permissionDecision": "deny", "permissionDecisionReason": "no shell for you"}}),
    ));
    let hooks = hooks_with(
        dir.path(),
        vec![command(HookEvent::PreToolUse, "Bash", "cat > seen.json")],
        json!({"PreToolUse": [{"matcher": "Bash", "hookCallbackIds": ["hook_0"], "timeout": 5}]}),
        Arc::clone(&app),
    );
    let client = ScriptedClient::new();
    client.push_message(bash_call("t1", "touch made.txt"));
    client.push_message(ScriptedClient::text_reply("ok"));
    let events = run_loop(&client, dir.path(), hooks).await;
    assert!(matches!(
        events.last(),
        Some(QueryEvent::Terminal(Terminal::Completed))
    ));
    assert!(!dir.path().join("made.txt").exists(), "a denied call ran");
    let (is_error, text) = result_read(&client);
    assert!(is_error && text.contains("no shell for you"), "{text}");
    // The callback got what a command hook reads on stdin, and the call's id.
    let calls = app.calls();
    assert_eq!(calls.len(), 1);
    let (id, input, tool_use_id) = &calls[0];
    assert_eq!(id, "hook_0");
    assert_eq!(tool_use_id.as_deref(), Some("t1"));
    let stdin: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("seen.json")).unwrap())
            .unwrap();
    assert_eq!(input, &stdin, "a callback's input is a command's stdin");
    assert_eq!(input["hook_event_name"], "PreToolUse");
    assert_eq!(input["tool_name"], "Bash");
    assert_eq!(input["tool_input"], json!({"command": "touch made.txt"}));
}

#[tokio::test]
async fn a_pretooluse_callback_rewrites_the_input_the_call_runs_with() {
    let dir = tempfile::tempdir().unwrap();
    let app = Arc::new(FakeApp::default().answering(
        "hook_0",
        json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
            "permissionDecision": "allow",
            "updatedInput": {"command": "echo rewritten > out.txt"}}}),
    ));
    let hooks = hooks_with(
        dir.path(),
        Vec::new(),
        json!({"PreToolUse": [{"matcher": "Bash", "hookCallbackIds": ["hook_0"]}]}),
        app,
    );
    let client = ScriptedClient::new();
    client.push_message(bash_call("t1", "echo original > out.txt"));
    client.push_message(ScriptedClient::text_reply("ok"));
    run_loop(&client, dir.path(), hooks).await;
    assert_eq!(
        std::fs::read_to_string(dir.path().join("out.txt")).unwrap(),
        "rewritten\n"
    );
    assert!(!result_read(&client).0);
}

#[tokio::test]
async fn a_posttooluse_callback_adds_context_the_model_reads_with_the_result() {
    let dir = tempfile::tempdir().unwrap();
    let app = Arc::new(FakeApp::default().answering(
        "post",
        json!({"hookSpecificOutput": {"hookEventName": "PostToolUse",
            "additionalContext": "the build is green"}}),
    ));
    let hooks = hooks_with(
        dir.path(),
        Vec::new(),
        json!({"PostToolUse": [{"matcher": "Bash|Read", "hookCallbackIds": ["post"]}]}),
        Arc::clone(&app),
    );
    let client = ScriptedClient::new();
    client.push_message(bash_call("t1", "echo hi"));
    client.push_message(ScriptedClient::text_reply("ok"));
    run_loop(&client, dir.path(), hooks).await;
    let (is_error, text) = result_read(&client);
    assert!(!is_error && text.contains("hi"), "{text}");
    assert!(text.contains("the build is green"), "{text}");
    let calls = app.calls();
    assert_eq!(calls[0].1["hook_event_name"], "PostToolUse");
    assert!(
        calls[0].1["tool_response"]["content"]
            .as_str()
            .unwrap()
            .contains("hi")
    );
}

#[tokio::test(start_paused = true)]
async fn a_callback_that_times_out_or_fails_is_a_failed_hook_that_blocks_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let app = Arc::new(
        FakeApp::default()
            .with("slow", |_| Box::pin(futures::future::pending()))
            .with("broken", |_| {
                Box::pin(async { Err("the app's callback raised KeyError".to_owned()) })
            })
            .answering("garbled", json!({"decision": 3}))
            .answering("fine", json!({})),
    );
    let hooks = hooks_with(
        dir.path(),
        Vec::new(),
        json!({"PreToolUse": [
            {"matcher": "Bash", "hookCallbackIds": ["slow"], "timeout": 0.2},
            {"matcher": "Bash", "hookCallbackIds": ["broken", "garbled", "fine"]}
        ]}),
        app,
    );
    let outcome = hooks
        .pre_tool_use("Bash", &json!({"command": "ls"}), "t1")
        .await;
    assert_eq!(outcome.ran, 4);
    assert!(outcome.blocks.is_empty() && outcome.permission.is_none());
    match outcome.failures.as_slice() {
        [
            HookRunFailure::CallbackTimeout {
                callback_id: slow,
                timeout,
                ..
            },
            HookRunFailure::CallbackFailed {
                callback_id: broken,
                error,
                ..
            },
            HookRunFailure::CallbackFailed {
                callback_id: garbled,
                ..
            },
        ] => {
            assert_eq!(slow, "slow");
            assert_eq!(*timeout, Duration::from_millis(200));
            assert_eq!(broken, "broken");
            assert!(error.contains("KeyError"));
            assert_eq!(garbled, "garbled");
        }
        other => panic!("unexpected failures {other:?}"),
    }
    assert!(
        outcome.failures[0]
            .to_string()
            .contains("did not answer within 0.2s"),
        "{}",
        outcome.failures[0]
    );
}

#[tokio::test]
async fn every_event_tine_runs_works_through_callbacks() {
    let dir = tempfile::tempdir().unwrap();
    let context = |event: &str, text: &str| json!({"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}});
    let app = Arc::new(
        FakeApp::default()
            .with("prompt", |input| {
                Box::pin(async move {
                    Ok(if input["prompt"].as_str().unwrap().contains("secret") {
                        json!({"decision": "block", "reason": "no secrets"})
                    } else {
                        json!({"hookSpecificOutput": {"hookEventName": "UserPromptSubmit",
                            "additionalContext": "prompt context"}})
                    })
                })
            })
            .answering("start", context("SessionStart", "start context"))
            .answering("stop", json!({"decision": "block", "reason": "tests fail"}))
            .answering("agent", json!({"continue": false, "stopReason": "enough"}))
            .answering("compact", context("PreCompact", "keep the ledger"))
            .answering("end", json!({}))
            .answering("note", json!({"systemMessage": "seen"})),
    );
    let hooks = hooks_with(
        dir.path(),
        Vec::new(),
        json!({
            "UserPromptSubmit": [{"hookCallbackIds": ["prompt"]}],
            "SessionStart": [{"matcher": "resume", "hookCallbackIds": ["start"]}],
            "Stop": [{"hookCallbackIds": ["stop"]}],
            "SubagentStop": [{"matcher": "Explore", "hookCallbackIds": ["agent"]}],
            "PreCompact": [{"matcher": "manual", "hookCallbackIds": ["compact"]}],
            "SessionEnd": [{"hookCallbackIds": ["end"]}],
            "Notification": [{"matcher": "permission_prompt", "hookCallbackIds": ["note"]}]
        }),
        Arc::clone(&app),
    );
    assert_eq!(
        hooks.user_prompt_submit("my secret").await,
        PromptVerdict::Refused {
            reason: "no secrets".into()
        }
    );
    match hooks.user_prompt_submit("hello").await {
        PromptVerdict::Proceed { context } => {
            assert_eq!(context.len(), 1);
            assert!(context[0].contains("prompt context"), "{context:?}");
        }
        other => panic!("{other:?}"),
    }
    // The matcher takes the source: a new session's start is not a resume.
    assert!(
        hooks
            .session_start(SessionStartSource::Startup)
            .await
            .is_empty()
    );
    let started = hooks.session_start(SessionStartSource::Resume).await;
    assert!(started[0].contains("start context"), "{started:?}");
    assert_eq!(
        hooks.stop(false).await,
        StopHookOutcome::Block {
            reason: "tests fail".into()
        }
    );
    let agent = |agent_type: &str| SubagentStop {
        stop_hook_active: false,
        agent_id: "a_12345678".into(),
        agent_type: agent_type.into(),
        agent_transcript_path: None,
        last_assistant_message: Some("done".into()),
    };
    assert_eq!(
        hooks.subagent_stop(&agent("Explore")).await,
        StopHookOutcome::Halt {
            reason: Some("enough".into())
        }
    );
    assert_eq!(
        hooks.subagent_stop(&agent("Plan")).await,
        StopHookOutcome::Continue
    );
    assert_eq!(
        hooks
            .pre_compact(CompactTrigger::Manual, Some("focus"))
            .await,
        ["keep the ledger"]
    );
    assert!(
        hooks
            .pre_compact(CompactTrigger::Auto, None)
            .await
            .is_empty()
    );
    hooks.session_end("logout").await;
    hooks
        .notification("tine needs you", "permission_prompt")
        .await;
    hooks.notification("tine is waiting", "idle_prompt").await;

    let called: Vec<(String, String)> = app
        .calls()
        .into_iter()
        .map(|(id, input, _)| (id, input["hook_event_name"].as_str().unwrap().to_owned()))
        .collect();
    let expected = [
        ("prompt", "UserPromptSubmit"),
        ("prompt", "UserPromptSubmit"),
        ("start", "SessionStart"),
        ("stop", "Stop"),
        ("agent", "SubagentStop"),
        ("compact", "PreCompact"),
        ("end", "SessionEnd"),
        ("note", "Notification"),
    ];
    assert_eq!(called, expected.map(|(a, b)| (a.to_owned(), b.to_owned())));
    let calls = app.calls();
    assert_eq!(calls[2].1["source"], "resume");
    assert_eq!(calls[4].1["agent_type"], "Explore");
    assert_eq!(calls[5].1["custom_instructions"], "focus");
    assert_eq!(calls[6].1["reason"], "logout");
    assert_eq!(calls[7].1["notification_type"], "permission_prompt");
    // Events without a tool call have no tool_use_id.
    assert!(calls.iter().all(|(_, _, id)| id.is_none()));
}

#[tokio::test]
async fn each_run_is_reported_as_it_starts_and_ends() {
    let dir = tempfile::tempdir().unwrap();
    let app = Arc::new(
        FakeApp::default()
            .answering("hook_0", json!({"decision": "block", "reason": "no"}))
            .with("hook_1", |_| Box::pin(async { Err("boom".to_owned()) })),
    );
    let runs = Arc::new(Mutex::new(Vec::<HookRun>::new()));
    let sink = Arc::clone(&runs);
    let hooks = hooks_with(
        dir.path(),
        vec![command(HookEvent::PreToolUse, "", "echo out; echo err >&2")],
        json!({"PreToolUse": [{"hookCallbackIds": ["hook_0", "hook_1"]}]}),
        app,
    )
    .with_observer(Arc::new(move |run| sink.lock().unwrap().push(run)));
    hooks
        .pre_tool_use("Bash", &json!({"command": "ls"}), "t1")
        .await;
    let runs = runs.lock().unwrap().clone();
    assert_eq!(runs.len(), 6, "{runs:?}");
    assert!(
        runs.iter()
            .all(|r| r.hook_name == "PreToolUse:Bash" && r.event == HookEvent::PreToolUse)
    );
    // Each of the three starts once, and its end names its start and comes after it.
    assert_eq!(
        runs.iter()
            .filter(|r| r.phase == HookPhase::Started)
            .count(),
        3
    );
    for (at, run) in runs.iter().enumerate() {
        if run.phase != HookPhase::Started {
            assert!(
                runs[..at]
                    .iter()
                    .any(|r| r.hook_id == run.hook_id && r.phase == HookPhase::Started)
            );
        }
    }
    let end_of = |handler: HookHandler| {
        let start = runs
            .iter()
            .find(|r| r.handler == handler && r.phase == HookPhase::Started)
            .unwrap();
        runs.iter()
            .find_map(|r| match &r.phase {
                HookPhase::Ended(end) if r.hook_id == start.hook_id => Some(end.clone()),
                _ => None,
            })
            .unwrap()
    };
    let shell = end_of(HookHandler::Command("echo out; echo err >&2".into()));
    assert_eq!(shell.outcome, HookRunOutcome::Success);
    assert_eq!(
        (shell.stdout.as_str(), shell.stderr.as_str()),
        ("out\n", "err\n")
    );
    assert_eq!(shell.output, "out\nerr\n");
    assert_eq!(shell.exit_code, Some(0));
    let blocked = end_of(HookHandler::Callback("hook_0".into()));
    assert_eq!(blocked.outcome, HookRunOutcome::Success);
    assert_eq!(
        serde_json::from_str::<Value>(&blocked.output).unwrap(),
        json!({"decision": "block", "reason": "no"})
    );
    assert_eq!(blocked.exit_code, None);
    let failed = end_of(HookHandler::Callback("hook_1".into()));
    assert_eq!(failed.outcome, HookRunOutcome::Error);
    assert!(failed.stderr.contains("boom"), "{failed:?}");
    let ids: std::collections::HashSet<&str> = runs.iter().map(|r| r.hook_id.as_str()).collect();
    assert_eq!(ids.len(), 3);
}

#[tokio::test(start_paused = true)]
async fn a_run_stopped_before_it_ends_is_reported_cancelled() {
    let dir = tempfile::tempdir().unwrap();
    let app = Arc::new(FakeApp::default().with("slow", |_| Box::pin(futures::future::pending())));
    let runs = Arc::new(Mutex::new(Vec::<HookRun>::new()));
    let sink = Arc::clone(&runs);
    let hooks = hooks_with(
        dir.path(),
        Vec::new(),
        json!({"Stop": [{"hookCallbackIds": ["slow"]}]}),
        app,
    )
    .with_observer(Arc::new(move |run| sink.lock().unwrap().push(run)));
    // The turn is interrupted while the hook runs: its future is dropped.
    let stopped = tokio::time::timeout(
        Duration::from_secs(1),
        hooks.run(HookEvent::Stop, None, Map::new()),
    )
    .await;
    assert!(stopped.is_err());
    let runs = runs.lock().unwrap().clone();
    assert_eq!(runs.len(), 2, "{runs:?}");
    assert_eq!(runs[0].hook_name, "Stop");
    match &runs[1].phase {
        HookPhase::Ended(end) => assert_eq!(end.outcome, HookRunOutcome::Cancelled),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_callback_with_another_tools_matcher_is_not_called() {
    let dir = tempfile::tempdir().unwrap();
    let app = Arc::new(FakeApp::default().answering("w", json!({})));
    let hooks = hooks_with(
        dir.path(),
        Vec::new(),
        json!({"PreToolUse": [{"matcher": "Write|Edit", "hookCallbackIds": ["w"]}]}),
        Arc::clone(&app),
    );
    assert!(hooks.has(HookEvent::PreToolUse));
    assert!(!hooks.has(HookEvent::PostToolUse));
    let outcome = hooks
        .pre_tool_use("Bash", &json!({"command": "ls"}), "t1")
        .await;
    assert_eq!(outcome.ran, 0);
    assert!(app.calls().is_empty());
    let outcome = hooks
        .pre_tool_use("Edit", &json!({"file_path": "/x"}), "t2")
        .await;
    assert_eq!(outcome.ran, 1);
    assert_eq!(app.calls()[0].2.as_deref(), Some("t2"));
}
