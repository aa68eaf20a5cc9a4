//! `cargo xtask sdk-e2e [--cli PATH|bundled] [--only N[,N..]]`: the real Python Agent SDK
//! (`claude-agent-sdk`, from PyPI) drives a CLI against the simulator, as an app would.
//!
//! Each flow is a pair in `xtask/sdk-e2e/`: `NN_name.py`, a small script using the SDK
//! (`query()` or `ClaudeSDKClient`, helpers in `e2e.py`), and `NN_name.json`, the simulator's
//! scenario that scripts the model for it. A flow gets a fresh simulator (logging to
//! `requests.jsonl`), an empty project and its own home, all in `TMP/tine-sdk-e2e-PID/NN_name/`
//! (outside any git checkout, as an app's project would be; kept when a flow fails), and
//! prints one `PASS:`/`FAIL:` line with what it saw.
//! The SDK lives in a virtualenv at `TARGET/sdk-e2e/venv`; when pip cannot install it, the
//! command says so and succeeds (it is not part of `cargo test`). `--cli` runs the same flows
//! against another CLI, such as Claude Code (`bundled`: the one the SDK's wheel ships), to
//! check the flows themselves.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::pyflows::{FlowArgs, Suite, parse_args, python_output};
use crate::workspace_root;

/// The suite: its flows and the SDK from PyPI.
pub(crate) const SUITE: Suite = Suite {
    name: "sdk-e2e",
    dir: "xtask/sdk-e2e",
    requirement: "claude-agent-sdk",
    distribution: "claude-agent-sdk",
    module: "claude_agent_sdk",
};

const USAGE: &str = "usage: cargo xtask sdk-e2e [--cli PATH|bundled] [--only N[,N..]]";

/// The command line: `program` is the CLI (`None`: the workspace's `tine`; `bundled`: the SDK
/// wheel's Claude Code; else a path).
fn parse(args: &[String]) -> Result<FlowArgs> {
    parse_args(args, "--cli", false, USAGE)
}

pub(crate) fn run(args: &[String]) -> Result<()> {
    let options = parse(args)?;
    let root = workspace_root();
    let Some((bin, python)) = SUITE.prepare(&root)? else {
        return Ok(());
    };
    let cli = match options.program.as_deref() {
        None => bin.join("tine"),
        Some("bundled") => bundled_cli(&python)?,
        Some(path) => {
            std::path::absolute(path).with_context(|| format!("resolving --cli {path}"))?
        }
    };
    if !cli.is_file() {
        bail!("the CLI to test, {}, does not exist", cli.display());
    }
    let flows = SUITE.flows(&root, &options.only)?;
    SUITE.announce(&python, &cli.display().to_string());
    SUITE.run(&bin, &python, ("SDK_E2E_CLI", cli.as_os_str()), &flows)
}

/// The Claude Code binary the SDK's wheel ships (`_bundled/claude`).
fn bundled_cli(python: &Path) -> Result<PathBuf> {
    let dir = python_output(
        python,
        "import claude_agent_sdk, os; print(os.path.dirname(claude_agent_sdk.__file__))",
    )?;
    let cli = Path::new(&dir).join("_bundled").join("claude");
    if !cli.is_file() {
        bail!(
            "this claude-agent-sdk ships no CLI ({} is missing); pass --cli PATH instead",
            cli.display()
        );
    }
    Ok(cli)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn options_take_a_cli_and_flow_numbers() {
        let options = parse(&args(&["--cli", "bundled", "--only", "2,5", "--only", "7"])).unwrap();
        assert_eq!(options.program.as_deref(), Some("bundled"));
        assert_eq!(options.only, vec![2, 5, 7]);
        assert!(parse(&args(&["--only", "two"])).is_err());
        assert!(parse(&args(&["--cli"])).is_err());
        assert!(parse(&args(&["--verbose"])).is_err());
    }
}
