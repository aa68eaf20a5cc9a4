//! tine-api-client: the lowest layer. A complete, streaming, retrying client for the
//! Anthropic Messages API, the same for OpenAI-compatible chat completions ([`OpenAiClient`]), and the
//! [`ModelClient`] trait every upper crate is tested against with scripted fakes. It knows nothing
//! above the wire (no tools, sessions or files).
//!
//! Modules in reading order (private: the items below, re-exported at the root, are the API):
//! - `content`: [`Message`]s and their [`ContentBlock`]s, the wire types both directions share.
//! - `cache_control`: [`CacheControl`], a prompt-cache breakpoint.
//! - `tool_array`: [`ToolDefinition`] and [`ToolArray`], the `tools` array of a request
//!   serialized once (its bytes are part of the prompt-cache key).
//! - `request`: [`MessagesRequest`], the body of `POST /v1/messages`; byte-stable
//!   [`MessagesRequest::to_json_bytes`].
//! - `response`: [`ResponseMessage`] and [`StopReason`].
//! - `usage`: [`Usage`] with the prompt-cache fields, per-model prices, context windows, cost.
//! - `error`: [`ApiError`], typed from HTTP status, `error.type` and in-stream errors.
//! - `events`: typed [`StreamEvent`]s of a streamed response.
//! - `sse`: SSE framing of byte chunks into events.
//! - `accumulate`: [`MessageAccumulator`], events → final [`ResponseMessage`].
//! - `retry`: [`RetryPolicy`] and the [`RetryNotice`] a UI shows (and its discard contract).
//! - `model_client`: the [`ModelClient`] trait, [`ClientEvent`], [`collect_message`].
//! - `config`: [`ClientConfig`] from `ANTHROPIC_API_KEY` / `ANTHROPIC_AUTH_TOKEN` /
//!   `ANTHROPIC_BASE_URL`, headers and timeouts.
//! - `send`: the one send/retry state machine both HTTP clients run, generic over the wire's
//!   dialect (request, body decoder, error mapping).
//! - `client`: [`HttpClient`], the Messages API's dialect of it.
//! - `openai`: [`OpenAiClient`], OpenAI-compatible chat completions mapped to our requests
//!   and events (Ollama, vLLM, llama.cpp, LM Studio, OpenAI).
//! - `provider`: [`Provider`] and [`ProviderConfig`], choosing one of the two.
//! - `scripted`: [`ScriptedClient`], the fake upper crates test with, and [`message_events`].
//!
//! Upper layers hold an `Arc<dyn ModelClient>`, call `stream(request)` and either forward the
//! [`ClientEvent`]s to a UI while feeding a [`MessageAccumulator`] (resetting it on every
//! [`ClientEvent::Retry`]), or call [`collect_message`] for just the final message.
//!
//! # Example
//!
//! Stream a request and fold the events into the final message. [`ScriptedClient`] stands in
//! for the network here; [`HttpClient`] (`HttpClient::from_env()` reads `ANTHROPIC_API_KEY`)
//! and [`OpenAiClient`] are used the same way, as `Arc<dyn ModelClient>`:
//!
//! ```
//! use futures::StreamExt;
//! use tine_api_client::{
//!     ClientEvent, Message, MessageAccumulator, MessagesRequest, ModelClient, ScriptedClient,
//! };
//!
//! # futures::executor::block_on(async {
//! let client = ScriptedClient::new();
//! client.push_message(ScriptedClient::text_reply("Hello!"));
//!
//! let request = MessagesRequest::new("claude-sonnet-4-5", 1024, vec![Message::user("Hi")]);
//! let mut stream = client.stream(request);
//! let mut reply = MessageAccumulator::new();
//! while let Some(event) = stream.next().await {
//!     match event? {
//!         ClientEvent::Stream(event) => reply.push(&event)?,
//!         // A retried attempt starts again from `message_start`.
//!         ClientEvent::Retry(_) => reply.reset(),
//!     }
//! }
//! let message = reply.finish()?;
//! assert_eq!(message.text(), "Hello!");
//! println!("{} output tokens", message.usage.output_tokens);
//! # Ok::<(), tine_api_client::ApiError>(())
//! # }).unwrap();
//! ```
//!
//! `examples/stream_reply.rs` does it over HTTP against the bundled simulator, printing the
//! text as it streams, the usage with its cache figures, and the cost
//! (`cargo run -p tine-api-client --example stream_reply`).
#![warn(missing_docs, unnameable_types)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod accumulate;
mod cache_control;
mod client;
mod config;
mod content;
mod error;
mod events;
mod model_client;
mod openai;
mod provider;
mod request;
mod response;
mod retry;
mod scripted;
mod send;
mod sse;
mod tool_array;
mod usage;

pub use accumulate::MessageAccumulator;
pub use cache_control::{CacheControl, CacheControlType, CacheTtl};
pub use client::HttpClient;
pub use config::{
    ANTHROPIC_VERSION, CONTEXT_WINDOW_VAR, ClientConfig, Credentials, DEFAULT_BASE_URL,
};
pub use content::{
    ContentBlock, DocumentBlock, DocumentSource, ImageBlock, ImageSource, Message, MessageContent,
    RedactedThinkingBlock, Role, TextBlock, ThinkingBlock, ToolReferenceBlock, ToolResultBlock,
    ToolResultContent, ToolUseBlock,
};
pub use error::{ApiError, ApiErrorKind, ErrorBody};
pub use events::{ContentDelta, MessageDeltaBody, StreamEvent};
pub use model_client::{ClientEvent, EventStream, ModelClient, collect_message};
pub use openai::{DEFAULT_OPENAI_BASE_URL, MaxTokensField, OpenAiClient, OpenAiConfig};
pub use provider::{Provider, ProviderConfig};
pub use request::{
    Effort, MessagesRequest, Metadata, OutputConfig, SystemPrompt, ThinkingConfig, ToolChoice,
};
pub use response::{ResponseMessage, StopReason};
pub use retry::{RetryNotice, RetryPolicy};
pub use scripted::{Script, ScriptedClient, message_events, reply};
pub use sse::{EventDecoder, SseFrame, SseParser};
pub use tool_array::{ToolArray, ToolDefinition, referenced_tools};
pub use usage::{
    CacheCreation, DEFAULT_CONTEXT_WINDOW, DEFAULT_OTHER_CONTEXT_WINDOW, ESTIMATE_BYTES_PER_TOKEN,
    ModelInfo, Usage, UsageDelta, context_window, cost_usd, estimate_tokens, model_info,
    resolve_model_alias,
};
