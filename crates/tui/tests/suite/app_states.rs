//! The App as a state machine: keys and session events in, ops out.

use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::json;
use tine_session::{
    Answer, CommandInfo, CommandSource, NoticeLevel, Op, PermissionAnswer, PermissionMode,
    PermissionRequest, QueryEvent, QuestionId, SessionEvent, TurnOutcome,
};
use tine_tui::{App, AppConfig};

use super::support::{
    answering, app, app_with, ctrl, ended, ended_as, event, feed, handle, key, last_op, press,
    query, request, screen, submit, text, turn_end, type_text,
};

fn ask(id: u64) -> tine_session::Event {
    event(SessionEvent::PermissionRequest(PermissionRequest {
        id: QuestionId(id),
        tool: "Bash".into(),
        input: json!({"command": format!("echo {id}")}),
        target: format!("echo {id}"),
        reason: String::new(),
        always: tine_session::AlwaysAllow::saved(vec!["Bash(echo:*)".parse().unwrap()]),
        preview: None,
        tool_use_id: None,
    }))
}

fn command(name: &str, args: &str) -> Op {
    Op::Command {
        name: name.into(),
        args: args.into(),
    }
}

fn answer(id: u64, answer: PermissionAnswer) -> Op {
    Op::Answer {
        question: QuestionId(id),
        answer: Answer::Permission(answer),
    }
}

#[test]
fn enter_submits_and_a_prompt_during_a_turn_waits_for_its_end() {
    let mut app = app();
    assert_eq!(submit(&mut app, "first"), [Op::Prompt("first".into())]);
    assert!(app.is_busy());
    assert_eq!(submit(&mut app, "second"), [], "queued, not sent");
    assert_eq!(submit(&mut app, "third"), []);
    assert_eq!(app.queued().count(), 2);
    let end = ended(&app);
    assert_eq!(handle(&mut app, end), [Op::Prompt("second".into())]);
    assert!(app.is_busy(), "the guard is held again");
    let end = ended(&app);
    assert_eq!(handle(&mut app, end), [Op::Prompt("third".into())]);
    let end = ended(&app);
    assert_eq!(handle(&mut app, end), []);
    assert!(!app.is_busy());
}

#[test]
fn the_guard_is_released_by_its_own_turns_end_only() {
    let mut app = app();
    submit(&mut app, "first");
    let ours = app.turn_op();
    assert!(ours.is_some(), "the app was told its op's id");
    submit(&mut app, "second");
    // A turn of another op (the session's own) ends meanwhile: not ours.
    let other = tine_session::Event {
        id: Some(tine_session::OpId(u64::MAX)),
        msg: SessionEvent::TurnEnded(super::support::turn_end(TurnOutcome::Completed)),
    };
    assert_eq!(handle(&mut app, other), []);
    assert_eq!(app.turn_op(), ours);
    let end = ended(&app);
    assert_eq!(handle(&mut app, end), [Op::Prompt("second".into())]);
}

#[test]
fn newlines_by_shift_enter_alt_enter_ctrl_j_and_backslash() {
    let mut app = app();
    type_text(&mut app, "a");
    assert_eq!(
        press(&mut app, KeyEvent::new(KeyCode::Enter, KeyModifiers::SHIFT)),
        []
    );
    type_text(&mut app, "b");
    press(&mut app, KeyEvent::new(KeyCode::Enter, KeyModifiers::ALT));
    type_text(&mut app, "c");
    press(&mut app, ctrl('j'));
    type_text(&mut app, "d\\");
    assert_eq!(press(&mut app, key(KeyCode::Enter)), []);
    type_text(&mut app, "e");
    assert_eq!(app.input_text(), "a\nb\nc\nd\ne");
    assert_eq!(
        press(&mut app, key(KeyCode::Enter)),
        [Op::Prompt("a\nb\nc\nd\ne".into())]
    );
}

#[test]
fn up_recalls_earlier_prompts() {
    let mut app = App::new(AppConfig {
        history: vec!["from last session".into()],
        ..AppConfig::default()
    });
    submit(&mut app, "hello");
    let end = ended(&app);
    handle(&mut app, end);
    press(&mut app, key(KeyCode::Up));
    assert_eq!(app.input_text(), "hello");
    press(&mut app, key(KeyCode::Up));
    assert_eq!(app.input_text(), "from last session");
    press(&mut app, key(KeyCode::Down));
    press(&mut app, key(KeyCode::Down));
    assert_eq!(app.input_text(), "");
}

#[test]
fn a_large_paste_is_sent_expanded() {
    let mut app = app();
    let big: String = (0..50).map(|i| format!("{i}\n")).collect();
    app.handle_paste(&big);
    assert_eq!(app.input_text(), "[Pasted text #1 +50 lines]");
    assert_eq!(press(&mut app, key(KeyCode::Enter)), [Op::Prompt(big)]);
}

#[test]
fn slash_commands_local_and_sent() {
    let mut app = app_with(|info| {
        info.commands.push(CommandInfo {
            name: "review".into(),
            description: "Review the diff".into(),
            runs_turn: true,
            source: CommandSource::Custom,
        });
    });
    assert_eq!(submit(&mut app, "/cost"), [command("cost", "")]);
    assert!(!app.is_busy(), "/cost is no turn");
    assert_eq!(submit(&mut app, "/help"), [], "help is drawn locally");
    assert!(screen(&mut app, 80, 40).contains("Help (esc to close)"));
    press(&mut app, key(KeyCode::Esc));
    assert!(!screen(&mut app, 80, 40).contains("Help (esc to close)"));
    assert_eq!(
        submit(&mut app, "/review src/lib.rs"),
        [command("review", "src/lib.rs")]
    );
    assert!(
        app.is_busy(),
        "a custom command is a prompt: it runs a turn"
    );
    assert_eq!(submit(&mut app, "/clear"), [], "queued behind the turn");
    let end = ended(&app);
    assert_eq!(handle(&mut app, end), [command("clear", "")]);
    assert!(app.transcript_is_empty(), "/clear empties the transcript");
    // An unknown `/word` reaches the model as text, as `-p` sends it.
    assert_eq!(
        submit(&mut app, "/nope at all"),
        [Op::Prompt("/nope at all".into())]
    );
    let end = ended(&app);
    handle(&mut app, end);
    assert_eq!(submit(&mut app, "/exit"), []);
    assert!(app.should_exit());
}

#[test]
fn a_quiet_commands_turn_is_not_the_uis() {
    let mut app = app();
    let ops = submit(&mut app, "/cost");
    assert_eq!(ops, [command("cost", "")]);
    let cost = last_op();
    // The session answers the command in a turn of its op: no spinner for it, and a prompt
    // typed meanwhile goes at once.
    handle(&mut app, answering(cost, SessionEvent::TurnStarted));
    assert!(!app.is_busy());
    assert_eq!(submit(&mut app, "go"), [Op::Prompt("go".into())]);
    let go = app.turn_op();
    let end = answering(
        cost,
        SessionEvent::TurnEnded(turn_end(TurnOutcome::Completed)),
    );
    handle(&mut app, end);
    assert_eq!(
        app.turn_op(),
        go,
        "the quiet command's end is not the prompt's"
    );
}

#[test]
fn a_turn_the_session_starts_itself_holds_the_guard_while_it_runs() {
    let mut app = app();
    let reports = answering(
        tine_session::OpId(900),
        SessionEvent::AgentReports(vec![tine_session::AgentReport {
            id: "a_1".into(),
            description: "module survey".into(),
            state: tine_session::TaskState::Completed,
        }]),
    );
    handle(&mut app, reports);
    handle(
        &mut app,
        answering(tine_session::OpId(900), SessionEvent::TurnStarted),
    );
    assert!(app.is_busy());
    assert!(
        screen(&mut app, 90, 10)
            .contains("agent \"module survey\" completed; its report goes to the model")
    );
    assert_eq!(
        submit(&mut app, "next"),
        [],
        "queued behind the report's turn"
    );
    let end = answering(
        tine_session::OpId(900),
        SessionEvent::TurnEnded(turn_end(TurnOutcome::Completed)),
    );
    assert_eq!(handle(&mut app, end), [Op::Prompt("next".into())]);
}

#[test]
fn tab_completes_and_enter_runs_the_highlighted_command() {
    let mut app = app();
    type_text(&mut app, "/co");
    // compact, context, cost: the third.
    press(&mut app, key(KeyCode::Down));
    press(&mut app, key(KeyCode::Down));
    press(&mut app, key(KeyCode::Tab));
    assert_eq!(app.input_text(), "/cost ");
    let mut app = self::app();
    type_text(&mut app, "/mem");
    assert_eq!(
        press(&mut app, key(KeyCode::Enter)),
        [command("memory", "")]
    );
}

#[test]
fn permission_requests_are_asked_one_by_one() {
    let mut app = app();
    submit(&mut app, "go");
    feed(&mut app, [ask(1), ask(2), ask(3), ask(4)]);
    assert_eq!(app.questions_waiting(), 4);
    assert_eq!(
        press(&mut app, key(KeyCode::Enter)),
        [answer(1, PermissionAnswer::Once)]
    );
    assert_eq!(
        press(&mut app, key(KeyCode::Char('2'))),
        [answer(2, PermissionAnswer::Always)]
    );
    assert_eq!(
        press(&mut app, key(KeyCode::Char('3'))),
        [],
        "option 3 asks for feedback"
    );
    type_text(&mut app, "use printf");
    assert_eq!(
        press(&mut app, key(KeyCode::Enter)),
        [answer(
            3,
            PermissionAnswer::Deny {
                feedback: Some("use printf".into())
            }
        )]
    );
    press(&mut app, key(KeyCode::Down));
    assert_eq!(
        press(&mut app, key(KeyCode::Esc)),
        [answer(4, PermissionAnswer::Deny { feedback: None })]
    );
    assert_eq!(app.questions_waiting(), 0);
    assert!(
        app.is_busy(),
        "Esc in the dialog rejects the call, not the turn"
    );
}

#[test]
fn a_withdrawn_request_leaves_the_dialog_and_a_late_answers_failure_is_not_shown() {
    let mut app = app();
    submit(&mut app, "go");
    feed(&mut app, [ask(1), ask(2)]);
    feed(
        &mut app,
        [event(SessionEvent::PermissionWithdrawn {
            question: QuestionId(1),
        })],
    );
    assert_eq!(app.questions_waiting(), 1);
    let ops = press(&mut app, key(KeyCode::Enter));
    assert_eq!(ops, [answer(2, PermissionAnswer::Once)]);
    // Had it been withdrawn meanwhile, the session says the answer failed: logged only.
    let failed = SessionEvent::OpFailed {
        message: "no open question question-2".into(),
    };
    handle(&mut app, answering(last_op(), failed));
    assert!(!screen(&mut app, 60, 12).contains("question-2"));
    // Any other op's failure is said.
    let failed = SessionEvent::OpFailed {
        message: "bypassPermissions is disabled by settings".into(),
    };
    handle(&mut app, answering(tine_session::OpId(777), failed));
    assert!(screen(&mut app, 60, 12).contains("⚠ bypassPermissions is disabled"));
}

#[test]
fn while_the_dialog_shows_keys_do_not_reach_the_prompt() {
    let mut app = app();
    submit(&mut app, "go");
    handle(&mut app, ask(1));
    type_text(&mut app, "xyz");
    assert_eq!(app.input_text(), "");
}

#[test]
fn esc_interrupts_once_and_queued_prompts_come_back_to_the_box() {
    let mut app = app();
    submit(&mut app, "long job");
    submit(&mut app, "later");
    handle(&mut app, ask(1));
    assert_eq!(
        press(&mut app, key(KeyCode::Esc)),
        [answer(1, PermissionAnswer::Deny { feedback: None })]
    );
    assert_eq!(press(&mut app, key(KeyCode::Esc)), [Op::Interrupt]);
    assert_eq!(press(&mut app, key(KeyCode::Esc)), [], "once is enough");
    assert_eq!(app.input_text(), "later");
    assert_eq!(app.queued().count(), 0);
    let end = ended_as(&app, TurnOutcome::Interrupted);
    assert_eq!(handle(&mut app, end), []);
    let shown = screen(&mut app, 60, 12);
    assert_eq!(shown.matches("Interrupted by user").count(), 1, "{shown}");
    assert!(!app.is_busy(), "the next prompt goes at once");
    assert_eq!(
        press(&mut app, key(KeyCode::Enter)),
        [Op::Prompt("later".into())]
    );
}

#[test]
fn an_interruption_from_the_session_is_shown() {
    let mut app = app();
    submit(&mut app, "go");
    let end = ended_as(&app, TurnOutcome::Interrupted);
    handle(&mut app, end);
    assert!(screen(&mut app, 60, 10).contains("Interrupted by user"));
}

#[test]
fn shift_tab_cycles_the_permission_mode() {
    let mut app = app();
    let mut seen = Vec::new();
    for _ in 0..3 {
        let out = press(&mut app, key(KeyCode::BackTab));
        let [Op::SetPermissionMode(to)] = out.as_slice() else {
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
    let mut bypass = app_with(|info| {
        info.bypass_available = true;
        info.permission_mode = PermissionMode::Plan;
    });
    press(&mut bypass, key(KeyCode::BackTab));
    assert_eq!(bypass.permission_mode(), PermissionMode::BypassPermissions);
    // The session confirms (or corrects) the mode.
    handle(
        &mut bypass,
        event(SessionEvent::PermissionModeChanged(PermissionMode::Plan)),
    );
    assert_eq!(bypass.permission_mode(), PermissionMode::Plan);
}

#[test]
fn ctrl_d_exits_only_on_an_empty_prompt() {
    let mut app = app();
    type_text(&mut app, "ab");
    press(&mut app, key(KeyCode::Home));
    assert_eq!(press(&mut app, ctrl('d')), []);
    assert_eq!(app.input_text(), "b");
    assert!(!app.should_exit());
    press(&mut app, ctrl('u'));
    press(&mut app, ctrl('k'));
    assert_eq!(press(&mut app, ctrl('d')), []);
    assert!(app.should_exit());
}

#[tokio::test(start_paused = true)]
async fn ctrl_c_clears_then_exits_when_pressed_again_soon() {
    let mut app = app();
    type_text(&mut app, "draft");
    assert_eq!(press(&mut app, ctrl('c')), []);
    assert_eq!(app.input_text(), "", "the first clears");
    assert!(screen(&mut app, 60, 6).contains("Press Ctrl-C again to exit"));
    tokio::time::advance(Duration::from_secs(3)).await;
    app.tick(tokio::time::Instant::now());
    assert!(
        !screen(&mut app, 60, 6).contains("Press Ctrl-C again"),
        "the hint expires"
    );
    press(&mut app, ctrl('c'));
    assert!(!app.should_exit(), "too late: armed again");
    tokio::time::advance(Duration::from_millis(500)).await;
    press(&mut app, ctrl('c'));
    assert!(app.should_exit());
}

#[tokio::test(start_paused = true)]
async fn ctrl_c_during_a_turn_interrupts_it() {
    let mut app = app();
    submit(&mut app, "go");
    assert_eq!(press(&mut app, ctrl('c')), [Op::Interrupt]);
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
    let end = ended(&app);
    handle(&mut app, end);
    let idle = tokio::time::Instant::now() + tine_tui::IDLE_AFTER;
    assert_eq!(
        app.next_wakeup(),
        Some(idle),
        "no spinner now; only the idle hint, once"
    );
}

#[tokio::test(start_paused = true)]
async fn a_minute_after_a_turn_the_idle_hint_goes_once() {
    let mut app = app();
    submit(&mut app, "go");
    let end = ended(&app);
    handle(&mut app, end);
    tokio::time::advance(Duration::from_secs(30)).await;
    assert_eq!(app.due_ops(tokio::time::Instant::now()), []);
    tokio::time::advance(Duration::from_secs(31)).await;
    assert_eq!(
        app.due_ops(tokio::time::Instant::now()),
        [Op::FlushBackground, Op::NotifyIdle]
    );
    assert_eq!(app.next_wakeup(), None, "once per idle stretch");
    // Something sent before the minute is up: no hint until the next turn's end.
    submit(&mut app, "again");
    let end = ended(&app);
    handle(&mut app, end);
    submit(&mut app, "/cost");
    tokio::time::advance(Duration::from_secs(120)).await;
    assert_eq!(app.due_ops(tokio::time::Instant::now()), []);
}

#[test]
fn a_retry_that_discards_the_partial_reply_takes_it_off_screen() {
    let mut app = app();
    submit(&mut app, "go");
    let retry = tine_api_client::RetryNotice {
        attempt: 2,
        max_attempts: 10,
        delay: Duration::from_secs(2),
        reason: tine_api_client::ApiError::Status {
            status: 529,
            kind: tine_api_client::ApiErrorKind::Overloaded,
            message: "overloaded".into(),
            request_id: None,
            retry_after: None,
            should_retry: None,
        },
        discard_partial: true,
    };
    feed(
        &mut app,
        [
            request(),
            text("half a rep"),
            query(QueryEvent::Retry(retry)),
        ],
    );
    let shown = screen(&mut app, 70, 10);
    assert!(!shown.contains("half a rep"), "{shown}");
    assert!(shown.contains("retrying in 2 s"), "{shown}");
    feed(&mut app, [request(), text("whole reply")]);
    let shown = screen(&mut app, 70, 10);
    assert!(shown.contains("● whole reply"), "{shown}");
    assert!(!shown.contains("retrying"), "{shown}");
}

#[test]
fn page_up_scrolls_and_home_end_scroll_only_on_an_empty_prompt() {
    let mut app = app();
    let history = (0..200)
        .map(|i| tine_session::HistoryItem::Prompt(format!("message {i}")))
        .collect();
    handle(&mut app, event(SessionEvent::History(history)));
    let bottom = screen(&mut app, 60, 12);
    assert!(bottom.contains("message 199"));
    press(&mut app, key(KeyCode::PageUp));
    let up = screen(&mut app, 60, 12);
    assert!(!up.contains("message 199"), "{up}");
    assert!(up.contains("scrolled"), "the status line says so: {up}");
    press(&mut app, key(KeyCode::End));
    assert!(screen(&mut app, 60, 12).contains("message 199"));
    press(&mut app, key(KeyCode::Home));
    assert!(screen(&mut app, 60, 12).starts_with("> message 0\n"));
    type_text(&mut app, "abc");
    press(&mut app, key(KeyCode::End));
    assert!(
        screen(&mut app, 60, 12).starts_with("> message 0\n"),
        "End moved the cursor only"
    );
    press(&mut app, KeyEvent::new(KeyCode::End, KeyModifiers::CONTROL));
    assert!(screen(&mut app, 60, 12).contains("message 199"));
}

#[test]
fn a_notice_during_a_reply_does_not_cut_the_reply() {
    let mut app = app();
    submit(&mut app, "go");
    feed(
        &mut app,
        [
            text("one **bo"),
            event(SessionEvent::Notice(tine_session::Notice {
                level: NoticeLevel::Info,
                text: "saved 2 memories".into(),
            })),
            text("ld** two"),
        ],
    );
    let shown = screen(&mut app, 60, 10);
    assert!(shown.contains("● one bold two"), "{shown}");
}

#[test]
fn a_new_conversation_starts_the_transcript_and_the_status_line_over() {
    let mut app = app();
    submit(&mut app, "before");
    feed(&mut app, [text("an answer")]);
    let end = ended(&app);
    handle(&mut app, end);
    handle(
        &mut app,
        event(SessionEvent::Usage(tine_session::UsageReport {
            model: "claude-sonnet-4-5".into(),
            context_tokens: 10_000,
            context_window: 200_000,
            cost: Default::default(),
            cache_read_share: Some(0.5),
            ..Default::default()
        })),
    );
    assert!(screen(&mut app, 80, 8).contains("cache 50%"));
    let mut info = super::support::info();
    info.model = "claude-haiku-4-5".into();
    handle(&mut app, event(SessionEvent::Configured(info)));
    assert!(
        app.transcript_is_empty(),
        "another conversation: shown afresh"
    );
    let shown = screen(&mut app, 80, 8);
    assert!(shown.contains("claude-haiku-4-5 · $0.00"), "{shown}");
    assert!(!shown.contains("cache"), "{shown}");
    handle(
        &mut app,
        event(SessionEvent::ModelChanged("claude-opus-4-1".into())),
    );
    assert!(screen(&mut app, 80, 8).contains("claude-opus-4-1"));
}

#[test]
fn clear_empties_the_transcript_when_sent_and_keeps_what_the_old_conversation_said_after() {
    let mut app = app();
    submit(&mut app, "before");
    let end = ended(&app);
    handle(&mut app, end);
    let ops = submit(&mut app, "/clear");
    assert_eq!(ops, [command("clear", "")]);
    let clear = last_op();
    assert!(app.transcript_is_empty());
    // The old conversation's last words (its memories saved), then the new one.
    handle(
        &mut app,
        event(SessionEvent::Notice(tine_session::Notice::info(
            "saved 1 memory",
        ))),
    );
    // `Configured` names the `/clear` op (the last one sent).
    let configured = SessionEvent::Configured(super::support::info());
    handle(&mut app, answering(clear, configured));
    assert!(screen(&mut app, 60, 8).contains("saved 1 memory"));
    // Another conversation put in place otherwise (`/resume ID`) is shown afresh.
    let configured = SessionEvent::Configured(super::support::info());
    handle(&mut app, answering(tine_session::OpId(800), configured));
    assert!(app.transcript_is_empty());
}

#[test]
fn a_refused_call_reads_as_the_persons_and_ctrl_o_shows_what_the_model_was_told() {
    let mut app = app();
    submit(&mut app, "go");
    let told = "Permission to use Bash was denied: The user doesn't want to proceed with this \
                tool use. STOP what you are doing. The user said: use printf";
    feed(
        &mut app,
        [
            super::support::call("b1", "Bash", json!({"command": "echo hi"})),
            super::support::result("b1", "Bash", tine_session::ToolOutput::error(told)),
        ],
    );
    let shown = screen(&mut app, 100, 10);
    assert!(
        shown.contains("⎿  Rejected by you: use printf (ctrl+o to expand)"),
        "{shown}"
    );
    assert!(!shown.contains("STOP"), "{shown}");
    press(&mut app, ctrl('o'));
    let expanded = screen(&mut app, 100, 10);
    assert!(expanded.contains("STOP"), "{expanded}");
    assert!(!expanded.contains("Rejected by you"), "{expanded}");
}
