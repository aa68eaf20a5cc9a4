//! One tine session an editor opened (`session/new`, `session/load`): its handle, the prompts
//! and mode changes waiting for their answers, and the pump that turns its events into
//! `session/update`s and answers them in order (every update of a turn is sent before the
//! prompt's answer).

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};

use agent_client_protocol::v1::schema::{
    PromptResponse, SessionId, SessionNotification, SetSessionModeResponse, StopReason,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Client, Error};
use tine_api_client::StopReason as ModelStop;
use tine_query_loop::Terminal;
use tine_session::{Event, OpId, SessionEvent, SessionHandle, TurnEnd, TurnOutcome};
use tokio::sync::mpsc::UnboundedReceiver;

use crate::jobs::Job;
use crate::permission;
use crate::updates::Translator;

/// Sends `job` to the editor now.
fn dispatch(
    job: Job,
    connection: &ConnectionTo<Client>,
    session: &SessionId,
    translator: &Translator,
) {
    match job {
        Job::Read { path, reply } => crate::editor::send_read(connection, session, path, reply),
        Job::Write { path, text, reply } => {
            crate::editor::send_write(connection, session, path, text, reply);
        }
        Job::Run(run) => crate::terminal::start(run, connection, session, translator),
    }
}

/// How long a file job waits for its call to be announced.
const ANNOUNCE_WAIT: std::time::Duration = std::time::Duration::from_millis(50);

/// What waits for the session's answer.
#[derive(Default)]
struct Waiting {
    /// Prompts, by their turn's op.
    prompts: HashMap<OpId, Responder<PromptResponse>>,
    /// Prompts the editor cancelled: they end `cancelled` however the turn ended.
    cancelled: HashSet<OpId>,
    /// `session/set_mode` requests, by their op.
    modes: HashMap<OpId, Responder<SetSessionModeResponse>>,
    /// Background tasks (sub-agents, shells) started while a prompt runs: a cancel stops
    /// them with the turn.
    turn_tasks: HashSet<String>,
}

/// A session the editor opened.
pub(crate) struct Live {
    /// The id the editor knows it by (the transcript's).
    pub(crate) id: SessionId,
    /// The session.
    pub(crate) handle: SessionHandle,
    waiting: Mutex<Waiting>,
}

impl Live {
    pub(crate) fn new(id: SessionId, handle: SessionHandle) -> Arc<Self> {
        Arc::new(Self {
            id,
            handle,
            waiting: Mutex::new(Waiting::default()),
        })
    }

    fn waiting(&self) -> MutexGuard<'_, Waiting> {
        self.waiting
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Submits `op` and keeps `responder` for the answer its turn gives.
    pub(crate) fn prompt(&self, op: tine_session::Op, responder: Responder<PromptResponse>) {
        let mut waiting = self.waiting();
        match self.handle.submit(op) {
            Ok(id) => {
                waiting.prompts.insert(id, responder);
            }
            Err(closed) => {
                drop(waiting);
                let _ = responder.respond_with_error(failure(closed.to_string()));
            }
        }
    }

    /// Submits a mode change and keeps `responder` for its confirmation.
    pub(crate) fn set_mode(
        &self,
        mode: tine_session::PermissionMode,
        responder: Responder<SetSessionModeResponse>,
    ) {
        let mut waiting = self.waiting();
        match self
            .handle
            .submit(tine_session::Op::SetPermissionMode(mode))
        {
            Ok(id) => {
                waiting.modes.insert(id, responder);
            }
            Err(closed) => {
                drop(waiting);
                let _ = responder.respond_with_error(failure(closed.to_string()));
            }
        }
    }

    /// `session/cancel`: the running turn (and any queued prompt) ends as cancelled. Harmless
    /// when nothing runs.
    pub(crate) fn cancel(&self) {
        let mut waiting = self.waiting();
        let pending: Vec<OpId> = waiting.prompts.keys().copied().collect();
        waiting.cancelled.extend(pending);
        let tasks: Vec<String> = waiting.turn_tasks.drain().collect();
        drop(waiting);
        let _ = self.handle.submit(tine_session::Op::Interrupt);
        for task in tasks {
            let _ = self.handle.submit(tine_session::Op::StopTask(task));
        }
    }

    /// Turns the session's events into updates and answers until the session ends, and
    /// sends the session's requests for the editor's files: each only after every event the
    /// session emitted before it (the call that reads a file is announced before the read).
    pub(crate) async fn pump(
        self: Arc<Self>,
        mut events: UnboundedReceiver<Event>,
        mut files: UnboundedReceiver<Job>,
        connection: ConnectionTo<Client>,
        mut translator: Translator,
    ) {
        let mut files_open = true;
        loop {
            tokio::select! {
                biased;
                event = events.recv() => match event {
                    Some(event) => {
                        if !self.event(event, &connection, &mut translator) {
                            break;
                        }
                    }
                    None => break,
                },
                job = files.recv(), if files_open => match job {
                    Some(job) => {
                        let ended = self
                            .settle(&job, &mut events, &connection, &mut translator)
                            .await;
                        dispatch(job, &connection, &self.id, &translator);
                        if ended {
                            break;
                        }
                    }
                    None => files_open = false,
                },
            }
        }
        // The session ended: nothing waiting will be answered by it.
        let mut waiting = self.waiting();
        for (_, responder) in waiting.prompts.drain() {
            let _ = responder.respond(PromptResponse::new(StopReason::Cancelled));
        }
    }

    /// Before a file job goes out: every event the session emitted first, and, while a prompt
    /// runs, a short wait for the call naming the file to be announced (the loop's events
    /// reach the session a moment after its tools start; a sub-agent's or a fork's calls are
    /// never announced, so the wait is bounded by [`ANNOUNCE_WAIT`]). `true` once the session
    /// has ended.
    async fn settle(
        &self,
        job: &Job,
        events: &mut UnboundedReceiver<Event>,
        connection: &ConnectionTo<Client>,
        translator: &mut Translator,
    ) -> bool {
        let drain = |events: &mut UnboundedReceiver<Event>, translator: &mut Translator| {
            while let Ok(event) = events.try_recv() {
                if !self.event(event, connection, translator) {
                    return true;
                }
            }
            false
        };
        if drain(events, translator) {
            return true;
        }
        if job.announced(translator) || self.waiting().prompts.is_empty() {
            return false;
        }
        let deadline = tokio::time::Instant::now() + ANNOUNCE_WAIT;
        loop {
            tokio::select! {
                event = events.recv() => match event {
                    Some(event) => {
                        if !self.event(event, connection, translator) {
                            return true;
                        }
                        if drain(events, translator) {
                            return true;
                        }
                        if job.announced(translator) {
                            return false;
                        }
                    }
                    None => return true,
                },
                () = tokio::time::sleep_until(deadline) => return false,
            }
        }
    }

    /// One event of the session: its updates, the ask or answer it makes. `false` once the
    /// session has ended.
    fn event(
        &self,
        event: Event,
        connection: &ConnectionTo<Client>,
        translator: &mut Translator,
    ) -> bool {
        for update in translator.updates(&event.msg) {
            let notification = SessionNotification::new(self.id.clone(), update);
            if connection.send_notification(notification).is_err() {
                tracing::debug!("the editor is gone; an update was dropped");
            }
        }
        // Asked after its call was announced (just above, if the ask came first).
        if let SessionEvent::PermissionRequest(request) = &event.msg {
            tokio::spawn(permission::ask(
                connection.clone(),
                self.id.clone(),
                self.handle.clone(),
                request.clone(),
            ));
        }
        if let SessionEvent::Task(task) = &event.msg {
            let mut waiting = self.waiting();
            if task.state == tine_session::TaskState::Running && !waiting.prompts.is_empty() {
                waiting.turn_tasks.insert(task.id.clone());
            } else if task.state != tine_session::TaskState::Running {
                waiting.turn_tasks.remove(&task.id);
            }
        }
        let Some(id) = event.id else { return true };
        match &event.msg {
            SessionEvent::TurnEnded(end) => self.turn_ended(id, end, translator),
            SessionEvent::PermissionModeChanged(_) => {
                if let Some(responder) = self.waiting().modes.remove(&id) {
                    let _ = responder.respond(SetSessionModeResponse::new());
                }
            }
            SessionEvent::OpFailed { message } => {
                if let Some(responder) = self.waiting().modes.remove(&id) {
                    let _ =
                        responder.respond_with_error(Error::new(INVALID_PARAMS, message.clone()));
                }
            }
            SessionEvent::ShutdownComplete(_) => return false,
            _ => {}
        }
        true
    }

    fn turn_ended(&self, id: OpId, end: &TurnEnd, translator: &Translator) {
        let (responder, cancelled) = {
            let mut waiting = self.waiting();
            let cancelled = waiting.cancelled.remove(&id);
            if cancelled {
                // What the turn started that the cancel did not know of yet stops now.
                for task in waiting.turn_tasks.drain() {
                    let _ = self.handle.submit(tine_session::Op::StopTask(task));
                }
            } else if waiting.prompts.len() <= 1 {
                // The turn ended as it should: what it left running in the background stays.
                waiting.turn_tasks.clear();
            }
            (waiting.prompts.remove(&id), cancelled)
        };
        let Some(responder) = responder else { return };
        let answer = if cancelled {
            Ok(StopReason::Cancelled)
        } else {
            stop_reason(end, translator.last_stop.as_ref())
        };
        let _ = match answer {
            Ok(reason) => responder.respond(PromptResponse::new(reason)),
            Err(message) => responder.respond_with_error(failure(message)),
        };
    }
}

/// JSON-RPC's "internal error", and "invalid params".
const INTERNAL_ERROR: i32 = -32603;
pub(crate) const INVALID_PARAMS: i32 = -32602;

/// An internal error saying what went wrong.
pub(crate) fn failure(message: impl Into<String>) -> Error {
    Error::new(INTERNAL_ERROR, message)
}

/// Why a turn stopped, as ACP says it; a turn that failed for another reason is an error the
/// editor shows.
fn stop_reason(end: &TurnEnd, last: Option<&ModelStop>) -> Result<StopReason, String> {
    match &end.outcome {
        TurnOutcome::Interrupted => Ok(StopReason::Cancelled),
        TurnOutcome::Completed => Ok(match last {
            Some(ModelStop::MaxTokens) => StopReason::MaxTokens,
            Some(ModelStop::Refusal) => StopReason::Refusal,
            _ => StopReason::EndTurn,
        }),
        TurnOutcome::Failed { message } => match end.result.as_ref().map(|turn| &turn.terminal) {
            Some(Terminal::MaxTurns { .. }) => Ok(StopReason::MaxTurnRequests),
            // A command's failure or a blocked prompt was shown as the agent's message.
            None => Ok(StopReason::EndTurn),
            Some(_) => Err(message.clone()),
        },
    }
}
