//! Widgets and states as snapshots: what the screen shows, and where styles matter, how. Time
//! is paused, so elapsed times on screen do not depend on how fast the machine is.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crossterm::event::{KeyCode, KeyModifiers};
use insta::assert_snapshot;
use serde_json::json;
use similar::TextDiff;
use tine_fork_runtime::{JobOutcome, SourceUsage};
use tine_session::{
    Answer, BackgroundEvent, EditPreview, Event, Notice, NoticeLevel, Op, PermissionRequest,
    QueryEvent, QuestionId, SessionCost, SessionEvent, StuckDecision, StuckQuestion, TaskKind,
    TaskState, TaskUpdate, ToolDisplay, ToolOutput, UsageReport,
};
use tine_tools::{TodoItem, TodoStatus, ToolProgress};

use super::support::{
    app, call, ctrl, draw, ended, event, feed, handle, key, plain, press, query, request, result,
    screen, styled, submit, text, type_text,
};

const REPLY: &str = "## Plan\n\nWe **read** the *config* with `load()`, then:\n\n1. parse it\n2. check it ([docs](https://docs.rs))\n\n> careful with paths\n\n```rust\nfn main() {\n    let x = 1;\n}\n```\n\n| key | value |\n|-----|------:|\n| a   | 1     |\n| bb  | 22    |\n\nDone.";

fn reply_events(reply: &str, piece: usize) -> Vec<Event> {
    let chars: Vec<char> = reply.chars().collect();
    chars
        .chunks(piece)
        .map(|c| text(&c.iter().collect::<String>()))
        .collect()
}

fn shell(id: &str, lines: usize) -> Vec<Event> {
    let content: String = (1..=lines).map(|i| format!("test t{i} ... ok\n")).collect();
    vec![
        call(id, "Bash", json!({"command": "cargo test"})),
        result(
            id,
            "Bash",
            ToolOutput::text(content)
                .with_summary(format!("{lines} lines"))
                .with_display(ToolDisplay::Shell {
                    exit_code: Some(0),
                    timed_out: false,
                    truncated: false,
                    background_task: None,
                }),
        ),
    ]
}

#[tokio::test(start_paused = true)]
async fn streaming_markdown_mid_reply_and_complete() {
    let mut app = app();
    submit(&mut app, "plan it");
    handle(&mut app, request());
    let cut = REPLY.find("fn main").unwrap_or(0) + 12;
    feed(&mut app, reply_events(&REPLY[..cut], 3));
    assert_snapshot!("markdown_mid_stream", screen(&mut app, 60, 24));
    feed(&mut app, reply_events(&REPLY[cut..], 3));
    let end = ended(&app);
    handle(&mut app, end);
    assert_snapshot!("markdown_complete", screen(&mut app, 60, 30));
}

#[tokio::test(start_paused = true)]
async fn markdown_styles_bold_italic_code_link() {
    let mut app = app();
    handle(
        &mut app,
        text("a **bold** and *italic* `code` [link](https://x.y)"),
    );
    let buf = draw(&mut app, 60, 6);
    assert_snapshot!("markdown_styles", styled(&buf, 0, 1));
}

#[tokio::test(start_paused = true)]
async fn code_blocks_are_highlighted() {
    let mut app = app();
    handle(&mut app, text("```rust\nlet x = \"s\";\n```"));
    let buf = draw(&mut app, 40, 8);
    let row = styled(&buf, 0, 1);
    assert!(row.matches("[fg:#").count() >= 3, "several colours: {row}");
    assert_snapshot!("code_highlighted", row);
}

#[tokio::test(start_paused = true)]
async fn tool_call_in_its_three_phases() {
    let mut app = app();
    submit(&mut app, "test it");
    handle(
        &mut app,
        query(QueryEvent::ToolUseStart {
            id: "t1".into(),
            name: "Bash".into(),
        }),
    );
    handle(
        &mut app,
        call("t1", "Bash", json!({"command": "cargo test"})),
    );
    let call = screen(&mut app, 60, 10);
    handle(
        &mut app,
        query(QueryEvent::ToolProgress {
            tool_use_id: "t1".into(),
            progress: ToolProgress {
                tool: "Bash".into(),
                elapsed: std::time::Duration::from_millis(3200),
                lines: 142,
                bytes: 4000,
                subagent: None,
            },
        }),
    );
    let progress = screen(&mut app, 60, 10);
    feed(&mut app, shell("t1", 40));
    let result = screen(&mut app, 60, 12);
    press(&mut app, ctrl('o'));
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
    // The Edit tool's unified diff (three lines of context), its file inside the project.
    let unified = TextDiff::from_lines(&before, &after)
        .unified_diff()
        .context_radius(3)
        .header("src/lib.rs", "src/lib.rs")
        .to_string();
    let output = ToolOutput::text("The file src/lib.rs has been updated.")
        .with_summary("Added 2 lines, removed 2 lines")
        .with_display(ToolDisplay::Diff {
            file_path: PathBuf::from("/project/src/lib.rs"),
            unified,
            added: 2,
            removed: 2,
        });
    feed(
        &mut app,
        [
            call("e", "Edit", json!({"file_path": "/project/src/lib.rs"})),
            result("e", "Edit", output),
        ],
    );
    let buf = draw(&mut app, 60, 20);
    assert_snapshot!("diff", plain(&buf));
    assert_snapshot!("diff_styles", styled(&buf, 0, 8));
}

#[tokio::test(start_paused = true)]
async fn other_results_errors_todos_and_summaries() {
    let mut app = app();
    let todo = |content: &str, status| TodoItem {
        content: content.into(),
        status,
        active_form: String::new(),
    };
    feed(
        &mut app,
        [
            call("r", "Read", json!({"file_path": "/project/src/main.rs"})),
            result(
                "r",
                "Read",
                ToolOutput::text("1\tfn main() {}\n2\t\n").with_summary("Read 42 lines"),
            ),
            call("x", "Bash", json!({"command": "rm -rf /"})),
            result(
                "x",
                "Bash",
                ToolOutput::error("Permission to use Bash was denied: the user said no")
                    .with_summary("denied"),
            ),
            call("todo", "TodoWrite", json!({})),
            result(
                "todo",
                "TodoWrite",
                ToolOutput::text("")
                    .with_summary("")
                    .with_display(ToolDisplay::Todos(vec![
                        todo("Read the code", TodoStatus::Completed),
                        todo("Fix the bug", TodoStatus::InProgress),
                        todo("Run the tests", TodoStatus::Pending),
                    ])),
            ),
        ],
    );
    assert_snapshot!("other_results", screen(&mut app, 70, 16));
}

fn ask(id: u64, tool: &str, target: &str, preview: Option<EditPreview>) -> Event {
    event(SessionEvent::PermissionRequest(PermissionRequest {
        id: QuestionId(id),
        tool: tool.into(),
        input: json!({}),
        target: target.into(),
        reason: "this command writes outside the project".into(),
        always: tine_session::AlwaysAllow::saved(vec![format!("{tool}(rm:*)").parse().unwrap()]),
        preview,
        tool_use_id: None,
    }))
}

#[tokio::test(start_paused = true)]
async fn permission_dialog_and_its_queue() {
    let mut app = app();
    submit(&mut app, "clean up");
    feed(
        &mut app,
        [
            ask(1, "Bash", "rm -rf ./build", None),
            ask(
                2,
                "Edit",
                "/project/src/main.rs",
                Some(EditPreview {
                    before: "a\nb\n".into(),
                    after: "a\nc\n".into(),
                }),
            ),
        ],
    );
    let first = screen(&mut app, 70, 24);
    press(&mut app, key(KeyCode::Enter));
    let second = screen(&mut app, 70, 24);
    press(&mut app, key(KeyCode::Char('3')));
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
    feed(&mut app, [request(), text("working on it")]);
    submit(&mut app, "then this");
    submit(&mut app, "and this\nwith two lines");
    assert_snapshot!("queued", screen(&mut app, 60, 12));
}

#[tokio::test(start_paused = true)]
async fn slash_completion_list() {
    let mut app = app();
    type_text(&mut app, "/c");
    press(&mut app, key(KeyCode::Down));
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
    let main = SourceUsage {
        cost_usd: 1.234,
        ..SourceUsage::default()
    };
    let cost = SessionCost {
        by_source: BTreeMap::from([("main".to_owned(), main)]),
        by_model: BTreeMap::new(),
        context_windows: BTreeMap::new(),
    };
    feed(
        &mut app,
        [
            event(SessionEvent::Usage(UsageReport {
                model: "claude-opus-4-1".into(),
                context_tokens: 50_000,
                context_window: 200_000,
                cost,
                cache_read_share: Some(0.912),
                ..UsageReport::default()
            })),
            event(SessionEvent::Background(BackgroundEvent::Started {
                job: "extract_memories".into(),
            })),
        ],
    );
    press(&mut app, key(KeyCode::BackTab));
    press(&mut app, key(KeyCode::BackTab));
    let plan = screen(&mut app, 90, 4);
    press(&mut app, key(KeyCode::BackTab));
    let default = screen(&mut app, 90, 4);
    assert_snapshot!("status_line", format!("{plan}{default}"));
}

#[tokio::test(start_paused = true)]
async fn tasks_panel_and_background_notice() {
    let mut app = app();
    // The memory extraction's end says its summary in the transcript too; the dream's
    // failure is a panel row only here (its warning comes from the notice below).
    feed(
        &mut app,
        [
            event(SessionEvent::Background(BackgroundEvent::Finished {
                job: "extract_memories".into(),
                outcome: JobOutcome::new("saved 2 memories", serde_json::Value::Null),
            })),
            event(SessionEvent::Task(TaskUpdate {
                id: "s1".into(),
                kind: TaskKind::Shell,
                title: "npm run dev".into(),
                state: TaskState::Running,
                detail: String::new(),
                output_file: None,
                activity: None,
            })),
            event(SessionEvent::Task(TaskUpdate {
                id: "j2".into(),
                kind: TaskKind::Dream,
                title: "dream".into(),
                state: TaskState::Failed("lock held".into()),
                detail: "lock held".into(),
                output_file: None,
                activity: None,
            })),
            event(SessionEvent::Notice(Notice {
                level: NoticeLevel::Warning,
                text: "settings.json: unknown key `permisions`".into(),
            })),
        ],
    );
    press(&mut app, ctrl('t'));
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
    let end = ended(&app);
    handle(&mut app, end);
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
            query(QueryEvent::ThinkingDelta {
                text: "first thought\nsecond thought".into(),
            }),
            text("answer"),
        ],
    );
    let collapsed = screen(&mut app, 60, 10);
    press(
        &mut app,
        crossterm::event::KeyEvent::new(KeyCode::Char('o'), KeyModifiers::CONTROL),
    );
    let expanded = screen(&mut app, 60, 10);
    assert_snapshot!("thinking", format!("{collapsed}{expanded}"));
}

#[tokio::test(start_paused = true)]
async fn stuck_model_dialog() {
    let mut app = app();
    submit(&mut app, "run the tests");
    handle(
        &mut app,
        event(SessionEvent::StuckModel(StuckQuestion {
            id: QuestionId(1),
            tool: "Bash".into(),
            input: json!({"command": "cargo tset"}),
            error: "error: no such command: `tset`".into(),
            repeats: 3,
        })),
    );
    let asked = screen(&mut app, 70, 26);
    let ops = press(&mut app, key(KeyCode::Enter));
    assert_eq!(
        ops,
        [Op::Answer {
            question: QuestionId(1),
            answer: Answer::Stuck(StuckDecision::KeepGoing),
        }]
    );
    assert_eq!(app.questions_waiting(), 0);
    assert_snapshot!("stuck_model_dialog", asked);
}
