//! Where the host and the upper layers plug into the loop, as traits this crate defines and
//! they implement (the loop must not know forks, memory or compaction), with the vocabulary of
//! their answers; the implementations live elsewhere:
//! - [`CanUseTool`]: the permission check of every tool call.
//! - [`Compactor`]: micro and auto compaction before a request, reactive compaction on "prompt
//!   too long", manual compaction ([`Compactor::compact_now`]) for the session.
//! - [`StopHooks`]: what runs when the model ends a turn with no tool calls (the stop-hook
//!   pipeline of fork-runtime wraps the user's command hooks, `hooks::Hooks`, here).
//! - [`RequestMonitor`]: sees every request of the session and its usage, and may annotate the
//!   transcript (the cache-break detector of fork-runtime).

use futures::future::BoxFuture;
use serde_json::Value;
use tine_api_client::Message;
use tine_tools::{Tool, ToolContext};

use crate::request::RequestTemplate;
use crate::transcript::CompactBoundary;
use crate::transition::{Terminal, Transition};

/// The call a [`CanUseTool`] check is about, on the check's context (one call's extension):
/// a checker that hands the question elsewhere (`--permission-prompt-tool`) names the call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckedCall {
    /// The `tool_use` id of the call.
    pub tool_use_id: String,
}

impl tine_tools::ContextExtension for CheckedCall {
    /// Never inherited: it names one call of one loop.
    fn fork(&self) -> Option<Self> {
        None
    }
}

/// The answer to "may this call run?".
#[derive(Debug, Clone, PartialEq)]
pub enum PermissionOutcome {
    /// Run it, with the input as given or as the checker rewrote it.
    Allow {
        /// The input to run with instead, if the checker rewrote it.
        updated_input: Option<Value>,
    },
    /// Refuse it; the model gets `reason` as an error result.
    Deny {
        /// Why.
        reason: String,
    },
    /// Only a person may decide. The loop asks the [`PermissionPrompter`] if it has one; without
    /// one (headless, background forks) the call is denied with `reason`.
    Ask {
        /// What to ask.
        reason: String,
    },
}

/// Asks a person about a call the checker could not decide. Returns `Allow` or `Deny`.
pub trait PermissionPrompter: Send + Sync {
    /// Asks about `tool` called with `input`; `reason` is the checker's.
    fn ask<'a>(
        &'a self,
        tool: &'a dyn Tool,
        input: &'a Value,
        reason: &'a str,
    ) -> BoxFuture<'a, PermissionOutcome>;
}

/// The host's permission check (`can_use_tool`). Headless, an answer that would need a person
/// is a denial; in a fork, too.
pub trait CanUseTool: Send + Sync {
    /// Whether `tool` may run with `input`.
    fn check<'a>(
        &'a self,
        tool: &'a dyn Tool,
        input: &'a Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, PermissionOutcome>;

    /// The check of a call a PreToolUse hook allowed: the hook skips the question a person
    /// would be asked, never a deny rule (nor an ask rule, nor a protected path). The default
    /// is the plain check: a checker that cannot tell why it would ask keeps asking.
    fn check_hook_allowed<'a>(
        &'a self,
        tool: &'a dyn Tool,
        input: &'a Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, PermissionOutcome> {
        self.check(tool, input, ctx)
    }

    /// The check of a call a PreToolUse hook wants a person to approve (`reason` is the
    /// hook's): a deny rule still denies; anything else is a question for a person. The
    /// default answers `Ask`, which the loop's prompter takes (denied without one); a checker
    /// that asks people itself asks here.
    fn check_hook_ask<'a>(
        &'a self,
        tool: &'a dyn Tool,
        input: &'a Value,
        ctx: &'a ToolContext,
        reason: &'a str,
    ) -> BoxFuture<'a, PermissionOutcome> {
        Box::pin(async move {
            match self.check(tool, input, ctx).await {
                deny @ PermissionOutcome::Deny { .. } => deny,
                PermissionOutcome::Allow { .. } | PermissionOutcome::Ask { .. } => {
                    PermissionOutcome::Ask {
                        reason: reason.to_owned(),
                    }
                }
            }
        })
    }
}

/// Allows everything: for tests and for hosts that checked elsewhere.
#[derive(Debug, Clone, Copy, Default)]
pub struct AllowAll;

impl CanUseTool for AllowAll {
    fn check<'a>(
        &'a self,
        _tool: &'a dyn Tool,
        _input: &'a Value,
        _ctx: &'a ToolContext,
    ) -> BoxFuture<'a, PermissionOutcome> {
        Box::pin(async {
            PermissionOutcome::Allow {
                updated_input: None,
            }
        })
    }
}

/// A history the compactor produced, and what kind of change it was.
#[derive(Debug, Clone)]
pub struct Compacted {
    /// The new history.
    pub messages: Vec<Message>,
    /// The transition the loop records when this answers a "prompt is too long"
    /// (`ReactiveCompact`, `HistorySnip` or `ContextCollapse`).
    pub transition: Transition,
    /// What the transcript's `compact_boundary` record says about it.
    pub boundary: CompactBoundary,
}

/// What the loop hands the compactor: the history as it stands and the fixed parts of the
/// requests, so a summary fork can be built on the parent's cache-safe params mid-turn, when the
/// session's slot is empty by design.
#[derive(Clone, Copy)]
pub struct CompactContext<'a> {
    /// The history about to be sent (or that was refused as too long).
    pub messages: &'a [Message],
    /// The template every request of this loop is built from (system bytes, tool array,
    /// model, thinking, replacement decisions).
    pub template: &'a RequestTemplate,
    /// The loop's tool context: the turn's cancellation, the session's file-state cache, todo
    /// list and background tasks.
    pub tool_context: &'a ToolContext,
    /// The prompt the current turn started with: a compaction never summarizes it away (it
    /// summarizes what came before, and keeps the prompt whole after the summary). `None`
    /// between turns (`/compact`).
    pub current_prompt: Option<CurrentPrompt<'a>>,
}

/// The current turn's prompt, as the loop started with it.
#[derive(Clone, Copy)]
pub struct CurrentPrompt<'a> {
    /// The prompt message as it was sent (the session's first one starts with the user
    /// context block).
    pub message: &'a Message,
    /// Where the turn starts in the history: the prompt's index, or 0 once a compaction put
    /// the prompt into the first message.
    pub index: usize,
}

/// The context is getting full: UIs show it ("context 87% full").
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct ContextWarning {
    /// Estimated tokens of the next request's prompt.
    pub tokens: u64,
    /// The window minus the room kept for the reply.
    pub effective_window: u64,
    /// Where auto compaction starts, when it is on.
    pub auto_compact_at: Option<u64>,
    /// The window leaves the reply less than the floor the loop asks for anyway.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reply_room: Option<ReplyRoom>,
}

/// What is left of the model's window for a reply, when it is less than a reply needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct ReplyRoom {
    /// The model's context window.
    pub window: u64,
    /// The window minus the prompt.
    pub room: u64,
    /// The `max_tokens` asked for all the same.
    pub asked: u64,
}

impl ContextWarning {
    /// How full the effective window is, in percent (capped at 100).
    pub fn percent_full(&self) -> u64 {
        (self.tokens.saturating_mul(100) / self.effective_window.max(1)).min(100)
    }
}

impl std::fmt::Display for ContextWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(ReplyRoom {
            window,
            room,
            asked,
        }) = self.reply_room
        {
            return write!(
                f,
                "the prompt is about {} tokens of the model's {window}-token window, leaving {room} \
                 for the reply; asking for {asked} anyway (the server may cut or refuse it). \
                 /compact, TINE_PROMPT_PROFILE=lean or a bigger window make room",
                self.tokens
            );
        }
        write!(
            f,
            "context {}% full ({} of {} tokens)",
            self.percent_full(),
            self.tokens,
            self.effective_window
        )?;
        match self.auto_compact_at {
            Some(at) => write!(f, "; it is compacted automatically at {at}"),
            None => f.write_str("; auto compaction is off: run /compact"),
        }
    }
}

/// What the compactor did before a request.
#[derive(Debug, Clone, Default)]
pub struct BeforeRequest {
    /// The history was replaced by a summary.
    pub compacted: Option<Compacted>,
    /// Old tool results were cleared in place (the cache had gone cold): how many. The prefix
    /// changed on purpose.
    pub cleared_tool_results: usize,
    /// The context is near the limit.
    pub warning: Option<ContextWarning>,
    /// The compactor's estimate of the next request's prompt, in tokens (after what it did):
    /// the loop asks for no more output than the window leaves after it.
    pub prompt_tokens: Option<u64>,
    /// The next request cannot fit the window and compaction cannot make it: the loop ends
    /// with [`Terminal::BlockingLimit`] instead of sending it.
    pub blocking: Option<Terminal>,
}

/// Why a compaction asked for did not happen.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CompactError {
    /// The conversation is empty.
    #[error("there is nothing to compact yet: the conversation is empty")]
    Empty,
    /// The compaction was cancelled.
    #[error("compaction was cancelled")]
    Cancelled,
    /// The session has no compactor.
    #[error("compaction is not set up for this session")]
    Unavailable,
    /// The compaction failed, described.
    #[error("compaction failed: {0}")]
    Failed(String),
}

/// Compaction, as the loop and the session see it (implemented by `tine-compaction`). Forks
/// run without one, so a fork never compacts.
pub trait Compactor: Send + Sync {
    /// Before every request: clear what a cold cache no longer protects, shrink the history if
    /// it has crossed the threshold, warn when it is close.
    fn before_request<'a>(&'a self, ctx: CompactContext<'a>) -> BoxFuture<'a, BeforeRequest>;

    /// After the API answered "prompt is too long" (at most once per loop).
    fn on_prompt_too_long<'a>(
        &'a self,
        ctx: CompactContext<'a>,
    ) -> BoxFuture<'a, Option<Compacted>>;

    /// A reply of the loop finished: `usage` is its request's, which carried the first
    /// `messages` messages of the history.
    fn on_response(&self, _usage: &tine_api_client::Usage, _messages: usize) {}

    /// `/compact [focus]`: now, whatever the size; `focus` says what the summary must keep.
    fn compact_now<'a>(
        &'a self,
        _ctx: CompactContext<'a>,
        _focus: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Compacted, CompactError>> {
        Box::pin(async { Err(CompactError::Unavailable) })
    }
}

/// What the loop does after the stop hooks ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopHookOutcome {
    /// No hook objected: the turn ends as the model intended.
    Continue,
    /// A hook blocked the stop: give `reason` to the model and keep the loop going.
    Block {
        /// Why, for the model.
        reason: String,
    },
    /// A hook asked to end the session's work now (`"continue": false`); `reason` is for the user.
    Halt {
        /// Why, for the user.
        reason: Option<String>,
    },
}

/// What the stop hooks see when the model ended a turn with no tool calls.
pub struct StopContext<'a> {
    /// The whole history, the final reply included.
    pub messages: &'a [Message],
    /// The fixed parts of the requests just made (system, tools, model, thinking).
    pub template: &'a RequestTemplate,
    /// Whether the loop is already continuing because of a stop hook.
    pub stop_hook_active: bool,
}

/// Runs when a turn ends with no tool calls. Block → the loop continues with the reason.
pub trait StopHooks: Send + Sync {
    /// Decides whether the turn may end.
    fn on_stop<'a>(&'a self, ctx: StopContext<'a>) -> BoxFuture<'a, StopHookOutcome>;
}

/// A note a [`RequestMonitor`] wants kept in the transcript (record `kind`, payload `data`).
#[derive(Debug, Clone, PartialEq)]
pub struct Annotation {
    /// The record's `kind`.
    pub kind: String,
    /// The record's payload.
    pub data: Value,
}

/// Watches a session's requests (main thread only).
pub trait RequestMonitor: Send + Sync {
    /// Just before a request is sent.
    fn on_request(&self, request: &tine_api_client::MessagesRequest);
    /// After its reply finished; what is returned is appended to the transcript.
    fn on_usage(&self, usage: &tine_api_client::Usage) -> Vec<Annotation>;
    /// On resume, each annotation of the runs before (every non-conversation record), in file
    /// order, as the transcript is read, so a new process can compare its first request against
    /// the last one before it. Keep only what that needs: the records are not kept for you.
    fn on_resume(&self, record: &crate::transcript::TranscriptRecord);

    /// The history was replaced or its old tool results cleared on purpose (compaction): the
    /// next request is not compared with the one before. What is returned is appended to the
    /// transcript, so a resumed session knows it too.
    fn on_history_replaced(&self) -> Vec<Annotation> {
        Vec::new()
    }
}
