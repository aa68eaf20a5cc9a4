//! `tine mcp list|get|add|remove|trust`: the MCP servers a session here would start, for people
//! and scripts. Parsing, the files written and the listing are tine-mcp's
//! ([`tine_mcp::run_mcp_command`]); this module only finds the places a session reads and
//! prints the result.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow};
use tine_config::settings::{LoadedSettings, SettingsPaths};
use tine_mcp::{
    McpCommandEnv, McpManager, McpOptions, McpServerInfo, McpSources, parse_mcp_args,
    run_mcp_command,
};

use crate::setup::{settings_paths, user_home};

/// The places a session at the current directory reads MCP servers from.
struct Place {
    cwd: PathBuf,
    home: PathBuf,
    user_home: Option<PathBuf>,
}

impl Place {
    fn here() -> Result<Place> {
        let (cwd, home) = crate::setup::here()?;
        Ok(Place {
            cwd,
            home,
            user_home: user_home(),
        })
    }

    fn sources(&self) -> McpSources {
        sources(&self.cwd, self.user_home.as_deref())
    }

    fn settings_paths(&self) -> SettingsPaths {
        settings_paths(&self.cwd, &self.home, self.user_home.as_deref(), None)
    }
}

/// The sources a session at `cwd` reads (before any `--mcp-config`).
pub(crate) fn sources(cwd: &Path, user_home: Option<&Path>) -> McpSources {
    let sources = McpSources::new(cwd);
    match user_home {
        Some(home) => sources.with_user_home(home),
        None => sources,
    }
}

/// `tine mcp ARGS` (after `mcp`): parsed and carried out by tine-mcp.
pub(crate) fn run(args: &[String]) -> Result<String> {
    let command = parse_mcp_args(args).map_err(|e| anyhow!(e))?;
    let place = Place::here()?;
    let env = McpCommandEnv {
        sources: place.sources(),
        settings_paths: place.settings_paths(),
        options: McpOptions::from_env(&place.home),
    };
    let runtime = runtime()?;
    let result = runtime.block_on(run_mcp_command(&command, &env));
    tine_tools::kill_tool_processes();
    runtime.shutdown_background();
    result.map_err(|e| anyhow!(e))
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

/// Every server a session at `cwd` would configure, with the state it reaches when started
/// now (for `tine doctor`). Servers that need trust are not started.
pub(crate) fn statuses(
    cwd: &Path,
    home: &Path,
    user_home: Option<&Path>,
    loaded: &LoadedSettings,
) -> Result<Vec<McpServerInfo>> {
    let sources = sources(cwd, user_home);
    let options = McpOptions::from_env(home);
    let runtime = runtime()?;
    let infos = runtime.block_on(async {
        let (manager, _tools, _warnings) = McpManager::start(&sources, loaded, options).await;
        let infos = manager.statuses();
        manager.shutdown().await;
        infos
    });
    tine_tools::kill_tool_processes();
    runtime.shutdown_background();
    Ok(infos)
}
