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

use std::path::PathBuf;

use anyhow::{Context, Result, bail};

use crate::demo::{build_binaries, target_dir};
use crate::pyflows::{Suite, parse_only, python_output};
use crate::workspace_root;

/// The suite: its checks and the ACP client from PyPI.
pub(crate) const SUITE: Suite = Suite {
    name: "acp-e2e",
    dir: "xtask/acp-e2e",
    // The scripts are written against 0.12's API (`spawn_agent_process`, the `Client` methods
    // with keyword arguments).
    requirement: "agent-client-protocol>=0.12,<0.13",
    module: "acp",
};

const USAGE: &str = "usage: cargo xtask acp-e2e [--agent PATH [-- ARGS..]] [--only N[,N..]]";

/// The command line: which agent, which checks.
#[derive(Debug, Default, PartialEq)]
struct Options {
    /// `None`: the workspace's `tine`; else the agent's path.
    agent: Option<String>,
    /// The agent's arguments: `acp` for tine, none for another agent unless given after `--`.
    args: Option<Vec<String>>,
    /// Check numbers to run; empty for all.
    only: Vec<u32>,
}

fn parse(args: &[String]) -> Result<Options> {
    let mut options = Options::default();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--agent" => {
                let path = args.next().context("--agent needs a path")?;
                options.agent = Some(path.clone());
            }
            "--only" => {
                let list = args
                    .next()
                    .context("--only needs check numbers, e.g. --only 2,5")?;
                parse_only(list, &mut options.only)?;
            }
            "--" => {
                options.args = Some(args.by_ref().cloned().collect());
            }
            other => bail!("unknown acp-e2e option `{other}`; {USAGE}"),
        }
    }
    if options.args.is_some() && options.agent.is_none() {
        bail!("arguments after `--` are the agent's and need --agent PATH; {USAGE}");
    }
    Ok(options)
}

impl Options {
    /// The agent's command line: the program, then its arguments.
    fn command(&self, bin: &std::path::Path) -> Result<Vec<PathBuf>> {
        let (program, default_args) = match self.agent.as_deref() {
            None => (bin.join("tine"), vec!["acp".to_owned()]),
            Some(path) => (
                std::path::absolute(path).with_context(|| format!("resolving --agent {path}"))?,
                Vec::new(),
            ),
        };
        if !program.is_file() {
            bail!("the agent to test, {}, does not exist", program.display());
        }
        let args = self.args.clone().unwrap_or(default_args);
        Ok(std::iter::once(program)
            .chain(args.into_iter().map(PathBuf::from))
            .collect())
    }
}

pub(crate) fn run(args: &[String]) -> Result<()> {
    let options = parse(args)?;
    let root = workspace_root();
    let bin = build_binaries(&root)?;
    let Some(python) = SUITE.python(&SUITE.work_dir(&target_dir(&root)))? else {
        return Ok(());
    };
    let command = options.command(&bin)?;
    let shown: Vec<String> = command.iter().map(|p| p.display().to_string()).collect();
    let json = serde_json::to_string(&shown).context("encoding the agent's command line")?;
    let flows = SUITE.flows(&root, &options.only)?;
    println!(
        "acp-e2e: agent-client-protocol {} drives `{}` against tine-mock",
        python_output(
            &python,
            "import importlib.metadata as m; print(m.version('agent-client-protocol'))"
        )
        .unwrap_or_else(|_| "?".into()),
        shown.join(" ")
    );
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
        assert_eq!(options.agent.as_deref(), Some("a/b"));
        assert_eq!(options.args, Some(args(&["--x", "y"])));
        assert_eq!(options.only, vec![2, 5]);
        assert_eq!(parse(&[]).unwrap(), Options::default());
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
        let command = Options::default().command(&dir).unwrap();
        assert_eq!(command, vec![tine.clone(), PathBuf::from("acp")]);
        let other = parse(&args(&["--agent", tine.to_str().unwrap()])).unwrap();
        assert_eq!(other.command(&dir).unwrap(), vec![tine.clone()]);
        let with_args = parse(&args(&[
            "--agent",
            tine.to_str().unwrap(),
            "--",
            "acp",
            "-v",
        ]));
        assert_eq!(
            with_args.unwrap().command(&dir).unwrap(),
            vec![tine.clone(), PathBuf::from("acp"), PathBuf::from("-v")]
        );
        let missing = Options::default().command(&dir.join("nowhere"));
        assert!(missing.unwrap_err().to_string().contains("does not exist"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
