//! The tasks panel (`/tasks`, Ctrl+T): the session's background work — jobs of the stop-hook
//! pipeline (memory extraction, the dream: [`BackgroundEvent`]s), background shells and
//! sub-agents ([`TaskUpdate`]s) — running ones first. While it is open it has the keys, as
//! Claude Code's tasks dialog: ↑/↓ select a task, `k` (or Delete) stops the selected one if it
//! runs ([`Op::StopTask`]: an agent as TaskStop stops it, a shell killed, the dream killed with
//! its lock rolled back), Esc, `q` or Ctrl+T close it.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::text::{Line, Span};
use tine_session::{Op, TaskState};

use crate::app::App;
use crate::entry::Entry;
use crate::panel_task::PanelTask;
use crate::theme;
use crate::wrap::sanitize;

/// At most this many tasks are listed.
pub(crate) const TASKS_MAX_ROWS: usize = 8;

/// The panel's title.
pub(crate) const TASKS_TITLE: &str = " Background tasks · ↑/↓ select · k stop · esc close ";

impl App {
    /// The tasks in the panel's order: running ones first, then the most recent.
    pub(crate) fn tasks_in_order(&self) -> Vec<&PanelTask> {
        let mut tasks: Vec<&PanelTask> = self.tasks.iter().rev().collect();
        tasks.sort_by_key(|t| !t.is_running());
        tasks
    }

    /// The id of the task the panel has selected, if it lists any.
    pub fn selected_task(&self) -> Option<&str> {
        self.selected().map(|t| t.id.as_str())
    }

    fn selected(&self) -> Option<&PanelTask> {
        let tasks = self.tasks_in_order();
        let last = tasks.len().checked_sub(1)?;
        tasks.get(self.task_selected.min(last)).copied()
    }

    /// A task appeared or changed: upserted by id.
    pub(crate) fn upsert_task(&mut self, task: PanelTask) {
        match self.tasks.iter_mut().find(|t| t.id == task.id) {
            Some(existing) => *existing = task,
            None => self.tasks.push(task),
        }
    }

    /// How many tasks run.
    pub(crate) fn running_tasks(&self) -> usize {
        self.tasks.iter().filter(|t| t.is_running()).count()
    }

    /// Whether a sub-agent runs in the foreground (its Agent call is running: a background
    /// one's call ends at once), so Ctrl+B has something to send to the background.
    pub(crate) fn foreground_agent_running(&self) -> bool {
        self.turn.is_some()
            && self.transcript.entries().any(|entry| {
                matches!(entry, Entry::Tool(call)
                    if matches!(call.tool.as_str(), "Agent" | "Task") && call.is_running())
            })
    }

    /// Opens or closes the panel; it opens on its first task.
    pub(crate) fn toggle_tasks(&mut self) {
        self.tasks_open = !self.tasks_open;
        self.task_selected = 0;
    }

    /// A key while the panel is open: `None` when the key is not the panel's (Ctrl+C and the
    /// permission dialog come first; the panel leaves nothing else to the prompt).
    pub(crate) fn tasks_key(&mut self, key: KeyEvent) -> Option<Vec<Op>> {
        if !self.tasks_open {
            return None;
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let count = self.tasks.len().min(TASKS_MAX_ROWS);
        match key.code {
            KeyCode::Up => self.task_selected = self.task_selected.saturating_sub(1),
            KeyCode::Down => {
                self.task_selected = (self.task_selected + 1).min(count.saturating_sub(1));
            }
            KeyCode::Char('k') | KeyCode::Char('x') | KeyCode::Delete if !ctrl => {
                let id = self
                    .selected()
                    .filter(|t| t.is_running())
                    .map(|t| t.id.clone());
                return Some(id.map(Op::StopTask).into_iter().collect());
            }
            KeyCode::Esc | KeyCode::Char('q') => self.tasks_open = false,
            KeyCode::Char('t') if ctrl => self.tasks_open = false,
            _ => {}
        }
        Some(Vec::new())
    }

    pub(crate) fn task_rows(&self) -> Vec<Line<'static>> {
        if self.tasks.is_empty() {
            return vec![Line::from(Span::styled(
                "No background tasks",
                theme::dim(),
            ))];
        }
        let tasks = self.tasks_in_order();
        let selected = self.task_selected.min(tasks.len().min(TASKS_MAX_ROWS) - 1);
        let mut rows: Vec<Line<'static>> = tasks
            .iter()
            .take(TASKS_MAX_ROWS)
            .enumerate()
            .map(|(i, t)| task_row(t, i == selected))
            .collect();
        if tasks.len() > TASKS_MAX_ROWS {
            rows.push(Line::from(Span::styled(
                format!("… {} more", tasks.len() - TASKS_MAX_ROWS),
                theme::dim(),
            )));
        }
        rows
    }
}

fn task_row(t: &PanelTask, selected: bool) -> Line<'static> {
    let (icon, style, detail) = match &t.state {
        TaskState::Running if !t.activity.is_empty() => (
            "◐ ",
            theme::accent(),
            sanitize(&t.activity).replace('\n', " "),
        ),
        TaskState::Running => ("◐ ", theme::accent(), "running".to_owned()),
        TaskState::Completed => (
            "✓ ",
            theme::success(),
            if t.detail.is_empty() {
                "done".to_owned()
            } else {
                t.detail.clone()
            },
        ),
        TaskState::Failed(error) => ("✗ ", theme::error(), format!("failed: {error}")),
        TaskState::Cancelled => ("○ ", theme::dim(), "cancelled".to_owned()),
    };
    let kind = t.kind;
    let pointer = if selected { "❯ " } else { "  " };
    Line::from(vec![
        Span::styled(pointer, theme::accent()),
        Span::styled(icon, style),
        Span::styled(format!("{kind:<6}"), theme::dim()),
        Span::raw(format!("{}  ", t.title)),
        Span::styled(detail, theme::dim()),
    ])
}
