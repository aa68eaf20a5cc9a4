//! The adapter between the session and the UI: [`SessionEvent`] → [`UiEvent`] and the view
//! types, one arm per variant (the matches are exhaustive on purpose: a new variant of either
//! side needs a decision here). The reverse direction, [`UiCommand`](tine_tui::UiCommand) → handle calls, is in
//! `driver`, which owns the handle.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde_json::Value;
use tine_fork_runtime::BackgroundEvent;
use tine_permissions::PermissionMode as ToolMode;
use tine_query_loop::{CompactBoundary, QueryEvent};
use tine_session::{
    NoticeLevel as SessionNoticeLevel, SessionEvent, SubmissionId, TurnOutcome, UsageReport,
};
use tine_tools::TodoStatus as ToolTodoStatus;
use tine_tools::{ToolDisplay, ToolOutput};
use tine_tui::{
    CompactionView, DiffSource, NoticeLevel, PermissionMode, PermissionRequest, StuckQuestion,
    TaskKind, TaskStatus, TaskView, TodoStatus, TodoView, ToolDisplayView, ToolResultView,
    TurnEndReason, UiEvent, UsageView,
};

/// What the adapter remembers between events.
#[derive(Debug, Default)]
pub struct Adapter {
    /// Submissions whose `TurnStarted`/`TurnEnded` the UI must not see: commands that run no
    /// turn (the UI holds no turn guard for them, and a stray `TurnEnded` would end a real one).
    quiet: HashSet<SubmissionId>,
    /// Tool names by `tool_use` id, for the call line once the input is known.
    tools: HashMap<String, String>,
    /// The project: files inside it are shown relative to it, in call lines, dialogs and
    /// diffs alike (outside it, absolute).
    cwd: Option<PathBuf>,
}

impl Adapter {
    pub fn new(cwd: PathBuf) -> Self {
        Self {
            cwd: Some(cwd),
            ..Self::default()
        }
    }

    /// `path` as shown: relative to the project when inside it.
    fn shown(&self, path: &str) -> String {
        match &self.cwd {
            Some(cwd) => shown_path(path, cwd),
            None => path.to_owned(),
        }
    }

    /// A call's argument, its file relative to the project.
    fn args(&self, tool: &str, input: &Value) -> String {
        let args = tool_args(tool, input);
        if is_file_tool(tool) {
            self.shown(&args)
        } else {
            args
        }
    }
    /// The `TurnStarted`/`TurnEnded` of submission `id` are not the UI's business.
    pub fn mark_quiet(&mut self, id: SubmissionId) {
        self.quiet.insert(id);
    }

    /// The UI's events for one session event (none, one or a few).
    pub fn map(&mut self, event: SessionEvent) -> Vec<UiEvent> {
        match event {
            SessionEvent::Notice(notice) => vec![UiEvent::Notice {
                level: notice_level(notice.level),
                text: notice.text,
            }],
            SessionEvent::TurnStarted { id } => {
                if self.quiet.contains(&id) {
                    Vec::new()
                } else {
                    vec![UiEvent::TurnStarted]
                }
            }
            SessionEvent::Query(event) => self.query(event),
            SessionEvent::ToolInput { id, tool, input } => {
                self.tools.insert(id.clone(), tool.clone());
                let args = self.args(&tool, &input);
                vec![UiEvent::ToolStarted { id, tool, args }]
            }
            SessionEvent::PermissionRequest(request) => {
                // The resolved path (the call's may be relative to the session's directory).
                let preview = preview(&request.tool, &request.input, &request.target);
                let summary = if is_file_tool(&request.tool) {
                    self.shown(&request.target)
                } else {
                    request.target
                };
                vec![UiEvent::PermissionRequest(PermissionRequest {
                    id: request.id.0.to_string(),
                    tool: request.tool,
                    summary,
                    reason: (!request.reason.is_empty()).then_some(request.reason),
                    always_rule: request.always_rule,
                    preview,
                })]
            }
            SessionEvent::StuckModel(question) => {
                let args = self.args(&question.tool, &question.input);
                vec![UiEvent::StuckModel(StuckQuestion {
                    id: question.id.0.to_string(),
                    tool: question.tool,
                    args,
                    error: question.error,
                    repeats: question.repeats,
                })]
            }
            SessionEvent::Elicitation(question) => {
                vec![UiEvent::Elicitation(super::elicitation::request(question))]
            }
            SessionEvent::ElicitationWithdrawn { id } => vec![UiEvent::ElicitationWithdrawn {
                id: id.0.to_string(),
            }],
            // The UI drops a turn's requests itself when it interrupts; a withdrawal it did not
            // cause (shutdown) ends with the turn.
            SessionEvent::PermissionWithdrawn { id: _ } => Vec::new(),
            SessionEvent::CommandOutput(output) => {
                // `/compact` shows its card, as an automatic compaction does.
                if let Some(boundary) = output
                    .data
                    .get("compact_boundary")
                    .filter(|b| !b.is_null())
                    .and_then(|b| serde_json::from_value::<CompactBoundary>(b.clone()).ok())
                {
                    return vec![UiEvent::Compacted(compaction_view(&boundary))];
                }
                if output.is_error {
                    vec![UiEvent::Notice {
                        level: NoticeLevel::Error,
                        text: output.text,
                    }]
                } else {
                    vec![UiEvent::CommandOutput {
                        command: output.command,
                        text: output.text,
                    }]
                }
            }
            // Its failed `TurnEnded` follows and shows the reason as the turn's error.
            SessionEvent::PromptBlocked { .. } => Vec::new(),
            SessionEvent::TurnEnded(end) => {
                if self.quiet.remove(&end.id) {
                    return Vec::new();
                }
                vec![UiEvent::TurnEnded {
                    reason: turn_end_reason(end.outcome),
                }]
            }
            SessionEvent::Background(event) => background(event),
            SessionEvent::Usage(report) => vec![UiEvent::Usage(usage_view(&report))],
            SessionEvent::PermissionModeChanged(mode) => {
                vec![UiEvent::PermissionModeChanged(ui_mode(mode))]
            }
            // Verbose sessions only; the UI keeps them in the log.
            SessionEvent::Request(summary) => {
                tracing::debug!(?summary, "request");
                Vec::new()
            }
            SessionEvent::CacheBreak(text) => {
                tracing::info!(%text, "cache break");
                Vec::new()
            }
            // Only `-p --include-partial-messages` asks for these.
            // Its notice said it; the status line's model follows the usage reports.
            SessionEvent::StreamEvent(_) | SessionEvent::ModelFallback { .. } => Vec::new(),
            SessionEvent::AwaySummary(text) => vec![UiEvent::AwaySummary(text)],
        }
    }

    fn query(&mut self, event: QueryEvent) -> Vec<UiEvent> {
        match event {
            QueryEvent::RequestStart { .. } => vec![UiEvent::RequestStarted],
            QueryEvent::TextDelta { text } => vec![UiEvent::TextDelta(text)],
            QueryEvent::ThinkingDelta { text } => vec![UiEvent::ThinkingDelta(text)],
            QueryEvent::ToolUseStart { id, name } => {
                self.tools.insert(id.clone(), name.clone());
                vec![UiEvent::ToolStarted {
                    id,
                    tool: name,
                    args: String::new(),
                }]
            }
            QueryEvent::Retry(notice) => vec![UiEvent::Retry {
                message: notice.to_string(),
                discard_partial: notice.discard_partial,
            }],
            // Figures come from the session's `Usage` report; the messages are in the
            // transcript already (they streamed).
            QueryEvent::AssistantMessage { message, .. } => {
                super::server_tools::server_tool_events(&message)
            }
            QueryEvent::Usage { .. } | QueryEvent::UserMessage { .. } => Vec::new(),
            // Automatic (and reactive) compaction, mid-turn: the card says so.
            QueryEvent::HistoryReplaced { boundary, .. } => {
                vec![UiEvent::Compacted(compaction_view(&boundary))]
            }
            QueryEvent::ToolDenied {
                tool_use_id,
                tool,
                input,
                reason,
            } => {
                // The result that follows says it was refused; make sure the call line exists.
                let args = self.args(&tool, &input);
                self.tools.insert(tool_use_id.clone(), tool.clone());
                tracing::debug!(%tool, %reason, "tool denied");
                vec![UiEvent::ToolStarted {
                    id: tool_use_id,
                    tool,
                    args,
                }]
            }
            QueryEvent::ToolProgress {
                tool_use_id,
                progress,
            } => vec![UiEvent::ToolProgress {
                id: tool_use_id,
                elapsed: progress.elapsed,
                lines: progress.lines,
                bytes: progress.bytes,
            }],
            QueryEvent::ToolResult {
                tool_use_id,
                tool: _,
                output,
            } => {
                self.tools.remove(&tool_use_id);
                let mut result = result_view(output);
                if let ToolDisplayView::Diff { path, .. } = &mut result.display {
                    *path = self.shown(path);
                }
                vec![UiEvent::ToolFinished {
                    id: tool_use_id,
                    result,
                }]
            }
            QueryEvent::ToolResultsCleared { count } => vec![UiEvent::Notice {
                level: NoticeLevel::Info,
                text: format!("cleared {count} old tool results from the context"),
            }],
            QueryEvent::ContextWarning(warning) => {
                let share = warning.tokens.saturating_mul(100) / warning.effective_window.max(1);
                vec![UiEvent::Notice {
                    level: NoticeLevel::Warning,
                    text: format!("context {share}% full"),
                }]
            }
            QueryEvent::Transition(transition) => {
                tracing::debug!(?transition, "transition");
                Vec::new()
            }
            // The session's `TurnEnded` follows and ends the turn.
            QueryEvent::Terminal(_) => Vec::new(),
        }
    }
}

/// The transcript's card for a compaction.
pub fn compaction_view(boundary: &CompactBoundary) -> CompactionView {
    CompactionView {
        trigger: boundary.trigger.as_str().to_owned(),
        tokens_before: boundary.tokens_before,
        tokens_after: boundary.tokens_after,
        messages_summarized: boundary.messages_summarized,
    }
}

fn notice_level(level: SessionNoticeLevel) -> NoticeLevel {
    match level {
        SessionNoticeLevel::Info => NoticeLevel::Info,
        SessionNoticeLevel::Warning => NoticeLevel::Warning,
    }
}

pub fn turn_end_reason(outcome: TurnOutcome) -> TurnEndReason {
    match outcome {
        TurnOutcome::Completed => TurnEndReason::Completed,
        TurnOutcome::Interrupted => TurnEndReason::Interrupted,
        TurnOutcome::Failed { message } => TurnEndReason::Failed { message },
    }
}

fn background(event: BackgroundEvent) -> Vec<UiEvent> {
    let task = |job: &str, status| {
        UiEvent::Task(TaskView {
            id: job.to_owned(),
            kind: TaskKind::Job,
            title: job_title(job),
            status,
        })
    };
    match event {
        BackgroundEvent::Started { job } => vec![task(&job, TaskStatus::Running)],
        BackgroundEvent::Finished { job, outcome } => {
            let mut out = vec![task(
                &job,
                TaskStatus::Finished {
                    summary: outcome.summary.clone(),
                },
            )];
            // "saved 2 memories": what a job has to say is said in the transcript too.
            if !outcome.summary.is_empty() {
                out.push(UiEvent::Notice {
                    level: NoticeLevel::Info,
                    text: outcome.summary,
                });
            }
            out
        }
        BackgroundEvent::Failed { job, error } => vec![
            task(
                &job,
                TaskStatus::Failed {
                    error: error.clone(),
                },
            ),
            UiEvent::Notice {
                level: NoticeLevel::Warning,
                text: format!("{}: {error}", job_title(&job)),
            },
        ],
        BackgroundEvent::Cancelled { job } => vec![task(&job, TaskStatus::Cancelled)],
    }
}

/// "extract_memories" → "memory extraction".
fn job_title(job: &str) -> String {
    match job {
        "extract_memories" => "memory extraction".to_owned(),
        "auto_dream" => "memory dream".to_owned(),
        other => other.replace('_', " "),
    }
}

pub fn usage_view(report: &UsageReport) -> UsageView {
    UsageView {
        model: report.model.clone(),
        context_tokens: report.context_tokens,
        context_window: report.context_window,
        session_cost_usd: report.cost.total().cost_usd,
        cache_read_share: report.cache_read_share,
    }
}

pub fn ui_mode(mode: ToolMode) -> PermissionMode {
    match mode {
        ToolMode::Default => PermissionMode::Default,
        ToolMode::AcceptEdits => PermissionMode::AcceptEdits,
        ToolMode::Plan => PermissionMode::Plan,
        ToolMode::BypassPermissions => PermissionMode::BypassPermissions,
        // The UI never cycles to it; shown as the default's row (nothing is asked anyway).
        ToolMode::DontAsk => PermissionMode::Default,
    }
}

pub fn session_mode(mode: PermissionMode) -> ToolMode {
    match mode {
        PermissionMode::Default => ToolMode::Default,
        PermissionMode::AcceptEdits => ToolMode::AcceptEdits,
        PermissionMode::Plan => ToolMode::Plan,
        PermissionMode::BypassPermissions => ToolMode::BypassPermissions,
    }
}

pub fn result_view(output: ToolOutput) -> ToolResultView {
    let display = match output.display {
        ToolDisplay::None => ToolDisplayView::None,
        ToolDisplay::Diff {
            file_path,
            unified,
            added: _,
            removed: _,
        } => ToolDisplayView::Diff {
            path: file_path.display().to_string(),
            diff: DiffSource::Unified(unified),
        },
        ToolDisplay::Todos(items) => ToolDisplayView::Todos(
            items
                .into_iter()
                .map(|item| TodoView {
                    status: match item.status {
                        ToolTodoStatus::Pending => TodoStatus::Pending,
                        ToolTodoStatus::InProgress => TodoStatus::InProgress,
                        ToolTodoStatus::Completed => TodoStatus::Completed,
                    },
                    content: item.content,
                })
                .collect(),
        ),
        ToolDisplay::Shell {
            exit_code,
            timed_out,
            truncated: _,
            background_task,
        } => ToolDisplayView::Shell {
            exit_code,
            timed_out,
            background_task,
        },
    };
    let summary = match output.is_error {
        true => declined_summary(&output.content).unwrap_or(output.summary),
        false => output.summary,
    };
    ToolResultView {
        is_error: output.is_error,
        summary,
        content: output.content,
        display,
    }
}

/// What the session tells the model when a person answered "No" (its `DECLINED`).
const DECLINED_MARK: &str = "The user doesn't want to proceed with this tool use";
/// Before the feedback typed with that "No".
const FEEDBACK_MARK: &str = "The user said: ";

/// A call the person refused reads "Rejected by you" (with what they said), not the
/// instructions written for the model (the whole text stays behind Ctrl+O).
fn declined_summary(content: &str) -> Option<String> {
    if !content.contains(DECLINED_MARK) {
        return None;
    }
    Some(match content.split_once(FEEDBACK_MARK) {
        Some((_, feedback)) if !feedback.trim().is_empty() => {
            format!("Rejected by you: {}", feedback.trim())
        }
        _ => "Rejected by you".to_owned(),
    })
}

fn is_file_tool(tool: &str) -> bool {
    matches!(
        tool,
        "Read" | "Write" | "Edit" | "MultiEdit" | "NotebookEdit"
    )
}

/// `path` relative to `cwd` when it is inside it (`src/main.rs`), else as it is.
pub fn shown_path(path: &str, cwd: &Path) -> String {
    match Path::new(path).strip_prefix(cwd) {
        Ok(rest) if !rest.as_os_str().is_empty() => rest.display().to_string(),
        _ => path.to_owned(),
    }
}

/// The call's argument as people read it: `Read(src/main.rs)`, `Bash(cargo test)`.
pub fn tool_args(tool: &str, input: &Value) -> String {
    let field = |name: &str| input.get(name).and_then(Value::as_str).map(str::to_owned);
    let picked = match tool {
        "Bash" => field("command"),
        "Read" | "Write" | "Edit" | "MultiEdit" | "NotebookEdit" => {
            field("file_path").or_else(|| field("notebook_path"))
        }
        "Grep" | "Glob" => field("pattern"),
        "WebFetch" => field("url"),
        "WebSearch" => field("query"),
        "Task" | "Agent" => field("description"),
        _ => None,
    };
    picked.unwrap_or_else(|| match input {
        Value::Object(map) if map.is_empty() => String::new(),
        Value::Null => String::new(),
        other => {
            let text = other.to_string();
            match text.char_indices().nth(80) {
                Some((cut, _)) => format!("{}…", &text[..cut]),
                None => text,
            }
        }
    })
}

/// Files larger than this are previewed from the Edit's strings alone.
const EDIT_PREVIEW_MAX_BYTES: u64 = 1 << 20;

/// For Edit/Write: the change the call would make.
fn preview(tool: &str, input: &Value, target: &str) -> Option<DiffSource> {
    let field = |name: &str| input.get(name).and_then(Value::as_str);
    match tool {
        "Edit" => {
            let (old, new) = (field("old_string")?, field("new_string")?);
            let replace_all = input.get("replace_all").and_then(Value::as_bool) == Some(true);
            // The file before and after, so the dialog numbers the lines as the file does
            // (and shows their context); the strings alone when the file says otherwise.
            let file = std::fs::metadata(target)
                .ok()
                .filter(|meta| meta.len() <= EDIT_PREVIEW_MAX_BYTES)
                .and_then(|_| std::fs::read_to_string(target).ok())
                .filter(|text| !old.is_empty() && text.contains(old));
            Some(match file {
                Some(before) => {
                    let after = if replace_all {
                        before.replace(old, new)
                    } else {
                        before.replacen(old, new, 1)
                    };
                    DiffSource::Texts { before, after }
                }
                None => DiffSource::Texts {
                    before: old.to_owned(),
                    after: new.to_owned(),
                },
            })
        }
        "Write" => {
            let before = std::fs::read_to_string(target).unwrap_or_default();
            Some(DiffSource::Texts {
                before,
                after: field("content")?.to_owned(),
            })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn call_lines_name_the_file_or_command() {
        assert_eq!(tool_args("Bash", &json!({"command": "ls -la"})), "ls -la");
        assert_eq!(
            tool_args(
                "Edit",
                &json!({"file_path": "/p/src/a.rs", "old_string": "x"})
            ),
            "/p/src/a.rs"
        );
        assert_eq!(tool_args("Other", &json!({})), "");
        assert_eq!(tool_args("Other", &json!({"a": 1})), "{\"a\":1}");
    }

    #[test]
    fn files_show_relative_to_the_project_in_call_lines_and_dialogs_alike() {
        let mut adapter = Adapter::new(PathBuf::from("/p"));
        let input = json!({"file_path": "/p/src/a.rs", "content": "x"});
        let started = adapter.map(SessionEvent::ToolInput {
            id: "t1".into(),
            tool: "Write".into(),
            input: input.clone(),
        });
        assert_eq!(
            started,
            [UiEvent::ToolStarted {
                id: "t1".into(),
                tool: "Write".into(),
                args: "src/a.rs".into()
            }]
        );
        let asked = adapter.map(SessionEvent::PermissionRequest(
            tine_session::PermissionRequest {
                id: tine_session::PermissionId(1),
                tool: "Write".into(),
                input,
                target: "/p/src/a.rs".into(),
                reason: String::new(),
                always_rule: None,
            },
        ));
        assert!(
            matches!(&asked[..], [UiEvent::PermissionRequest(r)] if r.summary == "src/a.rs"),
            "{asked:?}"
        );
        assert_eq!(
            shown_path("/elsewhere/b.rs", Path::new("/p")),
            "/elsewhere/b.rs"
        );
        assert_eq!(shown_path("/p2/b.rs", Path::new("/p")), "/p2/b.rs");
        assert_eq!(
            adapter.args("Bash", &json!({"command": "cat /p/x"})),
            "cat /p/x",
            "commands are shown as they are"
        );
    }

    #[test]
    fn quiet_commands_never_end_the_uis_turn() {
        let mut adapter = Adapter::default();
        adapter.mark_quiet(SubmissionId(7));
        assert!(
            adapter
                .map(SessionEvent::TurnStarted {
                    id: SubmissionId(7)
                })
                .is_empty()
        );
        assert_eq!(
            adapter.map(SessionEvent::TurnStarted {
                id: SubmissionId(8)
            }),
            vec![UiEvent::TurnStarted]
        );
    }

    #[test]
    fn a_finished_job_with_a_summary_is_said_in_the_transcript() {
        let events = background(BackgroundEvent::Finished {
            job: "extract_memories".into(),
            outcome: tine_fork_runtime::JobOutcome::new("saved 2 memories", Value::Null),
        });
        assert_eq!(events.len(), 2);
        assert_eq!(
            events[1],
            UiEvent::Notice {
                level: NoticeLevel::Info,
                text: "saved 2 memories".into()
            }
        );
    }

    #[test]
    fn an_edit_preview_numbers_the_lines_as_the_file_does() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.txt");
        std::fs::write(&path, "one\ntwo\nthree\nfour\n").unwrap();
        let target = path.to_str().unwrap();
        let input = json!({"file_path": "x.txt", "old_string": "three", "new_string": "THREE"});
        let lines = tine_tui::diff::diff_lines(&preview("Edit", &input, target).unwrap());
        let removed = lines
            .iter()
            .find(|l| l.kind == tine_tui::diff::DiffLineKind::Removed)
            .unwrap();
        assert_eq!((removed.old, removed.text.as_str()), (Some(3), "three"));
        assert!(
            lines.iter().any(|l| l.text == "two"),
            "context around the change: {lines:?}"
        );
        // Not in the file (yet): the strings alone.
        let input = json!({"file_path": "x.txt", "old_string": "nine", "new_string": "NINE"});
        let lines = tine_tui::diff::diff_lines(&preview("Edit", &input, target).unwrap());
        assert_eq!(lines.len(), 2, "{lines:?}");
    }
}
