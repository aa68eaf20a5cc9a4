//! The Agent SDK's `can_use_tool` (`--permission-prompt-tool stdio`): a call the permission
//! engine would ask about goes to the app as a `control_request`, and its answer comes back to
//! the session as the question's answer. Deny rules still win before anything is asked: the
//! session only asks what the rules leave open.

use serde_json::{Value, json};
use tine_session::{
    AlwaysAllow, PermissionAnswer, PermissionMode, PermissionRequest, PermissionRule,
    PermissionUpdate, PersistDestination, RuleBehavior,
};

/// The `can_use_tool` request for `request`.
pub(crate) fn can_use_tool(request: &PermissionRequest) -> Value {
    let file_tool = matches!(
        request.tool.as_str(),
        "Read" | "Write" | "Edit" | "MultiEdit" | "NotebookEdit"
    );
    // Claude Code's shapes: an edit's `setMode` for the session, a command's `addRules`.
    let suggestions: Vec<Value> = match &request.always {
        None => Vec::new(),
        Some(AlwaysAllow::Mode(mode)) => vec![json!({
            "type": "setMode",
            "mode": mode.as_str(),
            "destination": "session",
        })],
        Some(AlwaysAllow::Rules { rules, destination }) => vec![json!({
            "type": "addRules",
            "rules": rules.iter().map(rule_value).collect::<Vec<_>>(),
            "behavior": "allow",
            "destination": destination_name(*destination),
        })],
    };
    json!({
        "subtype": "can_use_tool",
        "tool_name": request.tool,
        "input": request.input,
        "permission_suggestions": suggestions,
        "blocked_path": file_tool.then(|| request.target.clone()),
        "decision_reason": request.reason,
        "tool_use_id": request.tool_use_id,
    })
}

/// The SDK's name of a destination (what [`update`] reads back).
fn destination_name(destination: PersistDestination) -> &'static str {
    match destination {
        PersistDestination::Local => "localSettings",
        PersistDestination::Project => "projectSettings",
        PersistDestination::User => "userSettings",
        PersistDestination::Session => "session",
    }
}

fn rule_value(rule: &PermissionRule) -> Value {
    match &rule.content {
        Some(content) => json!({"toolName": rule.tool, "ruleContent": content}),
        None => json!({"toolName": rule.tool}),
    }
}

/// The session's answer for the app's `can_use_tool` answer (`Err`: no answer came: the app
/// failed or closed its input, which denies the call).
pub(crate) fn answer(result: Result<Value, String>) -> PermissionAnswer {
    let value = match result {
        Ok(value) => value,
        Err(error) => {
            return PermissionAnswer::Refuse {
                message: format!("The app did not approve this call: {error}"),
                interrupt: false,
            };
        }
    };
    match value.get("behavior").and_then(Value::as_str) {
        Some("allow") => PermissionAnswer::Allow {
            updated_input: value.get("updatedInput").filter(|v| v.is_object()).cloned(),
            updates: value
                .get("updatedPermissions")
                .and_then(Value::as_array)
                .map(|updates| updates.iter().filter_map(update).collect())
                .unwrap_or_default(),
        },
        Some("deny") => PermissionAnswer::Refuse {
            message: value
                .get("message")
                .and_then(Value::as_str)
                .filter(|m| !m.trim().is_empty())
                .unwrap_or("The app denied this call.")
                .to_owned(),
            interrupt: value.get("interrupt").and_then(Value::as_bool) == Some(true),
        },
        _ => PermissionAnswer::Refuse {
            message: "The app's answer was neither allow nor deny, so the call was denied."
                .to_owned(),
            interrupt: false,
        },
    }
}

/// One of the app's `updatedPermissions`; the kinds tine cannot apply are logged and skipped.
fn update(value: &Value) -> Option<PermissionUpdate> {
    let text = |key: &str| value.get(key).and_then(Value::as_str);
    let destination = match text("destination") {
        Some("userSettings") => PersistDestination::User,
        Some("projectSettings") => PersistDestination::Project,
        Some("localSettings") => PersistDestination::Local,
        _ => PersistDestination::Session,
    };
    match text("type") {
        Some("addRules") => {
            let behavior = match text("behavior") {
                Some("deny") => RuleBehavior::Deny,
                Some("ask") => RuleBehavior::Ask,
                _ => RuleBehavior::Allow,
            };
            let rules = value
                .get("rules")
                .and_then(Value::as_array)
                .map(|rules| {
                    rules
                        .iter()
                        .filter_map(|rule| {
                            let tool = rule.get("toolName").and_then(Value::as_str)?;
                            Some(match rule.get("ruleContent").and_then(Value::as_str) {
                                Some(content) => PermissionRule::with_content(tool, content),
                                None => PermissionRule::tool(tool),
                            })
                        })
                        .collect()
                })
                .unwrap_or_default();
            Some(PermissionUpdate::AddRules {
                rules,
                behavior,
                destination,
            })
        }
        Some("setMode") => {
            let mode = serde_json::from_value::<PermissionMode>(value.get("mode")?.clone()).ok()?;
            Some(PermissionUpdate::SetMode(mode))
        }
        other => {
            tracing::warn!(?other, "a permission update tine does not apply; skipped");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use tine_session::QuestionId;

    use super::*;

    fn request(tool: &str, always: Option<AlwaysAllow>) -> PermissionRequest {
        PermissionRequest {
            id: QuestionId(1),
            tool: tool.into(),
            input: json!({}),
            target: "x".into(),
            reason: String::new(),
            always,
            preview: None,
            tool_use_id: None,
        }
    }

    #[test]
    fn an_edit_suggests_accept_edits_for_the_session_and_a_command_its_rules() {
        let edit = can_use_tool(&request(
            "Edit",
            Some(AlwaysAllow::Mode(PermissionMode::AcceptEdits)),
        ));
        assert_eq!(
            edit["permission_suggestions"],
            json!([{"type": "setMode", "mode": "acceptEdits", "destination": "session"}])
        );
        let bash = can_use_tool(&request(
            "Bash",
            AlwaysAllow::saved(vec![PermissionRule::with_content("Bash", "touch:*")]),
        ));
        let suggestion = &bash["permission_suggestions"][0];
        assert_eq!(
            suggestion,
            &json!({"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "touch:*"}],
                    "behavior": "allow", "destination": "localSettings"})
        );
        // What the app sends back is what was suggested.
        assert_eq!(
            update(suggestion),
            Some(PermissionUpdate::AddRules {
                rules: vec![PermissionRule::with_content("Bash", "touch:*")],
                behavior: RuleBehavior::Allow,
                destination: PersistDestination::Local,
            })
        );
        assert_eq!(
            update(&edit["permission_suggestions"][0]),
            Some(PermissionUpdate::SetMode(PermissionMode::AcceptEdits))
        );
        assert_eq!(
            can_use_tool(&request("Bash", None))["permission_suggestions"],
            json!([])
        );
    }

    #[test]
    fn allow_carries_the_new_input_and_rules_deny_its_words() {
        let allow = answer(Ok(json!({
            "behavior": "allow",
            "updatedInput": {"file_path": "x", "content": "new"},
            "updatedPermissions": [{"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "npm test:*"}],
                                    "behavior": "allow", "destination": "session"},
                                   {"type": "setMode", "mode": "acceptEdits", "destination": "session"},
                                   {"type": "addDirectories", "directories": ["/x"], "destination": "session"}],
        })));
        let PermissionAnswer::Allow {
            updated_input,
            updates,
        } = allow
        else {
            panic!("{allow:?}");
        };
        assert_eq!(updated_input.unwrap()["content"], "new");
        assert_eq!(updates.len(), 2, "the unsupported kind is skipped");
        assert_eq!(
            answer(Ok(
                json!({"behavior": "deny", "message": "no writes", "interrupt": true})
            )),
            PermissionAnswer::Refuse {
                message: "no writes".into(),
                interrupt: true
            }
        );
        assert!(matches!(
            answer(Err("closed".into())),
            PermissionAnswer::Refuse {
                interrupt: false,
                ..
            }
        ));
        assert!(matches!(
            answer(Ok(json!({"behavior": "maybe"}))),
            PermissionAnswer::Refuse { .. }
        ));
    }
}
