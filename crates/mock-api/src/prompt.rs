//! A request's prompt as the cache sees it: a flat list of blocks (tools, then system, then
//! message content blocks), each with its estimated tokens and the running hash of the prefix
//! that ends with it.
//!
//! The running hash starts with the model; tools and system follow; the thinking config and
//! `tool_choice` are mixed in where the messages begin, so changing them invalidates the
//! messages part only (as the real API documents). Each message contributes its role at its
//! start. A string `system` or message `content` counts as one text block, as the API reads it.
//!
//! Deferred tools (`defer_loading: true`, the API's tool search) are not part of the prefix:
//! a `tool_reference` block in a tool result is where a deferred tool's definition enters the
//! prompt, so the result's block counts (and keys) the definitions it references. Whether the
//! request has deferred tools at all is mixed in where the tools begin: tool search is a mode
//! of the prompt, which is why Claude Code keeps a placeholder tool deferred from the first
//! request on (without it, the first request that loads a tool would miss everything).

use std::collections::hash_map::DefaultHasher;
use std::hash::Hasher;

use serde::Serialize;
use serde_json::{Value, json};

use crate::error::ApiError;
use crate::json::{items, str_field};
use crate::tokens::{tokens_for_bytes, write_canonical, write_canonical_block};

/// The most `cache_control` breakpoints a request may carry.
pub const MAX_BREAKPOINTS: usize = 4;

/// Which part of the prompt a block is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Segment {
    Tools,
    System,
    Messages,
}

/// A breakpoint's time to live.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum CacheTtl {
    #[serde(rename = "5m")]
    FiveMinutes,
    #[serde(rename = "1h")]
    OneHour,
}

impl CacheTtl {
    pub fn duration(self) -> std::time::Duration {
        match self {
            CacheTtl::FiveMinutes => std::time::Duration::from_secs(5 * 60),
            CacheTtl::OneHour => std::time::Duration::from_secs(60 * 60),
        }
    }
}

/// One block of the prompt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PromptBlock {
    pub segment: Segment,
    /// Index of the message (for `Segment::Messages`).
    pub message: Option<usize>,
    /// Index within the tools array, the system blocks, or the message's content.
    pub index: usize,
    pub tokens: u64,
    /// Tokens of the prefix up to and including this block.
    pub prefix_tokens: u64,
    /// Running hash of the prefix up to and including this block.
    #[serde(skip)]
    pub key: u64,
    /// `Some` when the block carries `cache_control`.
    pub breakpoint: Option<CacheTtl>,
}

/// The prompt of one request.
#[derive(Debug, Clone, Default)]
pub struct Prompt {
    pub blocks: Vec<PromptBlock>,
    pub total_tokens: u64,
}

impl Prompt {
    /// Indices (into `blocks`) of the blocks that carry a breakpoint.
    pub fn breakpoints(&self) -> impl Iterator<Item = usize> + '_ {
        self.blocks
            .iter()
            .enumerate()
            .filter(|(_, b)| b.breakpoint.is_some())
            .map(|(i, _)| i)
    }
}

/// A prompt being read block by block: each block's tokens and the running hash of the prefix
/// that ends with it. The chat route's prefix cache reads its prompts with it too.
pub(crate) struct PromptBuilder {
    hasher: DefaultHasher,
    buf: String,
    prompt: Prompt,
}

impl PromptBuilder {
    /// A prompt of `model`: the key starts with it.
    pub(crate) fn new(model: &str) -> Self {
        let mut builder = Self {
            hasher: DefaultHasher::new(),
            buf: String::new(),
            prompt: Prompt::default(),
        };
        builder.label(b"model:", model);
        builder
    }

    /// Mixes `bytes` into the key.
    pub(crate) fn mix(&mut self, bytes: &[u8]) {
        self.hasher.write(bytes);
    }

    /// Mixes `name` and `value` into the key, `value` ended by a separator.
    pub(crate) fn label(&mut self, name: &[u8], value: &str) {
        self.hasher.write(name);
        self.hasher.write(value.as_bytes());
        self.hasher.write_u8(0xff);
    }

    /// Appends a block whose canonical text `write` gives.
    pub(crate) fn push(
        &mut self,
        segment: Segment,
        message: Option<usize>,
        index: usize,
        write: impl FnOnce(&mut String),
        breakpoint: Option<CacheTtl>,
    ) {
        self.buf.clear();
        write(&mut self.buf);
        self.hasher.write(self.buf.as_bytes());
        // A separator so that block boundaries are part of the key.
        self.hasher.write_u8(0xff);
        let tokens = tokens_for_bytes(self.buf.len());
        self.prompt.total_tokens += tokens;
        self.prompt.blocks.push(PromptBlock {
            segment,
            message,
            index,
            tokens,
            prefix_tokens: self.prompt.total_tokens,
            key: self.hasher.clone().finish(),
            breakpoint,
        });
    }

    pub(crate) fn finish(self) -> Prompt {
        self.prompt
    }
}

/// `block` appended to `builder` with its breakpoint, counted in `breakpoints`; a tool result
/// with the definitions of the deferred tools it references.
fn push_block(
    builder: &mut PromptBuilder,
    (segment, message, index): (Segment, Option<usize>, usize),
    block: &Value,
    path: &str,
    breakpoints: &mut usize,
    deferred: &[(&str, &Value)],
) -> Result<(), ApiError> {
    let breakpoint = breakpoint_of(block, path, breakpoints)?;
    let referenced: Vec<&Value> = tool_references(block)
        .filter_map(|name| deferred.iter().find(|(n, _)| *n == name).map(|(_, d)| *d))
        .collect();
    builder.push(
        segment,
        message,
        index,
        |buf| {
            write_canonical_block(block, buf);
            for definition in referenced {
                write_canonical_block(definition, buf);
            }
        },
        breakpoint,
    );
    Ok(())
}

/// The tool names a `tool_result`'s `tool_reference` blocks name.
pub(crate) fn tool_references(block: &Value) -> impl Iterator<Item = &str> {
    let inner = match (
        block.get("type").and_then(Value::as_str),
        block.get("content"),
    ) {
        (Some("tool_result"), Some(Value::Array(inner))) => inner.as_slice(),
        _ => &[],
    };
    inner
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_reference"))
        .filter_map(|b| b.get("tool_name").and_then(Value::as_str))
}

/// Whether a `tools` entry is deferred (`defer_loading: true`).
pub(crate) fn is_deferred(tool: &Value) -> bool {
    tool.get("defer_loading").and_then(Value::as_bool) == Some(true)
}

/// The block's own `cache_control` (or, for a `tool_result`, one inside its content).
fn breakpoint_of(
    block: &Value,
    path: &str,
    count: &mut usize,
) -> Result<Option<CacheTtl>, ApiError> {
    let mut found = None;
    let mut check = |cc: &Value, at: &str| -> Result<(), ApiError> {
        *count += 1;
        if *count > MAX_BREAKPOINTS {
            // The final count is reported by `analyze`; mark the overflow here.
            return Ok(());
        }
        let ttl = match cc.get("ttl").and_then(Value::as_str) {
            None | Some("5m") => CacheTtl::FiveMinutes,
            Some("1h") => CacheTtl::OneHour,
            Some(other) => {
                return Err(ApiError::invalid(format!(
                    "{at}.cache_control.ttl: Input should be '5m' or '1h' (got '{other}')"
                )));
            }
        };
        if cc.get("type").and_then(Value::as_str) != Some("ephemeral") {
            return Err(ApiError::invalid(format!(
                "{at}.cache_control.type: Input should be 'ephemeral'"
            )));
        }
        // The longest TTL wins when a block holds more than one marker.
        found = Some(match (found, ttl) {
            (Some(CacheTtl::OneHour), _) | (_, CacheTtl::OneHour) => CacheTtl::OneHour,
            _ => CacheTtl::FiveMinutes,
        });
        Ok(())
    };
    if let Some(cc) = block.get("cache_control").filter(|v| !v.is_null()) {
        check(cc, path)?;
    }
    if block.get("type").and_then(Value::as_str) == Some("tool_result")
        && let Some(Value::Array(inner)) = block.get("content")
    {
        for (i, b) in inner.iter().enumerate() {
            if let Some(cc) = b.get("cache_control").filter(|v| !v.is_null()) {
                check(cc, &format!("{path}.content.{i}"))?;
            }
        }
    }
    Ok(found)
}

/// Content as a list of blocks: a string is one text block.
pub fn content_blocks(content: &Value) -> Vec<std::borrow::Cow<'_, Value>> {
    match content {
        Value::String(s) => vec![std::borrow::Cow::Owned(json!({"type": "text", "text": s}))],
        Value::Array(items) => items.iter().map(std::borrow::Cow::Borrowed).collect(),
        _ => Vec::new(),
    }
}

/// Splits a (validated) request body into prompt blocks with running keys.
pub fn analyze(body: &Value) -> Result<Prompt, ApiError> {
    let mut b = PromptBuilder::new(str_field(body, "model"));
    let mut breakpoints = 0;
    let mut deferred: Vec<(&str, &Value)> = Vec::new();
    if let Some(Value::Array(tools)) = body.get("tools") {
        b.mix(b"tools:");
        if tools.iter().any(is_deferred) {
            b.mix(b"tool search:");
        }
        for (i, tool) in tools.iter().enumerate() {
            if is_deferred(tool) {
                // Out of the prefix; it enters where a tool_reference names it.
                deferred.push((str_field(tool, "name"), tool));
                continue;
            }
            let at = (Segment::Tools, None, i);
            push_block(
                &mut b,
                at,
                tool,
                &format!("tools.{i}"),
                &mut breakpoints,
                &[],
            )?;
        }
    }
    if let Some(system) = body.get("system") {
        b.mix(b"system:");
        for (i, block) in content_blocks(system).iter().enumerate() {
            let at = (Segment::System, None, i);
            let path = format!("system.{i}");
            push_block(&mut b, at, block, &path, &mut breakpoints, &[])?;
        }
    }
    // Thinking and tool_choice key the messages part only.
    b.mix(b"thinking:");
    let mut extra = String::new();
    if let Some(t) = body.get("thinking") {
        write_canonical(t, &mut extra);
    }
    extra.push('|');
    if let Some(t) = body.get("tool_choice") {
        write_canonical(t, &mut extra);
    }
    b.mix(extra.as_bytes());

    if let Some(Value::Array(messages)) = body.get("messages") {
        for (m, message) in messages.iter().enumerate() {
            b.label(b"message:", str_field(message, "role"));
            let content = message.get("content").unwrap_or(&Value::Null);
            for (i, block) in content_blocks(content).iter().enumerate() {
                let path = format!("messages.{m}.content.{i}");
                let at = (Segment::Messages, Some(m), i);
                push_block(&mut b, at, block, &path, &mut breakpoints, &deferred)?;
            }
        }
    }
    if breakpoints > MAX_BREAKPOINTS {
        return Err(ApiError::invalid(format!(
            "A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. Found {breakpoints}."
        )));
    }
    Ok(b.finish())
}

/// Texts a scenario rule can match on, read from a request body.
#[derive(Debug, Clone, Default)]
pub struct RequestTexts {
    /// The text blocks of the last user message, joined with "\n".
    pub last_user_text: String,
    /// Every string in the last user message (text blocks and tool_result contents).
    pub last_user_all: String,
    /// The system prompt's text blocks, joined with "\n".
    pub system: String,
    /// Whether the last user message holds `tool_result` blocks.
    pub last_user_has_tool_results: bool,
    /// The text blocks of the first user message (the task, in a simple session).
    pub first_user_text: String,
    /// How many assistant messages the request holds (0 on a session's first call).
    pub assistant_turns: usize,
}

impl RequestTexts {
    pub fn from_body(body: &Value) -> Self {
        let mut out = RequestTexts::default();
        if let Some(system) = body.get("system") {
            out.system = join_texts(content_blocks(system).iter().map(|c| c.as_ref()));
        }
        let messages = items(body, "messages");
        let is_role = |m: &&Value, role: &str| str_field(m, "role") == role;
        out.assistant_turns = messages.iter().filter(|m| is_role(m, "assistant")).count();
        if let Some(first) = messages.iter().find(|m| is_role(m, "user")) {
            let content = first.get("content").unwrap_or(&Value::Null);
            out.first_user_text = join_texts(content_blocks(content).iter().map(|c| c.as_ref()));
        }
        let last_user = messages.iter().rev().find(|m| is_role(m, "user"));
        if let Some(user) = last_user {
            let content = user.get("content").unwrap_or(&Value::Null);
            let blocks = content_blocks(content);
            out.last_user_text = join_texts(blocks.iter().map(|c| c.as_ref()));
            out.last_user_has_tool_results = blocks
                .iter()
                .any(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"));
            let mut all = Vec::new();
            for block in &blocks {
                collect_strings(block, &mut all);
            }
            out.last_user_all = all.join("\n");
        }
        out
    }
}

fn join_texts<'a>(blocks: impl Iterator<Item = &'a Value>) -> String {
    blocks
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Text and content strings of a block (not ids, types or cache markers).
fn collect_strings(block: &Value, out: &mut Vec<String>) {
    match block {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|i| collect_strings(i, out)),
        Value::Object(map) => {
            for key in ["text", "content", "thinking"] {
                if let Some(v) = map.get(key) {
                    collect_strings(v, out);
                }
            }
        }
        _ => {}
    }
}

/// Whether the request lists a tool with this name.
pub fn has_tool(body: &Value, name: &str) -> bool {
    body.get("tools")
        .and_then(Value::as_array)
        .is_some_and(|tools| {
            tools
                .iter()
                .any(|t| t.get("name").and_then(Value::as_str) == Some(name))
        })
}
