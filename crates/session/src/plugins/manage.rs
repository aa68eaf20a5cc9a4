//! `tine plugin ...` and `/plugin ...`: marketplaces, installing, enabling, removing. Written
//! into tine's store (`TINE_HOME/plugins/`, Claude Code's layout, 0700/0600) and tine's user
//! settings (`enabledPlugins`, through the one settings writer, comments kept); Claude Code's
//! store is read, never written. Nothing of a plugin runs here: a marketplace is read or
//! cloned with the real `git`, a plugin copied (or cloned) and read, and a plugin that would
//! not load is refused before anything is written. Changes apply from the next session (or
//! `/reload-plugins`): the running conversation's tools and listing stay as they are.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

use serde_json::Value;
use tine_config::plugins::{
    Installation, KnownMarketplace, MarketplaceManifest, MarketplaceSource, PluginFileError,
    PluginId, PluginSource, PluginStore, StoreOwner, enabled_plugins, extra_marketplaces,
    manifest_from_value, read_marketplace,
};
use tine_config::private_fs;
use tine_config::settings::{self, LoadedSettings, SettingsError, SettingsPaths};

mod files;

use files::{Cleanup, Staging, copy_tree, git, git_clone, remove_empty_parents, remove_tree};

/// How the commands are used.
pub(crate) const USAGE: &str = "usage: tine plugin marketplace add PATH|GIT-URL|OWNER/REPO
       tine plugin marketplace list | remove NAME
       tine plugin install NAME[@MARKETPLACE]
       tine plugin uninstall | enable | disable NAME[@MARKETPLACE]
       tine plugin list";

/// Why a plugin command failed.
#[derive(Debug, thiserror::Error)]
pub enum PluginCommandError {
    /// The words do not make a command.
    #[error("{0}\n{USAGE}")]
    Usage(String),
    /// A plugin's or marketplace's file cannot be used.
    #[error(transparent)]
    File(#[from] PluginFileError),
    /// A settings file cannot be read or written.
    #[error(transparent)]
    Settings(#[from] SettingsError),
    /// No such plugin or marketplace, or several.
    #[error("{0}")]
    NotFound(String),
    /// The plugin or marketplace is of a kind tine does not fetch.
    #[error("{0}")]
    Unsupported(String),
    /// `git` failed.
    #[error("git {action} failed: {message}")]
    Git {
        /// What git was doing.
        action: String,
        /// Its stderr.
        message: String,
    },
    /// A file of tine's store cannot be written.
    #[error("{}: {source}", .path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
}

type Result<T> = std::result::Result<T, PluginCommandError>;

fn io_error(path: &Path) -> impl FnOnce(io::Error) -> PluginCommandError + '_ {
    move |source| PluginCommandError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Where the commands work: the project (relative paths, settings), `TINE_HOME`, the user's
/// home (Claude Code's store, read).
#[derive(Debug, Clone)]
pub struct PluginCommands {
    /// The working directory.
    pub cwd: PathBuf,
    /// `TINE_HOME`.
    pub home: PathBuf,
    /// The user's home; `None` skips Claude Code's store.
    pub user_home: Option<PathBuf>,
}

impl PluginCommands {
    fn store(&self) -> PluginStore {
        PluginStore::tine(&self.home)
    }

    fn claude_store(&self) -> Option<PluginStore> {
        self.user_home.as_deref().map(PluginStore::claude_code)
    }

    fn settings(&self) -> LoadedSettings {
        let mut paths = SettingsPaths::new(&self.cwd, &self.home);
        if let Some(user_home) = &self.user_home {
            paths = paths.with_user_home(user_home);
        }
        settings::load(&paths)
    }

    /// tine's user settings file, where `enabledPlugins` is written.
    fn user_settings(&self) -> PathBuf {
        SettingsPaths::new(&self.cwd, &self.home).user
    }

    /// Runs `args` (`marketplace add X`, `install NAME@M`, ...); the text to show.
    pub fn run(&self, args: &[String]) -> Result<String> {
        let words: Vec<&str> = args.iter().map(String::as_str).collect();
        match words.as_slice() {
            [] | ["list"] => self.list(),
            ["marketplace", "add", source] => self.marketplace_add(source),
            ["marketplace", "list"] | ["marketplace"] => self.marketplace_list(),
            ["marketplace", "remove" | "rm", name] => self.marketplace_remove(name),
            ["install" | "i", spec] => self.install(spec),
            ["uninstall" | "remove", spec] => self.uninstall(spec),
            ["enable", spec] => self.set_enabled(spec, true),
            ["disable", spec] => self.set_enabled(spec, false),
            ["help" | "--help" | "-h"] => Ok(format!("{USAGE}\n")),
            _ => Err(PluginCommandError::Usage(format!(
                "unknown plugin command `{}`",
                words.join(" ")
            ))),
        }
    }

    // -----------------------------------------------------------------------------------
    // Marketplaces

    /// `marketplace add`: a folder with `.claude-plugin/marketplace.json` is read in place; a
    /// git URL (`https://`, `ssh://`, `git@`, `file://`), a local git repository without a
    /// checkout of the manifest, or `OWNER/REPO` (GitHub) is cloned into the store.
    fn marketplace_add(&self, text: &str) -> Result<String> {
        let source = self.classify(text)?;
        let store = self.store();
        let (location, manifest) = match &source {
            MarketplaceSource::Directory(root) => (root.clone(), read_marketplace(root)?),
            MarketplaceSource::Git(url) => self.clone_marketplace(&store, url)?,
            MarketplaceSource::Github(repo) => {
                self.clone_marketplace(&store, &format!("https://github.com/{repo}.git"))?
            }
            MarketplaceSource::File(_) | MarketplaceSource::Other(_) => {
                return Err(PluginCommandError::Unsupported(format!(
                    "{text}: give the marketplace's folder or git repository"
                )));
            }
        };
        let mut known = store.known_marketplaces()?;
        let replaced = known.insert(
            manifest.name.clone(),
            KnownMarketplace {
                source: source.clone(),
                install_location: location,
                last_updated: Some(now()),
            },
        );
        store.write_known_marketplaces(&known)?;
        let count = manifest.plugins.len();
        Ok(format!(
            "Added marketplace {} ({count} plugin{}) from {}{}.\nInstall one with `tine plugin install NAME@{}`.\n",
            manifest.name,
            if count == 1 { "" } else { "s" },
            source.describe(),
            if replaced.is_some() {
                " (it replaces the earlier source of that name)"
            } else {
                ""
            },
            manifest.name
        ))
    }

    fn classify(&self, text: &str) -> Result<MarketplaceSource> {
        let is_url = text.contains("://") || text.starts_with("git@");
        if is_url {
            return Ok(MarketplaceSource::Git(text.to_owned()));
        }
        let path = match (text.strip_prefix("~/"), &self.user_home) {
            (Some(rest), Some(home)) => home.join(rest),
            _ => self.cwd.join(text),
        };
        if path.exists() {
            let path = std::fs::canonicalize(&path).map_err(io_error(&path))?;
            if path.join(tine_config::plugins::MARKETPLACE_PATH).is_file() {
                return Ok(MarketplaceSource::Directory(path));
            }
            // A bare repository (or a `.git` folder): cloned, as any git URL.
            if path.join("HEAD").is_file() && path.join("objects").is_dir() {
                return Ok(MarketplaceSource::Git(path.display().to_string()));
            }
            return Err(PluginFileError::new(
                path.join(tine_config::plugins::MARKETPLACE_PATH),
                "is missing: this folder is not a marketplace",
            )
            .into());
        }
        let github = text.split('/').count() == 2
            && !text.starts_with('.')
            && text
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'));
        match github {
            true => Ok(MarketplaceSource::Github(text.to_owned())),
            false => Err(PluginCommandError::NotFound(format!(
                "{text}: no such folder, and not a git URL or OWNER/REPO"
            ))),
        }
    }

    /// Clones `url` into `marketplaces/NAME`, NAME from its manifest.
    fn clone_marketplace(
        &self,
        store: &PluginStore,
        url: &str,
    ) -> Result<(PathBuf, MarketplaceManifest)> {
        let dir = store.marketplaces_dir();
        private_fs::create_dir_all(&dir).map_err(io_error(&dir))?;
        let staging = Staging::new(&dir)?;
        git_clone(url, None, &staging.path)?;
        let manifest = read_marketplace(&staging.path)?;
        let target = dir.join(&manifest.name);
        remove_tree(&target)?;
        staging.keep_as(&target)?;
        Ok((target, manifest))
    }

    fn marketplace_list(&self) -> Result<String> {
        let mut text = String::from("Marketplaces:\n");
        let mut any = false;
        for (store, whose) in self.stores() {
            for (name, known) in store.known_marketplaces()? {
                any = true;
                text.push_str(&format!(
                    "  ❯ {name}\n    Source: {}{whose}\n",
                    known.source.describe()
                ));
            }
        }
        for (name, source, from) in extra_marketplaces(&self.settings()) {
            any = true;
            text.push_str(&format!(
                "  ❯ {name}\n    Source: {} (declared in {from}; added when a plugin of it is installed)\n",
                source.describe()
            ));
        }
        if !any {
            text = "No marketplaces. Add one with `tine plugin marketplace add PATH|GIT-URL`.\n"
                .to_owned();
        }
        Ok(text)
    }

    fn marketplace_remove(&self, name: &str) -> Result<String> {
        let store = self.store();
        let mut known = store.known_marketplaces()?;
        let Some(entry) = known.remove(name) else {
            return Err(PluginCommandError::NotFound(format!(
                "no marketplace named {name} in {}",
                store.known_marketplaces_path().display()
            )));
        };
        // A clone is tine's; a folder read in place is the user's and stays.
        if entry.install_location.starts_with(store.marketplaces_dir()) {
            remove_tree(&entry.install_location)?;
        }
        store.write_known_marketplaces(&known)?;
        Ok(format!(
            "Removed marketplace {name}. Its installed plugins stay until `tine plugin uninstall`.\n"
        ))
    }

    /// tine's known marketplaces, then Claude Code's, then the settings' (added to tine's on
    /// first use).
    fn marketplace(&self, name: &str) -> Result<(PathBuf, MarketplaceManifest)> {
        for (store, _) in self.stores() {
            if let Some(known) = store.known_marketplaces()?.remove(name) {
                let root = match &known.source {
                    MarketplaceSource::File(path) => path
                        .parent()
                        .and_then(Path::parent)
                        .map(Path::to_path_buf)
                        .unwrap_or_default(),
                    _ => known.install_location.clone(),
                };
                let manifest = read_marketplace(&root)?;
                return Ok((root, manifest));
            }
        }
        let declared = extra_marketplaces(&self.settings())
            .into_iter()
            .find(|(n, ..)| n == name);
        if let Some((_, source, _)) = declared {
            let text = match &source {
                MarketplaceSource::Directory(path) | MarketplaceSource::File(path) => {
                    path.display().to_string()
                }
                MarketplaceSource::Git(url) => url.clone(),
                MarketplaceSource::Github(repo) => repo.clone(),
                MarketplaceSource::Other(value) => {
                    return Err(PluginCommandError::Unsupported(format!(
                        "marketplace {name}: source {value} is not one tine fetches"
                    )));
                }
            };
            self.marketplace_add(&text)?;
            return self.marketplace(name).map_err(|_| {
                PluginCommandError::NotFound(format!(
                    "marketplace {name}: its source names another marketplace"
                ))
            });
        }
        Err(PluginCommandError::NotFound(format!(
            "no marketplace named {name}: add it with `tine plugin marketplace add PATH|GIT-URL`"
        )))
    }

    fn stores(&self) -> Vec<(PluginStore, &'static str)> {
        let mut stores = vec![(self.store(), "")];
        if let Some(claude) = self.claude_store() {
            stores.push((claude, " (Claude Code's)"));
        }
        stores
    }

    // -----------------------------------------------------------------------------------
    // Plugins

    fn install(&self, spec: &str) -> Result<String> {
        let id = match PluginId::parse(spec) {
            Some(id) => id,
            None => self.find_in_marketplaces(spec)?,
        };
        let (market_root, market) = self.marketplace(&id.marketplace)?;
        let Some(entry) = market.plugin(&id.name) else {
            return Err(PluginCommandError::NotFound(format!(
                "marketplace {} has no plugin named {}",
                id.marketplace, id.name
            )));
        };
        let store = self.store();
        let cache = store.root.join("cache");
        private_fs::create_dir_all(&cache).map_err(io_error(&cache))?;
        let staging = Staging::new(&cache)?;
        let mut sha = None;
        match &entry.source {
            PluginSource::Relative(path) => {
                let base = match &market.plugin_root {
                    Some(root) if !path.starts_with("./") => market_root.join(root),
                    _ => market_root.clone(),
                };
                let from = base.join(path);
                let inside = std::fs::canonicalize(&from)
                    .ok()
                    .filter(|p| p.starts_with(&market_root) && p.is_dir());
                let Some(from) = inside else {
                    return Err(PluginFileError::new(
                        market_root.join(tine_config::plugins::MARKETPLACE_PATH),
                        format!(
                            "plugin {}: source `{path}` is not a folder inside the marketplace",
                            id.name
                        ),
                    )
                    .into());
                };
                copy_tree(&from, &staging.path)?;
            }
            PluginSource::Git {
                url,
                git_ref,
                sha: want,
                path,
            } => {
                let clone = staging.path.with_extension("clone");
                let _cleanup = Cleanup(clone.clone());
                git_clone(url, git_ref.as_deref(), &clone)?;
                if let Some(want) = want {
                    git(
                        &clone,
                        &["fetch", "--quiet", "--depth", "1", "origin", want],
                    )?;
                    git(&clone, &["checkout", "--quiet", want])?;
                }
                sha = Some(git(&clone, &["rev-parse", "HEAD"])?.trim().to_owned());
                let from = match path {
                    Some(path) => clone.join(path),
                    None => clone.clone(),
                };
                copy_tree(&from, &staging.path)?;
            }
            PluginSource::Unsupported(kind) => {
                return Err(PluginCommandError::Unsupported(format!(
                    "plugin {}: its source ({kind}) is not one tine installs (a folder of the \
                     marketplace or a git repository)",
                    id.name
                )));
            }
        }
        // `strict: false`: the marketplace's entry is the manifest.
        if !entry.strict
            && !staging
                .path
                .join(tine_config::plugins::MANIFEST_PATH)
                .exists()
        {
            write_entry_manifest(&staging.path, &entry.raw)?;
        }
        // Refused before anything is recorded when it would not load.
        let plugin = super::read_plugin(&store, &staging.path, &id.name, Some(id.to_string()))?;
        let version = plugin
            .version
            .clone()
            .or_else(|| entry.version.clone())
            .or_else(|| sha.as_ref().map(|s| s.chars().take(12).collect()))
            .unwrap_or_else(|| "unknown".to_owned());
        let target = store.cache_path(&id, &version);
        remove_tree(&target)?;
        staging.keep_as(&target)?;
        let mut installed = store.installed()?;
        let when = now();
        installed.insert(
            id.to_string(),
            vec![Installation {
                scope: "user".to_owned(),
                install_path: target.clone(),
                version: Some(version.clone()),
                installed_at: Some(when.clone()),
                last_updated: Some(when),
                git_commit_sha: sha,
                project_path: None,
            }],
        );
        store.write_installed(&installed)?;
        self.write_enabled(&id.to_string(), Some(true))?;
        Ok(format!(
            "Installed plugin {id} {version} ({}) in {}, enabled in {}.\nIt loads from the next \
             session (or now with /reload-plugins).\n",
            plugin.parts.summary(),
            target.display(),
            self.user_settings().display()
        ))
    }

    /// `NAME` alone: the one marketplace that lists it.
    fn find_in_marketplaces(&self, name: &str) -> Result<PluginId> {
        let mut found = Vec::new();
        for (store, _) in self.stores() {
            for (market, known) in store.known_marketplaces()? {
                if read_marketplace(&known.install_location).is_ok_and(|m| m.plugin(name).is_some())
                    && !found.contains(&market)
                {
                    found.push(market);
                }
            }
        }
        match found.as_slice() {
            [market] => Ok(PluginId {
                name: name.to_owned(),
                marketplace: market.clone(),
            }),
            [] => Err(PluginCommandError::NotFound(format!(
                "no known marketplace lists a plugin named {name}"
            ))),
            many => Err(PluginCommandError::NotFound(format!(
                "several marketplaces list {name} ({}): say which, NAME@MARKETPLACE",
                many.join(", ")
            ))),
        }
    }

    fn uninstall(&self, spec: &str) -> Result<String> {
        let store = self.store();
        let mut installed = store.installed()?;
        let id = match self.resolve(spec, &installed) {
            Ok(id) => id,
            Err(error) => {
                let claude = self
                    .claude_store()
                    .and_then(|s| s.installed().ok())
                    .unwrap_or_default();
                return match self.resolve(spec, &claude) {
                    Ok(id) => Err(PluginCommandError::Unsupported(format!(
                        "{id} was installed by Claude Code (~/.claude/plugins), which tine \
                         never changes: `claude plugin uninstall {id}` removes it, `tine plugin \
                         disable {id}` turns it off for tine"
                    ))),
                    Err(_) => Err(error),
                };
            }
        };
        let removed = installed.remove(&id).unwrap_or_default();
        let cache = store.root.join("cache");
        for installation in &removed {
            // Only what tine's store holds is deleted.
            if installation.install_path.starts_with(&cache) {
                remove_tree(&installation.install_path)?;
                remove_empty_parents(&installation.install_path, &cache);
            }
        }
        store.write_installed(&installed)?;
        self.write_enabled(&id, None)?;
        Ok(format!(
            "Uninstalled plugin {id}: its files are removed and {} no longer names it.\n",
            self.user_settings().display()
        ))
    }

    fn set_enabled(&self, spec: &str, enabled: bool) -> Result<String> {
        let mut all = self.store().installed()?;
        if let Some(claude) = self.claude_store() {
            for (id, list) in claude.installed()? {
                all.entry(id).or_insert(list);
            }
        }
        let id = self.resolve(spec, &all)?;
        self.write_enabled(&id, Some(enabled))?;
        let overridden = enabled_plugins(&self.settings())
            .into_iter()
            .find(|e| e.id == id && e.enabled != enabled);
        let note = match overridden {
            Some(e) => format!(
                "\nNote: {} sets it to {} and wins over your user settings.",
                e.file, e.enabled
            ),
            None => String::new(),
        };
        Ok(format!(
            "{} plugin {id} in {}: from the next session (or now with /reload-plugins).{note}\n",
            if enabled { "Enabled" } else { "Disabled" },
            self.user_settings().display()
        ))
    }

    /// `name@market` as given, or the one installed plugin named `name`.
    fn resolve(
        &self,
        spec: &str,
        installed: &BTreeMap<String, Vec<Installation>>,
    ) -> Result<String> {
        if installed.contains_key(spec) {
            return Ok(spec.to_owned());
        }
        let named: Vec<&String> = installed
            .keys()
            .filter(|id| PluginId::parse(id).is_some_and(|id| id.name == spec))
            .collect();
        match named.as_slice() {
            [id] => Ok((*id).clone()),
            [] => Err(PluginCommandError::NotFound(format!(
                "no installed plugin {spec} (`tine plugin list` shows them)"
            ))),
            many => Err(PluginCommandError::NotFound(format!(
                "several installed plugins are named {spec} ({}): say which, NAME@MARKETPLACE",
                many.iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
        }
    }

    /// `enabledPlugins.ID` in tine's user settings: set, or (`None`) removed.
    fn write_enabled(&self, id: &str, value: Option<bool>) -> Result<()> {
        let path = self.user_settings();
        settings::edit_file(&path, |edit| -> std::result::Result<(), SettingsError> {
            match value {
                Some(on) => edit.set(&[tine_config::plugins::ENABLED_KEY, id], &Value::Bool(on)),
                None => edit
                    .remove(&[tine_config::plugins::ENABLED_KEY, id])
                    .map(drop),
            }
        })?;
        Ok(())
    }

    fn list(&self) -> Result<String> {
        let enabled = enabled_plugins(&self.settings());
        let mut text = String::new();
        for (store, whose) in self.stores() {
            for (id, list) in store.installed()? {
                let Some(installation) = list.iter().rev().find(|i| i.applies_in(&self.cwd)) else {
                    continue;
                };
                let status = match enabled.iter().find(|e| e.id == id) {
                    Some(e) if e.enabled => format!("✔ enabled ({})", e.file),
                    Some(e) => format!("✘ disabled ({})", e.file),
                    None => "✘ disabled".to_owned(),
                };
                text.push_str(&format!(
                    "  ❯ {id}\n    Version: {}\n    Path: {}\n    Installed by: {}\n    Status: {status}\n",
                    installation.version.as_deref().unwrap_or("unknown"),
                    installation.install_path.display(),
                    match store.owner {
                        StoreOwner::Tine => "tine",
                        StoreOwner::ClaudeCode => "Claude Code",
                    },
                ));
                let _ = whose;
            }
        }
        Ok(match text.is_empty() {
            true => "No plugins installed. `tine plugin marketplace add PATH|GIT-URL`, then \
                     `tine plugin install NAME@MARKETPLACE`.\n"
                .to_owned(),
            false => format!("Installed plugins:\n{text}"),
        })
    }
}

/// `strict: false`: the entry's fields (without its marketplace-only ones) as `plugin.json`.
fn write_entry_manifest(root: &Path, entry: &Value) -> Result<()> {
    let mut manifest = entry.clone();
    if let Value::Object(map) = &mut manifest {
        for key in ["source", "strict", "category", "tags"] {
            map.shift_remove(key);
        }
    }
    let path = root.join(tine_config::plugins::MANIFEST_PATH);
    manifest_from_value(&path, &manifest)?;
    if let Some(parent) = path.parent() {
        private_fs::create_dir_all(parent).map_err(io_error(parent))?;
    }
    let bytes = serde_json::to_vec_pretty(&manifest).unwrap_or_default();
    private_fs::write_atomic(&path, &bytes).map_err(io_error(&path))
}

/// Now, as Claude Code writes its times.
fn now() -> String {
    tine_query_loop::rfc3339_utc(std::time::SystemTime::now())
}
