use serde_json::json;

use super::*;

fn request(id: u64, rule: Option<&str>) -> PermissionRequest {
    PermissionRequest {
        id: QuestionId(id),
        tool: "Bash".into(),
        input: json!({"command": "rm -rf build"}),
        target: "rm -rf build".into(),
        reason: String::new(),
        always: rule.and_then(|r| AlwaysAllow::saved(vec![r.parse().unwrap()])),
        preview: None,
        tool_use_id: None,
    }
}

fn answer(id: u64, answer: PermissionAnswer) -> Op {
    Op::Answer {
        question: QuestionId(id),
        answer: Answer::Permission(answer),
    }
}

fn stuck(id: u64) -> StuckQuestion {
    StuckQuestion {
        id: QuestionId(id),
        tool: "Bash".into(),
        input: json!({"command": "cargo tset"}),
        error: "no such command: tset".into(),
        repeats: 3,
    }
}

#[test]
fn a_stuck_model_is_asked_in_the_queue_yes_goes_on_and_esc_or_no_stops() {
    let mut d = PermissionDialog::default();
    d.push(request(1, None), None);
    d.push_stuck(stuck(11), None);
    d.push_stuck(stuck(12), None);
    d.push_stuck(stuck(13), None);
    assert!(d.choose(Choice::Once).is_some());
    assert_eq!(d.choices(), [Choice::Once, Choice::No]);
    let keep = |id: u64, decision| Op::Answer {
        question: QuestionId(id),
        answer: Answer::Stuck(decision),
    };
    assert_eq!(
        d.choose(Choice::Once),
        Some(keep(11, StuckDecision::KeepGoing))
    );
    assert_eq!(
        d.choose(Choice::No),
        Some(keep(12, StuckDecision::Stop)),
        "No stops at once, without a feedback line"
    );
    assert!(!d.is_typing_feedback());
    assert_eq!(d.reject(), Some(keep(13, StuckDecision::Stop)));
    assert!(!d.is_open());
}

#[test]
fn requests_are_answered_one_by_one_in_order() {
    let mut d = PermissionDialog::default();
    d.push(request(1, Some("Bash(rm:*)")), None);
    d.push(request(2, None), None);
    assert_eq!(
        d.choose(Choice::Once),
        Some(answer(1, PermissionAnswer::Once))
    );
    assert_eq!(d.current().map(Ask::id), Some(QuestionId(2)));
    assert_eq!(
        d.choices(),
        [Choice::Once, Choice::No],
        "no rule, no option 2"
    );
    assert_eq!(
        d.reject(),
        Some(answer(2, PermissionAnswer::Deny { feedback: None }))
    );
    assert!(!d.is_open());
}

#[test]
fn no_opens_the_feedback_line_then_sends_it() {
    let mut d = PermissionDialog::default();
    d.push(request(1, Some("Bash(rm:*)")), None);
    assert_eq!(d.choose(Choice::No), None);
    assert!(d.is_typing_feedback());
    if let Some(f) = d.feedback_mut() {
        f.push_str("use cargo clean");
    }
    assert_eq!(
        d.choose(Choice::No),
        Some(answer(
            1,
            PermissionAnswer::Deny {
                feedback: Some("use cargo clean".into())
            }
        ))
    );
}

#[test]
fn selection_stays_within_the_options() {
    let mut d = PermissionDialog::default();
    d.push(request(1, Some("r")), None);
    d.move_selection(5);
    assert_eq!(d.selected(), Choice::No);
    d.move_selection(-9);
    assert_eq!(d.selected(), Choice::Once);
    assert_eq!(d.choice_by_number(2), Some(Choice::Always));
    assert_eq!(d.choice_by_number(4), None);
}

#[test]
fn a_withdrawn_request_leaves_the_queue() {
    let mut d = PermissionDialog::default();
    d.push(request(1, None), None);
    d.push(request(2, None), None);
    d.withdraw(QuestionId(1));
    assert_eq!(d.current().map(Ask::id), Some(QuestionId(2)));
    d.withdraw(QuestionId(2));
    assert!(!d.is_open());
}

#[test]
fn files_are_shown_relative_to_the_project() {
    let mut d = PermissionDialog::default();
    let mut write = request(1, None);
    write.tool = "Write".into();
    write.target = "/p/src/a.rs".into();
    d.push(write, Some(Path::new("/p")));
    assert!(matches!(d.current(), Some(Ask::Permission { shown, .. }) if shown == "src/a.rs"));
}
