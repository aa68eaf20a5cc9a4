//! Cache accounting seen through HTTP usage figures.

use std::time::Duration;

use serde_json::{Value, json};
use tine_mock_api::{MockClock, MockConfig, MockServer, Reply, Scenario};

use super::support::*;

fn usage(v: &Value) -> (u64, u64, u64) {
    let u = &v["usage"];
    (
        u["cache_read_input_tokens"].as_u64().unwrap(),
        u["cache_creation_input_tokens"].as_u64().unwrap(),
        u["input_tokens"].as_u64().unwrap(),
    )
}

#[tokio::test]
async fn second_request_reads_and_expiry_uses_the_controlled_clock() {
    let clock = MockClock::manual();
    let server = MockServer::start(MockConfig::new(Scenario::new()).clock(clock.clone()))
        .await
        .unwrap();
    let b = cached_body("hello");
    let (_, first) = post_json(&server, &b).await;
    let (read, created, input) = usage(&first);
    assert_eq!(read, 0);
    assert!(created >= 1024);
    assert!(
        input > 0,
        "the user turn after the breakpoint is plain input"
    );
    assert_eq!(
        first["usage"]["cache_creation"]["ephemeral_5m_input_tokens"],
        created
    );

    clock.advance(Duration::from_secs(299));
    let (_, second) = post_json(&server, &b).await;
    assert_eq!(usage(&second), (created, 0, input));

    // The read refreshed the TTL; 301 s after it, the entry is gone.
    server.clock().advance(Duration::from_secs(301));
    let (_, third) = post_json(&server, &b).await;
    assert_eq!(usage(&third), (0, created, input));
    let log = server.requests();
    assert!(log[1].cache.as_ref().unwrap().hit.is_some());
    assert!(log[2].cache.as_ref().unwrap().hit.is_none());
    server.stop().await;
}

#[tokio::test]
async fn concurrent_identical_requests_both_write() {
    // A second of time-to-first-byte keeps both requests in flight together.
    let server = start(
        Scenario::new()
            .latency_ms(1000)
            .default_reply(Reply::text("ok")),
    )
    .await;
    let b = cached_body("same");
    let (a, c) = tokio::join!(post_json(&server, &b), post_json(&server, &b));
    assert_eq!(usage(&a.1).0, 0);
    assert_eq!(usage(&c.1).0, 0);
    assert!(usage(&a.1).1 > 0 && usage(&c.1).1 > 0);
    // Once a response has started, the entry is readable.
    let (_, later) = post_json(&server, &b).await;
    assert!(usage(&later).0 > 0);
    server.stop().await;
}

#[tokio::test]
async fn a_changed_tool_misses_over_http() {
    let server = start(Scenario::new()).await;
    let mut b = cached_body("x");
    b["tools"] = json!([{"name": "Read", "description": "Reads a file", "input_schema": {"type": "object"}}]);
    post_json(&server, &b).await;
    b["tools"][0]["description"] = json!("Reads a file.");
    let (_, v) = post_json(&server, &b).await;
    assert_eq!(usage(&v).0, 0);
    server.stop().await;
}
