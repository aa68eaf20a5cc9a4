//! What a running sub-agent has done, told as it happens: [`AgentActivity`] folds the events
//! of its loop (each reply's tool calls, its latest request's tokens) into a
//! [`SubagentActivity`] and tells two places. The task registry always (a tasks panel's row,
//! stream-json's `task_progress`); and while a foreground agent's Agent call waits for it, the
//! call's progress sink, whose reports the parent's loop forwards as `ToolProgress` of that
//! call's `tool_use` id, each carrying the message just added ([`SubagentProgress`]). Display
//! only: it looks at the events, never at what the agent sends.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tine_api_client::{ContentBlock, MessageContent};
use tine_query_loop::QueryEvent;
use tine_tools::{
    RECENT_SUBAGENT_CALLS, SubagentActivity, SubagentCall, SubagentProgress, SubagentStep,
    SubagentTotals, ToolContext, ToolProgress, call_summary,
};
use tokio::time::Instant;

use crate::tasks::TaskRegistry;

/// A call's argument is cut here on its line (a heredoc is not a progress line).
const SUMMARY_CHARS: usize = 120;

/// One sub-agent's activity so far, and where it is told.
pub(crate) struct AgentActivity {
    id: String,
    tasks: TaskRegistry,
    started: Instant,
    /// The Agent call's context while the call waits for the agent (foreground); `None` for a
    /// background agent, and once a foreground one is sent to the background.
    call: Mutex<Option<ToolContext>>,
    folded: Mutex<Folded>,
}

#[derive(Default)]
struct Folded {
    tool_uses: u32,
    total_tokens: u64,
    recent: VecDeque<SubagentCall>,
}

impl AgentActivity {
    /// Agent `id`'s activity, told to `tasks` and, with `call`, to that Agent call.
    pub(crate) fn new(id: &str, tasks: TaskRegistry, call: Option<ToolContext>) -> Arc<Self> {
        Arc::new(Self {
            id: id.to_owned(),
            tasks,
            started: Instant::now(),
            call: Mutex::new(call),
            folded: Mutex::default(),
        })
    }

    fn folded(&self) -> MutexGuard<'_, Folded> {
        self.folded.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The call no longer waits (the agent went to the background): its call hears no more.
    pub(crate) fn detach(&self) {
        self.call
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
    }

    /// What it did until now.
    pub(crate) fn totals(&self) -> SubagentTotals {
        let folded = self.folded();
        SubagentTotals {
            tool_uses: folded.tool_uses,
            total_tokens: folded.total_tokens,
            duration: self.started.elapsed(),
        }
    }

    fn activity(&self) -> SubagentActivity {
        let recent = self.folded().recent.iter().cloned().collect();
        SubagentActivity {
            totals: self.totals(),
            recent,
        }
    }

    /// One event of the agent's loop.
    pub(crate) fn observe(&self, event: &QueryEvent) {
        let (step, activity) = match event {
            QueryEvent::AssistantMessage {
                message,
                uuid,
                id,
                stop_reason,
                usage,
                model,
            } => {
                {
                    let mut folded = self.folded();
                    folded.total_tokens = usage.input_tokens
                        + usage.cache_creation_input_tokens
                        + usage.cache_read_input_tokens
                        + usage.output_tokens;
                    if let MessageContent::Blocks(blocks) = &message.content {
                        for block in blocks {
                            if let ContentBlock::ToolUse(call) = block {
                                folded.tool_uses += 1;
                                folded.recent.push_back(SubagentCall {
                                    tool: call.name.clone(),
                                    summary: cut(call_summary(&call.name, &call.input)),
                                });
                                if folded.recent.len() > RECENT_SUBAGENT_CALLS {
                                    folded.recent.pop_front();
                                }
                            }
                        }
                    }
                }
                let activity = self.activity();
                self.tasks.set_activity(&self.id, activity.clone());
                let step = SubagentStep::Reply {
                    message: message.clone(),
                    uuid: uuid.clone(),
                    id: id.clone(),
                    model: model.clone(),
                    stop_reason: stop_reason.clone(),
                    usage: *usage,
                };
                (step, activity)
            }
            QueryEvent::UserMessage { message, uuid } => {
                let step = SubagentStep::User {
                    message: message.clone(),
                    uuid: uuid.clone(),
                };
                (step, self.activity())
            }
            QueryEvent::RequestStart { .. }
            | QueryEvent::TextDelta { .. }
            | QueryEvent::ThinkingDelta { .. }
            | QueryEvent::ToolUseStart { .. }
            | QueryEvent::Retry(_)
            | QueryEvent::Usage { .. }
            | QueryEvent::ToolDenied { .. }
            | QueryEvent::ToolProgress { .. }
            | QueryEvent::ToolResult { .. }
            | QueryEvent::HistoryReplaced { .. }
            | QueryEvent::ToolResultsCleared { .. }
            | QueryEvent::ContextWarning(_)
            | QueryEvent::Transition(_)
            | QueryEvent::Terminal(_) => return,
        };
        let call = self.call.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(call) = call.as_ref() {
            call.report_progress(ToolProgress {
                tool: "Agent".to_owned(),
                elapsed: activity.totals.duration,
                lines: 0,
                bytes: 0,
                subagent: Some(Arc::new(SubagentProgress {
                    agent_id: self.id.clone(),
                    activity,
                    step,
                })),
            });
        }
    }
}

/// `summary` on one line, at most [`SUMMARY_CHARS`] characters.
fn cut(summary: String) -> String {
    let line = if summary.contains('\n') {
        summary.split_whitespace().collect::<Vec<_>>().join(" ")
    } else {
        summary
    };
    match line.char_indices().nth(SUMMARY_CHARS) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line,
    }
}

#[cfg(test)]
#[path = "agent_activity_tests.rs"]
mod tests;
