//! The in-process mock and what a session on it is made of.

use std::sync::Arc;

use tine_api_client::{
    ClientConfig, Credentials, HttpClient, ModelClient, OpenAiClient, OpenAiConfig, RetryPolicy,
    ToolArray,
};
use tine_mock_api::{MockConfig, MockServer, Scenario};
use tine_tools::Tool;
use tine_tools::builtin_tools;

/// The model every session of the suites asks for.
pub const MODEL: &str = "claude-sonnet-4-5";

/// The session's tools.
pub type Tools = Arc<[Arc<dyn Tool>]>;

/// The mock on 127.0.0.1, port 0, answering from `scenario`.
pub async fn server(scenario: Scenario) -> MockServer {
    MockServer::start(MockConfig::new(scenario)).await.unwrap()
}

/// A client for `server` with a dummy key and no retries (a fault is seen once, as scripted).
pub fn client_for(server: &MockServer) -> Arc<dyn ModelClient> {
    let config = ClientConfig::new(server.base_url(), Credentials::api_key("test-key"))
        .with_retry(RetryPolicy::none());
    Arc::new(HttpClient::new(config).unwrap())
}

/// An OpenAI-compatible (chat completions) client for `server`'s `/v1`, dummy key, no retries.
pub fn openai_client_for(server: &MockServer) -> Arc<dyn ModelClient> {
    let config =
        OpenAiConfig::new(server.openai_base_url(), "test-key").with_retry(RetryPolicy::none());
    Arc::new(OpenAiClient::new(config).unwrap())
}

/// A system prompt long enough (~2.5k tokens) to pass the minimum cacheable prefix.
pub fn big_system_prompt() -> String {
    let mut s = String::from("You are tine, a terminal coding agent.\n");
    for i in 0..200 {
        s.push_str(&format!(
            "Guideline {i}: read before you edit, keep changes small.\n"
        ));
    }
    s
}

/// The built-in tools sorted by name (as the CLI sorts them, so the array's bytes are stable)
/// and their definitions, serialized once.
pub fn tool_setup() -> (Tools, ToolArray) {
    let mut tools: Vec<Arc<dyn Tool>> = builtin_tools();
    tools.sort_by(|a, b| a.name().cmp(b.name()));
    let defs = tine_query_loop::tool_definitions(&tools);
    (Arc::from(tools), defs)
}
