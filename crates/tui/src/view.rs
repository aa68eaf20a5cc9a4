//! Drawing a frame of the [`App`]: the transcript on top, then (from the bottom up) the status
//! line, queued prompts, the completion list (or the `@` picker's), the prompt box or the permission dialog in its
//! place, the help panel, the tasks panel and the spinner. Only the transcript's visible rows
//! are laid out.

use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Widget};
use tokio::time::Instant;
use unicode_width::UnicodeWidthStr;

use tine_session::PermissionMode;

use crate::app::{App, HelpScroll, SPINNER};
use crate::layout::LayoutCtx;
use crate::theme;
use crate::transcript::Scroll;
use crate::wrap::truncate;

/// Rows of the prompt box's text before it scrolls.
const INPUT_MAX_ROWS: usize = 8;
const QUEUED_MAX_ROWS: usize = 3;

impl App {
    /// Draws the whole screen into `frame`.
    pub fn render(&mut self, frame: &mut Frame) {
        let area = frame.area();
        let cursor = self.render_area(area, frame.buffer_mut());
        if let Some(position) = cursor {
            frame.set_cursor_position(position);
        }
    }

    /// Draws into `area` of a buffer; returns where the cursor goes.
    pub fn render_area(&mut self, area: Rect, buf: &mut Buffer) -> Option<Position> {
        self.dirty = false;
        let width = area.width;
        // A status line command is told the terminal's size.
        self.status_command.note_size(area.width, area.height);
        let now = Instant::now();

        let dialog_open = self.dialog.is_open();
        // Ctrl+R: the box shows the match, the search line sits under it (in the list's place).
        let searching = self.history_search.is_open() && !dialog_open;
        let (completion, search_cursor) = if searching {
            let (line, col) = self.history_search.line(width);
            (vec![line], Some(col))
        } else {
            (self.completion_rows(width), None)
        };
        let queued = self.queued_rows(width);
        // Borders, a column of padding each side, the "> " prefix.
        let input_text_width = width.saturating_sub(6);
        let (input_rows, input_cursor) = if searching {
            let (rows, focus) = self
                .history_search
                .box_rows(self.input.history(), input_text_width);
            (rows, (focus, 0))
        } else {
            let (rows, cursor) = self.input.rows(input_text_width);
            (rows.into_iter().map(Line::from).collect(), cursor)
        };
        let input_h = if dialog_open {
            0
        } else {
            input_rows.len().clamp(1, INPUT_MAX_ROWS) + 2
        };
        let dialog_h = if dialog_open {
            usize::from(self.dialog.height(width)).min(usize::from(area.height) * 2 / 3)
        } else {
            0
        };
        let help = if self.help_open {
            self.help_rows()
        } else {
            Vec::new()
        };
        let help_h = if help.is_empty() {
            0
        } else {
            // As much as the screen has above the prompt box and the status line; the rest
            // scrolls.
            (help.len() + 2).min(usize::from(area.height).saturating_sub(input_h + 2))
        };
        self.help.total = help.len();
        self.help.visible = help_h.saturating_sub(2);
        self.help.scroll = self
            .help
            .scroll
            .min(help.len().saturating_sub(self.help.visible));
        let tasks = if self.tasks_open {
            self.task_rows()
        } else {
            Vec::new()
        };
        let tasks_h = if self.tasks_open { tasks.len() + 2 } else { 0 };
        let away = self.away.rows(width);
        let away_h = if away.is_empty() { 0 } else { away.len() + 2 };
        let resume = self.resume.rows(
            usize::from(area.height)
                .saturating_sub(input_h + 6)
                .clamp(3, 12),
        );
        let resume_h = if resume.is_empty() {
            0
        } else {
            resume.len() + 2
        };
        let rewind = self.rewind.rows(
            usize::from(area.height)
                .saturating_sub(input_h + 6)
                .clamp(3, 14),
        );
        let rewind_h = if rewind.is_empty() {
            0
        } else {
            rewind.len() + 2
        };
        let spinner_h = if self.turn.is_some() { 2 } else { 0 };

        // Bottom up; the transcript gets what is left.
        let mut bottom = area.y + area.height;
        let mut take = |h: usize| {
            let h = u16::try_from(h)
                .unwrap_or(u16::MAX)
                .min(bottom.saturating_sub(area.y));
            bottom -= h;
            Rect::new(area.x, bottom, width, h)
        };
        // A status line command's line goes on a row of its own above tine's (as Claude Code
        // puts it above its footer), which keeps the mode and its hint.
        let custom = self.status_command_row(width);
        let status_area = take(1 + usize::from(custom.is_some()));
        let completion_area = take(completion.len());
        let queued_area = take(queued.len());
        let input_area = take(input_h);
        let dialog_area = take(dialog_h);
        let help_area = take(help_h);
        let tasks_area = take(tasks_h);
        let away_area = take(away_h);
        let rewind_area = take(rewind_h);
        let resume_area = take(resume_h);
        let spinner_area = take(spinner_h);
        let transcript_area = Rect::new(area.x, area.y, width, bottom.saturating_sub(area.y));

        let ctx = LayoutCtx {
            width,
            expanded: self.expanded,
            now,
        };
        self.transcript.render(transcript_area, buf, &ctx);
        self.render_spinner(spinner_area, buf, now);
        draw_panel(tasks_area, buf, crate::tasks_panel::TASKS_TITLE, &tasks);
        self.render_help(help_area, buf, &help);
        draw_panel(away_area, buf, " While you were away ", &away);
        draw_panel(rewind_area, buf, self.rewind.title(), &rewind);
        draw_panel(resume_area, buf, self.resume.panel_title(), &resume);
        let mut cursor = if dialog_open {
            self.dialog.render(dialog_area, buf)
        } else {
            render_input(input_area, buf, &input_rows, input_cursor)
        };
        draw_rows(queued_area, buf, &queued);
        draw_rows(completion_area, buf, &completion);
        if let Some(col) = search_cursor
            && completion_area.height > 0
        {
            cursor = Some(Position::new(
                completion_area.x + col.min(width.saturating_sub(1)),
                completion_area.y,
            ));
        }
        let status = self.status_line(width, custom.is_none());
        let status_rows: Vec<Line<'static>> = custom.into_iter().chain([status]).collect();
        draw_rows(status_area, buf, &status_rows);
        if self.elicitation.is_open() {
            cursor = self.elicitation.render_over(area, buf);
        }
        cursor
    }

    fn render_spinner(&self, area: Rect, buf: &mut Buffer, now: Instant) {
        let Some(turn) = &self.turn else { return };
        if area.height == 0 {
            return;
        }
        let elapsed = now.saturating_duration_since(turn.started).as_secs();
        let frame = SPINNER[self.spinner_frame % SPINNER.len()];
        let mut spans = vec![
            Span::styled(format!("{frame} "), theme::accent()),
            Span::styled("Working… ", theme::accent()),
            Span::styled(format!("({elapsed}s · esc to interrupt)"), theme::dim()),
        ];
        if let Some(retry) = &self.retry {
            spans.push(Span::styled(format!(" · {retry}"), theme::warning()));
        }
        let line = truncate(Line::from(spans), usize::from(area.width));
        // The first row is a gap under the transcript.
        buf.set_line(area.x, area.y + area.height - 1, &line, area.width);
    }

    fn completion_rows(&self, width: u16) -> Vec<Line<'static>> {
        if self.dialog.is_open() {
            return Vec::new();
        }
        if self.mention.is_open() {
            return self.mention.rows(width);
        }
        let matches = self.completion.matches(self.input.text(), &self.commands);
        self.completion.rows(&matches, width)
    }

    fn queued_rows(&self, width: u16) -> Vec<Line<'static>> {
        let mut rows: Vec<Line<'static>> = self
            .queue
            .iter()
            .take(QUEUED_MAX_ROWS)
            .map(|q| {
                let text = q.text();
                let first = text.lines().next().unwrap_or_default().to_owned();
                let line = Line::from(vec![
                    Span::styled("  ⏎ queued: ", theme::dim()),
                    Span::styled(first, theme::user_prompt()),
                ]);
                truncate(line, usize::from(width))
            })
            .collect();
        if self.queue.len() > QUEUED_MAX_ROWS {
            rows.push(Line::from(Span::styled(
                format!("  … {} more queued", self.queue.len() - QUEUED_MAX_ROWS),
                theme::dim(),
            )));
        }
        rows
    }

    fn help_rows(&self) -> Vec<Line<'static>> {
        let mut rows = vec![Line::from(Span::styled("Commands", theme::bold()))];
        let name_w = self
            .commands
            .iter()
            .map(|c| c.name.len() + 1)
            .max()
            .unwrap_or(8)
            .max(8);
        for c in &self.commands {
            rows.push(Line::from(vec![
                Span::styled(format!("  /{:<name_w$}", c.name), theme::accent()),
                Span::raw(c.description.clone()),
            ]));
        }
        rows.push(Line::default());
        rows.push(Line::from(Span::styled("Keys", theme::bold())));
        for (keys, what) in [
            ("enter", "send (queued while tine works)"),
            ("shift+enter, ctrl+j, \\⏎", "new line"),
            ("esc", "interrupt tine"),
            ("ctrl+c", "clear the prompt; twice to exit"),
            ("ctrl+d", "exit (empty prompt)"),
            ("shift+tab", "permission mode"),
            ("tab", "extended thinking on/off"),
            ("ctrl+o", "expand tool results"),
            ("ctrl+t", "background tasks (↑/↓, k stops one)"),
            ("ctrl+b", "send a running sub-agent to the background"),
            ("pgup/pgdn, wheel", "scroll; ctrl+home/end: top/latest"),
            ("↑/↓", "history"),
            (
                "ctrl+r",
                "search the prompts sent before (enter sends, tab edits)",
            ),
        ] {
            rows.push(Line::from(vec![
                Span::styled(format!("  {keys:<26}"), theme::accent()),
                Span::raw(what),
            ]));
        }
        rows
    }

    /// The help panel, scrolled where it is taller than its room: the rows from
    /// `help.scroll`, and on its border what more there is above or below.
    fn render_help(&self, area: Rect, buf: &mut Buffer, rows: &[Line<'static>]) {
        let HelpScroll {
            scroll,
            visible,
            total,
        } = self.help;
        let shown = rows.get(scroll..).unwrap_or_default();
        draw_panel(area, buf, " Help (esc to close) ", shown);
        if area.height < 2 || total <= visible {
            return;
        }
        let above = scroll > 0;
        let below = scroll + visible < total;
        let hint = match (above, below) {
            (true, true) => " ↑/↓ more (pgup/pgdn) ",
            (false, true) => " ↓ more (↓/pgdn) ",
            (true, false) => " ↑ more (↑/pgup) ",
            (false, false) => return,
        };
        let line = truncate(
            Line::from(Span::styled(hint, theme::accent())),
            usize::from(area.width.saturating_sub(4)),
        );
        buf.set_line(
            area.x + 2,
            area.y + area.height - 1,
            &line,
            area.width.saturating_sub(4),
        );
    }

    /// The status line command's line, `padding` columns in from tine's margin.
    fn status_command_row(&self, width: u16) -> Option<Line<'static>> {
        let (line, padding) = self.status_command.shown()?;
        let mut spans = vec![Span::raw(" ".repeat(2 + usize::from(padding)))];
        spans.extend(line.spans.iter().cloned());
        Some(truncate(Line::from(spans), usize::from(width)))
    }

    /// tine's own status line; `figures`: with the model, context, cost and cache on the
    /// right (a status line command's line shows its own instead).
    fn status_line(&self, width: u16, figures: bool) -> Line<'static> {
        // (priority: lower stays longer when the line is short, span), in display order.
        let mut left: Vec<(u8, Span<'static>)> = Vec::new();
        if matches!(self.transcript.scroll(), Scroll::At { .. }) {
            left.push((1, Span::styled("  ↓ scrolled (ctrl+end)", theme::warning())));
        }
        if self.ctrl_c_at.is_some() {
            left.push((
                0,
                Span::styled("  Press Ctrl-C again to exit", theme::warning()),
            ));
        } else {
            let (text, style) = match self.mode {
                // dontAsk asks nothing either way; shown as the default.
                PermissionMode::Default | PermissionMode::DontAsk => ("default mode", theme::dim()),
                PermissionMode::AcceptEdits => {
                    ("⏵⏵ accept edits on", Style::default().fg(Color::Magenta))
                }
                PermissionMode::Plan => ("⏸ plan mode on", theme::accent()),
                PermissionMode::BypassPermissions => ("⏵⏵ bypass permissions on", theme::error()),
            };
            // "default mode" says little; the others say what is allowed and must stay.
            let priority = if matches!(self.mode, PermissionMode::Default | PermissionMode::DontAsk)
            {
                2
            } else {
                0
            };
            left.push((priority, Span::styled(format!("  {text}"), style)));
            left.push((3, Span::styled(" (shift+tab to cycle)", theme::dim())));
        }
        let running = self.running_tasks();
        if running > 0 && !self.tasks_open {
            let unit = if running == 1 { "task" } else { "tasks" };
            left.push((
                2,
                Span::styled(
                    format!(" · {running} background {unit} (ctrl+t)"),
                    theme::dim(),
                ),
            ));
        }

        let u = &self.status;
        let mut right = Vec::new();
        if !u.model.is_empty() {
            right.push(u.model.clone());
        }
        // A conversation that has made no request yet has no context to speak of.
        if u.context_window > 0 && u.context_tokens > 0 {
            let pct = (u.context_tokens as f64 * 100.0 / u.context_window as f64).round();
            right.push(format!("{pct:.0}% context"));
        }
        right.push(format!("${:.2}", u.cost_usd));
        if let Some(share) = u.cache_read_share {
            right.push(format!("cache {:.0}%", share * 100.0));
        }
        let right = if figures {
            format!("{}  ", right.join(" · "))
        } else {
            String::new()
        };
        let right_w = UnicodeWidthStr::width(right.as_str());
        let width = usize::from(width);
        let room = width.saturating_sub(right_w + 1);
        // Drop the least important pieces until the rest fits.
        for priority in (1..=3).rev() {
            let used: usize = left.iter().map(|(_, s)| s.width()).sum();
            if used <= room {
                break;
            }
            left.retain(|(p, _)| *p < priority);
        }
        let left_line = truncate(
            Line::from(left.into_iter().map(|(_, s)| s).collect::<Vec<_>>()),
            room,
        );
        let pad = width.saturating_sub(left_line.width() + right_w);
        let mut spans = left_line.spans;
        spans.push(Span::raw(" ".repeat(pad)));
        spans.push(Span::styled(right, theme::dim()));
        truncate(Line::from(spans), width)
    }
}

fn draw_rows(area: Rect, buf: &mut Buffer, rows: &[Line<'static>]) {
    for (i, row) in rows.iter().enumerate().take(usize::from(area.height)) {
        let y = area.y + u16::try_from(i).unwrap_or(u16::MAX);
        buf.set_line(area.x, y, row, area.width);
    }
}

fn draw_panel(area: Rect, buf: &mut Buffer, title: &str, rows: &[Line<'static>]) {
    if area.height < 2 {
        return;
    }
    Block::default()
        .borders(Borders::ALL)
        .border_type(BorderType::Rounded)
        .border_style(theme::border())
        .title(Span::styled(title.to_owned(), theme::dim()))
        .render(area, buf);
    let inner = Rect::new(
        area.x + 2,
        area.y + 1,
        area.width.saturating_sub(4),
        area.height - 2,
    );
    let rows: Vec<Line<'static>> = rows
        .iter()
        .map(|r| truncate(r.clone(), usize::from(inner.width)))
        .collect();
    draw_rows(inner, buf, &rows);
}

fn render_input(
    area: Rect,
    buf: &mut Buffer,
    rows: &[Line<'static>],
    cursor: (usize, usize),
) -> Option<Position> {
    if area.height < 3 {
        return None;
    }
    Block::default()
        .borders(Borders::ALL)
        .border_type(BorderType::Rounded)
        .border_style(theme::border())
        .render(area, buf);
    let visible = usize::from(area.height - 2);
    let first = (cursor.0 + 1).saturating_sub(visible);
    let x = area.x + 2;
    for (i, row) in rows.iter().enumerate().skip(first).take(visible) {
        let y = area.y + 1 + u16::try_from(i - first).unwrap_or(u16::MAX);
        let prefix = if i == 0 {
            Span::styled("> ", theme::dim())
        } else {
            Span::raw("  ")
        };
        let mut spans = vec![prefix];
        spans.extend(row.spans.iter().cloned());
        let line = Line::from(spans);
        buf.set_line(x, y, &line, area.width.saturating_sub(4));
    }
    let y = area.y + 1 + u16::try_from(cursor.0 - first).ok()?;
    let col = u16::try_from(cursor.1).ok()?;
    Some(Position::new(x + 2 + col, y))
}
