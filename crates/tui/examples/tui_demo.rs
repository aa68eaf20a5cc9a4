//! The UI against a scripted stand-in for the session, to try it by hand and to measure the
//! idle loop: `cargo run -p tine-tui --example tui_demo`. Each prompt gets a streamed markdown
//! reply with a code block, a Bash call with progress, an Edit that asks for permission and
//! shows a diff, and a background notice. `--idle` starts with a long transcript and sends
//! nothing (the benchmark samples its CPU time).

use std::time::Duration;

use tine_tui::{
    App, AppConfig, DiffSource, NoticeLevel, PermissionAnswer, PermissionRequest, TaskKind,
    TaskStatus, TaskView, TerminalOptions, ToolDisplayView, ToolResultView, TurnEndReason,
    UiCommand, UiEvent, UsageView,
};
use tokio::sync::mpsc::{self, UnboundedReceiver, UnboundedSender};
use tokio::task::JoinHandle;

const REPLY: &str = "Here is the plan:\n\n1. **Read** the `config` loader\n2. Fix the *off-by-one*\n3. Run the tests\n\n```rust\nfn window(len: usize) -> usize {\n    // the bug was here\n    len.saturating_sub(1)\n}\n```\n\n| step | status |\n|------|--------|\n| read | done |\n| fix  | next |\n";

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let idle = std::env::args().any(|a| a == "--idle");
    let (ui_tx, ui_rx) = mpsc::unbounded_channel();
    let (cmd_tx, cmd_rx) = mpsc::unbounded_channel();
    let mut app = App::new(AppConfig {
        model: "claude-sonnet-4-5".into(),
        ..AppConfig::default()
    });
    if idle {
        for i in 0..2000 {
            app.handle(UiEvent::UserMessage(format!("prompt {i}")));
            app.handle(UiEvent::TextDelta(format!("reply **{i}** with `code`")));
            app.handle(UiEvent::TurnEnded {
                reason: TurnEndReason::Completed,
            });
        }
    }
    ui_tx.send(UiEvent::Usage(UsageView {
        model: "claude-sonnet-4-5".into(),
        context_tokens: 12_400,
        context_window: 200_000,
        session_cost_usd: 0.0,
        cache_read_share: None,
    }))?;
    let session = tokio::spawn(fake_session(ui_tx, cmd_rx, idle));
    let result = tine_tui::run(&mut app, ui_rx, cmd_tx, TerminalOptions::default()).await;
    session.abort();
    let (end, stats) = result?;
    println!(
        "{end:?}: {} frames, {} terminal events, {} session events",
        stats.frames, stats.terminal_events, stats.session_events
    );
    Ok(())
}

async fn fake_session(
    ui: UnboundedSender<UiEvent>,
    mut commands: UnboundedReceiver<UiCommand>,
    idle: bool,
) {
    let (answers_tx, _) = tokio::sync::broadcast::channel::<(String, PermissionAnswer)>(16);
    let mut turn: Option<JoinHandle<()>> = None;
    let mut turns = 0u32;
    while let Some(command) = commands.recv().await {
        if idle {
            continue;
        }
        match command {
            UiCommand::Submit(prompt) => {
                turns += 1;
                turn = Some(tokio::spawn(scripted_turn(
                    ui.clone(),
                    answers_tx.subscribe(),
                    prompt,
                    turns,
                )));
            }
            UiCommand::Interrupt => {
                if let Some(t) = turn.take() {
                    t.abort();
                }
                let _ = ui.send(UiEvent::TurnEnded {
                    reason: TurnEndReason::Interrupted,
                });
            }
            UiCommand::AnswerPermission { id, answer } => {
                let _ = answers_tx.send((id, answer));
            }
            UiCommand::SlashCommand { name, args } => {
                let _ = ui.send(UiEvent::CommandOutput {
                    command: name.clone(),
                    text: format!("`/{name} {args}`: **$0.0123** this session, cache read 87%"),
                });
            }
            // The demo's model is never stuck, it has no MCP server to ask anything, and it
            // starts no background work.
            UiCommand::AnswerStuck { .. }
            | UiCommand::AnswerElicitation { .. }
            | UiCommand::StopTask { .. }
            | UiCommand::BackgroundAgents => {}
            UiCommand::CyclePermissionMode { to } => {
                let _ = ui.send(UiEvent::PermissionModeChanged(to));
            }
            UiCommand::Exit => break,
            // The demo turns neither on.
            UiCommand::AwaySummary | UiCommand::Speculate(_) => {}
        }
    }
}

async fn scripted_turn(
    ui: UnboundedSender<UiEvent>,
    mut answers: tokio::sync::broadcast::Receiver<(String, PermissionAnswer)>,
    prompt: String,
    n: u32,
) {
    let send = |e: UiEvent| {
        let _ = ui.send(e);
    };
    let pause = |ms| tokio::time::sleep(Duration::from_millis(ms));
    send(UiEvent::RequestStarted);
    send(UiEvent::ThinkingDelta(format!(
        "The user said {prompt:?}.\nLet me look."
    )));
    pause(300).await;
    for piece in REPLY.as_bytes().chunks(6) {
        send(UiEvent::TextDelta(
            String::from_utf8_lossy(piece).into_owned(),
        ));
        pause(15).await;
    }
    let bash = format!("bash-{n}");
    send(UiEvent::ToolStarted {
        id: bash.clone(),
        tool: "Bash".into(),
        args: "cargo test".into(),
    });
    for i in 1..=20u64 {
        pause(100).await;
        send(UiEvent::ToolProgress {
            id: bash.clone(),
            elapsed: Duration::from_millis(i * 100),
            lines: i * 7,
            bytes: i * 300,
        });
    }
    let output: String = (1..=40)
        .map(|i| format!("test case_{i} ... ok\n"))
        .collect();
    send(UiEvent::ToolFinished {
        id: bash,
        result: ToolResultView {
            is_error: false,
            summary: "40 lines".into(),
            content: output,
            display: ToolDisplayView::Shell {
                exit_code: Some(0),
                timed_out: false,
                background_task: None,
            },
        },
    });
    let edit = format!("edit-{n}");
    let before = "fn window(len: usize) -> usize {\n    len - 1\n}\n".to_owned();
    let after =
        "fn window(len: usize) -> usize {\n    // the bug was here\n    len.saturating_sub(1)\n}\n"
            .to_owned();
    send(UiEvent::ToolStarted {
        id: edit.clone(),
        tool: "Edit".into(),
        args: "src/window.rs".into(),
    });
    send(UiEvent::PermissionRequest(PermissionRequest {
        id: edit.clone(),
        tool: "Edit".into(),
        summary: "src/window.rs".into(),
        reason: Some("Edits outside acceptEdits mode need approval".into()),
        always_rule: Some("Edit(src/**)".into()),
        preview: Some(DiffSource::Texts {
            before: before.clone(),
            after: after.clone(),
        }),
    }));
    let answer = loop {
        match answers.recv().await {
            Ok((id, answer)) if id == edit => break answer,
            Ok(_) => continue,
            Err(_) => return,
        }
    };
    let result = match answer {
        PermissionAnswer::No { feedback } => ToolResultView {
            is_error: true,
            summary: "denied".into(),
            content: format!(
                "The user rejected this edit{}",
                feedback.map(|f| format!(": {f}")).unwrap_or_default()
            ),
            display: ToolDisplayView::None,
        },
        PermissionAnswer::Once | PermissionAnswer::Always => ToolResultView {
            is_error: false,
            summary: "Added 2 lines, removed 1 line".into(),
            content: "The file src/window.rs has been updated.".into(),
            display: ToolDisplayView::Diff {
                path: "src/window.rs".into(),
                diff: DiffSource::Texts { before, after },
            },
        },
    };
    send(UiEvent::ToolFinished { id: edit, result });
    send(UiEvent::RequestStarted);
    for word in "All done: the **tests pass** and the window is fixed.".split_inclusive(' ') {
        send(UiEvent::TextDelta(word.into()));
        pause(30).await;
    }
    send(UiEvent::Usage(UsageView {
        model: "claude-sonnet-4-5".into(),
        context_tokens: 12_400 + u64::from(n) * 3_000,
        context_window: 200_000,
        session_cost_usd: 0.0123 * f64::from(n),
        cache_read_share: Some(0.87),
    }));
    send(UiEvent::TurnEnded {
        reason: TurnEndReason::Completed,
    });
    let job = format!("extract-{n}");
    send(UiEvent::Task(TaskView {
        id: job.clone(),
        kind: TaskKind::Job,
        title: "memory extraction".into(),
        status: TaskStatus::Running,
    }));
    pause(800).await;
    send(UiEvent::Task(TaskView {
        id: job,
        kind: TaskKind::Job,
        title: "memory extraction".into(),
        status: TaskStatus::Finished {
            summary: "saved 2 memories".into(),
        },
    }));
    send(UiEvent::Notice {
        level: NoticeLevel::Info,
        text: "saved 2 memories".into(),
    });
}
