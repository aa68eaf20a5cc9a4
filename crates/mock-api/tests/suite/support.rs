//! Helpers: start a server, post raw JSON, read SSE events.

use serde_json::{Value, json};
use tine_mock_api::{MockConfig, MockServer, Scenario};

pub(super) async fn start(scenario: Scenario) -> MockServer {
    MockServer::start(MockConfig::new(scenario)).await.unwrap()
}

pub(super) fn client() -> reqwest::Client {
    reqwest::Client::new()
}

/// POST with a key and a version header.
pub(super) async fn post(server: &MockServer, body: &Value) -> reqwest::Response {
    post_path(server, "/v1/messages", body).await
}

pub(super) async fn post_path(server: &MockServer, path: &str, body: &Value) -> reqwest::Response {
    client()
        .post(format!("{}{path}", server.base_url()))
        .header("x-api-key", "test-key")
        .header("anthropic-version", "2023-06-01")
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .unwrap()
}

/// POST and parse the JSON answer.
pub(super) async fn post_json(server: &MockServer, body: &Value) -> (u16, Value) {
    let resp = post(server, body).await;
    let status = resp.status().as_u16();
    let text = resp.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap())
}

/// A minimal valid request body.
pub(super) fn body(user: &str) -> Value {
    json!({
        "model": "claude-test",
        "max_tokens": 1000,
        "messages": [{"role": "user", "content": user}],
    })
}

/// A body with a ~2000-token cached system prompt.
pub(super) fn cached_body(user: &str) -> Value {
    let mut b = body(user);
    b["system"] = json!([{"type": "text", "text": "Be helpful and precise. ".repeat(350),
        "cache_control": {"type": "ephemeral"}}]);
    b
}

/// Parses an SSE body into (event, data) pairs.
pub(super) fn parse_sse(text: &str) -> Vec<(String, Value)> {
    text.split("\n\n")
        .filter(|chunk| !chunk.trim().is_empty())
        .map(|chunk| {
            let mut event = String::new();
            let mut data = Value::Null;
            for line in chunk.lines() {
                if let Some(e) = line.strip_prefix("event: ") {
                    event = e.to_string();
                } else if let Some(d) = line.strip_prefix("data: ") {
                    data = serde_json::from_str(d).unwrap();
                }
            }
            (event, data)
        })
        .collect()
}

/// Reads a body chunk by chunk until it ends or fails; returns what arrived and whether it failed.
pub(super) async fn read_until_end(resp: reqwest::Response) -> (String, bool) {
    let mut resp = resp;
    let mut text = Vec::new();
    loop {
        match resp.chunk().await {
            Ok(Some(chunk)) => text.extend_from_slice(&chunk),
            Ok(None) => return (String::from_utf8(text).unwrap(), false),
            Err(_) => return (String::from_utf8(text).unwrap(), true),
        }
    }
}
