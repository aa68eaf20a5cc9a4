//! Injected faults over real HTTP.

use serde_json::{Value, json};
use tine_mock_api::{Fault, Reply, Rule, Scenario};

use super::support::*;

#[tokio::test]
async fn http_faults_carry_status_type_and_retry_after() {
    let server = start(
        Scenario::new()
            .rule(
                Rule::new()
                    .request(1)
                    .fault(Fault::http_retry_after(429, 7)),
            )
            .rule(Rule::new().request(2).fault(Fault::http(529)))
            .rule(Rule::new().request(3).fault(Fault::http(500))),
    )
    .await;
    let resp = post(&server, &body("x")).await;
    assert_eq!(resp.status(), 429);
    assert_eq!(resp.headers()["retry-after"], "7");
    let v: Value = resp.json().await.unwrap();
    assert_eq!(v["error"]["type"], "rate_limit_error");

    let (s, v) = post_json(&server, &body("x")).await;
    assert_eq!(s, 529);
    assert_eq!(
        v["error"],
        json!({"type": "overloaded_error", "message": "Overloaded"})
    );

    let (s, v) = post_json(&server, &body("x")).await;
    assert_eq!(s, 500);
    assert_eq!(v["error"]["type"], "api_error");

    // Request 4: no fault any more.
    let (s, _) = post_json(&server, &body("x")).await;
    assert_eq!(s, 200);
    let log = server.requests();
    assert_eq!(log[0].fault.as_deref(), Some("http 429"));
    assert!(log[0].usage.is_none(), "a refused request is not billed");
    server.stop().await;
}

#[tokio::test]
async fn sse_error_arrives_mid_stream_after_a_200() {
    let server = start(
        Scenario::new().rule(
            Rule::new()
                .reply(Reply::text(
                    "a fairly long answer that will never finish streaming",
                ))
                .fault(Fault::sse_error(4)),
        ),
    )
    .await;
    let mut b = body("x");
    b["stream"] = json!(true);
    let resp = post(&server, &b).await;
    assert_eq!(resp.status(), 200);
    let events = parse_sse(&resp.text().await.unwrap());
    assert_eq!(events.len(), 5);
    let (name, data) = events.last().unwrap();
    assert_eq!(name, "error");
    assert_eq!(data["error"]["type"], "overloaded_error");
    assert!(!events.iter().any(|(e, _)| e == "message_stop"));

    // Non-streaming: the same fault is an HTTP 529.
    let (s, v) = post_json(&server, &body("x")).await;
    assert_eq!(s, 529);
    assert_eq!(v["error"]["type"], "overloaded_error");
    server.stop().await;
}

#[tokio::test]
async fn dropped_connection_ends_the_body_before_message_stop() {
    let server = start(
        Scenario::new().rule(
            Rule::new()
                .reply(Reply::text("partial answer"))
                .fault(Fault::drop_after(3)),
        ),
    )
    .await;
    let mut b = body("x");
    b["stream"] = json!(true);
    let resp = post(&server, &b).await;
    assert_eq!(resp.status(), 200);
    let (text, failed) = read_until_end(resp).await;
    assert!(failed, "the body must end with a transport error");
    assert!(text.contains("message_start"));
    assert!(!text.contains("message_stop"));
    server.stop().await;
}

#[tokio::test]
async fn a_corrupt_frame_has_data_that_is_not_json() {
    let server = start(
        Scenario::new().rule(
            Rule::new()
                .reply(Reply::text("partial answer"))
                .fault(Fault::corrupt_after(3)),
        ),
    )
    .await;
    let mut b = body("x");
    b["stream"] = json!(true);
    let resp = post(&server, &b).await;
    assert_eq!(resp.status(), 200);
    let (text, failed) = read_until_end(resp).await;
    assert!(!failed, "the body ends cleanly");
    let frames: Vec<&str> = text.split("\n\n").filter(|f| !f.is_empty()).collect();
    assert_eq!(frames.len(), 4, "{text}");
    let data = frames[3]
        .lines()
        .nth(1)
        .unwrap()
        .trim_start_matches("data: ");
    assert!(serde_json::from_str::<Value>(data).is_err(), "{data}");
    assert!(!text.contains("message_stop"));
    assert_eq!(
        server.requests()[0].fault.as_deref(),
        Some("corrupt frame after 3 events")
    );

    // Without streaming: a 200 whose body is not JSON.
    let resp = post(&server, &body("x")).await;
    assert_eq!(resp.status(), 200);
    let bytes = resp.bytes().await.unwrap();
    assert!(serde_json::from_slice::<Value>(&bytes).is_err());
    server.stop().await;
}

#[tokio::test]
async fn slow_streaming_still_delivers_every_event() {
    let server = start(
        Scenario::new()
            .chunk_delay_ms(5)
            .default_reply(Reply::text("slow but complete")),
    )
    .await;
    let mut b = body("x");
    b["stream"] = json!(true);
    let events = parse_sse(&post(&server, &b).await.text().await.unwrap());
    assert_eq!(events.last().unwrap().0, "message_stop");
    server.stop().await;
}

#[tokio::test]
async fn prompts_above_the_context_window_are_too_long() {
    let server = start(Scenario::new().context_window(1000)).await;
    let (s, v) = post_json(&server, &cached_body("x")).await;
    assert_eq!(s, 400);
    let msg = v["error"]["message"].as_str().unwrap();
    let record = &server.requests()[0];
    assert_eq!(record.status, 400);
    assert!(record.usage.is_none(), "a refused prompt is not billed");
    let re = regex::Regex::new(r"^prompt is too long: (\d+) tokens > 1000 maximum$").unwrap();
    let caps = re.captures(msg).unwrap_or_else(|| panic!("{msg}"));
    assert!(caps[1].parse::<u64>().unwrap() > 1000);
    // A small prompt passes.
    let (s, _) = post_json(&server, &body("x")).await;
    assert_eq!(s, 200);
    server.stop().await;
}

#[tokio::test]
async fn output_room_check_uses_the_real_wording() {
    let server = start(Scenario::new().context_window(5000).check_output_room(true)).await;
    let mut b = cached_body("x");
    b["max_tokens"] = json!(4000);
    let (s, v) = post_json(&server, &b).await;
    assert_eq!(s, 400);
    let msg = v["error"]["message"].as_str().unwrap();
    assert!(
        msg.starts_with("input length and `max_tokens` exceed context limit: "),
        "{msg}"
    );
    assert!(msg.contains("+ 4000 > 5000"), "{msg}");
    server.stop().await;
}

#[tokio::test]
async fn forced_prompt_too_long_on_a_chosen_request() {
    let server =
        start(Scenario::new().rule(Rule::new().request(2).fault(Fault::prompt_too_long()))).await;
    assert_eq!(post_json(&server, &body("x")).await.0, 200);
    let (s, v) = post_json(&server, &body("x")).await;
    assert_eq!(s, 400);
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("prompt is too long: 200001 tokens > 200000 maximum")
    );
    server.stop().await;
}

#[tokio::test]
async fn long_replies_are_cut_at_max_tokens() {
    let server = start(Scenario::new().default_reply(Reply::text(&"many words ".repeat(50)))).await;
    let mut b = body("x");
    b["max_tokens"] = json!(10);
    let (_, v) = post_json(&server, &b).await;
    assert_eq!(v["stop_reason"], "max_tokens");
    assert_eq!(v["usage"]["output_tokens"], 10);
    assert_eq!(v["content"][0]["text"].as_str().unwrap().len(), 40);
    b["stream"] = json!(true);
    let events = parse_sse(&post(&server, &b).await.text().await.unwrap());
    let delta = &events[events.len() - 2].1;
    assert_eq!(delta["delta"]["stop_reason"], "max_tokens");
    server.stop().await;
}
