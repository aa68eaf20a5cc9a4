//! Settings sources and their precedence: user (`$TINE_HOME/settings.json`), project
//! (`<cwd>/.tine/settings.json`), local (`<cwd>/.tine/settings.local.json`), the `--settings`
//! flag (a path or inline JSON) and managed policy (`/etc/tine/managed-settings.json`), in
//! ascending precedence. Managed values beat everyone's; rules from every source are combined
//! and deny / ask rules are checked before any allow rule, so a managed deny cannot be undone.
//!
//! A Claude Code user's files are read too, never written: `~/.claude/settings.json` beside the
//! user source, `<cwd>/.claude/settings.json` and `settings.local.json` beside project and
//! local. Each sits just below tine's file of the same scope, so tine's wins where both set a
//! value, and the rules of both apply: a Claude Code user's deny rules work unchanged.
//!
//! Files are JSON with `//` comments and trailing commas allowed (`jsonc`). Each key is checked
//! on its own (`layer`); what is wrong is reported with the file and line (`error`). Fail
//! closed: a file that exists but cannot be read or parsed, or a `permissions.deny` or `ask`
//! list that is not a list of strings, is a fatal error ([`SettingsError::is_fatal`]) and a
//! session must not start; anything else costs only the bad key or element. Each source's JSON
//! object is kept, so upper layers read their own keys (`hooks`, `model`, ...) knowing which
//! source set them.
//!
//! Permission rules and `defaultMode` are kept as written ([`SettingText`]: the text, its key
//! and its file, line and column): this crate does not know their grammar. The permission
//! engine parses them and reports what it cannot understand as a [`SettingsError`] at that
//! place, fatal for a deny or ask rule, so the fail-closed rule holds across the two crates.
//!
//! Hooks are handed out the same way ([`HookSetting`]: event, matcher, type and command as
//! written, with file and line; the hook runner gives them meaning), and a `hooks` section
//! that cannot be read fully is fatal too: a hook may be a guard.
//!
//! Modules: `jsonc` (the tolerant parser), `layer` (checking one file, with `checker`'s
//! problems-so-far), `hooks` (the `hooks` object), `known_keys` (Claude Code's keys), `error`, `edit` (the one writer: a change to a
//! file in place, its comments and trailing commas kept, such as adding rules).

mod checker;
mod edit;
mod error;
mod hooks;
mod jsonc;
mod known_keys;
mod layer;

use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::Value;

pub use edit::{SettingsEdit, add_rules_to_file, edit_file, read_object};
pub use error::{Location, REFUSAL, SettingsError};
pub use hooks::{HookSetting, parse_hooks_file};
pub use layer::{PermissionsSettings, SettingText, SettingsLayer, parse_layer};

/// The managed policy file's usual place.
pub const MANAGED_SETTINGS_PATH: &str = "/etc/tine/managed-settings.json";

/// The three rule lists of `permissions`. Deny and ask lists restrict: what cannot be read of
/// them may have forbidden something, so it is fatal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RuleList {
    /// `permissions.allow`: calls that run without asking.
    Allow,
    /// `permissions.deny`: calls that never run.
    Deny,
    /// `permissions.ask`: calls that always ask.
    Ask,
}

impl RuleList {
    /// In the order rules are handed out: restrictions first.
    pub const ALL: [RuleList; 3] = [RuleList::Deny, RuleList::Ask, RuleList::Allow];

    /// The list's key in `permissions`.
    pub fn key(self) -> &'static str {
        match self {
            RuleList::Allow => "allow",
            RuleList::Deny => "deny",
            RuleList::Ask => "ask",
        }
    }

    /// Whether the list restricts (deny, ask): a problem in it is fatal.
    pub fn restricts(self) -> bool {
        match self {
            RuleList::Deny | RuleList::Ask => true,
            RuleList::Allow => false,
        }
    }
}

/// Where a settings layer comes from, in ascending precedence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SettingsSource {
    /// `~/.tine/settings.json` (and `~/.claude/settings.json`).
    User,
    /// `.tine/settings.json` in the project (and `.claude/settings.json`).
    Project,
    /// `.tine/settings.local.json`, not checked in (and `.claude/settings.local.json`).
    Local,
    /// The `--settings` flag.
    Flag,
    /// `/etc/tine/managed-settings.json`, set by an administrator; highest precedence.
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

/// Whose file a layer was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SettingsFormat {
    /// tine's own (`.tine/`, `$TINE_HOME`, `--settings`, managed).
    Tine,
    /// A Claude Code user's (`.claude/`, `~/.claude/`): read, never written.
    ClaudeCode,
}

/// The `--settings` flag's value: a file, or JSON given inline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FlagSettings {
    /// A settings file to read.
    File(PathBuf),
    /// Settings JSON given on the command line.
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
/// process environment (`crate::paths::tine_home` finds the tine home).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingsPaths {
    /// The session's working directory (the project).
    pub cwd: PathBuf,
    /// The user's settings file (`~/.tine/settings.json`).
    pub user: PathBuf,
    /// The project's shared settings file (`.tine/settings.json`).
    pub project: PathBuf,
    /// The project's local settings file (`.tine/settings.local.json`).
    pub local: PathBuf,
    /// The `--settings` flag's value, when given.
    pub flag: Option<FlagSettings>,
    /// The managed settings file (`/etc/tine/managed-settings.json` by default).
    pub managed: PathBuf,
    /// `~/.claude/settings.json`, when the user's home is known.
    pub claude_user: Option<PathBuf>,
    /// `<cwd>/.claude/settings.json`.
    pub claude_project: PathBuf,
    /// `<cwd>/.claude/settings.local.json`.
    pub claude_local: PathBuf,
    /// `--setting-sources`: of the user, project and local sources only these are read
    /// (`None`: all). Flag and managed settings are always read.
    pub only_sources: Option<Vec<SettingsSource>>,
}

/// One file (or inline JSON) to read, in precedence order.
struct SourceFile<'a> {
    source: SettingsSource,
    format: SettingsFormat,
    place: Place<'a>,
}

enum Place<'a> {
    File(&'a Path),
    Inline(&'a str),
}

impl SettingsPaths {
    /// The standard layout for a project at `cwd` and a tine home (`~/.tine`).
    pub fn new(cwd: &Path, tine_home: &Path) -> Self {
        let claude = cwd.join(".claude");
        SettingsPaths {
            cwd: cwd.to_path_buf(),
            user: tine_home.join("settings.json"),
            project: cwd.join(".tine").join("settings.json"),
            local: cwd.join(".tine").join("settings.local.json"),
            flag: None,
            managed: PathBuf::from(MANAGED_SETTINGS_PATH),
            claude_user: None,
            claude_project: claude.join("settings.json"),
            claude_local: claude.join("settings.local.json"),
            only_sources: None,
        }
    }

    /// Reading only `sources` of the user, project and local ones (`--setting-sources`).
    pub fn with_only_sources(mut self, sources: Vec<SettingsSource>) -> Self {
        self.only_sources = Some(sources);
        self
    }

    /// Whether `source`'s files are read.
    pub fn reads(&self, source: SettingsSource) -> bool {
        match source {
            SettingsSource::Flag | SettingsSource::Managed => true,
            SettingsSource::User | SettingsSource::Project | SettingsSource::Local => self
                .only_sources
                .as_ref()
                .is_none_or(|only| only.contains(&source)),
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

    /// With the user's home, so `~/.claude/settings.json` is read.
    pub fn with_user_home(mut self, home: &Path) -> Self {
        self.claude_user = Some(home.join(".claude").join("settings.json"));
        self
    }

    /// tine's file of a source, when it has one (inline flag settings have none). This is
    /// where answers are written; Claude Code's files never are.
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
        self.base_dir_for(source, self.path_of(source))
    }

    fn base_dir_for(&self, source: SettingsSource, file: Option<&Path>) -> PathBuf {
        match source {
            SettingsSource::Project | SettingsSource::Local => self.cwd.clone(),
            _ => file
                .and_then(Path::parent)
                .map_or_else(|| self.cwd.clone(), Path::to_path_buf),
        }
    }

    /// Every file to read, lowest precedence first: in each scope Claude Code's file comes
    /// just before tine's, so tine's wins.
    fn files(&self) -> Vec<SourceFile<'_>> {
        fn file(source: SettingsSource, format: SettingsFormat, path: &Path) -> SourceFile<'_> {
            SourceFile {
                source,
                format,
                place: Place::File(path),
            }
        }
        let mut files = Vec::with_capacity(8);
        if let Some(path) = &self.claude_user {
            files.push(file(SettingsSource::User, SettingsFormat::ClaudeCode, path));
        }
        files.push(file(SettingsSource::User, SettingsFormat::Tine, &self.user));
        files.push(file(
            SettingsSource::Project,
            SettingsFormat::ClaudeCode,
            &self.claude_project,
        ));
        files.push(file(
            SettingsSource::Project,
            SettingsFormat::Tine,
            &self.project,
        ));
        files.push(file(
            SettingsSource::Local,
            SettingsFormat::ClaudeCode,
            &self.claude_local,
        ));
        files.push(file(
            SettingsSource::Local,
            SettingsFormat::Tine,
            &self.local,
        ));
        match &self.flag {
            Some(FlagSettings::File(path)) => {
                files.push(file(SettingsSource::Flag, SettingsFormat::Tine, path));
            }
            Some(FlagSettings::Inline(json)) => files.push(SourceFile {
                source: SettingsSource::Flag,
                format: SettingsFormat::Tine,
                place: Place::Inline(json),
            }),
            None => {}
        }
        files.push(file(
            SettingsSource::Managed,
            SettingsFormat::Tine,
            &self.managed,
        ));
        files.retain(|file| self.reads(file.source));
        files
    }
}

/// Every source that loaded, lowest precedence first, and the problems met on the way (fatal
/// ones and warnings: see [`SettingsError::is_fatal`]).
#[derive(Debug, Default)]
pub struct LoadedSettings {
    /// The sources that loaded, lowest precedence first.
    pub layers: Vec<SettingsLayer>,
    /// What went wrong on the way; fatal ones and warnings (see [`SettingsError::is_fatal`]).
    pub errors: Vec<SettingsError>,
}

/// Load every source. A missing file is skipped silently, except the one `--settings` names.
/// Every problem is in `errors`; what could be read of a damaged file is kept.
pub fn load(paths: &SettingsPaths) -> LoadedSettings {
    let mut loaded = LoadedSettings::default();
    for file in paths.files() {
        let (path, text) = match file.place {
            Place::Inline(json) => (None, json.to_owned()),
            Place::File(path) => match std::fs::read_to_string(path) {
                Ok(text) => (Some(path), text),
                Err(err)
                    if err.kind() == std::io::ErrorKind::NotFound
                        && file.source != SettingsSource::Flag =>
                {
                    continue;
                }
                Err(source) => {
                    loaded.errors.push(SettingsError::Read {
                        at: Location::file(layer::label(Some(path))),
                        source,
                    });
                    continue;
                }
            },
        };
        let base_dir = paths.base_dir_for(file.source, path);
        if let Some(mut layer) = parse_layer(file.source, path, base_dir, &text, &mut loaded.errors)
        {
            layer.format = file.format;
            loaded.layers.push(layer);
        }
    }
    for error in &loaded.errors {
        tracing::warn!(%error, fatal = error.is_fatal(), "settings problem");
    }
    loaded
}

impl LoadedSettings {
    /// The problems that must stop a session: a restriction may be among what was not read.
    pub fn fatal_errors(&self) -> impl Iterator<Item = &SettingsError> {
        self.errors.iter().filter(|e| e.is_fatal())
    }

    /// The problems that cost only the key or element concerned.
    pub fn warnings(&self) -> impl Iterator<Item = &SettingsError> {
        self.errors.iter().filter(|e| !e.is_fatal())
    }

    /// tine's own layer of one source, if it loaded.
    pub fn layer(&self, source: SettingsSource) -> Option<&SettingsLayer> {
        self.layer_from(source, SettingsFormat::Tine)
    }

    /// The layer of one source read from tine's or Claude Code's file.
    pub fn layer_from(
        &self,
        source: SettingsSource,
        format: SettingsFormat,
    ) -> Option<&SettingsLayer> {
        self.layers
            .iter()
            .find(|l| l.source == source && l.format == format)
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

    /// The file (or source) that sets `permissions.disableBypassPermissionsMode`, if any does:
    /// bypassPermissions may then not be used, whoever asks for it.
    pub fn bypass_disabled_by(&self) -> Option<String> {
        self.layers
            .iter()
            .rev()
            .find(|l| l.permissions.disable_bypass_permissions_mode)
            .map(|l| {
                l.path
                    .as_deref()
                    .map_or_else(|| l.source.to_string(), |p| p.display().to_string())
            })
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
}
