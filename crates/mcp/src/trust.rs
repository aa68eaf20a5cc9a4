//! Whether a project's `.mcp.json` server may start. Opening a cloned repository must not run
//! its code, so a `.mcp.json` server starts only when the user trusted it, in settings the
//! repository cannot write: `enableAllProjectMcpServers: true` or `enabledMcpjsonServers:
//! [NAME]` in user, local, `--settings` or managed settings. `disabledMcpjsonServers` (from any
//! source, the project's included: refusing is always safe) wins over both. Project settings
//! cannot trust: a key there is ignored.

use std::collections::BTreeSet;

use serde_json::Value;
use tine_config::settings::{LoadedSettings, SettingsSource};

/// The setting that trusts every `.mcp.json` server.
pub(crate) const ENABLE_ALL_KEY: &str = "enableAllProjectMcpServers";
/// The setting listing trusted `.mcp.json` servers.
pub(crate) const ENABLED_KEY: &str = "enabledMcpjsonServers";
/// The setting listing disabled `.mcp.json` servers.
pub(crate) const DISABLED_KEY: &str = "disabledMcpjsonServers";

/// What the settings say about `.mcp.json` servers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProjectTrust {
    /// `enableAllProjectMcpServers` from the highest source (never project settings) setting it.
    pub enable_all: Option<(bool, SettingsSource)>,
    /// Servers trusted (`enabledMcpjsonServers`, all sources).
    pub enabled: BTreeSet<String>,
    /// Servers disabled (`disabledMcpjsonServers`, all sources).
    pub disabled: BTreeSet<String>,
}

/// The decision for one `.mcp.json` server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrustDecision {
    /// Trusted by this key in this source.
    Trusted {
        /// The setting that trusted it.
        key: &'static str,
        /// The source that set it.
        source: SettingsSource,
    },
    /// Listed in `disabledMcpjsonServers`.
    Disabled,
    /// Nobody trusted it yet.
    Untrusted,
}

impl ProjectTrust {
    /// Reads the three keys through the settings loader's layers.
    pub fn from_settings(settings: &LoadedSettings) -> Self {
        let mut trust = ProjectTrust::default();
        for layer in &settings.layers {
            let trusted_source = layer.source != SettingsSource::Project;
            if trusted_source {
                if let Some(Value::Bool(all)) = layer.raw.get(ENABLE_ALL_KEY) {
                    // Layers come lowest precedence first: the last one seen wins.
                    trust.enable_all = Some((*all, layer.source));
                }
                trust.enabled.extend(names(layer.raw.get(ENABLED_KEY)));
            }
            trust.disabled.extend(names(layer.raw.get(DISABLED_KEY)));
        }
        trust
    }

    /// Where `enabledMcpjsonServers` listing `name` came from (the first trusted layer).
    fn enabled_source(settings: &LoadedSettings, name: &str) -> Option<SettingsSource> {
        settings
            .layers
            .iter()
            .filter(|layer| layer.source != SettingsSource::Project)
            .find(|layer| names(layer.raw.get(ENABLED_KEY)).any(|n| n == name))
            .map(|layer| layer.source)
    }

    /// The decision for the server `name` under `settings`.
    pub fn decide(&self, settings: &LoadedSettings, name: &str) -> TrustDecision {
        if self.disabled.contains(name) {
            return TrustDecision::Disabled;
        }
        if self.enabled.contains(name)
            && let Some(source) = Self::enabled_source(settings, name)
        {
            return TrustDecision::Trusted {
                key: ENABLED_KEY,
                source,
            };
        }
        match self.enable_all {
            Some((true, source)) => TrustDecision::Trusted {
                key: ENABLE_ALL_KEY,
                source,
            },
            _ => TrustDecision::Untrusted,
        }
    }
}

fn names(value: Option<&Value>) -> impl Iterator<Item = String> + '_ {
    value
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_owned))
}

/// How to trust `name`, for `tine mcp list` and the start-up warning.
pub(crate) fn how_to_trust(name: &str) -> String {
    format!(
        "to start it, add \"{ENABLED_KEY}\": [\"{name}\"] (or \"{ENABLE_ALL_KEY}\": true) to .tine/settings.local.json or ~/.tine/settings.json, or run `tine mcp trust {name}`"
    )
}
