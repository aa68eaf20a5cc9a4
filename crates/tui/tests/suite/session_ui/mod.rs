//! The UI on a real session, on the in-process mock, driven through the terminal loop (keys
//! in, a `TestBackend` frame out, the session's events tapped on their way to the app):
//! streaming with markdown, the permission dialog (once, reject, always with the rule in the
//! project's local settings, an edit's "allow all edits during this session"), interrupt, the queue, slash commands, a resumed conversation
//! shown again, hooks, MCP, background work, modes and skills, a sub-agent's calls under its
//! Agent call. The harness does what the
//! binary's front end does: starts the session with asks answered by the person, runs the
//! loop, and after `/exit` shuts the session down as the person leaving the prompt.

use std::collections::HashMap;
use std::io;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crossterm::event::{Event as TerminalEvent, KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::{Backend, ClearType, TestBackend, WindowSize};
use ratatui::buffer::Cell;
use ratatui::layout::{Position, Size};
use serde_json::json;
use tine_mock_api::{MockConfig, MockServer, Reply, Rule, Scenario};
use tine_session::{
    Approvals, Event, Op, OpId, PermissionRequest, Session, SessionClosed, SessionEndReason,
    SessionEvent, SessionHandle, SessionInfo, SessionOptions, TurnOutcome,
};
use tine_tui::{App, AppConfig, LoopEnd, Submitter, event_loop};
use tokio::sync::mpsc::{self, UnboundedReceiver, UnboundedSender};
use tokio::task::JoinHandle;

mod agents;
mod ask_again;
mod at_mention;
mod background;
mod basics;
mod context;
mod elicitation;
mod export;
mod extensions;
mod modes;
mod resume;
mod rewind;
mod status_line;

const WAIT: Duration = Duration::from_secs(30);

/// A scratch home, project and user home.
struct World {
    _root: tempfile::TempDir,
    home: PathBuf,
    cwd: PathBuf,
    user_home: PathBuf,
}

impl World {
    fn new() -> Self {
        let root = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(root.path()).unwrap();
        let (home, cwd, user_home) = (base.join("home"), base.join("project"), base.join("user"));
        for dir in [&home, &cwd, &user_home] {
            std::fs::create_dir_all(dir).unwrap();
        }
        Self {
            _root: root,
            home,
            cwd,
            user_home,
        }
    }

    /// An interactive session of this world on `server`: bare, no machine settings.
    fn options(&self, server: &MockServer) -> SessionOptions {
        let mut options = SessionOptions::new(self.cwd.clone());
        options.home = Some(self.home.clone());
        options.user_home = Some(self.user_home.clone());
        options.managed_settings = Some(self.home.join("no-managed-settings.json"));
        options.client = Some(tine_test_support::client_for(server));
        options.bare = true;
        options.approvals = Approvals::Interactive;
        options
    }
}

fn scenario() -> Scenario {
    Scenario::new()
        .rule(
            Rule::new()
                .tool_results(false)
                .last_user_contains("make it")
                .reply(
                    Reply::text("Making it.")
                        .with_tool_use("Bash", json!({"command": "touch made.txt"})),
                ),
        )
        .rule(
            Rule::new()
                .tool_results(false)
                .last_user_contains("slowly")
                .reply(Reply::text(&"word ".repeat(200)).chunk_delay_ms(50)),
        )
        .rule(Rule::new().tool_results(true).reply(Reply::text("Done.")))
        .rule(
            Rule::new()
                .last_user_contains("review")
                .reply(Reply::text("Reviewed.")),
        )
        .default_reply(Reply::text("Here is **bold** text."))
}

/// A `TestBackend` the test reads while the loop draws on it.
#[derive(Clone)]
struct SharedScreen(Arc<Mutex<TestBackend>>);

impl SharedScreen {
    fn new(width: u16, height: u16) -> Self {
        Self(Arc::new(Mutex::new(TestBackend::new(width, height))))
    }

    fn text(&self) -> String {
        let backend = self.0.lock().unwrap();
        let buffer = backend.buffer();
        let mut text = String::new();
        for y in 0..buffer.area.height {
            for x in 0..buffer.area.width {
                text.push_str(buffer[(x, y)].symbol());
            }
            text.push('\n');
        }
        text
    }
}

impl Backend for SharedScreen {
    type Error = std::convert::Infallible;

    fn draw<'a, I>(&mut self, content: I) -> Result<(), Self::Error>
    where
        I: Iterator<Item = (u16, u16, &'a Cell)>,
    {
        self.0.lock().unwrap().draw(content)
    }

    fn hide_cursor(&mut self) -> Result<(), Self::Error> {
        self.0.lock().unwrap().hide_cursor()
    }

    fn show_cursor(&mut self) -> Result<(), Self::Error> {
        self.0.lock().unwrap().show_cursor()
    }

    fn get_cursor_position(&mut self) -> Result<Position, Self::Error> {
        self.0.lock().unwrap().get_cursor_position()
    }

    fn set_cursor_position<P: Into<Position>>(&mut self, position: P) -> Result<(), Self::Error> {
        self.0.lock().unwrap().set_cursor_position(position)
    }

    fn clear(&mut self) -> Result<(), Self::Error> {
        self.0.lock().unwrap().clear()
    }

    fn clear_region(&mut self, clear_type: ClearType) -> Result<(), Self::Error> {
        self.0.lock().unwrap().clear_region(clear_type)
    }

    fn size(&self) -> Result<Size, Self::Error> {
        self.0.lock().unwrap().size()
    }

    fn window_size(&mut self) -> Result<WindowSize, Self::Error> {
        self.0.lock().unwrap().window_size()
    }

    fn flush(&mut self) -> Result<(), Self::Error> {
        self.0.lock().unwrap().flush()
    }
}

/// The ops the loop submitted, by id.
type Submitted = Arc<Mutex<HashMap<OpId, Op>>>;

/// Submits to the session and remembers each op by its id.
struct Tap {
    session: SessionHandle,
    submitted: Submitted,
}

impl Submitter for Tap {
    fn submit(&mut self, op: Op) -> Result<OpId, SessionClosed> {
        let id = self.session.submit(op.clone())?;
        self.submitted.lock().unwrap().insert(id, op);
        Ok(id)
    }
}

/// How the UI ended: what the session last said it was, and its last screen.
struct Ended {
    info: Option<SessionInfo>,
    screen: String,
}

/// The loop on a shared `TestBackend`, the session beside it, and a tap on its events.
struct Ui {
    keys: UnboundedSender<io::Result<TerminalEvent>>,
    seen: UnboundedReceiver<Event>,
    submitted: Submitted,
    screen: SharedScreen,
    session: SessionHandle,
    ui: JoinHandle<(App, LoopEnd)>,
}

impl Ui {
    /// The session started, the UI on it as the binary runs it.
    async fn start(options: SessionOptions) -> Self {
        Self::start_with(options, AppConfig::default()).await
    }

    async fn start_with(options: SessionOptions, config: AppConfig) -> Self {
        let (session, events) = Session::start(options).await.unwrap();
        let config = AppConfig {
            history_file: true,
            ..config
        };
        Self::run(App::new(config), session, events)
    }

    /// The loop on `app`, which may have seen the session's first events already.
    fn run(mut app: App, session: SessionHandle, mut events: UnboundedReceiver<Event>) -> Self {
        let (tap_tx, tap_rx) = mpsc::unbounded_channel();
        let (seen_tx, seen) = mpsc::unbounded_channel();
        // What the session said at start is in the loop's channel before the loop begins, as
        // it is for the binary's.
        while let Ok(event) = events.try_recv() {
            let _ = seen_tx.send(event.clone());
            let _ = tap_tx.send(event);
        }
        tokio::spawn(async move {
            while let Some(event) = events.recv().await {
                let _ = seen_tx.send(event.clone());
                if tap_tx.send(event).is_err() {
                    break;
                }
            }
        });
        let submitted = Submitted::default();
        let mut tap = Tap {
            session: session.clone(),
            submitted: Arc::clone(&submitted),
        };
        let screen = SharedScreen::new(100, 40);
        let mut terminal = Terminal::new(screen.clone()).unwrap();
        let (keys, keys_rx) = mpsc::unbounded_channel();
        let ui = tokio::spawn(async move {
            let input = Box::pin(futures::stream::unfold(keys_rx, |mut rx| async move {
                rx.recv().await.map(|event| (event, rx))
            }));
            let (end, _) = event_loop(&mut terminal, &mut app, tap_rx, input, &mut tap)
                .await
                .unwrap();
            (app, end)
        });
        Self {
            keys,
            seen,
            submitted,
            screen,
            session,
            ui,
        }
    }

    fn key(&self, code: KeyCode, modifiers: KeyModifiers) {
        self.keys
            .send(Ok(TerminalEvent::Key(KeyEvent::new(code, modifiers))))
            .unwrap();
    }

    fn type_line(&self, text: &str) {
        eprintln!("typing {text:?}");
        for c in text.chars() {
            self.key(KeyCode::Char(c), KeyModifiers::NONE);
        }
        self.key(KeyCode::Enter, KeyModifiers::NONE);
    }

    /// What the screen shows now.
    fn screen(&self) -> String {
        self.screen.text()
    }

    /// The first event `pick` accepts, and everything seen before it.
    async fn until<T>(&mut self, mut pick: impl FnMut(&Event) -> Option<T>) -> (T, Vec<Event>) {
        let mut before = Vec::new();
        loop {
            let event = match tokio::time::timeout(WAIT, self.seen.recv()).await {
                Ok(Some(event)) => event,
                Ok(None) => panic!("the session's events ended; seen {before:#?}"),
                Err(_) => panic!("timed out; seen {before:#?}"),
            };
            if let Some(found) = pick(&event) {
                return (found, before);
            }
            before.push(event);
        }
    }

    /// Whether the UI shows op `id`'s turn (a prompt's, a command's that talks to the model,
    /// or one the session started itself), rather than a command's that runs no turn.
    fn shown_turn(&self, id: Option<OpId>) -> bool {
        let submitted = self.submitted.lock().unwrap();
        match id.and_then(|id| submitted.get(&id)) {
            Some(Op::Command { name, .. }) => {
                tine_session::find_command(name).is_none_or(|spec| spec.runs_turn)
            }
            Some(_) | None => true,
        }
    }

    /// The end of the next turn the UI shows, and everything seen before it.
    async fn turn_end(&mut self) -> (TurnOutcome, Vec<Event>) {
        let mut before = Vec::new();
        loop {
            let (end, seen) = self
                .until(|e| match &e.msg {
                    SessionEvent::TurnEnded(end) => Some((e.id, end.outcome.clone())),
                    _ => None,
                })
                .await;
            before.extend(seen);
            if self.shown_turn(end.0) {
                return (end.1, before);
            }
        }
    }

    async fn ask(&mut self) -> PermissionRequest {
        let ask = self
            .until(|e| match &e.msg {
                SessionEvent::PermissionRequest(r) => Some(r.clone()),
                _ => None,
            })
            .await
            .0;
        settle().await;
        ask
    }

    /// `/exit`, then the session's end as the binary does it.
    async fn exit(self) -> (App, Ended) {
        settle().await;
        self.type_line("/exit");
        let (app, end) = tokio::time::timeout(WAIT, self.ui).await.unwrap().unwrap();
        assert_eq!(end, LoopEnd::Exit);
        let _report = tokio::time::timeout(
            WAIT,
            self.session
                .shutdown_because(SessionEndReason::PromptInputExit),
        )
        .await
        .unwrap();
        let ended = Ended {
            info: app.session().cloned(),
            screen: self.screen.text(),
        };
        (app, ended)
    }
}

/// The tap sees an event just before the app handles it: give the loop a moment so a key sent
/// next reaches the state the event made (a dialog open, a turn running). Ordering slack, not
/// a timing assertion.
async fn settle() {
    tokio::time::sleep(Duration::from_millis(300)).await;
}

fn last_body(server: &MockServer) -> serde_json::Value {
    let requests = server.requests();
    serde_json::from_slice(&requests.last().unwrap().body).unwrap()
}

/// The text a command answered.
fn command_text(event: &Event, command: &str) -> Option<String> {
    match &event.msg {
        SessionEvent::CommandOutput(output) if output.command == command => {
            Some(output.text.clone())
        }
        _ => None,
    }
}

/// Every JSON input a hook appending its stdin to `file` received, in order.
fn hook_inputs(dir: &std::path::Path, file: &str) -> Vec<serde_json::Value> {
    std::fs::read_to_string(dir.join(file))
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// `file`'s inputs once there are `n` of them (a hook that runs beside the UI, not before it).
async fn hook_inputs_eventually(
    dir: &std::path::Path,
    file: &str,
    n: usize,
) -> Vec<serde_json::Value> {
    for _ in 0..300 {
        let inputs = hook_inputs(dir, file);
        if inputs.len() >= n {
            return inputs;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{file} never had {n} inputs: {:?}", hook_inputs(dir, file));
}

async fn mock(scenario: Scenario) -> MockServer {
    MockServer::start(MockConfig::new(scenario)).await.unwrap()
}
