//! A user message of stream-json input, as the prompt it carries: its text, and, when it has
//! images or documents (an SDK app's `{"type": "image", "source": {...}}` blocks), every block
//! in order for `Op::PromptContent`.

use serde_json::Value;
use tine_api_client::{ContentBlock, DocumentSource, ImageSource};

/// A user message's prompt.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct UserPrompt {
    /// Its text blocks, joined.
    pub(crate) text: String,
    /// All its blocks, when some are images or documents; `None` for text alone.
    pub(crate) content: Option<Vec<ContentBlock>>,
}

/// The prompt of a stream-json user message: its text and, with images or documents, all its
/// blocks. A media block the API could not take is an error saying what it needs.
pub(crate) fn user_prompt(line: &str) -> Result<Option<UserPrompt>, String> {
    let Some(text) = stream_json_prompt_allowing_media(line)? else {
        return Ok(None);
    };
    let value: Value = serde_json::from_str(line).map_err(|_| "not a JSON object".to_owned())?;
    let blocks = value
        .get("message")
        .and_then(|m| m.get("content"))
        .and_then(Value::as_array);
    let has_media = blocks.is_some_and(|blocks| {
        blocks.iter().any(|b| {
            matches!(
                b.get("type").and_then(Value::as_str),
                Some("image" | "document")
            )
        })
    });
    let content = match blocks {
        Some(blocks) if has_media => Some(media_blocks(blocks)?),
        _ => None,
    };
    if text.trim().is_empty() && content.is_none() {
        return Err("the user message has no text".to_owned());
    }
    Ok(Some(UserPrompt { text, content }))
}

/// The blocks of a message with media, each checked to be one the API takes.
fn media_blocks(blocks: &[Value]) -> Result<Vec<ContentBlock>, String> {
    blocks
        .iter()
        .filter(|b| {
            matches!(
                b.get("type").and_then(Value::as_str),
                Some("text" | "image" | "document")
            )
        })
        .map(|block| {
            let kind = block.get("type").and_then(Value::as_str).unwrap_or_default();
            match serde_json::from_value::<ContentBlock>(block.clone()) {
                Ok(parsed @ ContentBlock::Text(_)) => Ok(parsed),
                Ok(ContentBlock::Image(image)) if !matches!(image.source, ImageSource::Other(_)) => {
                    Ok(ContentBlock::Image(image))
                }
                Ok(ContentBlock::Document(document))
                    if !matches!(document.source, DocumentSource::Other(_)) =>
                {
                    Ok(ContentBlock::Document(document))
                }
                _ => Err(format!(
                    "an {kind} block needs a source the API takes: {{\"type\": \"base64\", \"media_type\": \"image/png\", \"data\": \"...\"}} (or a url)"
                )),
            }
        })
        .collect()
}

/// One line of `--input-format stream-json`: `{"type":"user","message":{"role":"user",
/// "content": "..." | [{"type":"text","text":"..."}, ...]}}`. Other message types are skipped.
pub fn stream_json_prompt(line: &str) -> Result<Option<String>, String> {
    let text = stream_json_prompt_allowing_media(line)?;
    if text.as_deref().is_some_and(|text| text.trim().is_empty()) {
        return Err("the user message has no text".to_owned());
    }
    Ok(text)
}

/// The text of a user message, possibly empty (a message of images alone).
fn stream_json_prompt_allowing_media(line: &str) -> Result<Option<String>, String> {
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

    #[test]
    fn an_image_makes_the_prompt_content_and_a_bad_one_is_an_error() {
        let line = r#"{"type":"user","message":{"role":"user","content":[{"type":"text","text":"what is this?"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}}]}}"#;
        let prompt = user_prompt(line).unwrap().unwrap();
        assert_eq!(prompt.text, "what is this?");
        let content = prompt.content.unwrap();
        assert!(matches!(content[0], ContentBlock::Text(_)));
        assert!(matches!(content[1], ContentBlock::Image(_)));
        let alone = r#"{"type":"user","message":{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}}]}}"#;
        assert!(user_prompt(alone).unwrap().unwrap().content.is_some());
        let bad =
            r#"{"type":"user","message":{"role":"user","content":[{"type":"image","source":{}}]}}"#;
        assert!(user_prompt(bad).unwrap_err().contains("base64"));
        let text = r#"{"type":"user","message":{"role":"user","content":"hi"}}"#;
        assert_eq!(user_prompt(text).unwrap().unwrap().content, None);
    }
}
