//! Claude Code's plugins as files: what a plugin, a marketplace and the record of installed
//! plugins say, where they are kept, and which plugins the settings enable. Nothing here
//! loads a plugin's parts or runs anything (the session does the one, nobody at install time
//! the other); every reader names the file it could not use.
//!
//! - A plugin is a folder: `.claude-plugin/plugin.json` ([`PluginManifest`], optional: without
//!   it the folder's name is the plugin's), `commands/`, `agents/`, `skills/`,
//!   `hooks/hooks.json` and `.mcp.json`; the manifest's `commands`, `agents`, `skills`,
//!   `hooks` and `mcpServers` add paths (each `./` inside the plugin) or inline values.
//! - A marketplace is a folder (a directory, or a git repository's checkout) with
//!   `.claude-plugin/marketplace.json` ([`MarketplaceManifest`]): its name, owner and plugins,
//!   each with a [`PluginSource`].
//! - A store ([`PluginStore`]) is where installed plugins are kept, in Claude Code's layout:
//!   `known_marketplaces.json`, `installed_plugins.json` (version 2), `marketplaces/NAME/`
//!   (git clones) and `cache/MARKET/PLUGIN/VERSION/` (the copies that load). tine's is
//!   `TINE_HOME/plugins/` (its own state: 0700/0600); Claude Code's `~/.claude/plugins/` is
//!   read, never written.
//! - Settings: `enabledPlugins` (`{"name@marketplace": true}`; [`enabled_plugins`], the
//!   highest-precedence value of each id with its source, since a project's is a folder's own
//!   part) and `extraKnownMarketplaces` ([`extra_marketplaces`]).

use std::collections::BTreeMap;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::settings::{LoadedSettings, SettingsSource};

mod store;

pub use store::{Installation, KnownMarketplace, MarketplaceSource, PluginStore, StoreOwner};

/// A plugin's manifest, inside its folder.
pub const MANIFEST_PATH: &str = ".claude-plugin/plugin.json";
/// A marketplace's manifest, inside its folder.
pub const MARKETPLACE_PATH: &str = ".claude-plugin/marketplace.json";
/// The settings key of enabled plugins.
pub const ENABLED_KEY: &str = "enabledPlugins";
/// The settings key of marketplaces declared in settings.
pub const EXTRA_MARKETPLACES_KEY: &str = "extraKnownMarketplaces";

/// A file of a plugin or marketplace that cannot be used, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {message}", .path.display())]
pub struct PluginFileError {
    /// The file (or folder).
    pub path: PathBuf,
    /// What is wrong, in words a user can act on.
    pub message: String,
}

impl PluginFileError {
    /// `path`: `message`.
    pub fn new(path: impl Into<PathBuf>, message: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            message: message.into(),
        }
    }
}

/// `name@marketplace`, how settings and the install record name an installed plugin.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PluginId {
    /// The plugin's name.
    pub name: String,
    /// The marketplace it was installed from.
    pub marketplace: String,
}

impl PluginId {
    /// `name@marketplace` (both parts non-empty), else `None`.
    pub fn parse(text: &str) -> Option<Self> {
        let (name, marketplace) = text.rsplit_once('@')?;
        (!name.is_empty() && !marketplace.is_empty()).then(|| Self {
            name: name.to_owned(),
            marketplace: marketplace.to_owned(),
        })
    }
}

impl fmt::Display for PluginId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}@{}", self.name, self.marketplace)
    }
}

/// Whether `name` may name a plugin or marketplace: letters, digits, `-`, `_`, `.`, not
/// starting with `.` (it becomes a folder name and part of `name:command`).
pub fn is_valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

// ---------------------------------------------------------------------------------------
// plugin.json

/// A component a manifest adds: a path inside the plugin, or the value itself.
#[derive(Debug, Clone, PartialEq)]
pub enum ComponentRef {
    /// `./path` inside the plugin.
    Path(String),
    /// The value written in the manifest (a hooks object, an `mcpServers` object).
    Inline(Value),
}

/// `.claude-plugin/plugin.json`, as far as tine uses it; other keys (`homepage`, `license`,
/// `outputStyles`, ...) are Claude Code's and ignored.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PluginManifest {
    /// The plugin's name (namespaces its commands: `/name:command`).
    pub name: String,
    /// `version`.
    pub version: Option<String>,
    /// `description`.
    pub description: Option<String>,
    /// `author` (its `name` when an object).
    pub author: Option<String>,
    /// Command files or folders beyond `commands/`.
    pub commands: Vec<String>,
    /// Agent files or folders beyond `agents/`.
    pub agents: Vec<String>,
    /// Skill folders (or folders of them) beyond `skills/`.
    pub skills: Vec<String>,
    /// Hooks files or inline hooks beyond `hooks/hooks.json`.
    pub hooks: Vec<ComponentRef>,
    /// MCP server files or inline servers beyond `.mcp.json`.
    pub mcp_servers: Vec<ComponentRef>,
}

/// The manifest of the plugin at `root`: its `.claude-plugin/plugin.json`, or, without one, a
/// manifest naming the plugin `default_name` (Claude Code loads such a folder's default
/// layout). A manifest that cannot be read or parsed is an error naming it.
pub fn read_manifest(root: &Path, default_name: &str) -> Result<PluginManifest, PluginFileError> {
    let path = root.join(MANIFEST_PATH);
    match std::fs::read_to_string(&path) {
        Ok(text) => parse_manifest(&path, &text),
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(PluginManifest {
            name: default_name.to_owned(),
            ..PluginManifest::default()
        }),
        Err(error) => Err(PluginFileError::new(
            path,
            format!("cannot be read: {error}"),
        )),
    }
}

/// Parses a `plugin.json`.
pub fn parse_manifest(path: &Path, text: &str) -> Result<PluginManifest, PluginFileError> {
    manifest_from_value(path, &parse_json(path, text)?)
}

/// A plugin's JSON file (`text`, read from `path`) parsed; an error names the file and the
/// place where it stops being JSON.
pub fn parse_json(path: &Path, text: &str) -> Result<Value, PluginFileError> {
    serde_json::from_str(text).map_err(|e| {
        PluginFileError::new(
            path,
            format!(
                "is not valid JSON (line {}, column {}): {e}",
                e.line(),
                e.column()
            ),
        )
    })
}

/// A manifest from its JSON (also a marketplace entry's fields, for `strict: false`).
pub fn manifest_from_value(path: &Path, value: &Value) -> Result<PluginManifest, PluginFileError> {
    let bad = |message: String| PluginFileError::new(path, message);
    let Value::Object(map) = value else {
        return Err(bad("must be a JSON object".to_owned()));
    };
    let name = match map.get("name") {
        Some(Value::String(name)) if is_valid_name(name) => name.clone(),
        Some(Value::String(name)) => {
            return Err(bad(format!(
                "`name` \"{name}\" is not a plugin name (letters, digits, `-`, `_`, `.`)"
            )));
        }
        Some(_) => return Err(bad("`name` must be a string".to_owned())),
        None => return Err(bad("has no `name`".to_owned())),
    };
    let text = |key: &str| -> Result<Option<String>, PluginFileError> {
        match map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(bad(format!("`{key}` must be a string"))),
        }
    };
    let author = match map.get("author") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Object(o)) => o.get("name").and_then(Value::as_str).map(str::to_owned),
        Some(_) => return Err(bad("`author` must be an object with `name`".to_owned())),
    };
    let paths = |key: &str| -> Result<Vec<String>, PluginFileError> {
        match map.get(key) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::String(s)) => Ok(vec![checked_path(path, key, s)?]),
            Some(Value::Array(items)) => items
                .iter()
                .map(|item| match item {
                    Value::String(s) => checked_path(path, key, s),
                    _ => Err(bad(format!("`{key}` must hold paths (strings)"))),
                })
                .collect(),
            Some(_) => Err(bad(format!("`{key}` must be a path or a list of paths"))),
        }
    };
    let components = |key: &str| -> Result<Vec<ComponentRef>, PluginFileError> {
        let one = |item: &Value| match item {
            Value::String(s) => checked_path(path, key, s).map(ComponentRef::Path),
            Value::Object(_) => Ok(ComponentRef::Inline(item.clone())),
            _ => Err(bad(format!("`{key}` must hold paths or objects"))),
        };
        match map.get(key) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(items)) => items.iter().map(one).collect(),
            Some(item) => one(item).map(|c| vec![c]),
        }
    };
    Ok(PluginManifest {
        name,
        version: text("version")?,
        description: text("description")?,
        author,
        commands: paths("commands")?,
        agents: paths("agents")?,
        skills: paths("skills")?,
        hooks: components("hooks")?,
        mcp_servers: components("mcpServers")?,
    })
}

/// A component path: relative, starting `./`, never leaving the plugin (Claude Code's rule).
fn checked_path(file: &Path, key: &str, text: &str) -> Result<String, PluginFileError> {
    let inside = text.starts_with("./")
        && !Path::new(text)
            .components()
            .any(|c| matches!(c, std::path::Component::ParentDir));
    if inside {
        Ok(text.to_owned())
    } else {
        Err(PluginFileError::new(
            file,
            format!("`{key}` path \"{text}\" must start with `./` and stay inside the plugin"),
        ))
    }
}

// ---------------------------------------------------------------------------------------
// marketplace.json

/// Where a marketplace's plugin comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PluginSource {
    /// A folder inside the marketplace (`"./plugins/name"`).
    Relative(String),
    /// A git repository (`{"source": "github", "repo": "o/r"}`, `{"source": "url" | "git",
    /// "url": ...}`), at `git_ref` (a branch or tag) and `sha` when given, in `path` when it
    /// is a folder of the repository (`git-subdir`).
    Git {
        /// What `git clone` is given.
        url: String,
        /// A branch or tag.
        git_ref: Option<String>,
        /// A commit.
        sha: Option<String>,
        /// The plugin's folder inside the repository.
        path: Option<String>,
    },
    /// A source tine cannot fetch (`npm`, `pip`, ...), as written.
    Unsupported(String),
}

/// One plugin a marketplace lists.
#[derive(Debug, Clone, PartialEq)]
pub struct MarketplaceEntry {
    /// The plugin's name.
    pub name: String,
    /// Where it comes from.
    pub source: PluginSource,
    /// `description`.
    pub description: Option<String>,
    /// `version`.
    pub version: Option<String>,
    /// `strict` (default true): the plugin's own manifest is the authority; `false`: the entry
    /// is the manifest.
    pub strict: bool,
    /// The entry as written (its component fields serve as the manifest when not strict).
    pub raw: Value,
}

/// `.claude-plugin/marketplace.json`.
#[derive(Debug, Clone, PartialEq)]
pub struct MarketplaceManifest {
    /// The marketplace's name (the `@marketplace` of its plugins).
    pub name: String,
    /// `owner.name`.
    pub owner: Option<String>,
    /// `metadata.pluginRoot`: the folder relative sources start from.
    pub plugin_root: Option<String>,
    /// Its plugins.
    pub plugins: Vec<MarketplaceEntry>,
}

impl MarketplaceManifest {
    /// The entry of plugin `name`.
    pub fn plugin(&self, name: &str) -> Option<&MarketplaceEntry> {
        self.plugins.iter().find(|p| p.name == name)
    }
}

/// The marketplace whose folder is `root` (its `.claude-plugin/marketplace.json`).
pub fn read_marketplace(root: &Path) -> Result<MarketplaceManifest, PluginFileError> {
    let path = root.join(MARKETPLACE_PATH);
    let text = std::fs::read_to_string(&path).map_err(|e| {
        PluginFileError::new(
            &path,
            format!("cannot be read: {e} (is this a marketplace?)"),
        )
    })?;
    parse_marketplace(&path, &text)
}

/// Parses a `marketplace.json`.
pub fn parse_marketplace(path: &Path, text: &str) -> Result<MarketplaceManifest, PluginFileError> {
    let bad = |message: String| PluginFileError::new(path, message);
    let value = parse_json(path, text)?;
    let Value::Object(map) = &value else {
        return Err(bad("must be a JSON object".to_owned()));
    };
    let name = match map.get("name").and_then(Value::as_str) {
        Some(name) if is_valid_name(name) => name.to_owned(),
        Some(name) => {
            return Err(bad(format!(
                "`name` \"{name}\" is not a marketplace name (letters, digits, `-`, `_`, `.`)"
            )));
        }
        None => return Err(bad("has no `name` (a string)".to_owned())),
    };
    let owner = match map.get("owner") {
        Some(Value::Object(o)) => o.get("name").and_then(Value::as_str).map(str::to_owned),
        Some(Value::String(s)) => Some(s.clone()),
        _ => None,
    };
    let plugin_root = map
        .get("metadata")
        .and_then(|m| m.get("pluginRoot"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let Some(Value::Array(items)) = map.get("plugins") else {
        return Err(bad("has no `plugins` list".to_owned()));
    };
    let mut plugins = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let entry_name = item.get("name").and_then(Value::as_str).unwrap_or_default();
        if !is_valid_name(entry_name) {
            return Err(bad(format!(
                "`plugins[{i}].name` \"{entry_name}\" is not a plugin name"
            )));
        }
        let source = match item.get("source") {
            Some(Value::String(s)) => PluginSource::Relative(s.clone()),
            Some(Value::Object(o)) => object_source(o),
            _ => {
                return Err(bad(format!(
                    "`plugins[{i}].source` (plugin {entry_name}) must be a path or an object"
                )));
            }
        };
        let text = |key: &str| item.get(key).and_then(Value::as_str).map(str::to_owned);
        plugins.push(MarketplaceEntry {
            name: entry_name.to_owned(),
            source,
            description: text("description"),
            version: text("version"),
            strict: item.get("strict").and_then(Value::as_bool).unwrap_or(true),
            raw: item.clone(),
        });
    }
    Ok(MarketplaceManifest {
        name,
        owner,
        plugin_root,
        plugins,
    })
}

fn object_source(o: &Map<String, Value>) -> PluginSource {
    let text = |key: &str| o.get(key).and_then(Value::as_str).map(str::to_owned);
    let git = |url: String| PluginSource::Git {
        url,
        git_ref: text("ref"),
        sha: text("sha"),
        path: text("path"),
    };
    match text("source").as_deref() {
        Some("github") => match text("repo") {
            Some(repo) => git(format!("https://github.com/{repo}.git")),
            None => PluginSource::Unsupported("github without `repo`".to_owned()),
        },
        Some("url" | "git" | "git-subdir") => match text("url") {
            Some(url) => git(url),
            None => PluginSource::Unsupported("a git source without `url`".to_owned()),
        },
        Some(other) => PluginSource::Unsupported(other.to_owned()),
        None => PluginSource::Unsupported(Value::Object(o.clone()).to_string()),
    }
}

// ---------------------------------------------------------------------------------------
// Settings

/// One plugin id of `enabledPlugins`, as the highest-precedence source says it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnabledPlugin {
    /// `name@marketplace` as written.
    pub id: String,
    /// `true`: enabled; `false`: disabled (a lower source's `true` is overridden).
    pub enabled: bool,
    /// The source that says so.
    pub source: SettingsSource,
    /// Its file.
    pub file: String,
}

/// `enabledPlugins` of every loaded source merged: for each id the highest-precedence value
/// (so a local `false` turns off what the project enables), sorted by id. A value other than
/// `true` or `false` is skipped.
pub fn enabled_plugins(loaded: &LoadedSettings) -> Vec<EnabledPlugin> {
    let mut merged: BTreeMap<String, EnabledPlugin> = BTreeMap::new();
    for layer in &loaded.layers {
        let Some(Value::Object(map)) = layer.raw.get(ENABLED_KEY) else {
            continue;
        };
        for (id, value) in map {
            let Some(enabled) = value.as_bool() else {
                continue;
            };
            merged.insert(
                id.clone(),
                EnabledPlugin {
                    id: id.clone(),
                    enabled,
                    source: layer.source,
                    file: layer.path.as_deref().map_or_else(
                        || "--settings (inline JSON)".to_owned(),
                        |p| p.display().to_string(),
                    ),
                },
            );
        }
    }
    merged.into_values().collect()
}

/// `extraKnownMarketplaces` of every loaded source: name, source, and the settings source
/// (the highest one of a name wins).
pub fn extra_marketplaces(
    loaded: &LoadedSettings,
) -> Vec<(String, MarketplaceSource, SettingsSource)> {
    let mut merged: BTreeMap<String, (MarketplaceSource, SettingsSource)> = BTreeMap::new();
    for layer in &loaded.layers {
        let Some(Value::Object(map)) = layer.raw.get(EXTRA_MARKETPLACES_KEY) else {
            continue;
        };
        for (name, entry) in map {
            if let Some(source) = entry.get("source") {
                merged.insert(
                    name.clone(),
                    (MarketplaceSource::from_json(source), layer.source),
                );
            }
        }
    }
    merged
        .into_iter()
        .map(|(name, (source, from))| (name, source, from))
        .collect()
}

#[cfg(test)]
#[path = "plugins_tests.rs"]
mod tests;
