//! Where server configurations come from, and which one wins for a name (highest first):
//! `--mcp-config` (later flags over earlier), local settings (`.tine/settings.local.json`,
//! then `~/.claude.json`'s entry for this project), the project's `.mcp.json`, user settings
//! (`~/.tine/settings.json`, then `~/.claude.json`), managed settings last among the files.
//! With `strict` (`--strict-mcp-config`) only the flags count.
//!
//! Project settings (`.tine/settings.json`, committed with the repository) cannot declare servers:
//! a server there would start without the trust `.mcp.json` servers need.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::Value;
use tine_config::settings::{LoadedSettings, SettingsSource};

use crate::config::{McpServerConfig, ServerConfigError};
use crate::names::invalid_server_name;

/// The key under which settings files, `.mcp.json` and `~/.claude.json` keep servers.
pub(crate) const SERVERS_KEY: &str = "mcpServers";

/// The scope a server is configured in, as `tine mcp add --scope` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum McpScope {
    /// Managed policy settings.
    Managed,
    /// `~/.tine/settings.json` (or `~/.claude.json`): every project of this user.
    User,
    /// The project's `.mcp.json`, committed with it: needs the user's trust to start.
    Project,
    /// `.tine/settings.local.json` (or `~/.claude.json`'s entry for the project): this user,
    /// this project.
    Local,
    /// `--mcp-config` (or `mcpServers` in `--settings`).
    Dynamic,
    /// A Claude Code plugin's (`plugin:PLUGIN:SERVER`), given by the session that loaded it.
    Plugin,
}

impl McpScope {
    /// The scope's name (`local`, `project`, `user`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            McpScope::Managed => "managed",
            McpScope::User => "user",
            McpScope::Project => "project",
            McpScope::Local => "local",
            McpScope::Dynamic => "dynamic",
            McpScope::Plugin => "plugin",
        }
    }
}

impl fmt::Display for McpScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One configured server, as the winning source wrote it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerEntry {
    /// The server's name.
    pub name: String,
    /// `${VAR}` references unexpanded.
    pub config: McpServerConfig,
    /// The scope it came from.
    pub scope: McpScope,
    /// The file (or `--mcp-config (inline JSON)`) it came from.
    pub origin: String,
}

/// A configuration problem: the file, the server if one, and what to fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum McpConfigError {
    /// A config file could not be read.
    #[error("cannot read MCP config {origin}: {message}")]
    Read {
        /// The file.
        origin: String,
        /// Why.
        message: String,
    },
    /// A config file is not valid JSON.
    #[error("{origin}:{line}:{column}: invalid JSON: {message}")]
    Syntax {
        /// The file.
        origin: String,
        /// The line (1-based).
        line: usize,
        /// The column (1-based).
        column: usize,
        /// The parser's message.
        message: String,
    },
    /// `mcpServers` is not an object.
    #[error("{origin}: `mcpServers` must be an object of NAME: {{...}} entries")]
    NotAnObject {
        /// The file.
        origin: String,
    },
    /// One server's config is not valid (the others still load).
    #[error("{origin}: MCP server `{name}`: {error}")]
    Server {
        /// The file.
        origin: String,
        /// The server's name.
        name: String,
        /// What is wrong with it.
        error: ServerConfigError,
    },
    /// `mcpServers` in project settings, which tine ignores.
    #[error(
        "{origin}: `mcpServers` in project settings is ignored (a cloned repository must not start programs); put project servers in .mcp.json"
    )]
    ProjectSettings {
        /// The settings file.
        origin: String,
    },
}

impl McpConfigError {
    /// The server the problem is about, when it is about one.
    pub fn server(&self) -> Option<&str> {
        match self {
            McpConfigError::Server { name, .. } => Some(name),
            _ => None,
        }
    }
}

/// What the session or a command gives to find configurations.
#[derive(Debug, Clone, Default)]
pub struct McpSources {
    /// The project directory (where `.mcp.json` is).
    pub cwd: PathBuf,
    /// The user's home, for `~/.claude.json` (read only); `None` skips it.
    pub user_home: Option<PathBuf>,
    /// `--mcp-config` values, each a file or inline JSON (`{...}`), in command-line order.
    pub flag_configs: Vec<String>,
    /// `--strict-mcp-config`: only the flags' servers.
    pub strict: bool,
    /// The servers of the session's plugins (scope [`McpScope::Plugin`]), read by whoever
    /// loaded the plugins; the lowest precedence, and, like the flags', kept under `strict`
    /// only when asked for: not at all.
    pub plugin_servers: Vec<ServerEntry>,
}

impl McpSources {
    /// The sources of a project at `cwd`.
    pub fn new(cwd: impl Into<PathBuf>) -> Self {
        McpSources {
            cwd: cwd.into(),
            ..Self::default()
        }
    }

    /// With the user's home (where the user-scope servers are configured).
    pub fn with_user_home(mut self, home: impl Into<PathBuf>) -> Self {
        self.user_home = Some(home.into());
        self
    }

    /// With `--mcp-config` values (files or inline JSON).
    pub fn with_flag_configs(mut self, configs: impl IntoIterator<Item = String>) -> Self {
        self.flag_configs.extend(configs);
        self
    }

    /// With the servers of the session's plugins.
    pub fn with_plugin_servers(mut self, servers: impl IntoIterator<Item = ServerEntry>) -> Self {
        self.plugin_servers.extend(servers);
        self
    }

    /// The project's `.mcp.json`.
    pub fn project_file(&self) -> PathBuf {
        self.cwd.join(".mcp.json")
    }
}

/// Every configured server (one entry per name, sorted by name), the entries they shadow, and
/// the problems met. A bad server or file never drops the others.
#[derive(Debug, Clone, Default)]
pub struct McpConfig {
    /// Every server, highest-precedence definition of each name.
    pub servers: Vec<ServerEntry>,
    /// Entries of the same name from lower sources, hidden by a server of `servers`.
    pub shadowed: Vec<ServerEntry>,
    /// What could not be read.
    pub errors: Vec<McpConfigError>,
}

impl McpConfig {
    /// The server `name`, if configured.
    pub fn get(&self, name: &str) -> Option<&ServerEntry> {
        self.servers.iter().find(|s| s.name == name)
    }
}

/// One `mcpServers` object with where it came from, in ascending precedence order.
struct Candidate {
    scope: McpScope,
    origin: String,
    servers: Value,
}

/// Reads every source. `settings` is the session's loaded settings (user, local, managed and
/// `--settings` layers are read; project settings are refused).
pub fn load_config(sources: &McpSources, settings: &LoadedSettings) -> McpConfig {
    let mut errors = Vec::new();
    let mut candidates: Vec<Candidate> = Vec::new();
    if !sources.strict {
        let claude = sources
            .user_home
            .as_ref()
            .map(|home| home.join(".claude.json"))
            .and_then(|path| read_json(&path, &mut errors).map(|v| (path, v)));
        // Lowest first: managed and user, then the project's file, then local.
        for layer in settings_layers(settings, &[SettingsSource::Managed]) {
            candidates.push(layer);
        }
        if let Some((path, value)) = &claude
            && let Some(servers) = value.get(SERVERS_KEY)
        {
            candidates.push(Candidate {
                scope: McpScope::User,
                origin: path.display().to_string(),
                servers: servers.clone(),
            });
        }
        candidates.extend(settings_layers(settings, &[SettingsSource::User]));
        let project = sources.project_file();
        if let Some(value) = read_json(&project, &mut errors) {
            candidates.push(Candidate {
                scope: McpScope::Project,
                origin: project.display().to_string(),
                servers: value.get(SERVERS_KEY).cloned().unwrap_or(Value::Null),
            });
        }
        if let Some((path, value)) = &claude
            && let Some(servers) = claude_project_servers(value, &sources.cwd)
        {
            candidates.push(Candidate {
                scope: McpScope::Local,
                origin: format!("{} (projects.{})", path.display(), sources.cwd.display()),
                servers: servers.clone(),
            });
        }
        candidates.extend(settings_layers(settings, &[SettingsSource::Local]));
        candidates.extend(settings_layers(settings, &[SettingsSource::Flag]));
        for layer in &settings.layers {
            if layer.source == SettingsSource::Project && layer.raw.contains_key(SERVERS_KEY) {
                errors.push(McpConfigError::ProjectSettings {
                    origin: label(layer.path.as_deref()),
                });
            }
        }
    }
    for (index, flag) in sources.flag_configs.iter().enumerate() {
        let (origin, value) = if flag.trim_start().starts_with('{') {
            let origin = if sources.flag_configs.len() == 1 {
                "--mcp-config (inline JSON)".to_owned()
            } else {
                format!("--mcp-config #{} (inline JSON)", index + 1)
            };
            (origin.clone(), parse_json(&origin, flag, &mut errors))
        } else {
            let path = resolve(&sources.cwd, flag);
            let origin = path.display().to_string();
            match std::fs::read_to_string(&path) {
                Ok(text) => (origin.clone(), parse_json(&origin, &text, &mut errors)),
                Err(error) => {
                    errors.push(McpConfigError::Read {
                        origin: origin.clone(),
                        message: format!("{error} (--mcp-config takes a file or inline JSON)"),
                    });
                    (origin, None)
                }
            }
        };
        if let Some(value) = value {
            candidates.push(Candidate {
                scope: McpScope::Dynamic,
                origin,
                servers: value.get(SERVERS_KEY).cloned().unwrap_or(Value::Null),
            });
        }
    }
    let mut config = merge(candidates, errors);
    if !sources.strict {
        // Plugins' servers are named `plugin:PLUGIN:SERVER`; a configured one of the same name
        // (only deliberately) wins.
        for entry in &sources.plugin_servers {
            match config.servers.iter().any(|s| s.name == entry.name) {
                true => config.shadowed.push(entry.clone()),
                false => config.servers.push(entry.clone()),
            }
        }
        config.servers.sort_by(|a, b| a.name.cmp(&b.name));
    }
    config
}

fn merge(candidates: Vec<Candidate>, mut errors: Vec<McpConfigError>) -> McpConfig {
    // Highest precedence last in `candidates`; walk it from the top so the first entry seen for
    // a name wins and the later ones are shadowed.
    let mut winners: BTreeMap<String, ServerEntry> = BTreeMap::new();
    let mut shadowed = Vec::new();
    for candidate in candidates.into_iter().rev() {
        let servers = match candidate.servers {
            Value::Null => continue,
            Value::Object(servers) => servers,
            _ => {
                errors.push(McpConfigError::NotAnObject {
                    origin: candidate.origin,
                });
                continue;
            }
        };
        for (name, value) in servers {
            let parsed = match invalid_server_name(&name) {
                Some(why) => Err(ServerConfigError::BadName(why)),
                None => McpServerConfig::from_json(&value),
            };
            let config = match parsed {
                Ok(config) => config,
                Err(error) => {
                    errors.push(McpConfigError::Server {
                        origin: candidate.origin.clone(),
                        name,
                        error,
                    });
                    continue;
                }
            };
            let entry = ServerEntry {
                name: name.clone(),
                config,
                scope: candidate.scope,
                origin: candidate.origin.clone(),
            };
            match winners.entry(name) {
                std::collections::btree_map::Entry::Occupied(_) => shadowed.push(entry),
                std::collections::btree_map::Entry::Vacant(slot) => {
                    slot.insert(entry);
                }
            }
        }
    }
    McpConfig {
        servers: winners.into_values().collect(),
        shadowed,
        errors,
    }
}

fn settings_layers(settings: &LoadedSettings, wanted: &[SettingsSource]) -> Vec<Candidate> {
    settings
        .layers
        .iter()
        .filter(|layer| wanted.contains(&layer.source))
        .filter_map(|layer| {
            let servers = layer.raw.get(SERVERS_KEY)?.clone();
            let scope = match layer.source {
                SettingsSource::Managed => McpScope::Managed,
                SettingsSource::User => McpScope::User,
                SettingsSource::Local => McpScope::Local,
                SettingsSource::Flag => McpScope::Dynamic,
                // Refused by the caller; never reached with the lists it passes.
                SettingsSource::Project => return None,
            };
            Some(Candidate {
                scope,
                origin: label(layer.path.as_deref()),
                servers,
            })
        })
        .collect()
}

/// `projects[cwd].mcpServers` of `~/.claude.json` (Claude Code's local scope).
fn claude_project_servers<'a>(claude: &'a Value, cwd: &Path) -> Option<&'a Value> {
    let projects = claude.get("projects")?.as_object()?;
    let key = cwd.to_string_lossy();
    projects.get(key.as_ref())?.get(SERVERS_KEY)
}

fn label(path: Option<&Path>) -> String {
    path.map_or_else(
        || "--settings (inline JSON)".to_owned(),
        |p| p.display().to_string(),
    )
}

fn resolve(cwd: &Path, path: &str) -> PathBuf {
    let path = Path::new(path);
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        cwd.join(path)
    }
}

/// A JSON file that may be absent (absent is not an error).
fn read_json(path: &Path, errors: &mut Vec<McpConfigError>) -> Option<Value> {
    let origin = path.display().to_string();
    match std::fs::read_to_string(path) {
        Ok(text) => parse_json(&origin, &text, errors),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => None,
        Err(error) => {
            errors.push(McpConfigError::Read {
                origin,
                message: error.to_string(),
            });
            None
        }
    }
}

fn parse_json(origin: &str, text: &str, errors: &mut Vec<McpConfigError>) -> Option<Value> {
    match serde_json::from_str::<Value>(text) {
        Ok(value @ Value::Object(_)) => Some(value),
        Ok(_) => {
            errors.push(McpConfigError::NotAnObject {
                origin: origin.to_owned(),
            });
            None
        }
        Err(error) => {
            errors.push(McpConfigError::Syntax {
                origin: origin.to_owned(),
                line: error.line(),
                column: error.column(),
                message: error.to_string(),
            });
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plugin_entry(name: &str) -> ServerEntry {
        ServerEntry {
            name: name.to_owned(),
            config: McpServerConfig::Stdio {
                command: "/plugin/srv".to_owned(),
                args: Vec::new(),
                env: Default::default(),
            },
            scope: McpScope::Plugin,
            origin: "/plugin/.mcp.json".to_owned(),
        }
    }

    #[test]
    fn plugin_servers_join_unless_strict_and_yield_a_configured_name() {
        let dir = tempfile::tempdir().unwrap();
        let flag = r#"{"mcpServers": {"plugin:p:taken": {"command": "mine"}}}"#.to_owned();
        let sources = McpSources::new(dir.path())
            .with_flag_configs([flag])
            .with_plugin_servers([
                plugin_entry("plugin:p:echo"),
                plugin_entry("plugin:p:taken"),
            ]);
        let config = load_config(&sources, &LoadedSettings::default());
        let names: Vec<_> = config
            .servers
            .iter()
            .map(|s| (s.name.as_str(), s.scope))
            .collect();
        assert_eq!(
            names,
            [
                ("plugin:p:echo", McpScope::Plugin),
                ("plugin:p:taken", McpScope::Dynamic)
            ]
        );
        assert_eq!(config.shadowed.len(), 1);
        let strict = McpSources {
            strict: true,
            ..sources
        };
        let config = load_config(&strict, &LoadedSettings::default());
        assert!(config.servers.iter().all(|s| s.scope != McpScope::Plugin));
        assert_eq!(
            crate::tool_name("plugin:p:echo", "add"),
            "mcp__plugin_p_echo__add"
        );
    }
}
