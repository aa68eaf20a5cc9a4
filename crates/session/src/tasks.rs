//! The session's background work as a front end's tasks panel lists it and stops it: the
//! sub-agents of the task registry (stopped as TaskStop stops them: their token cancelled,
//! their end reported to the model as it comes), the main thread's background shells
//! (killed), and the running dream (killed: its fork aborted and its consolidation lock
//! rolled back, so the next eligible session consolidates).

use std::sync::Arc;

use tine_fork_runtime::{TaskKind as RegistryKind, TaskRegistry, TaskState};
use tine_memory::{DREAM_JOB, DreamJob};
use tine_tools::{BackgroundTasks, TaskStatus as ShellStatus};

use crate::protocol::StoppedTask;

/// Why a task could not be stopped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StopTaskError {
    /// Nothing of that id is running.
    #[error("no running task `{id}` to stop; {known}")]
    NotRunning {
        /// The id asked for.
        id: String,
        /// The ids that are running, for the message.
        known: String,
    },
}

/// Everything a person may stop, shared by the handle (the running turn does not hold it up).
#[derive(Clone)]
pub(crate) struct Stoppable {
    pub tasks: TaskRegistry,
    pub shells: Option<BackgroundTasks>,
    pub dream: Option<Arc<DreamJob>>,
}

impl Stoppable {
    /// Stops running task `id`: an agent's id (`a_…`), a shell's, or the dream's (its task id,
    /// or the pipeline job's name, `auto_dream`, which is what a tasks panel shows).
    pub(crate) fn stop(&self, id: &str) -> Result<StoppedTask, StopTaskError> {
        if let Some(task) = self.tasks.get(id)
            && task.state == TaskState::Running
            && self.tasks.stop(id).is_ok()
        {
            return Ok(match task.kind {
                RegistryKind::Dream => StoppedTask::Dream,
                RegistryKind::Agent | RegistryKind::Shell => StoppedTask::Agent {
                    description: task.description,
                },
            });
        }
        if let Some(dream) = &self.dream
            && let Some(task) = dream.task()
            && task.is_running()
            && (id == DREAM_JOB || id == task.id())
        {
            return if dream.kill(&task.id()) {
                Ok(StoppedTask::Dream)
            } else {
                Err(self.not_running(id))
            };
        }
        if let Some(shells) = &self.shells
            && let Some((_, command, _)) = shells.list().into_iter().find(|(task, ..)| task == id)
            && shells.kill(id)
        {
            return Ok(StoppedTask::Shell { command });
        }
        Err(self.not_running(id))
    }

    fn not_running(&self, id: &str) -> StopTaskError {
        let mut running: Vec<String> = self
            .tasks
            .list()
            .into_iter()
            .filter(|t| t.state == TaskState::Running)
            .map(|t| t.id)
            .collect();
        if let Some(dream) = &self.dream
            && dream.task().is_some_and(|t| t.is_running())
        {
            running.push(DREAM_JOB.to_owned());
        }
        if let Some(shells) = &self.shells {
            running.extend(
                shells
                    .list()
                    .into_iter()
                    .filter(|(_, _, status)| *status == ShellStatus::Running)
                    .map(|(task, ..)| task),
            );
        }
        let known = if running.is_empty() {
            "nothing is running".to_owned()
        } else {
            format!("running: {}", running.join(", "))
        };
        StopTaskError::NotRunning {
            id: id.to_owned(),
            known,
        }
    }
}
