//! Which wire a session talks: Anthropic's Messages API ([`crate::HttpClient`]) or
//! OpenAI-compatible chat completions ([`crate::OpenAiClient`]). The choice is made once, at
//! start-up; everything above holds an `Arc<dyn ModelClient>` and never knows which.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use crate::client::HttpClient;
use crate::config::ClientConfig;
use crate::error::ApiError;
use crate::model_client::ModelClient;
use crate::openai::{OpenAiClient, OpenAiConfig};
use crate::retry::RetryPolicy;

/// A model provider, by its wire format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Provider {
    /// Anthropic's Messages API (`ANTHROPIC_*` variables).
    #[default]
    Anthropic,
    /// OpenAI-compatible chat completions (`OPENAI_*` variables).
    OpenAi,
}

impl Provider {
    /// The name in settings and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Anthropic => "anthropic",
            Self::OpenAi => "openai",
        }
    }

    /// What it is, for `tine doctor`.
    pub fn describe(self) -> &'static str {
        match self {
            Self::Anthropic => "Anthropic Messages API",
            Self::OpenAi => "OpenAI-compatible chat completions",
        }
    }
}

impl fmt::Display for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Provider {
    type Err = ApiError;

    fn from_str(text: &str) -> Result<Self, ApiError> {
        match text.trim().to_ascii_lowercase().as_str() {
            "anthropic" => Ok(Self::Anthropic),
            "openai" => Ok(Self::OpenAi),
            _ => Err(ApiError::Config {
                message: format!("unknown provider `{text}`: use anthropic or openai"),
            }),
        }
    }
}

/// One provider's client configuration.
#[derive(Debug, Clone)]
pub enum ProviderConfig {
    /// The Anthropic Messages API.
    Anthropic(ClientConfig),
    /// An OpenAI-compatible chat completions endpoint.
    OpenAi(OpenAiConfig),
}

impl ProviderConfig {
    /// `provider`'s configuration from variables read through `var`; a missing key is
    /// [`ApiError::MissingCredentials`] or [`ApiError::MissingOpenAiKey`].
    pub fn from_vars(
        provider: Provider,
        var: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, ApiError> {
        Ok(match provider {
            Provider::Anthropic => Self::Anthropic(ClientConfig::from_vars(var)?),
            Provider::OpenAi => Self::OpenAi(OpenAiConfig::from_vars(var)?),
        })
    }

    /// Which provider this configures.
    pub fn provider(&self) -> Provider {
        match self {
            Self::Anthropic(_) => Provider::Anthropic,
            Self::OpenAi(_) => Provider::OpenAi,
        }
    }

    /// Where requests go (the OpenAI base URL includes its `/v1`).
    pub fn base_url(&self) -> &str {
        match self {
            Self::Anthropic(config) => &config.base_url,
            Self::OpenAi(config) => &config.base_url,
        }
    }

    /// With another retry policy.
    pub fn with_retry(mut self, retry: RetryPolicy) -> Self {
        match &mut self {
            Self::Anthropic(config) => config.retry = retry,
            Self::OpenAi(config) => config.retry = retry,
        }
        self
    }

    /// Bound every wait (connect, headers, stream silence) by `timeout` (`tine doctor --check`).
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        let (connect, request, idle) = match &mut self {
            Self::Anthropic(c) => (
                &mut c.connect_timeout,
                &mut c.request_timeout,
                &mut c.stream_idle_timeout,
            ),
            Self::OpenAi(c) => (
                &mut c.connect_timeout,
                &mut c.request_timeout,
                &mut c.stream_idle_timeout,
            ),
        };
        for limit in [connect, request, idle] {
            *limit = (*limit).min(timeout);
        }
        self
    }

    /// The client. Building it loads TLS roots: do it off the async runtime's threads.
    pub fn build(self) -> Result<Arc<dyn ModelClient>, ApiError> {
        Ok(match self {
            Self::Anthropic(config) => Arc::new(HttpClient::new(config)?),
            Self::OpenAi(config) => Arc::new(OpenAiClient::new(config)?),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn providers_parse_by_name() {
        assert_eq!("openai".parse::<Provider>().unwrap(), Provider::OpenAi);
        assert_eq!(
            " Anthropic ".parse::<Provider>().unwrap(),
            Provider::Anthropic
        );
        let error = "ollama".parse::<Provider>().unwrap_err();
        assert!(error.to_string().contains("anthropic or openai"), "{error}");
    }

    #[test]
    fn each_provider_reads_its_own_variables() {
        let vars = |name: &str| match name {
            "ANTHROPIC_API_KEY" => Some("sk-ant".to_owned()),
            "OPENAI_BASE_URL" => Some("http://127.0.0.1:11434/v1".to_owned()),
            _ => None,
        };
        let anthropic = ProviderConfig::from_vars(Provider::Anthropic, vars).unwrap();
        assert_eq!(anthropic.base_url(), crate::DEFAULT_BASE_URL);
        // The Anthropic key is never used for the openai provider.
        let error = ProviderConfig::from_vars(Provider::OpenAi, vars).unwrap_err();
        assert!(matches!(error, ApiError::MissingOpenAiKey));
        let limited = anthropic.with_timeout(Duration::from_secs(3));
        let ProviderConfig::Anthropic(config) = limited else {
            panic!("provider changed");
        };
        assert_eq!(config.request_timeout, Duration::from_secs(3));
        assert_eq!(config.connect_timeout, Duration::from_secs(3));
    }
}
