//! `cargo xtask acp-e2e [--agent PATH [-- ARGS..]] [--only N[,N..]]`: the real Python client of
//! the Agent Client Protocol (`agent-client-protocol`, from PyPI) drives `tine acp` against the
//! simulator, as an editor would.
//!
//! Each check is a pair in `xtask/acp-e2e/`: `NN_name.py`, a short script that spawns the agent
//! with the package's `spawn_agent_process` and acts as an editor offering `fs.readTextFile` and
//! `fs.writeTextFile` but no terminal (helpers in `e2e.py`), and `NN_name.json`, the scenario
//! that scripts the model. The flows run as `pyflows` runs every suite (a fresh simulator,
//! project and home per check, kept when it fails); the agent's command line reaches the script
//! as JSON in `ACP_E2E_AGENT`. The package lives in a virtualenv at `TARGET/acp-e2e/venv`; when
//! pip cannot install it, the command says so and succeeds (it is not part of `cargo test`).
//! `--agent` runs the checks against another ACP agent (such as `claude-code-acp`), to check
//! the checks themselves.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::pyflows::{FlowArgs, Suite, parse_args};
use crate::workspace_root;

/// The suite: its checks and the ACP client from PyPI.
pub(crate) const SUITE: Suite = Suite {
    name: "acp-e2e",
    dir: "xtask/acp-e2e",
    // The scripts are written against 0.12's API (`spawn_agent_process`, the `Client` methods
    // with keyword arguments).
    requirement: "agent-client-protocol>=0.12,<0.13",
    distribution: "agent-client-protocol",
    module: "acp",
};

const USAGE: &str = "usage: cargo xtask acp-e2e [--agent PATH [-- ARGS..]] [--only N[,N..]]";

/// The command line: `program` is the agent (`None`: the workspace's `tine`), `rest` its
/// arguments (`acp` for tine, none for another agent unless given).
fn parse(args: &[String]) -> Result<FlowArgs> {
    let options = parse_args(args, "--agent", true, USAGE)?;
    if options.rest.is_some() && options.program.is_none() {
        bail!("arguments after `--` are the agent's and need --agent PATH; {USAGE}");
    }
    Ok(options)
}

/// The agent's command line: the program, then its arguments.
fn agent_command(options: &FlowArgs, bin: &Path) -> Result<Vec<PathBuf>> {
    let (program, default_args) = match options.program.as_deref() {
        None => (bin.join("tine"), vec!["acp".to_owned()]),
        Some(path) => (
            std::path::absolute(path).with_context(|| format!("resolving --agent {path}"))?,
            Vec::new(),
        ),
    };
    if !program.is_file() {
        bail!("the agent to test, {}, does not exist", program.display());
    }
    let args = options.rest.clone().unwrap_or(default_args);
    Ok(std::iter::once(program)
        .chain(args.into_iter().map(PathBuf::from))
        .collect())
}

pub(crate) fn run(args: &[String]) -> Result<()> {
    let options = parse(args)?;
    let root = workspace_root();
    let Some((bin, python)) = SUITE.prepare(&root)? else {
        return Ok(());
    };
    let command = agent_command(&options, &bin)?;
    let shown: Vec<String> = command.iter().map(|p| p.display().to_string()).collect();
    let json = serde_json::to_string(&shown).context("encoding the agent's command line")?;
    let flows = SUITE.flows(&root, &options.only)?;
    SUITE.announce(&python, &format!("`{}`", shown.join(" ")));
    SUITE.run(&bin, &python, ("ACP_E2E_AGENT", json.as_ref()), &flows)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn options_take_an_agent_its_arguments_and_check_numbers() {
        let options = parse(&args(&[
            "--only", "2,5", "--agent", "a/b", "--", "--x", "y",
        ]))
        .unwrap();
        assert_eq!(options.program.as_deref(), Some("a/b"));
        assert_eq!(options.rest, Some(args(&["--x", "y"])));
        assert_eq!(options.only, vec![2, 5]);
        assert_eq!(parse(&[]).unwrap(), FlowArgs::default());
        assert!(parse(&args(&["--only", "two"])).is_err());
        assert!(parse(&args(&["--agent"])).is_err());
        assert!(parse(&args(&["--", "acp"])).is_err());
        assert!(parse(&args(&["--verbose"])).is_err());
    }

    #[test]
    fn tine_runs_as_tine_acp_and_another_agent_as_given() {
        let dir = std::env::temp_dir().join(format!("acp-e2e-options-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let tine = dir.join("tine");
        std::fs::write(&tine, "").unwrap();
        let command = agent_command(&FlowArgs::default(), &dir).unwrap();
        assert_eq!(command, vec![tine.clone(), PathBuf::from("acp")]);
        let other = parse(&args(&["--agent", tine.to_str().unwrap()])).unwrap();
        assert_eq!(agent_command(&other, &dir).unwrap(), vec![tine.clone()]);
        let with_args = parse(&args(&[
            "--agent",
            tine.to_str().unwrap(),
            "--",
            "acp",
            "-v",
        ]));
        assert_eq!(
            agent_command(&with_args.unwrap(), &dir).unwrap(),
            vec![tine.clone(), PathBuf::from("acp"), PathBuf::from("-v")]
        );
        let missing = agent_command(&FlowArgs::default(), &dir.join("nowhere"));
        assert!(missing.unwrap_err().to_string().contains("does not exist"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
