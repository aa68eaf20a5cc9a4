//! Our [`MessagesRequest`] as a chat-completions body.
//!
//! - `system` → one `system` message (blocks joined with a blank line).
//! - user text and images → a `user` message (a string when it is only text; `text` and
//!   `image_url` parts with `data:` URLs when it holds images); `tool_result` blocks → `tool`
//!   messages (content as a string, `is_error` marked `Error: `), placed first, since they must
//!   follow the assistant message that called; images inside a tool result go in the `user`
//!   message after them, announced in the tool message.
//! - assistant text → `content`; `tool_use` → `tool_calls` with the input as a JSON string.
//! - Deferred tools (tool search): chat completions has no `defer_loading`, so the `tools`
//!   array stays fixed (deferred entries, the placeholder among them, are left out) and a
//!   `tool_reference` in a tool result becomes the loaded tool's definition as text, in the
//!   `<functions>` encoding ToolSearch's description promises. It sits in the history, so a
//!   server's prefix cache keeps it like any other result.
//! - Dropped, because chat completions has no place for them: thinking blocks (and the thinking
//!   config), `cache_control` (vLLM's and llama.cpp's prefix caching is automatic), `metadata`,
//!   `top_k`, unknown blocks. Documents are sent as their text when they have one, otherwise
//!   named in a short note.
//!
//! Deterministic: the same request gives the same bytes, with fields in a fixed order chosen so
//! that what differs between a parent and its fork (the last messages, `max_tokens`) comes last:
//! `model`, `stream`, `stream_options`, `tools`, `messages`, then the rest. Forks then share the
//! parent's bytes up to their divergence, as they do on Anthropic's API.

use std::borrow::Cow;

use serde::Serialize;
use serde_json::Value;

use crate::content::{
    ContentBlock, DocumentBlock, DocumentSource, ImageBlock, ImageSource, Message, MessageContent,
    Role, ToolResultBlock, ToolResultContent,
};
use crate::openai::config::MaxTokensField;
use crate::request::{MessagesRequest, SystemPrompt, ToolChoice};
use crate::tool_array::ToolArray;

/// The exact bytes [`crate::OpenAiClient`] posts for `request` (always streaming, with usage).
pub(super) fn chat_request_bytes(request: &MessagesRequest, field: MaxTokensField) -> Vec<u8> {
    let body = chat_request(request, field);
    // Plain structs of strings and `Value`s: serializing into a Vec cannot fail.
    serde_json::to_vec(&body).unwrap_or_default()
}

#[derive(Serialize)]
struct ChatRequest<'a> {
    model: &'a str,
    stream: bool,
    stream_options: StreamOptions,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<ChatTool<'a>>,
    messages: Vec<ChatMessage<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<ChatToolChoice<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    parallel_tool_calls: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_completion_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    top_p: Option<f32>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    stop: &'a [String],
}

#[derive(Serialize)]
struct StreamOptions {
    include_usage: bool,
}

#[derive(Serialize)]
struct ChatTool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: ChatFunction<'a>,
}

#[derive(Serialize)]
struct ChatFunction<'a> {
    name: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    description: &'a str,
    parameters: &'a Value,
}

#[derive(Serialize)]
#[serde(untagged)]
enum ChatToolChoice<'a> {
    Mode(&'static str),
    Function {
        #[serde(rename = "type")]
        kind: &'static str,
        function: NamedFunction<'a>,
    },
}

#[derive(Serialize)]
struct NamedFunction<'a> {
    name: &'a str,
}

#[derive(Serialize)]
#[serde(tag = "role", rename_all = "lowercase")]
enum ChatMessage<'a> {
    System {
        content: Cow<'a, str>,
    },
    User {
        content: UserContent<'a>,
    },
    Assistant {
        /// `null` when the message is only tool calls, as OpenAI itself sends it.
        content: Option<Cow<'a, str>>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ChatToolCall<'a>>,
    },
    Tool {
        tool_call_id: &'a str,
        content: String,
    },
}

#[derive(Serialize)]
#[serde(untagged)]
enum UserContent<'a> {
    Text(Cow<'a, str>),
    Parts(Vec<Part<'a>>),
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Part<'a> {
    Text { text: Cow<'a, str> },
    ImageUrl { image_url: ImageUrl },
}

#[derive(Serialize)]
struct ImageUrl {
    url: String,
}

#[derive(Serialize)]
struct ChatToolCall<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: CallFunction<'a>,
}

#[derive(Serialize)]
struct CallFunction<'a> {
    name: &'a str,
    arguments: String,
}

fn chat_request(request: &MessagesRequest, field: MaxTokensField) -> ChatRequest<'_> {
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    if let Some(system) = &request.system {
        let content = match system {
            SystemPrompt::Text(text) => Cow::Borrowed(text.as_str()),
            SystemPrompt::Blocks(blocks) => join(blocks.iter().map(|b| b.text.as_str())),
        };
        messages.push(ChatMessage::System { content });
    }
    for message in &request.messages {
        push_message(message, &request.tools, &mut messages);
    }
    let tools = request
        .tools
        .iter()
        .filter(|tool| !tool.defer_loading)
        .map(|tool| ChatTool {
            kind: "function",
            function: ChatFunction {
                name: &tool.name,
                description: &tool.description,
                parameters: &tool.input_schema,
            },
        })
        .collect();
    let (tool_choice, parallel) = match &request.tool_choice {
        None => (None, None),
        Some(choice) => tool_choice(choice),
    };
    let (max_tokens, max_completion_tokens) = match field {
        MaxTokensField::MaxTokens => (Some(request.max_tokens), None),
        MaxTokensField::MaxCompletionTokens => (None, Some(request.max_tokens)),
    };
    ChatRequest {
        model: &request.model,
        stream: true,
        stream_options: StreamOptions {
            include_usage: true,
        },
        tools,
        messages,
        tool_choice,
        parallel_tool_calls: parallel,
        max_tokens,
        max_completion_tokens,
        temperature: request.temperature,
        top_p: request.top_p,
        stop: &request.stop_sequences,
    }
}

fn tool_choice(choice: &ToolChoice) -> (Option<ChatToolChoice<'_>>, Option<bool>) {
    let no_parallel = |d: &Option<bool>| d.and_then(|disable| disable.then_some(false));
    match choice {
        ToolChoice::Auto {
            disable_parallel_tool_use,
        } => (
            Some(ChatToolChoice::Mode("auto")),
            no_parallel(disable_parallel_tool_use),
        ),
        ToolChoice::Any {
            disable_parallel_tool_use,
        } => (
            Some(ChatToolChoice::Mode("required")),
            no_parallel(disable_parallel_tool_use),
        ),
        ToolChoice::Tool {
            name,
            disable_parallel_tool_use,
        } => (
            Some(ChatToolChoice::Function {
                kind: "function",
                function: NamedFunction { name },
            }),
            no_parallel(disable_parallel_tool_use),
        ),
        ToolChoice::None => (Some(ChatToolChoice::Mode("none")), None),
    }
}

/// Texts joined with a blank line, borrowed when there is just one.
fn join<'a>(mut texts: impl Iterator<Item = &'a str>) -> Cow<'a, str> {
    let Some(first) = texts.next() else {
        return Cow::Borrowed("");
    };
    let Some(second) = texts.next() else {
        return Cow::Borrowed(first);
    };
    let mut out = format!("{first}\n\n{second}");
    for text in texts {
        out.push_str("\n\n");
        out.push_str(text);
    }
    Cow::Owned(out)
}

fn push_message<'a>(message: &'a Message, tools: &ToolArray, out: &mut Vec<ChatMessage<'a>>) {
    match (&message.role, &message.content) {
        (Role::User, MessageContent::Text(text)) => out.push(ChatMessage::User {
            content: UserContent::Text(Cow::Borrowed(text)),
        }),
        (Role::Assistant, MessageContent::Text(text)) => out.push(ChatMessage::Assistant {
            content: Some(Cow::Borrowed(text)),
            tool_calls: Vec::new(),
        }),
        (Role::User, MessageContent::Blocks(blocks)) => push_user(blocks, tools, out),
        (Role::Assistant, MessageContent::Blocks(blocks)) => push_assistant(blocks, out),
    }
}

fn push_assistant<'a>(blocks: &'a [ContentBlock], out: &mut Vec<ChatMessage<'a>>) {
    let mut texts = Vec::new();
    let mut tool_calls = Vec::new();
    for block in blocks {
        match block {
            ContentBlock::Text(text) => texts.push(text.text.as_str()),
            ContentBlock::ToolUse(call) => tool_calls.push(ChatToolCall {
                id: &call.id,
                kind: "function",
                function: CallFunction {
                    name: &call.name,
                    arguments: call.input.to_string(),
                },
            }),
            // No place for them in chat completions; the model never sees its old thinking.
            ContentBlock::Thinking(_)
            | ContentBlock::RedactedThinking(_)
            | ContentBlock::Image(_)
            | ContentBlock::Document(_)
            | ContentBlock::ToolResult(_)
            | ContentBlock::ToolReference(_)
            | ContentBlock::Unknown(_) => {}
        }
    }
    let content = match (texts.is_empty(), tool_calls.is_empty()) {
        (true, false) => None,
        _ => Some(join(texts.into_iter())),
    };
    out.push(ChatMessage::Assistant {
        content,
        tool_calls,
    });
}

/// A user message's blocks: `tool` messages for the results first, then one `user` message with
/// the rest (and any images the results held), if there is any.
fn push_user<'a>(blocks: &'a [ContentBlock], tools: &ToolArray, out: &mut Vec<ChatMessage<'a>>) {
    let mut parts: Vec<Part<'a>> = Vec::new();
    for block in blocks {
        match block {
            ContentBlock::ToolResult(result) => {
                let content = tool_result_text(result, tools, &mut parts);
                out.push(ChatMessage::Tool {
                    tool_call_id: &result.tool_use_id,
                    content,
                });
            }
            ContentBlock::Text(text) => parts.push(Part::Text {
                text: Cow::Borrowed(&text.text),
            }),
            ContentBlock::Image(image) => parts.push(image_part(image)),
            ContentBlock::Document(document) => parts.push(Part::Text {
                text: document_text(document),
            }),
            ContentBlock::ToolUse(_)
            | ContentBlock::Thinking(_)
            | ContentBlock::RedactedThinking(_)
            | ContentBlock::ToolReference(_)
            | ContentBlock::Unknown(_) => {}
        }
    }
    if parts.is_empty() {
        return;
    }
    let only_text = parts.iter().all(|p| matches!(p, Part::Text { .. }));
    let content = if only_text {
        let texts: Vec<Cow<'a, str>> = parts
            .into_iter()
            .filter_map(|p| match p {
                Part::Text { text } => Some(text),
                Part::ImageUrl { .. } => None,
            })
            .collect();
        if texts.len() == 1 {
            UserContent::Text(texts.into_iter().next().unwrap_or_default())
        } else {
            UserContent::Text(Cow::Owned(
                texts
                    .iter()
                    .map(|t| t.as_ref())
                    .collect::<Vec<_>>()
                    .join("\n\n"),
            ))
        }
    } else {
        UserContent::Parts(parts)
    };
    out.push(ChatMessage::User { content });
}

/// A tool result as the `tool` message's string; its images go to `images` (the next user
/// message), announced in the text.
fn tool_result_text<'a>(
    result: &'a ToolResultBlock,
    tools: &ToolArray,
    images: &mut Vec<Part<'a>>,
) -> String {
    let mut text = String::new();
    if result.is_error == Some(true) {
        text.push_str("Error: ");
    }
    match &result.content {
        None => {}
        Some(ToolResultContent::Text(body)) => text.push_str(body),
        Some(ToolResultContent::Blocks(blocks)) if is_references(blocks) => {
            text.push_str(&loaded_functions(blocks, tools));
        }
        Some(ToolResultContent::Blocks(blocks)) => {
            let mut first = true;
            let mut attached = 0;
            for block in blocks {
                let piece: Cow<'_, str> = match block {
                    ContentBlock::Text(t) => Cow::Borrowed(t.text.as_str()),
                    ContentBlock::Document(d) => document_text(d),
                    ContentBlock::Image(image) => {
                        if attached == 0 {
                            images.push(Part::Text {
                                text: Cow::Owned(format!(
                                    "The image(s) returned by tool call {}:",
                                    result.tool_use_id
                                )),
                            });
                        }
                        attached += 1;
                        images.push(image_part(image));
                        continue;
                    }
                    _ => continue,
                };
                if !first {
                    text.push('\n');
                }
                first = false;
                text.push_str(&piece);
            }
            if attached > 0 {
                if !first {
                    text.push('\n');
                }
                text.push_str(&format!(
                    "[{attached} image(s): attached in the next user message]"
                ));
            }
        }
    }
    text
}

/// Whether a result's content is tool references (ToolSearch's), and nothing else.
fn is_references(blocks: &[ContentBlock]) -> bool {
    !blocks.is_empty()
        && blocks
            .iter()
            .all(|b| matches!(b, ContentBlock::ToolReference(_)))
}

/// The referenced tools' definitions, as the Messages API expands them for the model: one
/// `<function>{"description", "name", "parameters"}</function>` line each in a `<functions>`
/// block. A name the request does not carry is said to be unavailable.
fn loaded_functions(blocks: &[ContentBlock], tools: &ToolArray) -> String {
    let mut text = String::from("<functions>");
    for block in blocks {
        let ContentBlock::ToolReference(reference) = block else {
            continue;
        };
        text.push('\n');
        match tools.iter().find(|t| t.name == reference.tool_name) {
            Some(tool) => {
                let function = serde_json::json!({
                    "description": tool.description,
                    "name": tool.name,
                    "parameters": tool.input_schema,
                });
                text.push_str(&format!("<function>{function}</function>"));
            }
            None => text.push_str(&format!(
                "(the tool {} is not available in this session)",
                reference.tool_name
            )),
        }
    }
    text.push_str("\n</functions>");
    text
}

fn image_part(image: &ImageBlock) -> Part<'_> {
    match &image.source {
        ImageSource::Base64 { media_type, data } => Part::ImageUrl {
            image_url: ImageUrl {
                url: format!("data:{media_type};base64,{data}"),
            },
        },
        ImageSource::Url { url } => Part::ImageUrl {
            image_url: ImageUrl { url: url.clone() },
        },
        ImageSource::File { .. } | ImageSource::Other(_) => Part::Text {
            text: Cow::Borrowed("[an image stored with Anthropic's Files API: not sent]"),
        },
    }
}

fn document_text(document: &DocumentBlock) -> Cow<'_, str> {
    let body: Cow<'_, str> = match &document.source {
        DocumentSource::Text { data, .. } => Cow::Borrowed(data.as_str()),
        DocumentSource::Content { content } => Cow::Owned(content_texts(content)),
        DocumentSource::Url { url } => Cow::Owned(format!("[a document at {url}: not sent]")),
        DocumentSource::Base64 { media_type, .. } => Cow::Owned(format!(
            "[a {media_type} document: OpenAI-compatible endpoints take no documents, not sent]"
        )),
        DocumentSource::File { .. } | DocumentSource::Other(_) => {
            Cow::Borrowed("[a document stored with Anthropic's Files API: not sent]")
        }
    };
    match &document.title {
        Some(title) => Cow::Owned(format!("{title}\n{body}")),
        None => body,
    }
}

/// The `text` of content blocks given as JSON (a document's `content` source).
fn content_texts(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

#[cfg(test)]
#[path = "request_tests.rs"]
mod tests;
