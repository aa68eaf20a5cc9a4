//! Widgets and states as snapshots: what the screen shows, and where styles matter, how. Time
//! is paused, so elapsed times on screen do not depend on how fast the machine is.

use crossterm::event::{KeyCode, KeyModifiers};
use insta::assert_snapshot;
use tine_tui::{
    DiffSource, NoticeLevel, PermissionRequest, StuckQuestion, TaskKind, TaskStatus, TaskView,
    TodoStatus, TodoView, ToolDisplayView, ToolResultView, TurnEndReason, UiEvent, UsageView,
};

use super::support::{app, ctrl, draw, feed, key, plain, screen, styled, submit, type_text};

const REPLY: &str = "## Plan\n\nWe **read** the *config* with `load()`, then:\n\n1. parse it\n2. check it ([docs](https://docs.rs))\n\n> careful with paths\n\n```rust\nfn main() {\n    let x = 1;\n}\n```\n\n| key | value |\n|-----|------:|\n| a   | 1     |\n| bb  | 22    |\n\nDone.";

fn reply_events(text: &str, piece: usize) -> Vec<UiEvent> {
    let chars: Vec<char> = text.chars().collect();
    chars
        .chunks(piece)
        .map(|c| UiEvent::TextDelta(c.iter().collect()))
        .collect()
}

fn shell(id: &str, lines: usize) -> Vec<UiEvent> {
    vec![
        UiEvent::ToolStarted {
            id: id.into(),
            tool: "Bash".into(),
            args: "cargo test".into(),
        },
        UiEvent::ToolFinished {
            id: id.into(),
            result: ToolResultView {
                is_error: false,
                summary: format!("{lines} lines"),
                content: (1..=lines).map(|i| format!("test t{i} ... ok\n")).collect(),
                display: ToolDisplayView::Shell {
                    exit_code: Some(0),
                    timed_out: false,
                    background_task: None,
                },
            },
        },
    ]
}

#[tokio::test(start_paused = true)]
async fn streaming_markdown_mid_reply_and_complete() {
    let mut app = app();
    submit(&mut app, "plan it");
    app.handle(UiEvent::RequestStarted);
    let cut = REPLY.find("fn main").unwrap_or(0) + 12;
    feed(&mut app, reply_events(&REPLY[..cut], 3));
    assert_snapshot!("markdown_mid_stream", screen(&mut app, 60, 24));
    feed(&mut app, reply_events(&REPLY[cut..], 3));
    app.handle(UiEvent::TurnEnded {
        reason: TurnEndReason::Completed,
    });
    assert_snapshot!("markdown_complete", screen(&mut app, 60, 30));
}

#[tokio::test(start_paused = true)]
async fn markdown_styles_bold_italic_code_link() {
    let mut app = app();
    app.handle(UiEvent::TextDelta(
        "a **bold** and *italic* `code` [link](https://x.y)".into(),
    ));
    let buf = draw(&mut app, 60, 6);
    assert_snapshot!("markdown_styles", styled(&buf, 0, 1));
}

#[tokio::test(start_paused = true)]
async fn code_blocks_are_highlighted() {
    let mut app = app();
    app.handle(UiEvent::TextDelta("```rust\nlet x = \"s\";\n```".into()));
    let buf = draw(&mut app, 40, 8);
    let row = styled(&buf, 0, 1);
    assert!(row.matches("[fg:#").count() >= 3, "several colours: {row}");
    assert_snapshot!("code_highlighted", row);
}

#[tokio::test(start_paused = true)]
async fn tool_call_in_its_three_phases() {
    let mut app = app();
    submit(&mut app, "test it");
    app.handle(UiEvent::ToolStarted {
        id: "t1".into(),
        tool: "Bash".into(),
        args: "cargo test".into(),
    });
    let call = screen(&mut app, 60, 10);
    app.handle(UiEvent::ToolProgress {
        id: "t1".into(),
        elapsed: std::time::Duration::from_millis(3200),
        lines: 142,
        bytes: 4000,
    });
    let progress = screen(&mut app, 60, 10);
    feed(&mut app, shell("t1", 40));
    let result = screen(&mut app, 60, 12);
    app.handle_key(ctrl('o'));
    let expanded = screen(&mut app, 60, 12);
    assert_snapshot!(
        "tool_phases",
        format!(
            "--- call\n{call}--- progress\n{progress}--- result\n{result}--- ctrl+o\n{expanded}"
        )
    );
}

#[tokio::test(start_paused = true)]
async fn edit_result_as_a_coloured_diff() {
    let mut app = app();
    let before: String = (1..=12).map(|i| format!("line {i}\n")).collect();
    let after = before
        .replace("line 2\n", "line two\nline 2b\n")
        .replace("line 11\n", "");
    feed(
        &mut app,
        [
            UiEvent::ToolStarted {
                id: "e".into(),
                tool: "Edit".into(),
                args: "src/lib.rs".into(),
            },
            UiEvent::ToolFinished {
                id: "e".into(),
                result: ToolResultView {
                    is_error: false,
                    summary: "Added 2 lines, removed 2 lines".into(),
                    content: "The file src/lib.rs has been updated.".into(),
                    display: ToolDisplayView::Diff {
                        path: "src/lib.rs".into(),
                        diff: DiffSource::Texts { before, after },
                    },
                },
            },
        ],
    );
    let buf = draw(&mut app, 60, 20);
    assert_snapshot!("diff", plain(&buf));
    assert_snapshot!("diff_styles", styled(&buf, 0, 8));
}

#[tokio::test(start_paused = true)]
async fn other_results_errors_todos_and_summaries() {
    let mut app = app();
    feed(
        &mut app,
        [
            UiEvent::ToolStarted {
                id: "r".into(),
                tool: "Read".into(),
                args: "src/main.rs".into(),
            },
            UiEvent::ToolFinished {
                id: "r".into(),
                result: ToolResultView {
                    is_error: false,
                    summary: "Read 42 lines".into(),
                    content: "1\tfn main() {}\n2\t\n".into(),
                    display: ToolDisplayView::None,
                },
            },
            UiEvent::ToolStarted {
                id: "x".into(),
                tool: "Bash".into(),
                args: "rm -rf /".into(),
            },
            UiEvent::ToolFinished {
                id: "x".into(),
                result: ToolResultView {
                    is_error: true,
                    summary: "denied".into(),
                    content: "Permission to use Bash was denied: the user said no".into(),
                    display: ToolDisplayView::None,
                },
            },
            UiEvent::ToolStarted {
                id: "todo".into(),
                tool: "TodoWrite".into(),
                args: String::new(),
            },
            UiEvent::ToolFinished {
                id: "todo".into(),
                result: ToolResultView {
                    is_error: false,
                    summary: String::new(),
                    content: String::new(),
                    display: ToolDisplayView::Todos(vec![
                        TodoView {
                            content: "Read the code".into(),
                            status: TodoStatus::Completed,
                        },
                        TodoView {
                            content: "Fix the bug".into(),
                            status: TodoStatus::InProgress,
                        },
                        TodoView {
                            content: "Run the tests".into(),
                            status: TodoStatus::Pending,
                        },
                    ]),
                },
            },
        ],
    );
    assert_snapshot!("other_results", screen(&mut app, 70, 16));
}

fn ask(id: &str, tool: &str, summary: &str, preview: Option<DiffSource>) -> UiEvent {
    UiEvent::PermissionRequest(PermissionRequest {
        id: id.into(),
        tool: tool.into(),
        summary: summary.into(),
        reason: Some("this command writes outside the project".into()),
        always_rule: Some(format!("{tool}(rm:*)")),
        preview,
    })
}

#[tokio::test(start_paused = true)]
async fn permission_dialog_and_its_queue() {
    let mut app = app();
    submit(&mut app, "clean up");
    feed(
        &mut app,
        [
            ask("1", "Bash", "rm -rf ./build", None),
            ask(
                "2",
                "Edit",
                "src/main.rs",
                Some(DiffSource::Texts {
                    before: "a\nb\n".into(),
                    after: "a\nc\n".into(),
                }),
            ),
        ],
    );
    let first = screen(&mut app, 70, 24);
    app.handle_key(key(KeyCode::Enter));
    let second = screen(&mut app, 70, 24);
    app.handle_key(key(KeyCode::Char('3')));
    type_text(&mut app, "rename it instead");
    let feedback = screen(&mut app, 70, 24);
    assert_snapshot!(
        "permission_dialog",
        format!("--- first of two\n{first}--- second\n{second}--- feedback\n{feedback}")
    );
}

#[tokio::test(start_paused = true)]
async fn queued_prompt_under_the_input_and_spinner() {
    let mut app = app();
    submit(&mut app, "first");
    feed(
        &mut app,
        [
            UiEvent::RequestStarted,
            UiEvent::TextDelta("working on it".into()),
        ],
    );
    submit(&mut app, "then this");
    submit(&mut app, "and this\nwith two lines");
    assert_snapshot!("queued", screen(&mut app, 60, 12));
}

#[tokio::test(start_paused = true)]
async fn slash_completion_list() {
    let mut app = app();
    type_text(&mut app, "/c");
    app.handle_key(key(KeyCode::Down));
    assert_snapshot!("slash_completion", screen(&mut app, 70, 12));
}

#[tokio::test(start_paused = true)]
async fn help_panel() {
    let mut app = app();
    submit(&mut app, "/help");
    assert_snapshot!("help", screen(&mut app, 80, 40));
}

#[tokio::test(start_paused = true)]
async fn status_line_with_usage_mode_and_tasks() {
    let mut app = app();
    feed(
        &mut app,
        [
            UiEvent::Usage(UsageView {
                model: "claude-opus-4-1".into(),
                context_tokens: 50_000,
                context_window: 200_000,
                session_cost_usd: 1.234,
                cache_read_share: Some(0.912),
            }),
            UiEvent::Task(TaskView {
                id: "j".into(),
                kind: TaskKind::Job,
                title: "memory extraction".into(),
                status: TaskStatus::Running,
            }),
        ],
    );
    app.handle_key(key(KeyCode::BackTab));
    app.handle_key(key(KeyCode::BackTab));
    let plan = screen(&mut app, 90, 4);
    app.handle_key(key(KeyCode::BackTab));
    let default = screen(&mut app, 90, 4);
    assert_snapshot!("status_line", format!("{plan}{default}"));
}

#[tokio::test(start_paused = true)]
async fn tasks_panel_and_background_notice() {
    let mut app = app();
    feed(
        &mut app,
        [
            UiEvent::Task(TaskView {
                id: "j1".into(),
                kind: TaskKind::Job,
                title: "memory extraction".into(),
                status: TaskStatus::Finished {
                    summary: "saved 2 memories".into(),
                },
            }),
            UiEvent::Task(TaskView {
                id: "s1".into(),
                kind: TaskKind::Shell,
                title: "npm run dev".into(),
                status: TaskStatus::Running,
            }),
            UiEvent::Task(TaskView {
                id: "j2".into(),
                kind: TaskKind::Job,
                title: "dream".into(),
                status: TaskStatus::Failed {
                    error: "lock held".into(),
                },
            }),
            UiEvent::Notice {
                level: NoticeLevel::Info,
                text: "saved 2 memories".into(),
            },
            UiEvent::Notice {
                level: NoticeLevel::Warning,
                text: "settings.json: unknown key `permisions`".into(),
            },
        ],
    );
    app.handle_key(ctrl('t'));
    assert_snapshot!("tasks_panel", screen(&mut app, 70, 14));
}

#[tokio::test(start_paused = true)]
async fn resize_rewraps_everything() {
    let mut app = app();
    submit(&mut app, "a prompt long enough to wrap at the narrow width");
    feed(
        &mut app,
        reply_events(
            "The reply is a paragraph that also wraps when the terminal gets narrow.\n\n- and a list item that wraps too",
            7,
        ),
    );
    app.handle(UiEvent::TurnEnded {
        reason: TurnEndReason::Completed,
    });
    let wide = screen(&mut app, 80, 12);
    let narrow = screen(&mut app, 32, 16);
    assert_snapshot!(
        "resize",
        format!("--- 80 columns\n{wide}--- 32 columns\n{narrow}")
    );
}

#[tokio::test(start_paused = true)]
async fn thinking_collapsed_and_expanded() {
    let mut app = app();
    submit(&mut app, "think");
    feed(
        &mut app,
        [
            UiEvent::ThinkingDelta("first thought\nsecond thought".into()),
            UiEvent::TextDelta("answer".into()),
        ],
    );
    let collapsed = screen(&mut app, 60, 10);
    app.handle_key(crossterm::event::KeyEvent::new(
        KeyCode::Char('o'),
        KeyModifiers::CONTROL,
    ));
    let expanded = screen(&mut app, 60, 10);
    assert_snapshot!("thinking", format!("{collapsed}{expanded}"));
}

#[tokio::test(start_paused = true)]
async fn stuck_model_dialog() {
    let mut app = app();
    submit(&mut app, "run the tests");
    app.handle(UiEvent::StuckModel(StuckQuestion {
        id: "1".into(),
        tool: "Bash".into(),
        args: "cargo tset".into(),
        error: "error: no such command: `tset`".into(),
        repeats: 3,
    }));
    let asked = screen(&mut app, 70, 26);
    let commands = app.handle_key(key(KeyCode::Enter));
    assert_eq!(
        commands,
        [tine_tui::UiCommand::AnswerStuck {
            id: "1".into(),
            keep_going: true
        }]
    );
    assert!(!app.dialog().is_open());
    assert_snapshot!("stuck_model_dialog", asked);
}
