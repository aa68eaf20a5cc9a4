//! Asks as requests a front end answers (interactive), or as denials (headless), through the
//! real Bash and Write tools and the permission engine.

use serde_json::json;
use tine_mock_api::{MockServer, Reply, Rule, Scenario};
use tine_permissions::PermissionMode;
use tine_query_loop::QueryEvent;
use tine_session::{
    AlwaysAllow, Approvals, Op, PermissionAnswer, PermissionRequest, SessionEvent, TurnOutcome,
};

use super::support::{Running, World, http_client, server};

/// The model runs `touch made.txt` when told "make it", and says what happened after.
fn touch_scenario() -> Scenario {
    Scenario::new()
        .rule(
            Rule::new()
                .tool_results(false)
                .last_user_contains("make it")
                .reply(
                    Reply::text("Making it.")
                        .with_tool_use("Bash", json!({"command": "touch made.txt"})),
                ),
        )
        .rule(
            Rule::new()
                .tool_results(false)
                .last_user_contains("write it")
                .reply(Reply::text("Writing.").with_tool_use(
                    "Write",
                    json!({"file_path": "written.txt", "content": "hello\n"}),
                )),
        )
        .rule(
            Rule::new()
                .tool_results(false)
                .last_user_contains("make another")
                .reply(
                    Reply::text("Making another.")
                        .with_tool_use("Bash", json!({"command": "touch other.txt"})),
                ),
        )
        .rule(
            Rule::new()
                .tool_results(false)
                .last_user_contains("change it")
                .reply(Reply::text("Changing.").with_tool_use(
                    "Edit",
                    json!({"file_path": "written.txt", "old_string": "hello", "new_string": "bye"}),
                )),
        )
        .rule(Rule::new().tool_results(true).reply(Reply::text("Done.")))
        .default_reply(Reply::text("Ok."))
}

async fn interactive(world: &World, server: &MockServer) -> Running {
    let mut options = world.options(http_client(server));
    options.bare = true;
    options.approvals = Approvals::Interactive;
    Running::start(options).await
}

/// An interactive session on the touch scenario, told "make it", and the ask it raised.
async fn asked() -> (World, MockServer, Running, PermissionRequest) {
    let world = World::new();
    let server = server(touch_scenario()).await;
    let mut s = interactive(&world, &server).await;
    s.handle.submit(Op::Prompt("make it".into())).unwrap();
    let ask = s.until(request).await;
    (world, server, s, ask)
}

fn request(e: &SessionEvent) -> Option<PermissionRequest> {
    match e {
        SessionEvent::PermissionRequest(r) => Some(r.clone()),
        _ => None,
    }
}

fn tool_error(events: &[SessionEvent]) -> Option<(bool, String)> {
    events.iter().rev().find_map(|e| match e {
        SessionEvent::Query(QueryEvent::ToolResult { output, .. }) => {
            Some((output.is_error, output.content.clone()))
        }
        _ => None,
    })
}

#[tokio::test]
async fn an_ask_waits_for_the_answer_once_then_runs() {
    let (world, _server, mut s, ask) = asked().await;
    assert_eq!(ask.tool, "Bash");
    assert_eq!(ask.target, "touch made.txt");
    assert_eq!(
        ask.always.as_ref().map(ToString::to_string).as_deref(),
        Some("Bash(touch:*)"),
        "the program's prefix, not the command's"
    );
    assert!(
        !world.cwd.join("made.txt").exists(),
        "ran before the answer"
    );
    s.answer_permission(ask.id, PermissionAnswer::Once).unwrap();
    let end = s.turn_end().await;
    assert_eq!(end.outcome, TurnOutcome::Completed);
    assert!(world.cwd.join("made.txt").exists());
    assert_eq!(tool_error(&s.seen).map(|(e, _)| e), Some(false));
    // Answered once: a second answer has nobody to go to.
    assert!(s.answer_permission(ask.id, PermissionAnswer::Once).is_err());
    s.shutdown().await;
}

#[tokio::test]
async fn a_refusal_with_feedback_reaches_the_model_and_nothing_runs() {
    let (world, server, mut s, ask) = asked().await;
    s.answer_permission(
        ask.id,
        PermissionAnswer::Deny {
            feedback: Some("use mkdir instead".into()),
        },
    )
    .unwrap();
    let end = s.turn_end().await;
    assert!(!world.cwd.join("made.txt").exists());
    let (is_error, content) = tool_error(&s.seen).unwrap();
    assert!(is_error);
    assert!(content.contains("use mkdir instead"), "{content}");
    assert_eq!(end.denials.len(), 1);
    assert_eq!(end.denials[0].tool_name, "Bash");
    let last = server.requests().last().unwrap().body.clone();
    assert!(String::from_utf8_lossy(&last).contains("use mkdir instead"));
    s.shutdown().await;
}

#[tokio::test]
async fn always_saves_the_rule_to_local_settings_and_the_next_call_does_not_ask() {
    let (world, _server, mut s, ask) = asked().await;
    s.answer_permission(ask.id, PermissionAnswer::Always)
        .unwrap();
    assert_eq!(s.turn_end().await.outcome, TurnOutcome::Completed);
    let local = std::fs::read_to_string(world.cwd.join(".tine/settings.local.json")).unwrap();
    let local: serde_json::Value = serde_json::from_str(&local).unwrap();
    assert_eq!(local["permissions"]["allow"], json!(["Bash(touch:*)"]));

    // Another file: the rule is the program's, not the first command's.
    s.handle.submit(Op::Prompt("make another".into())).unwrap();
    assert_eq!(s.turn_end().await.outcome, TurnOutcome::Completed);
    assert!(world.cwd.join("other.txt").exists());
    let asks = s.seen.iter().filter(|e| request(e).is_some()).count();
    assert_eq!(asks, 1);
    s.shutdown().await;
}

#[tokio::test]
async fn always_for_an_edit_switches_the_session_to_accept_edits_and_saves_nothing() {
    let world = World::new();
    let server = server(touch_scenario()).await;
    let mut s = interactive(&world, &server).await;
    s.handle.submit(Op::Prompt("write it".into())).unwrap();
    let ask = s.until(request).await;
    assert_eq!(ask.tool, "Write");
    assert_eq!(
        ask.always,
        Some(AlwaysAllow::Mode(PermissionMode::AcceptEdits))
    );
    s.answer_permission(ask.id, PermissionAnswer::Always)
        .unwrap();
    let changed = s
        .until(|e| match e {
            SessionEvent::PermissionModeChanged(mode) => Some(*mode),
            _ => None,
        })
        .await;
    assert_eq!(changed, PermissionMode::AcceptEdits);
    assert_eq!(s.turn_end().await.outcome, TurnOutcome::Completed);
    assert_eq!(
        std::fs::read_to_string(world.cwd.join("written.txt")).unwrap(),
        "hello\n"
    );

    // The next edit runs without asking.
    s.handle.submit(Op::Prompt("change it".into())).unwrap();
    assert_eq!(s.turn_end().await.outcome, TurnOutcome::Completed);
    assert_eq!(
        std::fs::read_to_string(world.cwd.join("written.txt")).unwrap(),
        "bye\n"
    );
    let asks = s.seen.iter().filter(|e| request(e).is_some()).count();
    assert_eq!(asks, 1);
    assert!(
        !world.cwd.join(".tine/settings.local.json").exists(),
        "nothing saved"
    );
    assert!(!world.cwd.join(".tine/settings.json").exists());
    s.shutdown().await;
}

#[tokio::test]
async fn interrupting_withdraws_the_pending_request() {
    let (world, _server, mut s, ask) = asked().await;
    s.interrupt();
    let withdrawn = s
        .until(|e| match e {
            SessionEvent::PermissionWithdrawn { question: id } => Some(*id),
            _ => None,
        })
        .await;
    assert_eq!(withdrawn, ask.id);
    assert_eq!(s.turn_end().await.outcome, TurnOutcome::Interrupted);
    assert!(!world.cwd.join("made.txt").exists());
    assert!(s.answer_permission(ask.id, PermissionAnswer::Once).is_err());
    s.shutdown().await;
}

#[tokio::test]
async fn headless_an_ask_is_a_denial_saying_how_to_allow_it() {
    let world = World::new();
    let server = server(touch_scenario()).await;
    let mut options = world.options(http_client(&server));
    options.bare = true;
    let mut s = Running::start(options).await;
    s.handle.submit(Op::Prompt("make it".into())).unwrap();
    let end = s.turn_end().await;
    assert_eq!(end.outcome, TurnOutcome::Completed);
    assert!(!world.cwd.join("made.txt").exists());
    assert!(s.seen.iter().all(|e| request(e).is_none()));
    let (is_error, content) = tool_error(&s.seen).unwrap();
    assert!(is_error);
    assert!(content.contains("non-interactive mode (-p)"), "{content}");
    assert!(content.contains("--allowedTools"), "{content}");
    s.shutdown().await;
}

#[tokio::test]
async fn the_mode_changes_for_the_next_call() {
    let world = World::new();
    let server = server(touch_scenario()).await;
    let mut s = interactive(&world, &server).await;
    assert_eq!(s.info.permission_mode, PermissionMode::Default);
    s.at_once(Op::SetPermissionMode(PermissionMode::AcceptEdits))
        .unwrap();
    let changed = s
        .seen_or_until(|e| match e {
            SessionEvent::PermissionModeChanged(mode) => Some(*mode),
            _ => None,
        })
        .await;
    assert_eq!(changed, PermissionMode::AcceptEdits);
    s.handle.submit(Op::Prompt("write it".into())).unwrap();
    assert_eq!(s.turn_end().await.outcome, TurnOutcome::Completed);
    assert_eq!(
        std::fs::read_to_string(world.cwd.join("written.txt")).unwrap(),
        "hello\n"
    );
    assert!(s.seen.iter().all(|e| request(e).is_none()));
    s.shutdown().await;
}
