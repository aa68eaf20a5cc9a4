//! side_query against a scripted client: plain and schema'd answers, the one retry, the typed
//! errors, usage per query source, and the system prefix.

use serde_json::json;
use tine_api_client::{
    ApiError, ApiErrorKind, ContentBlock, Message, MessageContent, Role, ScriptedClient,
    SystemPrompt, Usage,
};
use tine_fork_runtime::{CLI_SYSTEM_PREFIX, SideQuery, SideQueryError, UsageLedger, side_query};

const MODEL: &str = "claude-sonnet-4-5";

fn schema() -> serde_json::Value {
    json!({
        "type": "object",
        "properties": {"files": {"type": "array", "items": {"type": "string"}}},
        "required": ["files"]
    })
}

fn recall_query() -> SideQuery {
    SideQuery::new(
        MODEL,
        "memory_recall",
        vec![Message::user("Which memory files matter for `cargo test`?")],
    )
    .with_system("Select memory files.")
    .with_schema(schema())
    .with_max_tokens(256)
}

fn system_texts(system: &Option<SystemPrompt>) -> Vec<String> {
    match system {
        None => Vec::new(),
        Some(SystemPrompt::Text(t)) => vec![t.clone()],
        Some(SystemPrompt::Blocks(b)) => b.iter().map(|b| b.text.clone()).collect(),
    }
}

fn text_of(message: &Message) -> String {
    match &message.content {
        MessageContent::Text(t) => t.clone(),
        MessageContent::Blocks(blocks) => blocks
            .iter()
            .filter_map(|b| match b {
                ContentBlock::Text(t) => Some(t.text.as_str()),
                _ => None,
            })
            .collect(),
    }
}

#[tokio::test]
async fn a_plain_query_is_one_call_with_no_tools_and_the_prefix_first() {
    let client = ScriptedClient::new();
    client.push_message(ScriptedClient::text_reply(
        "It needs permission because it deletes files.",
    ));
    let query = SideQuery::new(
        MODEL,
        "permission_explainer",
        vec![Message::user("rm -rf build")],
    )
    .with_system("Explain the permission.")
    .with_max_tokens(200);
    let result = side_query(&client, &query, None).await.unwrap();
    assert_eq!(result.text, "It needs permission because it deletes files.");
    assert_eq!(result.json, None);
    assert_eq!(result.usage.input_tokens, 10);
    assert!(result.cost_usd > 0.0);

    let requests = client.requests();
    assert_eq!(requests.len(), 1);
    let r = &requests[0];
    assert!(r.tools.is_empty());
    assert_eq!(r.tool_choice, None);
    assert_eq!(r.max_tokens, 200);
    assert_eq!(r.model, MODEL);
    assert_eq!(r.messages, query.messages);
    assert_eq!(
        system_texts(&r.system),
        [CLI_SYSTEM_PREFIX, "Explain the permission."]
    );
}

#[tokio::test]
async fn skip_system_prefix_leaves_only_the_callers_system() {
    let client = ScriptedClient::new();
    client.push_message(ScriptedClient::text_reply("yes"));
    client.push_message(ScriptedClient::text_reply("yes"));
    let mut query = SideQuery::new(MODEL, "classifier", vec![Message::user("ok?")])
        .with_system("You are a classifier.")
        .skipping_system_prefix();
    query.temperature = Some(0.0);
    side_query(&client, &query, None).await.unwrap();
    let bare = SideQuery::new(MODEL, "model_check", vec![Message::user("hi")])
        .with_max_tokens(1)
        .skipping_system_prefix();
    side_query(&client, &bare, None).await.unwrap();

    let requests = client.requests();
    assert_eq!(system_texts(&requests[0].system), ["You are a classifier."]);
    assert_eq!(requests[0].temperature, Some(0.0));
    assert_eq!(requests[1].system, None);
    assert_eq!(requests[1].max_tokens, 1);
}

#[tokio::test]
async fn a_valid_json_answer_is_parsed_and_the_schema_is_in_the_system_prompt() {
    let client = ScriptedClient::new();
    client.push_message(ScriptedClient::text_reply(r#"{"files": ["testing.md"]}"#));
    let result = side_query(&client, &recall_query(), None).await.unwrap();
    assert_eq!(result.json, Some(json!({"files": ["testing.md"]})));
    assert_eq!(client.requests().len(), 1);
    let system = system_texts(&client.requests()[0].system);
    assert_eq!(system[0], CLI_SYSTEM_PREFIX);
    assert_eq!(system[1], "Select memory files.");
    assert!(system[2].contains("only a JSON value"));
    assert!(system[2].contains("\"required\""), "{}", system[2]);
}

#[tokio::test]
async fn a_fenced_answer_with_prose_is_accepted() {
    let client = ScriptedClient::new();
    client.push_message(ScriptedClient::text_reply(
        "Sure! Here are the files:\n```json\n{\"files\": [\"a.md\", \"b.md\"]}\n```\nHope this helps.",
    ));
    let result = side_query(&client, &recall_query(), None).await.unwrap();
    assert_eq!(result.json, Some(json!({"files": ["a.md", "b.md"]})));
    assert_eq!(client.requests().len(), 1);
}

#[tokio::test]
async fn an_invalid_answer_is_retried_once_with_the_problem_named() {
    let client = ScriptedClient::new();
    client.push_message(ScriptedClient::text_reply(r#"{"file": "a.md"}"#));
    client.push_message(ScriptedClient::text_reply(r#"{"files": ["a.md"]}"#));
    let ledger = UsageLedger::new();
    let result = side_query(&client, &recall_query(), Some(&ledger))
        .await
        .unwrap();
    assert_eq!(result.json, Some(json!({"files": ["a.md"]})));
    assert_eq!(result.usage.input_tokens, 20);

    let requests = client.requests();
    assert_eq!(requests.len(), 2);
    let retry = &requests[1].messages;
    assert_eq!(retry.len(), 3);
    assert_eq!(retry[0], requests[0].messages[0]);
    assert_eq!(retry[1].role, Role::Assistant);
    assert_eq!(text_of(&retry[1]), r#"{"file": "a.md"}"#);
    assert_eq!(retry[2].role, Role::User);
    let correction = text_of(&retry[2]);
    assert!(correction.contains("`files`"), "{correction}");
    assert_eq!(requests[1].system, requests[0].system);
    assert_eq!(ledger.get("memory_recall").unwrap().requests, 2);
}

#[tokio::test]
async fn an_answer_invalid_twice_is_a_typed_error_with_the_raw_text() {
    let client = ScriptedClient::new();
    client.push_message(ScriptedClient::text_reply("I think a.md is relevant."));
    client.push_message(ScriptedClient::text_reply(r#"{"files": "a.md"}"#));
    let ledger = UsageLedger::new();
    let error = side_query(&client, &recall_query(), Some(&ledger))
        .await
        .unwrap_err();
    let SideQueryError::InvalidOutput { errors, raw } = &error else {
        panic!("expected InvalidOutput, got {error:?}");
    };
    assert_eq!(raw, r#"{"files": "a.md"}"#);
    assert!(errors[0].contains("files"), "{errors:?}");
    assert!(error.to_string().contains("after one retry"));
    // the first retry message said there was no JSON at all
    let requests = client.requests();
    assert_eq!(requests.len(), 2);
    assert!(text_of(&requests[1].messages[2]).contains("no JSON value"));
    // both calls are billed to the source
    assert_eq!(ledger.get("memory_recall").unwrap().requests, 2);
    assert_eq!(client.remaining(), 0);
}

#[tokio::test]
async fn usage_is_recorded_under_the_query_source() {
    let client = ScriptedClient::new();
    let mut answer = ScriptedClient::text_reply("fine");
    answer.usage = Usage {
        input_tokens: 1200,
        output_tokens: 40,
        cache_read_input_tokens: 0,
        ..Usage::default()
    };
    client.push_message(answer.clone());
    client.push_message(answer.clone());
    client.push_message(answer);
    let ledger = UsageLedger::new();
    let session_view = ledger.clone();
    let q = |source: &str| SideQuery::new(MODEL, source, vec![Message::user("q")]);
    let a = side_query(&client, &q("memory_recall"), Some(&ledger))
        .await
        .unwrap();
    side_query(&client, &q("memory_recall"), Some(&ledger))
        .await
        .unwrap();
    side_query(&client, &q("permission_explainer"), Some(&ledger))
        .await
        .unwrap();

    let recall = session_view.get("memory_recall").unwrap();
    assert_eq!(recall.requests, 2);
    assert_eq!(recall.usage.input_tokens, 2400);
    assert_eq!(recall.usage.output_tokens, 80);
    assert!((recall.cost_usd - 2.0 * a.cost_usd).abs() < 1e-12);
    assert_eq!(
        session_view.get("permission_explainer").unwrap().requests,
        1
    );
    let total = session_view.total();
    assert_eq!(total.requests, 3);
    assert_eq!(total.usage.input_tokens, 3600);
}

#[tokio::test]
async fn api_errors_are_typed() {
    let client = ScriptedClient::new();
    client.push_error(ApiError::StreamError {
        kind: ApiErrorKind::Overloaded,
        message: "Overloaded".into(),
        request_id: None,
    });
    let ledger = UsageLedger::new();
    let error = side_query(&client, &recall_query(), Some(&ledger))
        .await
        .unwrap_err();
    assert!(
        matches!(&error, SideQueryError::Api(e) if e.kind() == Some(&ApiErrorKind::Overloaded)),
        "{error:?}"
    );
    assert!(ledger.get("memory_recall").is_none());
}
