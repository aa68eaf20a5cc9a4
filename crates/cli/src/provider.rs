//! Which model provider a session talks to, and what follows from it: the client's
//! configuration, the model names, and where each came from (for `tine doctor`).
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

use std::path::Path;
use std::sync::Arc;

use anyhow::{Result, anyhow, bail};
use serde_json::Value;
use tine_api_client::{ApiError, ClientConfig, ModelClient, Provider, ProviderConfig};
use tine_config::settings::{self, FlagSettings, LoadedSettings, SettingsFormat, SettingsSource};
use tine_fork_runtime::DEFAULT_SMALL_FAST_MODEL;

use crate::setup::{DEFAULT_MODEL, settings_paths};

/// Where a session starts, as far as the provider choice needs it.
pub struct Place<'a> {
    pub cwd: &'a Path,
    /// `TINE_HOME`.
    pub home: &'a Path,
    pub user_home: Option<&'a Path>,
    /// `--settings`.
    pub settings_flag: Option<&'a str>,
    /// The managed-settings file; `None`: `TINE_MANAGED_SETTINGS` or none.
    pub managed_settings: Option<&'a Path>,
}

/// The provider's part of a session's options: the session (and every fork of it: memory
/// extraction, dream, compaction, side queries) talks through `client` with `model`.
pub struct ForSession {
    pub provider: Provider,
    /// `None` with anthropic: the session builds its own client from `ANTHROPIC_*` (already
    /// checked here), off-thread while it reads everything else.
    pub client: Option<Arc<dyn ModelClient>>,
    /// The model, verbatim; `None` with anthropic and no `--model`: the session's default chain.
    pub model: Option<String>,
    /// WebFetch's and side queries' model; `None`: the session's default.
    pub small_model: Option<String>,
    /// Settings that were ignored (a project choosing the provider), to be said as warnings.
    pub warnings: Vec<String>,
}

/// Chooses the provider for a session at `place` (reading the settings the session will read)
/// and builds its client; a missing key or model is one line naming it.
pub fn for_session(
    flag: Option<Provider>,
    model_flag: Option<&str>,
    place: &Place<'_>,
) -> Result<ForSession> {
    let mut paths = settings_paths(
        place.cwd,
        place.home,
        place.user_home,
        place.settings_flag.map(FlagSettings::from_arg),
    );
    if let Some(managed) = place.managed_settings {
        paths = paths.with_managed(managed);
    }
    let loaded = settings::load(&paths);
    let choice = choose(flag, &loaded)?;
    match choice.provider {
        Provider::Anthropic => {
            // Credentials first: without them nothing else matters.
            ClientConfig::from_env().map_err(|e| anyhow!(e))?;
            Ok(ForSession {
                provider: Provider::Anthropic,
                client: None,
                model: model_flag.map(str::to_owned),
                small_model: None,
                warnings: choice.warnings,
            })
        }
        Provider::OpenAi => {
            let config = client_config(Provider::OpenAi, &loaded).map_err(|e| anyhow!(e))?;
            let model = model(Provider::OpenAi, model_flag, &loaded)?.value;
            let small = small_model(Provider::OpenAi, &model, &loaded).value;
            let client = config.build().map_err(|e| anyhow!(e))?;
            Ok(ForSession {
                provider: Provider::OpenAi,
                client: Some(client),
                model: Some(model),
                small_model: Some(small),
                warnings: choice.warnings,
            })
        }
    }
}

/// The provider a session here uses, and why.
#[derive(Debug, Clone)]
pub struct ProviderChoice {
    pub provider: Provider,
    /// `--provider`, `provider in userSettings`, `default`.
    pub source: String,
    /// Settings that were ignored (a project choosing the provider).
    pub warnings: Vec<String>,
}

/// A name and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sourced {
    pub value: String,
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
pub fn choose(flag: Option<Provider>, loaded: &LoadedSettings) -> Result<ProviderChoice> {
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
        bail!("`provider` in {source} must be \"anthropic\" or \"openai\"");
    };
    let provider = text
        .parse::<Provider>()
        .map_err(|e| anyhow::anyhow!("`provider` in {source}: {e}"))?;
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
pub fn model(provider: Provider, flag: Option<&str>, loaded: &LoadedSettings) -> Result<Sourced> {
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
                None => bail!(
                    "the openai provider needs a model name: pass --model (e.g. --model \
                     qwen2.5-coder:7b), or set OPENAI_MODEL, or `model` in tine's settings"
                ),
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
