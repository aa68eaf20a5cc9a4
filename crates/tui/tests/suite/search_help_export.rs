//! Ctrl+R over the prompt history, the help panel on a short terminal, `/export` to the
//! clipboard, and drawing at tiny sizes.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use insta::assert_snapshot;
use serde_json::json;
use tine_session::{CommandOutput, Op, SessionEvent};
use tine_tui::{App, AppConfig};

use super::support::{
    app, ctrl, draw, ended, event, handle, key, plain, press, screen, styled, submit, text,
    type_text,
};

/// An app whose history file held `earlier` and which sent `sent` in this run.
fn app_with_history(earlier: &[&str], sent: &[&str]) -> App {
    let mut app = App::new(AppConfig::default());
    app.handle(event(SessionEvent::Configured(super::support::info())));
    app.add_history(earlier.iter().map(|s| (*s).to_owned()).collect());
    for prompt in sent {
        submit(&mut app, prompt);
        let end = ended(&app);
        handle(&mut app, end);
    }
    app
}

fn history() -> App {
    app_with_history(
        &[
            "refactor the parser",
            "write the notes",
            "explain the PARSER errors",
        ],
        &["run the tests", "fix the parser bug"],
    )
}

/// The prompt box's first text row (the row after its top border).
fn box_text(shown: &str) -> String {
    let rows: Vec<&str> = shown.lines().collect();
    let top = rows
        .iter()
        .rposition(|r| r.starts_with('╭'))
        .expect("the prompt box");
    rows[top + 1]
        .trim_matches(|c| c == '│' || c == ' ')
        .to_owned()
}

#[tokio::test(start_paused = true)]
async fn ctrl_r_finds_the_newest_match_then_older_ones_and_enter_sends_it() {
    let mut app = history();
    type_text(&mut app, "half typed");
    assert_eq!(press(&mut app, ctrl('r')), []);
    type_text(&mut app, "parser");
    let shown = screen(&mut app, 70, 12);
    assert!(shown.contains("search prompts: parser"), "{shown}");
    // This run's prompt is the newest.
    assert_eq!(box_text(&shown), "> fix the parser bug", "{shown}");
    assert_eq!(app.input_text(), "half typed", "the box's own text is kept");
    // The query is highlighted in the match.
    let buf = draw(&mut app, 70, 12);
    let marked = styled(&buf, 0, 12);
    assert!(
        marked.contains("fix the [fg:black bg:yellow B]parser[/] bug"),
        "{marked}"
    );
    // Ctrl+R: the next older match (case ignored), then the oldest.
    press(&mut app, ctrl('r'));
    assert_eq!(
        box_text(&screen(&mut app, 70, 12)),
        "> explain the PARSER errors"
    );
    press(&mut app, ctrl('r'));
    assert_eq!(box_text(&screen(&mut app, 70, 12)), "> refactor the parser");
    // Nothing older: the search says so and the match stays.
    press(&mut app, ctrl('r'));
    let shown = screen(&mut app, 70, 12);
    assert!(shown.contains("no matching prompt: parser"), "{shown}");
    assert_eq!(box_text(&shown), "> refactor the parser");
    // Enter sends the match at once (Claude Code's "accept and execute").
    assert_eq!(
        press(&mut app, key(KeyCode::Enter)),
        [Op::Prompt("refactor the parser".into())]
    );
    assert_eq!(app.input_text(), "");
    assert!(app.is_busy());
}

#[tokio::test(start_paused = true)]
async fn tab_puts_the_match_in_the_box_and_esc_gives_back_what_was_typed() {
    let mut app = history();
    type_text(&mut app, "draft");
    press(&mut app, ctrl('r'));
    type_text(&mut app, "notes");
    assert_eq!(press(&mut app, key(KeyCode::Tab)), []);
    assert_eq!(app.input_text(), "write the notes");
    assert!(!app.is_busy(), "Tab only edits");
    type_text(&mut app, " again");
    assert_eq!(
        press(&mut app, key(KeyCode::Enter)),
        [Op::Prompt("write the notes again".into())]
    );
    let end = ended(&app);
    handle(&mut app, end);

    // Esc, Ctrl+G, Ctrl+C and Backspace on an empty query cancel: the draft comes back.
    for cancel in [
        key(KeyCode::Esc),
        ctrl('g'),
        ctrl('c'),
        key(KeyCode::Backspace),
    ] {
        type_text(&mut app, "mine");
        press(&mut app, ctrl('r'));
        if cancel.code != KeyCode::Backspace {
            type_text(&mut app, "tests");
        }
        assert_eq!(press(&mut app, cancel), [], "{cancel:?}");
        assert_eq!(app.input_text(), "mine", "{cancel:?}");
        assert!(!screen(&mut app, 70, 12).contains("search prompts"));
        press(&mut app, ctrl('u'));
    }
    // Ctrl+C cancelled the search only: it did not arm the exit.
    assert!(!screen(&mut app, 70, 12).contains("Ctrl-C again"));
    // The prompt sent in this run is found too, newest first.
    press(&mut app, ctrl('r'));
    type_text(&mut app, "again");
    assert_eq!(
        box_text(&screen(&mut app, 70, 12)),
        "> write the notes again"
    );
}

#[tokio::test(start_paused = true)]
async fn the_search_line_snapshot() {
    let mut app = history();
    handle(&mut app, text("earlier reply"));
    press(&mut app, ctrl('r'));
    type_text(&mut app, "the");
    let buf = draw(&mut app, 60, 8);
    assert_snapshot!("prompt_search", plain(&buf));
}

/// The help panel's rows as a tall terminal shows them, without the border.
fn help_rows(app: &mut App, width: u16, height: u16) -> Vec<String> {
    screen(app, width, height)
        .lines()
        .skip_while(|r| !r.contains("Help (esc to close)"))
        .skip(1)
        .take_while(|r| !r.starts_with('╰'))
        .map(|r| r.trim_matches(|c| c == '│' || c == ' ').to_owned())
        .collect()
}

#[tokio::test(start_paused = true)]
async fn the_help_panel_scrolls_on_a_short_terminal_and_every_row_can_be_seen() {
    let mut app = app();
    submit(&mut app, "/help");
    let all = help_rows(&mut app, 100, 80);
    assert!(all.iter().any(|r| r.starts_with("ctrl+r")), "{all:?}");
    let last = all.last().unwrap().clone();

    let (w, h) = (100, 16);
    let first = screen(&mut app, w, h);
    assert!(first.contains("↓ more"), "{first}");
    assert!(!first.contains(&last), "cut off at first:\n{first}");
    // Down a row at a time until the end, collecting what shows: every row, in order.
    let mut seen: Vec<String> = help_rows(&mut app, w, h);
    for _ in 0..all.len() {
        press(&mut app, key(KeyCode::Down));
        for row in help_rows(&mut app, w, h) {
            if !seen.contains(&row) || row.is_empty() {
                seen.push(row);
            }
        }
    }
    let seen: Vec<String> = seen.into_iter().filter(|r| !r.is_empty()).collect();
    let wanted: Vec<String> = all.iter().filter(|r| !r.is_empty()).cloned().collect();
    assert_eq!(seen, wanted);
    let bottom = screen(&mut app, w, h);
    assert!(bottom.contains(&last), "{bottom}");
    assert!(
        bottom.contains("↑ more") && !bottom.contains("↓ more"),
        "{bottom}"
    );
    // PageUp goes back a page, Home to the top; the panel stays open while it scrolls.
    press(&mut app, key(KeyCode::PageUp));
    let paged = screen(&mut app, w, h);
    assert!(paged.contains("↑/↓ more"), "{paged}");
    press(&mut app, key(KeyCode::Home));
    assert_eq!(screen(&mut app, w, h), first);
    press(&mut app, key(KeyCode::PageDown));
    press(&mut app, key(KeyCode::End));
    assert_eq!(screen(&mut app, w, h), bottom);
    // Esc closes it; opened again it starts at the top.
    press(&mut app, key(KeyCode::Esc));
    assert!(!screen(&mut app, w, h).contains("Help (esc to close)"));
    submit(&mut app, "/help");
    assert_eq!(screen(&mut app, w, h), first);
    // Where it all fits there is no hint, and ↓ closes it as any key does (then goes on to
    // the prompt box).
    assert!(!screen(&mut app, 100, 80).contains("more ("));
    press(&mut app, key(KeyCode::Down));
    assert!(!screen(&mut app, 100, 80).contains("Help (esc to close)"));
}

#[tokio::test(start_paused = true)]
async fn nothing_panics_at_tiny_sizes_whatever_is_open() {
    type Setup = fn(&mut App);
    let states: [(&str, Setup); 9] = [
        ("plain", |_| {}),
        ("help", |app| {
            submit(app, "/help");
        }),
        ("search", |app| {
            submit(app, "an earlier prompt");
            let end = ended(app);
            handle(app, end);
            press(app, ctrl('r'));
            type_text(app, "earl");
        }),
        ("streaming", |app| {
            submit(app, "go");
            handle(app, text("# Title\n\n```rust\nfn main() {}\n"));
        }),
        ("help while streaming, with a queued prompt", |app| {
            submit(app, "go");
            handle(app, text("a reply"));
            submit(app, "next");
            submit(app, "/help");
        }),
        ("a long draft", |app| {
            type_text(app, &"word ".repeat(60));
        }),
        ("a permission dialog", |app| {
            submit(app, "go");
            handle(app, ask());
        }),
        ("the tasks panel", |app| {
            press(app, ctrl('t'));
        }),
        ("the model list", |app| {
            handle(
                app,
                event(SessionEvent::CommandOutput(CommandOutput {
                    command: "model".into(),
                    text: "models".into(),
                    is_error: false,
                    data: json!({"model": "m", "choices": [
                        {"name": "opus", "id": "o", "about": "the most capable"},
                        {"name": "haiku", "id": "h", "about": "the fastest"}
                    ]}),
                })),
            );
        }),
    ];
    for (name, setup) in states {
        let mut app = app();
        setup(&mut app);
        for (w, h) in [
            (20, 5),
            (10, 3),
            (1, 1),
            (2, 2),
            (5, 1),
            (1, 10),
            (40, 4),
            (0, 0),
        ] {
            // A panic here fails the test with the state and size in its message.
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                draw(&mut app, w, h);
            }))
            .unwrap_or_else(|_| panic!("{name} at {w}x{h} panicked"));
            // Keys that scroll or search at that size.
            for k in [
                key(KeyCode::Down),
                key(KeyCode::PageDown),
                key(KeyCode::End),
            ] {
                app.handle_key(k);
            }
        }
    }
}

/// The session asks whether a command may run.
fn ask() -> tine_session::Event {
    event(SessionEvent::PermissionRequest(
        tine_session::PermissionRequest {
            id: tine_session::QuestionId(1),
            tool: "Bash".into(),
            input: json!({"command": "cargo test --workspace"}),
            target: "cargo test --workspace".into(),
            reason: String::new(),
            always: tine_session::AlwaysAllow::saved(vec!["Bash(cargo test:*)".parse().unwrap()]),
            preview: None,
            tool_use_id: None,
        },
    ))
}

/// The session's answer to `/export --clipboard`.
fn exported(text: &str) -> tine_session::Event {
    event(SessionEvent::CommandOutput(CommandOutput {
        command: "export".into(),
        text: "The conversation as plain text, for the clipboard.".into(),
        is_error: false,
        data: json!({"clipboard": text, "lines": text.lines().count()}),
    }))
}

#[tokio::test(start_paused = true)]
async fn export_without_a_file_copies_and_with_one_writes() {
    let mut app = app();
    assert_eq!(
        submit(&mut app, "/export"),
        [Op::Command {
            name: "export".into(),
            args: tine_session::EXPORT_CLIPBOARD.into()
        }]
    );
    assert_eq!(
        submit(&mut app, "/export talk.txt"),
        [Op::Command {
            name: "export".into(),
            args: "talk.txt".into()
        }]
    );
    assert_eq!(app.take_clipboard(), None);
    handle(&mut app, exported("> hi\n\nHello.\n"));
    assert_eq!(app.take_clipboard().as_deref(), Some("> hi\n\nHello.\n"));
    assert_eq!(app.take_clipboard(), None, "once");
    let shown = screen(&mut app, 80, 12);
    assert!(shown.contains("Copied to clipboard (3 lines)"), "{shown}");
    assert!(!shown.contains("for the clipboard"), "{shown}");
    assert!(shown.contains("> /export\n"), "shown as typed:\n{shown}");
}

#[tokio::test(start_paused = true)]
async fn a_conversation_too_long_for_one_osc_52_is_cut_and_said_so() {
    let mut app = App::new(AppConfig {
        tmux: true,
        ..AppConfig::default()
    });
    app.handle(event(SessionEvent::Configured(super::support::info())));
    let line = format!("{}\n", "x".repeat(99));
    let long = line.repeat(2000);
    handle(&mut app, exported(&long));
    let copied = app.take_clipboard().unwrap();
    assert!(copied.len() < long.len() && long.starts_with(&copied));
    // What goes to the terminal fits in 100 KB: base64 of the text, and the escape's frame.
    assert!(copied.len().div_ceil(3) * 4 + 8 <= 100_000);
    let kept = copied.lines().count();
    let shown = screen(&mut app, 200, 10);
    assert!(
        shown.contains(&format!(
            "Copied the first {kept} of 2000 lines to clipboard"
        )),
        "{shown}"
    );
    assert!(shown.contains("/export FILE"), "{shown}");
    assert!(shown.contains("set-clipboard on"), "{shown}");
}

#[test]
fn a_capital_typed_with_shift_joins_the_query() {
    let k = KeyEvent::new(KeyCode::Char('P'), KeyModifiers::SHIFT);
    let mut app = history();
    press(&mut app, ctrl('r'));
    press(&mut app, k);
    press(&mut app, key(KeyCode::Char('a')));
    assert_eq!(
        press(&mut app, key(KeyCode::Enter)),
        [Op::Prompt("fix the parser bug".into())]
    );
}
