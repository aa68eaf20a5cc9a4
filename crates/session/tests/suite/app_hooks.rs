//! Hooks an app registers (the Agent SDK's callbacks) in a session on the mock: a PreToolUse
//! callback denies a Bash call and the model reads why, the settings' hooks run beside it,
//! `include_hook_events` reports every run as it starts and ends (and nothing without it), and
//! a malformed hooks value refuses the start.

use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use serde_json::{Value, json};
use tine_mock_api::{Reply, Rule, Scenario};
use tine_session::{
    AppHooks, HookCallbacks, HookEvent, HookHandler, HookPhase, HookRunOutcome, Op, Session,
    SessionEvent, StartError, TurnOutcome,
};

use super::support::{Running, World, http_client, server};

/// An app whose PreToolUse callback `guard` refuses any command that touches a file.
#[derive(Default)]
struct GuardApp {
    calls: Mutex<Vec<(String, Value, Option<String>)>>,
}

impl HookCallbacks for GuardApp {
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
        let touches = input["tool_input"]["command"]
            .as_str()
            .is_some_and(|c| c.contains("touch"));
        Box::pin(async move {
            Ok(if touches {
                json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
                    "permissionDecision": "deny",
                    "permissionDecisionReason": "the app forbids touch"}})
            } else {
                json!({})
            })
        })
    }
}

fn app_hooks(app: &Arc<GuardApp>) -> AppHooks {
    AppHooks {
        hooks: json!({"PreToolUse": [
            {"matcher": "Bash", "hookCallbackIds": ["guard"], "timeout": 10}
        ]}),
        callbacks: Arc::clone(app) as Arc<dyn HookCallbacks>,
    }
}

fn scenario() -> Scenario {
    Scenario::new()
        .rule(
            Rule::new()
                .tool_results(false)
                .last_user_contains("touch")
                .reply(
                    Reply::text("Touching.")
                        .with_tool_use("Bash", json!({"command": "touch made.txt"})),
                ),
        )
        .rule(
            Rule::new()
                .tool_results(false)
                .last_user_contains("echo")
                .reply(
                    Reply::text("Echoing.")
                        .with_tool_use("Bash", json!({"command": "echo hi > ok.txt"})),
                ),
        )
        .rule(
            Rule::new()
                .tool_results(true)
                .marker("the app forbids touch")
                .reply(Reply::text("The app said no.")),
        )
        .rule(Rule::new().tool_results(true).reply(Reply::text("Done.")))
        .default_reply(Reply::text("ok"))
}

#[tokio::test]
async fn a_pretooluse_callback_denies_bash_beside_the_settings_hooks_and_runs_are_reported() {
    let world = World::new();
    world.project_settings(
        &json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": "cat >> seen.jsonl; echo >> seen.jsonl"}
        ]}]}})
        .to_string(),
    );
    let server = server(scenario()).await;
    let app = Arc::new(GuardApp::default());
    let mut options = world.options(http_client(&server));
    options.bare = true;
    // The rules allow Bash: only the app's callback can refuse the call.
    options.allowed_tools = vec!["Bash".into()];
    options.hook_callbacks = Some(app_hooks(&app));
    options.include_hook_events = true;
    let mut s = Running::start(options).await;

    s.handle.submit(Op::Prompt("touch it".into())).unwrap();
    let end = s.turn_end().await;
    assert_eq!(end.outcome, TurnOutcome::Completed);
    assert!(!world.cwd.join("made.txt").exists(), "a denied call ran");
    let requests = server.requests();
    let body = String::from_utf8_lossy(&requests.last().unwrap().body).into_owned();
    assert!(body.contains("the app forbids touch"), "{body}");
    assert_eq!(
        end.result.as_ref().map(|r| r.result.as_str()),
        Some("The app said no."),
        "the model did not read the callback's reason"
    );

    // Each hook of the call started and ended, the app's and the settings' alike.
    let runs: Vec<_> = s
        .seen
        .iter()
        .filter_map(|e| match e {
            SessionEvent::Hook(run) => Some(run.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(runs.len(), 4, "{runs:?}");
    assert!(
        runs.iter()
            .all(|r| r.event == HookEvent::PreToolUse && r.hook_name == "PreToolUse:Bash")
    );
    for handler in [
        HookHandler::Callback("guard".into()),
        HookHandler::Command("cat >> seen.jsonl; echo >> seen.jsonl".into()),
    ] {
        let mine: Vec<_> = runs.iter().filter(|r| r.handler == handler).collect();
        assert_eq!(mine.len(), 2, "{handler:?}: {runs:?}");
        assert_eq!(mine[0].phase, HookPhase::Started);
        assert_eq!(mine[0].hook_id, mine[1].hook_id);
        match &mine[1].phase {
            HookPhase::Ended(end) => assert_eq!(end.outcome, HookRunOutcome::Success),
            other => panic!("{other:?}"),
        }
    }

    // A call the app lets through runs.
    s.handle.submit(Op::Prompt("echo it".into())).unwrap();
    assert_eq!(s.turn_end().await.outcome, TurnOutcome::Completed);
    assert_eq!(
        std::fs::read_to_string(world.cwd.join("ok.txt")).unwrap(),
        "hi\n"
    );

    // Both calls went through both hooks, which read the same input.
    let calls = app.calls.lock().unwrap().clone();
    assert_eq!(calls.len(), 2);
    assert!(calls.iter().all(|(id, _, tool_use_id)| {
        id == "guard"
            && tool_use_id
                .as_deref()
                .is_some_and(|t| t.starts_with("toolu_"))
    }));
    let seen = std::fs::read_to_string(world.cwd.join("seen.jsonl")).unwrap();
    let seen: Vec<Value> = seen
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        seen.len(),
        2,
        "the settings' hook did not run for each call"
    );
    assert_eq!(
        seen[0], calls[0].1,
        "callback and command read different input"
    );
    assert_eq!(seen[0]["tool_input"]["command"], "touch made.txt");
}

#[tokio::test]
async fn a_malformed_hooks_value_refuses_the_start_and_no_flag_means_no_hook_events() {
    let world = World::new();
    let server = server(scenario()).await;
    let app = Arc::new(GuardApp::default());
    let mut options = world.options(http_client(&server));
    options.bare = true;
    options.hook_callbacks = Some(AppHooks {
        hooks: json!({"PreTooluse": [{"matcher": "Bash", "hookCallbackIds": ["guard"]}]}),
        callbacks: Arc::clone(&app) as Arc<dyn HookCallbacks>,
    });
    match Session::start(options.clone()).await {
        Err(StartError::AppHooks(message)) => {
            assert!(
                message.contains("`PreTooluse` is not a hook event"),
                "{message}"
            );
        }
        Err(other) => panic!("refused for another reason: {other}"),
        Ok(_) => panic!("a malformed hooks value started"),
    }
    options.hook_callbacks = Some(AppHooks {
        hooks: json!({"PreToolUse": [{"matcher": "Bash(", "hookCallbackIds": ["guard"]}]}),
        callbacks: Arc::clone(&app) as Arc<dyn HookCallbacks>,
    });
    assert!(matches!(
        Session::start(options.clone()).await,
        Err(StartError::AppHooks(message)) if message.contains("not a valid matcher")
    ));
    assert!(server.requests().is_empty());

    // Valid hooks, no `include_hook_events`: the callback runs, no run is reported.
    options.hook_callbacks = Some(app_hooks(&app));
    options.allowed_tools = vec!["Bash".into()];
    let mut s = Running::start(options).await;
    s.handle.submit(Op::Prompt("touch it".into())).unwrap();
    s.turn_end().await;
    assert!(!world.cwd.join("made.txt").exists());
    assert_eq!(app.calls.lock().unwrap().len(), 1);
    assert!(
        !s.seen.iter().any(|e| matches!(e, SessionEvent::Hook(_))),
        "hook runs reported without include_hook_events"
    );
}
