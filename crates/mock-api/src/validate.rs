//! Request validation, with the real API's status codes and wording where known.

use std::collections::HashSet;

use axum::http::HeaderMap;
use serde_json::Value;

use crate::error::ApiError;
use crate::prompt::content_blocks;

/// The smallest thinking budget the API accepts.
pub const MIN_THINKING_BUDGET: u64 = 1024;

/// Which endpoint a body is for: `count_tokens` takes no `max_tokens`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endpoint {
    Messages,
    CountTokens,
}

/// 401 without a key (`x-api-key` or `Authorization: Bearer`), 400 without `anthropic-version`.
pub fn check_headers(headers: &HeaderMap) -> Result<(), ApiError> {
    let has_key = headers
        .get("x-api-key")
        .is_some_and(|v| !v.as_bytes().is_empty())
        || headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.len() > "Bearer ".len() && v.starts_with("Bearer "));
    if !has_key {
        return Err(ApiError::new(401, "x-api-key header is required"));
    }
    if headers.get("anthropic-version").is_none() {
        return Err(ApiError::invalid("anthropic-version: header is required"));
    }
    Ok(())
}

/// Parses the body as a JSON object.
pub fn parse_body(bytes: &[u8]) -> Result<Value, ApiError> {
    let value: Value = serde_json::from_slice(bytes)
        .map_err(|e| ApiError::invalid(format!("There was an error parsing the body: {e}")))?;
    if !value.is_object() {
        return Err(ApiError::invalid("Input should be a valid dictionary"));
    }
    Ok(value)
}

/// Field and structure checks.
pub fn check_body(body: &Value, endpoint: Endpoint) -> Result<(), ApiError> {
    match body.get("model") {
        Some(Value::String(_)) => {}
        Some(_) => return Err(ApiError::invalid("model: Input should be a valid string")),
        None => return Err(ApiError::invalid("model: Field required")),
    }
    let max_tokens = match body.get("max_tokens") {
        Some(v) => match v.as_u64() {
            Some(n) if n >= 1 => Some(n),
            _ => {
                return Err(ApiError::invalid(
                    "max_tokens: Input should be greater than or equal to 1",
                ));
            }
        },
        None if endpoint == Endpoint::Messages => {
            return Err(ApiError::invalid("max_tokens: Field required"));
        }
        None => None,
    };
    let messages = match body.get("messages") {
        Some(Value::Array(m)) => m,
        Some(_) => return Err(ApiError::invalid("messages: Input should be a valid list")),
        None => return Err(ApiError::invalid("messages: Field required")),
    };
    if messages.is_empty() {
        return Err(ApiError::invalid(
            "messages: at least one message is required",
        ));
    }
    if let Some(system) = body.get("system")
        && !(system.is_string() || system.is_array())
    {
        return Err(ApiError::invalid(
            "system: Input should be a valid string or a list of text blocks",
        ));
    }
    if let Some(tools) = body.get("tools") {
        let Some(tools) = tools.as_array() else {
            return Err(ApiError::invalid("tools: Input should be a valid list"));
        };
        let mut names = HashSet::new();
        for (i, tool) in tools.iter().enumerate() {
            let Some(name) = tool.get("name").and_then(Value::as_str) else {
                return Err(ApiError::invalid(format!("tools.{i}.name: Field required")));
            };
            if !names.insert(name) {
                return Err(ApiError::invalid("tools: Tool names must be unique."));
            }
        }
    }
    check_thinking(body, max_tokens)?;
    for (i, message) in messages.iter().enumerate() {
        match message.get("role").and_then(Value::as_str) {
            Some("user" | "assistant") => {}
            _ => {
                return Err(ApiError::invalid(format!(
                    "messages.{i}.role: Input should be 'user' or 'assistant'"
                )));
            }
        }
        match message.get("content") {
            Some(Value::String(_) | Value::Array(_)) => {}
            Some(_) => {
                return Err(ApiError::invalid(format!(
                    "messages.{i}.content: Input should be a valid list"
                )));
            }
            None => {
                return Err(ApiError::invalid(format!(
                    "messages.{i}.content: Field required"
                )));
            }
        }
    }
    check_tool_pairing(messages)?;
    check_tool_references(body, messages)?;
    check_thinking_blocks(body, messages)
}

/// Every `tool_reference` sits in a `tool_result`'s content and names a deferred tool of the
/// request (`defer_loading: true`), which it loads. (The wording is the mock's.)
fn check_tool_references(body: &Value, messages: &[Value]) -> Result<(), ApiError> {
    let deferred: Vec<&str> = body
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|t| crate::prompt::is_deferred(t))
        .filter_map(|t| t.get("name").and_then(Value::as_str))
        .collect();
    for (i, message) in messages.iter().enumerate() {
        let content = message.get("content").unwrap_or(&Value::Null);
        for (k, block) in content_blocks(content).iter().enumerate() {
            if block_type(block) == Some("tool_reference") {
                return Err(ApiError::invalid(format!(
                    "messages.{i}.content.{k}: `tool_reference` blocks may only appear in the content of a `tool_result` block"
                )));
            }
            for name in crate::prompt::tool_references(block) {
                if !deferred.contains(&name) {
                    return Err(ApiError::invalid(format!(
                        "messages.{i}.content.{k}: `tool_reference` names `{name}`, which is not a tool of this request with `defer_loading: true`"
                    )));
                }
            }
        }
    }
    Ok(())
}

/// The signature the mock gives a thinking block it wrote: `mocksig:` and a hash of the text
/// (FNV-1a, stable across processes), so an altered block is caught when it comes back.
pub fn thinking_signature(thinking: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in thinking.as_bytes() {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{SIGNATURE_PREFIX}{hash:016x}")
}

const SIGNATURE_PREFIX: &str = "mocksig:";

/// Thinking blocks come back as the mock wrote them (a signature of its own must match the
/// text; every signature must be there), and with thinking enabled an assistant message whose
/// tool calls the last message answers must start with its thinking, as the real API requires.
fn check_thinking_blocks(body: &Value, messages: &[Value]) -> Result<(), ApiError> {
    for (i, message) in messages.iter().enumerate() {
        if message.get("role").and_then(Value::as_str) != Some("assistant") {
            continue;
        }
        let content = message.get("content").unwrap_or(&Value::Null);
        for (k, block) in content_blocks(content).iter().enumerate() {
            if block_type(block) != Some("thinking") {
                continue;
            }
            let text = block
                .get("thinking")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let signature = block
                .get("signature")
                .and_then(Value::as_str)
                .unwrap_or_default();
            if signature.is_empty() {
                return Err(ApiError::invalid(format!(
                    "messages.{i}.content.{k}.thinking.signature: Field required"
                )));
            }
            if signature.starts_with(SIGNATURE_PREFIX) && signature != thinking_signature(text) {
                return Err(ApiError::invalid(format!(
                    "messages.{i}.content.{k}: Invalid `signature` in `thinking` block"
                )));
            }
        }
    }
    let enabled = body
        .get("thinking")
        .and_then(|t| t.get("type"))
        .and_then(Value::as_str)
        == Some("enabled");
    let answers_tools = messages.last().is_some_and(|m| {
        content_blocks(m.get("content").unwrap_or(&Value::Null))
            .iter()
            .any(|b| block_type(b) == Some("tool_result"))
    });
    if enabled && answers_tools && messages.len() >= 2 {
        let i = messages.len() - 2;
        let blocks = content_blocks(messages[i].get("content").unwrap_or(&Value::Null));
        let first = blocks.first().and_then(|b| block_type(b)).unwrap_or("text");
        if !matches!(first, "thinking" | "redacted_thinking") {
            return Err(ApiError::invalid(format!(
                "messages.{i}.content.0.type: Expected `thinking` or `redacted_thinking`, but found `{first}`. When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable `thinking`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
            )));
        }
    }
    Ok(())
}

fn check_thinking(body: &Value, max_tokens: Option<u64>) -> Result<(), ApiError> {
    let Some(thinking) = body.get("thinking") else {
        return Ok(());
    };
    match thinking.get("type").and_then(Value::as_str) {
        Some("enabled") => {
            let Some(budget) = thinking.get("budget_tokens").and_then(Value::as_u64) else {
                return Err(ApiError::invalid(
                    "thinking.enabled.budget_tokens: Field required",
                ));
            };
            if budget < MIN_THINKING_BUDGET {
                return Err(ApiError::invalid(format!(
                    "thinking.enabled.budget_tokens: Input should be greater than or equal to {MIN_THINKING_BUDGET}"
                )));
            }
            if max_tokens.is_some_and(|max| budget >= max) {
                return Err(ApiError::invalid(
                    "`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size",
                ));
            }
            Ok(())
        }
        Some("disabled" | "adaptive") => Ok(()),
        _ => Err(ApiError::invalid(
            "thinking: Input tag does not match any of the expected tags: 'enabled', 'disabled', 'adaptive'",
        )),
    }
}

fn block_type(block: &Value) -> Option<&str> {
    block.get("type").and_then(Value::as_str)
}

/// Every `tool_use` answered in the very next user message, every `tool_result` answering a
/// `tool_use` of the message just before.
fn check_tool_pairing(messages: &[Value]) -> Result<(), ApiError> {
    let mut previous_uses: Vec<String> = Vec::new();
    for (i, message) in messages.iter().enumerate() {
        let role = message.get("role").and_then(Value::as_str);
        let content = message.get("content").unwrap_or(&Value::Null);
        let blocks = content_blocks(content);
        // tool_result blocks here must answer the previous message's tool_use blocks.
        let mut answered = HashSet::new();
        for (k, block) in blocks.iter().enumerate() {
            if block_type(block) != Some("tool_result") {
                continue;
            }
            let id = block
                .get("tool_use_id")
                .and_then(Value::as_str)
                .unwrap_or_default();
            if role != Some("user") || !previous_uses.iter().any(|u| u == id) {
                return Err(ApiError::invalid(format!(
                    "messages.{i}.content.{k}: unexpected `tool_use_id` found in `tool_result` blocks: {id}. Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
                )));
            }
            answered.insert(id.to_string());
        }
        if !previous_uses.is_empty() {
            let missing: Vec<&str> = previous_uses
                .iter()
                .filter(|u| !answered.contains(u.as_str()))
                .map(String::as_str)
                .collect();
            if !missing.is_empty() {
                return Err(ApiError::invalid(format!(
                    "messages.{}: `tool_use` ids were found without `tool_result` blocks immediately after: {}. Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
                    i - 1,
                    missing.join(", ")
                )));
            }
        }
        previous_uses = if role == Some("assistant") {
            blocks
                .iter()
                .filter(|b| block_type(b) == Some("tool_use"))
                .map(|b| {
                    b.get("id")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string()
                })
                .collect()
        } else {
            Vec::new()
        };
    }
    if !previous_uses.is_empty() {
        return Err(ApiError::invalid(format!(
            "messages.{}: `tool_use` ids were found without `tool_result` blocks immediately after: {}. Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
            messages.len() - 1,
            previous_uses.join(", ")
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn with_messages(messages: Value) -> Value {
        json!({"model": "m", "max_tokens": 10, "messages": messages})
    }

    #[test]
    fn unanswered_tool_use_is_refused() {
        let b = with_messages(json!([
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {}}]},
            {"role": "user", "content": "never mind"},
        ]));
        let err = check_body(&b, Endpoint::Messages).unwrap_err();
        assert!(err.message.starts_with("messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1."), "{}", err.message);
    }

    #[test]
    fn stray_tool_result_is_refused() {
        let b = with_messages(json!([
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_9", "content": "x"}]},
        ]));
        let err = check_body(&b, Endpoint::Messages).unwrap_err();
        assert!(err.message.starts_with("messages.0.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_9."), "{}", err.message);
    }

    #[test]
    fn answered_tool_use_passes() {
        let b = with_messages(json!([
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "x"}]},
        ]));
        check_body(&b, Endpoint::Messages).unwrap();
    }

    #[test]
    fn thinking_budget_rules() {
        let mut b = with_messages(json!([{"role": "user", "content": "x"}]));
        b["max_tokens"] = json!(2000);
        b["thinking"] = json!({"type": "enabled", "budget_tokens": 1000});
        let err = check_body(&b, Endpoint::Messages).unwrap_err();
        assert!(err.message.contains("greater than or equal to 1024"));
        b["thinking"] = json!({"type": "enabled", "budget_tokens": 2000});
        let err = check_body(&b, Endpoint::Messages).unwrap_err();
        assert!(
            err.message
                .starts_with("`max_tokens` must be greater than `thinking.budget_tokens`")
        );
        b["thinking"] = json!({"type": "enabled", "budget_tokens": 1999});
        check_body(&b, Endpoint::Messages).unwrap();
    }

    #[test]
    fn thinking_blocks_must_come_back_unchanged_and_first() {
        let sig = thinking_signature("plan");
        let turn = |thinking: Value| {
            let mut b = with_messages(json!([
                {"role": "user", "content": "go"},
                {"role": "assistant", "content": [thinking, {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "x"}]},
            ]));
            b["max_tokens"] = json!(4000);
            b["thinking"] = json!({"type": "enabled", "budget_tokens": 2000});
            b
        };
        check_body(
            &turn(json!({"type": "thinking", "thinking": "plan", "signature": sig})),
            Endpoint::Messages,
        )
        .unwrap();
        check_body(
            &turn(json!({"type": "redacted_thinking", "data": "abc"})),
            Endpoint::Messages,
        )
        .unwrap();
        let err = check_body(
            &turn(json!({"type": "thinking", "thinking": "plan!", "signature": sig})),
            Endpoint::Messages,
        )
        .unwrap_err();
        assert_eq!(
            err.message,
            "messages.1.content.0: Invalid `signature` in `thinking` block"
        );
        let err = check_body(
            &turn(json!({"type": "text", "text": "hi"})),
            Endpoint::Messages,
        )
        .unwrap_err();
        assert!(err.message.starts_with("messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `text`."), "{}", err.message);
    }

    #[test]
    fn count_tokens_needs_no_max_tokens() {
        let b = json!({"model": "m", "messages": [{"role": "user", "content": "x"}]});
        check_body(&b, Endpoint::CountTokens).unwrap();
        let err = check_body(&b, Endpoint::Messages).unwrap_err();
        assert_eq!(err.message, "max_tokens: Field required");
    }

    #[test]
    fn a_tool_reference_must_load_a_deferred_tool_from_a_tool_result() {
        let body = |reference: Value, deferred: bool| {
            json!({"model": "m", "max_tokens": 10,
            "tools": [{"name": "mcp__s__add", "input_schema": {"type": "object"}, "defer_loading": deferred}],
            "messages": [
                {"role": "user", "content": "go"},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "ToolSearch", "input": {}}]},
                {"role": "user", "content": [reference]},
            ]})
        };
        let result = |name: &str| {
            json!({"type": "tool_result", "tool_use_id": "t1",
                "content": [{"type": "tool_reference", "tool_name": name}]})
        };
        check_body(&body(result("mcp__s__add"), true), Endpoint::Messages).unwrap();
        let err = check_body(&body(result("mcp__s__add"), false), Endpoint::Messages).unwrap_err();
        assert!(
            err.message.contains("names `mcp__s__add`"),
            "{}",
            err.message
        );
        let err = check_body(&body(result("other"), true), Endpoint::Messages).unwrap_err();
        assert!(
            err.message.starts_with("messages.2.content.0:"),
            "{}",
            err.message
        );
        let stray = json!({"type": "tool_reference", "tool_name": "mcp__s__add"});
        let mut b = body(result("mcp__s__add"), true);
        b["messages"][2]["content"]
            .as_array_mut()
            .unwrap()
            .push(stray);
        let err = check_body(&b, Endpoint::Messages).unwrap_err();
        assert!(
            err.message
                .contains("only appear in the content of a `tool_result`")
        );
    }
}
