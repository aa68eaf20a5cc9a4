//! The stores of installed plugins, in Claude Code's layout: `known_marketplaces.json`,
//! `installed_plugins.json`, `marketplaces/` and `cache/` (see the module above).

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use super::{PluginFileError, PluginId};
use crate::private_fs;

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
