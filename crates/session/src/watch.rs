//! The tasks panel's feed: the session's sub-agents (the task registry's) and the main
//! thread's background shells, as [`SessionEvent::Task`] updates when they appear, change
//! (an agent's latest reply, its activity) and end.

use std::collections::HashMap;

use tine_fork_runtime::{TaskKind, TaskRegistry, TaskState};
use tine_tools::{BackgroundTasks, TaskStatus as ShellStatus};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::emit::Emitter;
use crate::protocol::{SessionEvent, TaskUpdate};

/// Reports the registry's agents as they change, until `stop`.
pub(crate) fn agents(
    tasks: TaskRegistry,
    events: Emitter,
    stop: CancellationToken,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut seen = HashMap::new();
        loop {
            let changed = tokio::select! {
                changed = tasks.next_change(&mut seen) => changed,
                () = stop.cancelled() => return,
            };
            for task in changed.into_iter().filter(|t| t.kind == TaskKind::Agent) {
                let detail = match &task.state {
                    TaskState::Running => String::new(),
                    TaskState::Completed => "completed".to_owned(),
                    TaskState::Failed(error) => error.clone(),
                    TaskState::Cancelled => "stopped".to_owned(),
                };
                events.emit_free(SessionEvent::Task(TaskUpdate {
                    id: task.id,
                    kind: TaskKind::Agent,
                    title: task.description,
                    state: task.state,
                    detail,
                    output_file: Some(task.output_file),
                    activity: task.activity,
                }));
            }
        }
    })
}

/// Shell `id` runs in the background: reported now, and again when it ends.
pub(crate) fn shell(shells: BackgroundTasks, id: String, events: Emitter) {
    let title = shells
        .list()
        .into_iter()
        .find(|(task, ..)| *task == id)
        .map_or_else(|| id.clone(), |(_, command, _)| command);
    let wait_id = id.clone();
    let update = move |state, detail: String| {
        SessionEvent::Task(TaskUpdate {
            id: id.clone(),
            kind: TaskKind::Shell,
            title: title.clone(),
            state,
            detail,
            output_file: None,
            activity: None,
        })
    };
    events.emit_free(update(TaskState::Running, String::new()));
    tokio::spawn(async move {
        let (state, detail) = match shells.wait(&wait_id).await {
            Some(ShellStatus::Exited(Some(0))) => {
                (TaskState::Completed, "exited with code 0".to_owned())
            }
            Some(ShellStatus::Killed) | None => (TaskState::Cancelled, "killed".to_owned()),
            Some(other) => (TaskState::Failed(other.to_string()), other.to_string()),
        };
        events.emit_free(update(state, detail));
    });
}
