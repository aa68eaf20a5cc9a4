//! Response shapes: non-streaming JSON, the SSE sequence, count_tokens, the request log.

use serde_json::{Value, json};
use tine_mock_api::{Reply, Rule, Scenario};

use super::support::*;

#[tokio::test]
async fn non_streaming_message_has_the_real_shape() {
    let server = start(Scenario::new().default_reply(Reply::text("Hello there."))).await;
    let resp = post(&server, &body("hi")).await;
    assert_eq!(resp.status(), 200);
    let request_id = resp
        .headers()
        .get("request-id")
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    assert!(request_id.starts_with("req_"));
    let msg: Value = resp.json().await.unwrap();
    assert_eq!(msg["type"], "message");
    assert_eq!(msg["role"], "assistant");
    assert_eq!(msg["model"], "claude-test");
    assert_eq!(
        msg["content"],
        json!([{"type": "text", "text": "Hello there."}])
    );
    assert_eq!(msg["stop_reason"], "end_turn");
    assert!(msg["id"].as_str().unwrap().starts_with("msg_"));
    let usage = &msg["usage"];
    assert_eq!(usage["output_tokens"], 3); // 12 bytes / 4
    assert_eq!(usage["cache_read_input_tokens"], 0);
    assert_eq!(usage["cache_creation"]["ephemeral_5m_input_tokens"], 0);

    let log = server.requests();
    assert_eq!(log.len(), 1);
    assert_eq!(log[0].number, 1);
    assert_eq!(log[0].request_id, request_id);
    assert_eq!(log[0].header("x-api-key"), Some("test-key"));
    assert_eq!(log[0].json().unwrap()["messages"][0]["content"], "hi");
    assert_eq!(log[0].rule.as_deref(), Some("default"));
    let u = log[0].usage.unwrap();
    assert_eq!(u.input_tokens, usage["input_tokens"].as_u64().unwrap());
    server.stop().await;
}

#[tokio::test]
async fn streaming_sends_the_real_event_sequence() {
    let server = start(
        Scenario::new().default_reply(
            Reply::new()
                .with_thinking("Let me look.")
                .with_text("I will read the file now, then report back.")
                .with_tool_use("Read", json!({"file_path": "/tmp/a.txt"})),
        ),
    )
    .await;
    let mut b = cached_body("read it");
    b["stream"] = json!(true);
    let resp = post(&server, &b).await;
    assert_eq!(resp.status(), 200);
    assert!(
        resp.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream")
    );
    assert!(resp.headers().contains_key("request-id"));
    let events = parse_sse(&resp.text().await.unwrap());
    let names: Vec<&str> = events.iter().map(|(e, _)| e.as_str()).collect();
    assert_eq!(names[0], "message_start");
    assert!(names.contains(&"ping"));
    assert_eq!(names[names.len() - 2], "message_delta");
    assert_eq!(names[names.len() - 1], "message_stop");
    for (event, data) in &events {
        assert_eq!(
            data["type"].as_str(),
            Some(event.as_str()),
            "data type matches event name"
        );
    }
    let start = &events[0].1["message"];
    assert_eq!(start["content"], json!([]));
    assert!(start["stop_reason"].is_null());
    let start_usage = &start["usage"];
    let total = start_usage["input_tokens"].as_u64().unwrap()
        + start_usage["cache_creation_input_tokens"].as_u64().unwrap()
        + start_usage["cache_read_input_tokens"].as_u64().unwrap();
    assert_eq!(
        total,
        server.requests()[0].cache.as_ref().unwrap().prompt_tokens
    );
    assert!(start_usage["cache_creation_input_tokens"].as_u64().unwrap() > 1024);

    let starts: Vec<&Value> = events
        .iter()
        .filter(|(e, _)| e == "content_block_start")
        .map(|(_, d)| &d["content_block"])
        .collect();
    assert_eq!(starts[0]["type"], "thinking");
    assert_eq!(starts[1]["type"], "text");
    assert_eq!(starts[2]["type"], "tool_use");
    assert_eq!(starts[2]["id"], "toolu_mock_0001");
    assert_eq!(starts[2]["input"], json!({}));
    let partial: String = events
        .iter()
        .filter(|(_, d)| d["delta"]["type"] == "input_json_delta")
        .map(|(_, d)| d["delta"]["partial_json"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        serde_json::from_str::<Value>(&partial).unwrap(),
        json!({"file_path": "/tmp/a.txt"})
    );
    assert!(
        events
            .iter()
            .any(|(_, d)| d["delta"]["type"] == "signature_delta")
    );
    let delta = &events[events.len() - 2].1;
    assert_eq!(delta["delta"]["stop_reason"], "tool_use");
    assert!(delta["usage"]["output_tokens"].as_u64().unwrap() > 1);
    server.stop().await;
}

#[tokio::test]
async fn count_tokens_answers_the_prompt_size() {
    let server = start(Scenario::new()).await;
    let mut b = cached_body("x");
    b.as_object_mut().unwrap().remove("max_tokens");
    let resp = post_path(&server, "/v1/messages/count_tokens", &b).await;
    assert_eq!(resp.status(), 200);
    let v: Value = resp.json().await.unwrap();
    let n = v["input_tokens"].as_u64().unwrap();
    assert_eq!(v.as_object().unwrap().len(), 1);
    // Same estimate as a real request's total.
    let (_, msg) = post_json(&server, &cached_body("x")).await;
    let u = &msg["usage"];
    let total = u["input_tokens"].as_u64().unwrap()
        + u["cache_creation_input_tokens"].as_u64().unwrap()
        + u["cache_read_input_tokens"].as_u64().unwrap();
    assert_eq!(n, total);
    server.stop().await;
}

#[tokio::test]
async fn unknown_paths_get_a_not_found_error() {
    let server = start(Scenario::new()).await;
    let resp = post_path(&server, "/v1/nope", &body("x")).await;
    assert_eq!(resp.status(), 404);
    let v: Value = resp.json().await.unwrap();
    assert_eq!(v["error"]["type"], "not_found_error");
    server.stop().await;
}

#[tokio::test]
async fn jsonl_log_redacts_keys() {
    let dir = tempfile::tempdir().unwrap();
    let server = tine_mock_api::MockServer::start(
        tine_mock_api::MockConfig::new(
            Scenario::new().rule(Rule::new().named("greeting").reply(Reply::text("hey"))),
        )
        .log_dir(dir.path()),
    )
    .await
    .unwrap();
    post(&server, &body("hello")).await.text().await.unwrap();
    let path = server.log_path().unwrap().to_path_buf();
    server.stop().await;
    let text = std::fs::read_to_string(path).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["rule"], "greeting");
    assert_eq!(lines[0]["body"]["messages"][0]["content"], "hello");
    assert!(!text.contains("test-key"));
    assert!(lines[0]["usage"]["output_tokens"].as_u64().is_some());
}
