//! Where the host and the upper layers plug into the loop, as traits this crate defines and
//! they implement (the loop must not know forks, memory or compaction), with the vocabulary of
//! their answers; the implementations live elsewhere:
//! - [`CanUseTool`]: the permission check of every tool call.
//! - [`Compactor`]: auto compaction before a request, reactive compaction on "prompt too long".
//! - [`StopHooks`]: what runs when the model ends a turn with no tool calls (the stop-hook
//!   pipeline of fork-runtime wraps the user's command hooks, `hooks::CommandStopHooks`, here).
//! - [`RequestMonitor`]: sees every request of the session and its usage, and may annotate the
//!   transcript (the cache-break detector of fork-runtime).

use futures::future::BoxFuture;
use serde_json::Value;
use tine_api_client::Message;
use tine_tools::{Tool, ToolContext};

use crate::request::RequestTemplate;
use crate::transition::Transition;

/// The answer to "may this call run?".
#[derive(Debug, Clone, PartialEq)]
pub enum PermissionOutcome {
    /// Run it, with the input as given or as the checker rewrote it.
    Allow { updated_input: Option<Value> },
    /// Refuse it; the model gets `reason` as an error result.
    Deny { reason: String },
    /// Only a person may decide. The loop asks the [`PermissionPrompter`] if it has one; without
    /// one (headless, background forks) the call is denied with `reason`.
    Ask { reason: String },
}

/// Asks a person about a call the checker could not decide. Returns `Allow` or `Deny`.
pub trait PermissionPrompter: Send + Sync {
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
    fn check<'a>(
        &'a self,
        tool: &'a dyn Tool,
        input: &'a Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, PermissionOutcome>;
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
    pub messages: Vec<Message>,
    /// `ReactiveCompact`, `HistorySnip` or `ContextCollapse`.
    pub transition: Transition,
}

/// Compaction hooks. Both return `None` to leave the history as it is.
pub trait Compactor: Send + Sync {
    /// Before every request: shrink the history if it has crossed the threshold.
    fn before_request<'a>(
        &'a self,
        messages: &'a [Message],
        template: &'a RequestTemplate,
    ) -> BoxFuture<'a, Option<Compacted>>;

    /// After the API answered "prompt is too long" (at most once per loop).
    fn on_prompt_too_long<'a>(
        &'a self,
        messages: &'a [Message],
        template: &'a RequestTemplate,
    ) -> BoxFuture<'a, Option<Compacted>>;
}

/// What the loop does after the stop hooks ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopHookOutcome {
    /// No hook objected: the turn ends as the model intended.
    Continue,
    /// A hook blocked the stop: give `reason` to the model and keep the loop going.
    Block { reason: String },
    /// A hook asked to end the session's work now (`"continue": false`); `reason` is for the user.
    Halt { reason: Option<String> },
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
    fn on_stop<'a>(&'a self, ctx: StopContext<'a>) -> BoxFuture<'a, StopHookOutcome>;
}

/// A note a [`RequestMonitor`] wants kept in the transcript (record `kind`, payload `data`).
#[derive(Debug, Clone, PartialEq)]
pub struct Annotation {
    pub kind: String,
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
}
