//! A call the permission engine asks about, asked of the editor with `session/request_permission`:
//! allow once, allow always (what the TUI's "don't ask again" does: the rule saved in the
//! project's local settings, or for an edit acceptEdits for the session), or reject (the model reads the refusal). A plan approval offers leaving plan mode
//! for acceptEdits or for default. A cancelled question is a rejection.

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    PermissionOption, PermissionOptionKind, RequestPermissionOutcome, RequestPermissionRequest,
    SessionId,
};
use tine_session::{
    AlwaysAllow, Answer, Op, PermissionAnswer, PermissionMode, PermissionRequest,
    PersistDestination, SessionHandle,
};

use crate::tool_calls;

const ALLOW_ONCE: &str = "allow_once";
const ALLOW_ALWAYS: &str = "allow_always";
const REJECT_ONCE: &str = "reject_once";

/// The question for `request`.
pub(crate) fn question(
    session: &SessionId,
    request: &PermissionRequest,
) -> RequestPermissionRequest {
    let id = request
        .tool_use_id
        .clone()
        .unwrap_or_else(|| request.id.to_string());
    let preview = request
        .preview
        .as_ref()
        .map(|preview| (preview.before.as_str(), preview.after.as_str()));
    let call = tool_calls::asked(&id, &request.tool, &request.input, preview);
    let (once, always, reject) = if request.tool == "ExitPlanMode" {
        (
            "Yes, and manually approve edits".to_owned(),
            "Yes, and auto-accept edits".to_owned(),
            "No, keep planning".to_owned(),
        )
    } else {
        let always = match &request.always {
            Some(AlwaysAllow::Mode(PermissionMode::AcceptEdits)) => {
                "Allow all edits during this session".to_owned()
            }
            Some(
                always @ (AlwaysAllow::Mode(_)
                | AlwaysAllow::Rules {
                    destination: PersistDestination::Session,
                    ..
                }),
            ) => format!("Allow {always} during this session"),
            Some(always @ AlwaysAllow::Rules { .. }) => format!("Always allow {always}"),
            None => "Always allow".to_owned(),
        };
        ("Allow".to_owned(), always, "Reject".to_owned())
    };
    let options = vec![
        PermissionOption::new(ALLOW_ONCE, once, PermissionOptionKind::AllowOnce),
        PermissionOption::new(ALLOW_ALWAYS, always, PermissionOptionKind::AllowAlways),
        PermissionOption::new(REJECT_ONCE, reject, PermissionOptionKind::RejectOnce),
    ];
    RequestPermissionRequest::new(session.clone(), call, options)
}

/// The session's answer to the editor's choice.
pub(crate) fn answer(outcome: &RequestPermissionOutcome) -> PermissionAnswer {
    let RequestPermissionOutcome::Selected(selected) = outcome else {
        return PermissionAnswer::Deny { feedback: None };
    };
    // For a plan: once leaves plan mode for default, always for acceptEdits.
    match &*selected.option_id.0 {
        ALLOW_ONCE => PermissionAnswer::Once,
        ALLOW_ALWAYS => PermissionAnswer::Always,
        _ => PermissionAnswer::Deny { feedback: None },
    }
}

/// Asks the editor and answers the session; an editor that cannot be asked rejects.
pub(crate) async fn ask(
    connection: ConnectionTo<Client>,
    session: SessionId,
    handle: SessionHandle,
    request: PermissionRequest,
) {
    let outcome = match connection
        .send_request(question(&session, &request))
        .block_task()
        .await
    {
        Ok(response) => response.outcome,
        Err(error) => {
            tracing::warn!(%error, "session/request_permission failed; the call is rejected");
            RequestPermissionOutcome::Cancelled
        }
    };
    let answer = answer(&outcome);
    // The question may be gone (the turn was cancelled): the session says so, harmlessly.
    let _ = handle.submit(Op::Answer {
        question: request.id,
        answer: Answer::Permission(answer),
    });
}

#[cfg(test)]
mod tests {
    use agent_client_protocol::v1::schema::SelectedPermissionOutcome;
    use serde_json::json;
    use tine_session::QuestionId;

    use super::*;

    fn request(tool: &str) -> PermissionRequest {
        PermissionRequest {
            id: QuestionId(3),
            tool: tool.into(),
            input: json!({"file_path": "/p/a.txt", "content": "new"}),
            target: "/p/a.txt".into(),
            reason: "Write asks".into(),
            always: AlwaysAllow::saved(vec!["Write(/p/**)".parse().unwrap()]),
            preview: None,
            tool_use_id: Some("toolu_9".into()),
        }
    }

    #[test]
    fn the_question_offers_once_always_and_reject_for_the_call() {
        let wire = serde_json::to_value(question(&SessionId::new("s"), &request("Write"))).unwrap();
        assert_eq!(wire["sessionId"], "s");
        assert_eq!(wire["toolCall"]["toolCallId"], "toolu_9");
        assert_eq!(wire["toolCall"]["kind"], "edit");
        let kinds: Vec<&str> = wire["options"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["kind"].as_str().unwrap())
            .collect();
        assert_eq!(kinds, ["allow_once", "allow_always", "reject_once"]);
        assert_eq!(wire["options"][1]["name"], "Always allow Write(/p/**)");
        // An edit in the project: acceptEdits for the session, as in the TUI.
        let edit = PermissionRequest {
            always: Some(AlwaysAllow::Mode(PermissionMode::AcceptEdits)),
            ..request("Write")
        };
        let wire = serde_json::to_value(question(&SessionId::new("s"), &edit)).unwrap();
        assert_eq!(
            wire["options"][1]["name"],
            "Allow all edits during this session"
        );
    }

    #[test]
    fn each_choice_is_its_answer_and_a_cancel_rejects() {
        let pick = |id: &str| {
            RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(id.to_owned()))
        };
        assert_eq!(answer(&pick(ALLOW_ONCE)), PermissionAnswer::Once);
        assert_eq!(answer(&pick(ALLOW_ALWAYS)), PermissionAnswer::Always);
        assert_eq!(
            answer(&pick(REJECT_ONCE)),
            PermissionAnswer::Deny { feedback: None }
        );
        assert_eq!(
            answer(&RequestPermissionOutcome::Cancelled),
            PermissionAnswer::Deny { feedback: None }
        );
        let plan =
            serde_json::to_value(question(&SessionId::new("s"), &request("ExitPlanMode"))).unwrap();
        assert_eq!(plan["options"][1]["name"], "Yes, and auto-accept edits");
    }
}
