//! The response shapes of chat completions: the streamed chunks (`data: {...}` lines, then
//! `data: [DONE]`), the whole `chat.completion` object, and the error body, in the two dialects
//! the simulator speaks.

use bytes::Bytes;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::cache::Usage;
use crate::error::ApiError;
use crate::json::str_field;
use crate::script::Completion;
use crate::sse::{JSON_CHUNK_BYTES, TEXT_CHUNK_BYTES, pieces};

/// Which server's habits the chunks follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChatDialect {
    /// OpenAI (and vLLM): calls at indexes 0, 1, ...; `finish_reason: "tool_calls"`; usage in a
    /// chunk of its own with `prompt_tokens_details.cached_tokens`; thinking as
    /// `reasoning_content` (vLLM's field).
    #[default]
    OpenAi,
    /// Ollama: every call at index 0 with its own id, arguments still in pieces;
    /// `finish_reason: "stop"` even after tool calls; usage only in the final chunk (the one with
    /// the finish reason) and no `cached_tokens`; thinking as `reasoning`.
    Ollama,
    /// llama-cpp-python's server (0.3.x): OpenAI's chunks, but no usage in the stream even when
    /// `stream_options.include_usage` asks for it (its answers without `stream` carry usage),
    /// and no `cached_tokens`.
    LlamaCpp,
}

impl std::str::FromStr for ChatDialect {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        match text {
            "openai" => Ok(Self::OpenAi),
            "ollama" => Ok(Self::Ollama),
            "llama-cpp" | "llama_cpp" => Ok(Self::LlamaCpp),
            other => Err(format!(
                "unknown chat dialect `{other}`: use openai, ollama or llama-cpp"
            )),
        }
    }
}

/// Where a response's chunks come from.
pub struct ChunkSource<'a> {
    pub id: &'a str,
    pub model: &'a str,
    pub created: u64,
    pub completion: &'a Completion,
    pub usage: &'a Usage,
    /// `stream_options.include_usage` was asked for.
    pub include_usage: bool,
    pub dialect: ChatDialect,
}

/// One `data:` line.
pub fn frame(data: &Value) -> Bytes {
    Bytes::from(format!("data: {data}\n\n"))
}

fn finish_reason(stop_reason: &str, called_tools: bool, dialect: ChatDialect) -> &'static str {
    match stop_reason {
        "max_tokens" => "length",
        "refusal" => "content_filter",
        "tool_use" if dialect != ChatDialect::Ollama => "tool_calls",
        _ if called_tools && dialect != ChatDialect::Ollama => "tool_calls",
        _ => "stop",
    }
}

/// `usage` as chat completions reports it.
pub fn usage_json(usage: &Usage, dialect: ChatDialect) -> Value {
    let prompt = usage.prompt_tokens();
    let mut out = json!({
        "prompt_tokens": prompt,
        "completion_tokens": usage.output_tokens,
        "total_tokens": prompt + usage.output_tokens,
    });
    if dialect == ChatDialect::OpenAi {
        out["prompt_tokens_details"] = json!({"cached_tokens": usage.cache_read_input_tokens});
    }
    out
}

/// A call's `arguments`: the reply's raw text when it gave one, else its input as JSON.
fn arguments_text(completion: &Completion, block: &Value) -> String {
    let id = str_field(block, "id");
    match completion.raw_arguments.get(id) {
        Some(raw) => raw.clone(),
        None => block.get("input").map(Value::to_string).unwrap_or_default(),
    }
}

/// Every chunk of a streamed response, ending with `data: [DONE]`.
pub fn chunks(source: &ChunkSource<'_>) -> Vec<Bytes> {
    let chunk = |delta: Value, finish: Option<&str>| {
        json!({
            "id": source.id,
            "object": "chat.completion.chunk",
            "created": source.created,
            "model": source.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        })
    };
    let mut out = vec![frame(&chunk(
        json!({"role": "assistant", "content": ""}),
        None,
    ))];
    let mut call_index = 0;
    for block in &source.completion.content {
        match block.get("type").and_then(Value::as_str) {
            Some("tool_use") => {
                let arguments = arguments_text(source.completion, block);
                let parts = pieces(&arguments, JSON_CHUNK_BYTES);
                let index = match source.dialect {
                    ChatDialect::OpenAi | ChatDialect::LlamaCpp => call_index,
                    ChatDialect::Ollama => 0,
                };
                // The first delta names the call (Ollama's carries the first piece too).
                let first = match source.dialect {
                    ChatDialect::OpenAi | ChatDialect::LlamaCpp => "",
                    ChatDialect::Ollama => parts.first().copied().unwrap_or_default(),
                };
                out.push(frame(&chunk(
                    json!({"tool_calls": [{"index": index, "id": block["id"], "type": "function",
                        "function": {"name": block["name"], "arguments": first}}]}),
                    None,
                )));
                let rest = match source.dialect {
                    ChatDialect::OpenAi | ChatDialect::LlamaCpp => &parts[..],
                    ChatDialect::Ollama => parts.get(1..).unwrap_or_default(),
                };
                for part in rest {
                    out.push(frame(&chunk(
                        json!({"tool_calls": [{"index": index, "function": {"arguments": part}}]}),
                        None,
                    )));
                }
                call_index += 1;
            }
            Some("thinking") => {
                let field = match source.dialect {
                    ChatDialect::OpenAi | ChatDialect::LlamaCpp => "reasoning_content",
                    ChatDialect::Ollama => "reasoning",
                };
                let text = str_field(block, "thinking");
                for part in pieces(text, TEXT_CHUNK_BYTES) {
                    out.push(frame(&chunk(json!({ field: part }), None)));
                }
            }
            _ => {
                let text = str_field(block, "text");
                for part in pieces(text, TEXT_CHUNK_BYTES) {
                    out.push(frame(&chunk(json!({"content": part}), None)));
                }
            }
        }
    }
    let reason = finish_reason(
        &source.completion.stop_reason,
        call_index > 0,
        source.dialect,
    );
    let mut last = chunk(json!({}), Some(reason));
    match source.dialect {
        ChatDialect::OpenAi => {
            out.push(frame(&last));
            if source.include_usage {
                out.push(frame(&json!({
                    "id": source.id,
                    "object": "chat.completion.chunk",
                    "created": source.created,
                    "model": source.model,
                    "choices": [],
                    "usage": usage_json(source.usage, source.dialect),
                })));
            }
        }
        ChatDialect::Ollama => {
            if source.include_usage {
                last["usage"] = usage_json(source.usage, source.dialect);
            }
            out.push(frame(&last));
        }
        // Asked or not, no usage.
        ChatDialect::LlamaCpp => out.push(frame(&last)),
    }
    out.push(Bytes::from_static(b"data: [DONE]\n\n"));
    out
}

/// The whole `chat.completion` object of a request without `stream`.
pub fn completion_json(source: &ChunkSource<'_>) -> Value {
    let mut text = String::new();
    let mut calls = Vec::new();
    for block in &source.completion.content {
        match block.get("type").and_then(Value::as_str) {
            Some("tool_use") => calls.push(json!({
                "id": block["id"],
                "type": "function",
                "function": {
                    "name": block["name"],
                    "arguments": arguments_text(source.completion, block),
                },
            })),
            Some("thinking") => {}
            _ => text.push_str(str_field(block, "text")),
        }
    }
    let reason = finish_reason(
        &source.completion.stop_reason,
        !calls.is_empty(),
        source.dialect,
    );
    let mut message = json!({"role": "assistant", "content": if text.is_empty() && !calls.is_empty() { Value::Null } else { json!(text) }});
    if !calls.is_empty() {
        message["tool_calls"] = Value::Array(calls);
    }
    json!({
        "id": source.id,
        "object": "chat.completion",
        "created": source.created,
        "model": source.model,
        "choices": [{"index": 0, "message": message, "finish_reason": reason}],
        "usage": usage_json(source.usage, source.dialect),
    })
}

/// OpenAI's `type` and `code` for one of our error types.
fn openai_type(error: &ApiError) -> (&'static str, Value) {
    if let Some(code) = &error.code {
        return ("invalid_request_error", json!(code));
    }
    match error.error_type.as_str() {
        "authentication_error" => ("invalid_request_error", json!("invalid_api_key")),
        "rate_limit_error" => ("requests", json!("rate_limit_exceeded")),
        "not_found_error" => ("invalid_request_error", json!("model_not_found")),
        "invalid_request_error" | "request_too_large" => ("invalid_request_error", Value::Null),
        "permission_error" => (
            "invalid_request_error",
            json!("unsupported_country_region_territory"),
        ),
        "billing_error" => ("insufficient_quota", json!("insufficient_quota")),
        _ => ("server_error", Value::Null),
    }
}

/// `{"error": {"message", "type", "param", "code"}}`.
pub fn error_body(error: &ApiError) -> Value {
    let (kind, code) = openai_type(error);
    json!({"error": {"message": error.message, "type": kind, "param": null, "code": code}})
}

/// The error chunk a server sends after a 200, then ends the stream.
pub fn error_chunk(error: &ApiError) -> Bytes {
    frame(&error_body(error))
}

/// A chunk cut inside its JSON.
pub fn corrupt_chunk() -> Bytes {
    Bytes::from_static(b"data: {\"choices\": [{\"index\": 0, \"delta\": {\"content\": \"te\n\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn completion() -> Completion {
        Completion {
            content: vec![
                json!({"type": "text", "text": "Reading the two files you asked about."}),
                json!({"type": "tool_use", "id": "call_1", "name": "Read", "input": {"file_path": "/a/long/path/to/the/first/file.txt"}}),
                json!({"type": "tool_use", "id": "call_2", "name": "Read", "input": {"file_path": "b"}}),
            ],
            stop_reason: "tool_use".into(),
            output_tokens: 30,
            raw_arguments: Default::default(),
        }
    }

    fn datas(chunks: &[Bytes]) -> Vec<Value> {
        chunks
            .iter()
            .map(|c| {
                std::str::from_utf8(c)
                    .unwrap()
                    .trim()
                    .trim_start_matches("data: ")
            })
            .filter(|d| *d != "[DONE]")
            .map(|d| serde_json::from_str(d).unwrap())
            .collect()
    }

    fn source<'a>(
        completion: &'a Completion,
        usage: &'a Usage,
        dialect: ChatDialect,
    ) -> ChunkSource<'a> {
        ChunkSource {
            id: "chatcmpl-1",
            model: "m",
            created: 0,
            completion,
            usage,
            include_usage: true,
            dialect,
        }
    }

    #[test]
    fn openai_chunks_index_calls_and_end_with_a_usage_chunk() {
        let completion = completion();
        let usage = Usage {
            input_tokens: 10,
            cache_read_input_tokens: 90,
            output_tokens: 30,
            ..Usage::default()
        };
        let chunks = chunks(&source(&completion, &usage, ChatDialect::OpenAi));
        assert_eq!(
            chunks.last().unwrap(),
            &Bytes::from_static(b"data: [DONE]\n\n")
        );
        let datas = datas(&chunks);
        let indexes: Vec<u64> = datas
            .iter()
            .filter_map(|d| d.pointer("/choices/0/delta/tool_calls/0/index"))
            .filter_map(Value::as_u64)
            .collect();
        assert!(indexes.contains(&0) && indexes.contains(&1), "{indexes:?}");
        let usage_chunk = datas.last().unwrap();
        assert_eq!(usage_chunk["choices"], json!([]));
        assert_eq!(usage_chunk["usage"]["prompt_tokens"], 100);
        assert_eq!(
            usage_chunk["usage"]["prompt_tokens_details"]["cached_tokens"],
            90
        );
        assert_eq!(
            datas[datas.len() - 2]["choices"][0]["finish_reason"],
            "tool_calls"
        );
    }

    #[test]
    fn ollama_chunks_put_every_call_at_index_zero_and_usage_in_the_last_chunk() {
        let completion = completion();
        let usage = Usage::default();
        let datas = datas(&chunks(&source(&completion, &usage, ChatDialect::Ollama)));
        let calls: Vec<&Value> = datas
            .iter()
            .filter_map(|d| d.pointer("/choices/0/delta/tool_calls/0"))
            .collect();
        assert!(calls.iter().all(|c| c["index"] == 0));
        let ids: Vec<&str> = calls.iter().filter_map(|c| c["id"].as_str()).collect();
        assert_eq!(ids, ["call_1", "call_2"]);
        // The long path's arguments come in more than one piece.
        assert!(calls.len() > 2, "{calls:?}");
        let last = datas.last().unwrap();
        assert_eq!(last["choices"][0]["finish_reason"], "stop");
        assert!(last["usage"].is_object());
        assert!(last["usage"].get("prompt_tokens_details").is_none());
    }

    #[test]
    fn llama_cpp_streams_no_usage_even_when_asked_but_answers_it_without_stream() {
        let mut completion = completion();
        completion
            .raw_arguments
            .insert("call_2".into(), "{\"file_path\": b".into());
        let usage = Usage {
            input_tokens: 100,
            output_tokens: 30,
            ..Usage::default()
        };
        let source = source(&completion, &usage, ChatDialect::LlamaCpp);
        assert!(source.include_usage);
        let datas = datas(&chunks(&source));
        assert!(datas.iter().all(|d| d.get("usage").is_none()), "{datas:?}");
        assert_eq!(
            datas.last().unwrap()["choices"][0]["finish_reason"],
            "tool_calls"
        );
        // A raw call's arguments go out as written.
        let arguments: String = datas
            .iter()
            .filter_map(|d| d.pointer("/choices/0/delta/tool_calls/0"))
            .filter(|c| c["index"] == 1)
            .filter_map(|c| c["function"]["arguments"].as_str())
            .collect();
        assert_eq!(arguments, "{\"file_path\": b");
        let whole = completion_json(&source);
        assert_eq!(whole["usage"]["prompt_tokens"], 100);
        assert_eq!(
            whole["choices"][0]["message"]["tool_calls"][1]["function"]["arguments"],
            "{\"file_path\": b"
        );
    }
}
