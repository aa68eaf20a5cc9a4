//! Rendering an App into a TestBackend and reading the screen back, as plain rows or with its
//! styles spelled out.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::style::{Color, Modifier};
use tine_tui::{App, AppConfig, UiCommand, UiEvent};

pub fn app() -> App {
    App::new(AppConfig {
        model: "claude-sonnet-4-5".into(),
        ..AppConfig::default()
    })
}

/// The screen as text, trailing spaces trimmed.
pub fn screen(app: &mut App, width: u16, height: u16) -> String {
    let buf = draw(app, width, height);
    plain(&buf)
}

pub fn draw(app: &mut App, width: u16, height: u16) -> Buffer {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("test backend");
    terminal.draw(|f| app.render(f)).expect("draw");
    terminal.backend().buffer().clone()
}

pub fn plain(buf: &Buffer) -> String {
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
pub fn styled(buf: &Buffer, from: u16, to: u16) -> String {
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

pub fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

pub fn ctrl(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
}

/// Types `text` key by key; returns every command emitted.
pub fn type_text(app: &mut App, text: &str) -> Vec<UiCommand> {
    text.chars()
        .flat_map(|c| app.handle_key(key(KeyCode::Char(c))))
        .collect()
}

/// Types `text` and presses Enter.
pub fn submit(app: &mut App, text: &str) -> Vec<UiCommand> {
    let mut out = type_text(app, text);
    out.extend(app.handle_key(key(KeyCode::Enter)));
    out
}

pub fn feed(app: &mut App, events: impl IntoIterator<Item = UiEvent>) -> Vec<UiCommand> {
    events.into_iter().flat_map(|e| app.handle(e)).collect()
}
