use super::*;

fn typed(text: &str) -> PromptInput {
    let mut input = PromptInput::new(Vec::new());
    input.insert_str(text);
    input
}

#[test]
fn editing_keys_move_and_kill_like_readline() {
    let mut input = typed("hello brave new world");
    input.word_left();
    assert_eq!(&input.text()[input.cursor()..], "world");
    input.kill_word_back();
    assert_eq!(input.text(), "hello brave world");
    input.yank();
    assert_eq!(input.text(), "hello brave new world");
    input.home();
    assert_eq!(input.cursor(), 0);
    input.word_right();
    assert_eq!(&input.text()[..input.cursor()], "hello");
    input.kill_to_end();
    assert_eq!(input.text(), "hello");
    input.end();
    input.kill_to_start();
    assert!(input.is_empty());
}

#[test]
fn home_and_end_work_on_the_current_line() {
    let mut input = typed("first\nsecond line");
    input.home();
    assert_eq!(&input.text()[input.cursor()..], "second line");
    input.left();
    input.home();
    assert_eq!(input.cursor(), 0);
    input.end();
    assert_eq!(input.cursor(), "first".len());
}

#[test]
fn up_and_down_move_between_lines_then_through_history() {
    let mut input = PromptInput::new(vec!["old one".into(), "old two".into()]);
    input.insert_str("draft\nline");
    input.up();
    assert_eq!(input.text(), "draft\nline", "first the line above");
    input.up();
    assert_eq!(input.text(), "old two");
    input.up();
    assert_eq!(input.text(), "old one");
    input.up();
    assert_eq!(input.text(), "old one", "the oldest stays");
    input.down();
    assert_eq!(input.text(), "old two");
    input.down();
    assert_eq!(input.text(), "draft\nline", "back to the draft");
}

#[test]
fn submissions_join_the_history_once() {
    let mut input = typed("ls");
    assert_eq!(input.take_submission(), "ls");
    input.insert_str("ls");
    let _ = input.take_submission();
    assert_eq!(input.history(), ["ls"]);
    assert!(input.is_empty());
}

#[test]
fn large_pastes_collapse_and_expand_on_submit() {
    let mut input = typed("look: ");
    let big: String = (1..=120).map(|i| format!("line {i}\n")).collect();
    input.paste(&big);
    assert_eq!(input.text(), "look: [Pasted text #1 +120 lines]");
    input.insert_str(" and ");
    input.paste("short");
    assert_eq!(input.text(), "look: [Pasted text #1 +120 lines] and short");
    let sent = input.take_submission();
    assert_eq!(sent, format!("look: {big} and short"));
}

#[test]
fn a_paste_placeholder_edited_away_is_not_expanded() {
    let mut input = PromptInput::new(Vec::new());
    input.paste(&"x\n".repeat(10));
    input.backspace();
    let sent = input.take_submission();
    assert_eq!(sent, "[Pasted text #1 +10 lines");
}

#[test]
fn pasted_line_endings_are_normalized() {
    let mut input = PromptInput::new(Vec::new());
    input.paste("a\r\nb\rc");
    assert_eq!(input.text(), "a\nb\nc");
}

#[test]
fn trailing_backslash_becomes_a_newline() {
    let mut input = typed("first \\");
    assert!(input.backslash_newline());
    input.insert_str("second");
    assert_eq!(input.text(), "first \nsecond");
    assert!(!input.backslash_newline());
}

#[test]
fn rows_wrap_and_place_the_cursor() {
    let mut input = typed("abcdefgh\nij");
    let (rows, cursor) = input.rows(5);
    assert_eq!(rows, ["abcde", "fgh", "ij"]);
    assert_eq!(cursor, (2, 2));
    input.home();
    input.up();
    let (_, cursor) = input.rows(5);
    assert_eq!(cursor, (0, 0));
    let full = typed("abcde");
    assert_eq!(full.rows(5), (vec!["abcde".into(), String::new()], (1, 0)));
}

#[test]
fn control_characters_typed_or_pasted_are_dropped() {
    let mut input = PromptInput::new(Vec::new());
    input.paste("a\u{1b}[31mb\tc");
    assert_eq!(input.text(), "a[31mb    c");
}
