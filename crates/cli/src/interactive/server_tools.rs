//! The API's server tools in the UI: a reply's `server_tool_use` (web search) and its
//! `web_search_tool_result` shown as a finished tool call, "WebSearch(query)" with the titles
//! and addresses found (the blocks themselves stay in the history as the API sent them).

use serde_json::Value;
use tine_api_client::{ContentBlock, Message, MessageContent};
use tine_tui::{ToolDisplayView, ToolResultView, UiEvent};

/// The tool-call entries for the server tool calls of an assistant `message`.
pub fn server_tool_events(message: &Message) -> Vec<UiEvent> {
    let MessageContent::Blocks(blocks) = &message.content else {
        return Vec::new();
    };
    let unknown = |block: &ContentBlock| match block {
        ContentBlock::Unknown(value) => Some(value.clone()),
        _ => None,
    };
    let values: Vec<Value> = blocks.iter().filter_map(unknown).collect();
    let mut out = Vec::new();
    for call in values.iter().filter(|v| v["type"] == "server_tool_use") {
        let id = call["id"].as_str().unwrap_or_default().to_owned();
        let tool = match call["name"].as_str() {
            Some("web_search") => "WebSearch".to_owned(),
            Some(other) => other.to_owned(),
            None => continue,
        };
        let args = call["input"]["query"]
            .as_str()
            .map_or_else(|| call["input"].to_string(), str::to_owned);
        out.push(UiEvent::ToolStarted {
            id: id.clone(),
            tool,
            args,
        });
        let result = values
            .iter()
            .find(|v| v["type"] == "web_search_tool_result" && v["tool_use_id"] == call["id"]);
        out.push(UiEvent::ToolFinished {
            id,
            result: result_view(result),
        });
    }
    out
}

fn result_view(result: Option<&Value>) -> ToolResultView {
    let content = result.map(|r| &r["content"]);
    match content {
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
            ToolResultView {
                is_error: false,
                summary: format!("Did 1 search: {n} result{}", if n == 1 { "" } else { "s" }),
                content: lines.join("\n"),
                display: ToolDisplayView::None,
            }
        }
        Some(error) => ToolResultView {
            is_error: true,
            summary: format!(
                "Web search failed: {}",
                error["error_code"].as_str().unwrap_or("unknown error")
            ),
            content: error.to_string(),
            display: ToolDisplayView::None,
        },
        None => ToolResultView {
            is_error: true,
            summary: "No results came back".to_owned(),
            content: String::new(),
            display: ToolDisplayView::None,
        },
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
        let events = server_tool_events(&message);
        assert_eq!(
            events[0],
            UiEvent::ToolStarted {
                id: "srv_1".into(),
                tool: "WebSearch".into(),
                args: "rust sse".into()
            }
        );
        let UiEvent::ToolFinished { result, .. } = &events[1] else {
            panic!("{events:?}");
        };
        assert_eq!(result.summary, "Did 1 search: 1 result");
        assert_eq!(result.content, "A (https://a.example)");
    }
}
