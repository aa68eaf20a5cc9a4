//! Validation over HTTP: statuses, error bodies and the real wording.

use serde_json::{Value, json};
use tine_mock_api::Scenario;

use super::support::*;

async fn error_of(resp: reqwest::Response) -> (u16, String, String) {
    let status = resp.status().as_u16();
    assert!(resp.headers().contains_key("request-id"));
    let v: Value = resp.json().await.unwrap();
    assert_eq!(v["type"], "error");
    (
        status,
        v["error"]["type"].as_str().unwrap().to_string(),
        v["error"]["message"].as_str().unwrap().to_string(),
    )
}

#[tokio::test]
async fn missing_key_is_401_and_bearer_is_accepted() {
    let server = start(Scenario::new()).await;
    let url = format!("{}/v1/messages", server.base_url());
    let resp = client()
        .post(&url)
        .header("anthropic-version", "2023-06-01")
        .body(body("x").to_string())
        .send()
        .await
        .unwrap();
    let (status, kind, msg) = error_of(resp).await;
    assert_eq!((status, kind.as_str()), (401, "authentication_error"));
    assert_eq!(msg, "x-api-key header is required");

    let resp = client()
        .post(&url)
        .header("authorization", "Bearer oauth-token")
        .header("anthropic-version", "2023-06-01")
        .body(body("x").to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    server.stop().await;
}

#[tokio::test]
async fn missing_version_is_400() {
    let server = start(Scenario::new()).await;
    let resp = client()
        .post(format!("{}/v1/messages", server.base_url()))
        .header("x-api-key", "k")
        .body(body("x").to_string())
        .send()
        .await
        .unwrap();
    let (status, kind, msg) = error_of(resp).await;
    assert_eq!((status, kind.as_str()), (400, "invalid_request_error"));
    assert_eq!(msg, "anthropic-version: header is required");
    server.stop().await;
}

#[tokio::test]
async fn body_errors_use_the_real_wording() {
    let server = start(Scenario::new()).await;
    let mut no_max = body("x");
    no_max.as_object_mut().unwrap().remove("max_tokens");
    let (s, _, m) = error_of(post(&server, &no_max).await).await;
    assert_eq!((s, m.as_str()), (400, "max_tokens: Field required"));

    let marked = json!({"type": "text", "text": "x", "cache_control": {"type": "ephemeral"}});
    let mut five = cached_body("x");
    five["messages"] = json!([{"role": "user", "content": [marked.clone(), marked.clone(), marked.clone(), marked]}]);
    let (s, _, m) = error_of(post(&server, &five).await).await;
    assert_eq!(s, 400);
    assert_eq!(
        m,
        "A maximum of 4 blocks with cache_control may be provided. Found 5."
    );

    let mut low = body("x");
    low["max_tokens"] = json!(4000);
    low["thinking"] = json!({"type": "enabled", "budget_tokens": 512});
    let (s, _, m) = error_of(post(&server, &low).await).await;
    assert_eq!(s, 400);
    assert_eq!(
        m,
        "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
    );

    let mut high = body("x");
    high["max_tokens"] = json!(2000);
    high["thinking"] = json!({"type": "enabled", "budget_tokens": 2000});
    let (s, _, m) = error_of(post(&server, &high).await).await;
    assert_eq!(s, 400);
    assert!(
        m.starts_with("`max_tokens` must be greater than `thinking.budget_tokens`."),
        "{m}"
    );

    let (s, _, m) = error_of(
        client()
            .post(format!("{}/v1/messages", server.base_url()))
            .header("x-api-key", "k")
            .header("anthropic-version", "2023-06-01")
            .body("{not json")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(s, 400);
    assert!(m.contains("error parsing the body"), "{m}");
    server.stop().await;
}

#[tokio::test]
async fn tool_pairing_is_checked_both_ways() {
    let server = start(Scenario::new()).await;
    let mut unanswered = body("x");
    unanswered["messages"] = json!([
        {"role": "user", "content": "read two files"},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_a", "name": "Read", "input": {}},
            {"type": "tool_use", "id": "toolu_b", "name": "Read", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_a", "content": "ok"}]},
    ]);
    let (s, _, m) = error_of(post(&server, &unanswered).await).await;
    assert_eq!(s, 400);
    assert_eq!(
        m,
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_b. Each `tool_use` block must have a corresponding `tool_result` block in the next message."
    );

    let mut stray = body("x");
    stray["messages"] = json!([
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"},
        {"role": "user", "content": [{"type": "text", "text": "see"}, {"type": "tool_result", "tool_use_id": "toolu_z", "content": "ok"}]},
    ]);
    let (s, _, m) = error_of(post(&server, &stray).await).await;
    assert_eq!(s, 400);
    assert_eq!(
        m,
        "messages.2.content.1: unexpected `tool_use_id` found in `tool_result` blocks: toolu_z. Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
    );
    // Errors are logged with their message.
    let log = server.requests();
    assert_eq!(log.len(), 2);
    assert_eq!(log[1].status, 400);
    assert!(log[1].error.as_deref().unwrap().contains("toolu_z"));
    server.stop().await;
}
