//! A row of the tasks panel: a sub-agent or a background shell of the session's
//! ([`TaskUpdate`]), or a job of its stop-hook pipeline ([`BackgroundEvent`]), named as people
//! read it ("memory extraction", "npm run dev").

use tine_session::{BackgroundEvent, TaskKind, TaskState, TaskUpdate};

/// A row of the panel: a task of the session's, or a job of its pipeline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PanelTask {
    /// What [`Op::StopTask`] takes.
    pub(crate) id: String,
    /// "job", "shell", "agent".
    pub(crate) kind: &'static str,
    /// "memory extraction", "npm run dev".
    pub(crate) title: String,
    pub(crate) state: TaskState,
    /// How it ended, in words ("saved 2 memories", "exited with code 0").
    pub(crate) detail: String,
    /// A running agent's latest call and count ("Read(src/a.rs) · 3 tool uses"); empty for
    /// the rest.
    pub(crate) activity: String,
}

impl PanelTask {
    /// A sub-agent or a background shell.
    pub(crate) fn of_task(update: TaskUpdate) -> Self {
        let kind = match update.kind {
            TaskKind::Agent => "agent",
            TaskKind::Shell => "shell",
            TaskKind::Dream => "job",
        };
        let activity = update
            .activity
            .as_ref()
            .map_or_else(String::new, |activity| {
                let uses = activity.totals.tool_uses;
                let unit = if uses == 1 { "tool use" } else { "tool uses" };
                match activity.recent.last() {
                    Some(call) if call.summary.is_empty() => {
                        format!("{} · {uses} {unit}", call.tool)
                    }
                    Some(call) => format!("{}({}) · {uses} {unit}", call.tool, call.summary),
                    None => format!("{uses} {unit}"),
                }
            });
        Self {
            id: update.id,
            kind,
            title: update.title,
            state: update.state,
            detail: update.detail,
            activity,
        }
    }

    /// A job of the pipeline, as it started or ended.
    pub(crate) fn of_job(event: &BackgroundEvent) -> Self {
        let (job, state, detail) = match event {
            BackgroundEvent::Started { job } => (job, TaskState::Running, String::new()),
            BackgroundEvent::Finished { job, outcome } => {
                (job, TaskState::Completed, outcome.summary.clone())
            }
            BackgroundEvent::Failed { job, error } => {
                (job, TaskState::Failed(error.clone()), String::new())
            }
            BackgroundEvent::Cancelled { job } => (job, TaskState::Cancelled, String::new()),
        };
        Self {
            id: job.clone(),
            kind: "job",
            title: job_title(job),
            state,
            detail,
            activity: String::new(),
        }
    }

    pub(crate) fn is_running(&self) -> bool {
        self.state == TaskState::Running
    }
}

/// "extract_memories" → "memory extraction".
pub(crate) fn job_title(job: &str) -> String {
    match job {
        "extract_memories" => "memory extraction".to_owned(),
        "auto_dream" => "memory dream".to_owned(),
        other => other.replace('_', " "),
    }
}
