//! One conversation as the session's task owns it: the engine, the stop-hook pipeline and
//! its jobs, memory, the MCP servers, hooks, skills and commands, from start-up (`assemble`)
//! until it ends: at the session's end, or when `Op::Clear` or `Op::Resume` puts another in
//! its place. Its turns are `turn`'s; what it costs so far and how its end is drained are
//! here.

use std::sync::Arc;
use std::time::Duration;

use tine_api_client::{ContentBlock, MessageContent, Usage, cost_usd};
use tine_compaction::SessionCompactor;
use tine_fork_runtime::{BackgroundEvent, DrainReport, SourceUsage, StopHookPipeline, UsageLedger};
use tine_memory::AutoMemory;
use tine_query_loop::hooks::PromptVerdict;
use tine_query_loop::{LoopTotals, QueryEngine, QueryEvent};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::assemble::Assembled;
use crate::emit::Emitter;
use crate::file_changes::FileChanges;
use crate::hooks::SessionHooks;
use crate::mcp::SessionMcp;
use crate::permission::Permissions;
use crate::protocol::{
    Notice, SessionCost, SessionEndReason, SessionEvent, SessionInfo, ShutdownReport, TurnEnd,
    TurnOutcome, UsageReport,
};

pub(crate) struct Conversation {
    pub engine: QueryEngine,
    pub pipeline: Arc<StopHookPipeline>,
    pub memory: Option<AutoMemory>,
    pub ledger: UsageLedger,
    /// The MCP servers, stopped at shutdown.
    pub mcp: Option<SessionMcp>,
    pub permissions: Arc<Permissions>,
    /// Background agents and their notifications.
    pub tasks: tine_fork_runtime::TaskRegistry,
    /// The session's token (background jobs and forks hang off it).
    pub token: CancellationToken,
    pub events: Emitter,
    pub info: SessionInfo,
    /// The settings as loaded at start.
    pub settings: Arc<tine_config::settings::LoadedSettings>,
    /// The main thread's requests so far (the engine counts tokens and cost, not requests).
    pub main_requests: u64,
    /// The main thread's last request's usage (the status line's context and cache figures).
    last_usage: Option<Usage>,
    /// Lines the main thread's file tools changed (a status line's figures).
    file_changes: FileChanges,
    /// Whether the session's cancellation has reached the pipeline's jobs.
    background_cancelled: bool,
    drain_grace: Duration,
    forwarder: JoinHandle<()>,
    forwarder_stop: CancellationToken,
    hooks: SessionHooks,
    /// Whether the session resumed one, and replaces a cleared one (SessionStart's source).
    resumed: bool,
    cleared: bool,
    /// SessionStart's context, until a prompt is sent with it.
    start_context: Vec<String>,
    /// The window the context figure is shown against (the endpoint's, capped).
    compactor: Arc<SessionCompactor>,
    /// Where custom slash commands are looked up.
    pub command_dirs: Vec<std::path::PathBuf>,
    /// The skills read at start.
    pub skills: crate::skills::SessionSkills,
    /// The plugins read at start.
    pub plugins: Arc<crate::plugins::SessionPlugins>,
    /// `--json-schema`: where the StructuredOutput tool leaves the answer.
    structured: Option<crate::structured::StructuredSlot>,
    /// The away summary, when on.
    pub away: Option<crate::away::AwaySummarizer>,
    /// Speculation, when on.
    pub(crate) speculator: Option<crate::speculation::Speculator>,
    /// `--fallback-model`'s switch.
    fallback: Option<crate::main_client::FallbackSwitch>,
    /// The prompts sent and their checkpoints.
    pub(crate) rewinds: Arc<crate::rewind::Rewinds>,
    /// The op of the turn about to run (a rewind's handle on its prompt).
    pub(crate) turn_op: Option<crate::protocol::OpId>,
}

/// How long the end of a session waits for background jobs on a local model (a hosted one
/// gets the session's `drain_grace`, 60 s by default).
const LOCAL_DRAIN_GRACE: Duration = Duration::from_secs(5);

impl Conversation {
    pub(crate) fn new(
        assembled: Assembled,
        token: CancellationToken,
        events: Emitter,
        drain_grace: Duration,
    ) -> Self {
        let forwarder_stop = CancellationToken::new();
        let forwarder = tokio::spawn(forward_background(
            assembled.background,
            events.clone(),
            forwarder_stop.clone(),
        ));
        Self {
            engine: assembled.engine,
            pipeline: assembled.pipeline,
            memory: assembled.memory,
            ledger: assembled.ledger,
            mcp: assembled.mcp,
            permissions: assembled.permissions,
            tasks: assembled.tasks,
            token,
            events,
            resumed: assembled.info.resumed,
            info: assembled.info,
            settings: assembled.settings,
            main_requests: 0,
            last_usage: None,
            file_changes: FileChanges::default(),
            background_cancelled: false,
            drain_grace,
            forwarder,
            forwarder_stop,
            hooks: assembled.hooks,
            cleared: assembled.cleared,
            start_context: Vec::new(),
            compactor: assembled.compactor,
            command_dirs: assembled.command_dirs,
            skills: assembled.skills,
            plugins: assembled.plugins,
            structured: assembled.structured,
            away: assembled.away,
            speculator: assembled.speculator,
            fallback: assembled.fallback,
            rewinds: assembled.rewinds,
            turn_op: None,
        }
    }

    pub(crate) fn emit(&self, event: SessionEvent) {
        // A front end that dropped its receiver no longer listens; the session goes on.
        let _ = self.events.emit(event);
    }

    /// SessionStart hooks, before the conversation's first turn (a cancellation stops them);
    /// their context goes with the first prompt sent.
    pub(crate) async fn start(&mut self) {
        let token = self.token.clone();
        tokio::select! {
            context = self.hooks.session_start(self.resumed, self.cleared) => {
                self.start_context = context;
            }
            _ = token.cancelled() => {}
        }
    }

    /// Text for the model with the next prompt sent (what `/reload-plugins` changed).
    pub(crate) fn attach_to_next_prompt(&mut self, text: String) {
        self.start_context.push(text);
    }

    /// Whether the session's cancellation has reached the jobs.
    pub(crate) fn background_cancelled(&self) -> bool {
        self.background_cancelled
    }

    /// After every turn: a skill's `allowed-tools` hold while the turn that loaded it runs;
    /// the engine follows a `--fallback-model` switch (also after a command, which puts its
    /// own model back when it ends).
    pub(crate) fn after_turn(&mut self) {
        crate::skill_tool::grants(self.engine.tool_context()).clear();
        crate::main_client::follow_fallback(&mut self.engine, self.fallback.as_ref());
        self.info.model = self.engine.config().model.clone();
    }

    /// The prompt has waited a minute since a turn ended: Notification `idle_prompt`.
    pub(crate) fn notify_idle(&self) {
        self.hooks.idle_prompt();
    }

    /// The session's cancellation reached the jobs (once).
    pub(crate) fn cancel_background(&mut self) {
        if !self.background_cancelled {
            self.pipeline.cancel_all();
            self.background_cancelled = true;
        }
    }

    /// One turn of the model for `prompt` (the protocol at the top of this file).
    pub(crate) async fn run_turn(&mut self, prompt: &str, token: CancellationToken) -> TurnEnd {
        self.run_content_turn(prompt, &[ContentBlock::text(prompt)], token)
            .await
    }

    /// One turn for a prompt of content blocks (`Op::PromptContent`): `prompt` is its text,
    /// what hooks, recall and speculation read; `content` goes to the model.
    pub(crate) async fn run_content_turn(
        &mut self,
        prompt: &str,
        content: &[ContentBlock],
        token: CancellationToken,
    ) -> TurnEnd {
        self.engine.set_cancellation(token.clone());
        self.rewinds.begin(self.turn_op.take(), prompt);
        let end = self.prompt_turn(prompt, content, token).await;
        self.rewinds.end(self.engine.last_prompt().cloned()).await;
        end
    }

    async fn prompt_turn(
        &mut self,
        prompt: &str,
        content: &[ContentBlock],
        token: CancellationToken,
    ) -> TurnEnd {
        let verdict = tokio::select! {
            verdict = self.hooks.user_prompt_submit(prompt) => verdict,
            _ = token.cancelled() => return self.end(TurnOutcome::Interrupted, None),
        };
        let hook_context = match verdict {
            PromptVerdict::Proceed { context } => context,
            PromptVerdict::Refused { reason } => {
                self.emit(SessionEvent::PromptBlocked {
                    reason: reason.clone(),
                });
                let message =
                    format!("the prompt was blocked by a UserPromptSubmit hook: {reason}");
                return self.end(TurnOutcome::Failed { message }, None);
            }
        };
        let recalled = tokio::select! {
            attachments = recall(self.memory.as_ref(), prompt) => attachments,
            _ = token.cancelled() => return self.end(TurnOutcome::Interrupted, None),
        };
        // SessionStart's context goes with the first prompt sent (a refused one keeps it).
        let mut attachments = std::mem::take(&mut self.start_context);
        // Deferred tools a `/mcp restart` brought: named once, with the next prompt.
        attachments.extend(
            self.mcp
                .as_ref()
                .and_then(|mcp| mcp.new_deferred.take_reminder()),
        );
        attachments.extend(hook_context);
        attachments.extend(recalled);
        if let Some(speculator) = &mut self.speculator
            && let Some(speculated) = speculator.take(prompt, &token).await
        {
            attachments.push(speculated);
        }
        self.pipeline.slot().clear();
        crate::assemble::stage_done("turn: hooks, recall");
        let mut observer =
            TurnObserver {
                events: self.events.clone(),
                ledger: self.ledger.clone(),
                before: self.main_usage(),
                api_before: self.engine.total_api_duration(),
                turn: LoopTotals::new(),
                files: FileChanges::from_totals(self.file_changes.added, self.file_changes.removed),
                compactor: Arc::clone(&self.compactor),
                shells: self.engine.config().tool_context.as_ref().map(|context| {
                    (*context.ext_or_default::<tine_tools::BackgroundTasks>()).clone()
                }),
            };
        let mut turn = self
            .engine
            .submit_content(content, &attachments, |event| observer.on_event(event))
            .await;
        // `--json-schema`: the turn is over once the structured answer is in.
        let (structured, failure) = match self.structured.clone() {
            Some(slot) => {
                crate::structured::finish_turn(&mut self.engine, &slot, &mut turn, |event| {
                    observer.on_event(event)
                })
                .await
            }
            None => (None, None),
        };
        self.main_requests += u64::from(turn.num_turns);
        if let Some(last) = observer.turn.last_request_usage {
            self.last_usage = Some(last);
        }
        self.file_changes = FileChanges::from_totals(observer.files.added, observer.files.removed);
        let outcome = match failure {
            Some(message) => TurnOutcome::Failed { message },
            None => TurnOutcome::of(&turn.terminal),
        };
        let mut end = self.end(outcome, Some(turn));
        end.structured_output = structured;
        crate::assemble::stage_done("turn: request, reply");
        end
    }

    /// The end of submission `id`, with the session's cost and denials so far.
    pub(crate) fn end(
        &self,
        outcome: TurnOutcome,
        result: Option<tine_query_loop::TurnResult>,
    ) -> TurnEnd {
        TurnEnd {
            outcome,
            result,
            cost: self.cost(),
            denials: self.engine.permission_denials().to_vec(),
            structured_output: None,
        }
    }

    fn main_usage(&self) -> SourceUsage {
        SourceUsage {
            usage: self.engine.total_usage(),
            cost_usd: self.engine.total_cost_usd(),
            requests: self.main_requests,
        }
    }

    /// Every request of the session so far, by source.
    pub(crate) fn cost(&self) -> SessionCost {
        let mut cost = SessionCost::collect(self.main_usage(), &self.ledger);
        cost.context_windows = cost
            .by_model
            .keys()
            .map(|model| (model.clone(), self.compactor.model_window(model)))
            .collect();
        cost
    }

    /// Where auto-compaction starts for the model in use (tokens of the window).
    pub(crate) fn auto_compact_at(&self) -> u64 {
        self.compactor
            .thresholds(&self.engine.config().model)
            .auto_compact
    }

    pub(crate) fn usage_report(&self) -> UsageReport {
        let model = &self.engine.config().model;
        let window = self.compactor.thresholds(model).window;
        UsageReport {
            api_duration: self.engine.total_api_duration(),
            lines_added: self.file_changes.added,
            lines_removed: self.file_changes.removed,
            ..usage_report(model, window, self.last_usage.as_ref(), self.cost())
        }
    }

    /// Ends the conversation: SessionEnd hooks (not after a cancellation), background agents
    /// stopped, what the jobs deferred started and every job drained within the grace, the
    /// MCP servers stopped. Its transcript is complete when this returns.
    pub(crate) async fn close(&mut self, reason: SessionEndReason) -> ShutdownReport {
        // SessionEnd, unless a signal asked to stop now.
        if !self.token.is_cancelled() {
            let token = self.token.clone();
            tokio::select! {
                () = self.hooks.session_end(reason) => {}
                _ = token.cancelled() => {}
            }
        }
        crate::assemble::stage_done("session end hooks");
        // Background agents a front end did not wait for stop with the session.
        self.tasks.cancel_background();
        // A model served here reads a fork's prompt in minutes, not seconds: the end waits
        // for it a short while only (issue 37).
        let local = tine_api_client::ModelClient::is_local(&self.engine.config().client);
        let grace = match local {
            true => self.drain_grace.min(LOCAL_DRAIN_GRACE),
            false => self.drain_grace,
        };
        let drain = if self.token.is_cancelled() {
            // Cancelled (a signal): nothing is waited for.
            self.pipeline.cancel_all();
            DrainReport::default()
        } else {
            // What a batching job put off (so a one-turn run is remembered too), then all of
            // it, bounded; a signal meanwhile cancels what is left at once, instead of after
            // the grace (each job still reports how it ended).
            self.pipeline.flush();
            let on_signal = {
                let (token, pipeline) = (self.token.clone(), Arc::clone(&self.pipeline));
                tokio::spawn(async move {
                    token.cancelled().await;
                    pipeline.cancel_all();
                })
            };
            let drain = self.pipeline.drain(grace).await;
            on_signal.abort();
            drain
        };
        crate::assemble::stage_done("background drained");
        if drain.cancelled > 0 && local {
            self.emit(SessionEvent::Notice(Notice::warning(format!(
                "{} background job(s) (memory extraction) did not finish within {} s and were \
                 cancelled: a local model is waited for {} s at the end, not {} s, since it \
                 may need minutes; the next session's extraction covers these turns",
                drain.cancelled,
                grace.as_secs(),
                LOCAL_DRAIN_GRACE.as_secs(),
                self.drain_grace.as_secs()
            ))));
        } else if drain.cancelled > 0 {
            self.emit(SessionEvent::Notice(Notice::warning(format!(
                "{} background job(s) did not finish within {} s and were cancelled",
                drain.cancelled,
                grace.as_secs()
            ))));
        }
        // After the jobs: a fork may still have called a server's tool. No server outlives
        // the session.
        if let Some(mcp) = self.mcp.take() {
            mcp.shutdown().await;
        }
        self.forwarder_stop.cancel();
        let _ = (&mut self.forwarder).await;
        let report = ShutdownReport {
            drain,
            cost: self.cost(),
            denials: self.engine.permission_denials().to_vec(),
        };
        self.emit(SessionEvent::Usage(self.usage_report()));
        report
    }
}

/// Forwards the pipeline's events as they come; once `stop` is cancelled, what is left.
async fn forward_background(
    mut background: mpsc::UnboundedReceiver<BackgroundEvent>,
    events: Emitter,
    stop: CancellationToken,
) {
    loop {
        tokio::select! {
            biased;
            event = background.recv() => match event {
                Some(event) => {
                    let _ = events.emit_free(SessionEvent::Background(event));
                }
                None => return,
            },
            _ = stop.cancelled() => {
                while let Ok(event) = background.try_recv() {
                    let _ = events.emit_free(SessionEvent::Background(event));
                }
                return;
            }
        }
    }
}

/// Forwards one turn's events, adding what only the session knows.
struct TurnObserver {
    events: Emitter,
    ledger: UsageLedger,
    /// The main thread's totals before the turn.
    before: SourceUsage,
    /// The main thread's time on the API before the turn.
    api_before: Duration,
    /// The turn's, folded as the engine folds them (each request billed as it ends).
    turn: LoopTotals,
    /// Lines changed by file tools, the turn's calls included.
    files: FileChanges,
    compactor: Arc<SessionCompactor>,
    /// The main thread's background shells: one a call starts goes in the tasks panel.
    shells: Option<tine_tools::BackgroundTasks>,
}

impl TurnObserver {
    /// The main thread's totals so far, this turn's requests included.
    fn main(&self) -> SourceUsage {
        let mut main = self.before;
        main += SourceUsage {
            usage: self.turn.usage,
            cost_usd: self.turn.cost_usd,
            requests: u64::from(self.turn.requests),
        };
        main
    }

    fn on_event(&mut self, event: &QueryEvent) {
        let _ = self.events.emit(SessionEvent::Query(event.clone()));
        self.turn.fold(event, cost_usd);
        match event {
            QueryEvent::Usage { usage, model } => {
                self.ledger.record_model(model, usage);
                let cost = SessionCost::collect(self.main(), &self.ledger);
                let window = self.compactor.thresholds(model).window;
                let report = UsageReport {
                    api_duration: self.api_before + self.turn.api_duration,
                    lines_added: self.files.added,
                    lines_removed: self.files.removed,
                    ..usage_report(model, window, Some(usage), cost)
                };
                let _ = self.events.emit(SessionEvent::Usage(report));
            }
            QueryEvent::AssistantMessage { message, .. } => {
                if let MessageContent::Blocks(blocks) = &message.content {
                    for block in blocks {
                        if let ContentBlock::ToolUse(call) = block {
                            self.files.on_call(call);
                            let _ = self.events.emit(SessionEvent::ToolInput {
                                id: call.id.clone(),
                                tool: call.name.clone(),
                                input: call.input.clone(),
                            });
                        }
                    }
                }
            }
            QueryEvent::ToolResult {
                tool_use_id,
                tool,
                output,
            } => {
                self.files.on_result(tool_use_id, tool, output);
                if let (
                    tine_tools::ToolDisplay::Shell {
                        background_task: Some(id),
                        ..
                    },
                    Some(shells),
                ) = (&output.display, &self.shells)
                {
                    crate::watch::shell(shells.clone(), id.clone(), self.events.clone());
                }
            }
            QueryEvent::RequestStart { .. }
            | QueryEvent::TextDelta { .. }
            | QueryEvent::ThinkingDelta { .. }
            | QueryEvent::ToolUseStart { .. }
            | QueryEvent::Retry(_)
            | QueryEvent::ToolDenied { .. }
            | QueryEvent::ToolProgress { .. }
            | QueryEvent::UserMessage { .. }
            | QueryEvent::HistoryReplaced { .. }
            | QueryEvent::ToolResultsCleared { .. }
            | QueryEvent::ContextWarning(_)
            | QueryEvent::Transition(_)
            | QueryEvent::Terminal(_) => {}
        }
    }
}

/// `window` is the endpoint's context window for `model`, capped as compaction caps it.
fn usage_report(model: &str, window: u64, last: Option<&Usage>, cost: SessionCost) -> UsageReport {
    let prompt = last.map_or(0, |u| {
        u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens
    });
    UsageReport {
        model: model.to_owned(),
        context_tokens: prompt,
        context_window: window,
        cost,
        cache_read_share: last
            .filter(|_| prompt > 0)
            .map(|u| u.cache_read_input_tokens as f64 / prompt as f64),
        last_request: last.copied(),
        ..UsageReport::default()
    }
}

/// The memories recall attaches to this turn (none without auto memory; a failure is logged
/// and the turn goes on without them).
async fn recall(memory: Option<&AutoMemory>, prompt: &str) -> Vec<String> {
    let Some(memory) = memory else {
        return Vec::new();
    };
    match memory.recall().attachment_for(prompt).await {
        Ok(Some(attachment)) => {
            tracing::info!(files = ?attachment.files, "recalled memories");
            vec![attachment.text]
        }
        Ok(None) => Vec::new(),
        Err(error) => {
            tracing::warn!(%error, "memory recall failed; the turn goes on without it");
            Vec::new()
        }
    }
}
