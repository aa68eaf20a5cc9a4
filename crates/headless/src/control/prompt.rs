//! A user message of stream-json input, as the prompt it carries.

use serde_json::Value;

/// One line of `--input-format stream-json`: `{"type":"user","message":{"role":"user",
/// "content": "..." | [{"type":"text","text":"..."}, ...]}}`. Other message types are skipped.
pub fn stream_json_prompt(line: &str) -> Result<Option<String>, String> {
    let value: Value = serde_json::from_str(line).map_err(|_| "not a JSON object".to_owned())?;
    match value.get("type").and_then(Value::as_str) {
        Some("user") => {}
        Some(_) => return Ok(None),
        None => return Err("a message needs a \"type\" (\"user\")".to_owned()),
    }
    let content = value
        .get("message")
        .and_then(|m| m.get("content"))
        .ok_or_else(|| "a user message needs message.content".to_owned())?;
    let text = match content {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => {
            return Err(
                "message.content must be a string or an array of content blocks".to_owned(),
            );
        }
    };
    if text.trim().is_empty() {
        return Err("the user message has no text".to_owned());
    }
    Ok(Some(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_json_lines_give_the_user_text() {
        let line = r#"{"type":"user","message":{"role":"user","content":"hi there"}}"#;
        assert_eq!(
            stream_json_prompt(line).unwrap().as_deref(),
            Some("hi there")
        );
        let blocks = r#"{"type":"user","message":{"role":"user","content":[{"type":"text","text":"a"},{"type":"image"},{"type":"text","text":"b"}]}}"#;
        assert_eq!(stream_json_prompt(blocks).unwrap().as_deref(), Some("a\nb"));
        let other = r#"{"type":"control_request"}"#;
        assert_eq!(stream_json_prompt(other).unwrap(), None);
        assert!(stream_json_prompt("not json").is_err());
    }
}
