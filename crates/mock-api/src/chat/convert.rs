//! A chat-completions request: its checks (with OpenAI's wording), its conversion into the
//! Messages form the scenario rules run on, and its prompt as the prefix cache sees it.
//!
//! Conversion: `system` and `developer` messages → `system`; `user` content (a string, or
//! `text` and `image_url` parts) → user blocks; assistant `content` and `tool_calls` → text and
//! `tool_use` blocks (arguments parsed); `tool` messages → `tool_result` blocks, joined with the
//! user message that follows into one user message; `tools` → `{name, description,
//! input_schema}`; `max_completion_tokens` or `max_tokens` → `max_tokens` (4096 when neither).
//!
//! The prompt: the model, then one block per tool and per message, each the canonical JSON of
//! what the client sent (so a tool call's `arguments` string counts byte for byte: a client
//! that re-serializes arguments differently misses the cache, as it would on vLLM).

use std::collections::HashSet;

use axum::http::HeaderMap;
use serde_json::{Map, Value, json};

use crate::error::ApiError;
use crate::json::{items, str_field};
use crate::prompt::{Prompt, PromptBuilder, Segment};
use crate::tokens::write_canonical;

/// `max_tokens` when the request names no limit.
pub const DEFAULT_MAX_TOKENS: u64 = 4096;

/// The parameters chat completions accepts; anything else is refused as OpenAI refuses it.
const KNOWN_PARAMS: &[&str] = &[
    "audio",
    "frequency_penalty",
    "logit_bias",
    "logprobs",
    "max_completion_tokens",
    "max_tokens",
    "messages",
    "metadata",
    "modalities",
    "model",
    "n",
    "parallel_tool_calls",
    "prediction",
    "presence_penalty",
    "reasoning_effort",
    "response_format",
    "seed",
    "service_tier",
    "stop",
    "store",
    "stream",
    "stream_options",
    "temperature",
    "tool_choice",
    "tools",
    "top_logprobs",
    "top_p",
    "user",
    "web_search_options",
];

/// 401 without `Authorization: Bearer <something>`.
pub fn check_headers(headers: &HeaderMap) -> Result<(), ApiError> {
    let has_key = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .is_some_and(|key| !key.trim().is_empty());
    if has_key {
        return Ok(());
    }
    Err(ApiError::new(
        401,
        "You didn't provide an API key. You need to provide your API key in an Authorization \
         header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
    ))
}

fn invalid(message: impl Into<String>) -> ApiError {
    ApiError::invalid(message)
}

fn role(message: &Value) -> &str {
    str_field(message, "role")
}

/// Field and structure checks, in OpenAI's words where known.
pub fn check_body(body: &Value) -> Result<(), ApiError> {
    let Some(object) = body.as_object() else {
        return Err(invalid("Input should be a valid dictionary"));
    };
    if let Some(unknown) = object.keys().find(|k| !KNOWN_PARAMS.contains(&k.as_str())) {
        return Err(invalid(format!(
            "Unrecognized request argument supplied: {unknown}"
        )));
    }
    if !body.get("model").is_some_and(Value::is_string) {
        return Err(invalid("you must provide a model parameter"));
    }
    let Some(messages) = body.get("messages").and_then(Value::as_array) else {
        return Err(invalid("Missing required parameter: 'messages'."));
    };
    if messages.is_empty() {
        return Err(invalid("[] is too short - 'messages'"));
    }
    for field in ["max_tokens", "max_completion_tokens"] {
        if let Some(v) = body.get(field)
            && v.as_u64().is_none_or(|n| n < 1)
        {
            return Err(invalid(format!(
                "Invalid '{field}': integer below minimum value. Expected a value >= 1."
            )));
        }
    }
    let stream = body.get("stream").and_then(Value::as_bool).unwrap_or(false);
    if body.get("stream_options").is_some() && !stream {
        return Err(invalid(
            "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
        ));
    }
    if let Some(tools) = body.get("tools") {
        let Some(tools) = tools.as_array() else {
            return Err(invalid("Invalid type for 'tools': expected an array."));
        };
        for (i, tool) in tools.iter().enumerate() {
            if tool.get("type").and_then(Value::as_str) != Some("function")
                || tool
                    .pointer("/function/name")
                    .and_then(Value::as_str)
                    .is_none()
            {
                return Err(invalid(format!(
                    "Missing required parameter: 'tools[{i}].function.name'."
                )));
            }
        }
    }
    check_messages(messages)
}

fn check_messages(messages: &[Value]) -> Result<(), ApiError> {
    // Tool call ids of the last assistant message not yet answered.
    let mut awaiting: Vec<String> = Vec::new();
    for (i, message) in messages.iter().enumerate() {
        let role = role(message);
        if !matches!(role, "system" | "developer" | "user" | "assistant" | "tool") {
            return Err(invalid(format!(
                "Invalid value: '{role}'. Supported values are: 'system', 'assistant', 'user', \
                 'tool', and 'developer'. (messages[{i}].role)"
            )));
        }
        if role == "tool" {
            let id = str_field(message, "tool_call_id");
            let Some(at) = awaiting.iter().position(|a| a == id) else {
                return Err(invalid(
                    "Invalid parameter: messages with role 'tool' must be a response to a \
                     preceeding message with 'tool_calls'.",
                ));
            };
            awaiting.remove(at);
            check_content(message, i)?;
            continue;
        }
        if !awaiting.is_empty() {
            return Err(unanswered(&awaiting));
        }
        if role == "assistant" {
            for (k, call) in items(message, "tool_calls").iter().enumerate() {
                let arguments = call
                    .pointer("/function/arguments")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                if serde_json::from_str::<Value>(arguments).is_err() {
                    return Err(invalid(format!(
                        "messages[{i}].tool_calls[{k}].function.arguments is not valid JSON: \
                         {arguments}"
                    )));
                }
                match call.get("id").and_then(Value::as_str) {
                    Some(id) => awaiting.push(id.to_string()),
                    None => {
                        return Err(invalid(format!(
                            "Missing required parameter: 'messages[{i}].tool_calls[{k}].id'."
                        )));
                    }
                }
            }
        } else {
            check_content(message, i)?;
        }
    }
    if !awaiting.is_empty() {
        return Err(unanswered(&awaiting));
    }
    Ok(())
}

/// Tool calls of an assistant message that no tool message answered.
fn unanswered(awaiting: &[String]) -> ApiError {
    invalid(format!(
        "An assistant message with 'tool_calls' must be followed by tool messages responding to \
         each 'tool_call_id'. The following tool_call_ids did not have response messages: {}",
        awaiting.join(", ")
    ))
}

/// `messages[i]` must have `content`, a string or parts.
fn check_content(message: &Value, i: usize) -> Result<(), ApiError> {
    if message
        .get("content")
        .is_some_and(|c| c.is_string() || c.is_array())
    {
        return Ok(());
    }
    Err(invalid(format!(
        "Missing required parameter: 'messages[{i}].content'."
    )))
}

/// The text of a message's `content` (a string, or the `text` of its parts).
fn content_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// User content as Messages blocks.
fn user_blocks(content: &Value) -> Vec<Value> {
    match content {
        Value::String(s) => vec![json!({"type": "text", "text": s})],
        Value::Array(parts) => parts
            .iter()
            .filter_map(|part| match part.get("type").and_then(Value::as_str) {
                Some("text") => Some(json!({"type": "text", "text": part.get("text")?})),
                Some("image_url") => {
                    let url = part.pointer("/image_url/url").and_then(Value::as_str)?;
                    let source = match url
                        .strip_prefix("data:")
                        .and_then(|rest| rest.split_once(";base64,"))
                    {
                        Some((media_type, data)) => {
                            json!({"type": "base64", "media_type": media_type, "data": data})
                        }
                        None => json!({"type": "url", "url": url}),
                    };
                    Some(json!({"type": "image", "source": source}))
                }
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// The request in Messages form, for the scenario rules (checked by [`check_body`] first).
pub fn to_messages_form(body: &Value) -> Value {
    let mut system: Vec<String> = Vec::new();
    let mut out: Vec<Value> = Vec::new();
    // The user message being gathered (tool results, then what the user said).
    let mut user: Vec<Value> = Vec::new();
    let flush = |user: &mut Vec<Value>, out: &mut Vec<Value>| {
        if !user.is_empty() {
            out.push(json!({"role": "user", "content": std::mem::take(user)}));
        }
    };
    for message in items(body, "messages") {
        let content = message.get("content").unwrap_or(&Value::Null);
        match role(message) {
            "system" | "developer" => system.push(content_text(content)),
            "user" => user.extend(user_blocks(content)),
            "tool" => user.push(json!({
                "type": "tool_result",
                "tool_use_id": message.get("tool_call_id").cloned().unwrap_or(Value::Null),
                "content": content_text(content),
            })),
            _ => {
                flush(&mut user, &mut out);
                let mut blocks = Vec::new();
                let text = content_text(content);
                if !text.is_empty() {
                    blocks.push(json!({"type": "text", "text": text}));
                }
                for call in items(message, "tool_calls") {
                    let input = call
                        .pointer("/function/arguments")
                        .and_then(Value::as_str)
                        .and_then(|a| serde_json::from_str::<Value>(a).ok())
                        .unwrap_or_else(|| json!({}));
                    blocks.push(json!({
                        "type": "tool_use",
                        "id": call.get("id").cloned().unwrap_or(Value::Null),
                        "name": call.pointer("/function/name").cloned().unwrap_or(Value::Null),
                        "input": input,
                    }));
                }
                out.push(json!({"role": "assistant", "content": blocks}));
            }
        }
    }
    flush(&mut user, &mut out);
    let mut converted = Map::new();
    converted.insert(
        "model".into(),
        body.get("model").cloned().unwrap_or_default(),
    );
    let max_tokens = body
        .get("max_completion_tokens")
        .or_else(|| body.get("max_tokens"))
        .and_then(Value::as_u64)
        .unwrap_or(DEFAULT_MAX_TOKENS);
    converted.insert("max_tokens".into(), json!(max_tokens));
    if !system.is_empty() {
        converted.insert("system".into(), json!(system.join("\n\n")));
    }
    converted.insert("messages".into(), Value::Array(out));
    if let Some(tools) = body.get("tools").and_then(Value::as_array) {
        let tools: Vec<Value> = tools
            .iter()
            .map(|tool| {
                let function = tool.get("function").unwrap_or(&Value::Null);
                json!({
                    "name": function.get("name").cloned().unwrap_or_default(),
                    "description": function.get("description").cloned().unwrap_or(json!("")),
                    "input_schema": function.get("parameters").cloned().unwrap_or(json!({})),
                })
            })
            .collect();
        converted.insert("tools".into(), Value::Array(tools));
    }
    if let Some(choice) = body.get("tool_choice") {
        let choice = match choice.as_str() {
            Some("auto") => json!({"type": "auto"}),
            Some("required") => json!({"type": "any"}),
            Some("none") => json!({"type": "none"}),
            _ => json!({"type": "tool", "name": choice.pointer("/function/name")}),
        };
        converted.insert("tool_choice".into(), choice);
    }
    if let Some(stream) = body.get("stream") {
        converted.insert("stream".into(), stream.clone());
    }
    Value::Object(converted)
}

/// The prompt as the prefix cache sees it: the model, then one block per tool and per message.
pub fn analyze(body: &Value) -> Prompt {
    let mut b = PromptBuilder::new(str_field(body, "model"));
    for (i, tool) in items(body, "tools").iter().enumerate() {
        b.push(
            Segment::Tools,
            None,
            i,
            |buf| write_canonical(tool, buf),
            None,
        );
    }
    for (m, message) in items(body, "messages").iter().enumerate() {
        let segment = if matches!(role(message), "system" | "developer") {
            Segment::System
        } else {
            Segment::Messages
        };
        b.push(
            segment,
            Some(m),
            0,
            |buf| write_canonical(message, buf),
            None,
        );
    }
    b.finish()
}

/// Automatic prefix caching, as vLLM and llama.cpp do it: every prefix a response was started
/// for is readable by later requests (no breakpoints, no minimum, no expiry).
#[derive(Debug, Default)]
pub struct PrefixCache {
    keys: HashSet<u64>,
}

/// Bound on remembered prefixes; past it the cache starts over (a simulator's eviction).
const MAX_KEYS: usize = 1 << 20;

impl PrefixCache {
    /// Tokens of the longest cached prefix of `prompt`.
    pub fn cached_tokens(&self, prompt: &Prompt) -> u64 {
        prompt
            .blocks
            .iter()
            .rev()
            .find(|b| self.keys.contains(&b.key))
            .map_or(0, |b| b.prefix_tokens)
    }

    /// The response for `prompt` started: its prefixes become readable.
    pub fn commit(&mut self, prompt: &Prompt) {
        if self.keys.len() + prompt.blocks.len() > MAX_KEYS {
            self.keys.clear();
        }
        self.keys.extend(prompt.blocks.iter().map(|b| b.key));
    }

    pub fn clear(&mut self) {
        self.keys.clear();
    }
}

#[cfg(test)]
#[path = "convert_tests.rs"]
mod tests;
