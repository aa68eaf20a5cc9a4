//! The questions a session has open (permission requests, stuck models, MCP elicitations),
//! each waiting for its answer by [`QuestionId`]: one kind of slot for all three, shared by
//! the asker (which waits) and the handle (which answers at once, beside the running turn).

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use tokio::sync::oneshot;

use crate::error::AnswerError;
use crate::protocol::QuestionId;

/// Open questions whose answers are `A`s.
pub(crate) struct OpenQuestions<A> {
    pending: Mutex<HashMap<QuestionId, oneshot::Sender<A>>>,
}

impl<A> Default for OpenQuestions<A> {
    fn default() -> Self {
        Self {
            pending: Mutex::default(),
        }
    }
}

impl<A> OpenQuestions<A> {
    fn pending(&self) -> std::sync::MutexGuard<'_, HashMap<QuestionId, oneshot::Sender<A>>> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Opens question `id`; its answer comes on the receiver (dropped: withdrawn).
    pub(crate) fn open(&self, id: QuestionId) -> oneshot::Receiver<A> {
        let (tx, rx) = oneshot::channel();
        self.pending().insert(id, tx);
        rx
    }

    /// Hands `answer` to whoever waits for question `id`; refused when it is not open
    /// (answered already, withdrawn, or never asked).
    pub(crate) fn answer(&self, id: QuestionId, answer: A) -> Result<(), AnswerError> {
        let sender = self.pending().remove(&id).ok_or(AnswerError::Unknown(id))?;
        // The asker may have given up meanwhile (its turn was interrupted).
        sender.send(answer).map_err(|_| AnswerError::Unknown(id))
    }

    /// Question `id` is over (answered, or its asker gave up).
    pub(crate) fn close(&self, id: QuestionId) {
        self.pending().remove(&id);
    }

    /// Withdraws every open question: each asker wakes to an answer that never comes.
    pub(crate) fn withdraw_all(&self) {
        self.pending().clear();
    }
}
