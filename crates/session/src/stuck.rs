//! A stuck model, asked about ([`Approvals::Interactive`](crate::Approvals) only): when the
//! loop sees the same call fail the same way again and again (query-loop's `stuck`), a
//! headless session stops the turn; an interactive one sends a [`StuckQuestion`] and lets the
//! person decide, through [`crate::SessionHandle::answer_stuck`], whether the model goes on.
//! An interruption while the question is open stops the turn (the question ends with it).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, Weak};

use futures::future::BoxFuture;
use tine_query_loop::{RepeatedFailure, RepeatedFailureHandler, StuckDecision};
use tokio::sync::oneshot;

use tine_query_loop::QueryEngine;
use tokio_util::sync::CancellationToken;

use crate::emit::Emitter;
use crate::error::StuckAnswerError;
use crate::protocol::{QuestionId, SessionEvent, StuckQuestion};

/// Where the asker finds the running turn's token (an interruption ends the question).
pub(crate) trait RunningTurn: Send + Sync {
    /// The running turn's token, if one runs.
    fn running_token(&self) -> Option<CancellationToken>;
}

/// The open questions, shared by the loop's handler and the handle.
#[derive(Default)]
pub(crate) struct StuckQuestions {
    pending: Mutex<HashMap<QuestionId, oneshot::Sender<StuckDecision>>>,
}

impl StuckQuestions {
    pub(crate) fn answer(
        &self,
        id: QuestionId,
        decision: StuckDecision,
    ) -> Result<(), StuckAnswerError> {
        let sender = self
            .pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&id)
            .ok_or(StuckAnswerError(id))?;
        sender.send(decision).map_err(|_| StuckAnswerError(id))
    }

    fn open(&self, id: QuestionId) -> oneshot::Receiver<StuckDecision> {
        let (tx, rx) = oneshot::channel();
        self.pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id, tx);
        rx
    }

    fn close(&self, id: QuestionId) {
        self.pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&id);
    }
}

/// The engine's handler: asks, and waits for the answer or the running turn's interruption.
pub(crate) struct StuckAsker {
    /// Weak: the engine that holds this handler must not keep the session's state alive.
    pub turn: Weak<dyn RunningTurn>,
    pub questions: Arc<StuckQuestions>,
    pub events: Emitter,
}

impl RepeatedFailureHandler for StuckAsker {
    fn on_repeated_failure<'a>(
        &'a self,
        failure: &'a RepeatedFailure,
    ) -> BoxFuture<'a, StuckDecision> {
        Box::pin(async move {
            let Some(turn) = self.turn.upgrade().and_then(|t| t.running_token()) else {
                return StuckDecision::Stop;
            };
            let questions = &self.questions;
            let id = self.events.next_question();
            let answer = questions.open(id);
            let sent = self.events.emit(SessionEvent::StuckModel(StuckQuestion {
                id,
                tool: failure.tool.clone(),
                input: failure.input.clone(),
                error: failure.error_excerpt(),
                repeats: failure.repeats,
            }));
            if !sent {
                questions.close(id);
                return StuckDecision::Stop;
            }
            let decision = tokio::select! {
                decision = answer => decision.unwrap_or(StuckDecision::Stop),
                () = turn.cancelled() => StuckDecision::Stop,
            };
            questions.close(id);
            decision
        })
    }
}

/// A person decides whether a stuck model goes on (interactive sessions); headless, the turn
/// stops.
pub(crate) fn install(
    engine: &mut QueryEngine,
    interactive: bool,
    questions: Arc<StuckQuestions>,
    turn: Weak<dyn RunningTurn>,
    events: &Emitter,
) {
    if interactive {
        engine.set_repeated_failure_handler(Arc::new(StuckAsker {
            turn,
            questions,
            events: events.clone(),
        }));
    }
}
