//! The session's task: it owns the conversation in place and carries out the queued [`Op`]s
//! one at a time, in order (see `handle` for the ones done at once). Each turn runs the turn
//! protocol every front end shares (design.md "One turn"; the steps are `Conversation::run_turn`'s):
//! the turn's token (a child of the session's, made by `submit`) becomes the engine's, so an
//! interruption stops this turn and nothing else; `TurnStarted`, the loop's events, then
//! exactly one `TurnEnded` with the cost of every request so far, all naming the op.
//!
//! Between ops the task watches the background agents: when some have ended and nothing else
//! is queued, their reports go to the model as a turn of the session's own
//! ([`SessionEvent::AgentReports`], then that turn), as Claude Code delivers task
//! notifications. `Op::Clear` and `Op::Resume` end the conversation (SessionEnd hooks, its
//! deferred memory extraction saved) and assemble another in its place, announced by a new
//! `Configured`. `Op::Finish` lets the agents still running report first; `Op::Shutdown`
//! stops them; both end with `ShutdownComplete`.

use std::sync::Arc;
use std::time::Duration;

use tine_api_client::resolve_model_alias;
use tine_config::SessionId;
use tine_fork_runtime::{TaskNotification, TaskRegistry};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::assemble::Assembled;
use crate::commands;
use crate::conversation::Conversation;
use crate::emit::Emitter;
use crate::options::{Resume, SessionOptions};
use crate::protocol::{
    AgentReport, CommandOutput, Op, OpId, SessionEndReason, SessionEvent, ShutdownReport,
    TurnOutcome,
};
use crate::shared::Shared;

mod replace;

/// An op on its way to the task, with its turn's token and, for the end, who waits for the
/// report.
pub(crate) struct Queued {
    pub id: OpId,
    pub op: Op,
    pub token: CancellationToken,
    pub reply: Option<oneshot::Sender<ShutdownReport>>,
}

pub(crate) struct Actor {
    /// What the next conversation is assembled from (`Op::Clear`, `Op::Resume`): the
    /// options the session started with, the model a `SetModel` chose.
    template: SessionOptions,
    shared: Arc<Shared>,
    events: Emitter,
    drain_grace: Duration,
    /// Whether a background agent may still report (the task waits for it between ops).
    armed: bool,
    /// The tasks panel's feed of the conversation in place.
    watcher: Option<(JoinHandle<()>, CancellationToken)>,
    conversation: Conversation,
    /// The model the session started with: what `SetModel("default")` goes back to.
    started_model: String,
}

impl Actor {
    pub(crate) fn new(
        assembled: Assembled,
        template: SessionOptions,
        shared: Arc<Shared>,
        events: Emitter,
    ) -> Self {
        let drain_grace = template.drain_grace;
        let conversation = open(assembled, &shared, &events, drain_grace, None);
        let started_model = conversation.info.model.clone();
        let mut actor = Self {
            template,
            shared,
            events,
            drain_grace,
            armed: false,
            watcher: None,
            conversation,
            started_model,
        };
        actor.watch();
        actor
    }

    fn watch(&mut self) {
        if let Some((task, stop)) = self.watcher.take() {
            stop.cancel();
            task.abort();
        }
        let stop = CancellationToken::new();
        let task = crate::watch::agents(
            self.conversation.tasks.clone(),
            self.events.clone(),
            stop.clone(),
        );
        self.watcher = Some((task, stop));
    }

    pub(crate) async fn run(mut self, mut ops: mpsc::UnboundedReceiver<Queued>) {
        let session = self.shared.token.clone();
        // Before any op (they queue meanwhile); a signal stops the hooks.
        self.conversation.start().await;
        loop {
            let tasks = self.conversation.tasks.clone();
            let queued = tokio::select! {
                biased;
                queued = ops.recv() => queued,
                // A cancelled session stops its background jobs too (they hold their own
                // tokens); queued turns still get their `TurnEnded`.
                _ = session.cancelled(), if !self.conversation.background_cancelled() => {
                    self.conversation.cancel_background();
                    continue;
                }
                notifications = tasks.next_notifications(far_future()), if self.armed => {
                    match notifications {
                        Some(notifications) => self.report_turn(notifications).await,
                        None => self.armed = false,
                    }
                    continue;
                }
            };
            let Some(Queued {
                id,
                op,
                token,
                reply,
            }) = queued
            else {
                // Every handle is gone: shut down the same way, for nobody.
                self.shutdown(None, None, SessionEndReason::Other).await;
                return;
            };
            match op {
                Op::Finish => {
                    self.finish(id, reply).await;
                    return;
                }
                Op::Shutdown(reason) => {
                    self.shutdown(Some(id), reply, reason).await;
                    return;
                }
                op => {
                    if !self.apply(id, op, token).await {
                        // No conversation could be put in place: the session has ended.
                        self.shutdown(Some(id), reply, SessionEndReason::Other)
                            .await;
                        return;
                    }
                }
            }
        }
    }

    /// One queued op. Returns `false` when the session cannot go on.
    async fn apply(&mut self, id: OpId, op: Op, token: CancellationToken) -> bool {
        match op {
            Op::Prompt(prompt) => {
                self.conversation.turn_op = Some(id);
                self.turn(id, token, TurnKind::Prompt(prompt)).await;
            }
            Op::PromptContent(content) => {
                self.conversation.turn_op = Some(id);
                self.turn(id, token, TurnKind::Content(content)).await;
            }
            // `/clear` and `/resume ID` put another conversation in place, as the ops do,
            // inside the command's turn (a front end waits for its `TurnEnded`).
            Op::Command { name, .. } if name == "clear" => {
                return self
                    .replacing_turn(id, token, "clear", Resume::New, SessionEndReason::Clear)
                    .await;
            }
            // The plugins loaded again: the same conversation assembled anew in place.
            Op::Command { name, .. } if name == "reload-plugins" => {
                let session = self.conversation.info.session_id.clone();
                return self
                    .replacing_turn(
                        id,
                        token,
                        "reload-plugins",
                        Resume::Id(session),
                        SessionEndReason::Other,
                    )
                    .await;
            }
            Op::Command { name, args } if name == "rewind" => {
                return self.rewind_turn(id, token, &args).await;
            }
            Op::Command { name, args } if name == "resume" && !args.trim().is_empty() => {
                return match parse_session(&args) {
                    Ok(session) => {
                        let resume = Resume::Id(session);
                        self.replacing_turn(id, token, "resume", resume, SessionEndReason::Other)
                            .await
                    }
                    Err(message) => {
                        let kind = TurnKind::Failed {
                            command: name,
                            message,
                        };
                        self.turn(id, token, kind).await;
                        true
                    }
                };
            }
            Op::Command { name, args } => {
                self.turn(id, token, TurnKind::Command { name, args }).await;
            }
            Op::Compact { focus } => {
                let kind = TurnKind::Command {
                    name: "compact".to_owned(),
                    args: focus,
                };
                self.turn(id, token, kind).await;
            }
            Op::Clear => return self.replace(id, Resume::New, SessionEndReason::Clear).await,
            Op::Resume(session) => {
                return self
                    .replace(id, Resume::Id(session), SessionEndReason::Other)
                    .await;
            }
            Op::Rewind { to, scope, force } => {
                return self.rewind_with(id, &to, scope, force).await.0;
            }
            Op::RewindPoints => {
                let points = self.conversation.rewinds.points();
                self.events.emit_for(id, SessionEvent::RewindPoints(points));
            }
            Op::SetModel(model) => self.set_model(id, &model),
            Op::SetThinking(budget) => {
                let next = budget.filter(|b| *b > 0).map(|budget_tokens| {
                    tine_api_client::ThinkingConfig::Enabled { budget_tokens }
                });
                self.conversation.engine.set_thinking(next);
                self.events
                    .emit_for(id, SessionEvent::ThinkingChanged(next.is_some()));
            }
            Op::McpRestart(server) => {
                self.events.set_current(Some(id));
                commands::mcp_restart(&mut self.conversation, &server).await;
                self.events.set_current(None);
            }
            Op::McpToggle { server, enabled } => {
                self.events.set_current(Some(id));
                commands::mcp_toggle(&mut self.conversation, &server, enabled).await;
                self.events.set_current(None);
            }
            Op::FlushBackground => {
                let started = self.conversation.pipeline.flush();
                tracing::debug!(started, "idle: deferred background work started");
            }
            Op::AwaySummary => crate::away::start(
                self.conversation.away.as_ref(),
                self.conversation.engine.messages(),
                &self.events,
                id,
                &self.shared.token,
            ),
            Op::Speculate(draft) => {
                if let Some(speculator) = &mut self.conversation.speculator {
                    speculator.start(draft, self.conversation.pipeline.slot().get());
                }
            }
            Op::NotifyIdle => self.conversation.notify_idle(),
            // Done at once by the handle, or ending the session (`run`).
            Op::Interrupt
            | Op::Answer { .. }
            | Op::SetPermissionMode(_)
            | Op::StopTask(_)
            | Op::BackgroundAgents
            | Op::Abort
            | Op::Finish
            | Op::Shutdown(_) => {}
        }
        true
    }

    fn failed(&self, id: OpId, message: String) {
        self.events.emit_for(id, SessionEvent::OpFailed { message });
    }

    /// `Op::SetModel`: from the next request on, and for the conversations after this one.
    fn set_model(&mut self, id: OpId, model: &str) {
        let model = match model.trim() {
            // An Agent SDK app's "default" (initialize's first model): the session's own.
            "default" => self.started_model.clone(),
            model => resolve_model_alias(model),
        };
        if model.is_empty() {
            return self.failed(id, "name a model: opus, sonnet, haiku or a model id".into());
        }
        self.conversation.engine.set_model(model.clone());
        self.conversation.info.model = model.clone();
        self.template.model = Some(model.clone());
        self.events.emit_for(id, SessionEvent::ModelChanged(model));
        self.events
            .emit_for(id, SessionEvent::Usage(self.conversation.usage_report()));
    }

    /// A turn: `TurnStarted`, its events, exactly one `TurnEnded` (then the status line's
    /// figures), all naming `id`.
    async fn turn(&mut self, id: OpId, token: CancellationToken, kind: TurnKind) {
        {
            let mut turns = self.shared.turns();
            if let Some(position) = turns.queued.iter().position(|(queued, _)| *queued == id) {
                turns.queued.remove(position);
            }
            turns.running = Some((id, token.clone()));
        }
        self.events.set_current(Some(id));
        self.events.emit(SessionEvent::TurnStarted);
        let end = if token.is_cancelled() {
            self.conversation.end(TurnOutcome::Interrupted, None)
        } else {
            match kind {
                TurnKind::Prompt(prompt) => {
                    // The files and directories it `@`-mentions go with it, as Read output.
                    let conv = &self.conversation;
                    let (text, warnings) = crate::command_inline::attach_mentions(
                        &conv.engine,
                        &conv.permissions,
                        &prompt,
                        &token,
                    )
                    .await;
                    for warning in warnings {
                        conv.emit(SessionEvent::Notice(crate::protocol::Notice::warning(
                            warning,
                        )));
                    }
                    let content = [tine_api_client::ContentBlock::text(text)];
                    self.conversation
                        .run_content_turn(&prompt, &content, token)
                        .await
                }
                TurnKind::Report(prompt) => self.conversation.run_turn(&prompt, token).await,
                TurnKind::Content(content) => {
                    let text = prompt_text(&content);
                    self.conversation
                        .run_content_turn(&text, &content, token)
                        .await
                }
                TurnKind::Failed { command, message } => {
                    self.events.emit(SessionEvent::CommandOutput(CommandOutput {
                        command,
                        text: message.clone(),
                        is_error: true,
                        data: serde_json::Value::Null,
                    }));
                    self.conversation.end(TurnOutcome::Failed { message }, None)
                }
                TurnKind::Command { name, args } => {
                    let end = commands::run(&mut self.conversation, &name, &args, token).await;
                    // `/model NAME` and `/clear` act on the session, not only the engine.
                    self.after_command(id, &name, &args).await;
                    end
                }
            }
        };
        self.conversation.after_turn();
        self.shared.turns().running = None;
        self.events.emit(SessionEvent::TurnEnded(end));
        self.events
            .emit(SessionEvent::Usage(self.conversation.usage_report()));
        self.events.set_current(None);
        // An agent it started, or sent to the background, may report.
        self.armed = true;
    }

    /// What a command changed beyond the conversation: `/model NAME` holds for the next
    /// conversation too.
    async fn after_command(&mut self, id: OpId, name: &str, args: &str) {
        if name == "model" && !args.trim().is_empty() {
            let model = self.conversation.engine.config().model.clone();
            self.conversation.info.model = model.clone();
            self.template.model = Some(model.clone());
            self.events.emit_for(id, SessionEvent::ModelChanged(model));
        }
    }

    /// Background agents ended: their reports are a turn of the session's own.
    async fn report_turn(&mut self, notifications: Vec<TaskNotification>) {
        let id = self.shared.next_op();
        let token = self.shared.token.child_token();
        let reports = notifications
            .iter()
            .map(|n| AgentReport {
                id: n.task_id.clone(),
                description: n.description.clone(),
                state: n.state.clone(),
            })
            .collect();
        self.events
            .emit_for(id, SessionEvent::AgentReports(reports));
        let prompt = crate::agents::notifications_prompt(&notifications);
        self.turn(id, token, TurnKind::Report(prompt)).await;
    }

    /// `Op::Finish`: background agents still running report as further turns, within the
    /// drain grace (past it they are stopped and their stops reported), then the end.
    async fn finish(mut self, id: OpId, reply: Option<oneshot::Sender<ShutdownReport>>) {
        let until = tokio::time::Instant::now() + self.drain_grace;
        let tasks: TaskRegistry = self.conversation.tasks.clone();
        while !self.shared.token.is_cancelled() {
            let Some(notifications) = tasks.next_notifications(until).await else {
                break;
            };
            if self.shared.token.is_cancelled() {
                break;
            }
            self.report_turn(notifications).await;
        }
        self.shutdown(Some(id), reply, SessionEndReason::Other)
            .await;
    }

    /// The session's end: turns still queued end as interrupted, then the conversation closes
    /// and `ShutdownComplete` is the last event.
    async fn shutdown(
        mut self,
        id: Option<OpId>,
        reply: Option<oneshot::Sender<ShutdownReport>>,
        reason: SessionEndReason,
    ) {
        let queued: Vec<OpId> = self
            .shared
            .turns()
            .queued
            .drain(..)
            .map(|(id, _)| id)
            .collect();
        for queued in queued {
            self.events.emit_for(queued, SessionEvent::TurnStarted);
            let end = self.conversation.end(TurnOutcome::Interrupted, None);
            self.events.emit_for(queued, SessionEvent::TurnEnded(end));
        }
        if let Some((task, stop)) = self.watcher.take() {
            stop.cancel();
            task.abort();
        }
        let report = self.conversation.close(reason).await;
        let event = SessionEvent::ShutdownComplete(report.clone());
        match id {
            Some(id) => self.events.emit_for(id, event),
            None => self.events.emit_free(event),
        };
        self.events.end();
        if let Some(reply) = reply {
            let _ = reply.send(report);
        }
    }
}

/// What a turn runs.
enum TurnKind {
    /// A prompt sent (`Op::Prompt`): its `@` mentions are attached.
    Prompt(String),
    /// Background agents' reports: a prompt of the session's own, sent as it is.
    Report(String),
    /// A prompt of content blocks.
    Content(Vec<tine_api_client::ContentBlock>),
    Command {
        name: String,
        args: String,
    },
    /// A command that cannot run, said as its output.
    Failed {
        command: String,
        message: String,
    },
}

/// The text of a prompt's blocks, joined by blank lines.
fn prompt_text(content: &[tine_api_client::ContentBlock]) -> String {
    content
        .iter()
        .filter_map(|block| match block {
            tine_api_client::ContentBlock::Text(block) => Some(block.text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// Puts an assembled conversation in place: the stuck-model asker for interactive sessions,
/// then `Configured`, the history of a resumed conversation, and start-up's notices, naming
/// `id` (the op that asked for it; none at the session's start).
fn open(
    mut assembled: Assembled,
    shared: &Arc<Shared>,
    events: &Emitter,
    drain_grace: Duration,
    id: Option<OpId>,
) -> Conversation {
    let turn: std::sync::Weak<dyn crate::stuck::RunningTurn> = Arc::downgrade(shared) as _;
    assembled.permissions.set_running(turn.clone());
    let interactive = assembled.permissions.is_interactive();
    crate::stuck::install(
        &mut assembled.engine,
        interactive,
        Arc::clone(&shared.live().stuck),
        turn,
        events,
    );
    let emit = |msg| match id {
        Some(id) => events.emit_for(id, msg),
        None => events.emit_free(msg),
    };
    emit(SessionEvent::Configured(assembled.info.clone()));
    if let Some(history) = assembled.history.take() {
        emit(SessionEvent::History(history));
    }
    for notice in std::mem::take(&mut assembled.notices) {
        emit(SessionEvent::Notice(notice));
    }
    Conversation::new(assembled, shared.token.clone(), events.clone(), drain_grace)
}

/// A deadline nobody reaches: while the session lives it waits for agents as long as they
/// run.
fn far_future() -> tokio::time::Instant {
    tokio::time::Instant::now() + Duration::from_secs(365 * 24 * 3_600)
}

/// The id of a conversation to resume, as `/resume ID` spells it.
pub(crate) fn parse_session(text: &str) -> Result<SessionId, String> {
    SessionId::parse(text.trim()).map_err(|e| e.to_string())
}
