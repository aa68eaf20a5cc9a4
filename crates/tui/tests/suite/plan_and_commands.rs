//! Issue 18 in the UI: the plan approval's options in Claude Code's order (Enter auto-accepts
//! edits), and the session's built-ins `/thinking` and `/init` in the command list and help.

use crossterm::event::KeyCode;
use tine_tui::{PermissionAnswer, PermissionRequest, UiCommand, UiEvent};

use super::support::{app, key, screen, submit, type_text};

fn plan(id: &str) -> UiEvent {
    UiEvent::PermissionRequest(PermissionRequest {
        id: id.into(),
        tool: "ExitPlanMode".into(),
        summary: "1. Write x.txt\n2. Run the tests".into(),
        reason: None,
        always_rule: Some("acceptEdits".into()),
        preview: None,
    })
}

fn answer(id: &str, answer: PermissionAnswer) -> UiCommand {
    UiCommand::AnswerPermission {
        id: id.into(),
        answer,
    }
}

#[test]
fn the_plan_approval_offers_auto_accept_first_then_manual_then_keep_planning() {
    let mut app = app();
    submit(&mut app, "plan it");
    app.handle(plan("p1"));
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
        app.handle_key(key(KeyCode::Enter)),
        [answer("p1", PermissionAnswer::Always)]
    );

    app.handle(plan("p2"));
    assert_eq!(
        app.handle_key(key(KeyCode::Char('2'))),
        [answer("p2", PermissionAnswer::Once)],
        "option 2 approves with edits asked one by one"
    );

    app.handle(plan("p3"));
    app.handle_key(key(KeyCode::Down));
    app.handle_key(key(KeyCode::Down));
    assert_eq!(
        app.handle_key(key(KeyCode::Enter)),
        [],
        "option 3 asks what to change"
    );
    type_text(&mut app, "add a test first");
    assert_eq!(
        app.handle_key(key(KeyCode::Enter)),
        [answer(
            "p3",
            PermissionAnswer::No {
                feedback: Some("add a test first".into())
            }
        )]
    );
}

#[test]
fn other_permission_requests_keep_yes_first() {
    let mut app = app();
    submit(&mut app, "go");
    app.handle(UiEvent::PermissionRequest(PermissionRequest {
        id: "b1".into(),
        tool: "Bash".into(),
        summary: "rm -rf build".into(),
        reason: None,
        always_rule: Some("Bash(rm:*)".into()),
        preview: None,
    }));
    let shown = screen(&mut app, 80, 30);
    assert!(shown.contains("❯ 1. Yes"), "{shown}");
    assert!(shown.contains("Do you want to proceed?"), "{shown}");
    assert_eq!(
        app.handle_key(key(KeyCode::Enter)),
        [answer("b1", PermissionAnswer::Once)]
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
    app.handle_key(key(KeyCode::Esc));
    assert_eq!(
        submit(&mut app, "/thinking off"),
        [UiCommand::SlashCommand {
            name: "thinking".into(),
            args: "off".into()
        }]
    );
    assert!(!app.is_busy(), "/thinking is no turn");
    assert_eq!(
        submit(&mut app, "/init"),
        [UiCommand::SlashCommand {
            name: "init".into(),
            args: String::new()
        }]
    );
    assert!(
        app.is_busy(),
        "/init is a turn with the model: the guard holds"
    );
}
