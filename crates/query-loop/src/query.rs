//! `query()`: the agent loop of seed 003 §三 as a stream of [`QueryEvent`]s ending in a
//! [`Terminal`]. Immutable [`QueryParams`] for the whole loop, a mutable [`LoopState`] per
//! iteration, and a [`Transition`] recorded every time it goes round again.
//!
//! One iteration: (micro / auto compact) → build the request → stream the reply → on `max_tokens`
//! escalate or nudge → run the tool calls (consecutive concurrency-safe ones in parallel, at
//! most [`MAX_PARALLEL_TOOLS`], the rest one at a time, results in call order) → loop; or, with
//! no tool calls, the stop hooks decide whether the turn really ends.

use std::sync::Arc;

use futures::stream::{self, BoxStream, StreamExt};
use tine_api_client::{
    ApiError, ClientEvent, ContentBlock, ContentDelta, Message, MessageAccumulator, MessageContent,
    ModelClient, ResponseMessage, StopReason, StreamEvent, ToolUseBlock, model_info,
};
use tine_tools::{Tool, ToolContext};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::events::QueryEvent;
use crate::hooks::{Hooks, PostSamplingContext, PostSamplingHooks};
use crate::plug::{
    CanUseTool, CompactContext, Compactor, PermissionPrompter, StopContext, StopHookOutcome,
    StopHooks,
};
use crate::request::RequestTemplate;
use crate::stuck::{
    DEFAULT_MAX_REPEATED_FAILURES, FailureStreak, RepeatedFailureHandler, StuckDecision,
};
use crate::tool_calls::{run_tool_calls, turn_in_progress};
use crate::transition::{Terminal, Transition};
use tine_config::SessionId;

/// The output limit of a first attempt (Claude Code's capped default).
pub const DEFAULT_MAX_OUTPUT_TOKENS: u32 = 8_000;
/// The limit a reply cut at the default is retried with, once.
pub const ESCALATED_MAX_OUTPUT_TOKENS: u32 = 64_000;
/// "Resume directly" nudges after the escalated limit is hit too.
pub const MAX_OUTPUT_RECOVERY_ATTEMPTS: u32 = 3;

/// `pause_turn` replies in a row the loop continues before it ends the turn with an error: a
/// server tool (web search) that keeps pausing would otherwise be paid for without end. The
/// API pauses a server-tool loop after about 10 of its own iterations, so 5 continuations
/// allow some 50 searches in one answer; Claude Code documents no number.
pub const MAX_PAUSE_TURN_CONTINUATIONS: u32 = 5;
/// Tool calls running at once in a concurrency-safe batch.
pub const MAX_PARALLEL_TOOLS: usize = 10;
/// Consecutive stop-hook continuations before the loop ends the turn anyway.
pub const DEFAULT_MAX_STOP_HOOK_CONTINUATIONS: u32 = 5;

/// The message appended after a reply cut at the raised output limit.
pub const RESUME_MESSAGE: &str = "Output token limit hit. Resume directly — no apology, no recap of what you were doing. \
Pick up mid-thought if that is where the cut happened. Break remaining work into smaller pieces.";

/// Who is running the loop (logs, usage attribution, recursion guards).
pub type QuerySource = Arc<str>;

/// Sees each request just before it is sent.
pub type RequestObserver = Arc<dyn Fn(&tine_api_client::MessagesRequest) + Send + Sync>;

/// Decides, after a turn's tools ran, that the loop is done: given the turn's calls and the
/// message of their results.
pub type EndAfterTools = Arc<dyn Fn(&[ToolUseBlock], &Message) -> bool + Send + Sync>;

/// Post-sampling hooks with what their context needs.
#[derive(Clone)]
pub struct PostSampling {
    /// The hooks.
    pub hooks: Arc<PostSamplingHooks>,
    /// The session's id, for their context.
    pub session_id: SessionId,
}

/// Everything fixed for one run of the loop.
#[derive(Clone)]
pub struct QueryParams {
    /// The model client.
    pub client: Arc<dyn ModelClient>,
    /// Model, system prompt, tool definitions, thinking, cache-write policy.
    pub template: RequestTemplate,
    /// The tools behind the definitions (matched by name and alias).
    pub tools: Arc<[Arc<dyn Tool>]>,
    /// The context tool calls run in; its cancellation token cancels the loop.
    pub tool_context: ToolContext,
    /// Judges every tool call.
    pub can_use_tool: Arc<dyn CanUseTool>,
    /// Asks a person when the checker says `Ask`. None: asks become denials (headless, forks).
    pub prompter: Option<Arc<dyn PermissionPrompter>>,
    /// Requests the loop may make before it stops with `MaxTurns` (None: no cap).
    pub max_turns: Option<u32>,
    /// Forces the output limit (and disables escalation). Breaks a fork's cache sharing when
    /// thinking is on, because the thinking budget must shrink under it (seed 000 §5.1).
    pub max_output_tokens: Option<u32>,
    /// Run when the model ends a turn without tool calls.
    pub stop_hooks: Option<Arc<dyn StopHooks>>,
    /// How many times stop hooks may keep the loop going.
    pub max_stop_hook_continuations: u32,
    /// The user's command hooks: PreToolUse and PostToolUse run around every tool call
    /// (the main thread's; forks run none).
    pub hooks: Option<Hooks>,
    /// Compacts the history when it grows too long.
    pub compactor: Option<Arc<dyn Compactor>>,
    /// Hooks run after each reply is sampled.
    pub post_sampling: Option<PostSampling>,
    /// The source the requests are reported under (`repl_main_thread`, a fork's label).
    pub query_source: QuerySource,
    /// Sees every request just before it is sent (cache-break detection, tests).
    pub on_request: Option<RequestObserver>,
    /// The same call failing the same way this many times in a row means the model is stuck
    /// (0: never); see [`crate::RepeatedFailureHandler`].
    pub max_repeated_failures: u32,
    /// Decides about a stuck model (the TUI asks the person). None: the turn stops.
    pub on_repeated_failure: Option<Arc<dyn RepeatedFailureHandler>>,
    /// Ends the loop with `Completed` right after a turn's tool results when it says so,
    /// without asking the model again: a background fork whose last step was its writes
    /// need not pay a request for a reply nobody reads.
    pub end_after_tools: Option<EndAfterTools>,
    /// A fork that writes no cache (`template.skip_cache_write`) and whose history starts with
    /// the messages the parent's last request sent, this many: its breakpoint goes where the
    /// parent's was, so it reads that entry and writes nothing (see
    /// [`RequestTemplate::build_reading`]). None: on the message before the last.
    pub parent_cached_messages: Option<usize>,
}

impl QueryParams {
    /// Parameters with the defaults: allow-all permissions, no hooks, no compactor, no cap.
    pub fn new(
        client: Arc<dyn ModelClient>,
        template: RequestTemplate,
        tools: Arc<[Arc<dyn Tool>]>,
        tool_context: ToolContext,
    ) -> Self {
        Self {
            client,
            template,
            tools,
            tool_context,
            can_use_tool: Arc::new(crate::plug::AllowAll),
            prompter: None,
            max_turns: None,
            max_output_tokens: None,
            stop_hooks: None,
            max_stop_hook_continuations: DEFAULT_MAX_STOP_HOOK_CONTINUATIONS,
            hooks: None,
            compactor: None,
            post_sampling: None,
            query_source: Arc::from("repl_main_thread"),
            on_request: None,
            max_repeated_failures: DEFAULT_MAX_REPEATED_FAILURES,
            on_repeated_failure: None,
            end_after_tools: None,
            parent_cached_messages: None,
        }
    }

    pub(crate) fn find_tool(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools
            .iter()
            .find(|t| t.name() == name)
            .or_else(|| self.tools.iter().find(|t| t.aliases().contains(&name)))
    }
}

/// What changes from one iteration to the next.
#[derive(Debug, Clone)]
pub struct LoopState {
    /// Requests sent so far.
    pub turn: u32,
    /// The output limit of the next request.
    pub max_tokens: u32,
    /// Whether the limit was raised after a cut reply.
    pub escalated: bool,
    /// "Resume directly" recoveries so far.
    pub recovery_attempts: u32,
    /// Times stop hooks kept the loop going.
    pub stop_hook_continuations: u32,
    /// Whether the loop continues because of a stop hook.
    pub stop_hook_active: bool,
    /// Whether a reactive compaction ran (at most once per loop).
    pub reactive_compacted: bool,
    /// Why the loop went round, in order.
    pub transitions: Vec<Transition>,
    /// Identical failing calls in a row (a stuck model).
    pub failures: FailureStreak,
    /// `pause_turn` replies in a row (see [`MAX_PAUSE_TURN_CONTINUATIONS`]).
    pub pause_continuations: u32,
}

/// Runs the loop on `messages` (the history, the new user message last). The stream ends with
/// exactly one [`QueryEvent::Terminal`]. Dropping the stream cancels the loop.
pub fn query(params: QueryParams, messages: Vec<Message>) -> BoxStream<'static, QueryEvent> {
    let (tx, rx) = mpsc::channel(256);
    tokio::spawn(async move {
        let cancel = params.tool_context.cancellation().clone();
        let emitter = Emitter {
            tx,
            cancel: cancel.clone(),
        };
        let terminal = run_loop(&params, messages, &emitter, &cancel).await;
        emitter.send(QueryEvent::Terminal(terminal)).await;
    });
    stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|e| (e, rx)) }).boxed()
}

/// Sends events; a dropped receiver cancels the loop (nobody is listening any more).
#[derive(Clone)]
pub(crate) struct Emitter {
    pub(crate) tx: mpsc::Sender<QueryEvent>,
    cancel: CancellationToken,
}

impl Emitter {
    pub(crate) async fn send(&self, event: QueryEvent) {
        if self.tx.send(event).await.is_err() {
            self.cancel.cancel();
        }
    }
}

async fn run_loop(
    params: &QueryParams,
    mut messages: Vec<Message>,
    emit: &Emitter,
    cancel: &CancellationToken,
) -> Terminal {
    let mut state = LoopState {
        turn: 0,
        max_tokens: params
            .max_output_tokens
            .unwrap_or(DEFAULT_MAX_OUTPUT_TOKENS)
            .min(model_max_output(&params.template.model)),
        escalated: params.max_output_tokens.is_some(),
        recovery_attempts: 0,
        stop_hook_continuations: 0,
        stop_hook_active: false,
        reactive_compacted: false,
        transitions: Vec::new(),
        failures: FailureStreak::default(),
        pause_continuations: 0,
    };
    let template = effective_template(params);
    loop {
        if cancel.is_cancelled() {
            return Terminal::Aborted;
        }
        if let Some(max) = params.max_turns
            && state.turn >= max
        {
            return Terminal::MaxTurns { turns: state.turn };
        }
        if let Some(compactor) = &params.compactor {
            let before = compactor
                .before_request(CompactContext {
                    messages: &messages,
                    template: &template,
                    tool_context: &params.tool_context,
                })
                .await;
            if before.cleared_tool_results > 0 {
                emit.send(QueryEvent::ToolResultsCleared {
                    count: before.cleared_tool_results,
                })
                .await;
            }
            if let Some(compacted) = before.compacted {
                messages = compacted.messages;
                emit.send(QueryEvent::HistoryReplaced {
                    messages: messages.clone(),
                    boundary: compacted.boundary,
                })
                .await;
            } else if let Some(warning) = before.warning {
                emit.send(QueryEvent::ContextWarning(warning)).await;
            }
        }

        state.turn += 1;
        let sent = messages.len();
        // Room for the thinking budget on top of the answer (not part of the cache key).
        let max_tokens = crate::thinking::max_tokens_with(
            template.thinking.as_ref(),
            state.max_tokens,
            DEFAULT_MAX_OUTPUT_TOKENS,
            model_max_output(&template.model),
        );
        let request = template.build_reading(&messages, max_tokens, params.parent_cached_messages);
        if let Some(observer) = &params.on_request {
            observer(&request);
        }
        emit.send(QueryEvent::RequestStart {
            turn: state.turn,
            max_tokens,
        })
        .await;

        let reply = match stream_reply(params, request, emit, cancel).await {
            Streamed::Aborted => return Terminal::Aborted,
            Streamed::Failed(error) => {
                if let Some((tokens, maximum)) = too_long(&error) {
                    if !state.reactive_compacted
                        && let Some(compactor) = &params.compactor
                        && let Some(compacted) = compactor
                            .on_prompt_too_long(CompactContext {
                                messages: &messages,
                                template: &template,
                                tool_context: &params.tool_context,
                            })
                            .await
                    {
                        state.reactive_compacted = true;
                        messages = compacted.messages;
                        emit.send(QueryEvent::HistoryReplaced {
                            messages: messages.clone(),
                            boundary: compacted.boundary,
                        })
                        .await;
                        record(&mut state, emit, compacted.transition).await;
                        continue;
                    }
                    return Terminal::PromptTooLong { tokens, maximum };
                }
                if matches!(error, ApiError::InvalidToolInput { .. })
                    && let Some(to) = escalation(params, &state)
                {
                    // A tool call cut mid-input: the reply ran out of room.
                    let from = state.max_tokens;
                    state.escalated = true;
                    state.max_tokens = to;
                    record(
                        &mut state,
                        emit,
                        Transition::MaxOutputTokensEscalation { from, to },
                    )
                    .await;
                    continue;
                }
                return Terminal::ModelError {
                    message: error.to_string(),
                };
            }
            Streamed::Done(reply) => reply,
        };
        if let Some(compactor) = &params.compactor {
            compactor.on_response(&reply.usage, sent);
        }
        emit.send(QueryEvent::Usage {
            usage: reply.usage,
            model: reply.model.clone(),
        })
        .await;

        if reply.stop_reason == Some(StopReason::MaxTokens) {
            if let Some(to) = escalation(params, &state) {
                let from = state.max_tokens;
                state.escalated = true;
                state.max_tokens = to;
                // The cut reply is dropped; the same request goes again with more room.
                record(
                    &mut state,
                    emit,
                    Transition::MaxOutputTokensEscalation { from, to },
                )
                .await;
                continue;
            }
            // Keep what was said, but never half a tool call.
            let kept: Vec<ContentBlock> = reply
                .content
                .iter()
                .filter(|b| !matches!(b, ContentBlock::ToolUse(_)))
                .cloned()
                .collect();
            if !kept.is_empty() {
                let message = Message::assistant(kept);
                messages.push(message.clone());
                emit_assistant(emit, message, &reply).await;
            }
            if state.recovery_attempts >= MAX_OUTPUT_RECOVERY_ATTEMPTS {
                return Terminal::ModelError {
                    message: format!(
                        "the reply was cut at max_tokens ({}) {} times in a row; ask for smaller steps",
                        state.max_tokens,
                        state.recovery_attempts + 1
                    ),
                };
            }
            state.recovery_attempts += 1;
            let nudge = Message::user(vec![ContentBlock::text(RESUME_MESSAGE)]);
            messages.push(nudge.clone());
            emit.send(QueryEvent::UserMessage { message: nudge }).await;
            let attempt = state.recovery_attempts;
            record(
                &mut state,
                emit,
                Transition::MaxOutputTokensRecovery { attempt },
            )
            .await;
            continue;
        }

        let uses: Vec<ToolUseBlock> = reply.tool_uses().cloned().collect();
        if !reply.content.is_empty() {
            let message = reply.to_message();
            messages.push(message.clone());
            emit_assistant(emit, message, &reply).await;
        }
        if let Some(post) = &params.post_sampling {
            post.hooks.spawn(PostSamplingContext {
                session_id: post.session_id.clone(),
                cwd: params.tool_context.cwd(),
                messages: Arc::from(messages.clone()),
                system_prompt: Arc::from(system_text(&template)),
                model: Arc::from(template.model.as_str()),
            });
        }

        if uses.is_empty() && reply.stop_reason == Some(StopReason::PauseTurn) {
            if state.pause_continuations >= MAX_PAUSE_TURN_CONTINUATIONS {
                return Terminal::ModelError {
                    message: format!(
                        "the API paused this turn {} times in a row (stop_reason pause_turn, a \
                         server tool such as WebSearch still running); stopped after {} \
                         continuations. The answer so far is kept: send another message to go \
                         on, or ask for a narrower search",
                        state.pause_continuations + 1,
                        MAX_PAUSE_TURN_CONTINUATIONS
                    ),
                };
            }
            state.pause_continuations += 1;
            // The reply is the last message: the next request continues it.
            record(&mut state, emit, Transition::PauseTurn).await;
            continue;
        }
        state.pause_continuations = 0;
        if uses.is_empty() {
            let Some(hooks) = &params.stop_hooks else {
                return Terminal::Completed;
            };
            let outcome = hooks
                .on_stop(StopContext {
                    messages: &messages,
                    template: &template,
                    stop_hook_active: state.stop_hook_active,
                })
                .await;
            match outcome {
                StopHookOutcome::Continue => return Terminal::Completed,
                StopHookOutcome::Halt { reason } => {
                    return Terminal::StopHookPrevented { reason };
                }
                StopHookOutcome::Block { reason } => {
                    if state.stop_hook_continuations >= params.max_stop_hook_continuations {
                        tracing::warn!(
                            continuations = state.stop_hook_continuations,
                            "stop hooks keep blocking; ending the turn anyway"
                        );
                        return Terminal::Completed;
                    }
                    state.stop_hook_continuations += 1;
                    state.stop_hook_active = true;
                    let message = Message::user(vec![ContentBlock::text(format!(
                        "Stop hook feedback:\n{reason}"
                    ))]);
                    messages.push(message.clone());
                    emit.send(QueryEvent::UserMessage { message }).await;
                    record(&mut state, emit, Transition::StopHook { reason }).await;
                    continue;
                }
            }
        }

        let turn = turn_in_progress(params, &template, &messages);
        let round = run_tool_calls(
            params,
            turn.as_ref(),
            &uses,
            &mut state.failures,
            emit,
            cancel,
        )
        .await;
        let message = Message::user(round.results);
        messages.push(message.clone());
        emit.send(QueryEvent::UserMessage { message }).await;
        if cancel.is_cancelled() {
            return Terminal::Aborted;
        }
        if let Some(reason) = round.stop {
            // A tool hook's `"continue": false`: the turn ends here, as a stop hook's would.
            return Terminal::StopHookPrevented { reason };
        }
        if let Some(failure) = state.failures.reached(params.max_repeated_failures) {
            let decision = match &params.on_repeated_failure {
                Some(handler) => handler.on_repeated_failure(failure).await,
                None => StuckDecision::Stop,
            };
            // Interrupted while the person was asked: the turn was stopped, not given up on.
            if cancel.is_cancelled() {
                return Terminal::Aborted;
            }
            match decision {
                StuckDecision::Stop => {
                    tracing::warn!(tool = %failure.tool, repeats = failure.repeats, "the model is stuck; stopping the turn");
                    return Terminal::RepeatedToolFailure {
                        tool: failure.tool.clone(),
                        error: failure.error_excerpt(),
                        repeats: failure.repeats,
                    };
                }
                StuckDecision::KeepGoing => state.failures.reset(),
            }
        }
        if let Some(end) = &params.end_after_tools
            && messages.last().is_some_and(|results| end(&uses, results))
        {
            return Terminal::Completed;
        }
        state.stop_hook_active = false;
        let tools = uses.iter().map(|u| u.name.clone()).collect();
        record(&mut state, emit, Transition::ToolUse { tools }).await;
    }
}

async fn record(state: &mut LoopState, emit: &Emitter, transition: Transition) {
    tracing::debug!(transition = %transition.label(), "loop continues");
    state.transitions.push(transition.clone());
    emit.send(QueryEvent::Transition(transition)).await;
}

async fn emit_assistant(emit: &Emitter, message: Message, reply: &ResponseMessage) {
    emit.send(QueryEvent::AssistantMessage {
        message,
        stop_reason: reply.stop_reason.clone(),
        usage: reply.usage,
        model: reply.model.clone(),
    })
    .await;
}

/// The raised limit to retry a cut reply with, if escalation is still open.
fn escalation(params: &QueryParams, state: &LoopState) -> Option<u32> {
    if state.escalated || params.max_output_tokens.is_some() {
        return None;
    }
    let to = ESCALATED_MAX_OUTPUT_TOKENS.min(model_max_output(&params.template.model));
    (to > state.max_tokens).then_some(to)
}

fn model_max_output(model: &str) -> u32 {
    let info = model_info(model);
    u32::try_from(info.max_output_tokens)
        .unwrap_or(u32::MAX)
        .max(1)
}

/// The template as the loop sends it: a forced output limit shrinks the thinking budget under
/// it (which changes the cache key: only forks that do not share the cache may do it).
fn effective_template(params: &QueryParams) -> RequestTemplate {
    let mut template = params.template.clone();
    template.thinking =
        crate::thinking::fit_to_model(template.thinking, model_max_output(&template.model));
    if let Some(limit) = params.max_output_tokens {
        template.thinking = crate::thinking::fit_to_limit(template.thinking, limit);
    }
    template
}

fn system_text(template: &RequestTemplate) -> String {
    match &*template.system {
        tine_api_client::SystemPrompt::Text(t) => t.clone(),
        tine_api_client::SystemPrompt::Blocks(blocks) => blocks
            .iter()
            .map(|b| b.text.as_str())
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

fn too_long(error: &ApiError) -> Option<(Option<u64>, Option<u64>)> {
    if let Some((tokens, maximum)) = error.prompt_too_long() {
        return Some((Some(tokens), Some(maximum)));
    }
    if let Some((input, _output, limit)) = error.context_limit_exceeded() {
        return Some((Some(input), Some(limit)));
    }
    // 413, or an OpenAI-compatible server's "context length exceeded" without figures.
    if error.status() == Some(413) || error.is_context_length_exceeded() {
        return Some((None, None));
    }
    None
}

enum Streamed {
    Done(ResponseMessage),
    Failed(ApiError),
    Aborted,
}

/// Streams one reply, forwarding deltas, and returns the complete message.
async fn stream_reply(
    params: &QueryParams,
    request: tine_api_client::MessagesRequest,
    emit: &Emitter,
    cancel: &CancellationToken,
) -> Streamed {
    let mut events = params.client.stream(request);
    let mut accumulator = MessageAccumulator::new();
    loop {
        let item = tokio::select! {
            biased;
            _ = cancel.cancelled() => return Streamed::Aborted,
            item = events.next() => item,
        };
        match item {
            None => break,
            Some(Err(error)) => return Streamed::Failed(error),
            Some(Ok(ClientEvent::Retry(notice))) => {
                accumulator.reset();
                emit.send(QueryEvent::Retry(notice)).await;
            }
            Some(Ok(ClientEvent::Stream(event))) => {
                match &event {
                    StreamEvent::ContentBlockStart { content_block, .. } => {
                        if let ContentBlock::ToolUse(t) = content_block {
                            emit.send(QueryEvent::ToolUseStart {
                                id: t.id.clone(),
                                name: t.name.clone(),
                            })
                            .await;
                        }
                    }
                    StreamEvent::ContentBlockDelta { delta, .. } => match delta {
                        ContentDelta::TextDelta { text } => {
                            emit.send(QueryEvent::TextDelta { text: text.clone() })
                                .await;
                        }
                        ContentDelta::ThinkingDelta { thinking } => {
                            emit.send(QueryEvent::ThinkingDelta {
                                text: thinking.clone(),
                            })
                            .await;
                        }
                        ContentDelta::InputJsonDelta { .. }
                        | ContentDelta::SignatureDelta { .. } => {}
                    },
                    // The accumulator assembles these; nothing to tell the host early.
                    StreamEvent::MessageStart { .. }
                    | StreamEvent::ContentBlockStop { .. }
                    | StreamEvent::MessageDelta { .. }
                    | StreamEvent::MessageStop
                    | StreamEvent::Ping
                    | StreamEvent::Error { .. } => {}
                }
                if let Err(error) = accumulator.push(&event) {
                    return Streamed::Failed(error);
                }
            }
        }
    }
    match accumulator.finish() {
        Ok(message) => Streamed::Done(message),
        Err(error) => Streamed::Failed(error),
    }
}

/// The text of a message's text blocks (or its string content).
pub fn message_text(message: &Message) -> String {
    match &message.content {
        MessageContent::Text(t) => t.clone(),
        MessageContent::Blocks(blocks) => blocks
            .iter()
            .filter_map(|b| match b {
                ContentBlock::Text(t) => Some(t.text.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join(""),
    }
}
