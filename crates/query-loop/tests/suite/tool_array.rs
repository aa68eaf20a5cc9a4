//! The `tools` array goes out as the pool serialized it at assembly, and the request bytes are
//! those tine sent when it serialized every definition again on each request.

use std::sync::Arc;

use serde::Serialize;
use tine_api_client::{
    ContentBlock, Message, Metadata, SystemPrompt, ThinkingConfig, ToolChoice, ToolDefinition,
};
use tine_query_loop::{RequestTemplate, system_prompt_blocks};
use tine_tools::ToolPool;

/// `MessagesRequest` as it was before the tool array was kept serialized: the same fields in
/// the same order, `tools` a `Vec` of definitions.
#[derive(Serialize)]
struct Before<'a> {
    model: &'a str,
    max_tokens: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    system: Option<&'a SystemPrompt>,
    messages: &'a [Message],
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<ToolDefinition>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<&'a ToolChoice>,
    #[serde(skip_serializing_if = "Option::is_none")]
    thinking: Option<&'a ThinkingConfig>,
    #[serde(skip_serializing_if = "Option::is_none")]
    metadata: Option<&'a Metadata>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    stop_sequences: &'a Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    top_p: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    top_k: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream: Option<bool>,
}

#[test]
fn requests_send_the_pools_bytes_and_the_wire_body_is_unchanged() {
    let pool = ToolPool::builtin(|_| false);
    let template = RequestTemplate {
        model: "claude-sonnet-4-5".into(),
        system: Arc::new(system_prompt_blocks("You are tine.")),
        tools: pool.definitions().clone(),
        thinking: Some(ThinkingConfig::Enabled {
            budget_tokens: 4096,
        }),
        skip_cache_write: false,
        replacements: None,
        effort: None,
    };
    let history = vec![
        Message::user("read the README"),
        Message::assistant(vec![ContentBlock::text("Reading it.")]),
        Message::user("thanks"),
    ];
    let request = template.build(&history, 8192).streaming();
    let body = request.to_json_bytes();

    let json = pool.serialized_definitions();
    let text = String::from_utf8(body.clone()).unwrap();
    assert!(
        text.contains(&format!(",\"tools\":{json},")),
        "the pool's bytes go out verbatim"
    );

    let before = Before {
        model: &request.model,
        max_tokens: request.max_tokens,
        system: request.system.as_ref(),
        messages: &request.messages,
        tools: pool.definitions().to_vec(),
        tool_choice: request.tool_choice.as_ref(),
        thinking: request.thinking.as_ref(),
        metadata: request.metadata.as_ref(),
        stop_sequences: &request.stop_sequences,
        temperature: request.temperature,
        top_p: request.top_p,
        top_k: request.top_k,
        stream: request.stream,
    };
    assert_eq!(
        String::from_utf8(serde_json::to_vec(&before).unwrap()).unwrap(),
        text
    );
    // Two requests of the session share the array, not copies of it.
    let again = template.build(&history, 8192);
    assert_eq!(again.tools, request.tools);
}
