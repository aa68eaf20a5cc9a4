//! A row of the tasks panel: a sub-agent or a background shell of the session's
//! ([`TaskUpdate`]), or a job of its stop-hook pipeline ([`BackgroundEvent`]), named as people
//! read it ("memory extraction", "npm run dev").

use std::path::Path;

use tine_session::{BackgroundEvent, TaskKind, TaskState, TaskUpdate};

use crate::agent_call::{call_line, tool_uses};

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
    /// A sub-agent or a background shell; files inside `cwd` are shown relative to it.
    pub(crate) fn of_task(update: TaskUpdate, cwd: Option<&Path>) -> Self {
        let kind = match update.kind {
            TaskKind::Agent => "agent",
            TaskKind::Shell => "shell",
            TaskKind::Dream => "job",
        };
        let activity = update
            .activity
            .as_ref()
            .map_or_else(String::new, |activity| {
                let uses = tool_uses(activity.totals.tool_uses);
                match activity.recent.last() {
                    Some(call) => format!("{} · {uses}", call_line(call, cwd)),
                    None => uses,
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

#[cfg(test)]
mod tests {
    use tine_session::{SubagentActivity, SubagentCall, SubagentTotals};

    use super::*;

    #[test]
    fn a_running_agents_row_shows_its_latest_call_and_count() {
        let update = |activity| TaskUpdate {
            id: "a_1".into(),
            kind: TaskKind::Agent,
            title: "survey".into(),
            state: TaskState::Running,
            detail: String::new(),
            output_file: None,
            activity,
        };
        let activity = SubagentActivity {
            totals: SubagentTotals {
                tool_uses: 3,
                ..SubagentTotals::default()
            },
            recent: vec![SubagentCall {
                tool: "Read".into(),
                summary: "/p/src/a.rs".into(),
            }],
        };
        let row = PanelTask::of_task(update(Some(activity)), Some(Path::new("/p")));
        assert_eq!(row.activity, "Read(src/a.rs) · 3 tool uses");
        assert_eq!(PanelTask::of_task(update(None), None).activity, "");
    }
}
