//! Usage for a stream that carried none (issue 37), counted with the server's own tokenizer
//! when it has one: llama-cpp-python's server streams no usage even when asked, but answers
//! `POST /extras/tokenize/count`; llama.cpp's `llama-server` answers `POST /tokenize`. Which
//! one works is found on the first stream without usage and remembered for the client, so a
//! server with neither is asked once. Without a tokenizer the decoder's estimate (4 bytes a
//! token) stands. Either way the usage stays marked [`crate::Usage::estimated`]: what is
//! counted is the text sent (messages, calls, tool definitions), not the prompt the server's
//! chat template renders from it.

use std::sync::Mutex;
use std::time::Duration;

use reqwest::header::HeaderMap;
use serde_json::{Value, json};

/// How long a count may take before the estimate is kept.
const TOKENIZE_TIMEOUT: Duration = Duration::from_secs(5);

/// Which tokenizer endpoint the server has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Endpoint {
    /// Not tried yet.
    Unknown,
    /// llama-cpp-python: `/extras/tokenize/count` with `{"input"}` → `{"count"}`.
    ExtrasCount,
    /// llama.cpp's server (and vLLM): `/tokenize` with `{"content"}` → `{"tokens"}` or `{"count"}`.
    Tokenize,
    /// Neither answered.
    None,
}

/// The server's tokenizer, as far as it is known.
#[derive(Debug)]
pub(super) struct ServerTokenizer {
    /// The base URL without its `/v1`: where the servers put these endpoints.
    root: String,
    headers: HeaderMap,
    endpoint: Mutex<Endpoint>,
}

impl ServerTokenizer {
    /// The tokenizer of the server at `base_url` (with its `/v1`), asked with `headers`.
    pub(super) fn new(base_url: &str, headers: HeaderMap) -> Self {
        let base = base_url.trim_end_matches('/');
        let root = base.strip_suffix("/v1").unwrap_or(base).to_owned();
        Self {
            root,
            headers,
            endpoint: Mutex::new(Endpoint::Unknown),
        }
    }

    fn endpoint(&self) -> Endpoint {
        *self
            .endpoint
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn remember(&self, endpoint: Endpoint) {
        *self
            .endpoint
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = endpoint;
    }

    /// The tokens of `text` by the server's tokenizer for `model`; `None` when it has none.
    pub(super) async fn count(
        &self,
        http: &reqwest::Client,
        model: &str,
        text: &str,
    ) -> Option<u64> {
        let tried = match self.endpoint() {
            Endpoint::None => return None,
            Endpoint::Unknown => vec![Endpoint::ExtrasCount, Endpoint::Tokenize],
            known => vec![known],
        };
        for endpoint in tried {
            if let Some(count) = self.ask(http, endpoint, model, text).await {
                self.remember(endpoint);
                return Some(count);
            }
        }
        if self.endpoint() == Endpoint::Unknown {
            tracing::debug!(root = %self.root, "the server has no tokenizer endpoint; usage is estimated at 4 bytes a token");
            self.remember(Endpoint::None);
        }
        None
    }

    async fn ask(
        &self,
        http: &reqwest::Client,
        endpoint: Endpoint,
        model: &str,
        text: &str,
    ) -> Option<u64> {
        let (path, body) = match endpoint {
            Endpoint::ExtrasCount => (
                "/extras/tokenize/count",
                json!({"model": model, "input": text}),
            ),
            Endpoint::Tokenize => (
                "/tokenize",
                json!({"model": model, "content": text, "prompt": text}),
            ),
            Endpoint::Unknown | Endpoint::None => return None,
        };
        let request = http
            .post(format!("{}{path}", self.root))
            .headers(self.headers.clone())
            .json(&body)
            .timeout(TOKENIZE_TIMEOUT)
            .send();
        let response = request.await.ok()?;
        if !response.status().is_success() {
            return None;
        }
        let value: Value = response.json().await.ok()?;
        value["count"]
            .as_u64()
            .or_else(|| value["tokens"].as_array().map(|t| t.len() as u64))
    }
}

/// The text a chat request sends, for counting: each message's text, calls and results, then
/// the tool definitions.
pub(super) fn request_text(body: &[u8]) -> String {
    let Ok(value) = serde_json::from_slice::<Value>(body) else {
        return String::new();
    };
    let mut out = String::new();
    for message in value["messages"].as_array().into_iter().flatten() {
        push_content(&mut out, &message["content"]);
        for call in message["tool_calls"].as_array().into_iter().flatten() {
            push(
                &mut out,
                call["function"]["name"].as_str().unwrap_or_default(),
            );
            push(
                &mut out,
                call["function"]["arguments"].as_str().unwrap_or_default(),
            );
        }
    }
    for tool in value["tools"].as_array().into_iter().flatten() {
        push(&mut out, &tool.to_string());
    }
    out
}

fn push_content(out: &mut String, content: &Value) {
    match content {
        Value::String(text) => push(out, text),
        Value::Array(parts) => {
            for part in parts {
                if let Some(text) = part["text"].as_str() {
                    push(out, text);
                }
            }
        }
        _ => {}
    }
}

fn push(out: &mut String, text: &str) {
    if !text.is_empty() {
        out.push_str(text);
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_counted_is_what_the_request_sends() {
        let body = json!({
            "model": "m",
            "messages": [
                {"role": "system", "content": "You are tine."},
                {"role": "user", "content": [{"type": "text", "text": "Read a."}]},
                {"role": "assistant", "content": null, "tool_calls": [{"id": "c", "type": "function", "function": {"name": "Read", "arguments": "{\"file_path\":\"a\"}"}}]},
                {"role": "tool", "tool_call_id": "c", "content": "hello"}
            ],
            "tools": [{"type": "function", "function": {"name": "Read"}}]
        });
        let text = request_text(body.to_string().as_bytes());
        for part in [
            "You are tine.",
            "Read a.",
            "{\"file_path\":\"a\"}",
            "hello",
            "\"name\":\"Read\"",
        ] {
            assert!(text.contains(part), "{part}: {text}");
        }
    }

    #[test]
    fn the_root_drops_the_v1() {
        let t = ServerTokenizer::new("http://127.0.0.1:8080/v1/", HeaderMap::new());
        assert_eq!(t.root, "http://127.0.0.1:8080");
    }
}
