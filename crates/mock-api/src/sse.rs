//! The response shapes: the non-streaming message, and the SSE event sequence the real API
//! sends (`message_start`, `ping`, per block `content_block_start` / deltas / `content_block_stop`,
//! `message_delta` with the stop reason and cumulative usage, `message_stop`).

use bytes::Bytes;
use serde_json::{Value, json};

use crate::cache::Usage;
use crate::json::str_field;
use crate::script::Completion;

/// Bytes of text per `text_delta` / `thinking_delta` event (and per chat `content` delta).
pub(crate) const TEXT_CHUNK_BYTES: usize = 24;
/// Bytes of JSON per `input_json_delta` event (and per chat tool-call `arguments` delta).
pub(crate) const JSON_CHUNK_BYTES: usize = 32;

/// The non-streaming response body.
pub fn message_json(id: &str, model: &str, completion: &Completion, usage: &Usage) -> Value {
    json!({
        "id": id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": completion.content,
        "stop_reason": completion.stop_reason,
        "stop_sequence": null,
        "usage": usage.to_json(),
    })
}

/// One SSE event, framed.
pub fn frame(event: &str, data: &Value) -> Bytes {
    Bytes::from(format!("event: {event}\ndata: {data}\n\n"))
}

/// The `error` event the API sends after a 200.
pub fn error_event(error_type: &str, message: &str) -> Bytes {
    frame(
        "error",
        &json!({"type": "error", "error": {"type": error_type, "message": message}}),
    )
}

/// A frame cut inside its JSON, as a broken proxy might pass it on.
pub fn corrupt_frame() -> Bytes {
    Bytes::from_static(
        b"event: content_block_delta\ndata: {\"type\": \"content_block_delta\", \"index\": 0, \"delta\": {\"type\": \"text_del\n\n",
    )
}

/// `s` in pieces of about `size` bytes (never splitting a character), as streams send text.
pub(crate) fn pieces(s: &str, size: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < s.len() {
        let mut end = (start + size).min(s.len());
        while !s.is_char_boundary(end) {
            end += 1;
        }
        out.push(&s[start..end]);
        start = end;
    }
    out
}

/// Every event of a streamed response, in order.
pub fn events(id: &str, model: &str, completion: &Completion, usage: &Usage) -> Vec<Bytes> {
    let mut start_usage = *usage;
    start_usage.output_tokens = 1;
    let mut out = vec![
        frame(
            "message_start",
            &json!({"type": "message_start", "message": {
                "id": id, "type": "message", "role": "assistant", "model": model,
                "content": [], "stop_reason": null, "stop_sequence": null,
                "usage": start_usage.to_json(),
            }}),
        ),
        frame("ping", &json!({"type": "ping"})),
    ];
    for (index, block) in completion.content.iter().enumerate() {
        let kind = block.get("type").and_then(Value::as_str).unwrap_or("text");
        let start_block = match kind {
            "tool_use" | "server_tool_use" => {
                json!({"type": kind, "id": block["id"], "name": block["name"], "input": {}})
            }
            "thinking" => json!({"type": "thinking", "thinking": "", "signature": ""}),
            "text" => json!({"type": "text", "text": ""}),
            // Redacted thinking and server tool results arrive whole, without deltas.
            _ => block.clone(),
        };
        out.push(frame(
            "content_block_start",
            &json!({"type": "content_block_start", "index": index, "content_block": start_block}),
        ));
        let delta = |d: Value| {
            frame(
                "content_block_delta",
                &json!({"type": "content_block_delta", "index": index, "delta": d}),
            )
        };
        match kind {
            "tool_use" | "server_tool_use" => {
                let input = block.get("input").map(Value::to_string).unwrap_or_default();
                out.push(delta(
                    json!({"type": "input_json_delta", "partial_json": ""}),
                ));
                for part in pieces(&input, JSON_CHUNK_BYTES) {
                    out.push(delta(
                        json!({"type": "input_json_delta", "partial_json": part}),
                    ));
                }
            }
            "thinking" => {
                let text = str_field(block, "thinking");
                for part in pieces(text, TEXT_CHUNK_BYTES) {
                    out.push(delta(json!({"type": "thinking_delta", "thinking": part})));
                }
                let sig = str_field(block, "signature");
                out.push(delta(json!({"type": "signature_delta", "signature": sig})));
            }
            "text" => {
                let text = str_field(block, "text");
                for part in pieces(text, TEXT_CHUNK_BYTES) {
                    out.push(delta(json!({"type": "text_delta", "text": part})));
                }
            }
            _ => {}
        }
        out.push(frame(
            "content_block_stop",
            &json!({"type": "content_block_stop", "index": index}),
        ));
    }
    out.push(frame(
        "message_delta",
        &json!({"type": "message_delta",
        "delta": {"stop_reason": completion.stop_reason, "stop_sequence": null},
        "usage": {
            "input_tokens": usage.input_tokens,
            "cache_creation_input_tokens": usage.cache_creation_input_tokens,
            "cache_read_input_tokens": usage.cache_read_input_tokens,
            "output_tokens": usage.output_tokens,
        }}),
    ));
    out.push(frame("message_stop", &json!({"type": "message_stop"})));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_sequence_has_the_real_shape() {
        let completion = Completion {
            content: vec![
                json!({"type": "thinking", "thinking": "hmm", "signature": "sig"}),
                json!({"type": "text", "text": "héllo wörld, this is a longer text to chunk"}),
                json!({"type": "tool_use", "id": "toolu_mock_0001", "name": "Read", "input": {"file_path": "a"}}),
            ],
            stop_reason: "tool_use".into(),
            output_tokens: 20,
            raw_arguments: Default::default(),
        };
        let usage = Usage {
            input_tokens: 5,
            output_tokens: 20,
            ..Usage::default()
        };
        let evs = events("msg_1", "m", &completion, &usage);
        let names: Vec<String> = evs
            .iter()
            .map(|b| {
                let s = std::str::from_utf8(b).unwrap();
                s.lines()
                    .next()
                    .unwrap()
                    .trim_start_matches("event: ")
                    .to_string()
            })
            .collect();
        assert_eq!(names.first().map(String::as_str), Some("message_start"));
        assert_eq!(names.last().map(String::as_str), Some("message_stop"));
        assert_eq!(names[names.len() - 2], "message_delta");
        assert_eq!(
            names.iter().filter(|n| *n == "content_block_start").count(),
            3
        );
        // Text deltas reassemble to the text; JSON deltas to the input.
        let mut text = String::new();
        let mut json_text = String::new();
        for ev in &evs {
            let s = std::str::from_utf8(ev).unwrap();
            let data: Value =
                serde_json::from_str(s.lines().nth(1).unwrap().trim_start_matches("data: "))
                    .unwrap();
            if data["type"] == "content_block_delta" {
                match data["delta"]["type"].as_str() {
                    Some("text_delta") => text.push_str(data["delta"]["text"].as_str().unwrap()),
                    Some("input_json_delta") => {
                        json_text.push_str(data["delta"]["partial_json"].as_str().unwrap())
                    }
                    _ => {}
                }
            }
        }
        assert_eq!(text, "héllo wörld, this is a longer text to chunk");
        let input: Value = serde_json::from_str(&json_text).unwrap();
        assert_eq!(input, json!({"file_path": "a"}));
    }
}
