//! One plugin's parts, read as Claude Code reads them: the default folders (`commands/`,
//! `agents/`, `skills/`, `hooks/hooks.json`, `.mcp.json`) and what the manifest adds. Every
//! name is the plugin's (`PLUGIN:command`, `PLUGIN:agent`, `PLUGIN:skill`, MCP server
//! `plugin:PLUGIN:SERVER`); `${CLAUDE_PLUGIN_ROOT}` (and `${CLAUDE_PLUGIN_DATA}`) stand for
//! the plugin's folder (and its data folder) in hooks, MCP servers, commands, agents and
//! skills, and the hooks and stdio servers get both in their environment. Anything wrong is
//! an error naming the file, and the caller skips the whole plugin: a plugin loads whole or
//! not at all.

use std::path::{Path, PathBuf};

use serde_json::Value;
use tine_config::plugins::{ComponentRef, PluginFileError, PluginManifest};
use tine_config::settings::{HookSetting, parse_hooks_file};
use tine_fork_runtime::{AgentDefinition, parse_agent_file};
use tine_mcp::{McpScope, McpServerConfig, ServerEntry};
use tine_query_loop::hooks::HookConfig;

use crate::custom_commands::{self, CustomCommand};
use crate::skills::{Skill, SkillScope, parse_skill};

/// The variable a plugin's files name its folder by.
pub(crate) const ROOT_VAR: &str = "CLAUDE_PLUGIN_ROOT";
/// The variable a plugin's files name its data folder by.
pub(crate) const DATA_VAR: &str = "CLAUDE_PLUGIN_DATA";

/// What one plugin brings.
#[derive(Debug, Clone, Default)]
pub struct PluginParts {
    /// Its slash commands, named `PLUGIN:NAME`.
    pub commands: Vec<CustomCommand>,
    /// Its typed agents, named `PLUGIN:NAME`.
    pub agents: Vec<AgentDefinition>,
    /// Its skills, named `PLUGIN:NAME`.
    pub skills: Vec<Skill>,
    /// Its hooks, `${CLAUDE_PLUGIN_ROOT}` put in.
    pub hooks: Vec<HookSetting>,
    /// Its MCP servers, named `plugin:PLUGIN:SERVER`.
    pub mcp_servers: Vec<ServerEntry>,
    /// What its hooks and servers run with: `CLAUDE_PLUGIN_ROOT`, `CLAUDE_PLUGIN_DATA`.
    pub env: Vec<(String, String)>,
    /// Said but not fatal (a hook event of Claude Code's that tine does not run).
    pub warnings: Vec<String>,
}

impl PluginParts {
    /// `2 commands, 1 agent, ...`: what it brings, for people.
    pub fn summary(&self) -> String {
        let count = |n: usize, one: &str, many: &str| match n {
            1 => format!("1 {one}"),
            n => format!("{n} {many}"),
        };
        [
            count(self.commands.len(), "command", "commands"),
            count(self.agents.len(), "agent", "agents"),
            count(self.skills.len(), "skill", "skills"),
            count(self.hooks.len(), "hook", "hooks"),
            count(self.mcp_servers.len(), "MCP server", "MCP servers"),
        ]
        .join(", ")
    }
}

/// Reads the parts of plugin `manifest` at `root`, its data folder `data`.
pub(crate) fn read_parts(
    root: &Path,
    data: &Path,
    manifest: &PluginManifest,
) -> Result<PluginParts, PluginFileError> {
    let manifest_path = root.join(tine_config::plugins::MANIFEST_PATH);
    let vars = Vars {
        root: root.display().to_string(),
        data: data.display().to_string(),
    };
    let name = &manifest.name;
    let mut parts = PluginParts {
        env: vec![
            (ROOT_VAR.to_owned(), vars.root.clone()),
            (DATA_VAR.to_owned(), vars.data.clone()),
        ],
        ..PluginParts::default()
    };
    // The default folders, then the manifest's paths (each must exist).
    let extra = |paths: &[String]| -> Result<Vec<PathBuf>, PluginFileError> {
        paths
            .iter()
            .map(|p| {
                let path = root.join(p);
                match path.exists() {
                    true => Ok(path),
                    false => Err(PluginFileError::new(
                        &manifest_path,
                        format!("names `{p}`, which does not exist in the plugin"),
                    )),
                }
            })
            .collect()
    };
    let with_default = |default: &str, paths: &[String]| -> Result<Vec<PathBuf>, PluginFileError> {
        let mut all: Vec<PathBuf> = Some(root.join(default))
            .filter(|p| p.exists())
            .into_iter()
            .collect();
        for path in extra(paths)? {
            if !all.contains(&path) {
                all.push(path);
            }
        }
        Ok(all)
    };
    for place in with_default("commands", &manifest.commands)? {
        let found = match place.is_dir() {
            true => custom_commands::load_dir(&place),
            false => {
                let stem = place
                    .file_stem()
                    .and_then(|s| s.to_str())
                    .unwrap_or_default()
                    .to_owned();
                let command = custom_commands::read_command(&place, stem)
                    .ok_or_else(|| PluginFileError::new(&place, "cannot be read"))?;
                vec![command]
            }
        };
        for mut command in found {
            command.name = format!("{name}:{}", command.name);
            command.body = vars.put_in(&command.body);
            let path = command.path.clone();
            push_unique(&mut parts.commands, command, |c| &c.name, &path)?;
        }
    }
    for place in with_default("agents", &manifest.agents)? {
        for path in markdown_files(&place)? {
            let text = std::fs::read_to_string(&path)
                .map_err(|e| PluginFileError::new(&path, format!("cannot be read: {e}")))?;
            let mut agent =
                parse_agent_file(&text, &path).map_err(|e| PluginFileError::new(&path, e))?;
            agent.name = format!("{name}:{}", agent.name);
            agent.system_prompt = vars.put_in(&agent.system_prompt);
            push_unique(&mut parts.agents, agent, |a| &a.name, &path)?;
        }
    }
    for place in with_default("skills", &manifest.skills)? {
        for folder in skill_folders(&place)? {
            let path = folder.join("SKILL.md");
            let text = std::fs::read_to_string(&path)
                .map_err(|e| PluginFileError::new(&path, format!("cannot be read: {e}")))?;
            let mut skill = parse_skill(&text, &folder, SkillScope::Plugin)
                .map_err(|e| PluginFileError::new(&path, e))?;
            skill.name = format!("{name}:{}", skill.name);
            skill.body = vars.put_in(&skill.body);
            push_unique(&mut parts.skills, skill, |s| &s.name, &path)?;
        }
    }
    // Hooks: `hooks/hooks.json`, then the manifest's files or inline objects.
    let mut hook_sources: Vec<(PathBuf, String)> = Vec::new();
    let default_hooks = root.join("hooks").join("hooks.json");
    if default_hooks.is_file() {
        hook_sources.push((default_hooks.clone(), read(&default_hooks)?));
    }
    for component in &manifest.hooks {
        match component {
            ComponentRef::Path(p) => {
                let path = extra(std::slice::from_ref(p))?.remove(0);
                if path != default_hooks {
                    hook_sources.push((path.clone(), read(&path)?));
                }
            }
            ComponentRef::Inline(value) => {
                let value = match value.get("hooks") {
                    Some(_) => value.clone(),
                    None => serde_json::json!({ "hooks": value }),
                };
                hook_sources.push((manifest_path.clone(), value.to_string()));
            }
        }
    }
    for (path, text) in hook_sources {
        let hooks = parse_hooks_file(&path, &text).map_err(|errors| match errors.first() {
            Some(error) => settings_error(error),
            None => PluginFileError::new(&path, "its hooks cannot be read"),
        })?;
        for mut hook in hooks {
            hook.command = hook.command.map(|c| vars.put_in(&c));
            parts.hooks.push(hook);
        }
    }
    // What they mean (an unknown event, a bad matcher) is checked now, so a plugin whose
    // hooks cannot run is skipped as a whole rather than started without them.
    for error in HookConfig::default().add_hooks(&parts.hooks, &parts.env) {
        match error.is_fatal() {
            true => return Err(settings_error(&error)),
            false => parts.warnings.push(error.to_string()),
        }
    }
    // MCP servers: `.mcp.json`, then the manifest's files or inline objects.
    let mut server_sources: Vec<(PathBuf, Value)> = Vec::new();
    let default_mcp = root.join(".mcp.json");
    if default_mcp.is_file() {
        server_sources.push((default_mcp.clone(), json_file(&default_mcp)?));
    }
    for component in &manifest.mcp_servers {
        match component {
            ComponentRef::Path(p) => {
                let path = extra(std::slice::from_ref(p))?.remove(0);
                if path != default_mcp {
                    let value = json_file(&path)?;
                    server_sources.push((path, value));
                }
            }
            ComponentRef::Inline(value) => {
                server_sources.push((manifest_path.clone(), value.clone()))
            }
        }
    }
    for (path, value) in server_sources {
        let servers = value.get("mcpServers").unwrap_or(&value);
        let Value::Object(servers) = servers else {
            return Err(PluginFileError::new(
                &path,
                "`mcpServers` must be an object of NAME: {...} entries",
            ));
        };
        for (server, config) in servers {
            let config = McpServerConfig::from_json(&vars.put_in_json(config))
                .map_err(|e| PluginFileError::new(&path, format!("MCP server `{server}`: {e}")))?;
            let config = match config {
                McpServerConfig::Stdio {
                    command,
                    args,
                    mut env,
                } => {
                    for (key, value) in &parts.env {
                        env.entry(key.clone()).or_insert_with(|| value.clone());
                    }
                    McpServerConfig::Stdio { command, args, env }
                }
                other => other,
            };
            let entry = ServerEntry {
                name: format!("plugin:{name}:{server}"),
                config,
                scope: McpScope::Plugin,
                origin: path.display().to_string(),
            };
            if parts.mcp_servers.iter().any(|s| s.name == entry.name) {
                return Err(PluginFileError::new(
                    &path,
                    format!("MCP server `{server}` is declared twice"),
                ));
            }
            parts.mcp_servers.push(entry);
        }
    }
    parts.commands.sort_by(|a, b| a.name.cmp(&b.name));
    parts.agents.sort_by(|a, b| a.name.cmp(&b.name));
    parts.skills.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(parts)
}

/// `${CLAUDE_PLUGIN_ROOT}` and `${CLAUDE_PLUGIN_DATA}` of one plugin.
struct Vars {
    root: String,
    data: String,
}

impl Vars {
    fn put_in(&self, text: &str) -> String {
        text.replace(&format!("${{{ROOT_VAR}}}"), &self.root)
            .replace(&format!("${{{DATA_VAR}}}"), &self.data)
    }

    fn put_in_json(&self, value: &Value) -> Value {
        match value {
            Value::String(s) => Value::String(self.put_in(s)),
            Value::Array(items) => {
                Value::Array(items.iter().map(|v| self.put_in_json(v)).collect())
            }
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| (k.clone(), self.put_in_json(v)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }
}

/// A settings-style problem (`FILE:LINE:COL: what`) as a plugin file's.
fn settings_error(error: &tine_config::settings::SettingsError) -> PluginFileError {
    let file = error.file();
    let text = error.to_string();
    let message = match text.strip_prefix(file).and_then(|t| t.strip_prefix(':')) {
        Some(rest) => format!("at {rest}"),
        None => text.clone(),
    };
    PluginFileError::new(file, message)
}

fn read(path: &Path) -> Result<String, PluginFileError> {
    std::fs::read_to_string(path)
        .map_err(|e| PluginFileError::new(path, format!("cannot be read: {e}")))
}

fn json_file(path: &Path) -> Result<Value, PluginFileError> {
    tine_config::plugins::parse_json(path, &read(path)?)
}

/// The `.md` files of `place` (a file, or a folder's own, sorted).
fn markdown_files(place: &Path) -> Result<Vec<PathBuf>, PluginFileError> {
    if place.is_file() {
        return Ok(vec![place.to_path_buf()]);
    }
    let entries = std::fs::read_dir(place)
        .map_err(|e| PluginFileError::new(place, format!("cannot be read: {e}")))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "md"))
        .collect();
    files.sort();
    Ok(files)
}

/// The skill folders of `place`: itself when it holds a `SKILL.md`, else its folders that do.
fn skill_folders(place: &Path) -> Result<Vec<PathBuf>, PluginFileError> {
    if place.join("SKILL.md").is_file() {
        return Ok(vec![place.to_path_buf()]);
    }
    let entries = std::fs::read_dir(place)
        .map_err(|e| PluginFileError::new(place, format!("cannot be read: {e}")))?;
    let mut folders: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.join("SKILL.md").is_file())
        .collect();
    folders.sort();
    Ok(folders)
}

/// Adds `item` unless its name is taken within the plugin (an error naming its file).
fn push_unique<T>(
    list: &mut Vec<T>,
    item: T,
    name: impl Fn(&T) -> &String,
    path: &Path,
) -> Result<(), PluginFileError> {
    if list.iter().any(|other| name(other) == name(&item)) {
        return Err(PluginFileError::new(
            path,
            format!("`{}` is defined twice in the plugin", name(&item)),
        ));
    }
    list.push(item);
    Ok(())
}
