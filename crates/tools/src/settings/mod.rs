//! Settings sources and their precedence: user (`$TINE_HOME/settings.json`), project
//! (`<cwd>/.tine/settings.json`), local (`<cwd>/.tine/settings.local.json`), the `--settings`
//! flag (a path or inline JSON) and managed policy (`/etc/tine/managed-settings.json`), in
//! ascending precedence. Managed values beat everyone's; rules from every source are combined
//! and deny / ask rules are checked before any allow rule, so a managed deny cannot be undone.
//!
//! Each source's raw JSON object is kept, so upper layers read their own keys (`hooks`,
//! `model`, `env`, ...) knowing which source set them; `permissions` has typed accessors.
//! A malformed file is reported with its path and line and the other sources still load.

mod persist;

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::permissions::{
    PermissionMode, PermissionRule, RuleBehavior, RuleParseError, RuleSource, SourcedRule,
};

pub use persist::add_rules_to_file;

/// The managed policy file's usual place.
pub const MANAGED_SETTINGS_PATH: &str = "/etc/tine/managed-settings.json";

/// Where a settings layer comes from, in ascending precedence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SettingsSource {
    User,
    Project,
    Local,
    Flag,
    Managed,
}

impl SettingsSource {
    /// Every source, lowest precedence first.
    pub const ALL: [SettingsSource; 5] = [
        SettingsSource::User,
        SettingsSource::Project,
        SettingsSource::Local,
        SettingsSource::Flag,
        SettingsSource::Managed,
    ];

    /// Claude Code's name for the source (`userSettings`, `policySettings`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            SettingsSource::User => "userSettings",
            SettingsSource::Project => "projectSettings",
            SettingsSource::Local => "localSettings",
            SettingsSource::Flag => "flagSettings",
            SettingsSource::Managed => "policySettings",
        }
    }
}

impl fmt::Display for SettingsSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The `--settings` flag's value: a file, or JSON given inline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FlagSettings {
    File(PathBuf),
    Inline(String),
}

impl FlagSettings {
    /// Inline when the argument starts with `{`, a path otherwise.
    pub fn from_arg(arg: &str) -> Self {
        if arg.trim_start().starts_with('{') {
            FlagSettings::Inline(arg.to_string())
        } else {
            FlagSettings::File(PathBuf::from(arg))
        }
    }
}

/// Where each source lives. Tests build it with explicit paths; nothing here reads the
/// process environment except `default_tine_home`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingsPaths {
    /// The session's working directory (the project).
    pub cwd: PathBuf,
    pub user: PathBuf,
    pub project: PathBuf,
    pub local: PathBuf,
    pub flag: Option<FlagSettings>,
    pub managed: PathBuf,
}

impl SettingsPaths {
    /// The standard layout for a project at `cwd` and a tine home (`~/.tine`).
    pub fn new(cwd: &Path, tine_home: &Path) -> Self {
        SettingsPaths {
            cwd: cwd.to_path_buf(),
            user: tine_home.join("settings.json"),
            project: cwd.join(".tine").join("settings.json"),
            local: cwd.join(".tine").join("settings.local.json"),
            flag: None,
            managed: PathBuf::from(MANAGED_SETTINGS_PATH),
        }
    }

    /// With the `--settings` flag's value.
    pub fn with_flag(mut self, flag: FlagSettings) -> Self {
        self.flag = Some(flag);
        self
    }

    /// With the managed policy file somewhere else (tests).
    pub fn with_managed(mut self, path: impl Into<PathBuf>) -> Self {
        self.managed = path.into();
        self
    }

    /// The file of a source, when it has one (inline flag settings have none).
    pub fn path_of(&self, source: SettingsSource) -> Option<&Path> {
        match source {
            SettingsSource::User => Some(&self.user),
            SettingsSource::Project => Some(&self.project),
            SettingsSource::Local => Some(&self.local),
            SettingsSource::Flag => match &self.flag {
                Some(FlagSettings::File(path)) => Some(path),
                Some(FlagSettings::Inline(_)) | None => None,
            },
            SettingsSource::Managed => Some(&self.managed),
        }
    }

    /// The directory `/path` rules of a source are relative to: the project for project and
    /// local settings (their file sits in `<project>/.tine/`), the file's directory otherwise.
    pub fn base_dir_of(&self, source: SettingsSource) -> PathBuf {
        match source {
            SettingsSource::Project | SettingsSource::Local => self.cwd.clone(),
            other => self
                .path_of(other)
                .and_then(Path::parent)
                .map_or_else(|| self.cwd.clone(), Path::to_path_buf),
        }
    }
}

/// `$TINE_HOME`, or `~/.tine`.
pub fn default_tine_home() -> Option<PathBuf> {
    if let Some(home) = std::env::var_os("TINE_HOME").filter(|h| !h.is_empty()) {
        return Some(PathBuf::from(home));
    }
    std::env::home_dir().map(|home| home.join(".tine"))
}

/// Why settings could not be read or written. Messages name the file (and line, for JSON).
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    #[error("cannot read settings file {path}: {source}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}:{line}:{column}: invalid settings JSON: {message}")]
    Syntax {
        path: String,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{path}: settings must be a JSON object, found {found}")]
    NotAnObject { path: String, found: String },
    #[error("{path}:{line}:{column}: `permissions` is malformed: {message}")]
    Permissions {
        path: String,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{path}: invalid permission rule `{rule}` in permissions.{list}: {error}")]
    Rule {
        path: String,
        rule: String,
        list: &'static str,
        #[source]
        error: RuleParseError,
    },
    #[error("{path}: `permissions.{key}` must be {expected}; fix it by hand before adding rules")]
    Shape {
        path: String,
        key: String,
        expected: &'static str,
    },
    #[error("cannot write settings file {path}: {source}")]
    Write {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

/// The typed `permissions` object of one source.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PermissionsSettings {
    #[serde(default)]
    pub allow: Vec<String>,
    #[serde(default)]
    pub deny: Vec<String>,
    #[serde(default)]
    pub ask: Vec<String>,
    #[serde(default)]
    pub default_mode: Option<PermissionMode>,
    #[serde(default)]
    pub additional_directories: Vec<String>,
}

impl PermissionsSettings {
    /// The rule strings of one behavior.
    pub fn rules(&self, behavior: RuleBehavior) -> &[String] {
        match behavior {
            RuleBehavior::Allow => &self.allow,
            RuleBehavior::Deny => &self.deny,
            RuleBehavior::Ask => &self.ask,
        }
    }
}

#[derive(Deserialize)]
struct TypedSettings {
    #[serde(default)]
    permissions: Option<PermissionsSettings>,
}

/// One loaded source.
#[derive(Debug, Clone, PartialEq)]
pub struct SettingsLayer {
    pub source: SettingsSource,
    /// The file, or `None` for inline `--settings` JSON.
    pub path: Option<PathBuf>,
    /// The whole JSON object as written.
    pub raw: Map<String, Value>,
    /// `permissions`, typed (empty when malformed; the error is in `LoadedSettings::errors`).
    pub permissions: PermissionsSettings,
    /// Root of this layer's `/path` rules.
    pub base_dir: PathBuf,
}

/// Every source that loaded, lowest precedence first, and the errors met on the way.
#[derive(Debug, Default)]
pub struct LoadedSettings {
    pub layers: Vec<SettingsLayer>,
    pub errors: Vec<SettingsError>,
}

fn label(path: Option<&Path>) -> String {
    path.map_or_else(
        || "--settings (inline JSON)".to_string(),
        |p| p.display().to_string(),
    )
}

/// Parse one source's text into a layer; errors name `path` and the line.
pub fn parse_layer(
    source: SettingsSource,
    path: Option<&Path>,
    base_dir: PathBuf,
    text: &str,
    errors: &mut Vec<SettingsError>,
) -> Option<SettingsLayer> {
    let value: Value = match serde_json::from_str(text) {
        Ok(value) => value,
        Err(err) => {
            errors.push(SettingsError::Syntax {
                path: label(path),
                line: err.line(),
                column: err.column(),
                message: err.to_string(),
            });
            return None;
        }
    };
    let raw = match value {
        Value::Object(map) => map,
        other => {
            errors.push(SettingsError::NotAnObject {
                path: label(path),
                found: json_type(&other).to_string(),
            });
            return None;
        }
    };
    let permissions = match serde_json::from_str::<TypedSettings>(text) {
        Ok(typed) => typed.permissions.unwrap_or_default(),
        Err(err) => {
            errors.push(SettingsError::Permissions {
                path: label(path),
                line: err.line(),
                column: err.column(),
                message: err.to_string(),
            });
            PermissionsSettings::default()
        }
    };
    Some(SettingsLayer {
        source,
        path: path.map(Path::to_path_buf),
        raw,
        permissions,
        base_dir,
    })
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Load every source. Missing files are skipped silently; unreadable or malformed ones are
/// reported in `errors` and skipped, the others still load.
pub fn load(paths: &SettingsPaths) -> LoadedSettings {
    let mut loaded = LoadedSettings::default();
    for source in SettingsSource::ALL {
        let base_dir = paths.base_dir_of(source);
        let (path, text) = match (source, &paths.flag) {
            (SettingsSource::Flag, None) => continue,
            (SettingsSource::Flag, Some(FlagSettings::Inline(json))) => (None, json.clone()),
            _ => {
                let Some(path) = paths.path_of(source) else {
                    continue;
                };
                match std::fs::read_to_string(path) {
                    Ok(text) => (Some(path), text),
                    Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                        if source == SettingsSource::Flag {
                            loaded.errors.push(SettingsError::Read {
                                path: label(Some(path)),
                                source: err,
                            });
                        }
                        continue;
                    }
                    Err(err) => {
                        loaded.errors.push(SettingsError::Read {
                            path: label(Some(path)),
                            source: err,
                        });
                        continue;
                    }
                }
            }
        };
        if let Some(layer) = parse_layer(source, path, base_dir, &text, &mut loaded.errors) {
            loaded.layers.push(layer);
        }
    }
    for error in &loaded.errors {
        tracing::warn!(%error, "settings source skipped");
    }
    loaded
}

impl LoadedSettings {
    /// The layer of one source, if it loaded.
    pub fn layer(&self, source: SettingsSource) -> Option<&SettingsLayer> {
        self.layers.iter().find(|l| l.source == source)
    }

    /// A top-level key from the highest-precedence source that sets it.
    pub fn get(&self, key: &str) -> Option<(&Value, SettingsSource)> {
        self.get_excluding(key, &[])
    }

    /// Like `get`, ignoring some sources (keys a project must not be able to set).
    pub fn get_excluding(
        &self,
        key: &str,
        excluded: &[SettingsSource],
    ) -> Option<(&Value, SettingsSource)> {
        self.layers
            .iter()
            .rev()
            .filter(|l| !excluded.contains(&l.source))
            .find_map(|l| l.raw.get(key).map(|v| (v, l.source)))
    }

    /// `autoMemoryDirectory`, never from project settings: a cloned repository must not be able
    /// to point memory writes somewhere else.
    pub fn auto_memory_directory(&self) -> Option<(PathBuf, SettingsSource)> {
        self.get_excluding("autoMemoryDirectory", &[SettingsSource::Project])
            .and_then(|(v, source)| v.as_str().map(|s| (PathBuf::from(s), source)))
    }

    /// `autoMemoryEnabled` from the highest source that sets it.
    pub fn auto_memory_enabled(&self) -> Option<bool> {
        self.get("autoMemoryEnabled").and_then(|(v, _)| v.as_bool())
    }

    /// `permissions.defaultMode` from the highest source that sets it.
    pub fn default_mode(&self) -> Option<(PermissionMode, SettingsSource)> {
        self.layers
            .iter()
            .rev()
            .find_map(|l| l.permissions.default_mode.map(|m| (m, l.source)))
    }

    /// `permissions.additionalDirectories` of every source, resolved against the source's base
    /// directory (`~/` against `home`).
    pub fn additional_directories(&self, home: Option<&Path>) -> Vec<(PathBuf, SettingsSource)> {
        let mut out: Vec<(PathBuf, SettingsSource)> = Vec::new();
        for layer in &self.layers {
            for dir in &layer.permissions.additional_directories {
                let path = match (dir.strip_prefix("~/"), home) {
                    (Some(rest), Some(home)) => home.join(rest),
                    _ => layer.base_dir.join(dir),
                };
                if !out.iter().any(|(p, _)| *p == path) {
                    out.push((path, layer.source));
                }
            }
        }
        out
    }

    /// Every permission rule of every source, parsed; unparseable rules are reported and skipped.
    pub fn permission_rules(&self) -> (Vec<SourcedRule>, Vec<SettingsError>) {
        let mut rules = Vec::new();
        let mut errors = Vec::new();
        for layer in &self.layers {
            for behavior in [RuleBehavior::Deny, RuleBehavior::Ask, RuleBehavior::Allow] {
                for text in layer.permissions.rules(behavior) {
                    match text.parse::<PermissionRule>() {
                        Ok(rule) => rules.push(SourcedRule {
                            rule,
                            behavior,
                            source: RuleSource::Settings(layer.source),
                            base_dir: layer.base_dir.clone(),
                        }),
                        Err(error) => errors.push(SettingsError::Rule {
                            path: label(layer.path.as_deref()),
                            rule: text.clone(),
                            list: behavior.key(),
                            error,
                        }),
                    }
                }
            }
        }
        (rules, errors)
    }
}

#[cfg(test)]
#[path = "mod_tests.rs"]
mod tests;
