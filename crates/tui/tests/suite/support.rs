//! An App the session configured, the session's events made short, ops sent as a session
//! takes them (each told its id); rendering into a TestBackend and reading the screen back,
//! as plain rows or with its styles spelled out.

use std::cell::Cell;
use std::path::PathBuf;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::style::{Color, Modifier};
use serde_json::Value;
use tine_session::{
    CommandInfo, Event, Op, OpId, PermissionMode, QueryEvent, SessionCost, SessionEvent,
    SessionInfo, ToolOutput, TurnEnd, TurnOutcome,
};
use tine_tui::{App, AppConfig};

/// What a session of the tests says it is: the model the snapshots show, the session's
/// built-in commands, nothing else on.
pub(super) fn info() -> SessionInfo {
    SessionInfo {
        session_id: tine_config::SessionId::new_random(),
        cwd: PathBuf::from("/project"),
        home: PathBuf::from("/tine-home"),
        model: "claude-sonnet-4-5".into(),
        tools: Vec::new(),
        permission_mode: PermissionMode::Default,
        bypass_available: false,
        transcript_path: PathBuf::from("/tine-home/transcript.jsonl"),
        resumed: false,
        memory: false,
        thinking: false,
        away_after: None,
        speculation: false,
        commands: builtins(),
        status_line: None,
        output_style: "default".into(),
        added_dirs: Vec::new(),
        context_window: 200_000,
    }
}

/// The session's built-in commands, as its table lists them.
pub(super) fn builtins() -> Vec<CommandInfo> {
    tine_session::COMMANDS
        .iter()
        .map(tine_session::CommandSpec::info)
        .collect()
}

/// An app the session configured with [`info`].
pub(super) fn app() -> App {
    app_with(|_| {})
}

/// An app the session configured with [`info`] as `change` changes it.
pub(super) fn app_with(change: impl FnOnce(&mut SessionInfo)) -> App {
    let mut app = App::new(AppConfig::default());
    let mut info = info();
    change(&mut info);
    app.handle(event(SessionEvent::Configured(info)));
    app
}

/// An event of no op.
pub(super) fn event(msg: SessionEvent) -> Event {
    Event { id: None, msg }
}

/// One of the loop's events of the running turn.
pub(super) fn query(event: QueryEvent) -> Event {
    self::event(SessionEvent::Query(event))
}

/// A piece of the reply's text.
pub(super) fn text(text: &str) -> Event {
    query(QueryEvent::TextDelta { text: text.into() })
}

/// A request of the turn begins.
pub(super) fn request() -> Event {
    query(QueryEvent::RequestStart {
        turn: 1,
        max_tokens: 32_000,
    })
}

/// A tool call whose input is complete.
pub(super) fn call(id: &str, tool: &str, input: Value) -> Event {
    event(SessionEvent::ToolInput {
        id: id.into(),
        tool: tool.into(),
        input,
    })
}

/// A tool call's result.
pub(super) fn result(id: &str, tool: &str, output: ToolOutput) -> Event {
    query(QueryEvent::ToolResult {
        tool_use_id: id.into(),
        tool: tool.into(),
        output,
    })
}

/// The end of a turn, with nothing else to say.
pub(super) fn turn_end(outcome: TurnOutcome) -> TurnEnd {
    TurnEnd {
        outcome,
        result: None,
        cost: SessionCost::default(),
        denials: Vec::new(),
        structured_output: None,
    }
}

/// The end of the turn the app holds the guard for.
pub(super) fn ended(app: &App) -> Event {
    ended_as(app, TurnOutcome::Completed)
}

/// The end of the turn the app holds the guard for, as `outcome`.
pub(super) fn ended_as(app: &App, outcome: TurnOutcome) -> Event {
    Event {
        id: app.turn_op(),
        msg: SessionEvent::TurnEnded(turn_end(outcome)),
    }
}

thread_local! {
    /// The ids a test's session gave so far (each test runs on its own thread).
    static LAST_OP: Cell<u64> = const { Cell::new(0) };
}

/// `ops` as a session takes them: each gets the next id, which the app is told. Returns them.
pub(super) fn send(app: &mut App, ops: Vec<Op>) -> Vec<Op> {
    for op in &ops {
        let id = LAST_OP.with(|last| {
            last.set(last.get() + 1);
            last.get()
        });
        app.submitted(op, OpId(id));
    }
    ops
}

/// The id of the last op sent.
pub(super) fn last_op() -> OpId {
    OpId(LAST_OP.with(Cell::get))
}

/// `msg`, answering op `id`.
pub(super) fn answering(id: OpId, msg: SessionEvent) -> Event {
    Event { id: Some(id), msg }
}

/// One key, and the ops it made, sent.
pub(super) fn press(app: &mut App, key: KeyEvent) -> Vec<Op> {
    let ops = app.handle_key(key);
    send(app, ops)
}

/// One session event, and the ops it made due, sent.
pub(super) fn handle(app: &mut App, event: Event) -> Vec<Op> {
    let ops = app.handle(event);
    send(app, ops)
}

/// The screen as text, trailing spaces trimmed.
pub(super) fn screen(app: &mut App, width: u16, height: u16) -> String {
    let buf = draw(app, width, height);
    plain(&buf)
}

pub(super) fn draw(app: &mut App, width: u16, height: u16) -> Buffer {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("test backend");
    terminal.draw(|f| app.render(f)).expect("draw");
    terminal.backend().buffer().clone()
}

pub(super) fn plain(buf: &Buffer) -> String {
    let area = buf.area;
    let mut out = String::new();
    for y in 0..area.height {
        let mut row = String::new();
        let mut x = 0;
        while x < area.width {
            let cell = &buf[(x, y)];
            row.push_str(cell.symbol());
            x += u16::try_from(unicode_width::UnicodeWidthStr::width(cell.symbol()).max(1))
                .unwrap_or(1);
        }
        out.push_str(row.trim_end());
        out.push('\n');
    }
    out
}

/// Rows `from..to` with every run of non-default style marked: `[fg:red bg:… B I U D]text[/]`.
pub(super) fn styled(buf: &Buffer, from: u16, to: u16) -> String {
    let mut out = String::new();
    for y in from..to.min(buf.area.height) {
        let mut row = String::new();
        let mut current = String::new();
        let mut x = 0;
        while x < buf.area.width {
            let cell = &buf[(x, y)];
            let mut tag = Vec::new();
            if cell.fg != Color::Reset {
                tag.push(format!("fg:{}", colour(cell.fg)));
            }
            if cell.bg != Color::Reset {
                tag.push(format!("bg:{}", colour(cell.bg)));
            }
            for (m, name) in [
                (Modifier::BOLD, "B"),
                (Modifier::ITALIC, "I"),
                (Modifier::UNDERLINED, "U"),
                (Modifier::CROSSED_OUT, "X"),
            ] {
                if cell.modifier.contains(m) {
                    tag.push(name.to_owned());
                }
            }
            let tag = tag.join(" ");
            if tag != current {
                if !current.is_empty() {
                    row.push_str("[/]");
                }
                if !tag.is_empty() {
                    row.push_str(&format!("[{tag}]"));
                }
                current = tag;
            }
            row.push_str(cell.symbol());
            x += u16::try_from(unicode_width::UnicodeWidthStr::width(cell.symbol()).max(1))
                .unwrap_or(1);
        }
        if !current.is_empty() {
            row.push_str("[/]");
        }
        out.push_str(row.trim_end());
        out.push('\n');
    }
    out
}

fn colour(c: Color) -> String {
    match c {
        Color::Rgb(r, g, b) => format!("#{r:02x}{g:02x}{b:02x}"),
        other => format!("{other:?}").to_lowercase(),
    }
}

pub(super) fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

pub(super) fn ctrl(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
}

/// Types `text` key by key; returns every op made (sent).
pub(super) fn type_text(app: &mut App, text: &str) -> Vec<Op> {
    text.chars()
        .flat_map(|c| press(app, key(KeyCode::Char(c))))
        .collect()
}

/// Types `text` and presses Enter; returns the ops made (sent).
pub(super) fn submit(app: &mut App, text: &str) -> Vec<Op> {
    let mut out = type_text(app, text);
    out.extend(press(app, key(KeyCode::Enter)));
    out
}

/// Session events in, the ops they made due (sent).
pub(super) fn feed(app: &mut App, events: impl IntoIterator<Item = Event>) -> Vec<Op> {
    events.into_iter().flat_map(|e| handle(app, e)).collect()
}
