//! [`SessionCompactor`]: the loop's `Compactor` for one main-thread session. Before each
//! request it clears old tool results when the cache has gone cold, compacts when the context
//! crossed the threshold (a circuit breaker stops it after repeated failures), and warns when
//! it is close; on "prompt is too long" it compacts once; `/compact` compacts now.
//!
//! A compaction: PreCompact hooks, then the summary fork and memory's `before_compaction`
//! side by side on the same cache-safe params (so nothing the summary drops is lost to
//! memory), then the new history — the user context, the summary as a user message saying the
//! session continues from an earlier conversation, the re-attached files, todos and running
//! shells, what PostCompact hooks add, then the current turn's prompt as it was written (see
//! `plan`: it is never summarized) — and the boundary record describing what went. A history
//! that would not be smaller is not used; a request that cannot fit the window even so ends
//! the loop with `Terminal::BlockingLimit`, which says what helps.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use tine_api_client::{ContentBlock, Message, Usage};
use tine_config::transcript_path;
use tine_fork_runtime::{CacheSafeParams, JobContext, JobError, JobOutcome, ParentContext};
use tine_query_loop::hooks::Hooks;
use tine_query_loop::lock_replacements as lock;
use tine_query_loop::{
    BeforeRequest, CompactBoundary, CompactContext, CompactError, CompactTrigger, Compacted,
    Compactor, ContextWarning, Terminal, Transition,
};

use crate::config::{CompactionConfig, Thresholds};
use crate::dropped::dropped_context;
use crate::error::CompactionError;
use crate::estimate::{UsageMark, context_tokens, messages_tokens, template_tokens};
use crate::micro::clear_old_tool_results;
use crate::plan::{Plan, prompt_blocks};
use crate::prompt::{Follows, continuation_message};
use crate::reattach::reattach;
use crate::summary::summarize;

/// Memory's hook: given the context of the history about to be replaced, extract from it
/// (`ExtractionJob::before_compaction`; the cli wires it, compaction does not know memory).
pub type BeforeCompaction =
    Arc<dyn Fn(JobContext) -> BoxFuture<'static, Result<JobOutcome, JobError>> + Send + Sync>;

/// Where the idle gap is measured.
pub trait Clock: Send + Sync {
    /// Now, as this clock sees it.
    fn now(&self) -> Instant;
}

/// The monotonic clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Instant {
        Instant::now()
    }
}

/// A clock that moves only when told (tests, benchmarks).
#[derive(Debug, Clone)]
pub struct ManualClock {
    start: Instant,
    offset: Arc<Mutex<Duration>>,
}

impl Default for ManualClock {
    fn default() -> Self {
        Self {
            start: Instant::now(),
            offset: Arc::default(),
        }
    }
}

impl ManualClock {
    /// Moves the clock forward by `by`.
    pub fn advance(&self, by: Duration) {
        *self.offset.lock().unwrap_or_else(PoisonError::into_inner) += by;
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Instant {
        self.start + *self.offset.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// One compaction, as the host and benchmarks see it.
#[derive(Debug, Clone)]
pub struct CompactionReport {
    /// The boundary written to the transcript (what was dropped, the token figures).
    pub boundary: CompactBoundary,
    /// The summary request's usage.
    pub summary_usage: Option<Usage>,
    /// The prompt of the parent's last request before the compaction: its cached prefix.
    pub parent_prompt_tokens: Option<u64>,
    /// Recent files too big to re-attach, named by a reference instead.
    pub files_referenced: Vec<String>,
}

impl CompactionReport {
    /// How much of the parent's cached prefix the summary request read from the cache.
    pub fn cache_read_share(&self) -> Option<f64> {
        let parent = self.parent_prompt_tokens.filter(|p| *p > 0)?;
        let read = self.summary_usage?.cache_read_input_tokens;
        Some(read as f64 / parent as f64)
    }

    /// One line for people.
    pub fn describe(&self) -> String {
        let b = &self.boundary;
        let mut text = format!(
            "Compacted the conversation ({}): {} messages, about {} tokens, became a summary of \
             about {} tokens",
            b.trigger, b.messages_summarized, b.tokens_before, b.tokens_after
        );
        if !b.files_reattached.is_empty() {
            text.push_str(&format!("; re-attached {}", b.files_reattached.join(", ")));
        }
        text.push_str(". `tine compact log` shows what was dropped.");
        text
    }
}

#[derive(Default)]
struct State {
    mark: Option<UsageMark>,
    consecutive_failures: u32,
    auto_off: bool,
    reports: Vec<CompactionReport>,
}

/// The compactor of one main-thread session.
pub struct SessionCompactor {
    parent: Arc<ParentContext>,
    config: CompactionConfig,
    user_context: Option<Arc<str>>,
    hooks: Option<Hooks>,
    before_compaction: Option<BeforeCompaction>,
    clock: Arc<dyn Clock>,
    state: Mutex<State>,
}

impl SessionCompactor {
    /// `parent` is the session's fork parent (client, tools, session, ledger); each compaction
    /// runs with the loop's tool context instead of its own, so the turn's cancellation stops it.
    pub fn new(parent: Arc<ParentContext>, config: CompactionConfig) -> Self {
        Self {
            parent,
            config,
            user_context: None,
            hooks: None,
            before_compaction: None,
            clock: Arc::new(SystemClock),
            state: Mutex::new(State::default()),
        }
    }

    /// The session's user context (instruction files, environment): the first message held
    /// it, so the new history starts with it again.
    pub fn with_user_context(mut self, user_context: Option<Arc<str>>) -> Self {
        self.user_context = user_context;
        self
    }

    /// With the session's hooks: their PreCompact and PostCompact commands run around each
    /// compaction.
    pub fn with_hooks(mut self, hooks: Hooks) -> Self {
        self.hooks = Some(hooks);
        self
    }

    /// With a callback run just before a compaction (the host flushes what it must first).
    pub fn with_before_compaction(mut self, hook: BeforeCompaction) -> Self {
        self.before_compaction = Some(hook);
        self
    }

    /// With another clock (tests drive the idle gap with a [`ManualClock`]).
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// The settings this compactor runs with.
    pub fn config(&self) -> &CompactionConfig {
        &self.config
    }

    /// `model`'s whole context window on the session's endpoint (`TINE_CONTEXT_WINDOW` /
    /// `openai.contextWindow` for a local model), not capped for compaction.
    pub fn model_window(&self, model: &str) -> u64 {
        self.parent.client.context_window(model)
    }

    /// The levels for `model` on the parent's endpoint: its context window
    /// ([`tine_api_client::ModelClient::context_window`], so `TINE_CONTEXT_WINDOW` /
    /// `openai.contextWindow` count), capped by `TINE_AUTO_COMPACT_WINDOW`. `window` is the figure
    /// front ends show the context usage against.
    pub fn thresholds(&self, model: &str) -> Thresholds {
        let window = self.parent.client.context_window(model);
        Thresholds::for_window(model, window, self.config.window_cap)
    }

    /// Every compaction of the session so far, oldest first.
    pub fn reports(&self) -> Vec<CompactionReport> {
        self.lock().reports.clone()
    }

    /// Automatic compaction failures in a row.
    pub fn consecutive_failures(&self) -> u32 {
        self.lock().consecutive_failures
    }

    /// Whether the circuit breaker turned auto compaction off for this session.
    pub fn auto_tripped(&self) -> bool {
        self.lock().auto_off
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn context_size(&self, ctx: &CompactContext<'_>) -> u64 {
        let mark = self.lock().mark;
        let decisions = ctx.template.replacements.as_ref().map(|r| lock(r).clone());
        context_tokens(mark, ctx.messages, ctx.template, decisions.as_ref())
    }

    /// Clears old tool results when the last reply is older than the cache's lifetime.
    fn micro_compact(&self, ctx: &CompactContext<'_>) -> usize {
        let Some(ttl) = self.config.idle_clear_after else {
            return 0;
        };
        let Some(at) = self.lock().mark.map(|m| m.at) else {
            return 0;
        };
        if self.clock.now().saturating_duration_since(at) <= ttl {
            return 0;
        }
        let Some(replacements) = &ctx.template.replacements else {
            return 0;
        };
        let cleared = clear_old_tool_results(
            ctx.messages,
            &mut lock(replacements),
            self.config.keep_recent_tool_results,
        );
        if cleared > 0 {
            tracing::info!(cleared, "the cache went cold; old tool results cleared");
            // The last usage no longer describes the prefix: estimate it afresh.
            self.lock().mark = None;
        }
        cleared
    }

    fn failed(&self, trigger: CompactTrigger, error: &CompactionError) {
        let mut state = self.lock();
        state.consecutive_failures += 1;
        let failures = state.consecutive_failures;
        if failures >= self.config.max_consecutive_failures && !state.auto_off {
            state.auto_off = true;
            tracing::warn!(
                %error,
                failures,
                "compaction failed {failures} times in a row; auto compaction is off for this session (/compact still works)"
            );
        } else {
            tracing::warn!(%error, %trigger, failures, "compaction failed");
        }
    }

    /// Compacts `ctx`'s history now.
    pub async fn compact(
        &self,
        ctx: CompactContext<'_>,
        trigger: CompactTrigger,
        focus: Option<&str>,
    ) -> Result<Compacted, CompactionError> {
        if ctx.messages.is_empty() {
            return Err(CompactionError::Empty);
        }
        let cancel = ctx.tool_context.cancellation().clone();
        if cancel.is_cancelled() {
            return Err(CompactionError::Cancelled);
        }
        let tokens_before = self.context_size(&ctx);
        let decisions = ctx.template.replacements.as_ref().map(|r| lock(r).clone());
        let levels = self.thresholds(&ctx.template.model);
        let plan = Plan::choose(
            ctx.messages,
            ctx.current_prompt,
            levels.auto_compact,
            decisions.as_ref(),
        )?;
        let summarized = plan.summarized(ctx.messages);
        let mark = self.lock().mark;
        let parent_prompt_tokens = mark.map(|m| m.prompt_tokens);

        let mut keep: Vec<String> = focus
            .map(str::trim)
            .filter(|f| !f.is_empty())
            .map(str::to_owned)
            .into_iter()
            .collect();
        if let Some(hooks) = &self.hooks {
            keep.extend(hooks.pre_compact(trigger, focus).await);
        }
        let instructions = (!keep.is_empty()).then(|| keep.join("\n\n"));

        // The fork runs in the loop's tool context: the turn's cancellation, the session's
        // file-state cache (cloned for the fork).
        let mut parent = (*self.parent).clone();
        parent.tool_context = ctx.tool_context.clone();
        let parent = Arc::new(parent);
        let messages: Arc<[Message]> = Arc::from(summarized);
        let memory = self.before_compaction.as_ref().map(|hook| {
            hook(JobContext {
                cache_safe: Arc::new(CacheSafeParams {
                    template: ctx.template.clone(),
                    messages: Arc::clone(&messages),
                }),
                parent: Arc::clone(&parent),
                cancel: cancel.child_token(),
            })
        });
        let summary = summarize(
            &parent,
            ctx.template,
            messages,
            mark.map(|m| m.messages.min(summarized.len())),
            instructions.as_deref(),
        );
        let (summary, memory) = futures::join!(summary, async move {
            match memory {
                Some(run) => Some(run.await),
                None => None,
            }
        });
        match memory {
            Some(Ok(outcome)) => {
                tracing::debug!(summary = %outcome.summary, "memory extracted before compaction")
            }
            Some(Err(error)) => {
                tracing::warn!(%error, "memory extraction before compaction failed")
            }
            None => {}
        }
        let summary = summary?;
        if cancel.is_cancelled() {
            return Err(CompactionError::Cancelled);
        }

        let session = &self.parent.session;
        let transcript = transcript_path(&session.home, &session.cwd, &session.session_id);
        let mut blocks = Vec::new();
        if let Some(context) = &self.user_context {
            blocks.push(ContentBlock::text(context.as_ref()));
        }
        let follows = match plan {
            Plan::Whole => Follows::Nothing,
            Plan::BeforeTurn { .. } => Follows::Turn,
            Plan::AllButPrompt => Follows::Prompt,
        };
        blocks.push(ContentBlock::text(continuation_message(
            &summary.text,
            &transcript.display().to_string(),
            trigger,
            follows,
        )));
        let post = match &self.hooks {
            Some(hooks) => hooks.post_compact(trigger, &summary.text).await,
            None => Vec::new(),
        };
        let post: Vec<ContentBlock> = post
            .into_iter()
            .map(|text| ContentBlock::text(format!("Context from a PostCompact hook:\n{text}")))
            .collect();
        // The current prompt goes on whole after the summary (with its turn, when kept).
        let context = self.user_context.as_deref();
        let (kept_prompt, kept_turn): (Vec<ContentBlock>, &[Message]) =
            match (plan, ctx.current_prompt) {
                (Plan::BeforeTurn { start }, _) if start < ctx.messages.len() => (
                    prompt_blocks(&ctx.messages[start], context),
                    &ctx.messages[start + 1..],
                ),
                (Plan::AllButPrompt, Some(prompt)) => (prompt_blocks(prompt.message, context), &[]),
                _ => (Vec::new(), &[]),
            };
        let build = |reattached: Vec<ContentBlock>| {
            let mut first = blocks.clone();
            first.extend(reattached);
            first.extend(post.iter().cloned());
            first.extend(kept_prompt.iter().cloned());
            let mut history = vec![Message::user(first)];
            history.extend_from_slice(kept_turn);
            history
        };
        // Compaction only shrinks (both sides estimated alike): the files put back get at most
        // four fifths of what the summary freed (a file's text grows when it is escaped into
        // the request), and at most half the room left below the auto-compact level, so the
        // request after a compaction on a small window is not over the level again.
        let template = template_tokens(ctx.template);
        let estimated_before = template + messages_tokens(ctx.messages, decisions.as_ref());
        let without_files = template + messages_tokens(&build(Vec::new()), decisions.as_ref());
        let freed =
            estimated_before.saturating_sub(without_files + crate::reattach::BLOCKS_MARGIN_TOKENS);
        let below_level = levels.auto_compact.saturating_sub(without_files) / 2;
        let file_budget = (freed / 5 * 4).min(below_level);
        let reattached = reattach(ctx.tool_context, file_budget).await;
        let files_referenced = reattached.referenced;
        let history = build(
            reattached
                .blocks
                .into_iter()
                .map(ContentBlock::text)
                .collect(),
        );
        let tokens_after = template + messages_tokens(&history, decisions.as_ref());
        // `/compact` asked for is done even so (the person wants the summary, not the size).
        if tokens_after >= estimated_before && trigger != CompactTrigger::Manual {
            return Err(CompactionError::NoGain {
                before: estimated_before,
                after: tokens_after,
            });
        }

        let usage = summary.usage;
        let boundary = CompactBoundary {
            trigger,
            tokens_before,
            tokens_after,
            messages_summarized: summarized.len(),
            rounds_dropped: summary.rounds_dropped,
            dropped: match (plan, ctx.current_prompt) {
                // The prompt is kept: it is not among what went.
                (Plan::AllButPrompt, Some(prompt)) => {
                    let mut went = summarized.to_vec();
                    if prompt.index < went.len() {
                        went.remove(prompt.index);
                    }
                    dropped_context(&went)
                }
                _ => dropped_context(summarized),
            },
            focus: instructions,
            files_reattached: reattached.files,
            summary_prompt_tokens: usage.map_or(0, |u| u.total_input_tokens()),
            summary_cache_read_tokens: usage.map_or(0, |u| u.cache_read_input_tokens),
        };
        tracing::info!(
            %trigger,
            tokens_before,
            tokens_after = boundary.tokens_after,
            messages = boundary.messages_summarized,
            cache_read = boundary.summary_cache_read_tokens,
            "conversation compacted"
        );
        {
            let mut state = self.lock();
            state.mark = None;
            state.consecutive_failures = 0;
            state.reports.push(CompactionReport {
                boundary: boundary.clone(),
                summary_usage: usage,
                parent_prompt_tokens,
                files_referenced,
            });
        }
        Ok(Compacted {
            messages: history,
            transition: match trigger {
                CompactTrigger::Reactive => Transition::ReactiveCompact,
                CompactTrigger::Auto | CompactTrigger::Manual => Transition::ContextCollapse,
            },
            boundary,
        })
    }
}

impl Compactor for SessionCompactor {
    fn before_request<'a>(&'a self, ctx: CompactContext<'a>) -> BoxFuture<'a, BeforeRequest> {
        Box::pin(async move {
            let mut out = BeforeRequest {
                cleared_tool_results: self.micro_compact(&ctx),
                ..BeforeRequest::default()
            };
            let tokens = self.context_size(&ctx);
            let levels = self.thresholds(&ctx.template.model);
            let auto = self.config.auto_enabled && !self.lock().auto_off;
            if auto && tokens >= levels.auto_compact {
                match self.compact(ctx, CompactTrigger::Auto, None).await {
                    Ok(compacted) => {
                        out.prompt_tokens = Some(compacted.boundary.tokens_after);
                        out.compacted = Some(compacted);
                        return out;
                    }
                    Err(CompactionError::Cancelled) => return out,
                    // Not a failure: the prompt and what the fixed prefix holds stay.
                    Err(CompactionError::NothingToSummarize { .. }) => {
                        tracing::debug!(tokens, "over the auto-compact level, nothing to summarize")
                    }
                    Err(error) => self.failed(CompactTrigger::Auto, &error),
                }
            }
            out.prompt_tokens = Some(tokens);
            // A prompt over the model's whole window cannot be sent: say what helps instead.
            let window = self.parent.client.context_window(&ctx.template.model);
            if tokens > window {
                out.blocking = Some(Terminal::BlockingLimit {
                    tokens,
                    limit: window,
                    prefix: template_tokens(ctx.template),
                });
                return out;
            }
            let auto = self.config.auto_enabled && !self.lock().auto_off;
            let warn_at = if auto {
                levels.warning.min(levels.auto_compact)
            } else {
                levels.warning
            };
            if tokens >= warn_at {
                out.warning = Some(ContextWarning {
                    tokens,
                    effective_window: levels.effective,
                    auto_compact_at: auto.then_some(levels.auto_compact),
                    reply_room: None,
                });
            }
            out
        })
    }

    fn on_prompt_too_long<'a>(
        &'a self,
        ctx: CompactContext<'a>,
    ) -> BoxFuture<'a, Option<Compacted>> {
        Box::pin(async move {
            match self.compact(ctx, CompactTrigger::Reactive, None).await {
                Ok(compacted) => Some(compacted),
                Err(CompactionError::Cancelled) => None,
                Err(error) => {
                    self.failed(CompactTrigger::Reactive, &error);
                    None
                }
            }
        })
    }

    fn on_response(&self, usage: &Usage, messages: usize) {
        let at = self.clock.now();
        // A server that counted nothing (no usage at all) leaves the size to the estimate:
        // compaction never runs on zeros.
        let prompt_tokens = usage.total_input_tokens();
        self.lock().mark = (prompt_tokens > 0).then_some(UsageMark {
            prompt_tokens,
            messages,
            at,
        });
    }

    fn compact_now<'a>(
        &'a self,
        ctx: CompactContext<'a>,
        focus: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Compacted, CompactError>> {
        Box::pin(async move {
            self.compact(ctx, CompactTrigger::Manual, focus)
                .await
                .map_err(CompactError::from)
        })
    }
}
