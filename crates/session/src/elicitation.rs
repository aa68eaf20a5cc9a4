//! MCP elicitation in an interactive session: a server's `elicitation/create` (a question to
//! the person, asked while one of its tools runs) becomes a [`SessionEvent::Elicitation`]; the
//! front end shows it and answers through [`crate::SessionHandle::answer_elicitation`], and the
//! answer goes back to the server. Headless sessions install no asker, so tine does not
//! advertise the capability and declines (nobody is there to ask). An interruption of the
//! running turn withdraws the open questions (the server reads "cancel"), as does the end of
//! the session.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use futures::future::BoxFuture;
use tine_mcp::{ElicitationAnswer, ElicitationHandler, ElicitationRequest};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use crate::emit::Emitter;
use crate::protocol::{ElicitationQuestion, QuestionId, SessionEvent};

/// Why an answer to an elicitation was refused: answered already, withdrawn
/// (its turn was interrupted, the server gave up), or never asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("no open MCP question {0}")]
pub struct ElicitationAnswerError(pub QuestionId);

/// The open questions, shared by the servers' asker and the handle.
#[derive(Default)]
pub(crate) struct Elicitations {
    pending: Mutex<HashMap<QuestionId, oneshot::Sender<ElicitationAnswer>>>,
}

impl Elicitations {
    pub(crate) fn answer(
        &self,
        id: QuestionId,
        answer: ElicitationAnswer,
    ) -> Result<(), ElicitationAnswerError> {
        let sender = self
            .pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&id)
            .ok_or(ElicitationAnswerError(id))?;
        sender.send(answer).map_err(|_| ElicitationAnswerError(id))
    }

    /// Withdraws every open question (the running turn was interrupted): each server reads
    /// "cancel", and the front end is told to take the question off the screen.
    pub(crate) fn withdraw_all(&self) {
        // Dropping the senders wakes the askers, which report the withdrawal.
        self.pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }

    fn open(&self, id: QuestionId) -> oneshot::Receiver<ElicitationAnswer> {
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

/// The servers' elicitation handler: asks the front end through an event and waits for its
/// answer, a withdrawal, or the session's end.
pub(crate) struct ElicitationAsker {
    pub questions: Arc<Elicitations>,
    pub events: Emitter,
    pub session: CancellationToken,
}

impl ElicitationHandler for ElicitationAsker {
    fn elicit(&self, request: ElicitationRequest) -> BoxFuture<'static, ElicitationAnswer> {
        let questions = Arc::clone(&self.questions);
        let events = self.events.clone();
        let session = self.session.clone();
        Box::pin(async move {
            let id = events.next_question();
            let answer = questions.open(id);
            let question = ElicitationQuestion {
                id,
                server: request.server,
                message: request.message,
                schema: request.schema,
                url: request.url,
            };
            if !events.emit(SessionEvent::Elicitation(question)) {
                questions.close(id);
                return ElicitationAnswer::Decline;
            }
            // Withdrawn or ended: the server reads "cancel" (the person did not decide).
            let answer = tokio::select! {
                answer = answer => answer.ok(),
                () = session.cancelled() => None,
            };
            questions.close(id);
            match answer {
                Some(answer) => answer,
                None => {
                    let _ = events.emit(SessionEvent::ElicitationWithdrawn { question: id });
                    ElicitationAnswer::Cancel
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::sync::mpsc;

    fn request() -> ElicitationRequest {
        ElicitationRequest {
            server: "srv".into(),
            message: "Which branch?".into(),
            schema: Some(serde_json::json!({"type": "object"})),
            url: None,
        }
    }

    #[tokio::test]
    async fn an_answer_reaches_the_server_and_a_withdrawal_cancels() {
        let questions = Arc::new(Elicitations::default());
        let (events, mut seen) = mpsc::unbounded_channel();
        let asker = ElicitationAsker {
            questions: Arc::clone(&questions),
            events: Emitter::new(events),
            session: CancellationToken::new(),
        };
        let pending = tokio::spawn(asker.elicit(request()));
        let Some(crate::protocol::Event {
            msg: SessionEvent::Elicitation(question),
            ..
        }) = seen.recv().await
        else {
            panic!("no question");
        };
        assert_eq!(question.server, "srv");
        let content = serde_json::json!({"branch": "main"});
        questions
            .answer(
                question.id,
                ElicitationAnswer::Accept(Some(content.clone())),
            )
            .unwrap();
        assert_eq!(
            pending.await.unwrap(),
            ElicitationAnswer::Accept(Some(content))
        );
        assert!(
            questions
                .answer(question.id, ElicitationAnswer::Decline)
                .is_err(),
            "answered twice"
        );

        let pending = tokio::spawn(asker.elicit(request()));
        let Some(crate::protocol::Event {
            msg: SessionEvent::Elicitation(question),
            ..
        }) = seen.recv().await
        else {
            panic!("no second question");
        };
        questions.withdraw_all();
        assert_eq!(pending.await.unwrap(), ElicitationAnswer::Cancel);
        assert!(matches!(
            seen.recv().await,
            Some(crate::protocol::Event { msg: SessionEvent::ElicitationWithdrawn { question: id }, .. }) if id == question.id
        ));
    }
}
