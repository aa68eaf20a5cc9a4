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

use serde_json::{Map, Value, json};

use crate::private_fs;
use crate::settings::{LoadedSettings, SettingsSource};

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
    let value: Value = serde_json::from_str(text).map_err(|e| {
        PluginFileError::new(
            path,
            format!(
                "is not valid JSON (line {}, column {}): {e}",
                e.line(),
                e.column()
            ),
        )
    })?;
    manifest_from_value(path, &value)
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
    let value: Value = serde_json::from_str(text).map_err(|e| {
        bad(format!(
            "is not valid JSON (line {}, column {}): {e}",
            e.line(),
            e.column()
        ))
    })?;
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
// Stores: known_marketplaces.json and installed_plugins.json

/// Whose store it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreOwner {
    /// `TINE_HOME/plugins`: tine's own, written by `tine plugin`.
    Tine,
    /// `~/.claude/plugins`: Claude Code's, only read.
    ClaudeCode,
}

/// Where a marketplace's catalog comes from (Claude Code's `source` objects).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MarketplaceSource {
    /// `{"source": "directory", "path"}`: a local folder, read in place.
    Directory(PathBuf),
    /// `{"source": "file", "path"}`: a local `marketplace.json`.
    File(PathBuf),
    /// `{"source": "git", "url"}`: cloned into the store's `marketplaces/NAME`.
    Git(String),
    /// `{"source": "github", "repo"}`: `https://github.com/REPO.git`, cloned.
    Github(String),
    /// A source tine does not fetch (`url` of a bare JSON file, ...), as written.
    Other(Value),
}

impl MarketplaceSource {
    /// From Claude Code's JSON.
    pub fn from_json(value: &Value) -> Self {
        let text = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_owned);
        match (
            text("source").as_deref(),
            text("path"),
            text("url"),
            text("repo"),
        ) {
            (Some("directory"), Some(path), ..) => Self::Directory(path.into()),
            (Some("file"), Some(path), ..) => Self::File(path.into()),
            (Some("git"), _, Some(url), _) => Self::Git(url),
            (Some("github"), _, _, Some(repo)) => Self::Github(repo),
            _ => Self::Other(value.clone()),
        }
    }

    /// As Claude Code writes it.
    pub fn to_json(&self) -> Value {
        match self {
            Self::Directory(path) => json!({"source": "directory", "path": path}),
            Self::File(path) => json!({"source": "file", "path": path}),
            Self::Git(url) => json!({"source": "git", "url": url}),
            Self::Github(repo) => json!({"source": "github", "repo": repo}),
            Self::Other(value) => value.clone(),
        }
    }

    /// For people: `Folder (/path)`, `git https://...`.
    pub fn describe(&self) -> String {
        match self {
            Self::Directory(path) => format!("folder {}", path.display()),
            Self::File(path) => format!("file {}", path.display()),
            Self::Git(url) => format!("git {url}"),
            Self::Github(repo) => format!("github {repo}"),
            Self::Other(value) => value.to_string(),
        }
    }
}

/// One entry of `known_marketplaces.json`.
#[derive(Debug, Clone, PartialEq)]
pub struct KnownMarketplace {
    /// Where it comes from.
    pub source: MarketplaceSource,
    /// The folder holding its `.claude-plugin/marketplace.json`.
    pub install_location: PathBuf,
    /// `lastUpdated` (ISO 8601), as written.
    pub last_updated: Option<String>,
}

/// One installation of `installed_plugins.json` (version 2 keeps a list per id).
#[derive(Debug, Clone, PartialEq)]
pub struct Installation {
    /// `user`, `project` or `local`.
    pub scope: String,
    /// The folder that loads.
    pub install_path: PathBuf,
    /// `version`.
    pub version: Option<String>,
    /// `installedAt`.
    pub installed_at: Option<String>,
    /// `lastUpdated`.
    pub last_updated: Option<String>,
    /// `gitCommitSha`, for a plugin cloned with git.
    pub git_commit_sha: Option<String>,
    /// `projectPath`, for a project- or local-scope installation.
    pub project_path: Option<PathBuf>,
}

impl Installation {
    fn from_json(value: &Value) -> Option<Self> {
        let text = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_owned);
        Some(Self {
            scope: text("scope").unwrap_or_else(|| "user".to_owned()),
            install_path: text("installPath")?.into(),
            version: text("version"),
            installed_at: text("installedAt"),
            last_updated: text("lastUpdated"),
            git_commit_sha: text("gitCommitSha"),
            project_path: text("projectPath").map(PathBuf::from),
        })
    }

    fn to_json(&self) -> Value {
        let mut map = Map::new();
        map.insert("scope".into(), json!(self.scope));
        map.insert("installPath".into(), json!(self.install_path));
        if let Some(version) = &self.version {
            map.insert("version".into(), json!(version));
        }
        for (key, value) in [
            ("installedAt", &self.installed_at),
            ("lastUpdated", &self.last_updated),
            ("gitCommitSha", &self.git_commit_sha),
        ] {
            if let Some(value) = value {
                map.insert(key.into(), json!(value));
            }
        }
        if let Some(project) = &self.project_path {
            map.insert("projectPath".into(), json!(project));
        }
        Value::Object(map)
    }

    /// Whether it applies in `cwd`: a user-scope one everywhere, a project one below its
    /// project.
    pub fn applies_in(&self, cwd: &Path) -> bool {
        match &self.project_path {
            Some(project) if self.scope != "user" => cwd.starts_with(project),
            _ => true,
        }
    }
}

/// A store of installed plugins and known marketplaces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginStore {
    /// The store's folder.
    pub root: PathBuf,
    /// tine's, or Claude Code's (read only).
    pub owner: StoreOwner,
}

impl PluginStore {
    /// `TINE_HOME/plugins`.
    pub fn tine(tine_home: &Path) -> Self {
        Self {
            root: tine_home.join("plugins"),
            owner: StoreOwner::Tine,
        }
    }

    /// `~/.claude/plugins` of `user_home`.
    pub fn claude_code(user_home: &Path) -> Self {
        Self {
            root: user_home.join(".claude").join("plugins"),
            owner: StoreOwner::ClaudeCode,
        }
    }

    /// `known_marketplaces.json`.
    pub fn known_marketplaces_path(&self) -> PathBuf {
        self.root.join("known_marketplaces.json")
    }

    /// `installed_plugins.json`.
    pub fn installed_path(&self) -> PathBuf {
        self.root.join("installed_plugins.json")
    }

    /// `marketplaces/`: git clones of marketplaces.
    pub fn marketplaces_dir(&self) -> PathBuf {
        self.root.join("marketplaces")
    }

    /// `cache/MARKET/PLUGIN/VERSION`: an installed copy.
    pub fn cache_path(&self, id: &PluginId, version: &str) -> PathBuf {
        self.root
            .join("cache")
            .join(&id.marketplace)
            .join(&id.name)
            .join(version)
    }

    /// `data/ID`: a plugin's own data (`${CLAUDE_PLUGIN_DATA}`), which survives updates.
    pub fn data_path(&self, id: &str) -> PathBuf {
        let folder: String = id
            .chars()
            .map(
                |c| match c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                    true => c,
                    false => '-',
                },
            )
            .collect();
        self.root.join("data").join(folder)
    }

    /// The known marketplaces by name (none when the file is missing).
    pub fn known_marketplaces(
        &self,
    ) -> Result<BTreeMap<String, KnownMarketplace>, PluginFileError> {
        let path = self.known_marketplaces_path();
        let Some(Value::Object(map)) = read_json(&path)? else {
            return Ok(BTreeMap::new());
        };
        Ok(map
            .iter()
            .filter_map(|(name, entry)| {
                let location = entry.get("installLocation").and_then(Value::as_str)?;
                Some((
                    name.clone(),
                    KnownMarketplace {
                        source: MarketplaceSource::from_json(entry.get("source")?),
                        install_location: location.into(),
                        last_updated: entry
                            .get("lastUpdated")
                            .and_then(Value::as_str)
                            .map(str::to_owned),
                    },
                ))
            })
            .collect())
    }

    /// Writes the known marketplaces (tine's store only; 0600, atomic).
    pub fn write_known_marketplaces(
        &self,
        known: &BTreeMap<String, KnownMarketplace>,
    ) -> Result<(), PluginFileError> {
        let value: Map<String, Value> = known
            .iter()
            .map(|(name, entry)| {
                let mut map = Map::new();
                map.insert("source".into(), entry.source.to_json());
                map.insert("installLocation".into(), json!(entry.install_location));
                if let Some(updated) = &entry.last_updated {
                    map.insert("lastUpdated".into(), json!(updated));
                }
                (name.clone(), Value::Object(map))
            })
            .collect();
        self.write(&self.known_marketplaces_path(), &Value::Object(value))
    }

    /// The installations by id (`name@marketplace`; none when the file is missing). Reads
    /// version 2 (a list per id) and version 1 (one object per id).
    pub fn installed(&self) -> Result<BTreeMap<String, Vec<Installation>>, PluginFileError> {
        let path = self.installed_path();
        let Some(value) = read_json(&path)? else {
            return Ok(BTreeMap::new());
        };
        let Some(Value::Object(plugins)) = value.get("plugins") else {
            return Err(PluginFileError::new(path, "has no `plugins` object"));
        };
        Ok(plugins
            .iter()
            .map(|(id, entry)| {
                let list = match entry {
                    Value::Array(items) => {
                        items.iter().filter_map(Installation::from_json).collect()
                    }
                    other => Installation::from_json(other).into_iter().collect(),
                };
                (id.clone(), list)
            })
            .collect())
    }

    /// Writes the installations (tine's store only; version 2, 0600, atomic).
    pub fn write_installed(
        &self,
        installed: &BTreeMap<String, Vec<Installation>>,
    ) -> Result<(), PluginFileError> {
        let plugins: Map<String, Value> = installed
            .iter()
            .filter(|(_, list)| !list.is_empty())
            .map(|(id, list)| {
                (
                    id.clone(),
                    Value::Array(list.iter().map(Installation::to_json).collect()),
                )
            })
            .collect();
        self.write(
            &self.installed_path(),
            &json!({"version": 2, "plugins": plugins}),
        )
    }

    fn write(&self, path: &Path, value: &Value) -> Result<(), PluginFileError> {
        if self.owner == StoreOwner::ClaudeCode {
            return Err(PluginFileError::new(
                path,
                "is Claude Code's: tine reads it and never writes it",
            ));
        }
        let fail = |e: io::Error| PluginFileError::new(path, format!("cannot be written: {e}"));
        private_fs::create_dir_all(&self.root).map_err(fail)?;
        let mut bytes = serde_json::to_vec_pretty(value)
            .map_err(|e| PluginFileError::new(path, e.to_string()))?;
        bytes.push(b'\n');
        private_fs::write_atomic(path, &bytes).map_err(fail)
    }
}

/// A JSON file that may be missing.
fn read_json(path: &Path) -> Result<Option<Value>, PluginFileError> {
    match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| PluginFileError::new(path, format!("is not valid JSON: {e}"))),
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(PluginFileError::new(
            path,
            format!("cannot be read: {error}"),
        )),
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
