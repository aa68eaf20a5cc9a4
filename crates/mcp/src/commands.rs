//! `tine mcp list|get|add|remove|trust`, mirroring `claude mcp ...`: arguments in, text out (the
//! CLI parses nothing itself and only prints). `list` connects to every startable server to
//! report its state; the others only read and write configuration files.
//!
//! Scopes and their files: `local` (the default) `.tine/settings.local.json`, `project`
//! `.mcp.json`, `user` `~/.tine/settings.json`. `trust` records a `.mcp.json` server in local
//! settings' `enabledMcpjsonServers`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

use serde_json::Value;
use tine_config::settings::{self, SettingsError, SettingsPaths};

use crate::config::McpServerConfig;
use crate::manager::{McpManager, McpOptions};
use crate::names::is_plain_server_name;
use crate::sources::{McpScope, McpSources, SERVERS_KEY, load_config};
use crate::trust::{DISABLED_KEY, ENABLED_KEY, ProjectTrust, TrustDecision, how_to_trust};

/// The usage of `tine mcp`, shown with a usage error.
pub const MCP_USAGE: &str = "usage: tine mcp list
       tine mcp get NAME
       tine mcp add [--scope local|project|user] [-e KEY=VALUE]... NAME -- COMMAND [ARGS...]
       tine mcp add --transport http [--scope ...] [--header 'KEY: VALUE']... NAME URL
       tine mcp remove [--scope local|project|user] NAME
       tine mcp trust NAME        (let a .mcp.json server start)";

/// One `tine mcp` command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpCommand {
    /// `tine mcp list`: every server and its status.
    List,
    /// `tine mcp get NAME`: one server's config and status.
    Get {
        /// The server's name.
        name: String,
    },
    /// `tine mcp add`: add a server to a scope's file.
    Add {
        /// The server's name.
        name: String,
        /// The file it goes to (local, project or user).
        scope: McpScope,
        /// How to reach it.
        config: McpServerConfig,
    },
    /// `tine mcp remove NAME`: remove a server.
    Remove {
        /// The server's name.
        name: String,
        /// The scope to remove it from; `None`: the only one that has it.
        scope: Option<McpScope>,
    },
    /// `tine mcp trust NAME`: trust a `.mcp.json` server.
    Trust {
        /// The server's name.
        name: String,
    },
}

/// Why a command failed; each says what to do.
#[derive(Debug, thiserror::Error)]
pub enum McpCommandError {
    /// The command line cannot be read.
    #[error("{0}\n{MCP_USAGE}")]
    Usage(String),
    /// The server name has characters a name cannot have.
    #[error("invalid server name `{0}`: use letters, digits, `_` and `-` (no `__`)")]
    BadName(String),
    /// No server has this name.
    #[error("no MCP server named `{0}` (see `tine mcp list`)")]
    NotFound(String),
    /// A server of this name is already in that scope.
    #[error(
        "MCP server `{name}` already exists in {path}; remove it first (tine mcp remove --scope {scope} {name})"
    )]
    Exists {
        /// The server's name.
        name: String,
        /// The file it is in.
        path: String,
        /// The scope.
        scope: McpScope,
    },
    /// Several scopes have a server of this name; say which.
    #[error("MCP server `{name}` is in several scopes ({scopes}); say which with --scope")]
    Ambiguous {
        /// The server's name.
        name: String,
        /// The scopes that have it.
        scopes: String,
    },
    /// Only `.mcp.json` servers need trust.
    #[error("`{0}` is not a .mcp.json server; only project servers need trust")]
    NotProject(String),
    /// A configuration file could not be read or changed.
    #[error(transparent)]
    File(#[from] SettingsError),
}

fn usage(message: impl Into<String>) -> McpCommandError {
    McpCommandError::Usage(message.into())
}

fn parse_scope(text: &str) -> Result<McpScope, McpCommandError> {
    match text {
        "local" => Ok(McpScope::Local),
        "project" => Ok(McpScope::Project),
        "user" | "global" => Ok(McpScope::User),
        other => Err(usage(format!(
            "unknown scope `{other}`: use local, project or user"
        ))),
    }
}

/// Parses the arguments after `tine mcp`.
pub fn parse_mcp_args(args: &[String]) -> Result<McpCommand, McpCommandError> {
    let Some((verb, rest)) = args.split_first() else {
        return Err(usage("which mcp command?"));
    };
    let one_name = |rest: &[String]| -> Result<String, McpCommandError> {
        match rest {
            [name] => Ok(name.clone()),
            _ => Err(usage(format!("`{verb}` takes one server name"))),
        }
    };
    match verb.as_str() {
        "list" if rest.is_empty() => Ok(McpCommand::List),
        "list" => Err(usage("`list` takes no arguments")),
        "get" => Ok(McpCommand::Get {
            name: one_name(rest)?,
        }),
        "trust" => Ok(McpCommand::Trust {
            name: one_name(rest)?,
        }),
        "remove" => {
            let mut scope = None;
            let mut names = Vec::new();
            let mut iter = rest.iter();
            while let Some(arg) = iter.next() {
                match arg.as_str() {
                    "-s" | "--scope" => {
                        let value = iter.next().ok_or_else(|| usage("--scope needs a value"))?;
                        scope = Some(parse_scope(value)?);
                    }
                    other if other.starts_with('-') => {
                        return Err(usage(format!("unknown option `{other}`")));
                    }
                    other => names.push(other.to_owned()),
                }
            }
            Ok(McpCommand::Remove {
                name: one_name(&names)?,
                scope,
            })
        }
        "add" => parse_add(rest),
        other => Err(usage(format!("unknown mcp command `{other}`"))),
    }
}

fn parse_add(args: &[String]) -> Result<McpCommand, McpCommandError> {
    let mut scope = McpScope::Local;
    let mut transport = "stdio".to_owned();
    let mut env = BTreeMap::new();
    let mut headers = BTreeMap::new();
    let mut positional: Vec<String> = Vec::new();
    let mut iter = args.iter();
    let mut options_done = false;
    while let Some(arg) = iter.next() {
        // Once NAME and COMMAND are known, the rest are the command's own arguments.
        if options_done || positional.len() >= 2 {
            positional.push(arg.clone());
            continue;
        }
        let mut value = |flag: &str| {
            iter.next()
                .cloned()
                .ok_or_else(|| usage(format!("{flag} needs a value")))
        };
        match arg.as_str() {
            "--" => options_done = true,
            "-s" | "--scope" => scope = parse_scope(&value(arg)?)?,
            "-t" | "--transport" => transport = value(arg)?,
            "-e" | "--env" => {
                let pair = value(arg)?;
                let (key, val) = pair
                    .split_once('=')
                    .ok_or_else(|| usage(format!("--env takes KEY=VALUE, not `{pair}`")))?;
                env.insert(key.to_owned(), val.to_owned());
            }
            "-H" | "--header" => {
                let pair = value(arg)?;
                let (key, val) = pair
                    .split_once(':')
                    .ok_or_else(|| usage(format!("--header takes 'KEY: VALUE', not `{pair}`")))?;
                headers.insert(key.trim().to_owned(), val.trim().to_owned());
            }
            other if other.starts_with('-') => {
                return Err(usage(format!(
                    "unknown option `{other}` (put the server's command after `--`)"
                )));
            }
            other => positional.push(other.to_owned()),
        }
    }
    let mut positional = positional.into_iter();
    let name = positional
        .next()
        .ok_or_else(|| usage("`add` needs a server name"))?;
    if !is_plain_server_name(&name) {
        return Err(McpCommandError::BadName(name));
    }
    let target = positional.next();
    let rest: Vec<String> = positional.collect();
    let config = match transport.as_str() {
        "stdio" => {
            if !headers.is_empty() {
                return Err(usage("--header is for --transport http"));
            }
            McpServerConfig::Stdio {
                command: target.ok_or_else(|| usage("`add` needs the server's command"))?,
                args: rest,
                env,
            }
        }
        "http" => {
            if !env.is_empty() || !rest.is_empty() {
                return Err(usage(
                    "an http server takes a URL only (no --env, no arguments)",
                ));
            }
            McpServerConfig::Http {
                url: target.ok_or_else(|| usage("`add --transport http` needs the URL"))?,
                headers,
            }
        }
        "sse" => {
            return Err(usage(
                "the sse transport is not supported; most servers also speak streamable HTTP: use --transport http",
            ));
        }
        other => {
            return Err(usage(format!(
                "unknown transport `{other}`: use stdio or http"
            )));
        }
    };
    Ok(McpCommand::Add {
        name,
        scope,
        config,
    })
}

/// What a command runs against: the configuration sources, where settings live, how servers
/// run (for `list`).
#[derive(Debug, Clone)]
pub struct McpCommandEnv {
    /// Where the server configs are.
    pub sources: McpSources,
    /// Where the settings files are (trust is written there).
    pub settings_paths: SettingsPaths,
    /// How servers are run (for `list` and `get`, which connect).
    pub options: McpOptions,
}

impl McpCommandEnv {
    /// The file a writable scope lives in.
    fn file_of(&self, scope: McpScope) -> Result<PathBuf, McpCommandError> {
        match scope {
            McpScope::Local => Ok(self.settings_paths.local.clone()),
            McpScope::Project => Ok(self.sources.project_file()),
            McpScope::User => Ok(self.settings_paths.user.clone()),
            McpScope::Managed | McpScope::Dynamic | McpScope::Plugin => Err(usage(format!(
                "the {scope} scope cannot be changed with tine mcp"
            ))),
        }
    }
}

/// Runs one command; the text to print.
pub async fn run_mcp_command(
    command: &McpCommand,
    env: &McpCommandEnv,
) -> Result<String, McpCommandError> {
    let settings = settings::load(&env.settings_paths);
    match command {
        McpCommand::List => {
            let (manager, _tools, warnings) =
                McpManager::start(&env.sources, &settings, env.options.clone()).await;
            let statuses = manager.statuses();
            manager.shutdown().await;
            let mut out = String::new();
            if statuses.is_empty() {
                out.push_str(
                    "No MCP servers configured. Add one with `tine mcp add NAME -- COMMAND [ARGS...]`.\n",
                );
            }
            for info in &statuses {
                let _ = writeln!(
                    out,
                    "{}: {} ({}: {}) - {}",
                    info.name, info.summary, info.scope, info.origin, info.status
                );
            }
            for warning in warnings.iter().filter(|w| {
                w.server
                    .as_ref()
                    .is_none_or(|s| !statuses.iter().any(|i| &i.name == s))
            }) {
                let _ = writeln!(out, "warning: {warning}");
            }
            Ok(out)
        }
        McpCommand::Get { name } => {
            let config = load_config(&env.sources, &settings);
            let entry = config
                .get(name)
                .ok_or_else(|| McpCommandError::NotFound(name.clone()))?;
            let mut out = String::new();
            let _ = writeln!(out, "{name}:");
            let _ = writeln!(out, "  scope: {} ({})", entry.scope, entry.origin);
            let _ = writeln!(out, "  type: {}", entry.config.transport_name());
            match &entry.config {
                McpServerConfig::Stdio { command, args, env } => {
                    let _ = writeln!(out, "  command: {command}");
                    let _ = writeln!(out, "  args: {}", args.join(" "));
                    if !env.is_empty() {
                        // Values often hold tokens: show the names only.
                        let keys: Vec<&str> = env.keys().map(String::as_str).collect();
                        let _ = writeln!(out, "  env: {}", keys.join(", "));
                    }
                }
                McpServerConfig::Http { url, headers } => {
                    let _ = writeln!(out, "  url: {url}");
                    if !headers.is_empty() {
                        let keys: Vec<&str> = headers.keys().map(String::as_str).collect();
                        let _ = writeln!(out, "  headers: {}", keys.join(", "));
                    }
                }
                McpServerConfig::Sdk { name } => {
                    let _ = writeln!(
                        out,
                        "  sdk server: {name} (served by the Agent SDK app driving tine)"
                    );
                }
            }
            if entry.scope == McpScope::Project {
                let trust = ProjectTrust::from_settings(&settings);
                let line = match trust.decide(&settings, name) {
                    TrustDecision::Trusted { key, source } => {
                        format!("trusted ({key} in {source})")
                    }
                    TrustDecision::Disabled => format!("disabled ({DISABLED_KEY})"),
                    TrustDecision::Untrusted => format!("not trusted: {}", how_to_trust(name)),
                };
                let _ = writeln!(out, "  trust: {line}");
            }
            for hidden in config.shadowed.iter().filter(|s| &s.name == name) {
                let _ = writeln!(
                    out,
                    "  overrides: {} ({}: {})",
                    hidden.config, hidden.scope, hidden.origin
                );
            }
            Ok(out)
        }
        McpCommand::Add {
            name,
            scope,
            config,
        } => {
            let path = env.file_of(*scope)?;
            settings::edit_file(&path, |file| {
                if file.contains(&[SERVERS_KEY, name])? {
                    return Err(McpCommandError::Exists {
                        name: name.clone(),
                        path: path.display().to_string(),
                        scope: *scope,
                    });
                }
                Ok(file.set(&[SERVERS_KEY, name], &config.to_json())?)
            })?;
            let mut out = format!(
                "Added {} MCP server {name} to {} ({scope} scope)\n",
                config.transport_name(),
                path.display()
            );
            if *scope == McpScope::Project {
                let _ = writeln!(out, "It starts once trusted: {}", how_to_trust(name));
            }
            Ok(out)
        }
        McpCommand::Remove { name, scope } => {
            let scopes: Vec<McpScope> = match scope {
                Some(scope) => vec![*scope],
                None => {
                    let mut found = Vec::new();
                    for scope in [McpScope::Local, McpScope::Project, McpScope::User] {
                        let path = env.file_of(scope)?;
                        if settings::read_object(&path)?
                            .get(SERVERS_KEY)
                            .and_then(Value::as_object)
                            .is_some_and(|s| s.contains_key(name))
                        {
                            found.push(scope);
                        }
                    }
                    found
                }
            };
            match scopes.as_slice() {
                [] => Err(McpCommandError::NotFound(name.clone())),
                [scope] => {
                    let path = env.file_of(*scope)?;
                    let removed =
                        settings::edit_file(&path, |file| file.remove(&[SERVERS_KEY, name]))?;
                    if removed {
                        Ok(format!(
                            "Removed MCP server {name} from {} ({scope} scope)\n",
                            path.display()
                        ))
                    } else {
                        Err(McpCommandError::NotFound(name.clone()))
                    }
                }
                several => Err(McpCommandError::Ambiguous {
                    name: name.clone(),
                    scopes: several
                        .iter()
                        .map(|s| s.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                }),
            }
        }
        McpCommand::Trust { name } => {
            let config = load_config(&env.sources, &settings);
            match config.get(name) {
                None => return Err(McpCommandError::NotFound(name.clone())),
                Some(entry) if entry.scope != McpScope::Project => {
                    return Err(McpCommandError::NotProject(name.clone()));
                }
                Some(_) => {}
            }
            let path = env.settings_paths.local.clone();
            settings::edit_file(&path, |file| {
                file.add_strings(&[ENABLED_KEY], std::slice::from_ref(name))?;
                file.remove_string(&[DISABLED_KEY], name)
            })?;
            Ok(format!(
                "Trusted MCP server {name} from .mcp.json ({ENABLED_KEY} in {}); it starts with the next session\n",
                path.display()
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn add_parses_like_claude_mcp_add() {
        let cmd = parse_mcp_args(&args("add -e K=V --scope user srv -- npx -y pkg --flag"))
            .unwrap_or_else(|e| panic!("{e}"));
        let McpCommand::Add {
            name,
            scope,
            config,
        } = cmd
        else {
            panic!("not add")
        };
        assert_eq!((name.as_str(), scope), ("srv", McpScope::User));
        assert_eq!(config.to_string(), "npx -y pkg --flag");
        let cmd = parse_mcp_args(&[
            "add".into(),
            "--transport".into(),
            "http".into(),
            "web".into(),
            "http://127.0.0.1:9/mcp".into(),
            "--header".into(),
            "Authorization: Bearer t".into(),
        ]);
        assert!(
            cmd.is_err(),
            "options after the URL are arguments, refused for http"
        );
        let cmd = parse_mcp_args(&[
            "add".into(),
            "--transport".into(),
            "http".into(),
            "-H".into(),
            "Authorization: Bearer t".into(),
            "web".into(),
            "http://127.0.0.1:9/mcp".into(),
        ])
        .unwrap_or_else(|e| panic!("{e}"));
        let McpCommand::Add { config, scope, .. } = cmd else {
            panic!("not add")
        };
        assert_eq!(scope, McpScope::Local);
        assert_eq!(
            config,
            McpServerConfig::Http {
                url: "http://127.0.0.1:9/mcp".into(),
                headers: [("Authorization".to_owned(), "Bearer t".to_owned())]
                    .into_iter()
                    .collect()
            }
        );
        // Without `--`, the command's own flags still pass once NAME and COMMAND are known.
        assert!(parse_mcp_args(&args("add srv npx -y pkg")).is_ok());
        assert!(parse_mcp_args(&args("add my.srv -- x")).is_err());
        assert!(parse_mcp_args(&args("add --transport sse s http://x")).is_err());
        assert!(parse_mcp_args(&args("frob")).is_err());
        assert_eq!(
            parse_mcp_args(&args("remove -s project x")).ok(),
            Some(McpCommand::Remove {
                name: "x".into(),
                scope: Some(McpScope::Project)
            })
        );
    }
}
