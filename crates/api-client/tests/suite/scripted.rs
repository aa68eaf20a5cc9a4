//! The scripted fake behind `Arc<dyn ModelClient>`, as upper crates use it.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tine_api_client::{
    ApiError, ClientEvent, ContentBlock, ContentDelta, Message, MessagesRequest, ModelClient,
    RetryNotice, ScriptedClient, StreamEvent, collect_message, message_events,
};

fn request(text: &str) -> MessagesRequest {
    MessagesRequest::new("claude-haiku-4-5", 256, vec![Message::user(text)])
}

#[tokio::test]
async fn replays_in_order_and_records_requests() {
    let fake = ScriptedClient::new();
    fake.push_message(ScriptedClient::tool_use_reply(
        "toolu_1",
        "Read",
        json!({"file_path": "a.rs"}),
    ));
    fake.push_message(ScriptedClient::text_reply("done"));
    let client: Arc<dyn ModelClient> = Arc::new(fake.clone());

    let (first, _) = collect_message(client.stream(request("one")))
        .await
        .unwrap();
    assert_eq!(
        first.content,
        vec![ContentBlock::tool_use(
            "toolu_1",
            "Read",
            json!({"file_path": "a.rs"})
        )]
    );
    let (second, _) = collect_message(client.stream(request("two")))
        .await
        .unwrap();
    assert_eq!(second.text(), "done");

    let seen = fake.requests();
    assert_eq!(seen, vec![request("one"), request("two")]);
    assert_eq!(fake.remaining(), 0);
    let err = collect_message(client.stream(request("three")))
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("no scripted reply left for request #3"),
        "{err}"
    );
}

#[tokio::test]
async fn scripts_retries_and_errors() {
    let fake = ScriptedClient::new();
    let partial = vec![
        Ok(ClientEvent::Stream(
            message_events(&ScriptedClient::text_reply("x"))[0].clone(),
        )),
        Ok(ClientEvent::Stream(StreamEvent::ContentBlockStart {
            index: 0,
            content_block: ContentBlock::text(""),
        })),
        Ok(ClientEvent::Stream(StreamEvent::ContentBlockDelta {
            index: 0,
            delta: ContentDelta::TextDelta { text: "dup".into() },
        })),
        Ok(ClientEvent::Retry(RetryNotice {
            attempt: 2,
            max_attempts: 10,
            delay: Duration::from_secs(4),
            reason: ApiError::IncompleteStream { request_id: None },
            discard_partial: true,
        })),
    ];
    let mut script = partial;
    script.extend(
        message_events(&ScriptedClient::text_reply("whole"))
            .into_iter()
            .map(|e| Ok(ClientEvent::Stream(e))),
    );
    fake.push_script(script);
    fake.push_error(ApiError::from_response(401, b"", None, None, None));

    let (message, retries) = collect_message(fake.stream(request("a"))).await.unwrap();
    assert_eq!(message.text(), "whole");
    assert_eq!(retries.len(), 1);
    assert!(
        retries[0]
            .to_string()
            .starts_with("retrying in 4 s (attempt 2 of 10)")
    );
    let err = collect_message(fake.stream(request("b")))
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(401));
}

#[tokio::test]
async fn count_tokens_scripted_or_estimated() {
    let fake = ScriptedClient::new();
    fake.push_token_count(Ok(4242));
    assert_eq!(fake.count_tokens(request("x")).await.unwrap(), 4242);
    let estimate = fake.count_tokens(request("x")).await.unwrap();
    assert_eq!(
        estimate,
        (request("x").count_tokens_body().len() as u64).div_ceil(4)
    );
    assert_eq!(fake.count_token_requests().len(), 2);
}
