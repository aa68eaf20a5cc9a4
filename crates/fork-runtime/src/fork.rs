//! `run_forked_agent` (seed 000 §五): the same `query()` loop as the main thread, run on the
//! parent's [`CacheSafeParams`] plus the fork's own prompt, in an isolated context.
//!
//! Byte identity: the fork's request is built from the parent's template (system bytes, tool
//! array, model, thinking) and the parent's messages unchanged, so its first request equals the
//! parent's last one up to the end of the parent's messages (cache breakpoints aside, which are
//! not part of the cache key), and it reads the parent's whole cached prefix.

use std::sync::Arc;

use futures::StreamExt;
use tine_api_client::{Message, Role, Usage, cost_usd};
use tine_config::subagent_transcript_path;
use tine_query_loop::{
    CanUseTool, EndAfterTools, LoopTotals, QueryEvent, QueryParams, QuerySource, StopHooks,
    Terminal, TranscriptError, TranscriptWriter, WriterOptions, message_text, query,
};

use crate::cache_safe::CacheSafeParams;
use crate::subagent::{ParentContext, SubagentOverrides, create_subagent_context};

/// Called with every message the fork adds (its prompt included).
pub type OnMessage = Arc<dyn Fn(&Message) + Send + Sync>;

/// Called with every event of the fork's loop, as it comes (a sub-agent's progress lines);
/// it only looks: what the fork sends is not its business.
pub type OnEvent = Arc<dyn Fn(&QueryEvent) + Send + Sync>;

/// The parameters of one fork.
#[derive(Clone)]
pub struct ForkParams {
    /// The parent's request as it was: system prompt, tools, model, messages (the cache key).
    pub cache_safe: Arc<CacheSafeParams>,
    /// Appended after the parent's messages.
    pub prompt_messages: Vec<Message>,
    /// The fork's sandbox. Asks become denials unless cancellation is shared.
    pub can_use_tool: Arc<dyn CanUseTool>,
    /// The source the fork's requests are reported under (`extract_memories`, `compact`).
    pub query_source: QuerySource,
    /// A label for logs and errors.
    pub fork_label: String,
    /// Requests the fork may make at most.
    pub max_turns: Option<u32>,
    /// No sidechain transcript (otherwise `<session>/subagents/agent-<id>.jsonl`).
    pub skip_transcript: bool,
    /// No breakpoint on the fork's new suffix: it reads the parent's entry, writes none.
    pub skip_cache_write: bool,
    /// With `skip_cache_write`: how many of `cache_safe.messages` the parent's last request
    /// sent. The breakpoint goes where that request put it, so the fork does not write the
    /// parent's messages after it either (the compaction summary: nobody reads them again).
    pub parent_cached_messages: Option<usize>,
    /// Forces the output limit. Breaks the cache when thinking is on (the budget must shrink
    /// under it), so cache-sharing forks never set it.
    pub max_output_tokens: Option<u32>,
    /// Called with every message the fork adds, as it is added.
    pub on_message: Option<OnMessage>,
    /// Called with every event of its loop, as it comes.
    pub on_event: Option<OnEvent>,
    /// Ends the fork right after a turn's tools when it says so (its final reply would be
    /// read by no one); see `QueryParams::end_after_tools`.
    pub end_after_tools: Option<EndAfterTools>,
    /// What of the parent's context the fork replaces (tools, tool context, app state).
    pub overrides: SubagentOverrides,
    /// The fork's id (its sidechain transcript's name); `None`: a fresh one.
    pub agent_id: Option<String>,
    /// The ledger source its requests are billed under, when not its query source (one
    /// sub-agent's cost apart from another's).
    pub ledger_source: Option<QuerySource>,
    /// A sub-agent's SubagentStop hooks: run when its model ends a turn; a block gives the
    /// reason to the agent as its next input and it goes on (bounded as the main thread's
    /// Stop hooks are). Other forks run none.
    pub stop_hooks: Option<Arc<dyn StopHooks>>,
}

impl ForkParams {
    /// A cache-sharing fork with the defaults: transcript skipped, cache written, no cap.
    pub fn new(
        cache_safe: Arc<CacheSafeParams>,
        prompt_messages: Vec<Message>,
        can_use_tool: Arc<dyn CanUseTool>,
        label: &str,
    ) -> Self {
        Self {
            cache_safe,
            prompt_messages,
            can_use_tool,
            query_source: Arc::from(label),
            fork_label: label.to_owned(),
            max_turns: None,
            skip_transcript: true,
            skip_cache_write: false,
            parent_cached_messages: None,
            max_output_tokens: None,
            on_message: None,
            on_event: None,
            end_after_tools: None,
            overrides: SubagentOverrides::default(),
            agent_id: None,
            ledger_source: None,
            stop_hooks: None,
        }
    }
}

/// What a fork produced.
#[derive(Debug, Clone)]
pub struct ForkResult {
    /// The fork's id.
    pub agent_id: String,
    /// The messages the fork added (its prompt, replies, tool results), in order.
    pub messages: Vec<Message>,
    /// Summed over all the fork's requests, cache fields included.
    pub usage: Usage,
    /// The usage of the fork's first request (how much of the parent's prefix it read).
    pub first_request_usage: Option<Usage>,
    /// What the fork cost, in US dollars.
    pub cost_usd: f64,
    /// Requests the fork made.
    pub requests: u32,
    /// Why its loop stopped.
    pub terminal: Terminal,
}

impl ForkResult {
    /// The text of the fork's last reply (empty when it gave none).
    pub fn reply(&self) -> String {
        last_reply(&self.messages).unwrap_or_default()
    }

    /// Why the fork stopped before its work was done, or `None` when it completed or used up
    /// its turns (what it wrote by then stands).
    pub fn unfinished(&self) -> Option<String> {
        match &self.terminal {
            Terminal::Completed | Terminal::MaxTurns { .. } => None,
            other @ (Terminal::Aborted
            | Terminal::PromptTooLong { .. }
            | Terminal::ModelError { .. }
            | Terminal::BlockingLimit { .. }
            | Terminal::StopHookPrevented { .. }
            | Terminal::RepeatedToolFailure { .. }
            | Terminal::MaxBudget { .. }) => Some(other.describe()),
        }
    }
}

/// The text of the last assistant message among `messages`.
pub(crate) fn last_reply(messages: &[Message]) -> Option<String> {
    messages
        .iter()
        .rev()
        .find(|m| m.role == Role::Assistant)
        .map(message_text)
}

/// Why a fork could not run.
#[derive(Debug, thiserror::Error)]
pub enum ForkError {
    /// The fork's transcript path could not be made.
    #[error("fork `{label}`: {source}")]
    Path {
        /// The fork's label.
        label: String,
        /// Why the path could not be made.
        #[source]
        source: tine_config::PathsError,
    },
    /// The fork's transcript could not be written.
    #[error("fork `{label}`: could not write its transcript: {source}")]
    Transcript {
        /// The fork's label.
        label: String,
        /// The transcript error.
        #[source]
        source: TranscriptError,
    },
}

/// Runs a fork to its end. The parent's history is cloned once for the fork's loop and dropped
/// when this returns.
pub async fn run_forked_agent(
    parent: &ParentContext,
    params: ForkParams,
) -> Result<ForkResult, ForkError> {
    let agent_id = params
        .agent_id
        .clone()
        .unwrap_or_else(|| format!("{:016x}", uuid::Uuid::new_v4().as_u128() as u64));
    let ledger_source = params
        .ledger_source
        .clone()
        .unwrap_or_else(|| Arc::clone(&params.query_source));
    let context = create_subagent_context(parent, &params.overrides);
    let mut transcript = if params.skip_transcript {
        None
    } else {
        let path = subagent_transcript_path(
            &context.session.home,
            &context.session.cwd,
            &context.session.session_id,
            &agent_id,
        )
        .map_err(|source| ForkError::Path {
            label: params.fork_label.clone(),
            source,
        })?;
        let writer = TranscriptWriter::open(
            path,
            WriterOptions {
                session_id: context.session.session_id.clone(),
                cwd: context.session.cwd.clone(),
                agent_id: Some(agent_id.clone()),
                parent_uuid: None,
            },
        )
        .await
        .map_err(|source| ForkError::Transcript {
            label: params.fork_label.clone(),
            source,
        })?;
        Some(writer)
    };

    let mut template = params.cache_safe.template.clone();
    template.skip_cache_write = params.skip_cache_write;
    // Clone the decisions the parent's requests were built with, so the replaced tool results
    // of the shared prefix serialize the same (seed 000 §四); an override wins.
    let replacements = match (
        &params.overrides.content_replacements,
        &template.replacements,
    ) {
        (Some(state), _) => state.clone(),
        (None, Some(parent_state)) => tine_query_loop::lock_replacements(parent_state).clone(),
        (None, None) => context.content_replacements.clone(),
    };
    template.replacements = Some(Arc::new(std::sync::Mutex::new(replacements)));
    let mut loop_params = QueryParams::new(
        Arc::clone(&context.client),
        template,
        Arc::clone(&context.tools),
        context.tool_context.clone(),
    );
    loop_params.can_use_tool = Arc::clone(&params.can_use_tool);
    loop_params.prompter = context.prompter.clone();
    loop_params.max_turns = params.max_turns;
    loop_params.max_output_tokens = params.max_output_tokens;
    loop_params.query_source = Arc::clone(&params.query_source);
    loop_params.end_after_tools = params.end_after_tools.clone();
    loop_params.parent_cached_messages = params
        .parent_cached_messages
        .filter(|n| *n <= params.cache_safe.messages.len());
    // Forks never run the stop-hook pipeline, post-sampling hooks or compaction; a sub-agent
    // runs its SubagentStop hooks in that place.
    loop_params.stop_hooks = params.stop_hooks.clone();
    loop_params.post_sampling = None;
    loop_params.compactor = None;

    let mut history: Vec<Message> =
        Vec::with_capacity(params.cache_safe.messages.len() + params.prompt_messages.len());
    history.extend(params.cache_safe.messages.iter().cloned());
    history.extend(params.prompt_messages.iter().cloned());

    let mut added: Vec<Message> = Vec::new();
    for message in &params.prompt_messages {
        record(&params, &mut transcript, message).await;
        added.push(message.clone());
    }

    tracing::debug!(label = %params.fork_label, agent_id, "fork started");
    let mut events = query(loop_params, history);
    // Dropped midway (its background job aborted), the fork stops its loop and its tools now,
    // not at the loop's next event; a fork sharing the parent's token leaves that token alone.
    let stop_on_drop = (!params.overrides.share_cancellation)
        .then(|| context.tool_context.cancellation().clone().drop_guard());
    let mut totals = LoopTotals::new();
    while let Some(event) = events.next().await {
        totals.fold(&event, |model, u| match &parent.ledger {
            Some(ledger) => ledger.record(&ledger_source, model, u),
            None => cost_usd(model, u),
        });
        if let Some(on_event) = &params.on_event {
            on_event(&event);
        }
        match event {
            QueryEvent::AssistantMessage { message, .. }
            | QueryEvent::UserMessage { message, .. } => {
                record(&params, &mut transcript, &message).await;
                added.push(message);
            }
            QueryEvent::RequestStart { .. }
            | QueryEvent::Usage { .. }
            | QueryEvent::Terminal(_)
            | QueryEvent::TextDelta { .. }
            | QueryEvent::ThinkingDelta { .. }
            | QueryEvent::ToolUseStart { .. }
            | QueryEvent::Retry(_)
            | QueryEvent::ToolDenied { .. }
            | QueryEvent::ToolProgress { .. }
            | QueryEvent::ToolResult { .. }
            | QueryEvent::HistoryReplaced { .. }
            | QueryEvent::ToolResultsCleared { .. }
            | QueryEvent::ContextWarning(_)
            | QueryEvent::Transition(_) => {}
        }
    }
    let terminal = totals.finish();
    if let Some(guard) = stop_on_drop {
        guard.disarm();
    }
    tracing::debug!(
        label = %params.fork_label,
        agent_id,
        requests = totals.requests,
        cache_read = totals.usage.cache_read_input_tokens,
        terminal = %terminal.describe(),
        "fork finished"
    );
    Ok(ForkResult {
        agent_id,
        messages: added,
        usage: totals.usage,
        first_request_usage: totals.first_request_usage,
        cost_usd: totals.cost_usd,
        requests: totals.requests,
        terminal,
    })
}

async fn record(params: &ForkParams, transcript: &mut Option<TranscriptWriter>, message: &Message) {
    if let Some(on_message) = &params.on_message {
        on_message(message);
    }
    if let Some(writer) = transcript
        && let Err(error) = writer.append_message(message).await
    {
        tracing::warn!(%error, label = %params.fork_label, "could not write the fork's transcript");
    }
}
