//! `OpenAiClient` against the local server: the path, headers and bytes, retries with the same
//! bytes, a stream cut mid-reply, context-length errors, and a server that is not running.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use futures::StreamExt;
use serde_json::{Value, json};
use tine_api_client::MaxTokensField;
use tine_api_client::{
    ApiError, ClientEvent, Message, MessageAccumulator, MessagesRequest, ModelClient, OpenAiClient,
    OpenAiConfig, RetryNotice, RetryPolicy, StopReason, collect_message,
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

fn client(server: &TestServer, max_attempts: u32) -> OpenAiClient {
    let config = OpenAiConfig::new(format!("{}/v1", server.base_url), "ollama")
        .with_retry(fast_retries(max_attempts));
    OpenAiClient::new(config).unwrap()
}

fn request() -> MessagesRequest {
    MessagesRequest::new("qwen2.5-coder:7b", 1024, vec![Message::user("hello")])
}

fn chunks(text: &str) -> String {
    let mut out = String::new();
    let mut push = |v: Value| out.push_str(&format!("data: {v}\n\n"));
    push(
        json!({"id": "c1", "model": "qwen2.5-coder:7b", "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": null}]}),
    );
    for word in text.split_inclusive(' ') {
        push(
            json!({"id": "c1", "choices": [{"index": 0, "delta": {"content": word}, "finish_reason": null}]}),
        );
    }
    push(json!({"id": "c1", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}));
    push(
        json!({"id": "c1", "choices": [], "usage": {"prompt_tokens": 20, "completion_tokens": 7, "prompt_tokens_details": {"cached_tokens": 16}}}),
    );
    out.push_str("data: [DONE]\n\n");
    out
}

fn openai_error(status: u16, message: &str, code: &str) -> Reply {
    Reply::json(
        status,
        &json!({"error": {"message": message, "type": "invalid_request_error", "code": code}})
            .to_string(),
    )
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

async fn run(client: &OpenAiClient) -> (Vec<ClientEvent>, Option<ApiError>) {
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

#[tokio::test]
async fn streams_a_reply_from_chat_completions_with_a_bearer_key() {
    let server = TestServer::start(vec![Reply::sse(chunks(
        "Hello from a local model, in several pieces.",
    ))])
    .await;
    let client = client(&server, 3);
    let (message, retries) = collect_message(client.stream(request())).await.unwrap();
    assert_eq!(
        message.text(),
        "Hello from a local model, in several pieces."
    );
    assert_eq!(message.stop_reason, Some(StopReason::EndTurn));
    assert_eq!(
        (
            message.usage.cache_read_input_tokens,
            message.usage.input_tokens,
            message.usage.output_tokens
        ),
        (16, 4, 7)
    );
    assert!(retries.is_empty());
    let seen = server.requests();
    assert_eq!(
        (seen[0].method.as_str(), seen[0].path.as_str()),
        ("POST", "/v1/chat/completions")
    );
    assert_eq!(seen[0].headers["authorization"], "Bearer ollama");
    assert!(!seen[0].headers.contains_key("x-api-key"));
    assert!(!seen[0].headers.contains_key("anthropic-version"));
    assert_eq!(seen[0].body, client.request_bytes(&request()));
    let body: Value = serde_json::from_slice(&seen[0].body).unwrap();
    assert_eq!(body["model"], "qwen2.5-coder:7b", "the name goes verbatim");
    assert_eq!(body["stream_options"], json!({"include_usage": true}));
    assert_eq!(body["max_tokens"], 1024);
    assert_eq!(client.config().max_tokens_field, MaxTokensField::MaxTokens);
}

#[tokio::test]
async fn server_errors_are_retried_with_identical_bytes() {
    let server = TestServer::start(vec![
        Reply::json(
            503,
            r#"{"error": {"message": "loading model", "type": "server_error"}}"#,
        )
        .with_header("retry-after", "0"),
        Reply::sse(chunks("ready now")),
    ])
    .await;
    let (events, error) = run(&client(&server, 4)).await;
    assert!(error.is_none(), "{error:?}");
    let notices = notices(&events);
    assert_eq!(notices.len(), 1);
    assert_eq!(notices[0].delay, Duration::ZERO, "retry-after is honoured");
    assert!(notices[0].reason.to_string().contains("loading model"));
    let seen = server.requests();
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[0].body, seen[1].body);
}

#[tokio::test]
async fn a_stream_cut_mid_reply_is_retried_and_discards_the_partial_reply() {
    let body = chunks("The whole answer arrives exactly once after the retry.");
    let server = TestServer::start(vec![
        Reply::Sse {
            body: body.clone(),
            cut_at: Some(body.len() / 2),
        },
        Reply::sse(body),
    ])
    .await;
    let client = client(&server, 3);
    let (events, error) = run(&client).await;
    assert!(error.is_none(), "{error:?}");
    let notices = notices(&events);
    assert_eq!(notices.len(), 1);
    assert!(notices[0].discard_partial);
    // Honouring the contract (reset on a retry) gives the reply once.
    let mut accumulator = MessageAccumulator::new();
    for event in &events {
        match event {
            ClientEvent::Stream(event) => accumulator.push(event).unwrap(),
            ClientEvent::Retry(_) => accumulator.reset(),
        }
    }
    assert_eq!(
        accumulator.finish().unwrap().text(),
        "The whole answer arrives exactly once after the retry."
    );
}

#[tokio::test]
async fn context_length_exceeded_is_not_retried_and_reads_as_prompt_too_long() {
    let server = TestServer::start(vec![openai_error(
        400,
        "This model's maximum context length is 32768 tokens. However, your messages resulted in 40000 tokens. Please reduce the length of the messages.",
        "context_length_exceeded",
    )])
    .await;
    let (events, error) = run(&client(&server, 5)).await;
    assert!(events.is_empty());
    let error = error.unwrap();
    assert!(error.is_context_length_exceeded());
    assert_eq!(error.prompt_too_long(), Some((40_000, 32_768)));
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn a_local_server_that_is_not_running_names_openai_base_url() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base_url = format!("http://{}/v1", listener.local_addr().unwrap());
    drop(listener);
    let client =
        OpenAiClient::new(OpenAiConfig::new(&base_url, "k").with_retry(fast_retries(10))).unwrap();
    let (events, error) = run(&client).await;
    assert_eq!(notices(&events).len(), 2, "three quick attempts");
    let message = error.unwrap().to_string();
    assert!(message.contains("nothing is listening"), "{message}");
    assert!(message.contains("OPENAI_BASE_URL"), "{message}");
    assert!(!message.contains("ANTHROPIC"), "{message}");
}

#[tokio::test]
async fn count_tokens_is_unsupported_and_the_window_can_be_configured() {
    let mut config = OpenAiConfig::new("http://127.0.0.1:9/v1", "k");
    config.context_window = Some(32_768);
    let client = OpenAiClient::new(config).unwrap();
    assert!(matches!(
        client.count_tokens(request()).await,
        Err(ApiError::Unsupported { .. })
    ));
    assert_eq!(client.context_window("qwen2.5-coder:7b"), 32_768);
    let default = OpenAiClient::new(OpenAiConfig::new("http://127.0.0.1:9/v1", "k")).unwrap();
    assert_eq!(default.context_window("qwen2.5-coder:7b"), 128_000);
}
