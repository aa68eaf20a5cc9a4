use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;
use crate::accumulate::MessageAccumulator;

fn sse(chunks: &[Value]) -> String {
    let mut out = String::new();
    for chunk in chunks {
        out.push_str(&format!("data: {chunk}\n\n"));
    }
    out.push_str("data: [DONE]\n\n");
    out
}

fn decode(body: &str) -> Vec<StreamEvent> {
    let mut decoder = ChunkDecoder::new("the-model", 0);
    let mut out = Vec::new();
    decoder.feed(body.as_bytes(), &mut out).unwrap();
    assert!(decoder.finish(&mut out));
    out
}

fn message(events: &[StreamEvent]) -> ResponseMessage {
    let mut accumulator = MessageAccumulator::new();
    for event in events {
        accumulator.push(event).unwrap();
    }
    assert!(accumulator.is_complete());
    accumulator.finish().unwrap()
}

fn chunk(delta: Value) -> Value {
    json!({"id": "chatcmpl-1", "model": "qwen", "choices": [{"index": 0, "delta": delta, "finish_reason": null}]})
}

fn finish(reason: &str) -> Value {
    json!({"id": "chatcmpl-1", "choices": [{"index": 0, "delta": {}, "finish_reason": reason}]})
}

fn usage(prompt: u64, completion: u64, cached: Option<u64>) -> Value {
    let mut usage = json!({"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion});
    if let Some(cached) = cached {
        usage["prompt_tokens_details"] = json!({"cached_tokens": cached});
    }
    json!({"id": "chatcmpl-1", "choices": [], "usage": usage})
}

/// An OpenAI-style reply: text, two calls at indexes 0 and 1 with arguments in pieces, then a
/// usage chunk.
fn openai_reply() -> String {
    sse(&[
        chunk(json!({"role": "assistant", "content": ""})),
        chunk(json!({"content": "Reading "})),
        chunk(json!({"content": "both."})),
        chunk(
            json!({"tool_calls": [{"index": 0, "id": "call_a", "type": "function", "function": {"name": "Read", "arguments": ""}}]}),
        ),
        chunk(json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"file_"}}]})),
        chunk(json!({"tool_calls": [{"index": 0, "function": {"arguments": "path\": \"a\"}"}}]})),
        chunk(
            json!({"tool_calls": [{"index": 1, "id": "call_b", "type": "function", "function": {"name": "Read", "arguments": "{\"file_path\""}}]}),
        ),
        chunk(json!({"tool_calls": [{"index": 1, "function": {"arguments": ": \"b\"}"}}]})),
        finish("tool_calls"),
        usage(1200, 40, Some(1024)),
    ])
}

#[test]
fn text_and_tool_calls_become_the_anthropic_event_sequence() {
    let events = decode(&openai_reply());
    let names: Vec<&str> = events.iter().map(StreamEvent::name).collect();
    assert_eq!(names[0], "message_start");
    assert_eq!(&names[names.len() - 2..], ["message_delta", "message_stop"]);
    // One block open at a time: every start is closed before the next one starts.
    let mut open = None;
    for event in &events {
        match event {
            StreamEvent::ContentBlockStart { index, .. } => {
                assert_eq!(open, None, "{events:?}");
                open = Some(*index);
            }
            StreamEvent::ContentBlockStop { index } => {
                assert_eq!(open, Some(*index));
                open = None;
            }
            _ => {}
        }
    }
    let reply = message(&events);
    assert_eq!(reply.model, "qwen");
    assert_eq!(reply.text(), "Reading both.");
    let calls: Vec<_> = reply.tool_uses().collect();
    assert_eq!(calls.len(), 2);
    assert_eq!(
        (calls[0].id.as_str(), &calls[0].input),
        ("call_a", &json!({"file_path": "a"}))
    );
    assert_eq!(
        (calls[1].id.as_str(), &calls[1].input),
        ("call_b", &json!({"file_path": "b"}))
    );
    assert_eq!(reply.stop_reason, Some(StopReason::ToolUse));
    // The parts add up as on Anthropic: reads + input = the prompt.
    assert_eq!(reply.usage.cache_read_input_tokens, 1024);
    assert_eq!(reply.usage.input_tokens, 176);
    assert_eq!(reply.usage.cache_creation_input_tokens, 0);
    assert_eq!(reply.usage.total_input_tokens(), 1200);
    assert_eq!(reply.usage.output_tokens, 40);
}

#[test]
fn ollama_sends_every_call_at_index_zero_with_distinct_ids() {
    // Ollama: each call at index 0, pieces without an id continue the last call there, usage
    // only in the final chunk, no cached_tokens.
    let mut last = finish("tool_calls");
    last["usage"] = json!({"prompt_tokens": 300, "completion_tokens": 25});
    let body = sse(&[
        chunk(
            json!({"tool_calls": [{"index": 0, "id": "call_x1", "function": {"name": "Glob", "arguments": "{\"pattern\":"}}]}),
        ),
        chunk(json!({"tool_calls": [{"index": 0, "function": {"arguments": "\"*.rs\"}"}}]})),
        chunk(
            json!({"tool_calls": [{"index": 0, "id": "call_x2", "function": {"name": "Grep", "arguments": "{\"pattern\":\"fn\"}"}}]}),
        ),
        chunk(
            json!({"tool_calls": [{"index": 0, "id": "call_x3", "function": {"name": "Read", "arguments": {"file_path": "c"}}}]}),
        ),
        last,
    ]);
    let reply = message(&decode(&body));
    let calls: Vec<(&str, &str, &Value)> = reply
        .tool_uses()
        .map(|c| (c.id.as_str(), c.name.as_str(), &c.input))
        .collect();
    assert_eq!(
        calls,
        [
            ("call_x1", "Glob", &json!({"pattern": "*.rs"})),
            ("call_x2", "Grep", &json!({"pattern": "fn"})),
            ("call_x3", "Read", &json!({"file_path": "c"})),
        ]
    );
    assert_eq!(reply.usage.input_tokens, 300);
    assert_eq!(reply.usage.cache_read_input_tokens, 0);
    assert_eq!(reply.usage.output_tokens, 25);
}

#[test]
fn finish_reasons_map_to_stop_reasons() {
    for (reason, tools, expected) in [
        ("stop", false, StopReason::EndTurn),
        ("stop", true, StopReason::ToolUse),
        ("tool_calls", true, StopReason::ToolUse),
        ("length", false, StopReason::MaxTokens),
        ("content_filter", false, StopReason::Refusal),
        ("eos", false, StopReason::Other("eos".into())),
    ] {
        assert_eq!(stop_reason(Some(reason), tools), expected, "{reason}");
    }
    let body = sse(&[chunk(json!({"content": "cut sh"})), finish("length")]);
    let reply = message(&decode(&body));
    assert_eq!(reply.stop_reason, Some(StopReason::MaxTokens));
    assert_eq!(reply.text(), "cut sh");
}

#[test]
fn reasoning_becomes_thinking_before_the_text() {
    let body = sse(&[
        chunk(json!({"reasoning_content": "Let me think."})),
        chunk(json!({"reasoning": " Done."})),
        chunk(json!({"content": "Answer."})),
        finish("stop"),
    ]);
    let reply = message(&decode(&body));
    match &reply.content[0] {
        ContentBlock::Thinking(t) => assert_eq!(t.thinking, "Let me think. Done."),
        other => panic!("{other:?}"),
    }
    assert_eq!(reply.text(), "Answer.");
}

#[test]
fn a_stream_without_done_is_complete_once_a_finish_reason_came() {
    let body = format!(
        "data: {}\n\ndata: {}\n\n",
        chunk(json!({"content": "hi"})),
        finish("stop")
    );
    let mut decoder = ChunkDecoder::new("m", 0);
    let mut out = Vec::new();
    decoder.feed(body.as_bytes(), &mut out).unwrap();
    assert!(decoder.finish(&mut out));
    assert_eq!(message(&out).text(), "hi");

    let cut = format!("data: {}\n\n", chunk(json!({"content": "hi"})));
    let mut decoder = ChunkDecoder::new("m", 0);
    let mut out = Vec::new();
    decoder.feed(cut.as_bytes(), &mut out).unwrap();
    assert!(!decoder.finish(&mut out), "no finish reason: incomplete");
}

#[test]
fn an_error_in_the_stream_becomes_an_error_event() {
    for (data, expected_type) in [
        (
            json!({"error": {"message": "boom", "type": "server_error", "code": null}}),
            "api_error",
        ),
        (
            json!({"object": "error", "message": "bad", "type": "BadRequestError", "code": 400}),
            "invalid_request_error",
        ),
        (
            json!({"error": {"message": "slow down", "type": "rate_limit_exceeded"}}),
            "rate_limit_error",
        ),
    ] {
        let body = format!(
            "data: {}\n\ndata: {data}\n\n",
            chunk(json!({"content": "x"}))
        );
        let mut decoder = ChunkDecoder::new("m", 0);
        let mut out = Vec::new();
        decoder.feed(body.as_bytes(), &mut out).unwrap();
        let Some(StreamEvent::Error { error }) = out.last() else {
            panic!("{out:?}");
        };
        assert_eq!(error.error_type, expected_type, "{data}");
        assert!(decoder.is_done());
    }
}

#[test]
fn a_frame_that_is_not_json_is_an_error_after_the_good_events() {
    let body = format!(
        "data: {}\n\ndata: {{\"choices\": [\n\n",
        chunk(json!({"content": "ok"}))
    );
    let mut decoder = ChunkDecoder::new("m", 0);
    let mut out = Vec::new();
    let error = decoder.feed(body.as_bytes(), &mut out).unwrap_err();
    assert!(matches!(error, ApiError::Decode { .. }), "{error:?}");
    assert!(
        out.iter()
            .any(|e| matches!(e, StreamEvent::ContentBlockDelta { .. }))
    );
}

#[test]
fn a_call_whose_name_comes_late_waits_for_it() {
    let body = sse(&[
        chunk(
            json!({"tool_calls": [{"index": 0, "id": "call_1", "function": {"arguments": "{\"a\":"}}]}),
        ),
        chunk(
            json!({"tool_calls": [{"index": 0, "function": {"name": "Edit", "arguments": "1}"}}]}),
        ),
        finish("tool_calls"),
    ]);
    let reply = message(&decode(&body));
    let call = reply.tool_uses().next().unwrap();
    assert_eq!(
        (call.name.as_str(), &call.input),
        ("Edit", &json!({"a": 1}))
    );
}

#[test]
fn a_stream_without_usage_gets_an_estimate_marked_as_such() {
    // llama-cpp-python's server: no usage chunk even when asked.
    let body = sse(&[
        chunk(json!({"role": "assistant", "content": ""})),
        chunk(json!({"content": "Hello there, how are you?"})),
        finish("stop"),
    ]);
    let mut decoder = ChunkDecoder::new("smollm2", 1_750);
    let mut out = Vec::new();
    decoder.feed(body.as_bytes(), &mut out).unwrap();
    assert!(decoder.finish(&mut out));
    let reply = message(&out);
    assert!(reply.usage.estimated);
    assert_eq!(reply.usage.input_tokens, 1_750);
    // 25 bytes of text at 4 bytes a token.
    assert_eq!(reply.usage.output_tokens, 7);
    // A server's own count is never marked.
    assert!(!message(&decode(&openai_reply())).usage.estimated);
}

#[test]
fn arguments_that_are_not_a_json_object_reach_the_loop_as_text() {
    let body = sse(&[
        chunk(
            json!({"tool_calls": [{"index": 0, "id": "call_1", "function": {"name": "Read", "arguments": "{\"file_path\": notes.txt}"}}]}),
        ),
        chunk(
            json!({"tool_calls": [{"index": 1, "id": "call_2", "function": {"name": "Read", "arguments": "\"{\\\"file_path\\\": \\\"a\\\"}\""}}]}),
        ),
        chunk(
            json!({"tool_calls": [{"index": 2, "id": "call_3", "function": {"name": "Glob", "arguments": "[1, 2]"}}]}),
        ),
        finish("tool_calls"),
    ]);
    let reply = message(&decode(&body));
    let inputs: Vec<&Value> = reply.tool_uses().map(|c| &c.input).collect();
    assert_eq!(
        inputs,
        [
            &json!("{\"file_path\": notes.txt}"),
            // A model that wrapped its object in a string: the object.
            &json!({"file_path": "a"}),
            &json!("[1, 2]"),
        ]
    );
    assert_eq!(reply.stop_reason, Some(StopReason::ToolUse));
}

#[test]
fn a_call_cut_at_length_stays_raw_so_the_loop_raises_the_limit() {
    let body = sse(&[
        chunk(
            json!({"tool_calls": [{"index": 0, "id": "call_1", "function": {"name": "Write", "arguments": "{\"content\": \"lo"}}]}),
        ),
        finish("length"),
    ]);
    let mut accumulator = MessageAccumulator::new();
    let error = decode(&body)
        .iter()
        .find_map(|e| accumulator.push(e).err())
        .expect("an unfinished call is an error");
    assert!(
        matches!(error, ApiError::InvalidToolInput { .. }),
        "{error:?}"
    );
}

proptest! {
    /// The reply is the same however the body is split into network chunks.
    #[test]
    fn any_split_gives_the_same_message(cuts in proptest::collection::vec(0usize..2000, 0..6)) {
        let body = openai_reply();
        let bytes = body.as_bytes();
        let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c % bytes.len()).collect();
        cuts.sort_unstable();
        let mut decoder = ChunkDecoder::new("the-model", 0);
        let mut out = Vec::new();
        let mut start = 0;
        for cut in cuts.into_iter().chain([bytes.len()]) {
            decoder.feed(&bytes[start..cut], &mut out).unwrap();
            start = cut;
        }
        prop_assert!(decoder.finish(&mut out));
        prop_assert_eq!(message(&out), message(&decode(&body)));
    }
}
