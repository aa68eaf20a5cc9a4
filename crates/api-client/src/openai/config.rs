//! `OpenAiConfig`: endpoint, key, timeouts and the token-limit field, read from the environment.
//!
//! `OPENAI_BASE_URL` includes the `/v1`, as the OpenAI SDKs take it (default
//! `https://api.openai.com/v1`; Ollama: `http://localhost:11434/v1`, llama.cpp's server and vLLM:
//! `http://localhost:8080/v1`, `http://localhost:8000/v1`). `OPENAI_API_KEY` is sent as
//! `Authorization: Bearer …`; local servers accept any non-empty value, but one must be set so a
//! forgotten key is a clear error rather than a 401 later. `API_TIMEOUT_MS` and
//! `TINE_CONTEXT_WINDOW` mean what they mean for the Anthropic client.

use std::fmt;
use std::time::Duration;

use crate::config::{CONNECT_TIMEOUT, EnvVars, REQUEST_TIMEOUT, USER_AGENT};
use crate::error::ApiError;
use crate::retry::RetryPolicy;
use crate::send::is_loopback;

/// The default endpoint of the openai provider.
pub const DEFAULT_OPENAI_BASE_URL: &str = "https://api.openai.com/v1";

/// Which request field carries the output limit. api.openai.com has deprecated `max_tokens`
/// (its reasoning models refuse it); the servers people run locally read `max_tokens` (vLLM
/// takes both, llama.cpp and Ollama only the older one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MaxTokensField {
    /// `max_tokens` (local servers, older models).
    MaxTokens,
    /// `max_completion_tokens` (OpenAI's reasoning models).
    MaxCompletionTokens,
}

impl MaxTokensField {
    /// `max_completion_tokens` for OpenAI's own hosts, `max_tokens` everywhere else.
    pub fn for_base_url(base_url: &str) -> Self {
        let host = reqwest::Url::parse(base_url)
            .ok()
            .and_then(|url| url.host_str().map(str::to_ascii_lowercase));
        match host.as_deref() {
            Some(host) if host == "api.openai.com" || host.ends_with(".openai.azure.com") => {
                Self::MaxCompletionTokens
            }
            _ => Self::MaxTokens,
        }
    }
}

/// Everything [`crate::OpenAiClient`] needs.
#[derive(Clone)]
pub struct OpenAiConfig {
    /// Including `/v1`, without a trailing slash; requests go to `{base_url}/chat/completions`.
    pub base_url: String,
    /// Sent as `Authorization: Bearer …`. Never printed by `Debug`.
    pub api_key: String,
    /// Which field carries the output limit.
    pub max_tokens_field: MaxTokensField,
    /// TCP + TLS connect.
    pub connect_timeout: Duration,
    /// Until response headers arrive.
    pub request_timeout: Duration,
    /// Longest silence tolerated between stream chunks. Longer for a server on this machine: a
    /// local model may think for minutes over a long prompt before its first token, and
    /// OpenAI-compatible servers send no pings meanwhile.
    pub stream_idle_timeout: Duration,
    /// When and how failed requests are retried.
    pub retry: RetryPolicy,
    /// `user-agent` header.
    pub user_agent: String,
    /// `TINE_CONTEXT_WINDOW`: the loaded model's context window, when the table's is wrong.
    pub context_window: Option<u64>,
}

impl fmt::Debug for OpenAiConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAiConfig")
            .field("base_url", &self.base_url)
            .field("api_key", &"<redacted>")
            .field("max_tokens_field", &self.max_tokens_field)
            .field("connect_timeout", &self.connect_timeout)
            .field("request_timeout", &self.request_timeout)
            .field("stream_idle_timeout", &self.stream_idle_timeout)
            .field("retry", &self.retry)
            .field("context_window", &self.context_window)
            .finish()
    }
}

impl OpenAiConfig {
    /// A config for `base_url` (with its `/v1`) and `api_key`, with default timeouts and retries.
    pub fn new(base_url: impl Into<String>, api_key: impl Into<String>) -> Self {
        let base_url = base_url.into().trim_end_matches('/').to_owned();
        let local = is_loopback(&base_url);
        Self {
            max_tokens_field: MaxTokensField::for_base_url(&base_url),
            base_url,
            api_key: api_key.into(),
            connect_timeout: CONNECT_TIMEOUT,
            request_timeout: REQUEST_TIMEOUT,
            stream_idle_timeout: Duration::from_secs(if local { 600 } else { 120 }),
            retry: RetryPolicy::default(),
            user_agent: USER_AGENT.to_owned(),
            context_window: None,
        }
    }

    /// From the process environment (see the module doc).
    pub fn from_env() -> Result<Self, ApiError> {
        Self::from_vars(|name| std::env::var(name).ok())
    }

    /// Like [`OpenAiConfig::from_env`], reading variables through `var` (the cli passes one
    /// that falls back to settings; tests pass a map). No key → [`ApiError::MissingOpenAiKey`].
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Result<Self, ApiError> {
        let vars = EnvVars(var);
        let api_key = vars
            .get("OPENAI_API_KEY")
            .ok_or(ApiError::MissingOpenAiKey)?;
        let base_url = vars.base_url(
            "OPENAI_BASE_URL",
            DEFAULT_OPENAI_BASE_URL,
            " (and include /v1, as in http://localhost:11434/v1)",
        )?;
        let mut config = Self::new(base_url, api_key);
        if let Some(timeout) = vars.timeout()? {
            config.request_timeout = timeout;
            config.stream_idle_timeout = timeout;
        }
        config.context_window = vars.context_window()?;
        Ok(config)
    }

    /// With another retry policy.
    pub fn with_retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// `{base_url}/chat/completions`.
    pub fn chat_completions_url(&self) -> String {
        format!("{}/chat/completions", self.base_url)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::vars;

    #[test]
    fn a_missing_key_names_the_variable_and_says_any_value_works_locally() {
        let error = OpenAiConfig::from_vars(vars(&[("OPENAI_API_KEY", " ")])).unwrap_err();
        assert!(matches!(error, ApiError::MissingOpenAiKey));
        let text = error.to_string();
        assert!(text.contains("OPENAI_API_KEY"), "{text}");
        assert!(text.contains("any non-empty value"), "{text}");
    }

    #[test]
    fn reads_the_endpoint_key_and_window() {
        let config = OpenAiConfig::from_vars(vars(&[
            ("OPENAI_API_KEY", "ollama"),
            ("OPENAI_BASE_URL", "http://localhost:11434/v1/"),
            ("TINE_CONTEXT_WINDOW", "32768"),
            ("API_TIMEOUT_MS", "2000"),
        ]))
        .unwrap();
        assert_eq!(config.base_url, "http://localhost:11434/v1");
        assert_eq!(
            config.chat_completions_url(),
            "http://localhost:11434/v1/chat/completions"
        );
        assert_eq!(config.api_key, "ollama");
        assert_eq!(config.context_window, Some(32_768));
        assert_eq!(config.max_tokens_field, MaxTokensField::MaxTokens);
        assert_eq!(config.stream_idle_timeout, Duration::from_millis(2000));
        assert!(!format!("{config:?}").contains("ollama\""));
    }

    #[test]
    fn defaults_to_openai_with_max_completion_tokens() {
        let config = OpenAiConfig::from_vars(vars(&[("OPENAI_API_KEY", "sk-x")])).unwrap();
        assert_eq!(config.base_url, DEFAULT_OPENAI_BASE_URL);
        assert_eq!(config.max_tokens_field, MaxTokensField::MaxCompletionTokens);
        assert_eq!(config.stream_idle_timeout, Duration::from_secs(120));
        let local = OpenAiConfig::new("http://127.0.0.1:8080/v1", "k");
        assert_eq!(local.stream_idle_timeout, Duration::from_secs(600));
        let bad = OpenAiConfig::from_vars(vars(&[
            ("OPENAI_API_KEY", "k"),
            ("OPENAI_BASE_URL", "localhost:11434/v1"),
        ]));
        assert!(matches!(bad, Err(ApiError::Config { .. })));
    }

    #[test]
    fn debug_never_prints_the_key() {
        let config = OpenAiConfig::new("http://x/v1", "sk-very-secret");
        assert!(!format!("{config:?}").contains("sk-very-secret"));
    }
}
