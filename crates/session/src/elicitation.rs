//! MCP elicitation in an interactive session: a server's `elicitation/create` (a question to
//! the person, asked while one of its tools runs) becomes a [`SessionEvent::Elicitation`]; the
//! front end shows it and answers with `Op::Answer`, and the
//! answer goes back to the server. Headless sessions install no asker, so tine does not
//! advertise the capability and declines (nobody is there to ask). An interruption of the
//! running turn withdraws the open questions (the server reads "cancel"), as does the end of
//! the session.

use std::sync::Arc;

use futures::future::BoxFuture;
use tine_mcp::{ElicitationAnswer, ElicitationHandler, ElicitationRequest};
use tokio_util::sync::CancellationToken;

use crate::emit::Emitter;
use crate::protocol::{ElicitationQuestion, SessionEvent};
use crate::questions::OpenQuestions;

/// The open questions of the MCP servers, shared by their asker and the handle.
pub(crate) type Elicitations = OpenQuestions<ElicitationAnswer>;

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
