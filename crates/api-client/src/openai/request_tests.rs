use serde_json::{Value, json};

use super::*;
use crate::cache_control::CacheControl;
use crate::content::{ImageBlock, TextBlock, ThinkingBlock};
use crate::request::ThinkingConfig;
use crate::tool_array::ToolDefinition;

fn body(request: &MessagesRequest) -> Value {
    serde_json::from_slice(&chat_request_bytes(request, MaxTokensField::MaxTokens)).unwrap()
}

fn conversation() -> MessagesRequest {
    let mut request = MessagesRequest::new(
        "qwen2.5-coder:7b",
        8000,
        vec![
            Message::user(vec![
                ContentBlock::text("<context>cwd: /p</context>"),
                ContentBlock::Text(
                    TextBlock::new("read a.txt").with_cache_control(CacheControl::ephemeral()),
                ),
            ]),
            Message::assistant(vec![
                ContentBlock::Thinking(ThinkingBlock {
                    thinking: "hmm".into(),
                    signature: "sig".into(),
                }),
                ContentBlock::text("Reading."),
                ContentBlock::tool_use("call_1", "Read", json!({"file_path": "a.txt"})),
                ContentBlock::tool_use("call_2", "Read", json!({"file_path": "b.txt"})),
            ]),
            Message::user(vec![
                ContentBlock::tool_result("call_1", "alpha", false),
                ContentBlock::tool_result("call_2", "no such file", true),
            ]),
        ],
    );
    request.system = Some(SystemPrompt::Blocks(vec![
        TextBlock::new("You are tine.").with_cache_control(CacheControl::ephemeral()),
        TextBlock::new("Be brief."),
    ]));
    request.tools = vec![ToolDefinition {
        name: "Read".into(),
        description: "Reads a file".into(),
        input_schema: json!({"type": "object", "properties": {"file_path": {"type": "string"}}}),
        defer_loading: false,
        cache_control: Some(CacheControl::ephemeral()),
    }]
    .into();
    request.thinking = Some(ThinkingConfig::Enabled {
        budget_tokens: 2000,
    });
    request
}

#[test]
fn a_conversation_maps_to_chat_messages() {
    let body = body(&conversation());
    assert_eq!(
        body,
        json!({
            "model": "qwen2.5-coder:7b",
            "stream": true,
            "stream_options": {"include_usage": true},
            "tools": [{"type": "function", "function": {
                "name": "Read",
                "description": "Reads a file",
                "parameters": {"type": "object", "properties": {"file_path": {"type": "string"}}},
            }}],
            "messages": [
                {"role": "system", "content": "You are tine.\n\nBe brief."},
                {"role": "user", "content": "<context>cwd: /p</context>\n\nread a.txt"},
                {"role": "assistant", "content": "Reading.", "tool_calls": [
                    {"id": "call_1", "type": "function",
                     "function": {"name": "Read", "arguments": "{\"file_path\":\"a.txt\"}"}},
                    {"id": "call_2", "type": "function",
                     "function": {"name": "Read", "arguments": "{\"file_path\":\"b.txt\"}"}},
                ]},
                {"role": "tool", "tool_call_id": "call_1", "content": "alpha"},
                {"role": "tool", "tool_call_id": "call_2", "content": "Error: no such file"},
            ],
            "max_tokens": 8000,
        })
    );
    let text = body.to_string();
    // Thinking and cache markers have no place in chat completions.
    assert!(!text.contains("cache_control"), "{text}");
    assert!(
        !text.contains("hmm") && !text.contains("thinking"),
        "{text}"
    );
}

#[test]
fn fields_come_in_a_fixed_order_and_the_bytes_are_stable() {
    let request = conversation();
    let bytes = chat_request_bytes(&request, MaxTokensField::MaxTokens);
    assert_eq!(
        bytes,
        chat_request_bytes(&request.clone(), MaxTokensField::MaxTokens)
    );
    let text = String::from_utf8(bytes).unwrap();
    let order: Vec<usize> = [
        "\"model\"",
        "\"stream\"",
        "\"stream_options\"",
        "\"tools\"",
        "\"messages\"",
        "\"max_tokens\"",
    ]
    .iter()
    .map(|key| text.find(key).unwrap())
    .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{text}");
}

#[test]
fn a_fork_shares_the_parent_bytes_up_to_its_divergence() {
    let parent = conversation();
    let mut fork = parent.clone();
    // The fork appends its own question and may ask for a different output limit.
    fork.messages.push(Message::user(
        "Extract memories from the conversation above.",
    ));
    fork.max_tokens = 2000;
    let parent_bytes = chat_request_bytes(&parent, MaxTokensField::MaxTokens);
    let fork_bytes = chat_request_bytes(&fork, MaxTokensField::MaxTokens);
    let common = parent_bytes
        .iter()
        .zip(&fork_bytes)
        .take_while(|(a, b)| a == b)
        .count();
    // Everything up to the end of the parent's last message is shared.
    let text = String::from_utf8(parent_bytes.clone()).unwrap();
    let end_of_messages = text.find("],\"max_tokens\"").unwrap();
    assert!(common >= end_of_messages, "{common} < {end_of_messages}");
}

#[test]
fn images_become_data_urls_and_tool_result_images_follow_the_tool_messages() {
    let image = ContentBlock::Image(ImageBlock {
        source: ImageSource::Base64 {
            media_type: "image/png".into(),
            data: "iVBORw0K".into(),
        },
        cache_control: None,
    });
    let request = MessagesRequest::new(
        "m",
        100,
        vec![
            Message::user(vec![ContentBlock::text("look"), image.clone()]),
            Message::assistant(vec![ContentBlock::tool_use(
                "call_9",
                "Read",
                json!({"file_path": "x.png"}),
            )]),
            Message::user(vec![
                ContentBlock::ToolResult(ToolResultBlock {
                    tool_use_id: "call_9".into(),
                    content: Some(ToolResultContent::Blocks(vec![
                        ContentBlock::text("x.png, 2 KB"),
                        image,
                    ])),
                    is_error: None,
                    cache_control: None,
                }),
                ContentBlock::text("what is it?"),
            ]),
        ],
    );
    let body = body(&request);
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(
        messages[0],
        json!({"role": "user", "content": [
            {"type": "text", "text": "look"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0K"}},
        ]})
    );
    // Only tool calls: content is null.
    assert_eq!(messages[1]["content"], Value::Null);
    assert_eq!(messages[2]["role"], "tool");
    assert_eq!(
        messages[2]["content"],
        "x.png, 2 KB\n[1 image(s): attached in the next user message]"
    );
    assert_eq!(messages[3]["role"], "user");
    let parts = messages[3]["content"].as_array().unwrap();
    assert_eq!(parts.len(), 3);
    assert_eq!(parts[1]["type"], "image_url");
    assert_eq!(parts[2], json!({"type": "text", "text": "what is it?"}));
}

#[test]
fn tool_choice_stop_sequences_and_the_token_field_map() {
    let mut request = MessagesRequest::new("gpt-4.1", 64, vec![Message::user("hi")]);
    request.tool_choice = Some(ToolChoice::Tool {
        name: "Read".into(),
        disable_parallel_tool_use: Some(true),
    });
    request.stop_sequences = vec!["END".into()];
    request.temperature = Some(0.5);
    request.top_k = Some(5);
    let body: Value = serde_json::from_slice(&chat_request_bytes(
        &request,
        MaxTokensField::MaxCompletionTokens,
    ))
    .unwrap();
    assert_eq!(
        body["tool_choice"],
        json!({"type": "function", "function": {"name": "Read"}})
    );
    assert_eq!(body["parallel_tool_calls"], false);
    assert_eq!(body["stop"], json!(["END"]));
    assert_eq!(body["temperature"], 0.5);
    assert_eq!(body["max_completion_tokens"], 64);
    assert!(body.get("max_tokens").is_none() && body.get("top_k").is_none());
    for (choice, wire) in [
        (
            ToolChoice::Auto {
                disable_parallel_tool_use: None,
            },
            json!("auto"),
        ),
        (
            ToolChoice::Any {
                disable_parallel_tool_use: None,
            },
            json!("required"),
        ),
        (ToolChoice::None, json!("none")),
    ] {
        request.tool_choice = Some(choice);
        let body: Value =
            serde_json::from_slice(&chat_request_bytes(&request, MaxTokensField::MaxTokens))
                .unwrap();
        assert_eq!(body["tool_choice"], wire);
        assert!(body.get("parallel_tool_calls").is_none());
    }
}

#[test]
fn documents_are_sent_as_text_or_named() {
    let request = MessagesRequest::new(
        "m",
        10,
        vec![Message::user(vec![
            ContentBlock::Document(DocumentBlock {
                source: DocumentSource::Text {
                    media_type: "text/plain".into(),
                    data: "the notes".into(),
                },
                title: Some("notes.txt".into()),
                context: None,
                citations: None,
                cache_control: None,
            }),
            ContentBlock::Document(DocumentBlock {
                source: DocumentSource::Base64 {
                    media_type: "application/pdf".into(),
                    data: "JVBERi0".into(),
                },
                title: None,
                context: None,
                citations: None,
                cache_control: None,
            }),
        ])],
    );
    let body = body(&request);
    let content = body["messages"][0]["content"].as_str().unwrap();
    assert!(content.starts_with("notes.txt\nthe notes\n\n"), "{content}");
    assert!(content.contains("application/pdf document"), "{content}");
    assert!(!content.contains("JVBERi0"), "{content}");
}

#[test]
fn an_assistant_message_of_only_thinking_is_an_empty_text() {
    let request = MessagesRequest::new(
        "m",
        10,
        vec![
            Message::user("q"),
            Message::assistant(vec![ContentBlock::Thinking(ThinkingBlock::default())]),
            Message::user("again"),
        ],
    );
    let body = body(&request);
    assert_eq!(
        body["messages"][1],
        json!({"role": "assistant", "content": ""})
    );
}

#[test]
fn deferred_tools_stay_out_of_the_array_and_a_reference_becomes_the_definition_as_text() {
    let definition = |name: &str, defer_loading: bool| ToolDefinition {
        name: name.into(),
        description: format!("{name} does it"),
        input_schema: json!({"type": "object", "properties": {"n": {"type": "number"}}}),
        defer_loading,
        cache_control: None,
    };
    let tools = crate::ToolArray::new(vec![
        definition("ToolSearch", false),
        definition("DeferredToolPlaceholder", true),
    ])
    .with_deferred(vec![definition("mcp__s__add", false)]);
    let history = vec![
        Message::user("add"),
        Message::assistant(vec![ContentBlock::tool_use(
            "call_1",
            "ToolSearch",
            json!({"query": "select:mcp__s__add,gone"}),
        )]),
        Message::user(vec![
            ContentBlock::ToolResult(ToolResultBlock {
                tool_use_id: "call_1".into(),
                content: Some(ToolResultContent::Blocks(vec![
                    ContentBlock::tool_reference("mcp__s__add"),
                    ContentBlock::tool_reference("gone"),
                ])),
                is_error: None,
                cache_control: None,
            }),
            ContentBlock::text("Tool loaded."),
        ]),
    ];
    let mut request = MessagesRequest::new("m", 100, history.clone());
    request.tools = tools.loading(crate::referenced_tools(&history));
    assert_eq!(
        request.tools.definitions().len(),
        3,
        "loaded on the Messages API"
    );
    let body = body(&request);
    let names: Vec<&str> = body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["ToolSearch"], "the array stays fixed");
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages[2]["role"], "tool");
    assert_eq!(
        messages[2]["content"],
        "<functions>\n<function>{\"description\":\"mcp__s__add does it\",\"name\":\"mcp__s__add\",\
         \"parameters\":{\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"number\"}}}}</function>\n\
         (the tool gone is not available in this session)\n</functions>"
    );
    assert_eq!(
        messages[3],
        json!({"role": "user", "content": "Tool loaded."})
    );
}
