//! A list to choose from, each row an op: `/resume` without an id (this project's sessions,
//! the first prompt, age and messages of each, newest first, the one in place left out; Enter
//! is `Op::Resume` and the session shows it again) and `/model` without a name (the aliases,
//! the model in use and the ones used before; Enter is `Op::SetModel`). Esc closes it.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::text::{Line, Span};
use serde_json::Value;
use tine_config::SessionId;
use tine_session::Op;

use crate::theme;
use crate::wrap::sanitize;

/// The list, while it shows: each row's text and the op choosing it makes.
#[derive(Debug, Default)]
pub(crate) struct ResumePicker {
    /// The panel's border title.
    panel: &'static str,
    title: &'static str,
    items: Vec<(String, Op)>,
    selected: usize,
}

impl ResumePicker {
    /// Whether it takes the keys.
    pub(crate) fn is_open(&self) -> bool {
        !self.items.is_empty()
    }

    /// `/resume`'s data (`{"sessions": [...]}`): the earlier sessions to pick from.
    pub(crate) fn open(&mut self, data: &Value) {
        let field = |s: &Value, key: &str| s.get(key).and_then(Value::as_u64).unwrap_or(0);
        self.items = data
            .get("sessions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|s| s.get("current").and_then(Value::as_bool) != Some(true))
            .filter_map(|s| {
                let id = SessionId::parse(s.get("id")?.as_str()?).ok()?;
                let prompt = s.get("prompt").and_then(Value::as_str).unwrap_or("");
                let prompt = if prompt.is_empty() {
                    "(no prompt)"
                } else {
                    prompt
                };
                let label = format!(
                    "{}  ({}, {} messages)",
                    sanitize(prompt),
                    age(field(s, "age_secs")),
                    field(s, "messages")
                );
                Some((label, Op::Resume(id)))
            })
            .collect();
        self.panel = " Resume ";
        self.title = "Resume which session? (↑/↓, enter; esc to close)";
        self.selected = 0;
    }

    /// `/model`'s data (`{"model": ..., "choices": [...]}`): the models to switch to, the
    /// one in use selected.
    pub(crate) fn open_models(&mut self, data: &Value) {
        let current = data.get("model").and_then(Value::as_str).unwrap_or("");
        let mut in_use = None;
        self.items = data
            .get("choices")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|c| {
                let name = c.get("name")?.as_str()?;
                let about = c.get("about").and_then(Value::as_str).unwrap_or("");
                let mark = if c.get("id").and_then(Value::as_str) == Some(current) {
                    in_use = Some(name.to_owned());
                    " (in use)"
                } else {
                    ""
                };
                Some((
                    format!("{name}{mark}  {about}"),
                    Op::SetModel(name.to_owned()),
                ))
            })
            .collect();
        self.panel = " Model ";
        self.title = "Switch to which model? (↑/↓, enter; esc to close)";
        self.selected = self
            .items
            .iter()
            .position(|(_, op)| matches!((op, &in_use), (Op::SetModel(m), Some(u)) if m == u))
            .unwrap_or(0);
    }

    /// The panel's border title.
    pub(crate) fn panel_title(&self) -> &'static str {
        self.panel
    }

    /// One key: the op of the row chosen, if one was.
    pub(crate) fn key(&mut self, key: KeyEvent) -> Vec<Op> {
        match key.code {
            KeyCode::Esc => self.items.clear(),
            KeyCode::Up => self.selected = self.selected.saturating_sub(1),
            KeyCode::Down => {
                self.selected = (self.selected + 1).min(self.items.len().saturating_sub(1));
            }
            KeyCode::Enter => {
                let chosen = self.items.get(self.selected).map(|(_, op)| op.clone());
                self.items.clear();
                return chosen.into_iter().collect();
            }
            _ => {}
        }
        Vec::new()
    }

    /// Its rows, at most `max` around the selection.
    pub(crate) fn rows(&self, max: usize) -> Vec<Line<'static>> {
        if self.items.is_empty() {
            return Vec::new();
        }
        let mut rows = vec![Line::from(Span::styled(
            self.title.to_owned(),
            theme::dim(),
        ))];
        let room = max.saturating_sub(1).max(1);
        let start = (self.selected + 1).saturating_sub(room);
        for (i, (label, _)) in self.items.iter().enumerate().skip(start).take(room) {
            let marker = if i == self.selected { "❯ " } else { "  " };
            let style = if i == self.selected {
                theme::accent()
            } else {
                ratatui::style::Style::default()
            };
            rows.push(Line::from(Span::styled(format!("{marker}{label}"), style)));
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
        picker.open_models(&json!({"model": "claude-opus-4-1", "choices": [
            {"name": "opus", "id": "claude-opus-4-1", "about": "the most capable"},
            {"name": "haiku", "id": "claude-haiku-4-5", "about": "the fastest"}
        ]}));
        assert!(picker.rows(10)[1].to_string().contains("opus (in use)"));
        assert_eq!(picker.panel_title(), " Model ");
        // The model in use is where the selection starts.
        picker.open_models(&json!({"model": "claude-haiku-4-5", "choices": [
            {"name": "opus", "id": "claude-opus-4-1", "about": "the most capable"},
            {"name": "haiku", "id": "claude-haiku-4-5", "about": "the fastest"}
        ]}));
        assert!(
            picker.rows(10)[2].to_string().starts_with('❯'),
            "{:?}",
            picker.rows(10)
        );
        picker.key(KeyEvent::new(KeyCode::Up, KeyModifiers::NONE));
        let ops = picker.key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
        assert_eq!(ops, [Op::SetModel("opus".into())]);
        picker.open_models(&json!({"model": "claude-opus-4-1", "choices": [
            {"name": "opus", "id": "claude-opus-4-1", "about": "the most capable"},
            {"name": "haiku", "id": "claude-haiku-4-5", "about": "the fastest"}
        ]}));
        picker.key(KeyEvent::new(KeyCode::Down, KeyModifiers::NONE));
        let ops = picker.key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
        assert_eq!(ops, [Op::SetModel("haiku".into())]);
    }
}
