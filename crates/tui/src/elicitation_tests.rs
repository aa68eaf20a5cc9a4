use serde_json::json;

use super::*;

fn dialog() -> ElicitationDialog {
    let mut dialog = ElicitationDialog::default();
    dialog.push(ElicitationQuestion {
        id: QuestionId(7),
        server: "srv".into(),
        message: "Which branch?".into(),
        schema: Some(json!({
            "type": "object",
            "properties": {
                "branch": {"type": "string"},
                "depth": {"type": "integer"},
                "force": {"type": "boolean"},
                "mode": {"type": "string", "enum": ["fast", "safe"]}
            },
            "required": ["branch"]
        })),
        url: None,
    });
    dialog
}

fn press(dialog: &mut ElicitationDialog, code: KeyCode) -> Vec<Op> {
    dialog.key(KeyEvent::new(code, KeyModifiers::NONE))
}

fn type_text(dialog: &mut ElicitationDialog, text: &str) {
    for c in text.chars() {
        press(dialog, KeyCode::Char(c));
    }
}

fn answered(answer: ElicitationAnswer) -> Vec<Op> {
    vec![Op::Answer {
        question: QuestionId(7),
        answer: Answer::Elicitation(answer),
    }]
}

#[test]
fn accept_sends_the_typed_values_and_checks_them_first() {
    let mut d = dialog();
    // Accept with the required field empty: refused, focus back on it.
    for _ in 0..4 {
        press(&mut d, KeyCode::Enter);
    }
    assert!(press(&mut d, KeyCode::Enter).is_empty());
    assert_eq!(d.error.as_deref(), Some("branch is required"));
    assert_eq!(d.focus, 0);
    type_text(&mut d, "main");
    press(&mut d, KeyCode::Enter);
    type_text(&mut d, "x");
    for _ in 0..3 {
        press(&mut d, KeyCode::Enter);
    }
    assert!(press(&mut d, KeyCode::Enter).is_empty(), "x is no number");
    assert_eq!(d.focus, 1);
    press(&mut d, KeyCode::Backspace);
    type_text(&mut d, "3");
    press(&mut d, KeyCode::Enter);
    press(&mut d, KeyCode::Char(' '));
    press(&mut d, KeyCode::Enter);
    press(&mut d, KeyCode::Right);
    press(&mut d, KeyCode::Right);
    press(&mut d, KeyCode::Enter);
    let sent = press(&mut d, KeyCode::Enter);
    assert_eq!(
        sent,
        answered(ElicitationAnswer::Accept(Some(json!({
            "branch": "main",
            "depth": 3,
            "force": true,
            "mode": "safe",
        }))))
    );
    assert!(!d.is_open());
}

#[test]
fn decline_and_cancel_and_withdrawal() {
    let mut d = dialog();
    press(&mut d, KeyCode::Up);
    assert_eq!(
        press(&mut d, KeyCode::Enter),
        answered(ElicitationAnswer::Decline)
    );
    let mut d = dialog();
    assert_eq!(
        press(&mut d, KeyCode::Esc),
        answered(ElicitationAnswer::Cancel)
    );
    let mut d = dialog();
    d.withdraw(QuestionId(7));
    assert!(!d.is_open());
}

#[test]
fn the_dialog_shows_the_message_fields_and_buttons() {
    let mut d = dialog();
    type_text(&mut d, "dev");
    let area = Rect::new(0, 0, 60, 20);
    let mut buf = Buffer::empty(area);
    let cursor = d.render_over(area, &mut buf);
    let text: String = (0..area.height)
        .map(|y| {
            let row: String = (0..area.width)
                .map(|x| buf[(x, y)].symbol().to_owned())
                .collect();
            row.trim_end().to_owned() + "\n"
        })
        .collect();
    for needle in [
        "MCP server srv asks",
        "Which branch?",
        "branch*: dev",
        "depth: ",
        "force: [ ]",
        "mode: ‹ (choose) › of 2",
        "Accept",
        "Decline",
    ] {
        assert!(text.contains(needle), "{needle:?} not in\n{text}");
    }
    assert!(cursor.is_some(), "the text field in focus has the cursor");
}
