//! `POST /v1/chat/completions` over real HTTP: the same scenario rules, OpenAI chunks in both
//! dialects, prefix-cache figures, errors and faults in OpenAI's shape.

use serde_json::{Value, json};
use tine_mock_api::{ChatDialect, Fault, MockConfig, MockServer, Reply, Rule, Scenario};

use super::support::read_until_end;

async fn start_with(scenario: Scenario, dialect: ChatDialect) -> MockServer {
    MockServer::start(MockConfig::new(scenario).chat_dialect(dialect))
        .await
        .unwrap()
}

async fn post_chat(server: &MockServer, body: &Value) -> reqwest::Response {
    reqwest::Client::new()
        .post(format!("{}/chat/completions", server.openai_base_url()))
        .header("authorization", "Bearer local")
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .unwrap()
}

fn chat_body(user: &str) -> Value {
    json!({
        "model": "qwen2.5-coder:7b",
        "stream": true,
        "stream_options": {"include_usage": true},
        "messages": [
            {"role": "system", "content": "Be helpful and precise. ".repeat(100)},
            {"role": "user", "content": user},
        ],
        "max_tokens": 1000,
    })
}

/// The `data:` payloads of a chunk stream (without `[DONE]`), and whether `[DONE]` came.
fn datas(text: &str) -> (Vec<Value>, bool) {
    let mut done = false;
    let mut out = Vec::new();
    for line in text.lines() {
        let Some(data) = line.strip_prefix("data: ") else {
            continue;
        };
        if data == "[DONE]" {
            done = true;
        } else {
            out.push(serde_json::from_str(data).unwrap());
        }
    }
    (out, done)
}

fn text_of(chunks: &[Value]) -> String {
    chunks
        .iter()
        .filter_map(|c| {
            c.pointer("/choices/0/delta/content")
                .and_then(Value::as_str)
        })
        .collect()
}

#[tokio::test]
async fn the_same_rules_answer_and_the_reply_streams_as_chunks() {
    let server = start_with(
        Scenario::new()
            .rule(
                Rule::new()
                    .last_user_contains("hello")
                    .reply(Reply::text("Hi from the mock, in pieces.")),
            )
            .default_reply(Reply::text("other")),
        ChatDialect::OpenAi,
    )
    .await;
    let resp = post_chat(&server, &chat_body("hello there")).await;
    assert_eq!(resp.status(), 200);
    assert!(
        resp.headers()["x-request-id"]
            .to_str()
            .unwrap()
            .starts_with("req_mock_")
    );
    let (chunks, done) = datas(&resp.text().await.unwrap());
    assert!(done);
    assert_eq!(text_of(&chunks), "Hi from the mock, in pieces.");
    assert_eq!(chunks[0]["object"], "chat.completion.chunk");
    assert_eq!(chunks[0]["choices"][0]["delta"]["role"], "assistant");
    let usage = &chunks.last().unwrap()["usage"];
    assert_eq!(usage["prompt_tokens_details"]["cached_tokens"], 0);
    let log = server.requests();
    assert_eq!(log[0].path, "/v1/chat/completions");
    assert_eq!(log[0].rule.as_deref(), Some("rules[0]"));
    assert_eq!(log[0].number, 1);
    let normalized = log[0].messages_form().unwrap();
    assert_eq!(
        normalized["messages"][0]["content"][0]["text"],
        "hello there"
    );
    server.stop().await;
}

#[tokio::test]
async fn a_longer_conversation_reads_its_prefix_from_the_cache() {
    let server = start_with(Scenario::new(), ChatDialect::OpenAi).await;
    let first = chat_body("one");
    let resp = post_chat(&server, &first).await;
    let (chunks, _) = datas(&resp.text().await.unwrap());
    let first_prompt = chunks.last().unwrap()["usage"]["prompt_tokens"]
        .as_u64()
        .unwrap();
    let mut second = first.clone();
    let messages = second["messages"].as_array_mut().unwrap();
    messages.push(json!({"role": "assistant", "content": "OK."}));
    messages.push(json!({"role": "user", "content": "two"}));
    let resp = post_chat(&server, &second).await;
    let (chunks, _) = datas(&resp.text().await.unwrap());
    let usage = &chunks.last().unwrap()["usage"];
    assert_eq!(
        usage["prompt_tokens_details"]["cached_tokens"],
        first_prompt
    );
    let record = server.requests()[1].usage.unwrap();
    assert_eq!(record.cache_read_input_tokens, first_prompt);
    assert_eq!(
        record.input_tokens + record.cache_read_input_tokens,
        usage["prompt_tokens"].as_u64().unwrap()
    );
    assert_eq!(record.cache_creation_input_tokens, 0);
    server.stop().await;
}

#[tokio::test]
async fn ollama_dialect_repeats_index_zero_and_says_stop_after_tools() {
    let server = start_with(
        Scenario::new().default_reply(
            Reply::text("Reading.")
                .with_tool_use(
                    "Read",
                    json!({"file_path": "/a/rather/long/path/to/a/file.txt"}),
                )
                .with_tool_use("Glob", json!({"pattern": "**/*.rs"})),
        ),
        ChatDialect::Ollama,
    )
    .await;
    let resp = post_chat(&server, &chat_body("go")).await;
    let (chunks, done) = datas(&resp.text().await.unwrap());
    assert!(done);
    let calls: Vec<&Value> = chunks
        .iter()
        .filter_map(|c| c.pointer("/choices/0/delta/tool_calls/0"))
        .collect();
    assert!(calls.iter().all(|c| c["index"] == 0), "{calls:?}");
    assert_eq!(calls.iter().filter(|c| c.get("id").is_some()).count(), 2);
    let last = chunks.last().unwrap();
    assert_eq!(last["choices"][0]["finish_reason"], "stop");
    assert!(last["usage"]["prompt_tokens"].is_u64());
    assert!(last["usage"].get("prompt_tokens_details").is_none());
    server.stop().await;
}

#[tokio::test]
async fn errors_come_in_openai_shape() {
    let server = start_with(
        Scenario::new()
            .rule(
                Rule::new()
                    .request(1)
                    .fault(Fault::http_retry_after(429, 2)),
            )
            .rule(Rule::new().request(2).fault(Fault::prompt_too_long()))
            .context_window(100_000),
        ChatDialect::OpenAi,
    )
    .await;
    let resp = post_chat(&server, &chat_body("x")).await;
    assert_eq!(resp.status(), 429);
    assert_eq!(resp.headers()["retry-after"], "2");
    let v: Value = resp.json().await.unwrap();
    assert_eq!(v["error"]["code"], "rate_limit_exceeded");
    let resp = post_chat(&server, &chat_body("x")).await;
    assert_eq!(resp.status(), 400);
    let v: Value = resp.json().await.unwrap();
    assert_eq!(v["error"]["code"], "context_length_exceeded");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("This model's maximum context length is 100000 tokens."),
        "{v}"
    );
    let missing_key = reqwest::Client::new()
        .post(format!("{}/chat/completions", server.openai_base_url()))
        .body(chat_body("x").to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(missing_key.status(), 401);
    server.stop().await;
}

#[tokio::test]
async fn stream_faults_count_chunks() {
    let server = start_with(
        Scenario::new()
            .rule(
                Rule::new()
                    .request(1)
                    .reply(Reply::text("a fairly long answer that never finishes"))
                    .fault(Fault::sse_error(3)),
            )
            .rule(
                Rule::new()
                    .request(2)
                    .reply(Reply::text("a fairly long answer that is cut"))
                    .fault(Fault::drop_after(2)),
            ),
        ChatDialect::OpenAi,
    )
    .await;
    let resp = post_chat(&server, &chat_body("x")).await;
    let (chunks, done) = datas(&resp.text().await.unwrap());
    assert!(!done);
    assert_eq!(chunks.len(), 4);
    assert_eq!(chunks[3]["error"]["type"], "server_error");
    let resp = post_chat(&server, &chat_body("x")).await;
    let (text, failed) = read_until_end(resp).await;
    assert!(failed, "the connection is aborted");
    assert_eq!(datas(&text).0.len(), 2);
    server.stop().await;
}

#[tokio::test]
async fn without_stream_the_whole_completion_comes_back() {
    let server = start_with(
        Scenario::new().default_reply(Reply::tool_use("Read", json!({"file_path": "a"}))),
        ChatDialect::OpenAi,
    )
    .await;
    let mut body = chat_body("x");
    body["stream"] = json!(false);
    body.as_object_mut().unwrap().remove("stream_options");
    let v: Value = post_chat(&server, &body).await.json().await.unwrap();
    assert_eq!(v["object"], "chat.completion");
    let message = &v["choices"][0]["message"];
    assert_eq!(message["content"], Value::Null);
    assert_eq!(
        message["tool_calls"][0]["function"]["arguments"],
        "{\"file_path\":\"a\"}"
    );
    assert_eq!(v["choices"][0]["finish_reason"], "tool_calls");
    server.stop().await;
}
