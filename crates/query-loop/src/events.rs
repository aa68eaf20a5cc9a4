//! What the loop tells its host while it runs: [`QueryEvent`]s, ending in exactly one
//! [`QueryEvent::Terminal`], sent through the loop's `Emitter`.

use tine_api_client::{Message, RetryNotice, StopReason, Usage};
use tine_tools::{ToolOutput, ToolProgress};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::plug::ContextWarning;
use crate::transcript::CompactBoundary;
use crate::transition::{Terminal, Transition};

/// One thing that happened in the loop, in order.
#[derive(Debug, Clone)]
pub enum QueryEvent {
    /// A request is about to be sent (`turn` counts from 1).
    RequestStart {
        /// The request's number in this loop.
        turn: u32,
        /// The request's output limit.
        max_tokens: u32,
    },
    /// A piece of the reply's text.
    TextDelta {
        /// The text.
        text: String,
    },
    /// A piece of the reply's thinking.
    ThinkingDelta {
        /// The thinking.
        text: String,
    },
    /// The model began a tool call (its input streams next).
    ToolUseStart {
        /// The call's id.
        id: String,
        /// The tool called.
        name: String,
    },
    /// The request failed and is being retried. Everything streamed for the current reply so far
    /// is void when `notice.discard_partial` is set: UIs drop it.
    Retry(RetryNotice),
    /// A reply finished streaming; its usage (every reply, also one the loop then drops).
    Usage {
        /// The reply's usage.
        usage: Usage,
        /// The model that answered.
        model: String,
    },
    /// The complete reply, now part of the conversation.
    AssistantMessage {
        /// The reply.
        message: Message,
        /// The uuid of its transcript record (stream-json's `uuid`, what
        /// `--resume-session-at` takes).
        uuid: String,
        /// The API's id of the reply (`msg_…`).
        id: String,
        /// Why the model stopped.
        stop_reason: Option<StopReason>,
        /// The reply's usage.
        usage: Usage,
        /// The model that answered.
        model: String,
    },
    /// A tool call was refused by the permission check; the model gets the reason.
    ToolDenied {
        /// The call's id.
        tool_use_id: String,
        /// The tool.
        tool: String,
        /// The call's input.
        input: serde_json::Value,
        /// Why it was refused.
        reason: String,
    },
    /// Progress of a running tool ("3.2 s, 142 lines").
    ToolProgress {
        /// The call's id.
        tool_use_id: String,
        /// The progress.
        progress: ToolProgress,
    },
    /// A tool call finished (or was refused, or interrupted).
    ToolResult {
        /// The call's id.
        tool_use_id: String,
        /// The tool.
        tool: String,
        /// What it returned.
        output: ToolOutput,
    },
    /// A user-role message the loop appended (tool results, a recovery nudge, a hook's reason).
    UserMessage {
        /// The message.
        message: Message,
        /// The uuid of its transcript record.
        uuid: String,
    },
    /// The compactor replaced the conversation: hosts replace their copy with `messages` (the
    /// transcript gets a `compact_boundary` record with `boundary`, then the messages).
    HistoryReplaced {
        /// The new history.
        messages: Vec<Message>,
        /// What the compaction did.
        boundary: CompactBoundary,
    },
    /// Old tool results were cleared in place (the cache had gone cold): the next request's
    /// prefix differs on purpose.
    ToolResultsCleared {
        /// How many results were cleared.
        count: usize,
    },
    /// The context is close to the limit.
    ContextWarning(ContextWarning),
    /// The loop is going round again, and why.
    Transition(Transition),
    /// The end; nothing follows.
    Terminal(Terminal),
}

/// Sends events; a dropped receiver cancels the loop (nobody is listening any more).
#[derive(Clone)]
pub(crate) struct Emitter {
    pub(crate) tx: mpsc::Sender<QueryEvent>,
    cancel: CancellationToken,
}

impl Emitter {
    /// An emitter on `tx` that cancels `cancel` when the receiver is gone.
    pub(crate) fn new(tx: mpsc::Sender<QueryEvent>, cancel: CancellationToken) -> Self {
        Self { tx, cancel }
    }

    pub(crate) async fn send(&self, event: QueryEvent) {
        if self.tx.send(event).await.is_err() {
            self.cancel.cancel();
        }
    }
}
