//! `query()`: the agent loop of seed 003 §三 as a stream of [`QueryEvent`]s ending in a
//! [`Terminal`]. Immutable [`QueryParams`] for the whole loop, a mutable [`LoopState`] per
//! iteration, and a [`Transition`] recorded every time it goes round again.
//!
//! One iteration is a chain of branches, each its own method of `LoopRun` returning a `Step`
//! (go round again for a [`Transition`], or end with a [`Terminal`]): the turn cap; micro /
//! auto compaction before the request; the request and its streamed reply; on a failed request
//! reactive compaction or escalation of the output limit; on `max_tokens` escalation or a
//! "resume directly" nudge; `pause_turn` continued as it is; with no tool calls, the stop hooks
//! decide whether the turn really ends; else the tool calls run (see `tool_calls`), and the
//! stuck-model check and `end_after_tools` may end the loop after them.

use std::sync::Arc;

use futures::stream::{self, BoxStream, StreamExt};
use tine_api_client::{
    ApiError, ContentBlock, Message, MessageContent, ResponseMessage, StopReason, ToolUseBlock,
};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::events::{Emitter, QueryEvent};
use crate::hooks::PostSamplingContext;
use crate::params::{QueryParams, model_max_output};
use crate::plug::{CompactContext, StopContext, StopHookOutcome};
use crate::reply::{Streamed, stream_reply};
use crate::request::RequestTemplate;
use crate::stuck::{FailureStreak, StuckDecision};
use crate::tool_calls::{run_tool_calls, turn_in_progress};
use crate::transcript::CompactBoundary;
use crate::transition::{Terminal, Transition};

/// The output limit of a first attempt (Claude Code's capped default).
pub(crate) const DEFAULT_MAX_OUTPUT_TOKENS: u32 = 8_000;
/// The limit a reply cut at the default is retried with, once.
pub(crate) const ESCALATED_MAX_OUTPUT_TOKENS: u32 = 64_000;
/// "Resume directly" nudges after the escalated limit is hit too.
pub(crate) const MAX_OUTPUT_RECOVERY_ATTEMPTS: u32 = 3;

/// `pause_turn` replies in a row the loop continues before it ends the turn with an error: a
/// server tool (web search) that keeps pausing would otherwise be paid for without end. The
/// API pauses a server-tool loop after about 10 of its own iterations, so 5 continuations
/// allow some 50 searches in one answer; Claude Code documents no number.
pub(crate) const MAX_PAUSE_TURN_CONTINUATIONS: u32 = 5;

/// The message appended after a reply cut at the raised output limit.
pub(crate) const RESUME_MESSAGE: &str = "Output token limit hit. Resume directly — no apology, no recap of what you were doing. \
Pick up mid-thought if that is where the cut happened. Break remaining work into smaller pieces.";

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
    /// `pause_turn` replies in a row (the loop continues at most 5, then ends the turn).
    pub pause_continuations: u32,
    /// What this run's requests cost so far, in US dollars (for `--max-budget-usd`).
    pub cost_usd: f64,
}

/// Runs the loop on `messages` (the history, the new user message last). The stream ends with
/// exactly one [`QueryEvent::Terminal`]. Dropping the stream cancels the loop.
pub fn query(params: QueryParams, messages: Vec<Message>) -> BoxStream<'static, QueryEvent> {
    let (tx, rx) = mpsc::channel(256);
    tokio::spawn(async move {
        let cancel = params.tool_context.cancellation().clone();
        let emitter = Emitter::new(tx, cancel.clone());
        let terminal = run_loop(&params, messages, &emitter, &cancel).await;
        emitter.send(QueryEvent::Terminal(terminal)).await;
    });
    stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|e| (e, rx)) }).boxed()
}

/// What a branch of an iteration decided.
enum Step {
    /// Go round again, for this reason (recorded, and told to the host).
    Continue(Transition),
    /// The loop is over.
    Terminal(Terminal),
}

async fn run_loop(
    params: &QueryParams,
    messages: Vec<Message>,
    emit: &Emitter,
    cancel: &CancellationToken,
) -> Terminal {
    let mut run = LoopRun::new(params, messages, emit, cancel);
    loop {
        match run.iteration().await {
            Step::Continue(transition) => run.record(transition).await,
            Step::Terminal(terminal) => return terminal,
        }
    }
}

/// One run of the loop: its fixed parameters, the history as it grows, and the state that
/// changes from one iteration to the next.
struct LoopRun<'a> {
    params: &'a QueryParams,
    /// What every request is built from ([`QueryParams::effective_template`]).
    template: RequestTemplate,
    messages: Vec<Message>,
    state: LoopState,
    emit: &'a Emitter,
    cancel: &'a CancellationToken,
    /// The prompt the loop started with and where the turn starts in `messages`: compaction
    /// keeps it whole.
    prompt: Option<(Message, usize)>,
    /// The compactor's estimate of the next request's prompt (tokens), for its `max_tokens`.
    prompt_tokens: Option<u64>,
    /// The last request asked for less than the loop's limit because the window had no more
    /// room: raising the limit would send the same request again.
    window_bound: bool,
}

impl<'a> LoopRun<'a> {
    fn new(
        params: &'a QueryParams,
        messages: Vec<Message>,
        emit: &'a Emitter,
        cancel: &'a CancellationToken,
    ) -> Self {
        let state = LoopState {
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
            cost_usd: 0.0,
        };
        let prompt = messages
            .last()
            .filter(|m| m.role == tine_api_client::Role::User)
            .map(|m| (m.clone(), messages.len() - 1));
        Self {
            params,
            template: params.effective_template(),
            messages,
            state,
            emit,
            cancel,
            prompt,
            prompt_tokens: None,
            window_bound: false,
        }
    }

    /// One request and what follows from its reply.
    async fn iteration(&mut self) -> Step {
        if let Some(terminal) = self.stopped_before_request() {
            return Step::Terminal(terminal);
        }
        if let Some(terminal) = self.compact_before_request().await {
            return Step::Terminal(terminal);
        }
        let sent = self.messages.len();
        let reply = match self.request().await {
            Streamed::Done(reply) => reply,
            Streamed::Failed(error) => return self.on_request_failed(error).await,
            Streamed::Aborted => return Step::Terminal(Terminal::Aborted),
        };
        if let Some(compactor) = &self.params.compactor {
            compactor.on_response(&reply.usage, sent);
        }
        self.state.cost_usd += tine_api_client::cost_usd(&reply.model, &reply.usage);
        self.emit
            .send(QueryEvent::Usage {
                usage: reply.usage,
                model: reply.model.clone(),
            })
            .await;
        if reply.stop_reason == Some(StopReason::MaxTokens) {
            return self.on_max_tokens(&reply).await;
        }
        let uses = self.append_reply(&reply).await;
        if uses.is_empty() && reply.stop_reason == Some(StopReason::PauseTurn) {
            return self.on_pause_turn();
        }
        self.state.pause_continuations = 0;
        if uses.is_empty() {
            return self.on_end_of_turn().await;
        }
        self.on_tool_calls(&uses).await
    }

    /// Cancelled, the turn cap reached or the budget spent: no more requests.
    fn stopped_before_request(&self) -> Option<Terminal> {
        if self.cancel.is_cancelled() {
            return Some(Terminal::Aborted);
        }
        match self.params.max_turns {
            Some(max) if self.state.turn >= max => Some(Terminal::MaxTurns {
                turns: self.state.turn,
            }),
            _ => self
                .params
                .budget
                .as_ref()
                .and_then(|budget| budget.exceeded(self.state.cost_usd)),
        }
    }

    /// Micro / auto compaction: old tool results cleared, the history summarized, or a
    /// warning that it is getting long; the end of the loop when the request cannot fit.
    async fn compact_before_request(&mut self) -> Option<Terminal> {
        let compactor = self.params.compactor.as_ref()?;
        let before = compactor.before_request(self.compact_context()).await;
        if before.blocking.is_some() {
            return before.blocking;
        }
        if before.cleared_tool_results > 0 {
            self.emit
                .send(QueryEvent::ToolResultsCleared {
                    count: before.cleared_tool_results,
                })
                .await;
        }
        if let Some(compacted) = before.compacted {
            self.replace_history(compacted.messages, compacted.boundary)
                .await;
        } else if let Some(warning) = before.warning {
            self.emit.send(QueryEvent::ContextWarning(warning)).await;
        }
        self.prompt_tokens = before.prompt_tokens;
        None
    }

    /// Builds and sends the next request, and streams its reply.
    async fn request(&mut self) -> Streamed {
        self.state.turn += 1;
        // Room for the thinking budget on top of the answer (not part of the cache key).
        let max_tokens = crate::thinking::max_tokens_with(
            self.template.thinking.as_ref(),
            self.state.max_tokens,
            DEFAULT_MAX_OUTPUT_TOKENS,
            model_max_output(&self.template.model),
        );
        let mut request = self.template.build_reading(
            &self.messages,
            max_tokens,
            self.params.parent_cached_messages,
        );
        // No more output than the window leaves after the prompt (a small local window).
        let window = self.params.client.context_window(&self.template.model);
        let prompt = self
            .prompt_tokens
            .take()
            .unwrap_or_else(|| tine_api_client::estimate_tokens(request.to_json_bytes().len()));
        let wanted = max_tokens;
        let (max_tokens, short) =
            crate::reply_room::fit(wanted, self.template.thinking.as_ref(), prompt, window);
        self.window_bound = max_tokens < wanted;
        request.max_tokens = max_tokens;
        if let Some(room) = short {
            let warning = crate::plug::ContextWarning {
                tokens: prompt,
                effective_window: window,
                auto_compact_at: None,
                reply_room: Some(room),
            };
            tracing::warn!(%warning, "the window leaves the reply less than its floor");
            self.emit.send(QueryEvent::ContextWarning(warning)).await;
        }
        if let Some(observer) = &self.params.on_request {
            observer(&request);
        }
        self.emit
            .send(QueryEvent::RequestStart {
                turn: self.state.turn,
                max_tokens,
            })
            .await;
        stream_reply(self.params, request, self.emit, self.cancel).await
    }

    /// A failed request: a prompt too long is compacted once and sent again; a tool call cut
    /// mid-input means the reply ran out of room, so the limit is raised; anything else ends
    /// the loop.
    async fn on_request_failed(&mut self, error: ApiError) -> Step {
        if let Some((tokens, maximum)) = too_long(&error) {
            return match self.reactive_compact().await {
                Some(transition) => Step::Continue(transition),
                None => Step::Terminal(Terminal::PromptTooLong { tokens, maximum }),
            };
        }
        if matches!(error, ApiError::InvalidToolInput { .. })
            && let Some(escalation) = self.escalate()
        {
            return Step::Continue(escalation);
        }
        Step::Terminal(Terminal::ModelError {
            message: error.to_string(),
        })
    }

    /// Reactive compaction, at most once per loop; `None` when it is spent or has nothing.
    async fn reactive_compact(&mut self) -> Option<Transition> {
        if self.state.reactive_compacted {
            return None;
        }
        let compactor = self.params.compactor.as_ref()?;
        let compacted = compactor.on_prompt_too_long(self.compact_context()).await?;
        self.state.reactive_compacted = true;
        self.replace_history(compacted.messages, compacted.boundary)
            .await;
        Some(compacted.transition)
    }

    /// A reply cut at `max_tokens`: the same request again with the raised limit (the cut reply
    /// dropped), else what was said is kept and the model is told to resume, a few times.
    async fn on_max_tokens(&mut self, reply: &ResponseMessage) -> Step {
        if let Some(escalation) = self.escalate() {
            return Step::Continue(escalation);
        }
        // Keep what was said, but never half a tool call.
        let kept: Vec<ContentBlock> = reply
            .content
            .iter()
            .filter(|b| !matches!(b, ContentBlock::ToolUse(_)))
            .cloned()
            .collect();
        if !kept.is_empty() {
            self.append_assistant(Message::assistant(kept), reply).await;
        }
        if self.state.recovery_attempts >= MAX_OUTPUT_RECOVERY_ATTEMPTS {
            return Step::Terminal(Terminal::ModelError {
                message: format!(
                    "the reply was cut at max_tokens ({}) {} times in a row; ask for smaller steps",
                    self.state.max_tokens,
                    self.state.recovery_attempts + 1
                ),
            });
        }
        self.state.recovery_attempts += 1;
        self.append_user(Message::user(vec![ContentBlock::text(RESUME_MESSAGE)]))
            .await;
        Step::Continue(Transition::MaxOutputTokensRecovery {
            attempt: self.state.recovery_attempts,
        })
    }

    /// Raises the output limit for the next request, if escalation is still open.
    fn escalate(&mut self) -> Option<Transition> {
        if self.state.escalated || self.params.max_output_tokens.is_some() || self.window_bound {
            return None;
        }
        let to = ESCALATED_MAX_OUTPUT_TOKENS.min(model_max_output(&self.params.template.model));
        if to <= self.state.max_tokens {
            return None;
        }
        let from = self.state.max_tokens;
        self.state.escalated = true;
        self.state.max_tokens = to;
        Some(Transition::MaxOutputTokensEscalation { from, to })
    }

    /// Appends a complete reply to the history and starts the post-sampling hooks; the reply's
    /// tool calls.
    async fn append_reply(&mut self, reply: &ResponseMessage) -> Vec<ToolUseBlock> {
        let uses = reply.tool_uses().cloned().collect();
        if !reply.content.is_empty() {
            self.append_assistant(reply.to_message(), reply).await;
        }
        if let Some(post) = &self.params.post_sampling {
            post.hooks.spawn(PostSamplingContext {
                session_id: post.session_id.clone(),
                cwd: self.params.tool_context.cwd(),
                messages: Arc::from(self.messages.clone()),
                system_prompt: Arc::from(system_text(&self.template)),
                model: Arc::from(self.template.model.as_str()),
            });
        }
        uses
    }

    /// The API paused a long turn (server tools): the reply, the last message, is sent back as
    /// it is so the model carries on; a few times in a row at most.
    fn on_pause_turn(&mut self) -> Step {
        if self.state.pause_continuations >= MAX_PAUSE_TURN_CONTINUATIONS {
            return Step::Terminal(Terminal::ModelError {
                message: format!(
                    "the API paused this turn {} times in a row (stop_reason pause_turn, a \
                     server tool such as WebSearch still running); stopped after {} \
                     continuations. The answer so far is kept: send another message to go \
                     on, or ask for a narrower search",
                    self.state.pause_continuations + 1,
                    MAX_PAUSE_TURN_CONTINUATIONS
                ),
            });
        }
        self.state.pause_continuations += 1;
        Step::Continue(Transition::PauseTurn)
    }

    /// The model ended its turn without tool calls: the stop hooks decide whether it ends.
    async fn on_end_of_turn(&mut self) -> Step {
        let Some(hooks) = &self.params.stop_hooks else {
            return Step::Terminal(Terminal::Completed);
        };
        let outcome = hooks
            .on_stop(StopContext {
                messages: &self.messages,
                template: &self.template,
                stop_hook_active: self.state.stop_hook_active,
            })
            .await;
        match outcome {
            StopHookOutcome::Continue => Step::Terminal(Terminal::Completed),
            StopHookOutcome::Halt { reason } => {
                Step::Terminal(Terminal::StopHookPrevented { reason })
            }
            StopHookOutcome::Block { reason } => self.on_stop_hook_block(reason).await,
        }
    }

    /// A stop hook blocked the end of the turn: the model reads its reason and goes on, up to
    /// `max_stop_hook_continuations` times.
    async fn on_stop_hook_block(&mut self, reason: String) -> Step {
        if self.state.stop_hook_continuations >= self.params.max_stop_hook_continuations {
            tracing::warn!(
                continuations = self.state.stop_hook_continuations,
                "stop hooks keep blocking; ending the turn anyway"
            );
            return Step::Terminal(Terminal::Completed);
        }
        self.state.stop_hook_continuations += 1;
        self.state.stop_hook_active = true;
        let feedback = format!("Stop hook feedback:\n{reason}");
        self.append_user(Message::user(vec![ContentBlock::text(feedback)]))
            .await;
        Step::Continue(Transition::StopHook { reason })
    }

    /// Runs the reply's tool calls and appends their results; the loop goes on unless it was
    /// cancelled, a hook stopped it, the model is stuck, or `end_after_tools` says it is done.
    async fn on_tool_calls(&mut self, uses: &[ToolUseBlock]) -> Step {
        let turn = turn_in_progress(self.params, &self.template, &self.messages);
        let round = run_tool_calls(
            self.params,
            turn.as_ref(),
            &self.messages,
            uses,
            &mut self.state.failures,
            self.emit,
            self.cancel,
        )
        .await;
        self.append_user(Message::user(round.results)).await;
        if self.cancel.is_cancelled() {
            return Step::Terminal(Terminal::Aborted);
        }
        if let Some(reason) = round.stop {
            // A tool hook's `"continue": false`: the turn ends here, as a stop hook's would.
            return Step::Terminal(Terminal::StopHookPrevented { reason });
        }
        if let Some(terminal) = self.on_repeated_failure().await {
            return Step::Terminal(terminal);
        }
        if let Some(end) = &self.params.end_after_tools
            && self
                .messages
                .last()
                .is_some_and(|results| end(uses, results))
        {
            return Step::Terminal(Terminal::Completed);
        }
        self.state.stop_hook_active = false;
        let tools = uses.iter().map(|u| u.name.clone()).collect();
        Step::Continue(Transition::ToolUse { tools })
    }

    /// The same call failing the same way too often: the handler (or, without one, the loop)
    /// decides whether the turn stops.
    async fn on_repeated_failure(&mut self) -> Option<Terminal> {
        let failure = self
            .state
            .failures
            .reached(self.params.max_repeated_failures)?;
        let decision = match &self.params.on_repeated_failure {
            Some(handler) => handler.on_repeated_failure(failure).await,
            None => StuckDecision::Stop,
        };
        // Interrupted while the person was asked: the turn was stopped, not given up on.
        if self.cancel.is_cancelled() {
            return Some(Terminal::Aborted);
        }
        match decision {
            StuckDecision::Stop => {
                tracing::warn!(tool = %failure.tool, repeats = failure.repeats, "the model is stuck; stopping the turn");
                Some(Terminal::RepeatedToolFailure {
                    tool: failure.tool.clone(),
                    error: failure.error_excerpt(),
                    repeats: failure.repeats,
                })
            }
            StuckDecision::KeepGoing => {
                self.state.failures.reset();
                None
            }
        }
    }

    fn compact_context(&self) -> CompactContext<'_> {
        CompactContext {
            messages: &self.messages,
            template: &self.template,
            tool_context: &self.params.tool_context,
            current_prompt: self.prompt.as_ref().map(|(message, index)| {
                crate::plug::CurrentPrompt {
                    message,
                    index: *index,
                }
            }),
        }
    }

    /// The compactor's history replaces the loop's; the host replaces its copy too.
    async fn replace_history(&mut self, messages: Vec<Message>, boundary: CompactBoundary) {
        self.messages = messages;
        // The compactor put the prompt into the new first message.
        if let Some((_, index)) = &mut self.prompt {
            *index = 0;
        }
        self.prompt_tokens = None;
        self.emit
            .send(QueryEvent::HistoryReplaced {
                messages: self.messages.clone(),
                boundary,
            })
            .await;
    }

    async fn append_assistant(&mut self, message: Message, reply: &ResponseMessage) {
        self.messages.push(message.clone());
        self.emit
            .send(QueryEvent::AssistantMessage {
                message,
                uuid: uuid::Uuid::new_v4().to_string(),
                id: reply.id.clone(),
                stop_reason: reply.stop_reason.clone(),
                usage: reply.usage,
                model: reply.model.clone(),
            })
            .await;
    }

    async fn append_user(&mut self, message: Message) {
        self.messages.push(message.clone());
        let uuid = uuid::Uuid::new_v4().to_string();
        self.emit
            .send(QueryEvent::UserMessage { message, uuid })
            .await;
    }

    async fn record(&mut self, transition: Transition) {
        tracing::debug!(transition = %transition.label(), "loop continues");
        self.state.transitions.push(transition.clone());
        self.emit.send(QueryEvent::Transition(transition)).await;
    }
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
