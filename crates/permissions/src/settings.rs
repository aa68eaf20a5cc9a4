//! The permission side of loaded settings. Configuration hands rules and `defaultMode` over as
//! the text the user wrote, with its file and line ([`SettingText`]); here they are parsed.
//! Fail closed: a deny or ask rule that does not parse is a fatal [`SettingsError::Rule`] (the
//! session must not start without it), an allow rule that does not parse or an unknown mode is
//! a warning and only that entry is dropped.

use tine_config::{LoadedSettings, RuleList, SettingText, SettingsError, SettingsSource};

use super::{PermissionMode, PermissionRule, RuleBehavior, RuleSource, SourcedRule};

/// The mode names `defaultMode` accepts, for the message about one it does not.
const KNOWN_MODES: &str = "default, acceptEdits, plan, bypassPermissions or dontAsk";

/// The rules and default mode of every source, parsed, and what could not be.
#[derive(Debug, Default)]
pub struct PermissionSettings {
    /// Every rule that parsed, each source's deny, then ask, then allow rules, lowest source
    /// first; the same rule twice in one list is kept once.
    pub rules: Vec<SourcedRule>,
    /// `permissions.defaultMode` of the highest source that sets a known one.
    pub default_mode: Option<(PermissionMode, SettingsSource)>,
    /// The entries that could not be understood, at their file and line: fatal for a deny or
    /// ask rule ([`SettingsError::is_fatal`]), warnings otherwise.
    pub errors: Vec<SettingsError>,
}

impl PermissionSettings {
    /// Parses the permission entries of every loaded source.
    pub fn read(loaded: &LoadedSettings) -> Self {
        let mut out = PermissionSettings::default();
        for layer in &loaded.layers {
            for list in RuleList::ALL {
                for text in layer.permissions.rules(list) {
                    match parse_rule(text, list) {
                        Ok(rule) => {
                            let rule = SourcedRule {
                                rule,
                                behavior: RuleBehavior::from(list),
                                source: RuleSource::Settings(layer.source),
                                base_dir: layer.base_dir.clone(),
                            };
                            if !out.rules.contains(&rule) {
                                out.rules.push(rule);
                            }
                        }
                        Err(error) => out.errors.push(error),
                    }
                }
            }
            if let Some(text) = &layer.permissions.default_mode {
                match parse_mode(text) {
                    // Higher sources come later and win.
                    Ok(mode) => out.default_mode = Some((mode, layer.source)),
                    Err(error) => out.errors.push(error),
                }
            }
        }
        out
    }
}

fn parse_rule(text: &SettingText, list: RuleList) -> Result<PermissionRule, SettingsError> {
    text.text
        .parse::<PermissionRule>()
        .map_err(|error| SettingsError::Rule {
            rule: Box::new(text.clone()),
            list,
            error: Box::new(error),
        })
}

/// A mode by its settings name, through the same serde names the engine uses.
fn parse_mode(text: &SettingText) -> Result<PermissionMode, SettingsError> {
    serde_json::from_value(serde_json::Value::String(text.text.clone())).map_err(|_| {
        SettingsError::UnknownMode {
            at: text.at.clone(),
            value: text.text.clone(),
            known: KNOWN_MODES,
        }
    })
}

#[cfg(test)]
#[path = "settings_tests.rs"]
mod tests;
