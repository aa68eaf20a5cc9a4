//! Claude Code's plugins in the session: each bundles slash commands, typed agents, skills,
//! hooks and MCP servers under one name, and a Claude Code user's plugins work unchanged.
//!
//! Which plugins load, once per conversation at start (so the tool array and the listing
//! change only between sessions, or at `/reload-plugins`, which the person asks for): every
//! `--plugin-dir` (the SDK's flag; always), then every id `enabledPlugins` turns on in the
//! settings read (user, project, local, `--settings`, managed; the highest source of an id
//! wins, so a project can turn on only what someone installed, and its `true` is a folder's
//! own part, named by the trust question: [`folder_plugins`]), found installed by tine
//! (`TINE_HOME/plugins/`) or else by Claude Code (`~/.claude/plugins/`). `--bare` loads only
//! the `--plugin-dir` ones. A plugin that cannot be used (a malformed `plugin.json`, a file
//! it names missing, hooks that cannot run, a name another plugin has) is skipped whole with
//! a warning naming the file; the rest load.
//!
//! What a plugin brings joins the session's own parts (`parts`): its commands as
//! `/PLUGIN:NAME` (and `/NAME` where no other command or skill has that name), agents
//! `PLUGIN:NAME`, skills `PLUGIN:NAME` in the listing, hooks with `${CLAUDE_PLUGIN_ROOT}` put
//! in and `CLAUDE_PLUGIN_ROOT` in their environment, MCP servers as `plugin:PLUGIN:SERVER`,
//! under the same permission rules as the project's. `manage` installs them
//! (`tine plugin ...` and `/plugin`); nothing of a plugin runs at install time.

mod manage;
mod parts;
mod reload;

use std::path::{Path, PathBuf};

use tine_config::SettingsSource;
use tine_config::plugins::{
    EnabledPlugin, Installation, PluginFileError, PluginId, PluginStore, enabled_plugins,
    read_manifest,
};
use tine_config::settings::LoadedSettings;

pub use manage::{PluginCommandError, PluginCommands};
pub use parts::PluginParts;
pub(crate) use reload::Reloaded;

/// Where a loaded plugin came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PluginOrigin {
    /// `--plugin-dir`.
    Dir,
    /// Installed, and turned on by `enabledPlugins`.
    Enabled {
        /// `name@marketplace`.
        id: String,
        /// Installed by Claude Code (`~/.claude/plugins/`) rather than tine.
        by_claude_code: bool,
        /// The settings source that turns it on.
        source: SettingsSource,
        /// Its file.
        file: String,
    },
}

/// One plugin of the session.
#[derive(Debug, Clone)]
pub struct LoadedPlugin {
    /// Its name (the namespace of its parts).
    pub name: String,
    /// `name@marketplace`, or the name for a `--plugin-dir` one.
    pub id: String,
    /// Its folder.
    pub root: PathBuf,
    /// Its version, when it says one.
    pub version: Option<String>,
    /// Where it came from.
    pub origin: PluginOrigin,
    /// What it brings.
    pub parts: PluginParts,
}

/// The plugins a conversation loaded at start, and what was skipped.
#[derive(Debug, Clone, Default)]
pub struct SessionPlugins {
    /// In load order: `--plugin-dir` ones first, then enabled ones by id.
    pub plugins: Vec<LoadedPlugin>,
    /// Why some were skipped, each naming the file.
    pub warnings: Vec<String>,
    /// The user's home they were looked up with (Claude Code's store), for `/plugin`.
    pub(crate) user_home: Option<PathBuf>,
}

/// What the session needs to find plugins.
#[derive(Debug, Clone)]
pub struct PluginPlaces<'a> {
    /// The working directory (project- and local-scope installations apply below theirs).
    pub cwd: &'a Path,
    /// `TINE_HOME`.
    pub home: &'a Path,
    /// The user's home (`~/.claude/plugins`); `None` skips Claude Code's store.
    pub user_home: Option<&'a Path>,
}

impl SessionPlugins {
    /// The plugins of `dirs` (`--plugin-dir`) and, unless `only_dirs` (`--bare`), those
    /// `loaded`'s settings enable.
    pub fn load(
        places: &PluginPlaces<'_>,
        loaded: &LoadedSettings,
        dirs: &[PathBuf],
        only_dirs: bool,
    ) -> Self {
        let mut plugins = Self {
            user_home: places.user_home.map(Path::to_path_buf),
            ..Self::default()
        };
        let store = PluginStore::tine(places.home);
        for dir in dirs {
            let root = places.cwd.join(dir);
            let root = std::fs::canonicalize(&root).unwrap_or(root);
            if !root.is_dir() {
                plugins.warnings.push(format!(
                    "--plugin-dir {}: not a folder (plugin skipped)",
                    dir.display()
                ));
                continue;
            }
            let folder = root
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("plugin")
                .to_owned();
            plugins.add(&store, root, &folder, None, PluginOrigin::Dir);
        }
        if only_dirs {
            return plugins;
        }
        let installed = Installed::read(places, &mut plugins.warnings);
        for enabled in enabled_plugins(loaded).into_iter().filter(|e| e.enabled) {
            plugins.add_enabled(&store, &installed, enabled);
        }
        plugins
    }

    fn add_enabled(&mut self, store: &PluginStore, installed: &Installed, enabled: EnabledPlugin) {
        let Some(id) = PluginId::parse(&enabled.id) else {
            self.warnings.push(format!(
                "{}: enabledPlugins `{}` is not `name@marketplace` (ignored)",
                enabled.file, enabled.id
            ));
            return;
        };
        let Some((installation, by_claude_code)) = installed.find(&enabled.id) else {
            self.warnings.push(format!(
                "{}: plugin {} is enabled but not installed (`tine plugin install {}`)",
                enabled.file, enabled.id, enabled.id
            ));
            return;
        };
        if !installation.install_path.is_dir() {
            self.warnings.push(format!(
                "{}: plugin {} is missing (reinstall it: `tine plugin install {}`)",
                installation.install_path.display(),
                enabled.id,
                enabled.id
            ));
            return;
        }
        let origin = PluginOrigin::Enabled {
            id: enabled.id.clone(),
            by_claude_code,
            source: enabled.source,
            file: enabled.file,
        };
        self.add(
            store,
            installation.install_path.clone(),
            &id.name,
            Some(enabled.id),
            origin,
        );
    }

    /// Reads the plugin at `root`; a plugin whose name is taken, or that cannot be read, is a
    /// warning.
    fn add(
        &mut self,
        store: &PluginStore,
        root: PathBuf,
        default_name: &str,
        id: Option<String>,
        origin: PluginOrigin,
    ) {
        match read_plugin(store, &root, default_name, id) {
            Ok(plugin) => {
                if let Some(other) = self.plugins.iter().find(|p| p.name == plugin.name) {
                    self.warnings.push(format!(
                        "{}: a plugin named `{}` is already loaded from {} (plugin skipped)",
                        root.join(tine_config::plugins::MANIFEST_PATH).display(),
                        plugin.name,
                        other.root.display()
                    ));
                    return;
                }
                self.warnings.extend(
                    plugin
                        .parts
                        .warnings
                        .iter()
                        .map(|w| format!("plugin {}: {w}", plugin.id)),
                );
                self.plugins.push(LoadedPlugin { origin, ..plugin });
            }
            Err(error) => self.warnings.push(format!("{error} (plugin skipped)")),
        }
    }

    /// Every plugin command.
    pub fn commands(&self) -> impl Iterator<Item = &crate::custom_commands::CustomCommand> {
        self.plugins.iter().flat_map(|p| &p.parts.commands)
    }

    /// Every plugin skill.
    pub fn skills(&self) -> impl Iterator<Item = &crate::skills::Skill> {
        self.plugins.iter().flat_map(|p| &p.parts.skills)
    }

    /// The plugin command `/name` runs: `PLUGIN:NAME` as named, or a bare `NAME` that exactly
    /// one plugin command has.
    pub fn command(&self, name: &str) -> Option<&crate::custom_commands::CustomCommand> {
        if let Some(command) = self.commands().find(|c| c.name == name) {
            return Some(command);
        }
        let mut bare = self
            .commands()
            .filter(|c| c.name.rsplit_once(':').is_some_and(|(_, n)| n == name));
        match (bare.next(), bare.next()) {
            (Some(command), None) => Some(command),
            _ => None,
        }
    }
}

/// `/plugin [list]`: what this conversation loaded and skipped, then what is installed.
pub(crate) fn list_text(plugins: &SessionPlugins, installed: &str) -> String {
    let mut text = String::new();
    if plugins.plugins.is_empty() {
        text.push_str("No plugins loaded in this session.\n");
    } else {
        text.push_str("Loaded in this session:\n");
        for plugin in &plugins.plugins {
            let from = match &plugin.origin {
                PluginOrigin::Dir => format!("--plugin-dir {}", plugin.root.display()),
                PluginOrigin::Enabled {
                    by_claude_code,
                    file,
                    ..
                } => format!(
                    "{}, enabled in {file}",
                    if *by_claude_code {
                        "installed by Claude Code"
                    } else {
                        "installed"
                    }
                ),
            };
            text.push_str(&format!(
                "- {} {}({from}): {}\n",
                plugin.id,
                plugin
                    .version
                    .as_deref()
                    .map(|v| format!("{v} "))
                    .unwrap_or_default(),
                plugin.parts.summary()
            ));
        }
    }
    for warning in &plugins.warnings {
        text.push_str(&format!("warning: {warning}\n"));
    }
    text.push('\n');
    text.push_str(installed);
    text.push_str(
        "\n`/plugin enable|disable NAME` changes your settings for the next session; \
         /reload-plugins loads them again now.\n",
    );
    text
}

/// Adds the plugins' agents and skills to the session's: a name another agent or skill has
/// (the user's or project's, an app's) keeps that one, the plugin's is a warning.
pub(crate) fn join_agents_and_skills(
    plugins: &SessionPlugins,
    agents: &mut std::sync::Arc<[tine_fork_runtime::AgentDefinition]>,
    skills: &mut crate::skills::SessionSkills,
    notices: &mut Vec<crate::protocol::Notice>,
) {
    if plugins.plugins.is_empty() {
        return;
    }
    let mut all_agents = agents.to_vec();
    for agent in plugins.plugins.iter().flat_map(|p| &p.parts.agents) {
        match all_agents
            .iter()
            .any(|a| a.name.eq_ignore_ascii_case(&agent.name))
        {
            true => notices.push(crate::protocol::Notice::warning(format!(
                "{}: an agent named {} exists already (plugin agent skipped)",
                agent_path(agent),
                agent.name
            ))),
            false => all_agents.push(agent.clone()),
        }
    }
    *agents = all_agents.into();
    let mut all_skills = skills.skills.to_vec();
    for skill in plugins.skills() {
        match all_skills.iter().any(|s| s.name == skill.name) {
            true => notices.push(crate::protocol::Notice::warning(format!(
                "{}: a skill named {} exists already (plugin skill skipped)",
                skill.path.display(),
                skill.name
            ))),
            false => all_skills.push(skill.clone()),
        }
    }
    all_skills.sort_by(|a, b| a.name.cmp(&b.name));
    skills.skills = all_skills.into();
}

fn agent_path(agent: &tine_fork_runtime::AgentDefinition) -> String {
    match &agent.source {
        tine_fork_runtime::AgentSource::File(path) => path.display().to_string(),
        other => format!("{other:?}"),
    }
}

/// Reads one plugin (manifest and parts) at `root`; its data folder is in `store`.
pub(crate) fn read_plugin(
    store: &PluginStore,
    root: &Path,
    default_name: &str,
    id: Option<String>,
) -> Result<LoadedPlugin, PluginFileError> {
    let manifest = read_manifest(root, default_name)?;
    let id = id.unwrap_or_else(|| manifest.name.clone());
    let data = store.data_path(&id);
    let parts = parts::read_parts(root, &data, &manifest)?;
    Ok(LoadedPlugin {
        name: manifest.name.clone(),
        id,
        root: root.to_path_buf(),
        version: manifest.version.clone(),
        origin: PluginOrigin::Dir,
        parts,
    })
}

/// The installations of tine's store and Claude Code's.
struct Installed {
    tine: std::collections::BTreeMap<String, Vec<Installation>>,
    claude_code: std::collections::BTreeMap<String, Vec<Installation>>,
    cwd: PathBuf,
}

impl Installed {
    fn read(places: &PluginPlaces<'_>, warnings: &mut Vec<String>) -> Self {
        let mut read = |store: PluginStore| {
            store.installed().unwrap_or_else(|error| {
                warnings.push(error.to_string());
                Default::default()
            })
        };
        Self {
            tine: read(PluginStore::tine(places.home)),
            claude_code: places
                .user_home
                .map(|home| read(PluginStore::claude_code(home)))
                .unwrap_or_default(),
            cwd: places.cwd.to_path_buf(),
        }
    }

    /// tine's installation of `id` that applies here, else Claude Code's.
    fn find(&self, id: &str) -> Option<(&Installation, bool)> {
        let cwd = &self.cwd;
        let tine = self
            .tine
            .get(id)
            .and_then(|l| l.iter().rev().find(|i| i.applies_in(cwd)));
        match tine {
            Some(installation) => Some((installation, false)),
            None => self
                .claude_code
                .get(id)
                .and_then(|l| l.iter().rev().find(|i| i.applies_in(cwd)))
                .map(|i| (i, true)),
        }
    }
}

/// The plugins a folder's own settings turn on (project and local `enabledPlugins`), with
/// what each would run, for the trust question: `name@market (hooks: ...; MCP servers: ...)`.
pub(crate) fn folder_plugins(
    cwd: &Path,
    home: &Path,
    user_home: Option<&Path>,
    loaded: &LoadedSettings,
) -> Vec<String> {
    let places = PluginPlaces {
        cwd,
        home,
        user_home,
    };
    let mut warnings = Vec::new();
    let installed = Installed::read(&places, &mut warnings);
    let store = PluginStore::tine(home);
    enabled_plugins(loaded)
        .into_iter()
        .filter(|e| {
            e.enabled && matches!(e.source, SettingsSource::Project | SettingsSource::Local)
        })
        .map(|enabled| {
            let loaded = PluginId::parse(&enabled.id)
                .and_then(|id| installed.find(&enabled.id).map(|(i, _)| (id, i)))
                .and_then(|(id, i)| read_plugin(&store, &i.install_path, &id.name, None).ok());
            match loaded {
                Some(plugin) => {
                    let mut runs = Vec::new();
                    if !plugin.parts.hooks.is_empty() {
                        let hooks: Vec<String> = plugin
                            .parts
                            .hooks
                            .iter()
                            .map(|h| {
                                format!(
                                    "{}: {}",
                                    h.event.text,
                                    h.command.clone().unwrap_or_else(|| h.hook_type.clone())
                                )
                            })
                            .collect();
                        runs.push(format!("hooks {}", hooks.join("; ")));
                    }
                    if !plugin.parts.mcp_servers.is_empty() {
                        let servers: Vec<&str> = plugin
                            .parts
                            .mcp_servers
                            .iter()
                            .map(|s| s.name.as_str())
                            .collect();
                        runs.push(format!("MCP servers {}", servers.join(", ")));
                    }
                    match runs.is_empty() {
                        true => format!("{} ({})", enabled.id, plugin.parts.summary()),
                        false => format!("{} ({})", enabled.id, runs.join("; ")),
                    }
                }
                None => format!("{} (not installed)", enabled.id),
            }
        })
        .collect()
}

#[cfg(test)]
#[path = "plugins_tests.rs"]
mod tests;
