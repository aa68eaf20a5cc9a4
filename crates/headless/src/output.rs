//! What `-p` prints, in Claude Code's shapes: `text` prints each reply once (see
//! [`crate::text`]); `json` prints one `result` object; `stream-json` prints one JSON object per
//! line (system init, assistant, user/tool results, result). Diagnostics (retries, `--verbose`)
//! go to stderr, never stdout.
//!
//! The `result` object's `total_cost_usd` and `usage` cover every request the run made: the
//! main thread's, and the side queries' and background forks' (memory extraction, recall,
//! WebFetch summaries), with `usage_by_source` breaking them down (it sums to both).

use std::io::{IsTerminal, Write};

use serde_json::{Value, json};
use tine_api_client::Message;
use tine_fork_runtime::BackgroundEvent;
use tine_memory::{DREAM_JOB, EXTRACTION_JOB};
use tine_query_loop::{QueryEvent, Terminal, Transition};
use tine_session::{
    CommandOutput, Notice, NoticeLevel, RequestSummary, SessionInfo, SubagentProgress,
    SubagentStep, TurnEnd, TurnOutcome,
};

use crate::config::OutputFormat;
use crate::text::{ReplyStart, TextStream};

mod result;

pub(crate) use result::ResultSummary;
use result::result_value;

/// Prints events as they happen.
pub(crate) struct Printer {
    format: OutputFormat,
    verbose: bool,
    info: SessionInfo,
    /// Text mode's printer: live on a terminal, one reply at a time when redirected.
    text: TextStream<std::io::Stdout>,
    /// Text mode: how the next request's reply relates to the text before it.
    next_reply: ReplyStart,
    /// The running slash command's answer.
    command: Option<CommandOutput>,
    /// Why the last assistant message ended (the result's `stop_reason`).
    stop_reason: Value,
    /// Stream-json: a foreground sub-agent's text and thinking too, not only its tool calls
    /// and results (the SDK's `forwardSubagentText`).
    subagent_text: bool,
}

impl Printer {
    pub(crate) fn new(format: OutputFormat, verbose: bool, info: SessionInfo) -> Self {
        let stdout = std::io::stdout();
        let live = stdout.is_terminal();
        Self {
            format,
            verbose,
            info,
            text: TextStream::new(stdout, live),
            next_reply: ReplyStart::New,
            command: None,
            stop_reason: Value::Null,
            subagent_text: false,
        }
    }

    /// Stream-json shows a foreground sub-agent's text and thinking as well (`initialize`'s
    /// `forwardSubagentText`).
    pub(crate) fn with_subagent_text(mut self, on: bool) -> Self {
        self.subagent_text = on;
        self
    }

    /// Stream-json's first line.
    pub(crate) fn init(&mut self) {
        if self.format == OutputFormat::StreamJson {
            self.line(&json!({
                "type": "system",
                "subtype": "init",
                "session_id": self.info.session_id.to_string(),
                "cwd": self.info.cwd.display().to_string(),
                "model": self.info.model,
                "tools": self.info.tools,
                "permissionMode": self.info.permission_mode.to_string(),
            }));
        }
    }

    /// One event of the running turn.
    pub(crate) fn event(&mut self, event: &QueryEvent) {
        if let QueryEvent::AssistantMessage { stop_reason, .. } = event {
            self.stop_reason = serde_json::to_value(stop_reason).unwrap_or(Value::Null);
        }
        if self.verbose {
            verbose_line(event);
        }
        if let QueryEvent::Retry(notice) = event {
            // Waiting on a retry is visible in every format: the user knows why it is quiet
            // (a connection refused, an overloaded API). `--verbose` printed it already.
            if !self.verbose {
                eprintln!("tine: {notice}");
            }
        }
        match self.format {
            OutputFormat::Text => self.text_event(event),
            OutputFormat::StreamJson => self.stream_json_event(event),
            // One object at the end of the turn; nothing per event.
            OutputFormat::Json => {}
        }
    }

    /// Stream-json mode: every message as a line, as Claude Code prints them.
    fn stream_json_event(&mut self, event: &QueryEvent) {
        match event {
            QueryEvent::AssistantMessage {
                message,
                uuid,
                id,
                stop_reason,
                usage,
                model,
            } => {
                let value = json!({
                    "type": "assistant",
                    "uuid": uuid,
                    "message": {
                        "id": id,
                        "type": "message",
                        "role": "assistant",
                        "model": model,
                        "content": content_value(message),
                        "stop_reason": stop_reason,
                        "usage": usage,
                    },
                    "parent_tool_use_id": Value::Null,
                    "session_id": self.info.session_id.to_string(),
                });
                self.line(&value);
            }
            QueryEvent::HistoryReplaced { boundary, .. } => {
                // Claude Code's shape, with what tine adds (what was dropped).
                let value = json!({
                    "type": "system",
                    "subtype": "compact_boundary",
                    "session_id": self.info.session_id.to_string(),
                    "compact_metadata": {
                        "trigger": boundary.trigger,
                        "pre_tokens": boundary.tokens_before,
                        "post_tokens": boundary.tokens_after,
                    },
                    "boundary": boundary,
                });
                self.line(&value);
            }
            QueryEvent::UserMessage { message, uuid } => {
                let value = json!({
                    "type": "user",
                    "uuid": uuid,
                    "message": {"role": "user", "content": content_value(message)},
                    "parent_tool_use_id": Value::Null,
                    "session_id": self.info.session_id.to_string(),
                });
                self.line(&value);
            }
            QueryEvent::ToolProgress {
                tool_use_id,
                progress,
            } => {
                if let Some(agent) = &progress.subagent {
                    self.subagent_message(tool_use_id, agent);
                }
            }
            QueryEvent::RequestStart { .. }
            | QueryEvent::TextDelta { .. }
            | QueryEvent::ThinkingDelta { .. }
            | QueryEvent::ToolUseStart { .. }
            | QueryEvent::Retry(_)
            | QueryEvent::Usage { .. }
            | QueryEvent::ToolDenied { .. }
            | QueryEvent::ToolResult { .. }
            | QueryEvent::ToolResultsCleared { .. }
            | QueryEvent::ContextWarning(_)
            | QueryEvent::Transition(_)
            | QueryEvent::Terminal(_) => {}
        }
    }

    /// A foreground sub-agent's message as Claude Code streams it: an `assistant` or `user`
    /// line whose `parent_tool_use_id` is the Agent call's. Only its tool calls and results
    /// (enough for a progress heartbeat) unless the app asked for its text; nothing when
    /// that leaves no block.
    fn subagent_message(&mut self, parent: &str, agent: &SubagentProgress) {
        let (message, uuid) = match &agent.step {
            SubagentStep::Reply { message, uuid, .. } | SubagentStep::User { message, uuid } => {
                (message, uuid)
            }
        };
        let blocks: Vec<Value> = match content_value(message) {
            Value::Array(blocks) => blocks
                .into_iter()
                .filter(|block| {
                    let kind = block.get("type").and_then(Value::as_str);
                    self.subagent_text || matches!(kind, Some("tool_use" | "tool_result"))
                })
                .collect(),
            Value::String(text) if self.subagent_text => {
                vec![json!({"type": "text", "text": text})]
            }
            _ => Vec::new(),
        };
        if blocks.is_empty() {
            return;
        }
        let session_id = self.info.session_id.to_string();
        let value = match &agent.step {
            SubagentStep::Reply {
                id,
                model,
                stop_reason,
                usage,
                ..
            } => json!({
                "type": "assistant",
                "uuid": uuid,
                "message": {
                    "id": id,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": blocks,
                    "stop_reason": stop_reason,
                    "usage": usage,
                },
                "parent_tool_use_id": parent,
                "session_id": session_id,
            }),
            SubagentStep::User { .. } => json!({
                "type": "user",
                "uuid": uuid,
                "message": {"role": "user", "content": blocks},
                "parent_tool_use_id": parent,
                "session_id": session_id,
            }),
        };
        self.line(&value);
    }

    /// Text mode: replies, each printed once (see [`crate::text`]).
    fn text_event(&mut self, event: &QueryEvent) {
        match event {
            QueryEvent::RequestStart { .. } => {
                let start = std::mem::replace(&mut self.next_reply, ReplyStart::New);
                self.text.start(start);
            }
            QueryEvent::TextDelta { text } => self.text.delta(text),
            // The attempt's text is void; the next one starts the reply again.
            QueryEvent::Retry(notice) if notice.discard_partial => {
                self.text.start(ReplyStart::Replacement);
            }
            QueryEvent::AssistantMessage { .. } => self.text.finish_reply(),
            QueryEvent::Transition(transition) => {
                self.next_reply = match transition {
                    // The cut reply was dropped; the same request goes again with more room.
                    Transition::MaxOutputTokensEscalation { .. } => ReplyStart::Replacement,
                    // The cut reply was kept; the model picks up where it stopped.
                    Transition::MaxOutputTokensRecovery { .. } | Transition::PauseTurn => {
                        ReplyStart::Continuation
                    }
                    Transition::ToolUse { .. }
                    | Transition::StopHook { .. }
                    | Transition::ReactiveCompact
                    | Transition::HistorySnip
                    | Transition::ContextCollapse
                    | Transition::AutoBackground => ReplyStart::New,
                };
            }
            QueryEvent::Retry(_)
            | QueryEvent::ThinkingDelta { .. }
            | QueryEvent::ToolUseStart { .. }
            | QueryEvent::Usage { .. }
            | QueryEvent::ToolDenied { .. }
            | QueryEvent::ToolProgress { .. }
            | QueryEvent::ToolResult { .. }
            | QueryEvent::UserMessage { .. }
            | QueryEvent::HistoryReplaced { .. }
            | QueryEvent::ToolResultsCleared { .. }
            | QueryEvent::ContextWarning(_)
            | QueryEvent::Terminal(_) => {}
        }
    }

    /// What a background job reported. Saved memories are shown to the user (stderr in text
    /// mode, a `system` line in stream-json); the rest only with `--verbose`.
    pub(crate) fn background(&mut self, event: &BackgroundEvent) {
        let (job, status, summary, data) = match event {
            BackgroundEvent::Started { job } => (job, "started", String::new(), Value::Null),
            BackgroundEvent::Finished { job, outcome } => {
                (job, "finished", outcome.summary.clone(), outcome.data())
            }
            BackgroundEvent::Failed { job, error } => (job, "failed", error.clone(), Value::Null),
            BackgroundEvent::Cancelled { job } => (job, "cancelled", String::new(), Value::Null),
        };
        let memory_saved = job == EXTRACTION_JOB && status == "finished" && !summary.is_empty();
        // Auto dream: every ending is shown (improved N memories, killed, failed, cancelled).
        let dream = job == DREAM_JOB && status != "started";
        let summary = if dream && summary.trim().is_empty() {
            dream_ending(status)
        } else {
            summary
        };
        if self.verbose {
            eprintln!("[tine] background {job}: {status} {summary}");
        }
        let subtype = match (dream, memory_saved) {
            (true, _) => "dream",
            (false, true) => "memory_saved",
            (false, false) => "background_job",
        };
        match self.format {
            OutputFormat::StreamJson => {
                if status != "started" {
                    let value = json!({
                        "type": "system",
                        "subtype": subtype,
                        "job": job,
                        "status": status,
                        "summary": summary,
                        "data": data,
                        "session_id": self.info.session_id.to_string(),
                    });
                    self.line(&value);
                }
            }
            OutputFormat::Text => {
                if memory_saved && !self.verbose {
                    eprintln!("tine: {summary}");
                } else if dream && !self.verbose {
                    eprintln!("tine: dream: {summary}");
                }
            }
            OutputFormat::Json => {}
        }
    }

    /// The end of a turn: the final newline (text), the result object (json, stream-json), or
    /// the error on stderr (text).
    pub(crate) fn result(&mut self, result: &ResultSummary<'_>) {
        match self.format {
            OutputFormat::Text => {
                self.text.finish_turn();
                if let Some(failure) = result.structured_failure {
                    eprintln!("tine: {failure}");
                } else if !result.turn.terminal.is_success() {
                    eprintln!("tine: {}", result.turn.terminal.describe());
                }
            }
            OutputFormat::Json | OutputFormat::StreamJson => {
                let value = self.result_value(result);
                self.line(&value);
            }
        }
    }

    /// `--include-partial-messages`: one raw server event, as Claude Code's stream-json
    /// `stream_event` line (other formats print none).
    /// A keep-alive `ping` is not the app's business (Claude Code forwards none).
    pub(crate) fn stream_event(&mut self, event: &tine_api_client::StreamEvent) {
        if self.format == OutputFormat::StreamJson
            && !matches!(event, tine_api_client::StreamEvent::Ping)
        {
            let value = json!({
                "type": "stream_event",
                "event": event,
                "parent_tool_use_id": Value::Null,
                "uuid": tine_config::SessionId::new_random().to_string(),
                "session_id": self.info.session_id.to_string(),
            });
            self.line(&value);
        }
    }

    /// `--fallback-model` switched: what follows names the model in use (stream-json says so
    /// in a `system` line of its own, `model_fallback`; the notice said it on stderr).
    pub(crate) fn model_fallback(&mut self, from: &str, to: &str) {
        self.info.model = to.to_owned();
        if self.format == OutputFormat::StreamJson {
            self.line(&json!({
                "type": "system",
                "subtype": "model_fallback",
                "from": from,
                "model": to,
                "session_id": self.info.session_id.to_string(),
            }));
        }
    }

    /// A line the session wants the person to read.
    pub(crate) fn notice(&mut self, notice: &Notice) {
        match notice.level {
            NoticeLevel::Info => eprintln!("tine: note: {}", notice.text),
            NoticeLevel::Warning => eprintln!("tine: warning: {}", notice.text),
        }
    }

    /// `--verbose`: what a request carries, on stderr.
    pub(crate) fn request(&mut self, request: &RequestSummary) {
        eprintln!(
            "[tine] POST {}: model {}, {} messages, {} tools, max_tokens {}, {} bytes",
            request.endpoint,
            request.model,
            request.messages,
            request.tools,
            request.max_tokens,
            request.bytes
        );
    }

    /// What a slash command answered; printed with its result by [`Printer::command_result`].
    pub(crate) fn command_output(&mut self, output: &CommandOutput) {
        self.command = Some(output.clone());
    }

    /// The end of a slash command: its text (text mode; an error on stderr) or a `result`
    /// object. Returns whether it succeeded.
    pub(crate) fn command_result(&mut self, end: &TurnEnd) -> bool {
        let output = self.command.take();
        let error = match &end.outcome {
            TurnOutcome::Completed => None,
            TurnOutcome::Interrupted => Some("interrupted".to_owned()),
            TurnOutcome::Failed { message } => Some(message.clone()),
        };
        let text = output.as_ref().map(|o| o.text.clone()).unwrap_or_default();
        match self.format {
            OutputFormat::Text => match &error {
                None => print!("{}{}", text, if text.ends_with('\n') { "" } else { "\n" }),
                Some(error) => eprintln!("tine: {error}"),
            },
            OutputFormat::Json | OutputFormat::StreamJson => {
                let mut value = json!({
                    "type": "result",
                    "subtype": if error.is_none() { "success" } else { "error_during_execution" },
                    "is_error": error.is_some(),
                    "result": if error.is_none() { text } else { String::new() },
                    "error": error,
                    "errors": error.iter().collect::<Vec<_>>(),
                    "session_id": self.info.session_id.to_string(),
                    "total_cost_usd": end.cost.total().cost_usd,
                });
                if let (Some(object), Some(Value::Object(data))) =
                    (value.as_object_mut(), output.map(|o| o.data))
                {
                    object.extend(data);
                }
                self.line(&value);
            }
        }
        error.is_none()
    }

    /// The `result` object of `summary`.
    pub(crate) fn result_value(&self, summary: &ResultSummary<'_>) -> Value {
        result_value(&self.info, summary, &self.stop_reason)
    }

    /// A hook run (`--include-hook-events`): Claude Code's `hook_started` and `hook_response`
    /// `system` lines (stream-json only).
    pub(crate) fn hook(&mut self, run: &tine_session::HookRun) {
        if self.format != OutputFormat::StreamJson {
            return;
        }
        let mut value = json!({
            "type": "system",
            "hook_id": run.hook_id,
            "hook_name": run.hook_name,
            "hook_event": run.event.name(),
            "uuid": tine_config::SessionId::new_random().to_string(),
            "session_id": self.info.session_id.to_string(),
        });
        let Some(object) = value.as_object_mut() else {
            return;
        };
        match &run.phase {
            tine_session::HookPhase::Started => {
                object.insert("subtype".to_owned(), json!("hook_started"));
            }
            tine_session::HookPhase::Ended(end) => {
                object.insert("subtype".to_owned(), json!("hook_response"));
                object.insert("output".to_owned(), json!(end.output));
                object.insert("stdout".to_owned(), json!(end.stdout));
                object.insert("stderr".to_owned(), json!(end.stderr));
                object.insert("outcome".to_owned(), json!(end.outcome.as_str()));
                if let Some(code) = end.exit_code {
                    object.insert("exit_code".to_owned(), json!(code));
                }
            }
        }
        self.line(&value);
    }

    /// Another conversation took the session's place (`/clear`, `/resume ID`).
    pub(crate) fn set_info(&mut self, info: SessionInfo) {
        self.info = info;
    }

    /// Prints one JSON line (a result deferred by the caller).
    pub(crate) fn print_value(&mut self, value: &Value) {
        self.line(value);
    }

    fn line(&mut self, value: &Value) {
        let mut out = std::io::stdout().lock();
        let _ = serde_json::to_writer(&mut out, value);
        let _ = out.write_all(b"\n");
        let _ = out.flush();
    }
}

fn content_value(message: &Message) -> Value {
    serde_json::to_value(&message.content).unwrap_or(Value::Null)
}

/// `--verbose`: the loop's chain, retries and requests on stderr.
fn verbose_line(event: &QueryEvent) {
    match event {
        QueryEvent::RequestStart { turn, max_tokens } => {
            eprintln!("[tine] request {turn} (max_tokens {max_tokens})");
        }
        QueryEvent::Retry(notice) => eprintln!("[tine] {notice}"),
        QueryEvent::Usage { usage, model } => eprintln!(
            "[tine] usage ({model}): input {} + cache write {} + cache read {}, output {}{}",
            usage.input_tokens,
            usage.cache_creation_input_tokens,
            usage.cache_read_input_tokens,
            usage.output_tokens,
            match usage.estimated {
                true => " (estimated: the server sent no usage)",
                false => "",
            }
        ),
        QueryEvent::ToolUseStart { name, id } => eprintln!("[tine] tool call {name} ({id})"),
        QueryEvent::ToolDenied { tool, reason, .. } => {
            eprintln!("[tine] denied {tool}: {reason}");
        }
        QueryEvent::ToolResult { tool, output, .. } => eprintln!(
            "[tine] {tool} -> {}{}",
            if output.is_error { "error: " } else { "" },
            output.summary
        ),
        QueryEvent::Transition(transition) => {
            eprintln!("[tine] transition: {}", transition.label());
        }
        QueryEvent::HistoryReplaced { messages, boundary } => eprintln!(
            "[tine] compacted ({}): {} -> {} tokens, {} messages summarized, {} now",
            boundary.trigger,
            boundary.tokens_before,
            boundary.tokens_after,
            boundary.messages_summarized,
            messages.len()
        ),
        QueryEvent::ToolResultsCleared { count } => {
            eprintln!("[tine] the cache went cold: {count} old tool results cleared");
        }
        QueryEvent::ContextWarning(warning) => eprintln!("[tine] {warning}"),
        QueryEvent::Terminal(terminal) => eprintln!("[tine] end: {}", terminal_label(terminal)),
        QueryEvent::TextDelta { .. }
        | QueryEvent::ThinkingDelta { .. }
        | QueryEvent::AssistantMessage { .. }
        | QueryEvent::ToolProgress { .. }
        | QueryEvent::UserMessage { .. } => {}
    }
}

fn terminal_label(terminal: &Terminal) -> String {
    format!("{} ({})", terminal.subtype(), terminal.describe())
}

/// What a dream that said nothing of itself did: cancelled with the session (its pipeline
/// dropped it) or failed without a message. Either way its lock was rolled back.
fn dream_ending(status: &str) -> String {
    match status {
        "cancelled" => "cancelled before it finished; the consolidation lock was rolled back, so \
                        a later session consolidates"
            .to_owned(),
        other => format!("{other}; the consolidation lock was rolled back"),
    }
}
