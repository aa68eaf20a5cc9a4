//! The deterministic token estimate and the canonical form of a block.
//!
//! A block's canonical form is its JSON with object keys sorted, no whitespace, and the
//! `cache_control` key left out (at the block's top level and in the content blocks of a
//! `tool_result`), so that moving a breakpoint never changes a prefix's key. A block costs
//! `ceil(canonical bytes / 4)` tokens. A reply costs `ceil(bytes / 4)` of its text, thinking, or
//! tool name plus canonical input. The numbers are not the real tokenizer's; they are stable,
//! documented and proportional, which is what tests of cache accounting need.

use std::fmt::Write as _;

use serde_json::Value;

/// Bytes per estimated token.
pub const BYTES_PER_TOKEN: u64 = 4;

/// `ceil(bytes / 4)`.
pub fn tokens_for_bytes(bytes: usize) -> u64 {
    (bytes as u64).div_ceil(BYTES_PER_TOKEN)
}

/// Appends the canonical form of a top-level block (tool, system block, message content block)
/// to `out`: sorted keys, no whitespace, no `cache_control`.
pub fn write_canonical_block(value: &Value, out: &mut String) {
    write_value(value, out, Strip::Block);
}

/// Appends the canonical form of any JSON value (sorted keys, nothing left out).
pub fn write_canonical(value: &Value, out: &mut String) {
    write_value(value, out, Strip::Nothing);
}

/// The canonical form of a value as a new string.
pub fn canonical(value: &Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out);
    out
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Strip {
    /// Leave out `cache_control` here, and in the `content` blocks of a `tool_result`.
    Block,
    Nothing,
}

fn write_value(value: &Value, out: &mut String, strip: Strip) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => {
            let _ = write!(out, "{n}");
        }
        Value::String(s) => write_string(s, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(item, out, Strip::Nothing);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let is_tool_result = strip == Strip::Block
                && map.get("type").and_then(Value::as_str) == Some("tool_result");
            let mut keys: Vec<&String> = map
                .keys()
                .filter(|k| !(strip == Strip::Block && k.as_str() == "cache_control"))
                .collect();
            keys.sort_unstable();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(key, out);
                out.push(':');
                let Some(inner) = map.get(key) else { continue };
                if is_tool_result
                    && key == "content"
                    && let Value::Array(blocks) = inner
                {
                    out.push('[');
                    for (j, block) in blocks.iter().enumerate() {
                        if j > 0 {
                            out.push(',');
                        }
                        write_value(block, out, Strip::Block);
                    }
                    out.push(']');
                    continue;
                }
                write_value(inner, out, Strip::Nothing);
            }
            out.push('}');
        }
    }
}

fn write_string(s: &str, out: &mut String) {
    // serde_json's escaping of a plain string cannot fail.
    match serde_json::to_string(s) {
        Ok(escaped) => out.push_str(&escaped),
        Err(_) => out.push_str("\"\""),
    }
}

/// Estimated tokens of a value's canonical form.
pub fn estimate_value(value: &Value) -> u64 {
    tokens_for_bytes(canonical(value).len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn canonical_sorts_keys_and_drops_cache_control() {
        let a = json!({"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}});
        let b = json!({"text": "hi", "type": "text"});
        let mut ca = String::new();
        let mut cb = String::new();
        write_canonical_block(&a, &mut ca);
        write_canonical_block(&b, &mut cb);
        assert_eq!(ca, cb);
        assert_eq!(ca, r#"{"text":"hi","type":"text"}"#);
    }

    #[test]
    fn nested_tool_result_cache_control_is_dropped() {
        let a = json!({"type": "tool_result", "tool_use_id": "t", "content": [
            {"type": "text", "text": "x", "cache_control": {"type": "ephemeral"}}]});
        let mut out = String::new();
        write_canonical_block(&a, &mut out);
        assert!(!out.contains("cache_control"), "{out}");
    }

    #[test]
    fn tool_input_keeps_a_key_named_cache_control() {
        let a = json!({"type": "tool_use", "id": "t", "name": "n", "input": {"cache_control": 1}});
        let mut out = String::new();
        write_canonical_block(&a, &mut out);
        assert!(out.contains("cache_control"));
    }

    #[test]
    fn tokens_round_up() {
        assert_eq!(tokens_for_bytes(0), 0);
        assert_eq!(tokens_for_bytes(1), 1);
        assert_eq!(tokens_for_bytes(4), 1);
        assert_eq!(tokens_for_bytes(5), 2);
    }
}
