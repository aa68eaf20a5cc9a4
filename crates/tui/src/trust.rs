//! "Do you trust the files in this folder?": asked on the terminal before the session starts
//! in a folder that is not trusted, so nothing of the folder runs before the answer. It names
//! what the folder would enable (hooks, allow rules, commands, MCP servers); when it brings
//! hooks or allow rules the highlighted answer is "No, exit", as in Claude Code 2.1.332.

use std::io::{self, BufWriter};
use std::path::Path;

use crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};
use tine_session::WorkspaceSummary;

use crate::terminal::{TerminalGuard, TerminalOptions};
use crate::theme;

/// The question's state: which answer is highlighted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustQuestion {
    lines: Vec<String>,
    /// `true`: "Yes, proceed" is highlighted.
    yes: bool,
}

/// What a key does to the question.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrustKey {
    /// Still asking.
    Asking,
    /// Trusted.
    Yes,
    /// Not trusted: exit.
    No,
}

impl TrustQuestion {
    /// The question for `cwd` bringing `summary`.
    pub fn new(cwd: &Path, summary: &WorkspaceSummary) -> Self {
        let mut lines = vec![
            format!("Do you trust the files in this folder?  {}", cwd.display()),
            String::new(),
            "tine may read, edit and run files here. A folder's own settings can run commands \
             (hooks), allow tools without asking, and start MCP servers."
                .to_owned(),
        ];
        let mut list = |title: &str, items: &[String]| {
            if !items.is_empty() {
                lines.push(String::new());
                lines.push(format!("This folder brings {title}:"));
                lines.extend(items.iter().take(8).map(|item| format!("  • {item}")));
                if items.len() > 8 {
                    lines.push(format!("  … and {} more", items.len() - 8));
                }
            }
        };
        list("hooks", &summary.hooks);
        list("allow rules", &summary.allow_rules);
        list("commands and variables", &summary.commands);
        list(
            "MCP servers (each asks for its own trust)",
            &summary.mcp_servers,
        );
        list(
            "plugins (with their hooks and MCP servers)",
            &summary.plugins,
        );
        Self {
            lines,
            yes: !summary.is_risky(),
        }
    }

    /// One key.
    pub fn key(&mut self, code: KeyCode, modifiers: KeyModifiers) -> TrustKey {
        match code {
            KeyCode::Up | KeyCode::Down | KeyCode::Tab | KeyCode::BackTab => {
                self.yes = !self.yes;
                TrustKey::Asking
            }
            KeyCode::Char('1') | KeyCode::Char('y') => TrustKey::Yes,
            KeyCode::Char('2') | KeyCode::Char('n') | KeyCode::Esc => TrustKey::No,
            KeyCode::Char('c' | 'd') if modifiers.contains(KeyModifiers::CONTROL) => TrustKey::No,
            KeyCode::Enter if self.yes => TrustKey::Yes,
            KeyCode::Enter => TrustKey::No,
            _ => TrustKey::Asking,
        }
    }

    /// Its text, the answers last.
    pub fn rows(&self) -> Vec<Line<'static>> {
        let mut rows: Vec<Line<'static>> = self
            .lines
            .iter()
            .map(|line| Line::from(Span::raw(line.clone())))
            .collect();
        rows.push(Line::from(""));
        let answer = |selected: bool, text: &str| {
            let (marker, style) = if selected {
                ("❯ ", theme::accent())
            } else {
                ("  ", ratatui::style::Style::default())
            };
            Line::from(Span::styled(format!("{marker}{text}"), style))
        };
        rows.push(answer(self.yes, "1. Yes, proceed"));
        rows.push(answer(!self.yes, "2. No, exit"));
        rows.push(Line::from(Span::styled(
            "enter to confirm · esc to exit".to_owned(),
            theme::dim(),
        )));
        rows
    }
}

/// Asks on the terminal; `Ok(true)` when the person trusts the folder. The terminal is as
/// before when this returns.
pub fn ask_trust(cwd: &Path, summary: &WorkspaceSummary) -> io::Result<bool> {
    let mut question = TrustQuestion::new(cwd, summary);
    let _guard = TerminalGuard::enter(TerminalOptions::default())?;
    let backend = CrosstermBackend::new(BufWriter::new(io::stdout()));
    let mut terminal = Terminal::new(backend)?;
    terminal.clear()?;
    loop {
        terminal.draw(|frame| {
            let area = frame.area();
            // Wrapped here, so the box is as tall as what it shows (a long plugin or hook
            // line takes two rows, and the answers must stay in view).
            let inner = area.width.saturating_sub(2).max(1);
            let mut rows = Vec::new();
            for row in question.rows() {
                crate::wrap::IndentedLine::plain(row).wrap(inner, &mut rows);
            }
            let height = u16::try_from(rows.len() + 2)
                .unwrap_or(u16::MAX)
                .min(area.height);
            let rect = Rect::new(area.x, area.y, area.width, height);
            let block = Block::default()
                .borders(Borders::ALL)
                .border_style(theme::dialog_border())
                .title(" Trust this folder? ");
            frame.render_widget(Paragraph::new(rows).block(block), rect);
        })?;
        if let Event::Key(key) = event::read()? {
            if key.kind == KeyEventKind::Release {
                continue;
            }
            match question.key(key.code, key.modifiers) {
                TrustKey::Asking => {}
                TrustKey::Yes => return Ok(true),
                TrustKey::No => return Ok(false),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_with_hooks_highlights_no_and_lists_them() {
        let summary = WorkspaceSummary {
            hooks: vec!["SessionStart: curl evil".into()],
            allow_rules: vec!["Bash".into()],
            ..WorkspaceSummary::default()
        };
        let mut q = TrustQuestion::new(Path::new("/p"), &summary);
        let text: Vec<String> = q.rows().iter().map(|r| r.to_string()).collect();
        assert!(text.iter().any(|l| l.contains("curl evil")), "{text:?}");
        assert!(text.iter().any(|l| l.contains("❯ 2. No, exit")), "{text:?}");
        assert_eq!(q.key(KeyCode::Enter, KeyModifiers::NONE), TrustKey::No);
        assert_eq!(q.key(KeyCode::Up, KeyModifiers::NONE), TrustKey::Asking);
        assert_eq!(q.key(KeyCode::Enter, KeyModifiers::NONE), TrustKey::Yes);
        // A plugin the folder turns on runs its hooks and servers: listed, and No first.
        let plugins = WorkspaceSummary {
            plugins: vec!["hello@mkt (hooks SessionStart: ./hi.sh)".into()],
            ..WorkspaceSummary::default()
        };
        let rows: Vec<String> = TrustQuestion::new(Path::new("/p"), &plugins)
            .rows()
            .iter()
            .map(|r| r.to_string())
            .collect();
        assert!(
            rows.iter()
                .any(|l| l.contains("hello@mkt (hooks SessionStart")),
            "{rows:?}"
        );
        assert!(rows.iter().any(|l| l.contains("❯ 2. No, exit")), "{rows:?}");
        let plain = TrustQuestion::new(Path::new("/p"), &WorkspaceSummary::default());
        assert!(
            plain
                .rows()
                .iter()
                .any(|l| l.to_string().contains("❯ 1. Yes, proceed"))
        );
    }
}
