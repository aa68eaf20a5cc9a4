//! The running turn's own events, as the session forwards the loop's ([`QueryEvent`]): each
//! request's reply streaming into the transcript (text as markdown, thinking collapsed), tool
//! calls in their three phases (an Agent call's sub-agent's latest calls as it reports them),
//! retries beside the spinner (a retry that voids what streamed takes it off screen),
//! compactions as their card, server tool calls (web search) as finished calls.

use serde_json::Value;
use tine_session::{NoticeLevel, QueryEvent, ToolOutput};
use tokio::time::Instant;

use crate::agent_call::AgentLines;
use crate::app::App;
use crate::entry::Entry;
use crate::server_tools;
use crate::shown::call_args;
use crate::stream::MarkdownStream;
use crate::tool_call::{Progress, ToolCall};
use crate::wrap::sanitize;

impl App {
    pub(crate) fn query(&mut self, event: QueryEvent) {
        match event {
            // What streams from here on is one reply.
            QueryEvent::RequestStart { .. } => {
                self.close_open();
                self.retry = None;
                let len = self.transcript.len();
                if let Some(turn) = &mut self.turn {
                    turn.reply_start = len;
                }
            }
            QueryEvent::TextDelta { text } => self.text_delta(&text),
            QueryEvent::ThinkingDelta { text } => self.thinking_delta(&text),
            QueryEvent::ToolUseStart { id, name } => self.tool_started(id, name, String::new()),
            QueryEvent::Retry(notice) => {
                if notice.discard_partial
                    && let Some(turn) = &self.turn
                {
                    let keep = turn.reply_start;
                    self.transcript.truncate(keep);
                    self.forget_from(keep);
                }
                self.retry = Some(notice.to_string());
            }
            // The messages are in the transcript already (they streamed); the figures come
            // with the session's usage reports.
            QueryEvent::Usage { .. } | QueryEvent::UserMessage { .. } => {}
            QueryEvent::AssistantMessage { message, .. } => {
                for call in server_tools::calls(&message) {
                    self.tool_started(call.id.clone(), call.tool, call.args);
                    self.tool_finished(call.id, call.result);
                }
            }
            // Automatic (and reactive) compaction, mid-turn: the card says so.
            QueryEvent::HistoryReplaced { boundary, .. } => {
                self.close_open();
                self.transcript.push(Entry::Compacted(boundary));
            }
            QueryEvent::ToolDenied {
                tool_use_id,
                tool,
                input,
                reason,
            } => {
                // The result that follows says it was refused; make sure the call line exists.
                tracing::debug!(%tool, %reason, "tool denied");
                self.tool_input(tool_use_id, tool, &input);
            }
            QueryEvent::ToolProgress {
                tool_use_id,
                progress,
            } => {
                let cwd = self.info.as_ref().map(|info| info.cwd.as_path());
                if let Some(i) = self.tools.get(&tool_use_id).copied()
                    && let Some(Entry::Tool(call)) = self.transcript.get_mut(i)
                    && call.is_running()
                {
                    call.progress = Some(Progress {
                        elapsed: progress.elapsed,
                        lines: progress.lines,
                        bytes: progress.bytes,
                    });
                    if let Some(agent) = &progress.subagent {
                        call.agent = Some(AgentLines::of(&agent.activity, cwd));
                    }
                }
            }
            QueryEvent::ToolResult {
                tool_use_id,
                output,
                ..
            } => self.tool_finished(tool_use_id, output),
            QueryEvent::ToolResultsCleared { count } => self.notice(
                NoticeLevel::Info,
                format!("cleared {count} old tool results from the context"),
            ),
            QueryEvent::ContextWarning(warning) => {
                let share = warning.tokens.saturating_mul(100) / warning.effective_window.max(1);
                self.notice(NoticeLevel::Warning, format!("context {share}% full"));
            }
            QueryEvent::Transition(transition) => tracing::debug!(?transition, "transition"),
            // The session's `TurnEnded` follows and ends the turn.
            QueryEvent::Terminal(_) => {}
        }
    }

    pub(crate) fn text_delta(&mut self, text: &str) {
        self.retry = None;
        self.close_thinking();
        let index = match self.open_text {
            Some(i) => i,
            None => {
                let i = self
                    .transcript
                    .push(Entry::Assistant(MarkdownStream::new()));
                self.open_text = Some(i);
                i
            }
        };
        if let Some(Entry::Assistant(stream)) = self.transcript.get_mut(index) {
            stream.push(&sanitize(text));
        }
    }

    fn thinking_delta(&mut self, delta: &str) {
        self.retry = None;
        self.close_text();
        let index = match self.open_thinking {
            Some(i) => i,
            None => {
                let i = self.transcript.push(Entry::Thinking {
                    text: String::new(),
                    done: false,
                });
                self.open_thinking = Some(i);
                i
            }
        };
        if let Some(Entry::Thinking { text, .. }) = self.transcript.get_mut(index) {
            text.push_str(delta);
        }
    }

    /// A call's input is complete: its call line shows the argument.
    pub(crate) fn tool_input(&mut self, id: String, tool: String, input: &Value) {
        let cwd = self.info.as_ref().map(|info| info.cwd.as_path());
        let args = call_args(&tool, input, cwd);
        self.tool_started(id, tool, args);
    }

    /// The call line "● Read(src/main.rs)", or, for a call already shown, its argument now
    /// known.
    pub(crate) fn tool_started(&mut self, id: String, tool: String, args: String) {
        match self.tools.get(&id).copied() {
            Some(i) => {
                if let Some(Entry::Tool(call)) = self.transcript.get_mut(i) {
                    call.tool = tool;
                    if !args.is_empty() {
                        call.args = args;
                    }
                }
            }
            None => {
                self.close_open();
                let call = ToolCall::new(tool, args, Instant::now());
                let i = self.transcript.push(Entry::Tool(call));
                self.tools.insert(id, i);
            }
        }
    }

    /// A call finished (or was refused, or interrupted).
    pub(crate) fn tool_finished(&mut self, id: String, result: ToolOutput) {
        let cwd = self.info.as_ref().map(|info| info.cwd.clone());
        let i = match self.tools.get(&id).copied() {
            Some(i) => i,
            None => {
                self.close_open();
                let call = ToolCall::new("Tool".into(), String::new(), Instant::now());
                let i = self.transcript.push(Entry::Tool(call));
                self.tools.insert(id, i);
                i
            }
        };
        if let Some(Entry::Tool(call)) = self.transcript.get_mut(i) {
            call.finish(result, cwd.as_deref());
        }
    }
}
