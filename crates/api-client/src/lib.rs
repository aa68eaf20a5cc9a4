//! tine-api-client: the lowest layer. A complete, streaming, retrying client for the
//! Anthropic Messages API: wire types, SSE parsing, typed errors, retries, usage and cost,
//! and the `ModelClient` trait every upper crate is tested against with scripted fakes.
