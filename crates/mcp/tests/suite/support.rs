//! Shared helpers: a scratch project with its own tine home, the test server's stdio config,
//! start-up with short timeouts, and bounded waits (no test asserts on wall time).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tine_config::settings::{self, LoadedSettings, SettingsPaths};
use tine_mcp::{McpManager, McpOptions, McpSources, McpWarning};
use tine_tools::{Tool, ToolContext, ToolOutput, run_tool};

pub(super) const SERVER: &str = env!("CARGO_BIN_EXE_tine-mcp-test-server");

/// A generous guard: a hang fails the test instead of blocking the suite.
pub(super) const GUARD: Duration = Duration::from_secs(60);

pub(super) struct Scratch {
    _dir: tempfile::TempDir,
    pub project: PathBuf,
    pub home: PathBuf,
}

impl Scratch {
    pub(super) fn new() -> Self {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        let project = dir.path().join("project");
        let home = dir.path().join("tine-home");
        std::fs::create_dir_all(project.join(".tine")).unwrap_or_else(|e| panic!("{e}"));
        std::fs::create_dir_all(&home).unwrap_or_else(|e| panic!("{e}"));
        Scratch {
            _dir: dir,
            project,
            home,
        }
    }

    pub(super) fn paths(&self) -> SettingsPaths {
        SettingsPaths::new(&self.project, &self.home)
            .with_managed(self.home.join("no-managed-settings.json"))
    }

    pub(super) fn settings(&self) -> LoadedSettings {
        settings::load(&self.paths())
    }

    pub(super) fn write(&self, relative: &str, value: &Value) {
        let path = self.project.join(relative);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).unwrap_or_else(|e| panic!("{e}"));
        }
        std::fs::write(&path, value.to_string()).unwrap_or_else(|e| panic!("{e}"));
    }

    pub(super) fn write_user_settings(&self, value: &Value) {
        std::fs::write(self.home.join("settings.json"), value.to_string())
            .unwrap_or_else(|e| panic!("{e}"));
    }

    pub(super) fn marker(&self, name: &str) -> PathBuf {
        self.project.join(format!("{name}.ran"))
    }

    pub(super) fn options(&self) -> McpOptions {
        let mut options = McpOptions::new(&self.home);
        options.startup_timeout = Duration::from_secs(20);
        options
    }

    pub(super) fn context(&self) -> ToolContext {
        ToolContext::new(&self.project)
    }

    /// Starts with `flag_configs` as `--mcp-config` values (plus the project's files).
    pub(super) async fn start(
        &self,
        flag_configs: Vec<String>,
        options: McpOptions,
    ) -> (McpManager, Vec<Arc<dyn Tool>>, Vec<McpWarning>) {
        let sources = McpSources::new(&self.project).with_flag_configs(flag_configs);
        let settings = self.settings();
        tokio::time::timeout(GUARD, McpManager::start(&sources, &settings, options))
            .await
            .unwrap_or_else(|_| panic!("start did not finish within the guard"))
    }
}

/// The test server over stdio, with extra flags.
pub(super) fn stdio_server(args: &[&str]) -> Value {
    json!({"command": SERVER, "args": args})
}

/// `{"mcpServers": {...}}` as inline `--mcp-config` JSON.
pub(super) fn mcp_config(servers: Value) -> String {
    json!({ "mcpServers": servers }).to_string()
}

pub(super) fn names(tools: &[Arc<dyn Tool>]) -> Vec<String> {
    tools.iter().map(|t| t.name().to_owned()).collect()
}

pub(super) fn find<'a>(tools: &'a [Arc<dyn Tool>], name: &str) -> &'a Arc<dyn Tool> {
    tools
        .iter()
        .find(|t| t.name() == name)
        .unwrap_or_else(|| panic!("no tool {name} in {:?}", names(tools)))
}

pub(super) async fn call(
    tools: &[Arc<dyn Tool>],
    name: &str,
    input: Value,
    ctx: &ToolContext,
) -> ToolOutput {
    let tool = find(tools, name);
    tokio::time::timeout(GUARD, run_tool(tool.as_ref(), input, ctx))
        .await
        .unwrap_or_else(|_| panic!("{name} did not answer within the guard"))
}

/// The pid a server wrote to its marker file.
pub(super) fn marker_pid(path: &Path) -> Option<i32> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// Whether a process still exists (a zombie counts: it has not been reaped).
pub(super) fn process_exists(pid: i32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// Polls `condition` until true or the guard passes.
pub(super) async fn eventually(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + GUARD;
    while !condition() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "never happened: {what}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
