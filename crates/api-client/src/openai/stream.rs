//! Chat-completion chunks (`data: {...}` lines, then `data: [DONE]`) as the [`StreamEvent`]s the
//! Anthropic stream gives, so the [`crate::MessageAccumulator`] and the query loop work
//! unchanged: `message_start`, per block `content_block_start` → deltas → `content_block_stop`
//! (one block open at a time), `message_delta` (stop reason, usage), `message_stop`.
//!
//! - `delta.content` → a text block; `delta.reasoning_content` / `delta.reasoning` (vLLM,
//!   Ollama, DeepSeek) → a thinking block with no signature; `delta.refusal` → text.
//! - `delta.tool_calls` → one `tool_use` block per call, keyed by `id` as well as `index`:
//!   Ollama sends every call at index 0 with distinct ids, so a new id is a new call, and a
//!   piece without an id continues the last call seen at its index. `arguments` arrive in
//!   pieces and are collected; when the call's block closes they go out as one
//!   `input_json_delta`. Arguments a model wrote that are not a JSON object (small local models
//!   do) go out as a JSON string of the text, so the loop answers the call with an error the
//!   model can act on instead of the run ending; a call cut by `length` keeps its raw text (the
//!   accumulator reports it cut, and the loop raises the limit).
//! - Usage (the last one seen: some servers repeat it on every chunk) maps so the parts add up
//!   as on Anthropic: `prompt_tokens_details.cached_tokens` → cache reads, the rest of
//!   `prompt_tokens` → input, `completion_tokens` → output, no cache writes. A stream that ends
//!   without usage (llama-cpp-python's server sends none even when asked) gets tine's estimate
//!   ([`Usage::estimated`]): the request's size given to [`ChunkDecoder::new`], and the reply's
//!   text, thinking and calls, at 4 bytes a token.
//! - `finish_reason`: `stop` → end_turn (tool_use when the reply called tools: some servers say
//!   `stop` then), `tool_calls` → tool_use, `length` → max_tokens, `content_filter` → refusal.
//! - `{"error": {...}}` in the stream (or an `event: error` frame) becomes an `error` event.
//!   The stream is complete at `[DONE]`, or at its end when a finish reason came.

use std::borrow::Cow;
use std::collections::HashMap;

use serde::Deserialize;
use serde_json::Value;

use crate::content::{ContentBlock, Role, ThinkingBlock};
use crate::error::ApiError;
use crate::events::{ContentDelta, MessageDeltaBody, StreamEvent};
use crate::openai::error::{ChatError, stream_error_body};
use crate::response::{ResponseMessage, StopReason};
use crate::sse::{SseFrame, SseParser};
use crate::usage::{Usage, UsageDelta, estimate_tokens};

/// One chunk, with only the fields we read (unknown ones are skipped).
#[derive(Deserialize)]
struct Chunk<'a> {
    #[serde(borrow)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    model: Option<Cow<'a, str>>,
    #[serde(default)]
    choices: Vec<Choice>,
    usage: Option<ChatUsage>,
    error: Option<Value>,
    /// vLLM's older in-stream error: the error object itself, with `"object": "error"`.
    object: Option<String>,
}

#[derive(Deserialize)]
struct Choice {
    #[serde(default)]
    index: u64,
    delta: Option<Delta>,
    finish_reason: Option<String>,
}

#[derive(Deserialize, Default)]
struct Delta {
    content: Option<String>,
    #[serde(alias = "reasoning")]
    reasoning_content: Option<String>,
    refusal: Option<String>,
    tool_calls: Option<Vec<ToolCallDelta>>,
}

#[derive(Deserialize)]
struct ToolCallDelta {
    #[serde(default)]
    index: u64,
    id: Option<String>,
    function: Option<FunctionDelta>,
}

#[derive(Deserialize)]
struct FunctionDelta {
    name: Option<String>,
    /// A string piece; a few servers send the whole arguments as a JSON object instead.
    arguments: Option<Value>,
}

/// `usage` as chat completions reports it.
#[derive(Debug, Clone, Copy, Deserialize, Default, PartialEq, Eq)]
pub(super) struct ChatUsage {
    /// Prompt tokens, cached ones included.
    #[serde(default)]
    pub prompt_tokens: u64,
    /// Output tokens.
    #[serde(default)]
    pub completion_tokens: u64,
    /// The prompt's breakdown, when the server gives one.
    #[serde(default)]
    pub prompt_tokens_details: Option<PromptTokensDetails>,
}

/// `usage.prompt_tokens_details` of chat completions.
#[derive(Debug, Clone, Copy, Deserialize, Default, PartialEq, Eq)]
pub(super) struct PromptTokensDetails {
    /// Prompt tokens read from the server's prefix cache.
    #[serde(default)]
    pub cached_tokens: Option<u64>,
}

impl ChatUsage {
    /// As our [`Usage`]: cache reads + input = the prompt, as on Anthropic.
    pub(super) fn to_usage(self) -> Usage {
        let cached = self
            .prompt_tokens_details
            .and_then(|d| d.cached_tokens)
            .unwrap_or(0)
            .min(self.prompt_tokens);
        Usage {
            input_tokens: self.prompt_tokens - cached,
            output_tokens: self.completion_tokens,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: cached,
            ..Usage::default()
        }
    }
}

/// What a `finish_reason` means here. `called_tools`: the reply holds tool calls.
pub(super) fn stop_reason(finish_reason: Option<&str>, called_tools: bool) -> StopReason {
    match finish_reason {
        Some("tool_calls" | "function_call") => StopReason::ToolUse,
        Some("length") => StopReason::MaxTokens,
        Some("content_filter") => StopReason::Refusal,
        Some("stop") | None if called_tools => StopReason::ToolUse,
        Some("stop") | None => StopReason::EndTurn,
        Some(other) => StopReason::Other(other.to_owned()),
    }
}

#[derive(Debug)]
struct Call {
    id: String,
    name: String,
    /// Our block index, once the block started (it needs the name).
    block: Option<usize>,
    /// The arguments so far (sent when the block closes).
    arguments: String,
    closed: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Open {
    Text(usize),
    Thinking(usize),
    /// Position in `calls`.
    Call(usize),
}

/// Decodes one response's chunks into events. Feed it byte chunks; call
/// [`ChunkDecoder::finish`] at the end of the body.
#[derive(Debug)]
pub(super) struct ChunkDecoder {
    parser: SseParser,
    /// The request's model, for `message_start` when a chunk does not name one.
    model: String,
    started: bool,
    next_block: usize,
    open: Option<Open>,
    calls: Vec<Call>,
    /// A chunk's `index` → the last call seen there (position in `calls`).
    last_at_index: HashMap<u64, usize>,
    finish_reason: Option<String>,
    usage: Option<ChatUsage>,
    /// The request's estimated prompt tokens, for a stream that carries no usage.
    prompt_estimate: u64,
    /// Bytes of the reply (text, thinking, calls' names and arguments), for the same.
    output_bytes: usize,
    done: bool,
    /// The first frame that could not be decoded, reported once the good events are out.
    failure: Option<ApiError>,
}

impl ChunkDecoder {
    /// A decoder for a reply of `model` to a request estimated at `prompt_estimate` tokens
    /// (used only when the stream carries no usage).
    pub(super) fn new(model: impl Into<String>, prompt_estimate: u64) -> Self {
        Self {
            parser: SseParser::new(),
            model: model.into(),
            started: false,
            next_block: 0,
            open: None,
            calls: Vec::new(),
            last_at_index: HashMap::new(),
            finish_reason: None,
            usage: None,
            prompt_estimate,
            output_bytes: 0,
            done: false,
            failure: None,
        }
    }

    /// Whether `[DONE]` (or an error) ended the stream: anything after it is ignored.
    #[cfg(test)]
    pub(crate) fn is_done(&self) -> bool {
        self.done
    }

    /// Decode `chunk`, appending events to `out`. `Err` for a frame that is not JSON (the events
    /// before it are in `out`).
    pub(super) fn feed(
        &mut self,
        chunk: &[u8],
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), ApiError> {
        let mut parser = std::mem::take(&mut self.parser);
        parser.feed(chunk, |frame| self.frame(frame, out));
        self.parser = parser;
        match self.failure.take() {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }

    /// The body ended. Returns true when the response is complete (its end events are in
    /// `out`): `[DONE]` came, or a finish reason did (not every server sends `[DONE]`).
    pub(super) fn finish(&mut self, out: &mut Vec<StreamEvent>) -> bool {
        let mut parser = std::mem::take(&mut self.parser);
        parser.finish(|frame| self.frame(frame, out));
        if self.done {
            return true;
        }
        if self.finish_reason.is_some() && self.failure.is_none() {
            self.end(out);
            return true;
        }
        false
    }

    fn frame(&mut self, frame: &SseFrame, out: &mut Vec<StreamEvent>) {
        if self.done || self.failure.is_some() {
            return;
        }
        let data = frame.data.trim();
        if data.is_empty() {
            return;
        }
        if data == "[DONE]" {
            self.end(out);
            return;
        }
        if frame.event == "error" {
            out.push(self.error_event(data));
            return;
        }
        let chunk: Chunk<'_> = match serde_json::from_str(data) {
            Ok(chunk) => chunk,
            Err(e) => {
                self.failure = Some(ApiError::Decode {
                    what: "chat completion chunk".to_owned(),
                    message: format!("{e}; data: {}", data.chars().take(200).collect::<String>()),
                });
                return;
            }
        };
        if chunk.error.is_some() || chunk.object.as_deref() == Some("error") {
            out.push(self.error_event(data));
            return;
        }
        self.start(chunk.id.as_deref(), chunk.model.as_deref(), out);
        if let Some(usage) = chunk.usage {
            self.usage = Some(usage);
        }
        for choice in chunk.choices {
            // Only the first choice is ours (we never ask for n > 1).
            if choice.index != 0 {
                continue;
            }
            if let Some(delta) = choice.delta {
                self.delta(delta, out);
            }
            if let Some(reason) = choice.finish_reason {
                self.finish_reason = Some(reason);
            }
        }
    }

    fn error_event(&mut self, data: &str) -> StreamEvent {
        self.done = true;
        let value = serde_json::from_str(data).unwrap_or(Value::String(data.to_owned()));
        StreamEvent::Error {
            error: stream_error_body(&ChatError::from_value(&value)),
        }
    }

    fn start(&mut self, id: Option<&str>, model: Option<&str>, out: &mut Vec<StreamEvent>) {
        if self.started {
            return;
        }
        self.started = true;
        let model = model.filter(|m| !m.is_empty()).unwrap_or(&self.model);
        out.push(StreamEvent::MessageStart {
            message: ResponseMessage {
                id: id
                    .filter(|i| !i.is_empty())
                    .unwrap_or("chatcmpl")
                    .to_owned(),
                model: model.to_owned(),
                role: Role::Assistant,
                content: Vec::new(),
                stop_reason: None,
                stop_sequence: None,
                usage: Usage::default(),
            },
        });
    }

    fn delta(&mut self, delta: Delta, out: &mut Vec<StreamEvent>) {
        if let Some(thinking) = delta.reasoning_content.filter(|t| !t.is_empty()) {
            self.output_bytes += thinking.len();
            let index = match self.open {
                Some(Open::Thinking(index)) => index,
                _ => {
                    let index =
                        self.open_block(ContentBlock::Thinking(ThinkingBlock::default()), out);
                    self.open = Some(Open::Thinking(index));
                    index
                }
            };
            out.push(StreamEvent::ContentBlockDelta {
                index,
                delta: ContentDelta::ThinkingDelta { thinking },
            });
        }
        for text in [delta.content, delta.refusal].into_iter().flatten() {
            if text.is_empty() {
                continue;
            }
            self.output_bytes += text.len();
            let index = match self.open {
                Some(Open::Text(index)) => index,
                _ => {
                    let index = self.open_block(ContentBlock::text(""), out);
                    self.open = Some(Open::Text(index));
                    index
                }
            };
            out.push(StreamEvent::ContentBlockDelta {
                index,
                delta: ContentDelta::TextDelta { text },
            });
        }
        for call in delta.tool_calls.into_iter().flatten() {
            self.tool_call(call, out);
        }
    }

    /// Close the open block, start `block` at the next index; returns that index.
    fn open_block(&mut self, block: ContentBlock, out: &mut Vec<StreamEvent>) -> usize {
        self.close_open(out);
        let index = self.next_block;
        self.next_block += 1;
        out.push(StreamEvent::ContentBlockStart {
            index,
            content_block: block,
        });
        index
    }

    fn close_open(&mut self, out: &mut Vec<StreamEvent>) {
        let Some(open) = self.open.take() else {
            return;
        };
        let index = match open {
            Open::Text(index) | Open::Thinking(index) => index,
            Open::Call(position) => {
                self.calls[position].closed = true;
                match self.calls[position].block {
                    Some(index) => {
                        self.flush_arguments(position, out);
                        index
                    }
                    None => return,
                }
            }
        };
        out.push(StreamEvent::ContentBlockStop { index });
    }

    /// The call's arguments as one `input_json_delta` (see the module's doc for what is sent
    /// when they are not a JSON object).
    fn flush_arguments(&mut self, position: usize, out: &mut Vec<StreamEvent>) {
        let cut = self.finish_reason.as_deref() == Some("length");
        let call = &mut self.calls[position];
        let (Some(index), Some(partial_json)) = (
            call.block,
            input_json(&std::mem::take(&mut call.arguments), cut),
        ) else {
            return;
        };
        out.push(StreamEvent::ContentBlockDelta {
            index,
            delta: ContentDelta::InputJsonDelta { partial_json },
        });
    }

    fn tool_call(&mut self, piece: ToolCallDelta, out: &mut Vec<StreamEvent>) {
        let id = piece.id.filter(|id| !id.is_empty());
        let known = match &id {
            Some(id) => self.calls.iter().position(|c| c.id == *id),
            None => self.last_at_index.get(&piece.index).copied(),
        };
        let position = match known {
            Some(position) => position,
            None => {
                let id = id.unwrap_or_else(|| format!("call_{}", self.calls.len() + 1));
                self.calls.push(Call {
                    id,
                    name: String::new(),
                    block: None,
                    arguments: String::new(),
                    closed: false,
                });
                self.calls.len() - 1
            }
        };
        self.last_at_index.insert(piece.index, position);
        let (name, arguments) = match piece.function {
            Some(f) => (f.name.filter(|n| !n.is_empty()), f.arguments),
            None => (None, None),
        };
        let arguments = match arguments {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(text)) => text,
            Some(other) => other.to_string(),
        };
        if self.calls[position].closed {
            // The call's block is already closed (the server interleaved two calls): its
            // input is whatever came first. Rare enough to log rather than guess.
            tracing::warn!(
                call = %self.calls[position].id,
                "a tool call's arguments arrived after another call began; ignored"
            );
            return;
        }
        if self.open != Some(Open::Call(position)) {
            self.close_open(out);
            self.open = Some(Open::Call(position));
        }
        self.output_bytes += arguments.len();
        let call = &mut self.calls[position];
        if call.block.is_none()
            && let Some(name) = name
        {
            self.output_bytes += name.len();
            call.name = name;
        }
        call.arguments.push_str(&arguments);
        if call.block.is_none() && !call.name.is_empty() {
            self.start_call(position, out);
        }
    }

    /// The block of call `position` (its arguments follow when it closes).
    fn start_call(&mut self, position: usize, out: &mut Vec<StreamEvent>) {
        let index = self.next_block;
        self.next_block += 1;
        let call = &mut self.calls[position];
        call.block = Some(index);
        out.push(StreamEvent::ContentBlockStart {
            index,
            content_block: ContentBlock::tool_use(
                call.id.clone(),
                call.name.clone(),
                Value::Object(Default::default()),
            ),
        });
    }

    fn end(&mut self, out: &mut Vec<StreamEvent>) {
        self.start(None, None, out);
        self.close_open(out);
        // Calls whose name never came still become blocks: the tool runner answers an unknown
        // name with an error the model can act on.
        for position in 0..self.calls.len() {
            if self.calls[position].block.is_none() {
                self.start_call(position, out);
                self.flush_arguments(position, out);
                if let Some(index) = self.calls[position].block {
                    out.push(StreamEvent::ContentBlockStop { index });
                }
            }
        }
        let usage = match self.usage {
            Some(usage) => usage.to_usage(),
            None => Usage {
                input_tokens: self.prompt_estimate,
                output_tokens: estimate_tokens(self.output_bytes).max(1),
                estimated: true,
                ..Usage::default()
            },
        };
        out.push(StreamEvent::MessageDelta {
            delta: MessageDeltaBody {
                stop_reason: Some(stop_reason(
                    self.finish_reason.as_deref(),
                    !self.calls.is_empty(),
                )),
                stop_sequence: None,
            },
            usage: UsageDelta {
                input_tokens: Some(usage.input_tokens),
                output_tokens: Some(usage.output_tokens),
                cache_creation_input_tokens: Some(0),
                cache_read_input_tokens: Some(usage.cache_read_input_tokens),
                cache_creation: None,
                estimated: usage.estimated.then_some(true),
            },
        });
        out.push(StreamEvent::MessageStop);
        self.done = true;
    }
}

/// What the accumulator is given for a call's `arguments`: `None` for none (the input stays
/// `{}`); a JSON object as it came (or the object a model wrapped in a JSON string); anything
/// else as a JSON string of the text, which the loop refuses with an error the model reads.
/// `cut`: the reply stopped at `length`, so invalid JSON is an unfinished call and stays raw.
fn input_json(arguments: &str, cut: bool) -> Option<String> {
    let text = arguments.trim();
    if text.is_empty() {
        return None;
    }
    let as_text = || serde_json::to_string(text).ok();
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(_)) => Some(text.to_owned()),
        Ok(Value::Null) => None,
        Ok(Value::String(inner))
            if serde_json::from_str::<Value>(&inner).is_ok_and(|v| v.is_object()) =>
        {
            Some(inner)
        }
        Ok(_) => as_text(),
        Err(_) if cut => Some(arguments.to_owned()),
        Err(_) => as_text(),
    }
}

#[cfg(test)]
#[path = "stream_tests.rs"]
mod tests;
