use std::time::Duration;

use serde_json::json;

use super::*;
use crate::retry::RetryPolicy;

fn status(code: u16, body: &serde_json::Value) -> ApiError {
    from_response(code, body.to_string().as_bytes(), None, None, None)
}

#[test]
fn statuses_retry_as_on_anthropic_and_the_advice_names_openai_variables() {
    let policy = RetryPolicy::default();
    let overloaded = status(
        503,
        &json!({"error": {"message": "busy", "type": "server_error"}}),
    );
    assert!(policy.should_retry(&overloaded, 1));
    let limited = from_response(
        429,
        br#"{"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}}"#,
        Some("req_1".into()),
        Some(Duration::from_secs(3)),
        None,
    );
    assert!(policy.should_retry(&limited, 1));
    assert_eq!(policy.delay(&limited, 1), Duration::from_secs(3));
    assert_eq!(limited.request_id(), Some("req_1"));
    assert_eq!(limited.kind(), Some(&ApiErrorKind::RateLimit));

    let unauthorized = status(
        401,
        &json!({"error": {"message": "Incorrect API key provided", "type": "invalid_request_error", "code": "invalid_api_key"}}),
    );
    assert!(!policy.should_retry(&unauthorized, 1));
    let text = unauthorized.to_string();
    assert!(text.contains("OPENAI_API_KEY"), "{text}");
    assert!(!text.contains("ANTHROPIC"), "{text}");
    assert!(
        text.starts_with("HTTP 401 authentication_error: Incorrect API key"),
        "{text}"
    );
}

#[test]
fn ollama_and_plain_bodies_keep_their_message() {
    let missing = status(
        404,
        &json!({"error": "model \"qwen9\" not found, try pulling it first"}),
    );
    let text = missing.to_string();
    assert!(text.contains("model \"qwen9\" not found"), "{text}");
    assert!(text.contains("OPENAI_BASE_URL"), "{text}");
    let plain = from_response(502, b"Bad Gateway", None, None, None);
    assert!(plain.to_string().contains("Bad Gateway"));
    assert!(RetryPolicy::default().should_retry(&plain, 1));
    let detail = status(422, &json!({"detail": [{"msg": "field required"}]}));
    assert!(detail.to_string().contains("field required"), "{detail}");
}

#[test]
fn insufficient_quota_is_billing_and_never_retried() {
    let quota = status(
        429,
        &json!({"error": {"message": "You exceeded your current quota", "type": "insufficient_quota", "code": "insufficient_quota"}}),
    );
    assert_eq!(quota.kind(), Some(&ApiErrorKind::Billing));
    assert!(!RetryPolicy::default().should_retry(&quota, 1));
}

#[test]
fn context_length_errors_reach_the_prompt_too_long_path() {
    // OpenAI: numbers in the message.
    let openai = status(
        400,
        &json!({"error": {"message": "This model's maximum context length is 128000 tokens. However, your messages resulted in 130532 tokens. Please reduce the length of the messages.", "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}}),
    );
    assert!(openai.is_context_length_exceeded());
    assert_eq!(openai.prompt_too_long(), Some((130_532, 128_000)));
    assert_eq!(
        openai.kind(),
        Some(&ApiErrorKind::Other(CONTEXT_LENGTH_EXCEEDED.into()))
    );
    // vLLM: the prompt and the output asked for.
    let vllm = status(
        400,
        &json!({"object": "error", "message": "This model's maximum context length is 32768 tokens. However, you requested 33792 tokens (1792 in the messages, 32000 in the completion). Please reduce the length of the messages or completion.", "type": "BadRequestError", "param": null, "code": 400}),
    );
    assert_eq!(vllm.context_limit_exceeded(), Some((1792, 32_000, 32_768)));
    // newer vLLM wording
    let vllm_new = status(
        400,
        &json!({"error": {"message": "'max_tokens' or 'max_completion_tokens' is too large: 32000. This model's maximum context length is 32768 tokens and your request has 1792 input tokens (32000 > 32768 - 1792).", "type": "BadRequestError", "code": 400}}),
    );
    assert_eq!(
        vllm_new.context_limit_exceeded(),
        Some((1792, 32_000, 32_768))
    );
    // llama.cpp: its own type and figures.
    let llama = status(
        400,
        &json!({"error": {"code": 400, "message": "the request exceeds the available context size, try increasing it", "type": "exceed_context_size_error", "n_prompt_tokens": 5000, "n_ctx": 4096}}),
    );
    assert_eq!(llama.prompt_too_long(), Some((5000, 4096)));
    // Words without numbers still count.
    let ollama = status(
        500,
        &json!({"error": "input length exceeds the context length"}),
    );
    assert!(ollama.is_context_length_exceeded());
    assert_eq!(ollama.prompt_too_long(), None);
    // A rate limit that mentions tokens is not one.
    let tpm = status(
        429,
        &json!({"error": {"message": "Request too large: maximum context length of your tier", "type": "tokens"}}),
    );
    assert!(!tpm.is_context_length_exceeded());
}

#[test]
fn stream_errors_keep_their_retry_semantics() {
    let body = stream_error_body(&ChatError::from_value(
        &json!({"error": {"message": "This model's maximum context length is 4096 tokens. However, your messages resulted in 5000 tokens.", "code": "context_length_exceeded"}}),
    ));
    assert_eq!(body.error_type, CONTEXT_LENGTH_EXCEEDED);
    let error = ApiError::OpenAi(Box::new(ApiError::from_stream_error(&body, None)));
    assert_eq!(error.prompt_too_long(), Some((5000, 4096)));
    assert!(!error.is_retryable());
    let server = stream_error_body(&ChatError::from_value(
        &json!({"error": {"message": "", "type": "server_error"}}),
    ));
    assert_eq!(server.error_type, "api_error");
    assert!(!server.message.is_empty());
}
