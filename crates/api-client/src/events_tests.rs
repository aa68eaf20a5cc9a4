use super::*;
use crate::content::ContentBlock;

#[test]
fn decodes_every_known_event() {
    let start = decode_event(
        r#"{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"cache_read_input_tokens":5,"output_tokens":1}}}"#,
    )
    .unwrap()
    .unwrap();
    let StreamEvent::MessageStart { message } = start else {
        panic!("{start:?}")
    };
    assert_eq!(
        (
            message.id.as_str(),
            message.usage.input_tokens,
            message.usage.cache_read_input_tokens
        ),
        ("msg_1", 10, 5)
    );

    let block = decode_event(r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"tu_1","name":"Read","input":{}}}"#)
        .unwrap()
        .unwrap();
    assert!(matches!(
        block,
        StreamEvent::ContentBlockStart {
            index: 1,
            content_block: ContentBlock::ToolUse(_)
        }
    ));

    let cases = [
        (
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hé"}}"#,
            ContentDelta::TextDelta { text: "hé".into() },
        ),
        (
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"a\":"}}"#,
            ContentDelta::InputJsonDelta {
                partial_json: "{\"a\":".into(),
            },
        ),
        (
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hmm"}}"#,
            ContentDelta::ThinkingDelta {
                thinking: "hmm".into(),
            },
        ),
        (
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"sig=="}}"#,
            ContentDelta::SignatureDelta {
                signature: "sig==".into(),
            },
        ),
    ];
    for (data, expected) in cases {
        assert_eq!(
            decode_event(data).unwrap(),
            Some(StreamEvent::ContentBlockDelta {
                index: 0,
                delta: expected
            })
        );
    }

    assert_eq!(
        decode_event(r#"{"type":"content_block_stop","index":3}"#).unwrap(),
        Some(StreamEvent::ContentBlockStop { index: 3 })
    );
    let delta = decode_event(r#"{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":42}}"#)
        .unwrap()
        .unwrap();
    let StreamEvent::MessageDelta { delta, usage } = delta else {
        panic!()
    };
    assert_eq!(
        delta.stop_reason,
        Some(crate::response::StopReason::ToolUse)
    );
    assert_eq!((usage.output_tokens, usage.input_tokens), (Some(42), None));
    assert_eq!(
        decode_event(r#"{"type":"message_stop"}"#).unwrap(),
        Some(StreamEvent::MessageStop)
    );
    assert_eq!(
        decode_event(r#"{"type":"ping"}"#).unwrap(),
        Some(StreamEvent::Ping)
    );
    let error = decode_event(
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
    )
    .unwrap()
    .unwrap();
    assert!(
        matches!(error, StreamEvent::Error { ref error } if error.error_type == "overloaded_error")
    );
}

#[test]
fn unknown_events_and_deltas_are_ignored_and_unknown_fields_tolerated() {
    assert_eq!(
        decode_event(r#"{"type":"brand_new_event","x":1}"#).unwrap(),
        None
    );
    assert_eq!(decode_event(r#"{"type":"content_block_delta","index":0,"delta":{"type":"citations_delta","citation":{}}}"#).unwrap(), None);
    assert_eq!(
        decode_event(r#"{"type":"content_block_stop","index":0,"future_field":[1,2]}"#).unwrap(),
        Some(StreamEvent::ContentBlockStop { index: 0 })
    );
}

#[test]
fn malformed_events_are_typed_errors() {
    for data in [
        "{not json",
        r#"{"type":"content_block_stop"}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta"}}"#,
        "[]",
        "42",
    ] {
        assert!(
            matches!(decode_event(data), Err(ApiError::Decode { .. })),
            "{data}"
        );
    }
}

#[test]
fn to_sse_round_trips() {
    let events = [
        StreamEvent::ContentBlockDelta {
            index: 2,
            delta: ContentDelta::TextDelta {
                text: "a\nb".into(),
            },
        },
        StreamEvent::MessageDelta {
            delta: MessageDeltaBody {
                stop_reason: Some(crate::response::StopReason::EndTurn),
                stop_sequence: None,
            },
            usage: UsageDelta {
                output_tokens: Some(7),
                ..UsageDelta::default()
            },
        },
        StreamEvent::MessageStop,
    ];
    for event in events {
        let sse = event.to_sse();
        let data = sse.lines().nth(1).unwrap().strip_prefix("data: ").unwrap();
        assert_eq!(decode_event(data).unwrap(), Some(event.clone()));
        let via_serde: StreamEvent = serde_json::from_str(data).unwrap();
        assert_eq!(via_serde, event);
    }
}
