//! Running a scenario: choosing the rule that answers a request, and rendering its reply into
//! content blocks (ids generated, captures substituted, truncated at `max_tokens`).

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Value, json};

use crate::fault::Fault;
use crate::prompt::{RequestTexts, has_tool};
use crate::reply::{Reply, ReplyBlock};
use crate::scenario::{Captures, Scenario, TextMatch};
use crate::tokens::{canonical, tokens_for_bytes};

/// What a request is matched against.
pub struct MatchInput<'a> {
    pub body: &'a Value,
    pub texts: &'a RequestTexts,
    pub request: u64,
    pub stream: bool,
    pub max_tokens: u64,
}

/// The rule chosen for a request.
#[derive(Debug, Clone)]
pub struct Selection {
    /// The rule's name, `rules[i]`, or `default`.
    pub label: String,
    pub reply: Reply,
    pub fault: Option<Fault>,
    pub captures: Captures,
}

/// A scenario with its rules' use counts.
#[derive(Debug)]
pub struct Script {
    pub scenario: Scenario,
    uses: Mutex<Vec<u32>>,
    next_tool_id: AtomicU64,
}

impl Script {
    pub fn new(scenario: Scenario) -> Self {
        let n = scenario.rules.len();
        Self {
            scenario,
            uses: Mutex::new(vec![0; n]),
            next_tool_id: AtomicU64::new(1),
        }
    }

    /// The first rule that matches and is not used up (and counts the use), else the default.
    pub fn select(&self, input: &MatchInput<'_>) -> Selection {
        let mut uses = self.uses.lock().unwrap_or_else(|e| e.into_inner());
        for (i, rule) in self.scenario.rules.iter().enumerate() {
            if rule
                .times
                .is_some_and(|t| uses.get(i).copied().unwrap_or(0) >= t)
            {
                continue;
            }
            let Some(captures) = matches(&rule.when, input) else {
                continue;
            };
            if let Some(u) = uses.get_mut(i) {
                *u += 1;
            }
            return Selection {
                label: rule.name.clone().unwrap_or_else(|| format!("rules[{i}]")),
                reply: rule
                    .reply
                    .clone()
                    .unwrap_or_else(|| self.scenario.default_reply.clone()),
                fault: rule.fault.clone(),
                captures,
            };
        }
        Selection {
            label: "default".to_string(),
            reply: self.scenario.default_reply.clone(),
            fault: None,
            captures: Captures::default(),
        }
    }

    /// The next generated tool-use id: `toolu_mock_0001`, ...
    pub fn next_tool_id(&self) -> String {
        let n = self.next_tool_id.fetch_add(1, Ordering::Relaxed);
        format!("toolu_mock_{n:04}")
    }
}

/// `Some(captures)` when every set condition holds.
fn matches(when: &crate::scenario::When, input: &MatchInput<'_>) -> Option<Captures> {
    let mut captures: Option<Captures> = None;
    let mut text_cond = |cond: &Option<TextMatch>, text: &str| -> bool {
        match cond {
            None => true,
            Some(m) => match m.matches(text) {
                None => false,
                Some(c) => {
                    // Numbered groups come from the first regex; named ones from all.
                    if matches!(m, TextMatch::Regex(_)) {
                        match &mut captures {
                            None => captures = Some(c),
                            Some(have) => have.named.extend(c.named),
                        }
                    }
                    true
                }
            },
        }
    };
    let model = input
        .body
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let ok = text_cond(&when.last_user_text, &input.texts.last_user_text)
        && text_cond(&when.last_user_any, &input.texts.last_user_all)
        && text_cond(&when.first_user_text, &input.texts.first_user_text)
        && text_cond(&when.system, &input.texts.system)
        && text_cond(&when.model, model)
        && when
            .has_tool
            .as_deref()
            .is_none_or(|name| has_tool(input.body, name))
        && when
            .tool_results
            .is_none_or(|want| want == input.texts.last_user_has_tool_results)
        && when.request.is_none_or(|n| n == input.request)
        && when
            .assistant_turns
            .is_none_or(|n| n == input.texts.assistant_turns)
        && when.stream.is_none_or(|s| s == input.stream)
        && when
            .max_tokens_at_most
            .is_none_or(|m| input.max_tokens <= m);
    ok.then(|| captures.unwrap_or_default())
}

/// A rendered reply: API content blocks, stop reason and output tokens.
#[derive(Debug, Clone, PartialEq)]
pub struct Completion {
    pub content: Vec<Value>,
    pub stop_reason: String,
    pub output_tokens: u64,
    /// Tool calls whose chat-completions `arguments` are sent as this text, by call id.
    pub raw_arguments: std::collections::BTreeMap<String, String>,
}

/// Substitutes `$1`, `${1}`, `${name}` and `$$` with captures.
pub fn substitute(template: &str, caps: &Captures) -> String {
    if caps.numbered.is_empty() && caps.named.is_empty() {
        return template.to_string();
    }
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(pos) = rest.find('$') {
        out.push_str(&rest[..pos]);
        let after = &rest[pos + 1..];
        if let Some(stripped) = after.strip_prefix('$') {
            out.push('$');
            rest = stripped;
        } else if let Some(inner) = after.strip_prefix('{') {
            match inner.find('}') {
                Some(end) => {
                    out.push_str(&lookup(&inner[..end], caps));
                    rest = &inner[end + 1..];
                }
                None => {
                    out.push('$');
                    rest = after;
                }
            }
        } else {
            let digits: String = after.chars().take_while(char::is_ascii_digit).collect();
            if digits.is_empty() {
                out.push('$');
                rest = after;
            } else {
                out.push_str(&lookup(&digits, caps));
                rest = &after[digits.len()..];
            }
        }
    }
    out.push_str(rest);
    out
}

fn lookup(name: &str, caps: &Captures) -> String {
    match name.parse::<usize>() {
        Ok(i) => caps.numbered.get(i).cloned().flatten().unwrap_or_default(),
        Err(_) => caps.named.get(name).cloned().unwrap_or_default(),
    }
}

fn substitute_value(value: &Value, caps: &Captures) -> Value {
    match value {
        Value::String(s) => Value::String(substitute(s, caps)),
        Value::Array(items) => {
            Value::Array(items.iter().map(|v| substitute_value(v, caps)).collect())
        }
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), substitute_value(v, caps)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Cuts `s` to at most `max_bytes` at a char boundary.
fn truncate_to(s: &str, max_bytes: usize) -> String {
    let mut end = max_bytes.min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_string()
}

/// Renders a reply for a request with this `max_tokens`.
pub fn render(reply: &Reply, caps: &Captures, max_tokens: u64, script: &Script) -> Completion {
    let mut content = Vec::new();
    let mut used = 0u64;
    let mut truncated = false;
    let mut has_tool_use = false;
    let mut last_server_use: Option<String> = None;
    let mut raw_arguments = std::collections::BTreeMap::new();
    for block in &reply.content {
        let remaining = max_tokens.saturating_sub(used);
        match block {
            ReplyBlock::Text { text } | ReplyBlock::Thinking { thinking: text, .. } => {
                let text = substitute(text, caps);
                let cost = tokens_for_bytes(text.len());
                let (text, cost) = if cost > remaining {
                    truncated = true;
                    let cut = truncate_to(&text, (remaining * 4) as usize);
                    let cost = tokens_for_bytes(cut.len());
                    (cut, cost)
                } else {
                    (text, cost)
                };
                used += cost;
                content.push(match block {
                    ReplyBlock::Thinking { signature, .. } => json!({
                        "type": "thinking",
                        "thinking": text,
                        "signature": signature.clone().unwrap_or_else(|| crate::validate::thinking_signature(&text)),
                    }),
                    _ => json!({"type": "text", "text": text}),
                });
            }
            ReplyBlock::RedactedThinking { data } => {
                used += tokens_for_bytes(data.len());
                content.push(json!({"type": "redacted_thinking", "data": data}));
            }
            ReplyBlock::ServerToolUse { id, name, input } => {
                let input = substitute_value(input, caps);
                used += tokens_for_bytes(name.len() + canonical(&input).len());
                let id = id
                    .clone()
                    .unwrap_or_else(|| script.next_tool_id().replacen("toolu_", "srvtoolu_", 1));
                last_server_use = Some(id.clone());
                content.push(json!({
                    "type": "server_tool_use", "id": id, "name": name, "input": input,
                }));
            }
            ReplyBlock::WebSearchToolResult {
                tool_use_id,
                content: results,
            } => {
                let id = tool_use_id.clone().or_else(|| last_server_use.clone());
                content.push(json!({
                    "type": "web_search_tool_result",
                    "tool_use_id": id.unwrap_or_default(),
                    "content": substitute_value(results, caps),
                }));
            }
            ReplyBlock::ToolUse {
                id,
                name,
                input,
                arguments,
            } => {
                let input = substitute_value(input, caps);
                let arguments = arguments.as_deref().map(|a| substitute(a, caps));
                let sent = arguments
                    .as_ref()
                    .map_or_else(|| canonical(&input).len(), String::len);
                let cost = tokens_for_bytes(name.len() + sent);
                if cost > remaining {
                    // A tool call cut short is unusable; the real API would stop mid-input.
                    truncated = true;
                } else {
                    used += cost;
                    has_tool_use = true;
                    let id = id.clone().unwrap_or_else(|| script.next_tool_id());
                    if let Some(arguments) = arguments {
                        raw_arguments.insert(id.clone(), arguments);
                    }
                    content.push(json!({
                        "type": "tool_use",
                        "id": id,
                        "name": name,
                        "input": input,
                    }));
                }
            }
        }
        if truncated {
            break;
        }
    }
    let stop_reason = if truncated {
        "max_tokens".to_string()
    } else if let Some(reason) = &reply.stop_reason {
        reason.clone()
    } else if has_tool_use {
        "tool_use".to_string()
    } else {
        "end_turn".to_string()
    };
    Completion {
        content,
        stop_reason,
        output_tokens: used.max(1),
        raw_arguments,
    }
}

/// A reply's server tool calls run only when the request offers that server tool (a `tools`
/// entry with a `type` and no `input_schema`); else the reply is replaced by a text saying so,
/// which a test sees instead of results the request could not have had.
pub fn check_server_tools(completion: &mut Completion, body: &Value) {
    let offered: Vec<&str> = body
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|t| t.get("input_schema").is_none() && t.get("type").is_some())
        .filter_map(|t| t.get("name").and_then(Value::as_str))
        .collect();
    let missing = completion.content.iter().find_map(|b| {
        let name = b.get("name").and_then(Value::as_str)?;
        (b.get("type").and_then(Value::as_str) == Some("server_tool_use")
            && !offered.contains(&name))
        .then(|| name.to_string())
    });
    if let Some(name) = missing {
        completion.content = vec![json!({
            "type": "text",
            "text": format!("(mock) the server tool {name} is not offered in this request"),
        })];
        completion.stop_reason = "end_turn".to_string();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Rule;

    fn input<'a>(body: &'a Value, texts: &'a RequestTexts, request: u64) -> MatchInput<'a> {
        MatchInput {
            body,
            texts,
            request,
            stream: false,
            max_tokens: 1000,
        }
    }

    #[test]
    fn substitution() {
        let caps = Captures {
            numbered: vec![Some("all".into()), Some("one".into())],
            named: [("path".to_string(), "a.rs".to_string())]
                .into_iter()
                .collect(),
        };
        assert_eq!(
            substitute("$1 ${1} ${path} $$ $x $", &caps),
            "one one a.rs $ $x $"
        );
        assert_eq!(substitute("cost $5", &Captures::default()), "cost $5");
    }

    #[test]
    fn rules_are_tried_in_order_and_used_up() {
        let script = Script::new(
            Scenario::new()
                .rule(
                    Rule::new()
                        .last_user_contains("hi")
                        .reply(Reply::text("first"))
                        .times(1),
                )
                .rule(
                    Rule::new()
                        .last_user_contains("hi")
                        .reply(Reply::text("second")),
                )
                .rule(Rule::new().request(7).reply(Reply::text("seventh"))),
        );
        let body = json!({"model": "m", "messages": [{"role": "user", "content": "hi there"}]});
        let texts = RequestTexts::from_body(&body);
        assert_eq!(script.select(&input(&body, &texts, 1)).label, "rules[0]");
        assert_eq!(script.select(&input(&body, &texts, 2)).label, "rules[1]");
        let other = json!({"model": "m", "messages": [{"role": "user", "content": "yo"}]});
        let texts = RequestTexts::from_body(&other);
        assert_eq!(script.select(&input(&other, &texts, 7)).label, "rules[2]");
        assert_eq!(script.select(&input(&other, &texts, 8)).label, "default");
    }

    #[test]
    fn tool_results_and_tools_and_markers() {
        let script = Script::new(
            Scenario::new()
                .rule(
                    Rule::new()
                        .tool_results(true)
                        .has_tool("Read")
                        .named("after-read"),
                )
                .rule(Rule::new().marker("<fork-boilerplate>").named("fork")),
        );
        let body = json!({"model": "m", "tools": [{"name": "Read", "input_schema": {}}], "messages": [
            {"role": "user", "content": "x"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Read", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "<fork-boilerplate>"}]}]});
        let texts = RequestTexts::from_body(&body);
        assert_eq!(script.select(&input(&body, &texts, 1)).label, "after-read");
        let body2 = json!({"model": "m", "messages": [{"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "a <fork-boilerplate> b"}]}]}]});
        let texts = RequestTexts::from_body(&body2);
        assert_eq!(script.select(&input(&body2, &texts, 2)).label, "fork");
    }

    #[test]
    fn render_generates_ids_and_truncates() {
        let script = Script::new(Scenario::new());
        let reply = Reply::new()
            .with_thinking("think")
            .with_text("hello")
            .with_tool_use("Read", json!({"file_path": "$1"}));
        let caps = Captures {
            numbered: vec![None, Some("x.rs".into())],
            named: Default::default(),
        };
        let c = render(&reply, &caps, 1000, &script);
        assert_eq!(c.stop_reason, "tool_use");
        assert_eq!(c.content[2]["id"], "toolu_mock_0001");
        assert_eq!(c.content[2]["input"]["file_path"], "x.rs");
        assert_eq!(
            c.content[0]["signature"],
            crate::validate::thinking_signature("think")
        );

        let searched = Reply::new()
            .with_redacted_thinking("opaque")
            .with_web_search("rust sse", &[("https://a.example", "A")]);
        let mut c = render(&searched, &Captures::default(), 1000, &script);
        assert_eq!(
            c.content[0],
            json!({"type": "redacted_thinking", "data": "opaque"})
        );
        assert_eq!(c.content[1]["id"], "srvtoolu_mock_0002");
        assert_eq!(c.content[2]["tool_use_id"], "srvtoolu_mock_0002");
        assert_eq!(c.content[2]["content"][0]["url"], "https://a.example");
        let offered = json!({"tools": [{"type": "web_search_20250305", "name": "web_search"}]});
        check_server_tools(&mut c, &offered);
        assert_eq!(c.content.len(), 3);
        check_server_tools(&mut c, &json!({"tools": []}));
        assert_eq!(
            c.content[0]["text"],
            "(mock) the server tool web_search is not offered in this request"
        );

        let long = Reply::text(&"word ".repeat(100));
        let c = render(&long, &Captures::default(), 10, &script);
        assert_eq!(c.stop_reason, "max_tokens");
        assert_eq!(c.output_tokens, 10);
        assert_eq!(c.content[0]["text"].as_str().map(str::len), Some(40));

        let forced = Reply::text("short").stop_reason("max_tokens");
        assert_eq!(
            render(&forced, &Captures::default(), 1000, &script).stop_reason,
            "max_tokens"
        );
    }
}
