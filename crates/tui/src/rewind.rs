//! The rewind picker (Esc Esc on an empty prompt, or `/rewind`): the conversation's prompts
//! with their times and the files changed since each; then Claude Code's three choices
//! (restore code and conversation, conversation only, code only); when files the session
//! changed were changed by someone else too, the list of them and whether to put them back
//! anyway. Each step answers with the op it makes.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::text::{Line, Span};
use tine_session::{Op, RewindPoint, RewindScope, RewindTarget};

use crate::theme;
use crate::wrap::sanitize;

/// The three choices, in Claude Code's order.
const CHOICES: [(RewindScope, &str); 3] = [
    (RewindScope::Both, "Restore code and conversation"),
    (RewindScope::Conversation, "Restore conversation"),
    (RewindScope::Code, "Restore code"),
];

/// Where the picker is.
#[derive(Debug, Default)]
pub(crate) enum RewindPicker {
    /// Not shown.
    #[default]
    Closed,
    /// The prompts, one selected.
    Prompts {
        points: Vec<RewindPoint>,
        selected: usize,
    },
    /// What to restore for the prompt picked.
    Choices { point: RewindPoint, selected: usize },
    /// Files both changed: put them back anyway?
    Conflicts {
        prompt: usize,
        scope: RewindScope,
        files: Vec<std::path::PathBuf>,
    },
}

impl RewindPicker {
    /// Whether it takes the keys.
    pub(crate) fn is_open(&self) -> bool {
        !matches!(self, RewindPicker::Closed)
    }

    /// The session's list arrived: pick from it, the latest prompt first selected.
    pub(crate) fn open(&mut self, points: Vec<RewindPoint>) {
        if points.is_empty() {
            *self = RewindPicker::Closed;
            return;
        }
        let selected = points.len() - 1;
        *self = RewindPicker::Prompts { points, selected };
    }

    /// A rewind of `scope` was refused for conflicts.
    pub(crate) fn conflicts(
        &mut self,
        prompt: usize,
        files: Vec<std::path::PathBuf>,
        scope: RewindScope,
    ) {
        *self = RewindPicker::Conflicts {
            prompt,
            scope,
            files,
        };
    }

    /// One key: the ops it makes (none until a choice is made).
    pub(crate) fn key(&mut self, key: KeyEvent) -> Vec<Op> {
        match std::mem::take(self) {
            RewindPicker::Closed => Vec::new(),
            RewindPicker::Prompts {
                points,
                mut selected,
            } => {
                match key.code {
                    KeyCode::Esc => return Vec::new(),
                    KeyCode::Up => selected = selected.saturating_sub(1),
                    KeyCode::Down => selected = (selected + 1).min(points.len() - 1),
                    KeyCode::Enter => {
                        let point = points[selected].clone();
                        *self = RewindPicker::Choices { point, selected: 0 };
                        return Vec::new();
                    }
                    _ => {}
                }
                *self = RewindPicker::Prompts { points, selected };
                Vec::new()
            }
            RewindPicker::Choices {
                point,
                mut selected,
            } => {
                let picked = match key.code {
                    KeyCode::Esc => return Vec::new(),
                    KeyCode::Up => {
                        selected = selected.saturating_sub(1);
                        None
                    }
                    KeyCode::Down => {
                        selected = (selected + 1).min(CHOICES.len() - 1);
                        None
                    }
                    KeyCode::Enter => Some(selected),
                    KeyCode::Char(c @ '1'..='3') => Some(usize::from(c as u8 - b'1')),
                    _ => None,
                };
                match picked {
                    Some(index) => {
                        let scope = CHOICES[index].0;
                        vec![Op::Rewind {
                            to: RewindTarget::Prompt(point.prompt),
                            scope,
                            force: false,
                        }]
                    }
                    None => {
                        *self = RewindPicker::Choices { point, selected };
                        Vec::new()
                    }
                }
            }
            RewindPicker::Conflicts {
                prompt,
                scope,
                files,
            } => match key.code {
                KeyCode::Char('y') | KeyCode::Enter => vec![Op::Rewind {
                    to: RewindTarget::Prompt(prompt),
                    scope,
                    force: true,
                }],
                KeyCode::Char('n') | KeyCode::Esc => Vec::new(),
                _ => {
                    *self = RewindPicker::Conflicts {
                        prompt,
                        scope,
                        files,
                    };
                    Vec::new()
                }
            },
        }
    }

    /// Its title.
    pub(crate) fn title(&self) -> &'static str {
        match self {
            RewindPicker::Conflicts { .. } => " Rewind: files you changed too ",
            _ => " Rewind (esc to cancel) ",
        }
    }

    /// Its rows, at most `max` of the prompt list around the selection.
    pub(crate) fn rows(&self, max: usize) -> Vec<Line<'static>> {
        match self {
            RewindPicker::Closed => Vec::new(),
            RewindPicker::Prompts { points, selected } => {
                let mut rows = vec![Line::from(Span::styled(
                    "Go back to before which prompt? (↑/↓, enter)".to_owned(),
                    theme::dim(),
                ))];
                let room = max.saturating_sub(1).max(1);
                let start = (*selected + 1).saturating_sub(room);
                for (i, point) in points.iter().enumerate().skip(start).take(room) {
                    let marker = if i == *selected { "❯ " } else { "  " };
                    let text = sanitize(point.text.lines().next().unwrap_or_default());
                    let files = match (point.code, point.files.len()) {
                        (false, _) => "no code changes".to_owned(),
                        (true, 1) => "1 file changed since".to_owned(),
                        (true, n) => format!("{n} files changed since"),
                    };
                    let line = format!(
                        "{marker}{}. {text}  ({}, {files})",
                        point.prompt,
                        ago(point.at)
                    );
                    let style = if i == *selected {
                        theme::accent()
                    } else {
                        ratatui::style::Style::default()
                    };
                    rows.push(Line::from(Span::styled(line, style)));
                }
                rows
            }
            RewindPicker::Choices { point, selected } => {
                let mut rows = vec![Line::from(Span::styled(
                    format!(
                        "Before prompt {}: {}",
                        point.prompt,
                        sanitize(point.text.lines().next().unwrap_or_default())
                    ),
                    theme::dim(),
                ))];
                for (i, (_, label)) in CHOICES.iter().enumerate() {
                    let marker = if i == *selected { "❯ " } else { "  " };
                    let style = if i == *selected {
                        theme::accent()
                    } else {
                        ratatui::style::Style::default()
                    };
                    rows.push(Line::from(Span::styled(
                        format!("{marker}{}. {label}", i + 1),
                        style,
                    )));
                }
                rows
            }
            RewindPicker::Conflicts { files, .. } => {
                let mut rows = vec![Line::from(Span::raw(
                    "The session changed these files, and so did someone else since:".to_owned(),
                ))];
                for file in files.iter().take(max.saturating_sub(2)) {
                    rows.push(Line::from(Span::raw(format!("  {}", file.display()))));
                }
                rows.push(Line::from(Span::styled(
                    "y: put them back anyway · n: keep them (nothing is changed)".to_owned(),
                    theme::dim(),
                )));
                rows
            }
        }
    }
}

/// How long ago `at` (seconds since the epoch) was, for people.
fn ago(at: u64) -> String {
    if at == 0 {
        return "earlier".to_owned();
    }
    let then = UNIX_EPOCH + Duration::from_secs(at);
    let secs = SystemTime::now()
        .duration_since(then)
        .map_or(0, |elapsed| elapsed.as_secs());
    match secs {
        0..60 => "just now".to_owned(),
        60..3600 => format!("{} min ago", secs / 60),
        3600..86_400 => format!("{} h ago", secs / 3600),
        _ => format!("{} d ago", secs / 86_400),
    }
}

#[cfg(test)]
mod tests {
    use crossterm::event::KeyModifiers;

    use super::*;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    fn point(prompt: usize) -> RewindPoint {
        RewindPoint {
            prompt,
            text: format!("prompt {prompt}"),
            at: 0,
            files: vec!["a.txt".into()],
            code: true,
        }
    }

    #[test]
    fn a_prompt_then_a_choice_makes_the_rewind() {
        let mut picker = RewindPicker::default();
        picker.open(vec![point(1), point(2), point(3)]);
        assert!(picker.key(key(KeyCode::Up)).is_empty());
        assert!(picker.key(key(KeyCode::Enter)).is_empty());
        let rows: Vec<String> = picker.rows(10).iter().map(|r| r.to_string()).collect();
        assert!(rows[0].contains("Before prompt 2"), "{rows:?}");
        assert_eq!(rows.len(), 4);
        let ops = picker.key(key(KeyCode::Char('2')));
        assert_eq!(
            ops,
            [Op::Rewind {
                to: RewindTarget::Prompt(2),
                scope: RewindScope::Conversation,
                force: false
            }]
        );
        assert!(!picker.is_open());
    }

    #[test]
    fn conflicts_ask_before_forcing_and_esc_leaves_everything() {
        let mut picker = RewindPicker::default();
        picker.conflicts(2, vec!["a.txt".into()], RewindScope::Code);
        assert!(
            picker
                .rows(10)
                .iter()
                .any(|r| r.to_string().contains("a.txt"))
        );
        assert_eq!(
            picker.key(key(KeyCode::Char('y'))),
            [Op::Rewind {
                to: RewindTarget::Prompt(2),
                scope: RewindScope::Code,
                force: true
            }]
        );
        picker.open(vec![point(1)]);
        assert!(picker.key(key(KeyCode::Esc)).is_empty());
        assert!(!picker.is_open());
    }
}
