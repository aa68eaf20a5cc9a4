//! What the scripted model says: a [`Reply`] of [`ReplyBlock`]s in the API's own shapes (text,
//! thinking, tool calls, server tools), its stop reason and pacing. In a scenario's JSON a plain
//! string is a one-text-block reply.

use serde::Deserialize;
use serde_json::Value;

/// What the model says. In JSON, a plain string is a one-text-block reply.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(try_from = "ReplyRepr")]
pub struct Reply {
    pub content: Vec<ReplyBlock>,
    /// Defaults to `tool_use` when the reply calls a tool, else `end_turn`. `max_tokens` here
    /// forces a truncation stop.
    pub stop_reason: Option<String>,
    /// Overrides the scenario's delay between streamed events.
    pub chunk_delay_ms: Option<u64>,
    /// Overrides the scenario's time to first byte.
    pub latency_ms: Option<u64>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum ReplyRepr {
    Text(String),
    Full(ReplyFull),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReplyFull {
    #[serde(default)]
    content: Vec<ReplyBlock>,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    stop_reason: Option<String>,
    #[serde(default)]
    chunk_delay_ms: Option<u64>,
    #[serde(default)]
    latency_ms: Option<u64>,
}

impl TryFrom<ReplyRepr> for Reply {
    type Error = String;
    fn try_from(r: ReplyRepr) -> Result<Self, String> {
        Ok(match r {
            ReplyRepr::Text(t) => Reply::text(&t),
            ReplyRepr::Full(f) => {
                let mut content = f.content;
                if let Some(text) = f.text {
                    content.push(ReplyBlock::Text { text });
                }
                Reply {
                    content,
                    stop_reason: f.stop_reason,
                    chunk_delay_ms: f.chunk_delay_ms,
                    latency_ms: f.latency_ms,
                }
            }
        })
    }
}

impl Reply {
    /// Empty reply, to add blocks to.
    pub fn new() -> Self {
        Self::default()
    }

    /// The built-in default reply.
    pub fn fallback() -> Self {
        Self::text("OK.")
    }

    pub fn text(text: &str) -> Self {
        Self::new().with_text(text)
    }

    /// A reply calling one tool (the id is generated).
    pub fn tool_use(name: &str, input: Value) -> Self {
        Self::new().with_tool_use(name, input)
    }

    pub fn with_text(mut self, text: &str) -> Self {
        self.content.push(ReplyBlock::Text {
            text: text.to_string(),
        });
        self
    }

    pub fn with_thinking(mut self, thinking: &str) -> Self {
        self.content.push(ReplyBlock::Thinking {
            thinking: thinking.to_string(),
            signature: None,
        });
        self
    }

    pub fn with_redacted_thinking(mut self, data: &str) -> Self {
        self.content.push(ReplyBlock::RedactedThinking {
            data: data.to_string(),
        });
        self
    }

    /// A `web_search` server tool call with `query`, then its results: `(url, title)` pairs.
    pub fn with_web_search(mut self, query: &str, results: &[(&str, &str)]) -> Self {
        self.content.push(ReplyBlock::ServerToolUse {
            id: None,
            name: "web_search".to_string(),
            input: serde_json::json!({ "query": query }),
        });
        let content = results
            .iter()
            .map(|(url, title)| {
                serde_json::json!({
                    "type": "web_search_result", "url": url, "title": title,
                    "encrypted_content": format!("enc:{url}"), "page_age": null,
                })
            })
            .collect();
        self.content.push(ReplyBlock::WebSearchToolResult {
            tool_use_id: None,
            content: Value::Array(content),
        });
        self
    }

    pub fn with_tool_use(mut self, name: &str, input: Value) -> Self {
        self.content.push(ReplyBlock::ToolUse {
            id: None,
            name: name.to_string(),
            input,
            arguments: None,
        });
        self
    }

    /// A call whose chat-completions `arguments` are `arguments` as written (not JSON, say);
    /// `/v1/messages` sends it with an empty `input`.
    pub fn with_raw_tool_call(mut self, name: &str, arguments: &str) -> Self {
        self.content.push(ReplyBlock::ToolUse {
            id: None,
            name: name.to_string(),
            input: empty_object(),
            arguments: Some(arguments.to_string()),
        });
        self
    }

    pub fn stop_reason(mut self, reason: &str) -> Self {
        self.stop_reason = Some(reason.to_string());
        self
    }

    pub fn chunk_delay_ms(mut self, ms: u64) -> Self {
        self.chunk_delay_ms = Some(ms);
        self
    }

    pub fn latency_ms(mut self, ms: u64) -> Self {
        self.latency_ms = Some(ms);
        self
    }
}

/// One content block of a reply, in the API's own shapes.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum ReplyBlock {
    Text {
        text: String,
    },
    Thinking {
        thinking: String,
        #[serde(default)]
        signature: Option<String>,
    },
    ToolUse {
        /// Generated (`toolu_mock_0001`, ...) when absent.
        #[serde(default)]
        id: Option<String>,
        name: String,
        #[serde(default = "empty_object")]
        input: Value,
        /// On `/v1/chat/completions`, the call's `arguments` are this text as it is (a small
        /// local model's JSON that does not parse); `/v1/messages` always sends `input`.
        #[serde(default)]
        arguments: Option<String>,
    },
    /// Encrypted thinking, sent whole in its `content_block_start`.
    RedactedThinking {
        data: String,
    },
    /// A server tool's call (`web_search`), run by the "server": only when the request offers
    /// that server tool (else the reply says it is missing instead).
    ServerToolUse {
        /// Generated (`srvtoolu_mock_0001`, ...) when absent.
        #[serde(default)]
        id: Option<String>,
        name: String,
        #[serde(default = "empty_object")]
        input: Value,
    },
    /// The results of the server tool call just before: `content` as the API sends it (a list
    /// of `web_search_result`s, or an error object).
    WebSearchToolResult {
        #[serde(default)]
        tool_use_id: Option<String>,
        content: Value,
    },
}

fn empty_object() -> Value {
    Value::Object(serde_json::Map::new())
}
