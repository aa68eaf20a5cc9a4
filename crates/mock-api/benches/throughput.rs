//! Non-streaming requests per second against the simulator on loopback, with a 50k-token
//! prompt and several concurrent client connections. Target: >= 500 req/s on 2 cores.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use serde_json::json;
use tine_mock_api::{MockConfig, MockServer, Scenario};

const CONNECTIONS: usize = 4;
const PROMPT_TOKENS: usize = 50_000;
const RUN_FOR: Duration = Duration::from_secs(5);
const TARGET: f64 = 500.0;

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    rt.block_on(run());
}

async fn run() {
    let server = MockServer::start(MockConfig::new(Scenario::new()).log_limit(0))
        .await
        .expect("start the simulator");
    let url = format!("{}/v1/messages", server.base_url());
    // ~50k tokens of system prompt (4 bytes a token), cached, plus a short user turn.
    let system = "All work and no play makes Jack a dull boy. ".repeat(PROMPT_TOKENS * 4 / 44);
    let body = json!({
        "model": "claude-bench",
        "max_tokens": 64,
        "system": [{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}],
        "messages": [{"role": "user", "content": "hello"}],
    })
    .to_string();
    let body = bytes::Bytes::from(body);

    let mut tasks = Vec::new();
    let start = Instant::now();
    for _ in 0..CONNECTIONS {
        let client = reqwest::Client::new();
        let url = url.clone();
        let body = body.clone();
        tasks.push(tokio::spawn(async move {
            let mut done = 0u64;
            while start.elapsed() < RUN_FOR {
                let resp = client
                    .post(&url)
                    .header("x-api-key", "bench")
                    .header("anthropic-version", "2023-06-01")
                    .header("content-type", "application/json")
                    .body(body.clone())
                    .send()
                    .await
                    .expect("send");
                assert!(resp.status().is_success(), "status {}", resp.status());
                let _ = resp.bytes().await.expect("body");
                done += 1;
            }
            done
        }));
    }
    let mut total = 0;
    for t in tasks {
        total += t.await.expect("client task");
    }
    let secs = start.elapsed().as_secs_f64();
    let rate = total as f64 / secs;
    println!(
        "mock: {rate:.0} req/s (target >= {TARGET:.0} req/s) [{total} requests, {CONNECTIONS} connections, ~{PROMPT_TOKENS}-token prompt]"
    );
    server.stop().await;
}
