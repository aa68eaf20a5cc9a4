//! `ClientConfig`: endpoint, credentials, headers and timeouts, read from the environment.
//!
//! `ANTHROPIC_API_KEY` → `x-api-key`; `ANTHROPIC_AUTH_TOKEN` → `Authorization: Bearer` (both are
//! sent when both are set); `ANTHROPIC_BASE_URL` (default `https://api.anthropic.com`);
//! `ANTHROPIC_BETAS` (comma-separated, added to `anthropic-beta`); `API_TIMEOUT_MS` (whole
//! non-streaming request, and the longest silence tolerated inside a stream);
//! `TINE_CONTEXT_WINDOW` (the model's context window in tokens, when the price table's is wrong).
//!
//! The openai provider's configuration is [`crate::openai::OpenAiConfig`].

use std::fmt;
use std::time::Duration;

use crate::error::ApiError;
use crate::retry::RetryPolicy;

/// The default endpoint.
pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
/// The `anthropic-version` header every request carries.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// The variable that sets a model's context window (for a local model the table does not know).
pub const CONTEXT_WINDOW_VAR: &str = "TINE_CONTEXT_WINDOW";

/// The `user-agent` both clients send by default.
pub(crate) const USER_AGENT: &str = concat!("tine/", env!("CARGO_PKG_VERSION"));

/// TCP + TLS connect, by default.
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Until response headers arrive, by default.
pub(crate) const REQUEST_TIMEOUT: Duration = Duration::from_secs(600);

/// `TINE_CONTEXT_WINDOW`'s value: a whole number of tokens, at least 1024.
pub(crate) fn parse_context_window(text: &str) -> Result<u64, ApiError> {
    match text.trim().replace('_', "").parse::<u64>() {
        Ok(tokens) if tokens >= 1024 => Ok(tokens),
        _ => Err(ApiError::Config {
            message: format!(
                "{CONTEXT_WINDOW_VAR} must be the model's context window as a whole number of \
                 tokens (at least 1024, e.g. 32768), got `{text}`"
            ),
        }),
    }
}

/// Environment variables read through a lookup (the process's, a map in tests, the cli's with
/// a fallback to settings), a blank value counted as unset. What both clients read alike.
pub(crate) struct EnvVars<F>(pub F);

impl<F: Fn(&str) -> Option<String>> EnvVars<F> {
    /// `name`'s value, trimmed; `None` when unset or blank.
    pub(crate) fn get(&self, name: &str) -> Option<String> {
        (self.0)(name)
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
    }

    /// The base URL in `name`, else `default`; one that is not http(s) is a configuration
    /// error, `advice` (empty, or a parenthesis with a leading space) after its first clause.
    pub(crate) fn base_url(
        &self,
        name: &str,
        default: &str,
        advice: &str,
    ) -> Result<String, ApiError> {
        let base_url = self.get(name).unwrap_or_else(|| default.to_owned());
        if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
            return Err(ApiError::Config {
                message: format!(
                    "{name} must start with http:// or https://{advice}, got `{base_url}`"
                ),
            });
        }
        Ok(base_url)
    }

    /// `API_TIMEOUT_MS`: the request timeout and the longest silence inside a stream.
    pub(crate) fn timeout(&self) -> Result<Option<Duration>, ApiError> {
        self.get("API_TIMEOUT_MS")
            .map(|ms| {
                ms.parse()
                    .map(Duration::from_millis)
                    .map_err(|_| ApiError::Config {
                        message: format!(
                            "API_TIMEOUT_MS must be a whole number of milliseconds, got `{ms}`"
                        ),
                    })
            })
            .transpose()
    }

    /// `TINE_CONTEXT_WINDOW`: the model's context window, when the price table's is wrong.
    pub(crate) fn context_window(&self) -> Result<Option<u64>, ApiError> {
        self.get(CONTEXT_WINDOW_VAR)
            .map(|text| parse_context_window(&text))
            .transpose()
    }
}

/// How the client authenticates. `Debug` never prints the secret.
#[derive(Clone, PartialEq, Eq)]
pub struct Credentials {
    /// Sent as `x-api-key`.
    pub api_key: Option<String>,
    /// Sent as `Authorization: Bearer …`.
    pub auth_token: Option<String>,
}

impl Credentials {
    /// An API key, sent as `x-api-key`.
    pub fn api_key(key: impl Into<String>) -> Self {
        Self {
            api_key: Some(key.into()),
            auth_token: None,
        }
    }

    /// A bearer token, sent as `Authorization: Bearer …`.
    pub fn auth_token(token: impl Into<String>) -> Self {
        Self {
            api_key: None,
            auth_token: Some(token.into()),
        }
    }
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Credentials")
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field(
                "auth_token",
                &self.auth_token.as_ref().map(|_| "<redacted>"),
            )
            .finish()
    }
}

/// Everything the HTTP client needs.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// Without a trailing slash; requests go to `{base_url}/v1/messages`.
    pub base_url: String,
    /// How requests authenticate. Never printed by `Debug`.
    pub credentials: Credentials,
    /// Sent joined with `,` as `anthropic-beta` when not empty.
    pub betas: Vec<String>,
    /// TCP + TLS connect.
    pub connect_timeout: Duration,
    /// Until response headers arrive, and for a whole non-streaming request.
    pub request_timeout: Duration,
    /// Longest silence tolerated between stream chunks (pings arrive every few seconds).
    pub stream_idle_timeout: Duration,
    /// When and how failed requests are retried.
    pub retry: RetryPolicy,
    /// `user-agent` header.
    pub user_agent: String,
    /// `TINE_CONTEXT_WINDOW`: overrides the price table's context window for every model.
    pub context_window: Option<u64>,
}

impl ClientConfig {
    /// A config for `base_url` with `credentials` and default timeouts and retries.
    pub fn new(base_url: impl Into<String>, credentials: Credentials) -> Self {
        Self {
            base_url: base_url.into().trim_end_matches('/').to_owned(),
            credentials,
            betas: Vec::new(),
            connect_timeout: CONNECT_TIMEOUT,
            request_timeout: REQUEST_TIMEOUT,
            stream_idle_timeout: Duration::from_secs(120),
            retry: RetryPolicy::default(),
            user_agent: USER_AGENT.to_owned(),
            context_window: None,
        }
    }

    /// From the process environment (see the module doc). No credentials →
    /// [`ApiError::MissingCredentials`], whose message names the variables to set.
    pub fn from_env() -> Result<Self, ApiError> {
        Self::from_vars(|name| std::env::var(name).ok())
    }

    /// Like [`ClientConfig::from_env`], reading variables through `var` (tests pass a map).
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Result<Self, ApiError> {
        let vars = EnvVars(var);
        let credentials = Credentials {
            api_key: vars.get("ANTHROPIC_API_KEY"),
            auth_token: vars.get("ANTHROPIC_AUTH_TOKEN"),
        };
        if credentials.api_key.is_none() && credentials.auth_token.is_none() {
            return Err(ApiError::MissingCredentials);
        }
        let base_url = vars.base_url("ANTHROPIC_BASE_URL", DEFAULT_BASE_URL, "")?;
        let mut config = Self::new(base_url, credentials);
        if let Some(betas) = vars.get("ANTHROPIC_BETAS") {
            config.betas = betas
                .split(',')
                .map(str::trim)
                .filter(|b| !b.is_empty())
                .map(str::to_owned)
                .collect();
        }
        if let Some(timeout) = vars.timeout()? {
            config.request_timeout = timeout;
            config.stream_idle_timeout = timeout;
        }
        config.context_window = vars.context_window()?;
        Ok(config)
    }

    /// Add a beta flag (kept in insertion order, no duplicates: the header is part of what
    /// makes requests identical).
    pub fn with_beta(mut self, beta: impl Into<String>) -> Self {
        let beta = beta.into();
        if !self.betas.contains(&beta) {
            self.betas.push(beta);
        }
        self
    }

    /// With another retry policy.
    pub fn with_retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    pub(crate) fn url(&self, path: &str) -> String {
        format!("{}{}", self.base_url, path)
    }
}

/// A variable lookup over `pairs`, for the configurations' tests.
#[cfg(test)]
pub(crate) fn vars(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> + use<> {
    let map: std::collections::HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |name| map.get(name).cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_credentials_is_a_typed_error_naming_the_variables() {
        let err = ClientConfig::from_vars(vars(&[("ANTHROPIC_API_KEY", "  ")])).unwrap_err();
        assert!(matches!(err, ApiError::MissingCredentials));
        let text = err.to_string();
        assert!(
            text.contains("set ANTHROPIC_API_KEY") && text.contains("ANTHROPIC_AUTH_TOKEN"),
            "{text}"
        );
    }

    #[test]
    fn reads_everything_from_the_environment() {
        let config = ClientConfig::from_vars(vars(&[
            ("ANTHROPIC_API_KEY", "sk-test"),
            ("ANTHROPIC_AUTH_TOKEN", "tok"),
            ("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/"),
            ("ANTHROPIC_BETAS", "a-1, b-2,,"),
            ("API_TIMEOUT_MS", "1500"),
        ]))
        .unwrap();
        assert_eq!(config.base_url, "http://127.0.0.1:9");
        assert_eq!(
            config.credentials,
            Credentials {
                api_key: Some("sk-test".into()),
                auth_token: Some("tok".into())
            }
        );
        assert_eq!(config.betas, vec!["a-1", "b-2"]);
        assert_eq!(config.request_timeout, Duration::from_millis(1500));
        assert_eq!(config.context_window, None);
        assert_eq!(config.url("/v1/messages"), "http://127.0.0.1:9/v1/messages");
    }

    #[test]
    fn defaults_and_validation() {
        let config = ClientConfig::from_vars(vars(&[("ANTHROPIC_AUTH_TOKEN", "tok")])).unwrap();
        assert_eq!(config.base_url, DEFAULT_BASE_URL);
        assert_eq!(config.retry.max_attempts, 10);
        let bad = ClientConfig::from_vars(vars(&[
            ("ANTHROPIC_API_KEY", "k"),
            ("ANTHROPIC_BASE_URL", "api.example"),
        ]));
        assert!(matches!(bad, Err(ApiError::Config { .. })));
        let bad = ClientConfig::from_vars(vars(&[
            ("ANTHROPIC_API_KEY", "k"),
            ("API_TIMEOUT_MS", "soon"),
        ]));
        assert!(matches!(bad, Err(ApiError::Config { .. })));
    }

    #[test]
    fn the_context_window_can_be_set() {
        let config = ClientConfig::from_vars(vars(&[
            ("ANTHROPIC_API_KEY", "k"),
            ("TINE_CONTEXT_WINDOW", "32_768"),
        ]))
        .unwrap();
        assert_eq!(config.context_window, Some(32_768));
        for bad in ["lots", "12", "-5"] {
            let error = ClientConfig::from_vars(vars(&[
                ("ANTHROPIC_API_KEY", "k"),
                ("TINE_CONTEXT_WINDOW", bad),
            ]))
            .unwrap_err();
            assert!(error.to_string().contains("TINE_CONTEXT_WINDOW"), "{error}");
        }
    }

    #[test]
    fn debug_never_prints_secrets() {
        let config = ClientConfig::new("http://x", Credentials::api_key("sk-very-secret"));
        assert!(!format!("{config:?}").contains("sk-very-secret"));
    }
}
