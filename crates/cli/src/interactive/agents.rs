//! Sub-agents in the UI (issue 15): the session's task registry in the tasks panel beside the
//! shells and jobs (each agent's state as it changes), and background agents' reports
//! delivered as the next turn's input, as Claude Code does: when agents end, their
//! `<task-notification>` messages become one prompt, sent once no turn runs.

use std::collections::HashMap;

use tine_fork_runtime::{TaskKind as RegistryKind, TaskNotification, TaskRegistry, TaskState};
use tine_tui::{NoticeLevel, TaskKind, TaskStatus, TaskView, UiEvent};

/// What the panel was last told about each agent.
#[derive(Debug, Default)]
pub struct AgentTasks {
    shown: HashMap<String, TaskStatus>,
}

impl AgentTasks {
    /// The registry's agents whose state changed since the last call, as the panel's events.
    pub fn changes(&mut self, registry: &TaskRegistry) -> Vec<UiEvent> {
        let mut out = Vec::new();
        for task in registry.list() {
            if task.kind != RegistryKind::Agent {
                continue;
            }
            let status = match &task.state {
                TaskState::Running => TaskStatus::Running,
                TaskState::Completed => TaskStatus::Finished {
                    summary: "completed".to_owned(),
                },
                TaskState::Failed(error) => TaskStatus::Failed {
                    error: error.clone(),
                },
                TaskState::Cancelled => TaskStatus::Cancelled,
            };
            if self.shown.get(&task.id) == Some(&status) {
                continue;
            }
            self.shown.insert(task.id.clone(), status.clone());
            out.push(UiEvent::Task(TaskView {
                id: task.id,
                kind: TaskKind::Agent,
                title: task.description,
                status,
            }));
        }
        out
    }
}

/// The prompt that delivers `notifications` to the model (the same as `-p` sends).
pub fn reports_prompt(notifications: &[TaskNotification]) -> String {
    notifications
        .iter()
        .map(TaskNotification::message)
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// The line the transcript shows for each report delivered.
pub fn report_notice(notification: &TaskNotification) -> UiEvent {
    let how = match &notification.state {
        TaskState::Completed => "completed".to_owned(),
        TaskState::Failed(why) => format!("failed: {why}"),
        TaskState::Cancelled => "was stopped".to_owned(),
        TaskState::Running => "is running".to_owned(),
    };
    UiEvent::Notice {
        level: NoticeLevel::Info,
        text: format!(
            "agent \"{}\" {how}; its report goes to the model",
            notification.description
        ),
    }
}
