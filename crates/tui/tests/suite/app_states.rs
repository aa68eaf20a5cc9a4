//! The App as a state machine: keys and session events in, commands out.

use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use tine_tui::{
    App, AppConfig, PermissionAnswer, PermissionMode, PermissionRequest, SlashCommandSpec,
    TurnEndReason, UiCommand, UiEvent,
};

use super::support::{app, ctrl, feed, key, screen, submit, type_text};

fn ended() -> UiEvent {
    UiEvent::TurnEnded {
        reason: TurnEndReason::Completed,
    }
}

fn ask(id: &str) -> UiEvent {
    UiEvent::PermissionRequest(PermissionRequest {
        id: id.into(),
        tool: "Bash".into(),
        summary: format!("echo {id}"),
        reason: None,
        always_rule: Some("Bash(echo:*)".into()),
        preview: None,
    })
}

#[test]
fn enter_submits_and_a_prompt_during_a_turn_waits_for_its_end() {
    let mut app = app();
    assert_eq!(
        submit(&mut app, "first"),
        [UiCommand::Submit("first".into())]
    );
    assert!(app.is_busy());
    assert_eq!(submit(&mut app, "second"), [], "queued, not sent");
    assert_eq!(submit(&mut app, "third"), []);
    assert_eq!(app.queued().count(), 2);
    assert_eq!(app.handle(ended()), [UiCommand::Submit("second".into())]);
    assert!(app.is_busy(), "the guard is held again");
    assert_eq!(app.handle(ended()), [UiCommand::Submit("third".into())]);
    assert_eq!(app.handle(ended()), []);
    assert!(!app.is_busy());
}

#[test]
fn newlines_by_shift_enter_alt_enter_ctrl_j_and_backslash() {
    let mut app = app();
    type_text(&mut app, "a");
    assert_eq!(
        app.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::SHIFT)),
        []
    );
    type_text(&mut app, "b");
    app.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::ALT));
    type_text(&mut app, "c");
    app.handle_key(ctrl('j'));
    type_text(&mut app, "d\\");
    assert_eq!(app.handle_key(key(KeyCode::Enter)), []);
    type_text(&mut app, "e");
    assert_eq!(app.input().text(), "a\nb\nc\nd\ne");
    assert_eq!(
        app.handle_key(key(KeyCode::Enter)),
        [UiCommand::Submit("a\nb\nc\nd\ne".into())]
    );
}

#[test]
fn up_recalls_earlier_prompts() {
    let mut app = App::new(AppConfig {
        history: vec!["from last session".into()],
        ..AppConfig::default()
    });
    submit(&mut app, "hello");
    app.handle(ended());
    app.handle_key(key(KeyCode::Up));
    assert_eq!(app.input().text(), "hello");
    app.handle_key(key(KeyCode::Up));
    assert_eq!(app.input().text(), "from last session");
    app.handle_key(key(KeyCode::Down));
    app.handle_key(key(KeyCode::Down));
    assert_eq!(app.input().text(), "");
}

#[test]
fn a_large_paste_is_sent_expanded() {
    let mut app = app();
    let big: String = (0..50).map(|i| format!("{i}\n")).collect();
    app.handle_paste(&big);
    assert_eq!(app.input().text(), "[Pasted text #1 +50 lines]");
    assert_eq!(
        app.handle_key(key(KeyCode::Enter)),
        [UiCommand::Submit(big)]
    );
}

#[test]
fn slash_commands_local_and_sent() {
    let mut app = App::new(AppConfig {
        custom_commands: vec![SlashCommandSpec::new("review", "Review the diff", true)],
        ..AppConfig::default()
    });
    assert_eq!(
        submit(&mut app, "/cost"),
        [UiCommand::SlashCommand {
            name: "cost".into(),
            args: String::new()
        }]
    );
    assert!(!app.is_busy(), "/cost is no turn");
    assert_eq!(submit(&mut app, "/help"), [], "help is drawn locally");
    assert!(screen(&mut app, 80, 40).contains("Help (esc to close)"));
    app.handle_key(key(KeyCode::Esc));
    assert!(!screen(&mut app, 80, 40).contains("Help (esc to close)"));
    assert_eq!(
        submit(&mut app, "/review src/lib.rs"),
        [UiCommand::SlashCommand {
            name: "review".into(),
            args: "src/lib.rs".into()
        }]
    );
    assert!(
        app.is_busy(),
        "a custom command is a prompt: it runs a turn"
    );
    assert_eq!(submit(&mut app, "/clear"), [], "queued behind the turn");
    let out = app.handle(ended());
    assert_eq!(
        out,
        [UiCommand::SlashCommand {
            name: "clear".into(),
            args: String::new()
        }]
    );
    assert!(app.transcript().is_empty(), "/clear empties the transcript");
    assert_eq!(submit(&mut app, "/nope"), []);
    assert!(screen(&mut app, 80, 20).contains("Unknown command /nope"));
    assert_eq!(submit(&mut app, "/exit"), [UiCommand::Exit]);
    assert!(app.should_exit());
}

#[test]
fn tab_completes_and_enter_runs_the_highlighted_command() {
    let mut app = app();
    type_text(&mut app, "/co");
    app.handle_key(key(KeyCode::Down));
    app.handle_key(key(KeyCode::Tab));
    assert_eq!(app.input().text(), "/cost ");
    let mut app = self::app();
    type_text(&mut app, "/mem");
    assert_eq!(
        app.handle_key(key(KeyCode::Enter)),
        [UiCommand::SlashCommand {
            name: "memory".into(),
            args: String::new()
        }]
    );
}

#[test]
fn permission_requests_are_asked_one_by_one() {
    let mut app = app();
    submit(&mut app, "go");
    feed(&mut app, [ask("a"), ask("b"), ask("c"), ask("d")]);
    assert_eq!(app.dialog().waiting(), 4);
    let answer = |id: &str, answer| UiCommand::AnswerPermission {
        id: id.into(),
        answer,
    };
    assert_eq!(
        app.handle_key(key(KeyCode::Enter)),
        [answer("a", PermissionAnswer::Once)]
    );
    assert_eq!(
        app.handle_key(key(KeyCode::Char('2'))),
        [answer("b", PermissionAnswer::Always)]
    );
    assert_eq!(
        app.handle_key(key(KeyCode::Char('3'))),
        [],
        "option 3 asks for feedback"
    );
    type_text(&mut app, "use printf");
    assert_eq!(
        app.handle_key(key(KeyCode::Enter)),
        [answer(
            "c",
            PermissionAnswer::No {
                feedback: Some("use printf".into())
            }
        )]
    );
    app.handle_key(key(KeyCode::Down));
    assert_eq!(
        app.handle_key(key(KeyCode::Esc)),
        [answer("d", PermissionAnswer::No { feedback: None })]
    );
    assert!(!app.dialog().is_open());
    assert!(
        app.is_busy(),
        "Esc in the dialog rejects the call, not the turn"
    );
}

#[test]
fn while_the_dialog_shows_keys_do_not_reach_the_prompt() {
    let mut app = app();
    submit(&mut app, "go");
    app.handle(ask("a"));
    type_text(&mut app, "xyz");
    assert_eq!(app.input().text(), "");
}

#[test]
fn esc_interrupts_once_and_queued_prompts_come_back_to_the_box() {
    let mut app = app();
    submit(&mut app, "long job");
    submit(&mut app, "later");
    app.handle(ask("a"));
    assert_eq!(
        app.handle_key(key(KeyCode::Esc)),
        [UiCommand::AnswerPermission {
            id: "a".into(),
            answer: PermissionAnswer::No { feedback: None }
        }]
    );
    assert_eq!(app.handle_key(key(KeyCode::Esc)), [UiCommand::Interrupt]);
    assert_eq!(app.handle_key(key(KeyCode::Esc)), [], "once is enough");
    assert_eq!(app.input().text(), "later");
    assert_eq!(app.queued().count(), 0);
    let out = app.handle(UiEvent::TurnEnded {
        reason: TurnEndReason::Interrupted,
    });
    assert_eq!(out, []);
    let shown = screen(&mut app, 60, 12);
    assert_eq!(shown.matches("Interrupted by user").count(), 1, "{shown}");
    assert!(!app.is_busy(), "the next prompt goes at once");
    assert_eq!(
        app.handle_key(key(KeyCode::Enter)),
        [UiCommand::Submit("later".into())]
    );
}

#[test]
fn an_interruption_from_the_session_is_shown() {
    let mut app = app();
    submit(&mut app, "go");
    app.handle(UiEvent::TurnEnded {
        reason: TurnEndReason::Interrupted,
    });
    assert!(screen(&mut app, 60, 10).contains("Interrupted by user"));
}

#[test]
fn shift_tab_cycles_the_permission_mode() {
    let mut app = app();
    let mut seen = Vec::new();
    for _ in 0..3 {
        let out = app.handle_key(key(KeyCode::BackTab));
        let [UiCommand::CyclePermissionMode { to }] = out.as_slice() else {
            panic!("{out:?}");
        };
        seen.push(*to);
    }
    assert_eq!(
        seen,
        [
            PermissionMode::AcceptEdits,
            PermissionMode::Plan,
            PermissionMode::Default
        ]
    );
    let mut bypass = App::new(AppConfig {
        bypass_available: true,
        permission_mode: PermissionMode::Plan,
        ..AppConfig::default()
    });
    bypass.handle_key(key(KeyCode::BackTab));
    assert_eq!(bypass.permission_mode(), PermissionMode::BypassPermissions);
}

#[test]
fn ctrl_d_exits_only_on_an_empty_prompt() {
    let mut app = app();
    type_text(&mut app, "ab");
    app.handle_key(key(KeyCode::Home));
    assert_eq!(app.handle_key(ctrl('d')), []);
    assert_eq!(app.input().text(), "b");
    app.handle_key(ctrl('u'));
    app.handle_key(ctrl('k'));
    assert_eq!(app.handle_key(ctrl('d')), [UiCommand::Exit]);
}

#[tokio::test(start_paused = true)]
async fn ctrl_c_clears_then_exits_when_pressed_again_soon() {
    let mut app = app();
    type_text(&mut app, "draft");
    assert_eq!(app.handle_key(ctrl('c')), []);
    assert_eq!(app.input().text(), "", "the first clears");
    assert!(screen(&mut app, 60, 6).contains("Press Ctrl-C again to exit"));
    tokio::time::advance(Duration::from_secs(3)).await;
    app.tick(tokio::time::Instant::now());
    assert!(
        !screen(&mut app, 60, 6).contains("Press Ctrl-C again"),
        "the hint expires"
    );
    assert_eq!(app.handle_key(ctrl('c')), [], "too late: armed again");
    tokio::time::advance(Duration::from_millis(500)).await;
    assert_eq!(app.handle_key(ctrl('c')), [UiCommand::Exit]);
}

#[tokio::test(start_paused = true)]
async fn ctrl_c_during_a_turn_interrupts_it() {
    let mut app = app();
    submit(&mut app, "go");
    assert_eq!(app.handle_key(ctrl('c')), [UiCommand::Interrupt]);
}

#[tokio::test(start_paused = true)]
async fn the_spinner_ticks_only_while_a_turn_runs() {
    let mut app = app();
    assert_eq!(app.next_wakeup(), None, "idle: no timer at all");
    submit(&mut app, "go");
    let first = app.next_wakeup().expect("a tick while busy");
    let before = screen(&mut app, 60, 8);
    tokio::time::advance(Duration::from_millis(130)).await;
    app.tick(tokio::time::Instant::now());
    assert!(app.is_dirty());
    assert!(app.next_wakeup() > Some(first));
    let after = screen(&mut app, 60, 8);
    assert_ne!(before, after, "the spinner moved");
    tokio::time::advance(Duration::from_secs(5)).await;
    app.tick(tokio::time::Instant::now());
    assert!(screen(&mut app, 60, 8).contains("(5s · esc to interrupt)"));
    app.handle(ended());
    assert_eq!(app.next_wakeup(), None);
}

#[test]
fn a_retry_that_discards_the_partial_reply_takes_it_off_screen() {
    let mut app = app();
    submit(&mut app, "go");
    feed(
        &mut app,
        [
            UiEvent::RequestStarted,
            UiEvent::TextDelta("half a rep".into()),
            UiEvent::Retry {
                message: "retrying in 2 s (attempt 2 of 10): overloaded".into(),
                discard_partial: true,
            },
        ],
    );
    let shown = screen(&mut app, 70, 10);
    assert!(!shown.contains("half a rep"), "{shown}");
    assert!(shown.contains("retrying in 2 s"), "{shown}");
    feed(
        &mut app,
        [
            UiEvent::RequestStarted,
            UiEvent::TextDelta("whole reply".into()),
        ],
    );
    let shown = screen(&mut app, 70, 10);
    assert!(shown.contains("● whole reply"), "{shown}");
    assert!(!shown.contains("retrying"), "{shown}");
}

#[test]
fn page_up_scrolls_and_home_end_scroll_only_on_an_empty_prompt() {
    let mut app = app();
    for i in 0..200 {
        app.handle(UiEvent::UserMessage(format!("message {i}")));
    }
    let bottom = screen(&mut app, 60, 12);
    assert!(bottom.contains("message 199"));
    app.handle_key(key(KeyCode::PageUp));
    let up = screen(&mut app, 60, 12);
    assert!(!up.contains("message 199"), "{up}");
    assert!(up.contains("scrolled"), "the status line says so: {up}");
    app.handle_key(key(KeyCode::End));
    assert!(screen(&mut app, 60, 12).contains("message 199"));
    app.handle_key(key(KeyCode::Home));
    assert!(screen(&mut app, 60, 12).starts_with("> message 0\n"));
    type_text(&mut app, "abc");
    app.handle_key(key(KeyCode::End));
    assert!(
        screen(&mut app, 60, 12).starts_with("> message 0\n"),
        "End moved the cursor only"
    );
    app.handle_key(KeyEvent::new(KeyCode::End, KeyModifiers::CONTROL));
    assert!(screen(&mut app, 60, 12).contains("message 199"));
}

#[test]
fn a_notice_during_a_reply_does_not_cut_the_reply() {
    let mut app = app();
    submit(&mut app, "go");
    feed(
        &mut app,
        [
            UiEvent::TextDelta("one **bo".into()),
            UiEvent::Notice {
                level: tine_tui::NoticeLevel::Info,
                text: "saved 2 memories".into(),
            },
            UiEvent::TextDelta("ld** two".into()),
        ],
    );
    let shown = screen(&mut app, 60, 10);
    assert!(shown.contains("● one bold two"), "{shown}");
}
