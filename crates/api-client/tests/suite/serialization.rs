//! Byte-stable request serialization (a fork's prompt-cache hit depends on it) and tolerant,
//! lossless handling of what the server sends.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

use std::path::PathBuf;

use serde_json::{Value, json};
use tine_api_client::{
    CacheControl, CacheTtl, ContentBlock, DocumentBlock, DocumentSource, ImageBlock, ImageSource,
    Message, MessageContent, MessagesRequest, Metadata, RedactedThinkingBlock, ResponseMessage,
    StopReason, SystemPrompt, TextBlock, ThinkingBlock, ThinkingConfig, ToolChoice, ToolDefinition,
    ToolResultBlock, ToolResultContent,
};

/// A request using every field and block type. JSON objects built with `json!` list their keys
/// in sorted order, so the bytes are the same whether or not serde_json's `preserve_order` is on.
fn full_request() -> MessagesRequest {
    let mut request = MessagesRequest::new(
        "claude-opus-4-5-20251101",
        32_000,
        vec![
            Message::user(vec![
                ContentBlock::Text(TextBlock::new("Look at this.")),
                ContentBlock::Image(ImageBlock {
                    source: ImageSource::Base64 {
                        media_type: "image/png".into(),
                        data: "iVBORw0KGgo=".into(),
                    },
                    cache_control: None,
                }),
                ContentBlock::Document(DocumentBlock {
                    source: DocumentSource::Text {
                        media_type: "text/plain".into(),
                        data: "notes".into(),
                    },
                    title: Some("notes.txt".into()),
                    context: None,
                    citations: None,
                    cache_control: Some(CacheControl::ephemeral()),
                }),
            ]),
            Message::assistant(vec![
                ContentBlock::Thinking(ThinkingBlock {
                    thinking: "I should read it.".into(),
                    signature: "EqQBCkYIARgCKkA=".into(),
                }),
                ContentBlock::RedactedThinking(RedactedThinkingBlock {
                    data: "EmwKAhgBEgy3va3p".into(),
                }),
                ContentBlock::tool_use(
                    "toolu_01",
                    "Read",
                    json!({"file_path": "/src/main.rs", "limit": 10}),
                ),
                ContentBlock::Unknown(
                    json!({"id": "srv_1", "input": {"query": "rust"}, "name": "web_search", "type": "server_tool_use"}),
                ),
            ]),
            Message::user(vec![
                ContentBlock::ToolResult(ToolResultBlock {
                    tool_use_id: "toolu_01".into(),
                    content: Some(ToolResultContent::Blocks(vec![ContentBlock::text(
                        "fn main() {}",
                    )])),
                    is_error: None,
                    cache_control: Some(CacheControl::with_ttl(CacheTtl::FiveMinutes)),
                }),
                ContentBlock::tool_result("toolu_02", "permission denied", true),
            ]),
        ],
    );
    request.system = Some(SystemPrompt::Blocks(vec![
        TextBlock::new("You are tine, a coding agent. Ünïcödé ✓ \"quoted\" \\ backslash\n"),
        TextBlock::new("Environment: linux")
            .with_cache_control(CacheControl::with_ttl(CacheTtl::OneHour)),
    ]));
    request.tools = vec![
        ToolDefinition {
            name: "Read".into(),
            description: "Read a file".into(),
            input_schema: json!({"properties": {"file_path": {"type": "string"}, "limit": {"type": "integer"}}, "required": ["file_path"], "type": "object"}),
            defer_loading: false,
            cache_control: None,
        },
        ToolDefinition {
            name: "Write".into(),
            description: String::new(),
            input_schema: json!({"type": "object"}),
            defer_loading: false,
            cache_control: Some(CacheControl::ephemeral()),
        },
    ]
    .into();
    request.tool_choice = Some(ToolChoice::Auto {
        disable_parallel_tool_use: None,
    });
    request.thinking = Some(ThinkingConfig::Enabled {
        budget_tokens: 16_000,
    });
    request.metadata = Some(Metadata {
        user_id: Some("user_abc".into()),
    });
    request.stop_sequences = vec!["\n\nHuman:".into()];
    request.temperature = Some(0.7);
    request
}

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/full_request.json")
}

#[test]
fn same_request_same_bytes_every_time() {
    let request = full_request();
    let first = request.to_json_bytes();
    for _ in 0..20 {
        assert_eq!(full_request().to_json_bytes(), first);
        assert_eq!(request.clone().to_json_bytes(), first);
    }
}

#[test]
fn bytes_match_the_golden_fixture() {
    let bytes = full_request().streaming().to_json_bytes();
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(fixture(), &bytes).unwrap();
    }
    let golden = std::fs::read(fixture()).expect("fixture exists (UPDATE_GOLDEN=1 writes it)");
    assert_eq!(
        String::from_utf8_lossy(&bytes),
        String::from_utf8_lossy(&golden)
    );
}

/// Run by `same_bytes_in_another_process` in a child process; does nothing otherwise.
#[test]
fn emit_request_bytes_for_parent() {
    if let Some(path) = std::env::var_os("TINE_API_CLIENT_EMIT_BYTES") {
        std::fs::write(path, full_request().to_json_bytes()).unwrap();
    }
}

#[test]
fn same_bytes_in_another_process() {
    let dir = std::env::temp_dir().join(format!("tine-api-client-bytes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("request.json");
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "suite::serialization::emit_request_bytes_for_parent",
            "--test-threads=1",
        ])
        .env("TINE_API_CLIENT_EMIT_BYTES", &path)
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let child = std::fs::read(&path).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(child, full_request().to_json_bytes());
}

#[test]
fn decode_then_encode_is_byte_identical() {
    let bytes = full_request().to_json_bytes();
    let decoded: MessagesRequest = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(decoded, full_request());
    assert_eq!(decoded.to_json_bytes(), bytes);
}

#[test]
fn none_fields_are_skipped() {
    let request = MessagesRequest::new("m", 10, vec![Message::user("hi")]);
    assert_eq!(
        String::from_utf8(request.to_json_bytes()).unwrap(),
        r#"{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}"#
    );
}

#[test]
fn wire_shapes_of_small_types() {
    let s = |v: &dyn erased::Ser| v.json();
    assert_eq!(s(&CacheControl::ephemeral()), r#"{"type":"ephemeral"}"#);
    assert_eq!(
        s(&CacheControl::with_ttl(CacheTtl::OneHour)),
        r#"{"type":"ephemeral","ttl":"1h"}"#
    );
    assert_eq!(
        s(&ThinkingConfig::Enabled {
            budget_tokens: 1024
        }),
        r#"{"type":"enabled","budget_tokens":1024}"#
    );
    assert_eq!(s(&ThinkingConfig::Disabled), r#"{"type":"disabled"}"#);
    assert_eq!(s(&ThinkingConfig::Adaptive), r#"{"type":"adaptive"}"#);
    assert_eq!(
        s(&ToolChoice::Tool {
            name: "Read".into(),
            disable_parallel_tool_use: Some(true)
        }),
        r#"{"type":"tool","name":"Read","disable_parallel_tool_use":true}"#
    );
    assert_eq!(s(&ToolChoice::None), r#"{"type":"none"}"#);
    assert_eq!(
        s(&SystemPrompt::Blocks(vec![
            TextBlock::new("a").with_cache_control(CacheControl::ephemeral())
        ])),
        r#"[{"type":"text","text":"a","cache_control":{"type":"ephemeral"}}]"#
    );
    assert_eq!(s(&SystemPrompt::Text("a".into())), r#""a""#);
    assert_eq!(
        s(&ContentBlock::tool_result("t", "boom", true)),
        r#"{"type":"tool_result","tool_use_id":"t","content":"boom","is_error":true}"#
    );
    assert_eq!(
        s(&ContentBlock::tool_result("t", "ok", false)),
        r#"{"type":"tool_result","tool_use_id":"t","content":"ok"}"#
    );
}

mod erased {
    pub(super) trait Ser {
        fn json(&self) -> String;
    }
    impl<T: serde::Serialize> Ser for T {
        fn json(&self) -> String {
            serde_json::to_string(self).unwrap()
        }
    }
}

#[test]
fn unknown_blocks_and_fields_from_the_server_are_tolerated() {
    let response = json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [
            {"type": "text", "text": "hi", "citations": [{"type": "char_location", "cited_text": "x"}], "new_field": 1},
            {"type": "thinking", "thinking": "hmm", "signature": "sig"},
            {"type": "web_search_tool_result", "tool_use_id": "srv_1", "content": [{"type": "web_search_result", "url": "https://example.com"}]},
            {"type": "tool_use", "id": "t1", "name": "Read", "input": {"b": 1, "a": [true, null]}}
        ],
        "stop_reason": "brand_new_reason", "stop_sequence": null, "container": {"id": "c"},
        "usage": {"input_tokens": 3, "output_tokens": 4, "service_tier": "standard", "server_tool_use": {"web_search_requests": 1}}
    });
    let message: ResponseMessage = serde_json::from_value(response.clone()).unwrap();
    assert_eq!(
        message.stop_reason,
        Some(StopReason::Other("brand_new_reason".into()))
    );
    assert!(matches!(message.content[2], ContentBlock::Unknown(_)));
    // Echoed back: the unknown block unchanged, the thinking signature unchanged.
    let Message {
        content: MessageContent::Blocks(blocks),
        ..
    } = message.to_message()
    else {
        panic!()
    };
    let echoed: Vec<Value> = blocks
        .iter()
        .map(|b| serde_json::to_value(b).unwrap())
        .collect();
    assert_eq!(echoed[2], response["content"][2]);
    assert_eq!(echoed[1], response["content"][1]);
    assert_eq!(echoed[3], response["content"][3]);
    assert_eq!(echoed[0]["citations"], response["content"][0]["citations"]);
}

#[test]
fn unknown_image_and_document_sources_round_trip() {
    let block = json!({"type": "image", "source": {"type": "future_source", "ref": "x"}});
    let parsed: ContentBlock = serde_json::from_value(block.clone()).unwrap();
    assert!(matches!(
        parsed,
        ContentBlock::Image(ImageBlock {
            source: ImageSource::Other(_),
            ..
        })
    ));
    assert_eq!(serde_json::to_value(&parsed).unwrap(), block);
}

#[test]
fn cache_control_on_every_cacheable_block() {
    let mut blocks = vec![
        ContentBlock::text("a"),
        ContentBlock::tool_use("t", "n", json!({})),
        ContentBlock::tool_result("t", "r", false),
        ContentBlock::Unknown(json!({"type": "x"})),
    ];
    for block in &mut blocks {
        assert!(block.set_cache_control(Some(CacheControl::ephemeral())));
        assert_eq!(
            block.cache_control().copied().or_else(|| {
                matches!(block, ContentBlock::Unknown(_)).then(CacheControl::ephemeral)
            }),
            Some(CacheControl::ephemeral())
        );
        assert!(
            serde_json::to_string(block)
                .unwrap()
                .contains(r#""cache_control":{"type":"ephemeral"}"#)
        );
    }
    let mut thinking = ContentBlock::Thinking(ThinkingBlock::default());
    assert!(!thinking.set_cache_control(Some(CacheControl::ephemeral())));
}
