//! An MCP server's question (elicitation): a dialog over the bottom of the screen with the
//! server's message and the fields it asks for (text, number, yes/no, a choice), and two
//! buttons. Enter moves to the next field (on a button, presses it), Tab/↑↓ move, Space or
//! ←→ toggle a yes/no and cycle a choice, Esc cancels. "Accept" sends the values (after
//! checking required fields and numbers), "Decline" says no; each answer is an [`Op::Answer`]
//! naming its question. Questions queue and are asked one at a time; an interruption of the
//! turn drops them (the session withdraws them too). The form itself is `elicitation_form`.

use std::collections::VecDeque;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Widget};

use tine_session::{Answer, ElicitationAnswer, ElicitationQuestion, Op, QuestionId};

use crate::elicitation_form::{self, Field, FieldKind, FieldValue};
use crate::theme;
use crate::wrap::{IndentedLine, sanitize};

/// A question in the queue, its schema read into fields once.
#[derive(Debug, Clone, PartialEq)]
struct Asked {
    question: ElicitationQuestion,
    /// The form's fields, in the order shown (none in URL mode).
    fields: Vec<Field>,
}

/// A field being edited.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Edit {
    Text(String),
    Bool(Option<bool>),
    Choice(Option<usize>),
}

/// The elicitation dialog and its queue.
#[derive(Debug, Default)]
pub(crate) struct ElicitationDialog {
    queue: VecDeque<Asked>,
    edits: Vec<Edit>,
    /// A field's index, or `fields.len()` (Accept) / `fields.len() + 1` (Decline).
    focus: usize,
    /// Why Accept was refused (a required field empty, a number that is not one).
    error: Option<String>,
}

impl ElicitationDialog {
    pub(crate) fn is_open(&self) -> bool {
        !self.queue.is_empty()
    }

    fn current(&self) -> Option<&Asked> {
        self.queue.front()
    }

    pub(crate) fn push(&mut self, question: ElicitationQuestion) {
        let fields = question
            .schema
            .as_ref()
            .map(elicitation_form::fields)
            .unwrap_or_default();
        self.queue.push_back(Asked { question, fields });
        if self.queue.len() == 1 {
            self.reset();
        }
    }

    /// Takes a question off (the session withdrew it).
    pub(crate) fn withdraw(&mut self, id: QuestionId) {
        let was_current = self.current().is_some_and(|r| r.question.id == id);
        self.queue.retain(|r| r.question.id != id);
        if was_current {
            self.reset();
        }
    }

    /// Drops every question (the turn was interrupted).
    pub(crate) fn clear(&mut self) {
        self.queue.clear();
        self.reset();
    }

    fn reset(&mut self) {
        self.focus = 0;
        self.error = None;
        self.edits = self
            .current()
            .map(|r| r.fields.iter().map(initial_edit).collect())
            .unwrap_or_default();
    }

    fn accept_index(&self) -> usize {
        self.edits.len()
    }

    fn rows(&self) -> usize {
        self.edits.len() + 2
    }

    /// A bracketed paste goes into the text field in focus.
    pub(crate) fn paste(&mut self, text: &str) {
        if let Some(Edit::Text(value)) = self.edits.get_mut(self.focus) {
            value.push_str(&text.replace(['\r', '\n'], " "));
            self.error = None;
        }
    }

    /// One key; the answer when the question is answered.
    pub(crate) fn key(&mut self, key: KeyEvent) -> Vec<Op> {
        if !self.is_open() {
            return Vec::new();
        }
        let on_field = self.focus < self.accept_index();
        match key.code {
            KeyCode::Esc => return self.answer(ElicitationAnswer::Cancel),
            KeyCode::Tab | KeyCode::Down => self.focus = (self.focus + 1) % self.rows(),
            KeyCode::BackTab | KeyCode::Up => {
                self.focus = (self.focus + self.rows() - 1) % self.rows();
            }
            KeyCode::Enter if on_field => self.focus += 1,
            KeyCode::Enter if self.focus == self.accept_index() => {
                return match self.values() {
                    Ok(values) => self.answer(elicitation_form::accept(values)),
                    Err((field, why)) => {
                        self.focus = field;
                        self.error = Some(why);
                        Vec::new()
                    }
                };
            }
            KeyCode::Enter => return self.answer(ElicitationAnswer::Decline),
            KeyCode::Left | KeyCode::Right if !on_field => {
                self.focus = if self.focus == self.accept_index() {
                    self.accept_index() + 1
                } else {
                    self.accept_index()
                };
            }
            code => self.edit(code, key.modifiers),
        }
        Vec::new()
    }

    fn edit(&mut self, code: KeyCode, modifiers: KeyModifiers) {
        let choices = match self.current().and_then(|r| r.fields.get(self.focus)) {
            Some(Field {
                kind: FieldKind::Choice(choices),
                ..
            }) => choices.len(),
            _ => 0,
        };
        let Some(edit) = self.edits.get_mut(self.focus) else {
            return;
        };
        self.error = None;
        match (edit, code) {
            (Edit::Text(value), KeyCode::Backspace) => {
                value.pop();
            }
            (Edit::Text(value), KeyCode::Char(c))
                if !modifiers.intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) =>
            {
                value.push(c);
            }
            (Edit::Bool(value), KeyCode::Char(' ') | KeyCode::Left | KeyCode::Right) => {
                *value = Some(!value.unwrap_or(false));
            }
            (Edit::Bool(value), KeyCode::Char('y')) => *value = Some(true),
            (Edit::Bool(value), KeyCode::Char('n')) => *value = Some(false),
            (Edit::Choice(index), KeyCode::Char(' ') | KeyCode::Right) if choices > 0 => {
                *index = Some(index.map_or(0, |i| (i + 1) % choices));
            }
            (Edit::Choice(index), KeyCode::Left) if choices > 0 => {
                *index = Some(index.map_or(choices - 1, |i| (i + choices - 1) % choices));
            }
            _ => {}
        }
    }

    /// The form's values, or the first field that is wrong and why.
    fn values(&self) -> Result<Vec<(String, FieldValue)>, (usize, String)> {
        let Some(request) = self.current() else {
            return Ok(Vec::new());
        };
        let mut values = Vec::new();
        for (i, (field, edit)) in request.fields.iter().zip(&self.edits).enumerate() {
            let label = label(field);
            let value = match (edit, &field.kind) {
                (Edit::Text(text), _) if text.trim().is_empty() => None,
                (Edit::Text(text), FieldKind::Integer) => match text.trim().parse::<i64>() {
                    Ok(n) => Some(FieldValue::Integer(n)),
                    Err(_) => return Err((i, format!("{label} must be a whole number"))),
                },
                (Edit::Text(text), FieldKind::Number) => match text.trim().parse::<f64>() {
                    Ok(n) if n.is_finite() => Some(FieldValue::Number(text.trim().to_owned())),
                    _ => return Err((i, format!("{label} must be a number"))),
                },
                (Edit::Text(text), _) => Some(FieldValue::Text(text.clone())),
                (Edit::Bool(value), _) => value.map(FieldValue::Bool),
                (Edit::Choice(index), FieldKind::Choice(choices)) => index
                    .and_then(|i| choices.get(i))
                    .map(|c| FieldValue::Text(c.clone())),
                (Edit::Choice(_), _) => None,
            };
            match value {
                Some(value) => values.push((field.name.clone(), value)),
                None if field.required => return Err((i, format!("{label} is required"))),
                None => {}
            }
        }
        Ok(values)
    }

    fn answer(&mut self, answer: ElicitationAnswer) -> Vec<Op> {
        let Some(asked) = self.queue.pop_front() else {
            return Vec::new();
        };
        self.reset();
        vec![Op::Answer {
            question: asked.question.id,
            answer: Answer::Elicitation(answer),
        }]
    }

    /// The dialog's rows at `width`, and where the cursor goes (a text field in focus).
    fn body(&self, width: u16) -> (Vec<Line<'static>>, Option<(u16, u16)>) {
        let Some(Asked {
            question: request,
            fields,
        }) = self.current()
        else {
            return (Vec::new(), None);
        };
        let inner = width.saturating_sub(4).max(1);
        let indented = |body: Line<'static>| IndentedLine {
            first: vec![Span::raw("  ")],
            rest: vec![Span::raw("  ")],
            body,
        };
        let mut rows = Vec::new();
        IndentedLine::plain(Line::from(Span::styled(
            format!("MCP server {} asks", sanitize(&request.server)),
            theme::bold(),
        )))
        .wrap(inner, &mut rows);
        rows.push(Line::default());
        for line in sanitize(&request.message).lines() {
            indented(Line::from(line.to_owned())).wrap(inner, &mut rows);
        }
        if let Some(url) = &request.url {
            indented(Line::from(Span::styled(sanitize(url), theme::link()))).wrap(inner, &mut rows);
        }
        rows.push(Line::default());
        let mut cursor = None;
        for (i, (field, edit)) in fields.iter().zip(&self.edits).enumerate() {
            let focused = i == self.focus;
            let marker = if focused { "❯ " } else { "  " };
            let style = if focused {
                theme::selected()
            } else {
                Style::default()
            };
            let required = if field.required { "*" } else { "" };
            let prompt = format!("{marker}{}{required}: ", label(field));
            let value = shown_value(field, edit);
            let line = IndentedLine {
                first: vec![Span::styled(prompt, style)],
                rest: vec![Span::raw("    ")],
                body: Line::from(value),
            };
            let before = rows.len();
            line.wrap(inner, &mut rows);
            if focused && matches!(edit, Edit::Text(_)) {
                let last = rows.len().max(before + 1) - 1;
                let col = rows.get(last).map_or(0, Line::width);
                cursor = Some((
                    u16::try_from(col).unwrap_or(0),
                    u16::try_from(last).unwrap_or(0),
                ));
            }
            if let Some(description) = &field.description {
                IndentedLine {
                    first: vec![Span::raw("    ")],
                    rest: vec![Span::raw("    ")],
                    body: Line::from(Span::styled(sanitize(description), theme::dim())),
                }
                .wrap(inner, &mut rows);
            }
        }
        if !fields.is_empty() {
            rows.push(Line::default());
        }
        let button = |text: &str, index: usize| {
            if self.focus == index {
                Span::styled(format!("❯ {text}"), theme::selected())
            } else {
                Span::raw(format!("  {text}"))
            }
        };
        rows.push(Line::from(vec![
            button("Accept", self.accept_index()),
            Span::raw("   "),
            button("Decline", self.accept_index() + 1),
        ]));
        if let Some(error) = &self.error {
            IndentedLine::plain(Line::from(Span::styled(error.clone(), theme::error())))
                .wrap(inner, &mut rows);
        }
        let waiting = self.queue.len().saturating_sub(1);
        let mut footer =
            "enter next / press · tab or ↑↓ move · space toggle · esc cancel".to_owned();
        if waiting > 0 {
            footer = format!("{waiting} more waiting · {footer}");
        }
        rows.push(Line::default());
        IndentedLine::plain(Line::from(Span::styled(footer, theme::dim()))).wrap(inner, &mut rows);
        (rows, cursor)
    }

    /// Rows the dialog needs at `width`, borders included.
    pub(crate) fn height(&self, width: u16) -> u16 {
        u16::try_from(self.body(width).0.len() + 2).unwrap_or(u16::MAX)
    }

    /// Draws the dialog over the bottom of `area` (above its last row, the status line),
    /// replacing what was there; returns where the cursor goes.
    pub(crate) fn render_over(&self, area: Rect, buf: &mut Buffer) -> Option<Position> {
        if !self.is_open() || area.height < 4 {
            return None;
        }
        let height = self.height(area.width).min(area.height - 1);
        let rect = Rect::new(
            area.x,
            area.y + area.height - 1 - height,
            area.width,
            height,
        );
        Clear.render(rect, buf);
        let block = Block::default()
            .borders(Borders::ALL)
            .border_type(BorderType::Rounded)
            .border_style(theme::dialog_border());
        let inner = block.inner(rect);
        block.render(rect, buf);
        let inner = Rect::new(
            inner.x + 1,
            inner.y,
            inner.width.saturating_sub(2),
            inner.height,
        );
        let (rows, cursor) = self.body(rect.width);
        // Keep the buttons in sight when the form is taller than the screen.
        let skip = rows.len().saturating_sub(usize::from(inner.height));
        for (i, row) in rows.iter().skip(skip).enumerate() {
            let y = inner.y + u16::try_from(i).unwrap_or(u16::MAX);
            if y >= inner.y + inner.height {
                break;
            }
            buf.set_line(inner.x, y, row, inner.width);
        }
        let (col, row) = cursor?;
        let row = usize::from(row).checked_sub(skip)?;
        let row = u16::try_from(row).ok().filter(|r| *r < inner.height)?;
        Some(Position::new(inner.x + col.min(inner.width), inner.y + row))
    }
}

fn label(field: &Field) -> String {
    sanitize(field.title.as_deref().unwrap_or(&field.name))
}

fn initial_edit(field: &Field) -> Edit {
    match (&field.kind, &field.default) {
        (FieldKind::Boolean, Some(FieldValue::Bool(b))) => Edit::Bool(Some(*b)),
        (FieldKind::Boolean, _) => Edit::Bool(None),
        (FieldKind::Choice(choices), Some(FieldValue::Text(text))) => {
            Edit::Choice(choices.iter().position(|c| c == text))
        }
        (FieldKind::Choice(_), _) => Edit::Choice(None),
        (_, Some(FieldValue::Text(text) | FieldValue::Number(text))) => Edit::Text(text.clone()),
        (_, Some(FieldValue::Integer(n))) => Edit::Text(n.to_string()),
        (_, Some(FieldValue::Bool(b))) => Edit::Text(b.to_string()),
        (_, None) => Edit::Text(String::new()),
    }
}

fn shown_value(field: &Field, edit: &Edit) -> String {
    match (edit, &field.kind) {
        (Edit::Text(text), _) => sanitize(text),
        (Edit::Bool(None), _) => "[ ] (space: yes)".to_owned(),
        (Edit::Bool(Some(true)), _) => "[x] yes".to_owned(),
        (Edit::Bool(Some(false)), _) => "[ ] no".to_owned(),
        (Edit::Choice(index), FieldKind::Choice(choices)) => {
            let shown = index
                .and_then(|i| choices.get(i))
                .map_or("(choose)".to_owned(), |c| sanitize(c));
            format!("‹ {shown} › of {}", choices.len())
        }
        (Edit::Choice(_), _) => String::new(),
    }
}

#[cfg(test)]
#[path = "elicitation_tests.rs"]
mod tests;
