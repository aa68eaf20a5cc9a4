//! Scenarios: the scripted model. An ordered list of [`Rule`]s, each with conditions
//! ([`When`]), an optional use limit, and a [`Reply`] and/or a [`Fault`]; the first rule whose
//! conditions hold (and that is not used up) answers, else the default reply.
//!
//! Scenarios load from JSON (format and examples in `docs/mock-api.md`) or are built in code:
//!
//! ```
//! use tine_mock_api::{Reply, Rule, Scenario};
//! let scenario = Scenario::new()
//!     .rule(Rule::new().last_user_contains("hello").reply(Reply::text("Hi!")).times(1))
//!     .rule(Rule::new().last_user_regex(r"read (\S+)").unwrap()
//!         .reply(Reply::tool_use("Read", serde_json::json!({"file_path": "$1"}))))
//!     .default_reply(Reply::text("Done."));
//! ```

use std::collections::BTreeMap;
use std::path::Path;

use regex::Regex;
use serde::Deserialize;
use serde_json::Value;

use crate::cache::DEFAULT_MIN_CACHEABLE_TOKENS;
use crate::error::MockError;

/// The default context window, in tokens.
pub const DEFAULT_CONTEXT_WINDOW: u64 = 200_000;

/// A scripted model.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Tried in order; the first match answers.
    #[serde(default)]
    pub rules: Vec<Rule>,
    /// The answer when no rule matches.
    #[serde(default = "Reply::fallback", rename = "default")]
    pub default_reply: Reply,
    /// Prompts above this many tokens get `prompt is too long: N tokens > M maximum`.
    #[serde(default = "default_context_window")]
    pub context_window: u64,
    /// When set, `prompt + max_tokens > context_window` is refused with the real wording.
    #[serde(default)]
    pub check_output_room: bool,
    /// Minimum cacheable prefix for models not listed in `min_cacheable_tokens_by_model`.
    #[serde(default = "default_min_cacheable")]
    pub min_cacheable_tokens: u64,
    /// Model-name substring → minimum cacheable prefix (the first listed match wins).
    #[serde(default)]
    pub min_cacheable_tokens_by_model: BTreeMap<String, u64>,
    /// Delay before each response starts (time to first byte), in milliseconds.
    #[serde(default)]
    pub latency_ms: u64,
    /// Delay between streamed events, in milliseconds (a reply can override it).
    #[serde(default)]
    pub chunk_delay_ms: u64,
}

fn default_context_window() -> u64 {
    DEFAULT_CONTEXT_WINDOW
}

fn default_min_cacheable() -> u64 {
    DEFAULT_MIN_CACHEABLE_TOKENS
}

impl Default for Scenario {
    fn default() -> Self {
        Self::new()
    }
}

impl Scenario {
    /// No rules; every request gets the fallback reply.
    pub fn new() -> Self {
        Self {
            rules: Vec::new(),
            default_reply: Reply::fallback(),
            context_window: DEFAULT_CONTEXT_WINDOW,
            check_output_room: false,
            min_cacheable_tokens: DEFAULT_MIN_CACHEABLE_TOKENS,
            min_cacheable_tokens_by_model: BTreeMap::new(),
            latency_ms: 0,
            chunk_delay_ms: 0,
        }
    }

    /// Parses a scenario from JSON text; `origin` names it in errors.
    pub fn from_json(text: &str, origin: &str) -> Result<Self, MockError> {
        serde_json::from_str(text).map_err(|e| MockError::Scenario {
            origin: origin.to_string(),
            message: e.to_string(),
        })
    }

    /// Reads a JSON scenario file.
    pub fn from_file(path: &Path) -> Result<Self, MockError> {
        let text = std::fs::read_to_string(path).map_err(|source| MockError::ReadScenario {
            path: path.to_path_buf(),
            source,
        })?;
        Self::from_json(&text, &path.display().to_string())
    }

    pub fn rule(mut self, rule: Rule) -> Self {
        self.rules.push(rule);
        self
    }

    pub fn default_reply(mut self, reply: Reply) -> Self {
        self.default_reply = reply;
        self
    }

    pub fn context_window(mut self, tokens: u64) -> Self {
        self.context_window = tokens;
        self
    }

    pub fn check_output_room(mut self, on: bool) -> Self {
        self.check_output_room = on;
        self
    }

    pub fn min_cacheable_tokens(mut self, tokens: u64) -> Self {
        self.min_cacheable_tokens = tokens;
        self
    }

    pub fn min_cacheable_tokens_for(mut self, model_substring: &str, tokens: u64) -> Self {
        self.min_cacheable_tokens_by_model
            .insert(model_substring.to_string(), tokens);
        self
    }

    pub fn latency_ms(mut self, ms: u64) -> Self {
        self.latency_ms = ms;
        self
    }

    pub fn chunk_delay_ms(mut self, ms: u64) -> Self {
        self.chunk_delay_ms = ms;
        self
    }

    /// The minimum cacheable prefix for a model.
    pub fn min_cacheable_for(&self, model: &str) -> u64 {
        self.min_cacheable_tokens_by_model
            .iter()
            .find(|(k, _)| model.contains(k.as_str()))
            .map_or(self.min_cacheable_tokens, |(_, v)| *v)
    }
}

/// One scripted answer: when `when` holds, reply and/or inject a fault.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// Shown in the request log; defaults to `rules[i]`.
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub when: When,
    /// How many requests this rule answers; unlimited when absent.
    #[serde(default)]
    pub times: Option<u32>,
    #[serde(default)]
    pub reply: Option<Reply>,
    #[serde(default)]
    pub fault: Option<Fault>,
}

impl Rule {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn named(mut self, name: &str) -> Self {
        self.name = Some(name.to_string());
        self
    }

    pub fn times(mut self, n: u32) -> Self {
        self.times = Some(n);
        self
    }

    pub fn reply(mut self, reply: Reply) -> Self {
        self.reply = Some(reply);
        self
    }

    pub fn fault(mut self, fault: Fault) -> Self {
        self.fault = Some(fault);
        self
    }

    pub fn when(mut self, when: When) -> Self {
        self.when = when;
        self
    }

    pub fn last_user_contains(mut self, s: &str) -> Self {
        self.when.last_user_text = Some(TextMatch::Contains(s.to_string()));
        self
    }

    /// Regex on the last user text; its captures can be used in the reply as `$1`, `${name}`.
    pub fn last_user_regex(mut self, re: &str) -> Result<Self, regex::Error> {
        self.when.last_user_text = Some(TextMatch::Regex(Regex::new(re)?));
        Ok(self)
    }

    /// Substring anywhere in the last user message, tool results included (a marker).
    pub fn marker(mut self, s: &str) -> Self {
        self.when.last_user_any = Some(TextMatch::Contains(s.to_string()));
        self
    }

    pub fn first_user_contains(mut self, s: &str) -> Self {
        self.when.first_user_text = Some(TextMatch::Contains(s.to_string()));
        self
    }

    pub fn first_user_regex(mut self, re: &str) -> Result<Self, regex::Error> {
        self.when.first_user_text = Some(TextMatch::Regex(Regex::new(re)?));
        Ok(self)
    }

    pub fn assistant_turns(mut self, n: usize) -> Self {
        self.when.assistant_turns = Some(n);
        self
    }

    pub fn system_contains(mut self, s: &str) -> Self {
        self.when.system = Some(TextMatch::Contains(s.to_string()));
        self
    }

    pub fn system_regex(mut self, re: &str) -> Result<Self, regex::Error> {
        self.when.system = Some(TextMatch::Regex(Regex::new(re)?));
        Ok(self)
    }

    pub fn has_tool(mut self, name: &str) -> Self {
        self.when.has_tool = Some(name.to_string());
        self
    }

    pub fn tool_results(mut self, present: bool) -> Self {
        self.when.tool_results = Some(present);
        self
    }

    pub fn request(mut self, number: u64) -> Self {
        self.when.request = Some(number);
        self
    }

    pub fn stream(mut self, stream: bool) -> Self {
        self.when.stream = Some(stream);
        self
    }

    pub fn max_tokens_at_most(mut self, n: u64) -> Self {
        self.when.max_tokens_at_most = Some(n);
        self
    }
}

/// Conditions of a rule; all that are set must hold.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct When {
    /// The text blocks of the last user message.
    #[serde(default)]
    pub last_user_text: Option<TextMatch>,
    /// Any text in the last user message, tool_result contents included (for markers).
    #[serde(default)]
    pub last_user_any: Option<TextMatch>,
    /// The text blocks of the first user message (the task, in a simple session).
    #[serde(default)]
    pub first_user_text: Option<TextMatch>,
    /// The system prompt's text.
    #[serde(default)]
    pub system: Option<TextMatch>,
    /// How many assistant messages the request holds (0 on a session's first call).
    #[serde(default)]
    pub assistant_turns: Option<usize>,
    /// The request lists a tool of this name.
    #[serde(default)]
    pub has_tool: Option<String>,
    /// Whether the last user message holds `tool_result` blocks.
    #[serde(default)]
    pub tool_results: Option<bool>,
    /// The 1-based number of the request to `/v1/messages` on this server.
    #[serde(default)]
    pub request: Option<u64>,
    /// The model name.
    #[serde(default)]
    pub model: Option<TextMatch>,
    #[serde(default)]
    pub stream: Option<bool>,
    #[serde(default)]
    pub max_tokens_at_most: Option<u64>,
}

/// A text condition. In JSON: `"text"` (substring), `{"contains": ..}`, `{"equals": ..}`, or
/// `{"regex": ..}`.
#[derive(Debug, Clone, Deserialize)]
#[serde(try_from = "TextMatchRepr")]
pub enum TextMatch {
    Contains(String),
    Equals(String),
    Regex(Regex),
}

#[derive(Deserialize)]
#[serde(untagged)]
enum TextMatchRepr {
    Plain(String),
    Contains { contains: String },
    Equals { equals: String },
    Regex { regex: String },
}

impl TryFrom<TextMatchRepr> for TextMatch {
    type Error = String;
    fn try_from(r: TextMatchRepr) -> Result<Self, String> {
        Ok(match r {
            TextMatchRepr::Plain(s) | TextMatchRepr::Contains { contains: s } => {
                TextMatch::Contains(s)
            }
            TextMatchRepr::Equals { equals } => TextMatch::Equals(equals),
            TextMatchRepr::Regex { regex } => TextMatch::Regex(
                Regex::new(&regex).map_err(|e| format!("bad regex `{regex}`: {e}"))?,
            ),
        })
    }
}

/// Regex captures of a matched rule, substituted into its reply.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Captures {
    pub numbered: Vec<Option<String>>,
    pub named: BTreeMap<String, String>,
}

impl TextMatch {
    /// `None` when it does not match; else the captures (empty for non-regex matches).
    pub fn matches(&self, text: &str) -> Option<Captures> {
        match self {
            TextMatch::Contains(s) => text.contains(s.as_str()).then(Captures::default),
            TextMatch::Equals(s) => (text == s).then(Captures::default),
            TextMatch::Regex(re) => re.captures(text).map(|caps| {
                let numbered = caps
                    .iter()
                    .map(|m| m.map(|m| m.as_str().to_string()))
                    .collect();
                let named = re
                    .capture_names()
                    .flatten()
                    .filter_map(|n| {
                        caps.name(n)
                            .map(|m| (n.to_string(), m.as_str().to_string()))
                    })
                    .collect();
                Captures { numbered, named }
            }),
        }
    }
}

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

/// An injected failure. In JSON, tagged by `kind`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Fault {
    /// An HTTP error instead of a response (429, 529, 500, ...).
    Http {
        status: u16,
        /// Seconds, sent as `retry-after`.
        #[serde(default)]
        retry_after: Option<u64>,
        /// Sent as `x-should-retry`.
        #[serde(default)]
        should_retry: Option<bool>,
        /// Defaults to the real type for the status.
        #[serde(default)]
        error_type: Option<String>,
        #[serde(default)]
        message: Option<String>,
    },
    /// HTTP 200, then an SSE `error` event after this many events (non-streaming requests get
    /// the error as an HTTP status instead).
    SseError {
        #[serde(default = "default_after_events")]
        after_events: usize,
        #[serde(default = "default_sse_error_type")]
        error_type: String,
        #[serde(default)]
        message: Option<String>,
    },
    /// The connection drops after this many events: the body ends before `message_stop`.
    Drop {
        #[serde(default = "default_after_events")]
        after_events: usize,
    },
    /// After this many events, one frame whose `data:` is not valid JSON, then the body ends
    /// (non-streaming requests get a 200 whose body is not JSON).
    Corrupt {
        #[serde(default = "default_after_events")]
        after_events: usize,
    },
    /// `prompt is too long` for this request whatever its size; `tokens` defaults to the
    /// prompt's estimate, `maximum` to the context window.
    PromptTooLong {
        #[serde(default)]
        tokens: Option<u64>,
        #[serde(default)]
        maximum: Option<u64>,
    },
}

fn default_after_events() -> usize {
    3
}

fn default_sse_error_type() -> String {
    "overloaded_error".to_string()
}

impl Fault {
    /// HTTP `status` with the real error type and message.
    pub fn http(status: u16) -> Self {
        Fault::Http {
            status,
            retry_after: None,
            should_retry: None,
            error_type: None,
            message: None,
        }
    }

    /// HTTP `status` with `retry-after: seconds`.
    pub fn http_retry_after(status: u16, seconds: u64) -> Self {
        Fault::Http {
            status,
            retry_after: Some(seconds),
            should_retry: None,
            error_type: None,
            message: None,
        }
    }

    /// An `overloaded_error` SSE event after `after_events` events.
    pub fn sse_error(after_events: usize) -> Self {
        Fault::SseError {
            after_events,
            error_type: default_sse_error_type(),
            message: None,
        }
    }

    pub fn drop_after(after_events: usize) -> Self {
        Fault::Drop { after_events }
    }

    /// A frame of invalid JSON after `after_events` events.
    pub fn corrupt_after(after_events: usize) -> Self {
        Fault::Corrupt { after_events }
    }

    pub fn prompt_too_long() -> Self {
        Fault::PromptTooLong {
            tokens: None,
            maximum: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_scenario_with_every_kind_of_rule() {
        let s = Scenario::from_json(
            r#"{
              "context_window": 5000,
              "rules": [
                {"name": "greet", "when": {"last_user_text": "hello"}, "reply": "Hi!", "times": 1},
                {"when": {"last_user_text": {"regex": "read (?P<path>\\S+)"}, "has_tool": "Read"},
                 "reply": {"content": [{"type": "tool_use", "name": "Read", "input": {"file_path": "${path}"}}]}},
                {"when": {"request": 3}, "fault": {"kind": "http", "status": 529, "retry_after": 1}},
                {"when": {"tool_results": true}, "reply": {"content": [
                   {"type": "thinking", "thinking": "hmm"}, {"type": "text", "text": "done"}],
                   "stop_reason": "end_turn", "chunk_delay_ms": 5}},
                {"when": {"system": {"equals": "x"}}, "fault": {"kind": "drop", "after_events": 2}}
              ],
              "default": {"text": "fallback"}
            }"#,
            "test",
        )
        .unwrap();
        assert_eq!(s.rules.len(), 5);
        assert_eq!(s.context_window, 5000);
        assert_eq!(s.rules[0].times, Some(1));
        let caps = s.rules[1]
            .when
            .last_user_text
            .as_ref()
            .unwrap()
            .matches("please read src/main.rs now")
            .unwrap();
        assert_eq!(
            caps.named.get("path").map(String::as_str),
            Some("src/main.rs")
        );
        assert_eq!(
            s.default_reply.content,
            vec![ReplyBlock::Text {
                text: "fallback".into()
            }]
        );
    }

    #[test]
    fn unknown_fields_and_bad_regexes_are_errors() {
        let err = Scenario::from_json(r#"{"rulez": []}"#, "t").unwrap_err();
        assert!(err.to_string().contains("rulez"), "{err}");
        let err = Scenario::from_json(
            r#"{"rules": [{"when": {"last_user_text": {"regex": "("}}}]}"#,
            "t",
        )
        .unwrap_err();
        assert!(err.to_string().contains("scenario t is not valid"), "{err}");
    }

    #[test]
    fn min_cacheable_by_model() {
        let s = Scenario::new().min_cacheable_tokens_for("haiku", 2048);
        assert_eq!(s.min_cacheable_for("claude-haiku-4"), 2048);
        assert_eq!(s.min_cacheable_for("claude-sonnet-4"), 1024);
    }
}
