//! The plan approval's options in Claude Code's order (Enter auto-accepts edits), and the
//! session's built-ins `/thinking` and `/init` in the command list and help.

use crossterm::event::KeyCode;
use serde_json::json;
use tine_session::{
    Answer, Event, Op, PermissionAnswer, PermissionRequest, QuestionId, SessionEvent,
};

use super::support::{app, event, handle, key, press, screen, submit, type_text};

fn plan(id: u64) -> Event {
    event(SessionEvent::PermissionRequest(PermissionRequest {
        id: QuestionId(id),
        tool: "ExitPlanMode".into(),
        input: json!({"plan": "1. Write x.txt\n2. Run the tests"}),
        target: "1. Write x.txt\n2. Run the tests".into(),
        reason: String::new(),
        always: Some(tine_session::AlwaysAllow::Mode(
            tine_session::PermissionMode::AcceptEdits,
        )),
        preview: None,
        tool_use_id: None,
    }))
}

fn answer(id: u64, answer: PermissionAnswer) -> Op {
    Op::Answer {
        question: QuestionId(id),
        answer: Answer::Permission(answer),
    }
}

#[test]
fn the_plan_approval_offers_auto_accept_first_then_manual_then_keep_planning() {
    let mut app = app();
    submit(&mut app, "plan it");
    handle(&mut app, plan(1));
    let shown = screen(&mut app, 80, 30);
    let auto = shown.find("1. Yes, and auto-accept edits");
    let manual = shown.find("2. Yes, and manually approve edits");
    let keep = shown.find("3. No, keep planning");
    assert!(
        auto.is_some() && manual.is_some() && keep.is_some(),
        "{shown}"
    );
    assert!(auto < manual && manual < keep, "{shown}");
    assert!(shown.contains("❯ 1. Yes, and auto-accept edits"), "{shown}");
    assert!(shown.contains("Would you like to proceed?"), "{shown}");
    assert!(shown.contains("Write x.txt"), "the plan is shown: {shown}");
    // Enter takes the first option: auto-accept edits (the session's acceptEdits).
    assert_eq!(
        press(&mut app, key(KeyCode::Enter)),
        [answer(1, PermissionAnswer::Always)]
    );

    handle(&mut app, plan(2));
    assert_eq!(
        press(&mut app, key(KeyCode::Char('2'))),
        [answer(2, PermissionAnswer::Once)],
        "option 2 approves with edits asked one by one"
    );

    handle(&mut app, plan(3));
    press(&mut app, key(KeyCode::Down));
    press(&mut app, key(KeyCode::Down));
    assert_eq!(
        press(&mut app, key(KeyCode::Enter)),
        [],
        "option 3 asks what to change"
    );
    type_text(&mut app, "add a test first");
    assert_eq!(
        press(&mut app, key(KeyCode::Enter)),
        [answer(
            3,
            PermissionAnswer::Deny {
                feedback: Some("add a test first".into())
            }
        )]
    );
}

#[test]
fn other_permission_requests_keep_yes_first() {
    let mut app = app();
    submit(&mut app, "go");
    handle(
        &mut app,
        event(SessionEvent::PermissionRequest(PermissionRequest {
            id: QuestionId(1),
            tool: "Bash".into(),
            input: json!({"command": "rm -rf build"}),
            target: "rm -rf build".into(),
            reason: String::new(),
            always: tine_session::AlwaysAllow::saved(vec!["Bash(rm:*)".parse().unwrap()]),
            preview: None,
            tool_use_id: None,
        })),
    );
    let shown = screen(&mut app, 80, 30);
    assert!(shown.contains("❯ 1. Yes"), "{shown}");
    assert!(shown.contains("Do you want to proceed?"), "{shown}");
    assert_eq!(
        press(&mut app, key(KeyCode::Enter)),
        [answer(1, PermissionAnswer::Once)]
    );
}

#[test]
fn thinking_and_init_are_listed_and_sent_to_the_session() {
    let mut app = app();
    type_text(&mut app, "/th");
    assert!(screen(&mut app, 100, 30).contains("/thinking"));
    let mut app = super::support::app();
    submit(&mut app, "/help");
    let help = screen(&mut app, 100, 50);
    for wanted in ["/thinking", "/init", "tab"] {
        assert!(help.contains(wanted), "{wanted} missing from help:\n{help}");
    }
    press(&mut app, key(KeyCode::Esc));
    let command = |name: &str, args: &str| Op::Command {
        name: name.into(),
        args: args.into(),
    };
    assert_eq!(
        submit(&mut app, "/thinking off"),
        [command("thinking", "off")]
    );
    assert!(!app.is_busy(), "/thinking is no turn");
    assert_eq!(submit(&mut app, "/init"), [command("init", "")]);
    assert!(
        app.is_busy(),
        "/init is a turn with the model: the guard holds"
    );
}
