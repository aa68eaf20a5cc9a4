//! [`Session::start`] and the [`SessionHandle`]: the submission side of the session. The
//! session itself runs on its own task (see `actor`); the handle queues submissions for it and
//! does what cannot wait for the running turn (interrupt, permission answers, the mode) on
//! state they share.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use tine_permissions::PermissionMode;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::actor::{Actor, Op};
use crate::assemble::{SessionSummary, assemble};
use crate::error::{AnswerError, ModeError, SessionClosed, StartError, StuckAnswerError};
use crate::event::{SessionEvent, ShutdownReport};
use crate::hooks::SessionEndReason;
use crate::options::SessionOptions;
use crate::permission::Permissions;
use crate::stuck::{StuckAsker, StuckQuestions};
use crate::submission::{PermissionAnswer, PermissionId, StuckId, Submission, SubmissionId};
use crate::tasks::{StopTaskError, Stoppable, StoppedTask};
use tine_memory::AutoMemory;
use tine_query_loop::StuckDecision;
use tine_tools::BackgroundTasks;

/// The entry point: `Session::start(options)`.
pub struct Session;

impl Session {
    /// Assembles the session (settings, permissions, tools, context, memory, the forks' parent
    /// and the stop-hook pipeline, the engine; see `assemble`) and starts its task. Returns the
    /// handle to submit to and the channel its events arrive on, in order, starting with the
    /// notices of start-up (settings warnings, ...).
    ///
    /// The channel is unbounded on purpose: the loop reports events synchronously, and a slow
    /// front end must neither lose a text delta nor hold the model's stream up. After
    /// [`SessionHandle::shutdown`] returns, every event of the session is in the channel, and
    /// it closes.
    pub async fn start(
        options: SessionOptions,
    ) -> Result<(SessionHandle, mpsc::UnboundedReceiver<SessionEvent>), StartError> {
        let (events_tx, events_rx) = mpsc::unbounded_channel();
        let token = CancellationToken::new();
        let drain_grace = options.drain_grace;
        let mut assembled = assemble(options, &token, &events_tx).await?;
        for notice in &assembled.notices {
            let _ = events_tx.send(SessionEvent::Notice(notice.clone()));
        }
        let shared = Arc::new(Shared {
            token,
            tasks: assembled.tasks.clone(),
            drain_grace,
            turns: Mutex::new(Turns::default()),
            next_submission: AtomicU64::new(1),
            permissions: Arc::clone(&assembled.permissions),
            stuck: Arc::default(),
            closing: AtomicBool::new(false),
            elicitations: assembled.mcp.as_ref().and_then(|m| m.elicitations.clone()),
        });
        // A person decides whether a stuck model goes on; headless, the turn stops.
        if assembled.permissions.is_interactive() {
            assembled
                .engine
                .set_repeated_failure_handler(Arc::new(StuckAsker {
                    shared: Arc::downgrade(&shared),
                    events: events_tx.clone(),
                }));
        }
        let summary = assembled.summary.clone();
        let shells = assembled
            .engine
            .config()
            .tool_context
            .as_ref()
            .map(|context| (*context.ext_or_default::<BackgroundTasks>()).clone());
        let stoppable = Stoppable {
            tasks: assembled.tasks.clone(),
            shells: shells.clone(),
            dream: assembled.memory.as_ref().and_then(AutoMemory::dream_job),
        };
        let (ops_tx, ops_rx) = mpsc::unbounded_channel();
        let actor = Actor::new(assembled, Arc::clone(&shared), events_tx, drain_grace);
        tokio::spawn(actor.run(ops_rx));
        Ok((
            SessionHandle {
                ops: ops_tx,
                shared,
                summary,
                shells,
                stoppable,
            },
            events_rx,
        ))
    }
}

/// The submissions waiting and the one running, each with its turn's token (a child of the
/// session's).
#[derive(Default)]
pub(crate) struct Turns {
    pub running: Option<(SubmissionId, CancellationToken)>,
    pub queued: VecDeque<(SubmissionId, CancellationToken)>,
}

/// What the handle and the session's task share.
pub(crate) struct Shared {
    /// The session's token: cancelling it ends the running turn, every fork and background
    /// job. Each turn runs on a child of it.
    pub token: CancellationToken,
    pub turns: Mutex<Turns>,
    next_submission: AtomicU64,
    pub permissions: Arc<Permissions>,
    /// Open questions about a stuck model.
    pub stuck: Arc<StuckQuestions>,
    /// Set by shutdown: nothing more is accepted.
    closing: AtomicBool,
    /// Background agents and their notifications.
    pub tasks: tine_fork_runtime::TaskRegistry,
    /// How long a front end waits for background work at its end.
    pub drain_grace: std::time::Duration,
    /// MCP servers' open questions to the person (interactive sessions with servers).
    pub elicitations: Option<Arc<crate::elicitation::Elicitations>>,
}

impl Shared {
    pub(crate) fn turns(&self) -> std::sync::MutexGuard<'_, Turns> {
        self.turns.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Talks to a running session. Dropping it shuts the session down as
/// [`SessionHandle::shutdown`] does, without waiting.
pub struct SessionHandle {
    ops: mpsc::UnboundedSender<Op>,
    shared: Arc<Shared>,
    summary: SessionSummary,
    /// The main thread's background shells (`run_in_background`), shared with its tools.
    shells: Option<BackgroundTasks>,
    /// What [`SessionHandle::stop_task`] can stop.
    stoppable: Stoppable,
}

impl SessionHandle {
    /// What the session is: id, cwd, model, tools, permission mode at start, transcript.
    pub fn summary(&self) -> &SessionSummary {
        &self.summary
    }

    /// Queues `submission`; it runs after the ones before it. Its events carry the returned
    /// id, from `TurnStarted` to exactly one `TurnEnded`.
    pub fn submit(&self, submission: Submission) -> Result<SubmissionId, SessionClosed> {
        if self.shared.closing.load(Ordering::SeqCst) {
            return Err(SessionClosed);
        }
        let id = SubmissionId(self.shared.next_submission.fetch_add(1, Ordering::Relaxed));
        let token = self.shared.token.child_token();
        self.shared.turns().queued.push_back((id, token));
        if self.ops.send(Op::Submit { id, submission }).is_err() {
            self.shared
                .turns()
                .queued
                .retain(|(queued, _)| *queued != id);
            return Err(SessionClosed);
        }
        Ok(id)
    }

    /// Stops the running turn (its request, its tools, its pending permission requests),
    /// or, when none runs yet, the next submission about to start. Never background work:
    /// the memory extraction of an earlier turn goes on, and later turns' forks still run.
    /// The turn ends with `TurnOutcome::Interrupted`.
    pub fn interrupt(&self) {
        let turns = self.shared.turns();
        if let Some((_, token)) = &turns.running {
            token.cancel();
        } else if let Some((_, token)) = turns.queued.front() {
            token.cancel();
        }
        // An MCP server's question belongs to the call being interrupted.
        if let Some(elicitations) = &self.shared.elicitations {
            elicitations.withdraw_all();
        }
    }

    /// Answers a [`crate::ElicitationQuestion`]: the server that asked reads it at once
    /// (`Accept` with the form's values, `Decline`, or `Cancel`).
    pub fn answer_elicitation(
        &self,
        id: crate::ElicitationId,
        answer: crate::ElicitationAnswer,
    ) -> Result<(), crate::ElicitationAnswerError> {
        match &self.shared.elicitations {
            Some(elicitations) => elicitations.answer(id, answer),
            None => Err(crate::ElicitationAnswerError(id)),
        }
    }

    /// Answers a [`crate::PermissionRequest`]; the call it holds goes on at once.
    pub fn answer_permission(
        &self,
        id: PermissionId,
        answer: PermissionAnswer,
    ) -> Result<(), AnswerError> {
        self.shared.permissions.answer(id, answer)
    }

    /// The person has gone idle (no prompt for a while): what background jobs put off (a
    /// batched memory extraction) starts now, after the running turn if there is one, so the
    /// memories are saved without waiting for the exit. Its events come as usual.
    pub fn flush_background(&self) {
        let _ = self.ops.send(Op::FlushIdle);
    }

    /// The person is back after an idle gap: a [`crate::SessionEvent::AwaySummary`] follows
    /// (after the running turn, if any) unless the away summary is off or there is nothing to
    /// summarize. The request runs beside the session's work, never blocking a turn.
    pub fn away_summary(&self) {
        let _ = self.ops.send(Op::AwaySummary);
    }

    /// The person paused typing `draft`: when speculation is on, the read-only tools it
    /// needs run now, and their results go with the prompt if it is submitted as drafted.
    pub fn speculate(&self, draft: impl Into<String>) {
        let _ = self.ops.send(Op::Speculate {
            draft: draft.into(),
        });
    }

    /// The person has not typed since the last turn ended, for about a minute (Claude Code's
    /// 60 s): Notification hooks run with `notification_type` `idle_prompt` and the message
    /// "tine is waiting for your input". A front end calls it once per idle stretch.
    pub fn notify_idle(&self) {
        let _ = self.ops.send(Op::NotifyIdle);
    }

    /// Stops running background task `id` at once, also while a turn runs: a sub-agent (an
    /// `a_…` id; as TaskStop does: its end is reported to the model as it comes), a
    /// background shell (killed), or the dream (`auto_dream` or its task id: the fork is
    /// aborted and the consolidation lock's mtime rolled back, so the next eligible session
    /// consolidates).
    pub fn stop_task(&self, id: &str) -> Result<StoppedTask, StopTaskError> {
        self.stoppable.stop(id)
    }

    /// Sends the sub-agents running in the foreground to the background (Ctrl+B): their Agent
    /// calls return at once, the turn goes on, and each reports with a notification when it
    /// ends (see [`SessionHandle::agent_reports`]). Returns how many were sent.
    pub fn background_agents(&self) -> usize {
        self.shared.tasks.send_agents_to_background()
    }

    /// The main thread's background shells (Bash `run_in_background`): a front end lists
    /// them and waits for their ends (`BackgroundTasks::list`, `wait`). `None` for a session
    /// without a tool context.
    pub fn background_shells(&self) -> Option<BackgroundTasks> {
        self.shells.clone()
    }

    /// Answers a [`crate::StuckQuestion`]: `KeepGoing` lets the model go on (the count starts
    /// again; `--max-turns` stays the cap), `Stop` ends the turn.
    pub fn answer_stuck(
        &self,
        id: StuckId,
        decision: StuckDecision,
    ) -> Result<(), StuckAnswerError> {
        self.shared.stuck.answer(id, decision)
    }

    /// Changes the permission mode for the calls from now on (a
    /// `SessionEvent::PermissionModeChanged` confirms it). Refused for bypassPermissions when
    /// settings disable it.
    pub fn set_permission_mode(&self, mode: PermissionMode) -> Result<(), ModeError> {
        self.shared.permissions.set_mode(mode)
    }

    /// The mode the next call is judged in.
    pub fn permission_mode(&self) -> PermissionMode {
        self.shared.permissions.mode()
    }

    /// The session's tasks (background agents): their states, outputs and notifications.
    pub fn tasks(&self) -> &tine_fork_runtime::TaskRegistry {
        &self.shared.tasks
    }

    /// The reports of background agents, as the prompt of a further turn: waits until one or
    /// more have ended (all that have are in it) and returns `None` once none is running
    /// (nothing to wait for). Past `until`, the agents still running are stopped and their
    /// stops reported. Headless `-p` submits each as a turn, so its result includes them.
    pub async fn agent_reports(&self, until: tokio::time::Instant) -> Option<String> {
        let notifications = self.shared.tasks.next_notifications(until).await?;
        Some(crate::agents::notifications_prompt(&notifications))
    }

    /// How long the session waits for background work at its end (the drain bound).
    pub fn drain_grace(&self) -> std::time::Duration {
        self.shared.drain_grace
    }

    /// The session's token. Cancelling it (a signal) ends everything at once: the running
    /// turn, queued submissions, forks and background jobs; shutdown then waits for nothing.
    pub fn cancellation(&self) -> CancellationToken {
        self.shared.token.clone()
    }

    /// Ends the session: the running turn is interrupted and queued submissions end as
    /// interrupted; SessionEnd hooks run (not after a cancellation); then the work background
    /// jobs deferred is started (a batched memory extraction) and every job is waited for
    /// within the options' `drain_grace`, those
    /// still running after it cancelled (and aborted if they do not stop). The transcript is
    /// complete when this returns, and every event is in the channel.
    pub async fn shutdown(self) -> ShutdownReport {
        self.shutdown_because(SessionEndReason::Other).await
    }

    /// [`SessionHandle::shutdown`], telling SessionEnd hooks why (`/clear`, the user leaving
    /// the prompt, ...).
    pub async fn shutdown_because(self, reason: SessionEndReason) -> ShutdownReport {
        self.shared.closing.store(true, Ordering::SeqCst);
        {
            let turns = self.shared.turns();
            for (_, token) in turns.running.iter().chain(turns.queued.iter()) {
                token.cancel();
            }
        }
        let (reply, report) = oneshot::channel();
        if self.ops.send(Op::Shutdown { reason, reply }).is_err() {
            return ShutdownReport::default();
        }
        report.await.unwrap_or_default()
    }
}
