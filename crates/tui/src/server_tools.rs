//! The API's server tools in the transcript: a reply's `server_tool_use` (web search) and its
//! `web_search_tool_result` shown as a finished tool call, "WebSearch(query)" with the titles
//! and addresses found (the blocks themselves stay in the history as the API sent them).

use serde_json::Value;
use tine_api_client::{ContentBlock, Message, MessageContent};
use tine_session::ToolOutput;

/// A server tool call of a reply, finished.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ServerCall {
    pub(crate) id: String,
    pub(crate) tool: String,
    pub(crate) args: String,
    pub(crate) result: ToolOutput,
}

/// The server tool calls of an assistant `message`, with their results.
pub(crate) fn calls(message: &Message) -> Vec<ServerCall> {
    let MessageContent::Blocks(blocks) = &message.content else {
        return Vec::new();
    };
    let values: Vec<&Value> = blocks
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Unknown(value) => Some(value),
            _ => None,
        })
        .collect();
    let mut out = Vec::new();
    for call in values.iter().filter(|v| v["type"] == "server_tool_use") {
        let tool = match call["name"].as_str() {
            Some("web_search") => "WebSearch".to_owned(),
            Some(other) => other.to_owned(),
            None => continue,
        };
        let args = call["input"]["query"]
            .as_str()
            .map_or_else(|| call["input"].to_string(), str::to_owned);
        let result = values
            .iter()
            .find(|v| v["type"] == "web_search_tool_result" && v["tool_use_id"] == call["id"]);
        out.push(ServerCall {
            id: call["id"].as_str().unwrap_or_default().to_owned(),
            tool,
            args,
            result: output(result.copied()),
        });
    }
    out
}

fn output(result: Option<&Value>) -> ToolOutput {
    match result.map(|r| &r["content"]) {
        Some(Value::Array(items)) => {
            let lines: Vec<String> = items
                .iter()
                .map(|item| {
                    format!(
                        "{} ({})",
                        item["title"].as_str().unwrap_or("untitled"),
                        item["url"].as_str().unwrap_or("?")
                    )
                })
                .collect();
            let n = lines.len();
            ToolOutput::text(lines.join("\n")).with_summary(format!(
                "Did 1 search: {n} result{}",
                if n == 1 { "" } else { "s" }
            ))
        }
        Some(error) => ToolOutput::error(error.to_string()).with_summary(format!(
            "Web search failed: {}",
            error["error_code"].as_str().unwrap_or("unknown error")
        )),
        None => ToolOutput::error("").with_summary("No results came back"),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_web_search_shows_as_a_finished_call_with_its_results() {
        let message = Message::assistant(vec![
            ContentBlock::Unknown(json!({"type": "server_tool_use", "id": "srv_1",
                "name": "web_search", "input": {"query": "rust sse"}})),
            ContentBlock::Unknown(
                json!({"type": "web_search_tool_result", "tool_use_id": "srv_1",
                "content": [{"type": "web_search_result", "url": "https://a.example", "title": "A"}]}),
            ),
            ContentBlock::text("Found it."),
        ]);
        let calls = calls(&message);
        assert_eq!(calls.len(), 1);
        let call = &calls[0];
        assert_eq!(
            (call.id.as_str(), call.tool.as_str(), call.args.as_str()),
            ("srv_1", "WebSearch", "rust sse")
        );
        assert_eq!(call.result.summary, "Did 1 search: 1 result");
        assert_eq!(call.result.content, "A (https://a.example)");
        assert!(!call.result.is_error);
    }
}
