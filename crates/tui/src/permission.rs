//! The permission dialog: shown above the input, which it replaces while open; it names the
//! tool and the file or command, shows an Edit's or Write's change as a diff, and offers
//! "1. Yes", "2. Yes, and don't ask again for `<rule>`" (for an edit in the project: "Yes,
//! allow all edits during this session", which switches to acceptEdits and saves nothing),
//! "3. No, and tell tine what to do differently". Requests queue and are asked one by one, in order; each answer is an
//! [`Op::Answer`] naming its question. A stuck model's question ("let it keep going?") is
//! asked in the same place, in the same queue.

use std::collections::VecDeque;
use std::path::Path;

use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Widget};
use tine_session::{
    AlwaysAllow, Answer, Op, PermissionAnswer, PermissionMode, PermissionRequest,
    PersistDestination, QuestionId, StuckDecision, StuckQuestion,
};

use crate::choice::Choice;
use crate::diff::{self, DiffLine, DiffSource};
use crate::shown;
use crate::theme;
use crate::wrap::{IndentedLine, sanitize};

/// Lines of an Edit/Write preview shown in the dialog.
const PREVIEW_LINES: usize = 10;

/// One question of the dialog, with what it shows worked out once.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Ask {
    Permission {
        request: PermissionRequest,
        /// What it touches, a file relative to the project.
        shown: String,
        /// The preview's diff lines.
        preview: Option<Vec<DiffLine>>,
    },
    /// Once: let the model go on; No: stop the turn.
    Stuck {
        question: StuckQuestion,
        /// "Bash(cargo tset)".
        call: String,
    },
}

impl Ask {
    pub(crate) fn id(&self) -> QuestionId {
        match self {
            Ask::Permission { request, .. } => request.id,
            Ask::Stuck { question, .. } => question.id,
        }
    }
}

#[derive(Debug, Default)]
pub(crate) struct PermissionDialog {
    queue: VecDeque<Ask>,
    selected: usize,
    /// Option 3 chosen: the feedback being typed.
    feedback: Option<String>,
}

impl PermissionDialog {
    pub(crate) fn is_open(&self) -> bool {
        !self.queue.is_empty()
    }

    pub(crate) fn current(&self) -> Option<&Ask> {
        self.queue.front()
    }

    pub(crate) fn waiting(&self) -> usize {
        self.queue.len()
    }

    /// A permission request; files inside `cwd` are shown relative to it.
    pub(crate) fn push(&mut self, request: PermissionRequest, cwd: Option<&Path>) {
        let shown = shown::target(&request.tool, &request.target, cwd);
        let preview = request.preview.as_ref().map(|p| {
            diff::diff_lines(&DiffSource::Texts {
                before: &p.before,
                after: &p.after,
            })
        });
        self.queue.push_back(Ask::Permission {
            request,
            shown,
            preview,
        });
    }

    /// A stuck model's question.
    pub(crate) fn push_stuck(&mut self, question: StuckQuestion, cwd: Option<&Path>) {
        let args = shown::call_args(&question.tool, &question.input, cwd);
        let call = if args.is_empty() {
            question.tool.clone()
        } else {
            format!("{}({args})", question.tool)
        };
        self.queue.push_back(Ask::Stuck { question, call });
    }

    /// Takes question `id` off (the session withdrew it: its turn was interrupted).
    pub(crate) fn withdraw(&mut self, id: QuestionId) {
        let was_current = self.current().is_some_and(|ask| ask.id() == id);
        self.queue.retain(|ask| ask.id() != id);
        if was_current {
            self.selected = 0;
            self.feedback = None;
        }
    }

    /// Drops every request (the turn they belonged to ended).
    pub(crate) fn clear(&mut self) {
        self.queue.clear();
        self.selected = 0;
        self.feedback = None;
    }

    pub(crate) fn choices(&self) -> Vec<Choice> {
        match self.current() {
            Some(Ask::Permission { request: r, .. }) => crate::plan_approval::choices(&r.tool)
                .unwrap_or_else(|| {
                    if r.always.is_some() {
                        vec![Choice::Once, Choice::Always, Choice::No]
                    } else {
                        vec![Choice::Once, Choice::No]
                    }
                }),
            Some(Ask::Stuck { .. }) => vec![Choice::Once, Choice::No],
            None => Vec::new(),
        }
    }

    pub(crate) fn selected(&self) -> Choice {
        self.choices()
            .get(self.selected)
            .copied()
            .unwrap_or(Choice::Once)
    }

    pub(crate) fn is_typing_feedback(&self) -> bool {
        self.feedback.is_some()
    }

    pub(crate) fn feedback_mut(&mut self) -> Option<&mut String> {
        self.feedback.as_mut()
    }

    pub(crate) fn move_selection(&mut self, delta: isize) {
        let n = self.choices().len();
        if n == 0 || self.feedback.is_some() {
            return;
        }
        let n = isize::try_from(n).unwrap_or(1);
        let current = isize::try_from(self.selected).unwrap_or(0);
        self.selected = usize::try_from((current + delta).clamp(0, n - 1)).unwrap_or(0);
    }

    /// Option `number` (1-based) as shown.
    pub(crate) fn choice_by_number(&self, number: usize) -> Option<Choice> {
        number
            .checked_sub(1)
            .and_then(|i| self.choices().get(i).copied())
    }

    /// Acts on a choice: the answer when the question is answered; `None` when the choice
    /// opened the feedback line.
    pub(crate) fn choose(&mut self, choice: Choice) -> Option<Op> {
        if matches!(self.current(), Some(Ask::Stuck { .. })) {
            return self.answer_stuck(choice != Choice::No);
        }
        let answer = match choice {
            Choice::Once => PermissionAnswer::Once,
            Choice::Always => PermissionAnswer::Always,
            Choice::No => match self.feedback.take() {
                Some(text) => PermissionAnswer::Deny {
                    feedback: Some(text).filter(|t| !t.trim().is_empty()),
                },
                None => {
                    self.selected = self
                        .choices()
                        .iter()
                        .position(|c| *c == Choice::No)
                        .unwrap_or(0);
                    self.feedback = Some(String::new());
                    return None;
                }
            },
        };
        self.answer(answer)
    }

    /// Esc: No, without feedback (or, while typing feedback, with what was typed so far); for
    /// a stuck model, stop.
    pub(crate) fn reject(&mut self) -> Option<Op> {
        if matches!(self.current(), Some(Ask::Stuck { .. })) {
            return self.answer_stuck(false);
        }
        let feedback = self.feedback.take().filter(|t| !t.trim().is_empty());
        self.answer(PermissionAnswer::Deny { feedback })
    }

    fn answer(&mut self, answer: PermissionAnswer) -> Option<Op> {
        self.pop(Answer::Permission(answer))
    }

    fn answer_stuck(&mut self, keep_going: bool) -> Option<Op> {
        let decision = if keep_going {
            StuckDecision::KeepGoing
        } else {
            StuckDecision::Stop
        };
        self.pop(Answer::Stuck(decision))
    }

    /// The question shown, answered.
    fn pop(&mut self, answer: Answer) -> Option<Op> {
        let ask = self.queue.pop_front()?;
        self.selected = 0;
        self.feedback = None;
        Some(Op::Answer {
            question: ask.id(),
            answer,
        })
    }

    fn body(&self, width: u16) -> (Vec<Line<'static>>, Option<(u16, u16)>) {
        let inner = width.saturating_sub(4).max(1);
        let (request, shown, preview) = match self.current() {
            None => return (Vec::new(), None),
            Some(Ask::Stuck { question, call }) => {
                return (self.stuck_body(question, call, inner), None);
            }
            Some(Ask::Permission {
                request,
                shown,
                preview,
            }) => (request, shown, preview),
        };
        let mut logical: Vec<IndentedLine> = Vec::new();
        logical.push(IndentedLine::plain(Line::from(Span::styled(
            title(&request.tool),
            theme::bold(),
        ))));
        logical.push(IndentedLine::blank());
        for line in sanitize(shown).lines() {
            logical.push(IndentedLine {
                first: vec![Span::raw("  ")],
                rest: vec![Span::raw("  ")],
                body: Line::from(line.to_owned()),
            });
        }
        if !request.reason.is_empty() {
            logical.push(IndentedLine {
                first: vec![Span::raw("  ")],
                rest: vec![Span::raw("  ")],
                body: Line::from(Span::styled(sanitize(&request.reason), theme::dim())),
            });
        }
        if let Some(lines) = preview {
            let (rows, more) = diff::render(lines, Some(PREVIEW_LINES));
            logical.push(IndentedLine::blank());
            logical.extend(
                rows.into_iter()
                    .map(|r| r.nested(&[Span::raw("  ")], &[Span::raw("  ")])),
            );
            if more > 0 {
                logical.push(IndentedLine::plain(Line::from(Span::styled(
                    format!("  … +{more} lines"),
                    theme::dim(),
                ))));
            }
        }
        logical.push(IndentedLine::blank());
        let question =
            crate::plan_approval::question(&request.tool).unwrap_or("Do you want to proceed?");
        logical.push(IndentedLine::plain(Line::from(question)));
        let mut rows = Vec::new();
        for line in &logical {
            line.wrap(inner, &mut rows);
        }
        let mut cursor = None;
        for (i, choice) in self.choices().iter().enumerate() {
            let plan_label = crate::plan_approval::label(&request.tool, *choice);
            let label = plan_label.unwrap_or_else(|| match choice {
                Choice::Once => "Yes".to_owned(),
                Choice::Always => always_label(request.always.as_ref(), &request.tool),
                Choice::No => "No, and tell tine what to do differently (esc)".to_owned(),
            });
            self.option_row(i, label, inner, &mut rows);
            if *choice == Choice::No
                && let Some(text) = &self.feedback
            {
                let line = IndentedLine {
                    first: vec![Span::styled("     > ", theme::accent())],
                    rest: vec![Span::raw("       ")],
                    body: Line::from(sanitize(text)),
                };
                let before = rows.len();
                line.wrap(inner, &mut rows);
                let last = rows.len().max(before + 1) - 1;
                let col = rows.get(last).map_or(0, Line::width);
                cursor = Some((
                    u16::try_from(col).unwrap_or(0),
                    u16::try_from(last).unwrap_or(0),
                ));
            }
        }
        self.footer(&mut rows, "esc to reject");
        (rows, cursor)
    }

    /// Option `i` ("❯ 1. Yes" when selected), wrapped to `inner`.
    fn option_row(&self, i: usize, label: String, inner: u16, rows: &mut Vec<Line<'static>>) {
        let chosen = i == self.selected;
        let style = if chosen {
            theme::selected()
        } else {
            Style::default()
        };
        let marker = if chosen { "❯ " } else { "  " };
        IndentedLine {
            first: vec![Span::styled(format!("{marker}{}. ", i + 1), style)],
            rest: vec![Span::raw("     ")],
            body: Line::from(Span::styled(label, style)),
        }
        .wrap(inner, rows);
    }

    fn footer(&self, rows: &mut Vec<Line<'static>>, esc: &str) {
        let waiting = self.queue.len().saturating_sub(1);
        let mut footer = format!("enter to select · ↑↓ or number · {esc}");
        if waiting > 0 {
            footer = format!("{waiting} more waiting · {footer}");
        }
        rows.push(Line::default());
        rows.push(Line::from(Span::styled(footer, theme::dim())));
    }

    /// "The model seems stuck": the call, the error it keeps getting, and whether to go on.
    fn stuck_body(&self, question: &StuckQuestion, call: &str, inner: u16) -> Vec<Line<'static>> {
        let indented = |body: Line<'static>| IndentedLine {
            first: vec![Span::raw("  ")],
            rest: vec![Span::raw("  ")],
            body,
        };
        let logical = [
            IndentedLine::plain(Line::from(Span::styled(
                "The model seems stuck",
                theme::bold(),
            ))),
            IndentedLine::blank(),
            indented(Line::from(format!(
                "It made the same call {} times in a row and got the same error each time:",
                question.repeats
            ))),
            indented(Line::from(sanitize(call))),
            indented(Line::from(Span::styled(
                sanitize(&question.error),
                theme::dim(),
            ))),
            IndentedLine::blank(),
            IndentedLine::plain(Line::from("Let it keep going?")),
        ];
        let mut rows = Vec::new();
        for line in &logical {
            line.wrap(inner, &mut rows);
        }
        for (i, choice) in self.choices().iter().enumerate() {
            let label = match choice {
                Choice::No => "No, stop the turn (esc)",
                Choice::Once | Choice::Always => "Yes, let it try again",
            };
            self.option_row(i, label.to_owned(), inner, &mut rows);
        }
        self.footer(&mut rows, "esc to stop");
        rows
    }

    /// Rows the dialog needs at `width` (borders included).
    pub(crate) fn height(&self, width: u16) -> u16 {
        u16::try_from(self.body(width).0.len() + 2).unwrap_or(u16::MAX)
    }

    /// Draws it; returns where the cursor goes while feedback is typed.
    pub(crate) fn render(&self, area: Rect, buf: &mut Buffer) -> Option<Position> {
        let (rows, cursor) = self.body(area.width);
        Block::default()
            .borders(Borders::ALL)
            .border_type(BorderType::Rounded)
            .border_style(theme::dialog_border())
            .render(area, buf);
        let inner = Rect {
            x: area.x + 2,
            y: area.y + 1,
            width: area.width.saturating_sub(4),
            height: area.height.saturating_sub(2),
        };
        // When the screen is too short for all of it, the title and the end (the options)
        // matter most: rows after the title go first.
        let height = usize::from(inner.height);
        let cut = rows.len().saturating_sub(height);
        let shown: Vec<(usize, &Line<'static>)> = rows
            .iter()
            .enumerate()
            .filter(|(i, _)| cut == 0 || *i == 0 || *i > cut)
            .collect();
        for (y, (_, row)) in shown.iter().enumerate().take(height) {
            let y = inner.y + u16::try_from(y).unwrap_or(u16::MAX);
            buf.set_line(inner.x, y, row, inner.width);
        }
        cursor.and_then(|(col, row)| {
            let row = usize::from(row);
            let row = match row {
                0 => 0,
                r if r > cut => r - cut,
                _ => return None,
            };
            let y = inner.y + u16::try_from(row).ok()?;
            Some(Position::new(
                inner.x + col.min(inner.width.saturating_sub(1)),
                y,
            ))
        })
    }
}

/// Option 2's words for what "don't ask again" does.
fn always_label(always: Option<&AlwaysAllow>, tool: &str) -> String {
    match always {
        Some(AlwaysAllow::Mode(PermissionMode::AcceptEdits)) => {
            "Yes, allow all edits during this session".to_owned()
        }
        Some(AlwaysAllow::Mode(mode)) => {
            format!("Yes, and switch this session to {}", mode.as_str())
        }
        Some(
            always @ AlwaysAllow::Rules {
                destination: PersistDestination::Session,
                ..
            },
        ) => format!("Yes, and allow {always} during this session"),
        Some(always @ AlwaysAllow::Rules { .. }) => {
            format!("Yes, and don't ask again for {always}")
        }
        None => format!("Yes, and don't ask again for {tool}"),
    }
}

fn title(tool: &str) -> String {
    if let Some(title) = crate::plan_approval::title(tool) {
        return title;
    }
    match tool {
        "Bash" => "Bash command".to_owned(),
        "Edit" | "MultiEdit" | "Write" | "NotebookEdit" => format!("{tool} file"),
        "WebFetch" => "Fetch".to_owned(),
        other => format!("Tool use: {other}"),
    }
}

#[cfg(test)]
#[path = "permission_tests.rs"]
mod tests;
