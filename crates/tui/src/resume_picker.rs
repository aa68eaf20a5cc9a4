//! `/resume` without an id: this project's sessions to choose from (the first prompt, age and
//! messages of each, newest first, the one in place left out); Enter opens the one selected
//! (`Op::Resume`, and the session shows it again), Esc closes the list.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::text::{Line, Span};
use serde_json::Value;
use tine_config::SessionId;
use tine_session::Op;

use crate::theme;
use crate::wrap::sanitize;

/// One session offered.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Offered {
    id: String,
    prompt: String,
    age_secs: u64,
    messages: u64,
}

/// The list, while it shows.
#[derive(Debug, Default)]
pub(crate) struct ResumePicker {
    sessions: Vec<Offered>,
    selected: usize,
}

impl ResumePicker {
    /// Whether it takes the keys.
    pub(crate) fn is_open(&self) -> bool {
        !self.sessions.is_empty()
    }

    /// `/resume`'s data (`{"sessions": [...]}`): the earlier sessions to pick from.
    pub(crate) fn open(&mut self, data: &Value) {
        let field = |s: &Value, key: &str| s.get(key).and_then(Value::as_u64).unwrap_or(0);
        self.sessions = data
            .get("sessions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|s| s.get("current").and_then(Value::as_bool) != Some(true))
            .filter_map(|s| {
                Some(Offered {
                    id: s.get("id")?.as_str()?.to_owned(),
                    prompt: s
                        .get("prompt")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned(),
                    age_secs: field(s, "age_secs"),
                    messages: field(s, "messages"),
                })
            })
            .collect();
        self.selected = 0;
    }

    /// One key: the op that opens the session chosen, if one was.
    pub(crate) fn key(&mut self, key: KeyEvent) -> Vec<Op> {
        match key.code {
            KeyCode::Esc => self.sessions.clear(),
            KeyCode::Up => self.selected = self.selected.saturating_sub(1),
            KeyCode::Down => {
                self.selected = (self.selected + 1).min(self.sessions.len().saturating_sub(1));
            }
            KeyCode::Enter => {
                let chosen = self.sessions.get(self.selected).map(|s| s.id.clone());
                self.sessions.clear();
                if let Some(id) = chosen.and_then(|id| SessionId::parse(&id).ok()) {
                    return vec![Op::Resume(id)];
                }
            }
            _ => {}
        }
        Vec::new()
    }

    /// Its rows, at most `max` sessions around the selection.
    pub(crate) fn rows(&self, max: usize) -> Vec<Line<'static>> {
        if self.sessions.is_empty() {
            return Vec::new();
        }
        let mut rows = vec![Line::from(Span::styled(
            "Resume which session? (↑/↓, enter; esc to close)".to_owned(),
            theme::dim(),
        ))];
        let room = max.saturating_sub(1).max(1);
        let start = (self.selected + 1).saturating_sub(room);
        for (i, s) in self.sessions.iter().enumerate().skip(start).take(room) {
            let marker = if i == self.selected { "❯ " } else { "  " };
            let prompt = if s.prompt.is_empty() {
                "(no prompt)"
            } else {
                &s.prompt
            };
            let line = format!(
                "{marker}{}  ({}, {} messages)",
                sanitize(prompt),
                age(s.age_secs),
                s.messages
            );
            let style = if i == self.selected {
                theme::accent()
            } else {
                ratatui::style::Style::default()
            };
            rows.push(Line::from(Span::styled(line, style)));
        }
        rows
    }
}

fn age(secs: u64) -> String {
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
    use serde_json::json;

    use super::*;

    #[test]
    fn the_earlier_sessions_are_offered_and_enter_opens_one() {
        let a = "11111111-1111-4111-8111-111111111111";
        let b = "22222222-2222-4222-8222-222222222222";
        let mut picker = ResumePicker::default();
        picker.open(&json!({"sessions": [
            {"id": a, "prompt": "this one", "age_secs": 1, "messages": 2, "current": true},
            {"id": b, "prompt": "fix the parser", "age_secs": 7200, "messages": 14, "current": false}
        ]}));
        let rows: Vec<String> = picker.rows(10).iter().map(|r| r.to_string()).collect();
        assert_eq!(rows.len(), 2, "{rows:?}");
        assert!(
            rows[1].contains("fix the parser")
                && rows[1].contains("2 h ago")
                && rows[1].contains("14 messages")
        );
        let ops = picker.key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
        assert_eq!(ops, [Op::Resume(SessionId::parse(b).unwrap())]);
        assert!(!picker.is_open());
    }
}
