//! `--permission-prompt-tool mcp__SERVER__TOOL`: headless, a call the rules would ask a person
//! about goes to this MCP tool instead, as in Claude Code. Its input is `{"tool_name", "input",
//! "tool_use_id"}`; its text answer is JSON, `{"behavior": "allow", "updatedInput": {...}}`
//! (the call runs with that input; without one, as asked) or `{"behavior": "deny", "message":
//! "..."}` (the model reads the message). Anything else (an error result, text that is not
//! such JSON) is a denial saying so: fail closed. Deny rules are decided before: the tool is
//! only asked what a person would have been.

use std::sync::Arc;

use serde_json::{Value, json};
use tine_query_loop::{CheckedCall, PermissionOutcome};
use tine_tools::{Tool, ToolContext, run_tool};

/// The tool named `name` among `tools`, or why it cannot answer asks.
pub(crate) fn find(tools: &[Arc<dyn Tool>], name: &str) -> Result<Arc<dyn Tool>, String> {
    if let Some(tool) = tools.iter().find(|t| t.name() == name) {
        return Ok(Arc::clone(tool));
    }
    let mcp: Vec<&str> = tools
        .iter()
        .map(|t| t.name())
        .filter(|n| n.starts_with("mcp__"))
        .collect();
    let available = if mcp.is_empty() {
        "none (configure the server with --mcp-config)".to_owned()
    } else {
        mcp.join(", ")
    };
    Err(format!(
        "MCP tool {name} (passed via --permission-prompt-tool) not found. Available MCP tools: \
         {available}"
    ))
}

/// Asks `prompt_tool` whether `tool` may run with `input`.
pub(crate) async fn ask(
    prompt_tool: &dyn Tool,
    tool: &dyn Tool,
    input: &Value,
    ctx: &ToolContext,
) -> PermissionOutcome {
    let tool_use_id = ctx
        .ext::<CheckedCall>()
        .map(|call| call.tool_use_id.clone())
        .unwrap_or_default();
    let question = json!({
        "tool_name": tool.name(),
        "input": input,
        "tool_use_id": tool_use_id,
    });
    let output = run_tool(prompt_tool, question, ctx).await;
    let name = prompt_tool.name();
    if output.is_error {
        return PermissionOutcome::Deny {
            reason: format!(
                "the permission prompt tool {name} failed, so the call was not run: {}",
                output.content
            ),
        };
    }
    answer_of(name, &output.content, input)
}

/// The outcome `text` (the tool's answer) gives.
fn answer_of(name: &str, text: &str, input: &Value) -> PermissionOutcome {
    let invalid = |why: &str| PermissionOutcome::Deny {
        reason: format!(
            "the permission prompt tool {name} answered {why}, so the call was not run \
             (expected {{\"behavior\": \"allow\", \"updatedInput\": {{...}}}} or \
             {{\"behavior\": \"deny\", \"message\": \"...\"}})"
        ),
    };
    let Ok(answer) = serde_json::from_str::<Value>(text.trim()) else {
        return invalid("with text that is not JSON");
    };
    match answer.get("behavior").and_then(Value::as_str) {
        Some("allow") => match answer.get("updatedInput") {
            None | Some(Value::Null) => PermissionOutcome::Allow {
                updated_input: Some(input.clone()),
            },
            Some(updated @ Value::Object(_)) => PermissionOutcome::Allow {
                updated_input: Some(updated.clone()),
            },
            Some(_) => invalid("with an updatedInput that is not an object"),
        },
        Some("deny") => PermissionOutcome::Deny {
            reason: answer
                .get("message")
                .and_then(Value::as_str)
                .filter(|m| !m.trim().is_empty())
                .map(str::to_owned)
                .unwrap_or_else(|| format!("denied by the permission prompt tool {name}")),
        },
        _ => invalid("without a behavior of \"allow\" or \"deny\""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_allow_with_input_deny_with_message_or_a_denial() {
        let input = json!({"command": "ls"});
        assert_eq!(
            answer_of(
                "p",
                r#"{"behavior":"allow","updatedInput":{"command":"ls -a"}}"#,
                &input
            ),
            PermissionOutcome::Allow {
                updated_input: Some(json!({"command": "ls -a"}))
            }
        );
        assert_eq!(
            answer_of("p", r#"{"behavior":"allow"}"#, &input),
            PermissionOutcome::Allow {
                updated_input: Some(input.clone())
            }
        );
        assert_eq!(
            answer_of("p", r#"{"behavior":"deny","message":"no ls"}"#, &input),
            PermissionOutcome::Deny {
                reason: "no ls".into()
            }
        );
        for bad in [
            "yes",
            r#"{"behavior":"maybe"}"#,
            r#"{"behavior":"allow","updatedInput":3}"#,
        ] {
            assert!(
                matches!(answer_of("p", bad, &input), PermissionOutcome::Deny { .. }),
                "{bad}"
            );
        }
    }
}
