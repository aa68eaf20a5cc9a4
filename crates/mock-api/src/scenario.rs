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

use crate::cache::DEFAULT_MIN_CACHEABLE_TOKENS;
use crate::error::MockError;
use crate::fault::Fault;
use crate::reply::Reply;

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

#[cfg(test)]
#[path = "scenario_tests.rs"]
mod tests;
