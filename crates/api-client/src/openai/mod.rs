//! The openai provider: OpenAI-compatible chat completions (OpenAI, Ollama, vLLM, llama.cpp's
//! server, LM Studio, hosted endpoints) behind the same [`crate::ModelClient`] trait, so every
//! upper crate works unchanged. Our [`crate::MessagesRequest`] is mapped to a chat-completions
//! body, and the chunks that come back are decoded into the very [`crate::StreamEvent`]
//! sequence the Anthropic stream gives.
//!
//! Modules in reading order (private; the crate root re-exports the public items):
//! - `config`: [`OpenAiConfig`] from `OPENAI_BASE_URL` (with its `/v1`) and `OPENAI_API_KEY`.
//! - `request`: the request mapping, deterministic to the byte (forks share the prefix).
//! - `stream`: the chunk decoder, chunks → events (tool calls keyed by id and index, usage,
//!   finish reasons; an estimate when a stream has no usage).
//! - `tokenize`: the server's tokenizer (llama-cpp-python, llama.cpp) counting a stream's
//!   usage again when it had none.
//! - `error`: error bodies and statuses → [`crate::ApiError`] (context length exceeded → the
//!   loop's prompt-too-long path).
//! - `client`: [`OpenAiClient`], the chat-completions dialect of the crate's send/retry state
//!   machine.

mod client;
mod config;
mod error;
mod request;
mod stream;
mod tokenize;

pub use client::OpenAiClient;
pub use config::{DEFAULT_OPENAI_BASE_URL, MaxTokensField, OpenAiConfig};
