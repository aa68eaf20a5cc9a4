//! The UI on a real session, against the bundled simulator, offline:
//!
//!     cargo run -p tine-tui --example tui_demo
//!
//! On a terminal it opens the UI: each prompt gets a streamed markdown reply with a code block;
//! a prompt with "notes" in it asks to write `notes.md` (the dialog shows the diff). Without a
//! terminal (a pipe, CI) it drives the same [`App`] itself on ratatui's `TestBackend`: the
//! prompt "write the notes", the permission asked and approved, the reply, and prints the
//! screen. Everything lives in a scratch directory, so the machine's settings stay out of it.

use std::io::IsTerminal;
use std::sync::Arc;

use crossterm::event::KeyCode;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;
use tine_api_client::{ClientConfig, Credentials, HttpClient, ModelClient};
use tine_mock_api::{MockConfig, MockServer, Reply, Rule, Scenario};
use tine_session::{
    Approvals, Event, Op, Session, SessionEvent, SessionHandle, SessionOptions, TurnOutcome,
};
use tine_tui::{App, AppConfig, Submitter, TerminalOptions};
use tokio::sync::mpsc::UnboundedReceiver;

type Failure = Box<dyn std::error::Error>;

const REPLY: &str = "Here is the plan:\n\n1. **Read** the `config` loader\n2. Fix the *off-by-one*\n3. Run the tests\n\n```rust\nfn window(len: usize) -> usize {\n    // the bug was here\n    len.saturating_sub(1)\n}\n```\n";

#[tokio::main]
async fn main() -> Result<(), Failure> {
    let scratch = tempfile::tempdir()?;
    let cwd = scratch.path().join("project");
    std::fs::create_dir_all(&cwd)?;
    let notes = cwd.join("notes.md");
    let scenario = Scenario::new()
        .rule(
            Rule::new()
                .tool_results(false)
                .last_user_contains("notes")
                .reply(Reply::text("Writing the notes.").with_tool_use(
                    "Write",
                    json!({"file_path": notes, "content": "# Notes\n\n- fix the window\n"}),
                )),
        )
        .rule(
            Rule::new()
                .tool_results(true)
                .reply(Reply::text("Done: **notes.md** holds the plan.")),
        )
        .default_reply(Reply::text(REPLY).chunk_delay_ms(20));
    let server = MockServer::start(MockConfig::new(scenario)).await?;
    let client: Arc<dyn ModelClient> = Arc::new(HttpClient::new(ClientConfig::new(
        server.base_url(),
        Credentials::api_key("offline"),
    ))?);
    let mut options = SessionOptions::new(&cwd);
    options.home = Some(scratch.path().join("tine-home"));
    options.user_home = Some(scratch.path().join("user-home"));
    options.managed_settings = Some(scratch.path().join("no-managed-settings.json"));
    options.client = Some(client);
    options.bare = true;
    options.approvals = Approvals::Interactive;
    let (mut session, events) = Session::start(options).await?;
    let mut app = App::new(AppConfig {
        welcome: true,
        ..AppConfig::default()
    });
    if std::io::stdin().is_terminal() && std::io::stdout().is_terminal() {
        let (end, stats) =
            tine_tui::run(&mut app, events, &mut session, TerminalOptions::default()).await?;
        println!("{end:?}: {} frames", stats.frames);
    } else {
        println!("(no terminal: the demo drives the UI itself and prints its screen)\n");
        print!(
            "{}",
            without_a_terminal(&mut app, events, &mut session).await?
        );
    }
    session.shutdown().await;
    Ok(())
}

/// The prompt typed, the Write approved (option 1), the turn to its end; the screen.
async fn without_a_terminal(
    app: &mut App,
    mut events: UnboundedReceiver<Event>,
    session: &mut SessionHandle,
) -> Result<String, Failure> {
    // What the session said at start (`Configured` first) is on screen before any key.
    while let Ok(event) = events.try_recv() {
        let ops = app.handle(event);
        submit(app, session, ops)?;
    }
    let mut keys: Vec<KeyCode> = "write the notes".chars().map(KeyCode::Char).collect();
    keys.push(KeyCode::Enter);
    for key in keys {
        let ops = app.handle_key(key.into());
        submit(app, session, ops)?;
    }
    while let Some(event) = events.recv().await {
        let asked = matches!(event.msg, SessionEvent::PermissionRequest(_));
        let ended = matches!(&event.msg, SessionEvent::TurnEnded(end)
            if event.id == app.turn_op() && end.outcome != TurnOutcome::Interrupted);
        let ops = app.handle(event);
        submit(app, session, ops)?;
        if asked {
            let ops = app.handle_key(KeyCode::Char('1').into());
            submit(app, session, ops)?;
        }
        if ended {
            break;
        }
    }
    let mut terminal = Terminal::new(TestBackend::new(80, 24))?;
    terminal.draw(|frame| app.render(frame))?;
    let buffer = terminal.backend().buffer();
    let mut screen = String::new();
    for y in 0..buffer.area.height {
        let row: String = (0..buffer.area.width)
            .map(|x| buffer[(x, y)].symbol())
            .collect();
        screen.push_str(row.trim_end());
        screen.push('\n');
    }
    Ok(screen)
}

/// The app's ops to the session, each op's id told to the app.
fn submit(app: &mut App, session: &mut SessionHandle, ops: Vec<Op>) -> Result<(), Failure> {
    for op in ops {
        let id = Submitter::submit(session, op.clone())?;
        app.submitted(&op, id);
    }
    Ok(())
}
