//! [`Session::start`] and the [`SessionHandle`]: the submission side of the protocol. The
//! session runs on its own task (`actor`); [`SessionHandle::submit`] names each [`Op`] and
//! either queues it for that task (turns and the changes between them) or carries it out at
//! once on the state they share (`shared`: an interruption, an answer, the mode, a task
//! stopped), so a running turn never holds those up.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::actor::{Actor, Queued};
use crate::assemble::assemble;
use crate::emit::Emitter;
use crate::error::{SessionClosed, StartError};
use crate::options::SessionOptions;
use crate::protocol::{Answer, Event, Op, OpId, SessionEndReason, SessionEvent, ShutdownReport};
use crate::shared::{Live, Shared};

/// The entry point: `Session::start(options)`.
pub struct Session;

impl Session {
    /// Assembles the session (settings, permissions, tools, context, memory, the forks' parent
    /// and the stop-hook pipeline, the engine; see `assemble`) and starts its task. Returns the
    /// handle to submit to and the channel its events arrive on, in order:
    /// [`SessionEvent::Configured`] first, then the history of a resumed conversation, then
    /// the notices of start-up (settings warnings, ...).
    ///
    /// The channel is unbounded on purpose: the loop reports events synchronously, and a slow
    /// front end must neither lose a text delta nor hold the model's stream up. After
    /// [`SessionEvent::ShutdownComplete`] every event of the session is in the channel, and it
    /// closes.
    pub async fn start(
        options: SessionOptions,
    ) -> Result<(SessionHandle, mpsc::UnboundedReceiver<Event>), StartError> {
        let (events_tx, events_rx) = mpsc::unbounded_channel();
        let emitter = Emitter::new(events_tx);
        let token = CancellationToken::new();
        let template = options.template();
        let assembled = assemble(options, &token, &emitter).await?;
        let shared = Arc::new(Shared::new(token, Live::of(&assembled)));
        let (ops_tx, ops_rx) = mpsc::unbounded_channel();
        let actor = Actor::new(assembled, template, Arc::clone(&shared), emitter.clone());
        tokio::spawn(actor.run(ops_rx));
        Ok((
            SessionHandle {
                ops: ops_tx,
                shared,
                emitter,
            },
            events_rx,
        ))
    }
}

/// Talks to a running session: every request is an [`Op`]. Clones talk to the same session;
/// when the last one is dropped, the session shuts down as [`Op::Shutdown`] does, for nobody.
#[derive(Clone)]
pub struct SessionHandle {
    ops: mpsc::UnboundedSender<Queued>,
    shared: Arc<Shared>,
    emitter: Emitter,
}

impl SessionHandle {
    /// Submits `op` and returns the id the events answering it carry (see [`Op`] for what
    /// answers each kind). Refused only when it would be queued after `Op::Finish` or
    /// `Op::Shutdown`.
    pub fn submit(&self, op: Op) -> Result<OpId, SessionClosed> {
        self.submit_with(op, None)
    }

    fn submit_with(
        &self,
        op: Op,
        reply: Option<oneshot::Sender<ShutdownReport>>,
    ) -> Result<OpId, SessionClosed> {
        // Done at once: also while the session finishes (a signal's `Abort`, an answer to a
        // question the last turns ask).
        if !op.is_queued() {
            let id = self.shared.next_op();
            self.at_once(id, op);
            return Ok(id);
        }
        if self.shared.closing.load(Ordering::SeqCst) {
            return Err(SessionClosed);
        }
        let id = self.shared.next_op();
        if matches!(op, Op::Shutdown(_) | Op::Finish) {
            self.shared.closing.store(true, Ordering::SeqCst);
        }
        if let Op::Shutdown(_) = &op {
            // Now: what runs and what waits is interrupted (each still gets its end).
            self.shared.cancel_turns();
        }
        let token = self.shared.token.child_token();
        if op.is_turn() {
            self.shared.turns().queued.push_back((id, token.clone()));
        }
        if self
            .ops
            .send(Queued {
                id,
                op,
                token,
                reply,
            })
            .is_err()
        {
            self.shared
                .turns()
                .queued
                .retain(|(queued, _)| *queued != id);
            return Err(SessionClosed);
        }
        Ok(id)
    }

    /// An op carried out at once, beside the running turn.
    fn at_once(&self, id: OpId, op: Op) {
        let live = self.shared.live();
        let failed = |message: String| {
            self.emitter
                .emit_for(id, SessionEvent::OpFailed { message });
        };
        match op {
            Op::Interrupt => self.shared.interrupt(&live),
            Op::Abort => self.shared.token.cancel(),
            Op::Answer { question, answer } => {
                let answered = match answer {
                    Answer::Permission(answer) => live
                        .permissions
                        .answer(question, answer)
                        .map_err(|e| e.to_string()),
                    Answer::Stuck(decision) => live
                        .stuck
                        .answer(question, decision)
                        .map_err(|e| e.to_string()),
                    Answer::Elicitation(answer) => match &live.elicitations {
                        Some(elicitations) => elicitations
                            .answer(question, answer)
                            .map_err(|e| e.to_string()),
                        None => Err(format!("no open MCP question {question}")),
                    },
                };
                // Withdrawn meanwhile (its turn ended), answered twice, or never asked.
                if let Err(message) = answered {
                    failed(message);
                }
            }
            Op::SetPermissionMode(mode) => match live.permissions.set_mode(mode) {
                Ok(()) => {
                    self.emitter
                        .emit_for(id, SessionEvent::PermissionModeChanged(mode));
                }
                Err(error) => {
                    failed(error.to_string());
                    let current = live.permissions.mode();
                    self.emitter
                        .emit_for(id, SessionEvent::PermissionModeChanged(current));
                }
            },
            Op::StopTask(task) => match live.stoppable.stop(&task) {
                Ok(stopped) => {
                    self.emitter
                        .emit_for(id, SessionEvent::TaskStopped(stopped));
                }
                Err(error) => failed(error.to_string()),
            },
            Op::BackgroundAgents => {
                let moved = live.tasks.send_agents_to_background();
                let text = match moved {
                    0 => "no sub-agent is running in the foreground".to_owned(),
                    1 => "sent the sub-agent to the background; it reports when done".to_owned(),
                    n => format!("sent {n} sub-agents to the background; they report when done"),
                };
                self.emitter.emit_for(
                    id,
                    SessionEvent::Notice(crate::protocol::Notice::info(text)),
                );
            }
            // Queued ones never come here (`Op::is_queued`).
            Op::Prompt(_)
            | Op::Command { .. }
            | Op::Compact { .. }
            | Op::Clear
            | Op::Resume(_)
            | Op::Rewind { .. }
            | Op::SetModel(_)
            | Op::SetThinking(_)
            | Op::McpRestart(_)
            | Op::McpToggle { .. }
            | Op::FlushBackground
            | Op::AwaySummary
            | Op::Speculate(_)
            | Op::NotifyIdle
            | Op::Finish
            | Op::Shutdown(_) => {}
        }
    }

    /// Submits [`Op::Shutdown`] and waits for the session's end: its
    /// [`ShutdownReport`] is also the [`SessionEvent::ShutdownComplete`] event, and every
    /// event is in the channel when this returns.
    pub async fn shutdown(self) -> ShutdownReport {
        self.shutdown_because(SessionEndReason::Other).await
    }

    /// [`SessionHandle::shutdown`], telling SessionEnd hooks why (`/exit`, ...).
    pub async fn shutdown_because(self, reason: SessionEndReason) -> ShutdownReport {
        self.end_with(Op::Shutdown(reason)).await
    }

    /// Submits [`Op::Finish`] and waits for the session's end (see
    /// [`SessionHandle::shutdown`]).
    pub async fn finish(self) -> ShutdownReport {
        self.end_with(Op::Finish).await
    }

    async fn end_with(self, op: Op) -> ShutdownReport {
        let (reply, report) = oneshot::channel();
        if self.submit_with(op, Some(reply)).is_err() {
            return ShutdownReport::default();
        }
        report.await.unwrap_or_default()
    }
}
