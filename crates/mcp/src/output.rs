//! A server's answer as the model reads it: text blocks joined, images and other binary blocks
//! described (a tool result here is text), `isError` kept, and a result over the token limit
//! cut, with the whole saved to a private file whose path the model is given so it can Read it.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde_json::Value;
use tine_tools::ToolOutput;

use crate::names::sanitize;

/// Claude Code's default limit on one MCP result (`MAX_MCP_OUTPUT_TOKENS`).
pub(crate) const DEFAULT_MAX_OUTPUT_TOKENS: usize = 25_000;

/// A fast token estimate: four characters a token, as Claude Code estimates MCP output.
pub(crate) fn estimate_tokens(text: &str) -> usize {
    text.chars().count().div_ceil(4)
}

/// The text of a list of MCP content blocks (`tools/call` content, `resources/read` contents).
pub(crate) fn render_blocks(blocks: &[Value]) -> String {
    let mut parts: Vec<String> = Vec::new();
    for block in blocks {
        let text = |key: &str| block.get(key).and_then(Value::as_str);
        let kind = text("type").unwrap_or("");
        let part = match kind {
            "text" => text("text").unwrap_or_default().to_owned(),
            "image" | "audio" => describe_binary(kind, text("mimeType"), text("data")),
            "resource" => match block.get("resource") {
                Some(resource) => render_resource(resource),
                None => String::new(),
            },
            "resource_link" => {
                let uri = text("uri").unwrap_or("?");
                match text("name") {
                    Some(name) => format!("[resource link: {name} <{uri}>]"),
                    None => format!("[resource link: <{uri}>]"),
                }
            }
            // A `resources/read` entry has no `type`: text or blob contents.
            "" if block.get("uri").is_some() => render_resource(block),
            other => format!("[{other} content not shown]"),
        };
        parts.push(part);
    }
    parts.join("\n")
}

fn render_resource(resource: &Value) -> String {
    let text = |key: &str| resource.get(key).and_then(Value::as_str);
    match (text("text"), text("blob")) {
        (Some(body), _) => body.to_owned(),
        (None, Some(blob)) => {
            let uri = text("uri").unwrap_or("?");
            format!(
                "{} at <{uri}>",
                describe_binary("binary resource", text("mimeType"), Some(blob))
            )
        }
        (None, None) => String::new(),
    }
}

fn describe_binary(kind: &str, mime: Option<&str>, base64: Option<&str>) -> String {
    let bytes = base64.map_or(0, |data| data.trim_end_matches('=').len() * 3 / 4);
    format!(
        "[{kind}: {}, {bytes} bytes, not shown as text]",
        mime.unwrap_or("unknown type")
    )
}

/// Where and how much.
#[derive(Debug, Clone)]
pub(crate) struct OutputLimits {
    /// Tokens of a result at most.
    pub max_tokens: usize,
    /// Where whole results over the limit are saved (created 0700, files 0600).
    pub dir: PathBuf,
}

/// Turns a `tools/call` result (as JSON) into the tool's output.
pub(crate) fn call_result_output(
    result: &Value,
    server: &str,
    tool: &str,
    limits: &OutputLimits,
) -> ToolOutput {
    let blocks = result
        .get("content")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let mut text = render_blocks(blocks);
    if text.is_empty()
        && let Some(structured) = result.get("structuredContent")
    {
        text = structured.to_string();
    }
    let is_error = result.get("isError").and_then(Value::as_bool) == Some(true);
    let output = limit_output(text, server, tool, limits);
    if is_error {
        ToolOutput::error(output)
    } else {
        ToolOutput::text(output)
    }
}

/// `text` itself when within the limit; otherwise its start and a note with the saved file.
pub(crate) fn limit_output(
    text: String,
    server: &str,
    tool: &str,
    limits: &OutputLimits,
) -> String {
    let tokens = estimate_tokens(&text);
    if tokens <= limits.max_tokens {
        return text;
    }
    let keep: String = text
        .chars()
        .take(limits.max_tokens.saturating_mul(4))
        .collect();
    let saved = match save_whole(&limits.dir, server, tool, &text) {
        Ok(path) => format!(
            "The whole result is saved in {}: read it with the Read tool, a part at a time (offset and limit), or search it with Grep.",
            path.display()
        ),
        Err(error) => format!("The whole result could not be saved ({error})."),
    };
    format!(
        "{keep}\n\n[MCP output truncated: about {tokens} tokens, over the limit of {} (MAX_MCP_OUTPUT_TOKENS). {saved}]",
        limits.max_tokens
    )
}

fn save_whole(dir: &Path, server: &str, tool: &str, text: &str) -> std::io::Result<PathBuf> {
    use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _, PermissionsExt as _};
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    // An existing directory keeps its mode through `create`; make it private anyway.
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    let name = format!(
        "{}-{}-{}.txt",
        sanitize(server),
        sanitize(tool),
        uuid::Uuid::new_v4().simple()
    );
    let path = dir.join(name);
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)?;
    file.write_all(text.as_bytes())?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn blocks_become_text() {
        let blocks = vec![
            json!({"type": "text", "text": "one"}),
            json!({"type": "image", "data": "AAAA", "mimeType": "image/png"}),
            json!({"type": "resource", "resource": {"uri": "x://a", "text": "body"}}),
            json!({"type": "resource_link", "uri": "x://b", "name": "b"}),
        ];
        assert_eq!(
            render_blocks(&blocks),
            "one\n[image: image/png, 3 bytes, not shown as text]\nbody\n[resource link: b <x://b>]"
        );
    }

    #[test]
    fn errors_and_structured_content_are_kept() {
        let limits = OutputLimits {
            max_tokens: 100,
            dir: std::env::temp_dir(),
        };
        let out = call_result_output(
            &json!({"content": [{"type": "text", "text": "bad"}], "isError": true}),
            "s",
            "t",
            &limits,
        );
        assert!(out.is_error);
        assert_eq!(out.content, "bad");
        let out = call_result_output(
            &json!({"content": [], "structuredContent": {"n": 1}}),
            "s",
            "t",
            &limits,
        );
        assert_eq!(out.content, r#"{"n":1}"#);
    }
}
