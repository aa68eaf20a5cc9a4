//! Integration suites: wire serialization, the HTTP client against a local server, the fake.
mod fuzz_sse;
mod http;
mod scripted;
mod serialization;
mod server;
