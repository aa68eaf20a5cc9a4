//! What a request's prompt holds, part by part, on the mock's estimate (`ceil(canonical bytes
//! / 4)` per block, as the mock bills it): the tool array tool by tool, the system prompt, the
//! messages. Every token of the tools and the system prompt is paid on every request (a tenth
//! of it once cached), so this is where waste shows.

use serde_json::Value;
use tine_e2e::tine_mock_api::tokens::{tokens_for_bytes, write_canonical_block};

fn block_tokens(block: &Value) -> u64 {
    let mut out = String::new();
    write_canonical_block(block, &mut out);
    tokens_for_bytes(out.len())
}

/// One request's prompt by part.
pub(crate) struct Breakdown {
    /// (name, tokens) of each tool the prefix holds, largest first.
    pub(crate) tools: Vec<(String, u64)>,
    /// Deferred tools (`defer_loading`): listed, but outside the cached prefix.
    pub(crate) deferred: Vec<String>,
    pub(crate) system: u64,
    /// Tokens of each message's content.
    pub(crate) messages: Vec<u64>,
}

impl Breakdown {
    pub(crate) fn of(body: &Value) -> Self {
        let mut tools = Vec::new();
        let mut deferred = Vec::new();
        for tool in body["tools"].as_array().into_iter().flatten() {
            let name = tool["name"].as_str().unwrap_or("?").to_owned();
            if tool["defer_loading"] == Value::Bool(true) {
                deferred.push(name);
            } else {
                tools.push((name, block_tokens(tool)));
            }
        }
        tools.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let system = match &body["system"] {
            Value::String(text) => block_tokens(&serde_json::json!({"type": "text", "text": text})),
            Value::Array(blocks) => blocks.iter().map(block_tokens).sum(),
            _ => 0,
        };
        let messages = body["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|m| match &m["content"] {
                Value::String(text) => {
                    block_tokens(&serde_json::json!({"type": "text", "text": text}))
                }
                Value::Array(blocks) => blocks.iter().map(block_tokens).sum(),
                _ => 0,
            })
            .collect();
        Self {
            tools,
            deferred,
            system,
            messages,
        }
    }

    pub(crate) fn tools_total(&self) -> u64 {
        self.tools.iter().map(|(_, t)| t).sum()
    }

    pub(crate) fn total(&self) -> u64 {
        self.tools_total() + self.system + self.messages.iter().sum::<u64>()
    }

    /// Prints the breakdown under `label`, indented.
    pub(crate) fn print(&self, label: &str) {
        println!(
            "   {label}: {} tokens = tools {} + system {} + messages {} ({} message{})",
            self.total(),
            self.tools_total(),
            self.system,
            self.messages.iter().sum::<u64>(),
            self.messages.len(),
            if self.messages.len() == 1 { "" } else { "s" },
        );
        let tools: Vec<String> = self
            .tools
            .iter()
            .map(|(name, tokens)| format!("{name} {tokens}"))
            .collect();
        println!("      tools: {}", tools.join(", "));
        if !self.deferred.is_empty() {
            println!(
                "      deferred (outside the prefix): {}",
                self.deferred.join(", ")
            );
        }
    }
}
