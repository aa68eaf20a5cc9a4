//! Which model provider a session talks to, and what follows from it: the client's
//! configuration, the model names, and where each came from (the session decides with these
//! once, at start; `tine doctor` shows the same).
//!
//! The provider: `--provider`, else `provider` in settings, else anthropic. With `openai`:
//! `OPENAI_BASE_URL`, `OPENAI_API_KEY` and `TINE_CONTEXT_WINDOW` from the environment, else the
//! settings' `openai` object (`baseUrl`, `apiKey`, `contextWindow`); the model from `--model`,
//! `OPENAI_MODEL`, `openai.model`, or `model` in tine's own settings files (not Claude Code's,
//! whose `model` names a Claude model), passed verbatim; the small fast model (side queries,
//! WebFetch) from `OPENAI_SMALL_FAST_MODEL` or `openai.smallFastModel`, else the main model.
//! Nothing of the anthropic provider's (`ANTHROPIC_*`) is used, so nothing goes to Anthropic.
//!
//! Project settings may not set `provider` or `openai`: a cloned repository must not choose
//! where the conversation (and the key) is sent. They are ignored with a warning.

use std::sync::Arc;

use serde_json::Value;
use tine_api_client::{ApiError, ClientConfig, HttpClient, ModelClient, Provider, ProviderConfig};
use tine_config::settings::{LoadedSettings, SettingsFormat, SettingsSource};
use tine_fork_runtime::DEFAULT_SMALL_FAST_MODEL;

pub use crate::error::ProviderError;
use crate::error::StartError;
use crate::options::SessionOptions;

/// The model when neither the options nor `ANTHROPIC_MODEL` nor settings name one.
pub const DEFAULT_MODEL: &str = "claude-opus-5-5";

/// `flag`, else `ANTHROPIC_MODEL`, else the settings' `model`, else [`DEFAULT_MODEL`]; an
/// alias (`opus`, `sonnet`, `haiku`) is its current id.
pub fn model_from(flag: Option<&str>, loaded: &LoadedSettings) -> String {
    let model = flag
        .map(str::to_owned)
        .filter(|m| !m.trim().is_empty())
        .or_else(|| {
            std::env::var("ANTHROPIC_MODEL")
                .ok()
                .filter(|m| !m.trim().is_empty())
        })
        .or_else(|| {
            loaded
                .get("model")
                .and_then(|(v, _)| v.as_str())
                .map(str::to_owned)
        })
        .unwrap_or_else(|| DEFAULT_MODEL.to_owned());
    tine_api_client::resolve_model_alias(&model)
}

/// The provider a session here uses, and why.
#[derive(Debug, Clone)]
pub struct ProviderChoice {
    /// The provider.
    pub provider: Provider,
    /// `--provider`, `provider in userSettings`, `default`.
    pub source: String,
    /// Settings that were ignored (a project choosing the provider).
    pub warnings: Vec<String>,
}

/// A name and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sourced {
    /// The value.
    pub value: String,
    /// Where it came from (`--model`, `ANTHROPIC_MODEL`, `model in userSettings`, `default`).
    pub source: String,
}

const PROJECT: &[SettingsSource] = &[SettingsSource::Project];

fn env(name: &str) -> Option<String> {
    std::env::var(name)
        .ok()
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty())
}

/// `--provider`, else `provider` in settings (not the project's), else anthropic.
pub fn choose(
    flag: Option<Provider>,
    loaded: &LoadedSettings,
) -> Result<ProviderChoice, ProviderError> {
    let mut warnings = Vec::new();
    for key in ["provider", "openai"] {
        if loaded
            .layers
            .iter()
            .any(|l| l.source == SettingsSource::Project && l.raw.contains_key(key))
        {
            warnings.push(format!(
                "`{key}` in the project's settings is ignored: a repository may not choose where \
                 the conversation is sent (set it in user or local settings, or pass --provider)"
            ));
        }
    }
    if let Some(provider) = flag {
        return Ok(ProviderChoice {
            provider,
            source: "--provider".to_owned(),
            warnings,
        });
    }
    let Some((value, source)) = loaded.get_excluding("provider", PROJECT) else {
        return Ok(ProviderChoice {
            provider: Provider::Anthropic,
            source: "default".to_owned(),
            warnings,
        });
    };
    let Some(text) = value.as_str() else {
        return Err(ProviderError(format!(
            "`provider` in {source} must be \"anthropic\" or \"openai\""
        )));
    };
    let provider = text
        .parse::<Provider>()
        .map_err(|e| ProviderError(format!("`provider` in {source}: {e}")))?;
    Ok(ProviderChoice {
        provider,
        source: format!("provider in {source}"),
        warnings,
    })
}

/// A key of the `openai` settings object, as text, with the source that set it.
fn openai_setting(loaded: &LoadedSettings, key: &str) -> Option<(String, SettingsSource)> {
    let (object, source) = loaded.get_excluding("openai", PROJECT)?;
    let text = match object.get(key)? {
        Value::String(s) if !s.trim().is_empty() => s.trim().to_owned(),
        Value::Number(n) => n.to_string(),
        _ => return None,
    };
    Some((text, source))
}

/// The settings key standing in for an environment variable of the openai provider.
fn setting_for(variable: &str) -> Option<&'static str> {
    match variable {
        "OPENAI_BASE_URL" => Some("baseUrl"),
        "OPENAI_API_KEY" => Some("apiKey"),
        "TINE_CONTEXT_WINDOW" => Some("contextWindow"),
        "OPENAI_MODEL" => Some("model"),
        "OPENAI_SMALL_FAST_MODEL" => Some("smallFastModel"),
        _ => None,
    }
}

/// Where variable `name` of the openai provider comes from: the environment, else settings.
pub fn openai_var(loaded: &LoadedSettings, name: &str) -> Option<Sourced> {
    if let Some(value) = env(name) {
        return Some(Sourced {
            value,
            source: name.to_owned(),
        });
    }
    let key = setting_for(name)?;
    openai_setting(loaded, key).map(|(value, source)| Sourced {
        value,
        source: format!("openai.{key} in {source}"),
    })
}

/// The client configuration of `provider`: a missing key is an error naming its variable.
pub fn client_config(
    provider: Provider,
    loaded: &LoadedSettings,
) -> Result<ProviderConfig, ApiError> {
    match provider {
        Provider::Anthropic => ProviderConfig::from_vars(provider, |name| std::env::var(name).ok()),
        Provider::OpenAi => ProviderConfig::from_vars(provider, |name| {
            openai_var(loaded, name).map(|sourced| sourced.value)
        }),
    }
}

/// The model: `--model`, then the provider's variable and settings (see the module doc).
pub fn model(
    provider: Provider,
    flag: Option<&str>,
    loaded: &LoadedSettings,
) -> Result<Sourced, ProviderError> {
    if let Some(model) = flag.map(str::trim).filter(|m| !m.is_empty()) {
        return Ok(Sourced {
            value: model.to_owned(),
            source: "--model".to_owned(),
        });
    }
    match provider {
        Provider::Anthropic => Ok(env("ANTHROPIC_MODEL")
            .map(|value| Sourced {
                value,
                source: "ANTHROPIC_MODEL".to_owned(),
            })
            .or_else(|| {
                let (value, source) = loaded.get("model")?;
                Some(Sourced {
                    value: value.as_str()?.to_owned(),
                    source: format!("model in {source}"),
                })
            })
            .unwrap_or_else(|| Sourced {
                value: DEFAULT_MODEL.to_owned(),
                source: "default".to_owned(),
            })),
        Provider::OpenAi => {
            if let Some(sourced) = openai_var(loaded, "OPENAI_MODEL") {
                return Ok(sourced);
            }
            let own = loaded.layers.iter().rev().find_map(|layer| {
                let model = layer.raw.get("model")?.as_str()?.trim();
                (layer.format == SettingsFormat::Tine && !model.is_empty())
                    .then(|| (model.to_owned(), layer.source))
            });
            match own {
                Some((value, source)) => Ok(Sourced {
                    value,
                    source: format!("model in {source}"),
                }),
                None => Err(ProviderError(
                    "the openai provider needs a model name: pass --model (e.g. --model \
                     qwen2.5-coder:7b), or set OPENAI_MODEL, or `model` in tine's settings"
                        .to_owned(),
                )),
            }
        }
    }
}

/// The small fast model for side queries: the provider's variable, else its default (for
/// openai, the main model: a local server may serve only that one).
pub fn small_model(provider: Provider, main: &str, loaded: &LoadedSettings) -> Sourced {
    match provider {
        Provider::Anthropic => env("ANTHROPIC_SMALL_FAST_MODEL")
            .map(|value| Sourced {
                value,
                source: "ANTHROPIC_SMALL_FAST_MODEL".to_owned(),
            })
            .unwrap_or_else(|| Sourced {
                value: DEFAULT_SMALL_FAST_MODEL.to_owned(),
                source: "default".to_owned(),
            }),
        Provider::OpenAi => {
            openai_var(loaded, "OPENAI_SMALL_FAST_MODEL").unwrap_or_else(|| Sourced {
                value: main.to_owned(),
                source: "the main model".to_owned(),
            })
        }
    }
}

/// The provider's part of a session, decided once at start: the session (and every fork of
/// it: memory extraction, dream, compaction, side queries) talks through `client` with `model`.
pub(crate) struct ProviderParts {
    /// The model: an alias resolved (anthropic), or verbatim (openai).
    pub model: String,
    /// WebFetch's and side queries' model.
    pub small_model: String,
    pub client: PendingClient,
    /// Settings that were ignored (a project choosing the provider).
    pub warnings: Vec<String>,
}

/// The session's client: the front end's, or Anthropic's being built off the runtime.
pub(crate) enum PendingClient {
    Ready(Arc<dyn ModelClient>),
    Building(tokio::task::JoinHandle<Result<HttpClient, ApiError>>),
}

impl PendingClient {
    /// `model`'s context window on this endpoint, before the client is ready: a client
    /// built already knows it; Anthropic's being built has `TINE_CONTEXT_WINDOW`, else the
    /// price table's figure.
    pub(crate) fn known_window(&self, model: &str) -> u64 {
        match self {
            PendingClient::Ready(client) => client.context_window(model),
            PendingClient::Building(_) => std::env::var("TINE_CONTEXT_WINDOW")
                .ok()
                .and_then(|v| v.trim().replace('_', "").parse::<u64>().ok())
                .filter(|w| *w >= 1024)
                .unwrap_or_else(|| tine_api_client::context_window(model)),
        }
    }

    pub(crate) async fn ready(self) -> Result<Arc<dyn ModelClient>, StartError> {
        match self {
            PendingClient::Ready(client) => Ok(client),
            PendingClient::Building(task) => match task.await {
                Ok(Ok(client)) => Ok(Arc::new(client)),
                Ok(Err(error)) => Err(StartError::Client(error.to_string())),
                Err(error) => Err(StartError::Client(error.to_string())),
            },
        }
    }
}

impl ProviderParts {
    /// The provider of `options.provider` or settings, its credentials checked first (a
    /// missing key is one line naming it), its model and small model, its client.
    pub(crate) fn choose(
        options: &SessionOptions,
        loaded: &LoadedSettings,
    ) -> Result<Self, StartError> {
        let choice = choose(options.provider, loaded).map_err(StartError::Provider)?;
        match choice.provider {
            Provider::Anthropic => {
                let client = match &options.client {
                    Some(_) if !options.betas.is_empty() => {
                        return Err(StartError::Flag(
                            "--betas: the beta headers go on tine's own Anthropic client; a \
                             client handed over by the front end sends its own"
                                .to_owned(),
                        ));
                    }
                    Some(client) => PendingClient::Ready(Arc::clone(client)),
                    None => {
                        let config = (options.betas.iter())
                            .fold(ClientConfig::from_env(), |config, beta| {
                                config.map(|c| c.with_beta(beta.as_str()))
                            })
                            .map_err(StartError::Credentials)?;
                        PendingClient::Building(tokio::task::spawn_blocking(move || {
                            HttpClient::new(config)
                        }))
                    }
                };
                let small_model = options
                    .small_model
                    .clone()
                    .unwrap_or_else(|| small_model(Provider::Anthropic, "", loaded).value);
                Ok(Self {
                    model: model_from(options.model.as_deref(), loaded),
                    small_model,
                    client,
                    warnings: choice.warnings,
                })
            }
            Provider::OpenAi => {
                crate::flags::anthropic_only(options)?;
                let config =
                    client_config(Provider::OpenAi, loaded).map_err(StartError::Credentials)?;
                let model = model(Provider::OpenAi, options.model.as_deref(), loaded)
                    .map_err(StartError::Provider)?
                    .value;
                let small_model = options
                    .small_model
                    .clone()
                    .unwrap_or_else(|| small_model(Provider::OpenAi, &model, loaded).value);
                let client = match &options.client {
                    Some(client) => Arc::clone(client),
                    None => config.build().map_err(StartError::Credentials)?,
                };
                Ok(Self {
                    model,
                    small_model,
                    client: PendingClient::Ready(client),
                    warnings: choice.warnings,
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use tine_config::settings::parse_layer;

    use super::*;

    fn loaded(layers: &[(SettingsSource, &str)]) -> LoadedSettings {
        let mut out = LoadedSettings::default();
        for (source, text) in layers {
            let layer = parse_layer(
                *source,
                None,
                Path::new("/p").to_path_buf(),
                text,
                &mut out.errors,
            )
            .unwrap();
            out.layers.push(layer);
        }
        out
    }

    #[test]
    fn the_flag_beats_settings_and_a_project_cannot_choose() {
        let settings = loaded(&[
            (SettingsSource::User, r#"{"provider": "openai"}"#),
            (
                SettingsSource::Project,
                r#"{"provider": "anthropic", "openai": {"baseUrl": "http://evil/v1"}}"#,
            ),
        ]);
        assert!(settings.errors.is_empty(), "{:?}", settings.errors);
        let choice = choose(None, &settings).unwrap();
        assert_eq!(choice.provider, Provider::OpenAi);
        assert_eq!(choice.source, "provider in userSettings");
        assert_eq!(choice.warnings.len(), 2, "{:?}", choice.warnings);
        assert!(
            openai_var(&settings, "OPENAI_BASE_URL").is_none_or(|s| s.value != "http://evil/v1")
        );
        let flagged = choose(Some(Provider::Anthropic), &settings).unwrap();
        assert_eq!(flagged.provider, Provider::Anthropic);
        assert!(
            choose(
                None,
                &loaded(&[(SettingsSource::User, r#"{"provider": "gemini"}"#)])
            )
            .is_err()
        );
        let none = choose(None, &LoadedSettings::default()).unwrap();
        assert_eq!(
            (none.provider, none.source.as_str()),
            (Provider::Anthropic, "default")
        );
    }

    #[test]
    fn openai_models_come_from_the_flag_or_tine_settings_and_default_small_to_main() {
        let settings = loaded(&[(
            SettingsSource::Local,
            r#"{"model": "qwen2.5-coder:7b", "openai": {"contextWindow": 32768}}"#,
        )]);
        let model = model(Provider::OpenAi, None, &settings).unwrap();
        assert_eq!(model.value, "qwen2.5-coder:7b");
        assert_eq!(model.source, "model in localSettings");
        assert_eq!(
            super::model(Provider::OpenAi, Some("llama3.1:8b"), &settings)
                .unwrap()
                .value,
            "llama3.1:8b"
        );
        assert!(super::model(Provider::OpenAi, None, &LoadedSettings::default()).is_err());
        let small = small_model(Provider::OpenAi, "qwen2.5-coder:7b", &settings);
        assert_eq!(small.value, "qwen2.5-coder:7b");
        let window = openai_var(&settings, "TINE_CONTEXT_WINDOW").unwrap();
        assert_eq!(window.value, "32768");
    }
}
