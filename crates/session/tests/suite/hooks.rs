//! The user's hooks as the session runs them for every front end: a refused prompt is an
//! event and costs no request (the next prompt still gets SessionStart's context), hook
//! failures are notices, SessionEnd runs at shutdown, and a hook's "ask" is asked of the
//! person (interactive) while a deny rule still wins over a hook's "allow".

use serde_json::json;
use tine_mock_api::{Reply, Rule, Scenario};
use tine_session::{Approvals, Op, PermissionAnswer, SessionEndReason, SessionEvent, TurnOutcome};

use super::support::{Running, World, http_client, server};

fn hook(matcher: &str, command: &str) -> serde_json::Value {
    json!([{"matcher": matcher, "hooks": [{"type": "command", "command": command}]}])
}

#[tokio::test]
async fn a_refused_prompt_is_an_event_and_sends_nothing() {
    let world = World::new();
    world.project_settings(
        &json!({"hooks": {
            "UserPromptSubmit": [
                {"hooks": [{"type": "command", "command":
                    "if grep -q secret; then echo 'no secrets' >&2; exit 2; fi"}]},
                {"hooks": [{"type": "command", "command": "echo flaky >&2; exit 1"}]}
            ],
            "SessionStart": hook("", "echo 'start context'"),
            "SessionEnd": hook("", "cat > end.json"),
        }})
        .to_string(),
    );
    let server = server(Scenario::new().default_reply(Reply::text("ok"))).await;
    let mut options = world.options(http_client(&server));
    options.bare = true;
    let mut s = Running::start(options).await;

    let id = s
        .handle
        .submit(Op::Prompt("my secret is 42".into()))
        .unwrap();
    let reason = s
        .until(|e| match e {
            SessionEvent::PromptBlocked { reason } => Some(reason.clone()),
            _ => None,
        })
        .await;
    assert_eq!(s.seen_ids.last(), Some(&Some(id)), "the block names its op");
    assert_eq!(reason, "no secrets");
    let end = s.turn_end().await;
    assert!(
        matches!(&end.outcome, TurnOutcome::Failed { message } if message.contains("no secrets")),
        "{:?}",
        end.outcome
    );
    assert!(end.result.is_none());
    assert!(server.requests().is_empty(), "a refused prompt was sent");
    // A hook that fails without blocking is the user's to read, as a notice.
    assert!(
        s.seen.iter().any(|e| matches!(e, SessionEvent::Notice(n)
            if n.text.contains("UserPromptSubmit") && n.text.contains("flaky"))),
        "{:?}",
        s.seen
    );

    // The next prompt goes, with SessionStart's context (kept for the first prompt sent).
    s.handle.submit(Op::Prompt("hello there".into())).unwrap();
    let end = s.turn_end().await;
    assert_eq!(end.outcome, TurnOutcome::Completed);
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let body = String::from_utf8_lossy(&requests[0].body).into_owned();
    assert!(body.contains("start context"), "{body}");

    let _ = s.handle.shutdown_because(SessionEndReason::Logout).await;
    let end: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(world.cwd.join("end.json")).unwrap())
            .unwrap();
    assert_eq!(end["reason"], "logout");
}

#[tokio::test]
async fn a_hooks_ask_is_asked_and_its_allow_never_beats_a_deny_rule() {
    let world = World::new();
    let ask = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
        "permissionDecision": "ask", "permissionDecisionReason": "look first"}});
    let allow = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
        "permissionDecision": "allow"}});
    world.project_settings(
        &json!({
            "permissions": {"deny": ["Bash(rm:*)"]},
            "hooks": {"PreToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "command", "command": format!("echo '{allow}'")}]},
                {"matcher": "Write", "hooks": [{"type": "command", "command": format!("echo '{ask}'")}]}
            ]}
        })
        .to_string(),
    );
    std::fs::write(world.cwd.join("keep.txt"), "kept").unwrap();
    let target = world.cwd.join("new.txt");
    let scenario = Scenario::new()
        .rule(
            Rule::new()
                .tool_results(false)
                .last_user_contains("remove")
                .reply(
                    Reply::text("Removing.")
                        .with_tool_use("Bash", json!({"command": "rm keep.txt"})),
                ),
        )
        .rule(
            Rule::new()
                .tool_results(false)
                .last_user_contains("write")
                .reply(
                    Reply::text("Writing.")
                        .with_tool_use("Write", json!({"file_path": target, "content": "x"})),
                ),
        )
        .rule(Rule::new().tool_results(true).reply(Reply::text("Done.")))
        .default_reply(Reply::text("ok"));
    let server = server(scenario).await;
    let mut options = world.options(http_client(&server));
    options.bare = true;
    options.approvals = Approvals::Interactive;
    // acceptEdits would let the Write through without a question: the hook still asks.
    options.permission_mode = Some(tine_permissions::PermissionMode::AcceptEdits);
    let mut s = Running::start(options).await;

    s.handle.submit(Op::Prompt("remove it".into())).unwrap();
    s.turn_end().await;
    assert!(
        world.cwd.join("keep.txt").exists(),
        "a hook's allow beat a deny rule"
    );
    assert!(
        !s.seen
            .iter()
            .any(|e| matches!(e, SessionEvent::PermissionRequest(_))),
        "a denied call was asked about"
    );

    s.handle.submit(Op::Prompt("write it".into())).unwrap();
    let request = s
        .until(|e| match e {
            SessionEvent::PermissionRequest(r) => Some(r.clone()),
            _ => None,
        })
        .await;
    assert_eq!(request.tool, "Write");
    assert_eq!(request.reason, "look first");
    assert!(!target.exists());
    s.answer_permission(request.id, PermissionAnswer::Once)
        .unwrap();
    s.turn_end().await;
    assert!(target.exists());
    let _ = s.handle.shutdown().await;
}
