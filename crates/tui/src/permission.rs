//! The permission dialog (seed 003 §五): shown above the input, which it replaces while open;
//! it names the tool and the file or command, and offers "1. Yes", "2. Yes, and don't ask again
//! for `<rule>`", "3. No, and tell tine what to do differently". Requests queue and are asked one
//! by one, in order. A stuck model's question ("let it keep going?") is asked in the same place,
//! in the same queue.

use std::collections::VecDeque;

use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Widget};

use crate::diff;
use crate::event::{PermissionAnswer, PermissionRequest, StuckQuestion, UiCommand};
use crate::theme;
use crate::wrap::{IndentedLine, sanitize};

/// Lines of an Edit/Write preview shown in the dialog.
const PREVIEW_LINES: usize = 10;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    Once,
    Always,
    No,
}

/// One question of the dialog.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ask {
    Permission(PermissionRequest),
    /// Once: let the model go on; No: stop the turn.
    Stuck(StuckQuestion),
}

impl Ask {
    pub fn id(&self) -> &str {
        match self {
            Ask::Permission(r) => &r.id,
            Ask::Stuck(q) => &q.id,
        }
    }
}

#[derive(Debug, Default)]
pub struct PermissionDialog {
    queue: VecDeque<Ask>,
    selected: usize,
    /// Option 3 chosen: the feedback being typed.
    feedback: Option<String>,
}

impl PermissionDialog {
    pub fn is_open(&self) -> bool {
        !self.queue.is_empty()
    }

    pub fn current(&self) -> Option<&Ask> {
        self.queue.front()
    }

    pub fn waiting(&self) -> usize {
        self.queue.len()
    }

    pub fn push(&mut self, request: PermissionRequest) {
        self.queue.push_back(Ask::Permission(request));
    }

    pub fn push_stuck(&mut self, question: StuckQuestion) {
        self.queue.push_back(Ask::Stuck(question));
    }

    /// Drops every request (the turn they belonged to ended).
    pub fn clear(&mut self) {
        self.queue.clear();
        self.selected = 0;
        self.feedback = None;
    }

    pub fn choices(&self) -> Vec<Choice> {
        match self.current() {
            Some(Ask::Permission(r)) => {
                crate::plan_approval::choices(&r.tool).unwrap_or_else(|| {
                    if r.always_rule.is_some() {
                        vec![Choice::Once, Choice::Always, Choice::No]
                    } else {
                        vec![Choice::Once, Choice::No]
                    }
                })
            }
            Some(Ask::Stuck(_)) => vec![Choice::Once, Choice::No],
            None => Vec::new(),
        }
    }

    pub fn selected(&self) -> Choice {
        self.choices()
            .get(self.selected)
            .copied()
            .unwrap_or(Choice::Once)
    }

    pub fn is_typing_feedback(&self) -> bool {
        self.feedback.is_some()
    }

    pub fn feedback_mut(&mut self) -> Option<&mut String> {
        self.feedback.as_mut()
    }

    pub fn move_selection(&mut self, delta: isize) {
        let n = self.choices().len();
        if n == 0 || self.feedback.is_some() {
            return;
        }
        let n = isize::try_from(n).unwrap_or(1);
        let current = isize::try_from(self.selected).unwrap_or(0);
        self.selected = usize::try_from((current + delta).clamp(0, n - 1)).unwrap_or(0);
    }

    /// Option `number` (1-based) as shown.
    pub fn choice_by_number(&self, number: usize) -> Option<Choice> {
        number
            .checked_sub(1)
            .and_then(|i| self.choices().get(i).copied())
    }

    /// Acts on a choice: the answer's command when the question is answered; `None` when the
    /// choice opened the feedback line.
    pub fn choose(&mut self, choice: Choice) -> Option<UiCommand> {
        if matches!(self.current(), Some(Ask::Stuck(_))) {
            return self.answer_stuck(choice != Choice::No);
        }
        let answer = match choice {
            Choice::Once => PermissionAnswer::Once,
            Choice::Always => PermissionAnswer::Always,
            Choice::No => match self.feedback.take() {
                Some(text) => PermissionAnswer::No {
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
    pub fn reject(&mut self) -> Option<UiCommand> {
        if matches!(self.current(), Some(Ask::Stuck(_))) {
            return self.answer_stuck(false);
        }
        let feedback = self.feedback.take().filter(|t| !t.trim().is_empty());
        self.answer(PermissionAnswer::No { feedback })
    }

    fn answer(&mut self, answer: PermissionAnswer) -> Option<UiCommand> {
        let ask = self.queue.pop_front()?;
        self.selected = 0;
        self.feedback = None;
        Some(UiCommand::AnswerPermission {
            id: ask.id().to_owned(),
            answer,
        })
    }

    fn answer_stuck(&mut self, keep_going: bool) -> Option<UiCommand> {
        let ask = self.queue.pop_front()?;
        self.selected = 0;
        self.feedback = None;
        Some(UiCommand::AnswerStuck {
            id: ask.id().to_owned(),
            keep_going,
        })
    }

    fn body(&self, width: u16) -> (Vec<Line<'static>>, Option<(u16, u16)>) {
        let inner = width.saturating_sub(4).max(1);
        let request = match self.current() {
            None => return (Vec::new(), None),
            Some(Ask::Stuck(question)) => return (self.stuck_body(question, inner), None),
            Some(Ask::Permission(request)) => request,
        };
        let mut logical: Vec<IndentedLine> = Vec::new();
        logical.push(IndentedLine::plain(Line::from(Span::styled(
            title(&request.tool),
            theme::bold(),
        ))));
        logical.push(IndentedLine::blank());
        for line in sanitize(&request.summary).lines() {
            logical.push(IndentedLine {
                first: vec![Span::raw("  ")],
                rest: vec![Span::raw("  ")],
                body: Line::from(line.to_owned()),
            });
        }
        if let Some(reason) = &request.reason {
            logical.push(IndentedLine {
                first: vec![Span::raw("  ")],
                rest: vec![Span::raw("  ")],
                body: Line::from(Span::styled(sanitize(reason), theme::dim())),
            });
        }
        if let Some(preview) = &request.preview {
            let lines = diff::diff_lines(preview);
            let (rows, more) = diff::render(&lines, Some(PREVIEW_LINES));
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
            let chosen = i == self.selected;
            let style = if chosen {
                theme::selected()
            } else {
                ratatui::style::Style::default()
            };
            let marker = if chosen { "❯ " } else { "  " };
            let plan_label = crate::plan_approval::label(&request.tool, *choice);
            let label = plan_label.unwrap_or_else(|| match choice {
                Choice::Once => "Yes".to_owned(),
                Choice::Always => format!(
                    "Yes, and don't ask again for {}",
                    request.always_rule.as_deref().unwrap_or(&request.tool)
                ),
                Choice::No => "No, and tell tine what to do differently (esc)".to_owned(),
            });
            let line = IndentedLine {
                first: vec![Span::styled(format!("{marker}{}. ", i + 1), style)],
                rest: vec![Span::raw("     ")],
                body: Line::from(Span::styled(label, style)),
            };
            line.wrap(inner, &mut rows);
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
    fn stuck_body(&self, question: &StuckQuestion, inner: u16) -> Vec<Line<'static>> {
        let indented = |body: Line<'static>| IndentedLine {
            first: vec![Span::raw("  ")],
            rest: vec![Span::raw("  ")],
            body,
        };
        let call = if question.args.is_empty() {
            question.tool.clone()
        } else {
            format!("{}({})", question.tool, question.args)
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
            indented(Line::from(sanitize(&call))),
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
            let chosen = i == self.selected;
            let style = if chosen {
                theme::selected()
            } else {
                ratatui::style::Style::default()
            };
            let marker = if chosen { "❯ " } else { "  " };
            let label = match choice {
                Choice::No => "No, stop the turn (esc)",
                Choice::Once | Choice::Always => "Yes, let it try again",
            };
            IndentedLine {
                first: vec![Span::styled(format!("{marker}{}. ", i + 1), style)],
                rest: vec![Span::raw("     ")],
                body: Line::from(Span::styled(label, style)),
            }
            .wrap(inner, &mut rows);
        }
        self.footer(&mut rows, "esc to stop");
        rows
    }

    /// Rows the dialog needs at `width` (borders included).
    pub fn height(&self, width: u16) -> u16 {
        u16::try_from(self.body(width).0.len() + 2).unwrap_or(u16::MAX)
    }

    /// Draws it; returns where the cursor goes while feedback is typed.
    pub fn render(&self, area: Rect, buf: &mut Buffer) -> Option<Position> {
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
mod tests {
    use super::*;

    fn request(id: &str, rule: Option<&str>) -> PermissionRequest {
        PermissionRequest {
            id: id.into(),
            tool: "Bash".into(),
            summary: "rm -rf build".into(),
            reason: None,
            always_rule: rule.map(Into::into),
            preview: None,
        }
    }

    fn answer(id: &str, answer: PermissionAnswer) -> UiCommand {
        UiCommand::AnswerPermission {
            id: id.into(),
            answer,
        }
    }

    fn stuck(id: &str) -> StuckQuestion {
        StuckQuestion {
            id: id.into(),
            tool: "Bash".into(),
            args: "cargo tset".into(),
            error: "no such command: tset".into(),
            repeats: 3,
        }
    }

    #[test]
    fn a_stuck_model_is_asked_in_the_queue_yes_goes_on_and_esc_or_no_stops() {
        let mut d = PermissionDialog::default();
        d.push(request("a", None));
        d.push_stuck(stuck("s1"));
        d.push_stuck(stuck("s2"));
        d.push_stuck(stuck("s3"));
        assert!(d.choose(Choice::Once).is_some());
        assert_eq!(d.choices(), [Choice::Once, Choice::No]);
        let keep = |id: &str, keep_going| UiCommand::AnswerStuck {
            id: id.into(),
            keep_going,
        };
        assert_eq!(d.choose(Choice::Once), Some(keep("s1", true)));
        assert_eq!(
            d.choose(Choice::No),
            Some(keep("s2", false)),
            "No stops at once, without a feedback line"
        );
        assert!(!d.is_typing_feedback());
        assert_eq!(d.reject(), Some(keep("s3", false)));
        assert!(!d.is_open());
    }

    #[test]
    fn requests_are_answered_one_by_one_in_order() {
        let mut d = PermissionDialog::default();
        d.push(request("a", Some("Bash(rm:*)")));
        d.push(request("b", None));
        assert_eq!(
            d.choose(Choice::Once),
            Some(answer("a", PermissionAnswer::Once))
        );
        assert_eq!(d.current().map(Ask::id), Some("b"));
        assert_eq!(
            d.choices(),
            [Choice::Once, Choice::No],
            "no rule, no option 2"
        );
        assert_eq!(
            d.reject(),
            Some(answer("b", PermissionAnswer::No { feedback: None }))
        );
        assert!(!d.is_open());
    }

    #[test]
    fn no_opens_the_feedback_line_then_sends_it() {
        let mut d = PermissionDialog::default();
        d.push(request("a", Some("Bash(rm:*)")));
        assert_eq!(d.choose(Choice::No), None);
        assert!(d.is_typing_feedback());
        if let Some(f) = d.feedback_mut() {
            f.push_str("use cargo clean");
        }
        assert_eq!(
            d.choose(Choice::No),
            Some(answer(
                "a",
                PermissionAnswer::No {
                    feedback: Some("use cargo clean".into())
                }
            ))
        );
    }

    #[test]
    fn selection_stays_within_the_options() {
        let mut d = PermissionDialog::default();
        d.push(request("a", Some("r")));
        d.move_selection(5);
        assert_eq!(d.selected(), Choice::No);
        d.move_selection(-9);
        assert_eq!(d.selected(), Choice::Once);
        assert_eq!(d.choice_by_number(2), Some(Choice::Always));
        assert_eq!(d.choice_by_number(4), None);
    }
}
