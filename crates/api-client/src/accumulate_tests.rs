use serde_json::json;

use super::*;
use crate::content::{TextBlock, ThinkingBlock};
use crate::error::ErrorBody;
use crate::events::MessageDeltaBody;
use crate::response::StopReason;
use crate::scripted::{message_events, reply};
use crate::usage::{Usage, UsageDelta};

fn start() -> StreamEvent {
    let mut message = reply(Vec::new(), StopReason::EndTurn);
    message.stop_reason = None;
    message.usage = Usage {
        input_tokens: 100,
        cache_read_input_tokens: 50,
        output_tokens: 1,
        ..Usage::default()
    };
    StreamEvent::MessageStart { message }
}

fn delta(index: usize, delta: ContentDelta) -> StreamEvent {
    StreamEvent::ContentBlockDelta { index, delta }
}

fn feed(events: &[StreamEvent]) -> Result<ResponseMessage, ApiError> {
    let mut acc = MessageAccumulator::new();
    for e in events {
        acc.push(e)?;
    }
    acc.finish()
}

#[test]
fn assembles_text_thinking_and_tool_use() {
    let events = vec![
        start(),
        StreamEvent::ContentBlockStart {
            index: 0,
            content_block: ContentBlock::Thinking(ThinkingBlock::default()),
        },
        delta(
            0,
            ContentDelta::ThinkingDelta {
                thinking: "let me ".into(),
            },
        ),
        delta(
            0,
            ContentDelta::ThinkingDelta {
                thinking: "think".into(),
            },
        ),
        delta(
            0,
            ContentDelta::SignatureDelta {
                signature: "EqQBCkYIAR==".into(),
            },
        ),
        StreamEvent::ContentBlockStop { index: 0 },
        StreamEvent::ContentBlockStart {
            index: 1,
            content_block: ContentBlock::Text(TextBlock::new("")),
        },
        StreamEvent::Ping,
        delta(
            1,
            ContentDelta::TextDelta {
                text: "Reading ".into(),
            },
        ),
        delta(
            1,
            ContentDelta::TextDelta {
                text: "the file.".into(),
            },
        ),
        StreamEvent::ContentBlockStop { index: 1 },
        StreamEvent::ContentBlockStart {
            index: 2,
            content_block: ContentBlock::tool_use("toolu_1", "Read", json!({})),
        },
        delta(
            2,
            ContentDelta::InputJsonDelta {
                partial_json: "".into(),
            },
        ),
        delta(
            2,
            ContentDelta::InputJsonDelta {
                partial_json: "{\"file_pa".into(),
            },
        ),
        delta(
            2,
            ContentDelta::InputJsonDelta {
                partial_json: "th\": \"/a/b.rs\", \"limit\": 5}".into(),
            },
        ),
        StreamEvent::ContentBlockStop { index: 2 },
        StreamEvent::MessageDelta {
            delta: MessageDeltaBody {
                stop_reason: Some(StopReason::ToolUse),
                stop_sequence: None,
            },
            usage: UsageDelta {
                output_tokens: Some(77),
                ..UsageDelta::default()
            },
        },
        StreamEvent::MessageStop,
    ];
    let message = feed(&events).unwrap();
    assert_eq!(message.stop_reason, Some(StopReason::ToolUse));
    assert_eq!(
        (
            message.usage.input_tokens,
            message.usage.cache_read_input_tokens,
            message.usage.output_tokens
        ),
        (100, 50, 77)
    );
    assert_eq!(
        message.content,
        vec![
            ContentBlock::Thinking(ThinkingBlock {
                thinking: "let me think".into(),
                signature: "EqQBCkYIAR==".into()
            }),
            ContentBlock::text("Reading the file."),
            ContentBlock::tool_use(
                "toolu_1",
                "Read",
                json!({"file_path": "/a/b.rs", "limit": 5})
            ),
        ]
    );
    assert_eq!(message.text(), "Reading the file.");
    assert_eq!(message.tool_uses().count(), 1);
}

#[test]
fn tool_use_without_deltas_keeps_empty_input() {
    let events = vec![
        start(),
        StreamEvent::ContentBlockStart {
            index: 0,
            content_block: ContentBlock::tool_use("t", "Noop", json!({})),
        },
        StreamEvent::ContentBlockStop { index: 0 },
        StreamEvent::MessageStop,
    ];
    assert_eq!(
        feed(&events).unwrap().content,
        vec![ContentBlock::tool_use("t", "Noop", json!({}))]
    );
}

#[test]
fn invalid_tool_json_is_a_typed_error_at_block_stop() {
    let mut acc = MessageAccumulator::new();
    acc.push(&start()).unwrap();
    acc.push(&StreamEvent::ContentBlockStart {
        index: 0,
        content_block: ContentBlock::tool_use("t", "Bash", json!({})),
    })
    .unwrap();
    acc.push(&delta(
        0,
        ContentDelta::InputJsonDelta {
            partial_json: "{\"command\": \"ls".into(),
        },
    ))
    .unwrap();
    let err = acc
        .push(&StreamEvent::ContentBlockStop { index: 0 })
        .unwrap_err();
    let ApiError::InvalidToolInput {
        index,
        name,
        partial_json,
        ..
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!(
        (*index, name.as_str(), partial_json.as_str()),
        (0, "Bash", "{\"command\": \"ls")
    );
    assert!(err.to_string().contains("Bash"));
}

#[test]
fn unknown_blocks_are_kept_and_take_input_json() {
    let server_tool = ContentBlock::Unknown(
        json!({"type": "server_tool_use", "id": "srv_1", "name": "web_search", "input": {}}),
    );
    let events = vec![
        start(),
        StreamEvent::ContentBlockStart {
            index: 0,
            content_block: server_tool,
        },
        delta(
            0,
            ContentDelta::InputJsonDelta {
                partial_json: "{\"query\":\"rust\"}".into(),
            },
        ),
        StreamEvent::ContentBlockStop { index: 0 },
        StreamEvent::MessageStop,
    ];
    let message = feed(&events).unwrap();
    assert_eq!(
        message.content,
        vec![ContentBlock::Unknown(
            json!({"type": "server_tool_use", "id": "srv_1", "name": "web_search", "input": {"query": "rust"}})
        )]
    );
}

#[test]
fn protocol_violations_are_errors_not_panics() {
    let text_start = StreamEvent::ContentBlockStart {
        index: 0,
        content_block: ContentBlock::text(""),
    };
    let cases: Vec<Vec<StreamEvent>> = vec![
        vec![text_start.clone()],
        vec![
            start(),
            delta(5, ContentDelta::TextDelta { text: "x".into() }),
        ],
        vec![start(), StreamEvent::ContentBlockStop { index: 9 }],
        vec![start(), text_start.clone(), text_start.clone()],
        vec![
            start(),
            text_start.clone(),
            delta(
                0,
                ContentDelta::InputJsonDelta {
                    partial_json: "{".into(),
                },
            ),
        ],
        vec![
            start(),
            text_start.clone(),
            StreamEvent::ContentBlockStop { index: 0 },
            StreamEvent::ContentBlockStop { index: 0 },
        ],
    ];
    for events in cases {
        assert!(
            matches!(feed(&events), Err(ApiError::Protocol { .. })),
            "{events:?}"
        );
    }
    assert!(matches!(
        MessageAccumulator::new().finish(),
        Err(ApiError::Protocol { .. })
    ));
    let error = StreamEvent::Error {
        error: ErrorBody {
            error_type: "overloaded_error".into(),
            message: "Overloaded".into(),
        },
    };
    assert!(matches!(
        feed(&[start(), error]),
        Err(ApiError::StreamError { .. })
    ));
}

#[test]
fn reset_discards_a_partial_attempt() {
    let mut acc = MessageAccumulator::new();
    acc.push(&start()).unwrap();
    acc.push(&StreamEvent::ContentBlockStart {
        index: 0,
        content_block: ContentBlock::text(""),
    })
    .unwrap();
    acc.push(&delta(
        0,
        ContentDelta::TextDelta {
            text: "partial that must vanish".into(),
        },
    ))
    .unwrap();
    acc.reset();
    for e in message_events(&reply(
        vec![ContentBlock::text("whole answer")],
        StopReason::EndTurn,
    )) {
        acc.push(&e).unwrap();
    }
    assert!(acc.is_complete());
    assert_eq!(acc.finish().unwrap().text(), "whole answer");
}

#[test]
fn message_events_round_trip_through_the_accumulator() {
    let original = reply(
        vec![
            ContentBlock::Thinking(ThinkingBlock {
                thinking: "ünïcödé thinking that is long enough to split".into(),
                signature: "sig".into(),
            }),
            ContentBlock::text("日本語のテキスト🦀 and more text past sixteen bytes"),
            ContentBlock::tool_use(
                "toolu_9",
                "Edit",
                json!({"path": "src/main.rs", "old": "a", "new": "b"}),
            ),
        ],
        StopReason::ToolUse,
    );
    let mut acc = MessageAccumulator::new();
    for e in message_events(&original) {
        acc.push(&e).unwrap();
    }
    assert_eq!(acc.finish().unwrap(), original);
}
