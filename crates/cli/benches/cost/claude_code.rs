//! Claude Code on the same scenarios, when `TINE_BENCH_CLAUDE` names its binary: the same
//! mock, a scratch `HOME`, and only what it needs in its environment, so each figure beside
//! tine's is measured rather than quoted.

use std::ffi::OsString;
use std::process::Stdio;

use tine_e2e::Project;
use tine_e2e::tine_mock_api::MockServer;
use tokio::process::Command;

/// The environment variable naming a Claude Code binary (`claude`).
pub(crate) const CLAUDE_ENV: &str = "TINE_BENCH_CLAUDE";

/// The Claude Code binary to compare with, if one is named.
pub(crate) fn binary() -> Option<OsString> {
    std::env::var_os(CLAUDE_ENV).filter(|v| !v.is_empty())
}

/// `claude` in `project` against `server`, with a clean environment and the project's
/// scratch home (nothing of the person running the bench: no settings, no memory, no login).
pub(crate) fn command(binary: &OsString, project: &Project, server: &MockServer) -> Command {
    let mut command = Command::new(binary);
    command
        .current_dir(project.cwd())
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", project.home())
        .env("ANTHROPIC_API_KEY", "bench")
        .env("ANTHROPIC_BASE_URL", server.base_url())
        // No update checks against the network mid-bench; API requests are unaffected.
        .env("DISABLE_AUTOUPDATER", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    command
}
