//! `HttpClient` against the local server: headers, bytes, errors, retries, dropped streams.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

use std::time::Duration;

use futures::StreamExt;
use serde_json::json;
use tine_api_client::{
    ApiError, ApiErrorKind, ClientConfig, ClientEvent, ContentBlock, Credentials, HttpClient,
    Message, MessageAccumulator, MessagesRequest, ModelClient, RetryNotice, RetryPolicy,
    StopReason, StreamEvent, collect_message, message_events, reply,
};

use super::server::{Reply, TestServer};

fn fast_retries(max_attempts: u32) -> RetryPolicy {
    RetryPolicy {
        max_attempts,
        base_delay: Duration::from_millis(1),
        max_delay: Duration::from_millis(5),
        ..RetryPolicy::default()
    }
}

fn client(server: &TestServer, max_attempts: u32) -> HttpClient {
    let config = ClientConfig::new(&server.base_url, Credentials::api_key("sk-test-key"))
        .with_beta("prompt-caching-2024-07-31")
        .with_beta("interleaved-thinking-2025-05-14")
        .with_retry(fast_retries(max_attempts));
    HttpClient::new(config).unwrap()
}

fn request() -> MessagesRequest {
    MessagesRequest::new("claude-sonnet-4-5", 1024, vec![Message::user("hello")])
}

fn sse_of(text: &str) -> String {
    let message = reply(vec![ContentBlock::text(text)], StopReason::EndTurn);
    message_events(&message)
        .iter()
        .map(StreamEvent::to_sse)
        .collect()
}

async fn run(client: &HttpClient) -> (Vec<ClientEvent>, Option<ApiError>) {
    let mut stream = client.stream(request());
    let mut events = Vec::new();
    while let Some(item) = stream.next().await {
        match item {
            Ok(event) => events.push(event),
            Err(error) => return (events, Some(error)),
        }
    }
    (events, None)
}

fn notices(events: &[ClientEvent]) -> Vec<RetryNotice> {
    events
        .iter()
        .filter_map(|e| match e {
            ClientEvent::Retry(n) => Some(n.clone()),
            ClientEvent::Stream(_) => None,
        })
        .collect()
}

#[tokio::test]
async fn streams_a_reply_with_the_right_headers_and_exact_bytes() {
    let server = TestServer::start(vec![Reply::sse(sse_of(
        "Hello, wörld! 🦀 This text spans several chunks.",
    ))])
    .await;
    let client = client(&server, 3);
    let (message, retries) = collect_message(client.stream(request())).await.unwrap();
    assert_eq!(
        message.text(),
        "Hello, wörld! 🦀 This text spans several chunks."
    );
    assert_eq!(message.stop_reason, Some(StopReason::EndTurn));
    assert!(retries.is_empty());

    let seen = server.requests();
    assert_eq!(seen.len(), 1);
    let r = &seen[0];
    assert_eq!(
        (r.method.as_str(), r.path.as_str()),
        ("POST", "/v1/messages")
    );
    assert_eq!(r.headers["x-api-key"], "sk-test-key");
    assert_eq!(r.headers["anthropic-version"], "2023-06-01");
    assert_eq!(
        r.headers["anthropic-beta"],
        "prompt-caching-2024-07-31,interleaved-thinking-2025-05-14"
    );
    assert_eq!(r.headers["content-type"], "application/json");
    assert!(!r.headers.contains_key("authorization"));
    assert_eq!(r.body, request().streaming().to_json_bytes());
    assert!(String::from_utf8_lossy(&r.body).contains("\"stream\":true"));
}

#[tokio::test]
async fn bearer_token_goes_in_authorization() {
    let server = TestServer::start(vec![Reply::sse(sse_of("ok"))]).await;
    let config = ClientConfig::new(&server.base_url, Credentials::auth_token("tok-123"));
    let client = HttpClient::new(config).unwrap();
    collect_message(client.stream(request())).await.unwrap();
    let r = &server.requests()[0];
    assert_eq!(r.headers["authorization"], "Bearer tok-123");
    assert!(!r.headers.contains_key("x-api-key"));
    assert!(!r.headers.contains_key("anthropic-beta"));
}

#[tokio::test]
async fn no_credentials_is_refused_before_any_request() {
    let config = ClientConfig::new(
        "http://127.0.0.1:9",
        Credentials {
            api_key: None,
            auth_token: None,
        },
    );
    let err = HttpClient::new(config).unwrap_err();
    assert!(matches!(err, ApiError::MissingCredentials));
    assert!(err.to_string().contains("ANTHROPIC_API_KEY"));
}

#[tokio::test]
async fn overloaded_is_retried_with_a_visible_notice_and_identical_bytes() {
    let server = TestServer::start(vec![
        Reply::error(529, "overloaded_error", "Overloaded"),
        Reply::error(500, "api_error", "Internal error"),
        Reply::sse(sse_of("finally")),
    ])
    .await;
    let client = client(&server, 5);
    let (events, error) = run(&client).await;
    assert!(error.is_none(), "{error:?}");
    let notices = notices(&events);
    assert_eq!(notices.len(), 2);
    assert_eq!((notices[0].attempt, notices[0].max_attempts), (2, 5));
    assert_eq!(notices[0].reason.kind(), Some(&ApiErrorKind::Overloaded));
    assert_eq!(notices[0].reason.request_id(), Some("req_1"));
    assert!(
        !notices[0].discard_partial,
        "nothing was streamed before a status error"
    );
    assert_eq!(notices[1].attempt, 3);
    assert!(
        notices[1].to_string().contains("attempt 3 of 5"),
        "{}",
        notices[1]
    );
    let seen = server.requests();
    assert_eq!(seen.len(), 3);
    assert!(
        seen.iter().all(|r| r.body == seen[0].body),
        "every attempt sends identical bytes"
    );
}

#[tokio::test]
async fn retry_after_ms_is_honoured() {
    let server = TestServer::start(vec![
        Reply::error(429, "rate_limit_error", "slow down").with_header("retry-after-ms", "7"),
        Reply::sse(sse_of("ok")),
    ])
    .await;
    let (events, error) = run(&client(&server, 3)).await;
    assert!(error.is_none());
    assert_eq!(notices(&events)[0].delay, Duration::from_millis(7));
}

#[tokio::test]
async fn client_errors_are_not_retried_and_keep_details() {
    let server = TestServer::start(vec![Reply::error(
        400,
        "invalid_request_error",
        "prompt is too long: 219898 tokens > 200000 maximum",
    )])
    .await;
    let (events, error) = run(&client(&server, 5)).await;
    assert!(events.is_empty());
    let error = error.unwrap();
    assert_eq!(error.status(), Some(400));
    assert_eq!(error.kind(), Some(&ApiErrorKind::InvalidRequest));
    assert_eq!(error.prompt_too_long(), Some((219_898, 200_000)));
    assert_eq!(error.request_id(), Some("req_1"));
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn every_non_retryable_status_fails_at_once() {
    for (status, error_type) in [
        (401, "authentication_error"),
        (402, "billing_error"),
        (403, "permission_error"),
        (404, "not_found_error"),
        (413, "request_too_large"),
    ] {
        let server = TestServer::start(vec![Reply::error(status, error_type, "no")]).await;
        let (_, error) = run(&client(&server, 5)).await;
        let error = error.unwrap();
        assert_eq!(error.status(), Some(status));
        assert_eq!(
            error.kind().map(|k| k.as_str().to_owned()),
            Some(error_type.to_owned())
        );
        assert_eq!(server.requests().len(), 1, "{status} must not be retried");
    }
}

#[tokio::test]
async fn x_should_retry_false_stops_a_5xx_and_true_retries_a_4xx() {
    let server = TestServer::start(vec![
        Reply::error(500, "api_error", "no").with_header("x-should-retry", "false"),
    ])
    .await;
    let (_, error) = run(&client(&server, 5)).await;
    assert_eq!(error.unwrap().status(), Some(500));
    assert_eq!(server.requests().len(), 1);

    let server = TestServer::start(vec![
        Reply::error(400, "invalid_request_error", "transient")
            .with_header("x-should-retry", "true"),
        Reply::sse(sse_of("ok")),
    ])
    .await;
    let (events, error) = run(&client(&server, 5)).await;
    assert!(error.is_none());
    assert_eq!(notices(&events).len(), 1);
}

#[tokio::test]
async fn gives_up_after_max_attempts_with_the_last_error() {
    let server = TestServer::start(vec![
        Reply::error(529, "overloaded_error", "one"),
        Reply::error(529, "overloaded_error", "two"),
        Reply::error(529, "overloaded_error", "three"),
    ])
    .await;
    let (events, error) = run(&client(&server, 3)).await;
    assert_eq!(notices(&events).len(), 2);
    let error = error.unwrap();
    assert_eq!(error.api_message(), Some("three"));
    assert_eq!(server.requests().len(), 3);
}

/// What a UI does: show deltas live, clear them when a retry discards the attempt.
fn render(events: &[ClientEvent]) -> String {
    let mut shown = String::new();
    for event in events {
        match event {
            ClientEvent::Stream(StreamEvent::ContentBlockDelta {
                delta: tine_api_client::ContentDelta::TextDelta { text },
                ..
            }) => shown.push_str(text),
            ClientEvent::Retry(notice) if notice.discard_partial => shown.clear(),
            ClientEvent::Stream(_) | ClientEvent::Retry(_) => {}
        }
    }
    shown
}

#[tokio::test]
async fn a_stream_dropped_mid_response_is_retried_without_duplicated_content() {
    let full = sse_of("The quick brown fox jumps over the lazy dog, twice over.");
    let cut = full.find("lazy").unwrap();
    let server = TestServer::start(vec![
        Reply::Sse {
            body: full.clone(),
            cut_at: Some(cut),
        },
        Reply::sse(full),
    ])
    .await;
    let client = client(&server, 3);

    let (events, error) = run(&client).await;
    assert!(error.is_none(), "{error:?}");
    let notices = notices(&events);
    assert_eq!(notices.len(), 1);
    assert!(
        notices[0].discard_partial,
        "partial content was yielded and must be discarded"
    );
    assert!(
        matches!(
            notices[0].reason,
            ApiError::Connection { .. } | ApiError::IncompleteStream { .. }
        ),
        "{:?}",
        notices[0].reason
    );
    assert_eq!(
        render(&events),
        "The quick brown fox jumps over the lazy dog, twice over."
    );

    // The same through the accumulator-based helper.
    let full = sse_of("abc def ghi jkl mno pqr stu vwx");
    let server = TestServer::start(vec![
        Reply::Sse {
            body: full.clone(),
            cut_at: Some(full.len() / 2),
        },
        Reply::sse(full),
    ])
    .await;
    let (message, retries) = collect_message(client_for(&server).stream(request()))
        .await
        .unwrap();
    assert_eq!(message.text(), "abc def ghi jkl mno pqr stu vwx");
    assert_eq!(retries.len(), 1);
}

fn client_for(server: &TestServer) -> HttpClient {
    client(server, 3)
}

#[tokio::test]
async fn a_stream_ending_before_message_stop_is_retried() {
    let full = sse_of("complete");
    let truncated = full[..full.find("event: message_stop").unwrap()].to_owned();
    let server = TestServer::start(vec![Reply::sse(truncated), Reply::sse(full)]).await;
    let (events, error) = run(&client(&server, 3)).await;
    assert!(error.is_none());
    let notices = notices(&events);
    assert!(
        matches!(notices[0].reason, ApiError::IncompleteStream { request_id: Some(ref id) } if id == "req_1")
    );
    assert!(notices[0].discard_partial);
    let mut acc = MessageAccumulator::new();
    for event in &events {
        match event {
            ClientEvent::Stream(e) => acc.push(e).unwrap(),
            ClientEvent::Retry(_) => acc.reset(),
        }
    }
    assert_eq!(acc.finish().unwrap().text(), "complete");
}

#[tokio::test]
async fn in_stream_error_events() {
    let start = sse_of("x");
    let first_event_end = start.find("\n\n").unwrap() + 2;
    let overloaded = format!(
        "{}event: error\ndata: {}\n\n",
        &start[..first_event_end],
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
    );
    let server = TestServer::start(vec![
        Reply::sse(overloaded),
        Reply::sse(sse_of("recovered")),
    ])
    .await;
    let (message, retries) = collect_message(client(&server, 3).stream(request()))
        .await
        .unwrap();
    assert_eq!(message.text(), "recovered");
    assert!(matches!(
        retries[0].reason,
        ApiError::StreamError {
            kind: ApiErrorKind::Overloaded,
            ..
        }
    ));
    assert!(retries[0].discard_partial);

    let invalid = format!(
        "{}event: error\ndata: {}\n\n",
        &start[..first_event_end],
        json!({"type": "error", "error": {"type": "invalid_request_error", "message": "bad"}})
    );
    let server = TestServer::start(vec![Reply::sse(invalid)]).await;
    let err = collect_message(client(&server, 3).stream(request()))
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            ApiError::StreamError {
                kind: ApiErrorKind::InvalidRequest,
                request_id: Some(_),
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn a_refused_local_connection_says_nothing_is_listening_after_three_attempts() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base_url = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let config =
        ClientConfig::new(base_url.clone(), Credentials::api_key("k")).with_retry(fast_retries(10));
    let client = HttpClient::new(config).unwrap();
    let (events, error) = run(&client).await;
    let notices = notices(&events);
    assert_eq!(
        notices.iter().map(|n| n.attempt).collect::<Vec<_>>(),
        [2, 3],
        "three attempts in all, not ten"
    );
    assert!(notices.iter().all(|n| n.max_attempts == 3));
    let error = error.expect("the stream ends with the error");
    assert!(
        matches!(error, ApiError::NothingListening { ref url } if *url == base_url),
        "{error:?}"
    );
    let message = error.to_string();
    assert!(message.contains(&base_url), "{message}");
    assert!(message.contains("nothing is listening"), "{message}");
    assert!(message.contains("ANTHROPIC_BASE_URL"), "{message}");
}

#[tokio::test]
async fn a_corrupt_frame_is_retried_like_a_dropped_stream() {
    let good = sse_of("after the corrupt frame");
    let first_event_end = good.find("\n\n").unwrap() + 2;
    let corrupt = format!(
        "{}event: content_block_start\ndata: {{\"type\": \"content_block_st\n\n",
        &good[..first_event_end]
    );
    let server = TestServer::start(vec![Reply::sse(corrupt), Reply::sse(good)]).await;
    let (message, retries) = collect_message(client(&server, 3).stream(request()))
        .await
        .unwrap();
    assert_eq!(message.text(), "after the corrupt frame");
    assert_eq!(retries.len(), 1);
    assert!(
        matches!(
            retries[0].reason,
            ApiError::CorruptStream {
                request_id: Some(_),
                ..
            }
        ),
        "{:?}",
        retries[0].reason
    );
    // message_start had been yielded: the consumer must drop it.
    assert!(retries[0].discard_partial);
    assert_eq!(server.requests().len(), 2);

    // Corrupt every time: the retries run out and the error says what was wrong.
    let broken = "event: message_start\ndata: {broken\n\n".to_owned();
    let server = TestServer::start(vec![
        Reply::sse(broken.clone()),
        Reply::sse(broken.clone()),
        Reply::sse(broken),
    ])
    .await;
    let err = collect_message(client(&server, 3).stream(request()))
        .await
        .unwrap_err();
    assert!(matches!(err, ApiError::CorruptStream { .. }), "{err:?}");
    assert!(err.to_string().contains("could not be decoded"), "{err}");
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn count_tokens_posts_the_body_without_max_tokens() {
    let server = TestServer::start(vec![
        Reply::error(529, "overloaded_error", "busy"),
        Reply::json(200, r#"{"input_tokens": 1234}"#),
    ])
    .await;
    let mut request = request();
    request.temperature = Some(0.5);
    let tokens = client(&server, 3)
        .count_tokens(request.clone())
        .await
        .unwrap();
    assert_eq!(tokens, 1234);
    let seen = server.requests();
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[1].path, "/v1/messages/count_tokens");
    let body: serde_json::Value = serde_json::from_slice(&seen[1].body).unwrap();
    assert_eq!(
        body,
        json!({"model": "claude-sonnet-4-5", "messages": [{"role": "user", "content": "hello"}]})
    );
    assert_eq!(seen[1].body, request.count_tokens_body());
}

#[tokio::test]
async fn debug_output_never_shows_credentials() {
    let config = ClientConfig::new(
        "http://127.0.0.1:9",
        Credentials {
            api_key: Some("sk-secret-1".into()),
            auth_token: Some("tok-secret-2".into()),
        },
    );
    let client = HttpClient::new(config).unwrap();
    let debug = format!("{client:?}");
    assert!(
        !debug.contains("sk-secret-1") && !debug.contains("tok-secret-2"),
        "{debug}"
    );
}
