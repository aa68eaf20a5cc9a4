//! Integration suites: wire serialization, the HTTP clients (Anthropic and OpenAI-compatible)
//! against a local server, the fake.
mod fuzz_sse;
mod http;
mod openai;
mod scripted;
mod serialization;
mod server;
