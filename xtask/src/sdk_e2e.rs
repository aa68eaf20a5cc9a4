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

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::demo::{build_binaries, start_logging_mock, target_dir};
use crate::workspace_root;

/// Where the flows live, from the workspace root.
const FLOW_DIR: &str = "xtask/sdk-e2e";

/// A flow still running after this is killed (each script also bounds itself, at 100 s).
const FLOW_TIMEOUT: Duration = Duration::from_secs(150);

/// Inherited variables that would point the CLI elsewhere (a real key, a proxy, a model).
const SCRUBBED_PREFIXES: [&str; 3] = ["ANTHROPIC_", "CLAUDE", "TINE_"];

/// The command line: which CLI, which flows.
#[derive(Debug, Default)]
struct Options {
    /// `None`: the workspace's `tine`; `bundled`: the SDK wheel's Claude Code; else a path.
    cli: Option<String>,
    /// Flow numbers to run; empty for all.
    only: Vec<u32>,
}

fn parse(args: &[String]) -> Result<Options> {
    let mut options = Options::default();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--cli" => {
                let path = args.next().context("--cli needs a path (or `bundled`)")?;
                options.cli = Some(path.clone());
            }
            "--only" => {
                let list = args
                    .next()
                    .context("--only needs flow numbers, e.g. --only 2,5")?;
                for n in list.split(',').filter(|n| !n.is_empty()) {
                    options.only.push(n.trim().parse().with_context(|| {
                        format!("--only takes flow numbers (1, 2, ...), not `{n}`")
                    })?);
                }
            }
            other => bail!(
                "unknown sdk-e2e option `{other}`; usage: cargo xtask sdk-e2e [--cli PATH|bundled] [--only N[,N..]]"
            ),
        }
    }
    Ok(options)
}

/// One flow: `NN_name.py` and its scenario `NN_name.json`.
#[derive(Debug)]
struct Flow {
    number: u32,
    stem: String,
    script: PathBuf,
    scenario: PathBuf,
    /// The first line of the script's docstring.
    title: String,
}

/// Every flow in `dir`, in number order, filtered by `only`.
fn flows(dir: &Path, only: &[u32]) -> Result<Vec<Flow>> {
    let mut flows = Vec::new();
    for entry in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let script = entry?.path();
        let Some(stem) = script
            .file_stem()
            .and_then(|s| s.to_str())
            .map(str::to_owned)
        else {
            continue;
        };
        let Some(number) = stem.split('_').next().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        if script.extension().is_none_or(|e| e != "py") {
            continue;
        }
        let scenario = script.with_extension("json");
        if !scenario.is_file() {
            bail!(
                "flow {} has no scenario: {} is missing",
                script.display(),
                scenario.display()
            );
        }
        let text = std::fs::read_to_string(&script)
            .with_context(|| format!("reading {}", script.display()))?;
        let title = text
            .lines()
            .next()
            .unwrap_or_default()
            .trim_matches('"')
            .trim()
            .trim_end_matches('.')
            .to_owned();
        flows.push(Flow {
            number,
            stem,
            script,
            scenario,
            title,
        });
    }
    flows.sort_by_key(|f| f.number);
    if let Some(missing) = only.iter().find(|n| !flows.iter().any(|f| f.number == **n)) {
        bail!(
            "there is no flow {missing}; the flows are {}",
            flows
                .iter()
                .map(|f| f.number.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    flows.retain(|f| only.is_empty() || only.contains(&f.number));
    Ok(flows)
}

pub(crate) fn run(args: &[String]) -> Result<()> {
    let options = parse(args)?;
    let root = workspace_root();
    let bin = build_binaries(&root)?;
    let work = target_dir(&root).join("sdk-e2e");
    let Some(python) = sdk_python(&work)? else {
        return Ok(());
    };
    let cli = match options.cli.as_deref() {
        None => bin.join("tine"),
        Some("bundled") => bundled_cli(&python)?,
        Some(path) => {
            std::path::absolute(path).with_context(|| format!("resolving --cli {path}"))?
        }
    };
    if !cli.is_file() {
        bail!("the CLI to test, {}, does not exist", cli.display());
    }
    let flows = flows(&root.join(FLOW_DIR), &options.only)?;
    println!(
        "sdk-e2e: claude-agent-sdk {} drives {} against tine-mock",
        python_output(
            &python,
            "import claude_agent_sdk; print(claude_agent_sdk.__version__)"
        )
        .unwrap_or_else(|_| "?".into()),
        cli.display()
    );
    // Resolved, so the paths in prompts are the ones a CLI sees (a symlinked /tmp).
    let tmp = std::fs::canonicalize(std::env::temp_dir()).unwrap_or_else(|_| std::env::temp_dir());
    let runs = tmp.join(format!("tine-sdk-e2e-{}", std::process::id()));
    let mut passed = 0;
    for flow in &flows {
        let run_dir = runs.join(&flow.stem);
        let (pass, reason) = run_flow(&bin, &python, &cli, flow, &run_dir)?;
        println!(
            "{} {}: {reason}",
            if pass { "PASS" } else { "FAIL" },
            flow.title
        );
        if pass {
            passed += 1;
        } else {
            println!("     (logs: {})", run_dir.display());
        }
    }
    println!("{passed} of {} flows pass", flows.len());
    if passed == flows.len() {
        let _ = std::fs::remove_dir_all(&runs);
    } else {
        bail!("{} of {} flows fail", flows.len() - passed, flows.len());
    }
    Ok(())
}

/// The virtualenv's python with `claude-agent-sdk` importable, made on first use; `None` (said
/// on stdout) when Python or pip cannot provide it here.
fn sdk_python(work: &Path) -> Result<Option<PathBuf>> {
    let venv = work.join("venv");
    let python = venv.join("bin").join("python");
    let skip = |why: String| {
        println!("sdk-e2e: skipped: {why}");
        println!("sdk-e2e: the flows need Python 3.10+ with venv, and PyPI for claude-agent-sdk");
        Ok(None)
    };
    if !python.is_file() {
        std::fs::create_dir_all(work).with_context(|| format!("creating {}", work.display()))?;
        eprintln!("$ python3 -m venv {}", venv.display());
        match Command::new("python3")
            .args(["-m", "venv"])
            .arg(&venv)
            .status()
        {
            Ok(status) if status.success() => {}
            Ok(status) => return skip(format!("`python3 -m venv` failed ({status})")),
            Err(err) => return skip(format!("could not run python3: {err}")),
        }
    }
    if python_output(&python, "import claude_agent_sdk").is_ok() {
        return Ok(Some(python));
    }
    eprintln!("$ {} -m pip install claude-agent-sdk", python.display());
    let status = Command::new(&python)
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "claude-agent-sdk",
        ])
        .status()
        .context("could not run the virtualenv's python")?;
    if !status.success() {
        return skip(format!("pip could not install claude-agent-sdk ({status})"));
    }
    Ok(Some(python))
}

/// What `python -c code` prints, trimmed; an error when it fails.
fn python_output(python: &Path, code: &str) -> Result<String> {
    let output = Command::new(python)
        .args(["-c", code])
        .stderr(Stdio::null())
        .output()
        .with_context(|| format!("could not run {}", python.display()))?;
    if !output.status.success() {
        bail!("`python -c {code:?}` failed ({})", output.status);
    }
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
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

/// Runs one flow in a fresh `run_dir`: whether it passed, and its reason.
fn run_flow(
    bin: &Path,
    python: &Path,
    cli: &Path,
    flow: &Flow,
    run_dir: &Path,
) -> Result<(bool, String)> {
    if run_dir.exists() {
        std::fs::remove_dir_all(run_dir)
            .with_context(|| format!("clearing {}", run_dir.display()))?;
    }
    let (project, home, log_dir) = (
        run_dir.join("project"),
        run_dir.join("home"),
        run_dir.join("mock-log"),
    );
    for dir in [&project, &home, &log_dir] {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let mock = start_logging_mock(bin, &flow.scenario, &log_dir)?;
    let stdout_path = run_dir.join("flow.out");
    let stderr_path = run_dir.join("flow.err");
    let mut command = Command::new(python);
    command
        .arg(&flow.script)
        .current_dir(run_dir)
        .stdin(Stdio::null())
        .stdout(File::create(&stdout_path).context("creating flow.out")?)
        .stderr(File::create(&stderr_path).context("creating flow.err")?);
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        if SCRUBBED_PREFIXES.iter().any(|p| name.starts_with(p)) {
            command.env_remove(name.as_ref());
        }
    }
    command
        .env("SDK_E2E_CLI", cli)
        .env("SDK_E2E_MOCK_URL", &mock.base_url)
        .env("SDK_E2E_MOCK_LOG", log_dir.join("requests.jsonl"))
        .env("SDK_E2E_PROJECT", &project)
        .env("SDK_E2E_HOME", &home)
        // For Claude Code under --cli: its settings and sessions in the scratch home, and no
        // traffic beyond the model's.
        .env("CLAUDE_CONFIG_DIR", home.join("claude"))
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("PYTHONUNBUFFERED", "1")
        .env("PYTHONDONTWRITEBYTECODE", "1");
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let child = command
        .spawn()
        .with_context(|| format!("could not run {}", flow.script.display()))?;
    let status = wait_bounded(child, FLOW_TIMEOUT)?;
    drop(mock);
    let stdout = std::fs::read_to_string(&stdout_path).unwrap_or_default();
    let verdict = stdout
        .lines()
        .rev()
        .find(|l| l.starts_with("PASS:") || l.starts_with("FAIL:"));
    Ok(match (status, verdict) {
        (None, _) => (false, format!("killed after {} s", FLOW_TIMEOUT.as_secs())),
        (Some(status), Some(line)) => (
            status.success() && line.starts_with("PASS:"),
            line[5..].trim().to_owned(),
        ),
        (Some(status), None) => (
            false,
            format!(
                "the script printed no PASS/FAIL line ({status}); see {}",
                stderr_path.display()
            ),
        ),
    })
}

/// Waits for `child` at most `limit`; on time, kills its process group (the CLI it started
/// too) and answers `None`. The group is also ended after a normal exit, so no CLI outlives
/// its flow.
fn wait_bounded(mut child: Child, limit: Duration) -> Result<Option<ExitStatus>> {
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().context("waiting for the flow")? {
            break Some(status);
        }
        if started.elapsed() >= limit {
            break None;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    kill_group(child.id());
    if status.is_none() {
        let _ = child.kill();
        let _ = child.wait();
    }
    Ok(status)
}

#[cfg(unix)]
fn kill_group(leader: u32) {
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{leader}")])
        .stderr(Stdio::null())
        .status();
}

#[cfg(not(unix))]
fn kill_group(_leader: u32) {}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn options_take_a_cli_and_flow_numbers() {
        let options = parse(&args(&["--cli", "bundled", "--only", "2,5", "--only", "7"])).unwrap();
        assert_eq!(options.cli.as_deref(), Some("bundled"));
        assert_eq!(options.only, vec![2, 5, 7]);
        assert!(parse(&args(&["--only", "two"])).is_err());
        assert!(parse(&args(&["--cli"])).is_err());
        assert!(parse(&args(&["--verbose"])).is_err());
    }

    #[test]
    fn every_flow_has_its_scenario_and_a_title() {
        let dir = workspace_root().join(FLOW_DIR);
        let all = flows(&dir, &[]).unwrap();
        let numbers: Vec<u32> = all.iter().map(|f| f.number).collect();
        assert_eq!(numbers, (1..=all.len() as u32).collect::<Vec<_>>());
        assert!(all.len() >= 10, "the issue's ten flows: {numbers:?}");
        for flow in &all {
            assert!(
                flow.title.starts_with(&format!("{}. ", flow.number)),
                "{}: {}",
                flow.stem,
                flow.title
            );
        }
        assert_eq!(flows(&dir, &[3]).unwrap().len(), 1);
        assert!(flows(&dir, &[99]).is_err());
    }

    /// A rule a script waits for by name must be in its scenario (a typo would only show as
    /// a failure against every CLI).
    #[test]
    fn the_rules_a_script_names_are_in_its_scenario() {
        for flow in flows(&workspace_root().join(FLOW_DIR), &[]).unwrap() {
            let scenario: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&flow.scenario).unwrap()).unwrap();
            let names: Vec<&str> = scenario["rules"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|r| r["name"].as_str())
                .collect();
            let script = std::fs::read_to_string(&flow.script).unwrap();
            for call in ["request_answered_by(\"", "wait_for_rule(\""] {
                for (at, _) in script.match_indices(call) {
                    let rest = &script[at + call.len()..];
                    let name = &rest[..rest.find('"').unwrap()];
                    assert!(names.contains(&name), "{}: no rule {name:?}", flow.stem);
                }
            }
        }
    }
}
