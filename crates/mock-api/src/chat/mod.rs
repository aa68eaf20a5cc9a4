//! The chat-completions mode: `POST /v1/chat/completions` as OpenAI-compatible servers answer
//! it, driven by the same scenario as `/v1/messages`, so every scenario runs over either wire.
//! The request is converted to the Messages form the rules read (and logged as
//! [`crate::RequestRecord::normalized`]); the reply streams as OpenAI chunks in the chosen
//! [`ChatDialect`] (OpenAI's, or Ollama's habits); prompt caching is automatic prefix caching
//! ([`PrefixCache`]), reported as `prompt_tokens_details.cached_tokens`.
//!
//! Modules: [`convert`] (checks, conversion, the prompt's prefixes), [`render`] (chunks, the
//! whole completion, errors), [`handler`] (the route's checks, prompt, cache and shapes; the
//! faults are applied as on `/v1/messages`).

pub mod convert;
pub mod handler;
pub mod render;

pub use convert::PrefixCache;
pub use render::ChatDialect;
