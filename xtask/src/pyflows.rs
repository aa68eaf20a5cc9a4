//! What the Python end-to-end suites share (`sdk-e2e`, `acp-e2e`): a real client library from
//! PyPI, in a virtualenv under the target directory, drives a program under test against the
//! simulator, one flow at a time.
//!
//! A suite is a directory of flows, each a pair: `NN_name.py`, a short script whose docstring's
//! first line is its title, and `NN_name.json`, the simulator's scenario that scripts the model
//! for it. A flow gets a fresh simulator (logging to `requests.jsonl`), an empty project and its
//! own home, all in `TMP/tine-SUITE-PID/NN_name/` (outside any git checkout, as an editor's or
//! an app's project would be; kept when a flow fails), and prints one `PASS:`/`FAIL:` line with
//! what it saw. The script learns where things are from `E2E_MOCK_URL`, `E2E_MOCK_LOG`,
//! `E2E_PROJECT` and `E2E_HOME`, plus the suite's own variable naming what it tests, and finds
//! the helpers every suite's scripts share (`xtask/pyflows/flowlib.py`) on `PYTHONPATH`.

use std::ffi::OsStr;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::demo::{build_binaries, start_logging_mock, target_dir};

/// A flow still running after this is killed (each script also bounds itself, at 100 s).
const FLOW_TIMEOUT: Duration = Duration::from_secs(150);

/// Inherited variables that would point the program under test elsewhere (a real key, a
/// proxy, a model).
const SCRUBBED_PREFIXES: [&str; 3] = ["ANTHROPIC_", "CLAUDE", "TINE_"];

/// One suite of flows and the Python package its scripts use.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Suite {
    /// The xtask command, also the name of its work directory under the target directory.
    pub(crate) name: &'static str,
    /// Where the flows live, from the workspace root.
    pub(crate) dir: &'static str,
    /// What `pip install` is given.
    pub(crate) requirement: &'static str,
    /// The package's distribution name, for its version.
    pub(crate) distribution: &'static str,
    /// The module whose import proves the package is there.
    pub(crate) module: &'static str,
}

/// Where `flowlib.py` lives, from the workspace root.
const FLOWLIB_DIR: &str = "xtask/pyflows";

/// One flow: `NN_name.py` and its scenario `NN_name.json`.
#[derive(Debug)]
pub(crate) struct Flow {
    pub(crate) number: u32,
    stem: String,
    script: PathBuf,
    pub(crate) scenario: PathBuf,
    /// The first line of the script's docstring.
    pub(crate) title: String,
}

/// A suite's command line: the program to test, its arguments, which flows.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct FlowArgs {
    /// The value of the suite's program flag (`--cli`, `--agent`), when given.
    pub(crate) program: Option<String>,
    /// What follows `--`, when the suite takes it and it is given.
    pub(crate) rest: Option<Vec<String>>,
    /// Flow numbers to run; empty for all.
    pub(crate) only: Vec<u32>,
}

/// Parses `[FLAG VALUE] [--only N[,N..]]`, and `[-- ARGS..]` when `takes_rest`; every error
/// ends with `usage`.
pub(crate) fn parse_args(
    args: &[String],
    flag: &str,
    takes_rest: bool,
    usage: &str,
) -> Result<FlowArgs> {
    let mut parsed = FlowArgs::default();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--only" => {
                let list = args.next().with_context(|| {
                    format!("--only needs flow numbers, e.g. --only 2,5; {usage}")
                })?;
                parse_only(list, &mut parsed.only)?;
            }
            "--" if takes_rest => parsed.rest = Some(args.by_ref().cloned().collect()),
            other if other == flag => {
                let value = args
                    .next()
                    .with_context(|| format!("{flag} needs a value; {usage}"))?;
                parsed.program = Some(value.clone());
            }
            other => bail!("unknown option `{other}`; {usage}"),
        }
    }
    Ok(parsed)
}

/// The flow numbers of an `--only` list (`2,5`), appended to `into`.
fn parse_only(list: &str, into: &mut Vec<u32>) -> Result<()> {
    for n in list.split(',').filter(|n| !n.is_empty()) {
        into.push(
            n.trim()
                .parse()
                .with_context(|| format!("--only takes flow numbers (1, 2, ...), not `{n}`"))?,
        );
    }
    Ok(())
}

impl Suite {
    /// The suite's work directory (its virtualenv lives there).
    fn work_dir(&self, target: &Path) -> PathBuf {
        target.join(self.name)
    }

    /// Builds `tine` and `tine-mock` and provides the virtualenv: the binaries' directory and
    /// the virtualenv's python, or `None` when the suite is skipped (said on stdout).
    pub(crate) fn prepare(&self, root: &Path) -> Result<Option<(PathBuf, PathBuf)>> {
        let bin = build_binaries(root)?;
        Ok(self
            .python(&self.work_dir(&target_dir(root)))?
            .map(|python| (bin, python)))
    }

    /// Says which package version drives `what`.
    pub(crate) fn announce(&self, python: &Path, what: &str) {
        let version = python_output(
            python,
            &format!(
                "import importlib.metadata as m; print(m.version({:?}))",
                self.distribution
            ),
        )
        .unwrap_or_else(|_| "?".into());
        println!(
            "{}: {} {version} drives {what} against tine-mock",
            self.name, self.distribution
        );
    }

    /// Every flow of the suite, in number order, filtered by `only`.
    pub(crate) fn flows(&self, root: &Path, only: &[u32]) -> Result<Vec<Flow>> {
        flows(&root.join(self.dir), only)
    }

    /// The virtualenv's python with the suite's package importable, made on first use; `None`
    /// (said on stdout) when Python or pip cannot provide it here.
    fn python(&self, work: &Path) -> Result<Option<PathBuf>> {
        match venv_python(&work.join("venv"), self.module, &[self.requirement])? {
            Ok(python) => Ok(Some(python)),
            Err(why) => {
                println!("{}: skipped: {why}", self.name);
                println!(
                    "{}: the flows need Python 3.10+ with venv, and PyPI for {}",
                    self.name, self.requirement
                );
                Ok(None)
            }
        }
    }

    /// Runs `flows` one by one, each script given `under_test` (a variable's name and value)
    /// besides the suite's variables; prints a line per flow and the count, and fails when one
    /// fails.
    pub(crate) fn run(
        &self,
        bin: &Path,
        python: &Path,
        under_test: (&str, &OsStr),
        flows: &[Flow],
    ) -> Result<()> {
        // Resolved, so the paths in prompts are the ones the program sees (a symlinked /tmp).
        let tmp =
            std::fs::canonicalize(std::env::temp_dir()).unwrap_or_else(|_| std::env::temp_dir());
        let runs = tmp.join(format!("tine-{}-{}", self.name, std::process::id()));
        let mut passed = 0;
        for flow in flows {
            let run_dir = runs.join(&flow.stem);
            let (pass, reason) = self.run_flow(bin, python, under_test, flow, &run_dir)?;
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

    /// Runs one flow in a fresh `run_dir`: whether it passed, and its reason.
    fn run_flow(
        &self,
        bin: &Path,
        python: &Path,
        under_test: (&str, &OsStr),
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
            .env(under_test.0, under_test.1)
            .env("E2E_MOCK_URL", &mock.base_url)
            .env("E2E_MOCK_LOG", log_dir.join("requests.jsonl"))
            .env("E2E_PROJECT", &project)
            .env("E2E_HOME", &home)
            .env("PYTHONPATH", crate::workspace_root().join(FLOWLIB_DIR))
            // For Claude Code (or an adapter of it) under test: its settings and sessions in
            // the scratch home, and no traffic beyond the model's.
            .env("CLAUDE_CONFIG_DIR", home.join("claude"))
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("PYTHONUNBUFFERED", "1")
            .env("PYTHONDONTWRITEBYTECODE", "1");
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        crate::demo::dies_with_xtask(&mut command);
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

/// The python of the virtualenv `venv`, made on first use, in which `import MODULES` runs
/// (pip installs `requirements` when it does not). `Ok(Err(why))` when Python or pip cannot
/// provide them here.
pub(crate) fn venv_python(
    venv: &Path,
    modules: &str,
    requirements: &[&str],
) -> Result<std::result::Result<PathBuf, String>> {
    let python = venv.join("bin").join("python");
    if !python.is_file() {
        if let Some(parent) = venv.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("creating {}", parent.display()))?;
        }
        eprintln!("$ python3 -m venv {}", venv.display());
        match Command::new("python3")
            .args(["-m", "venv"])
            .arg(venv)
            .status()
        {
            Ok(status) if status.success() => {}
            Ok(status) => return Ok(Err(format!("`python3 -m venv` failed ({status})"))),
            Err(err) => return Ok(Err(format!("could not run python3: {err}"))),
        }
    }
    if python_output(&python, &format!("import {modules}")).is_ok() {
        return Ok(Ok(python));
    }
    eprintln!(
        "$ {} -m pip install {}",
        python.display(),
        requirements.join(" ")
    );
    let status = Command::new(&python)
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
        ])
        .args(requirements)
        .status()
        .context("could not run the virtualenv's python")?;
    if !status.success() {
        return Ok(Err(format!(
            "pip could not install {} ({status})",
            requirements.join(" ")
        )));
    }
    Ok(Ok(python))
}

/// What `python -c CODE` prints, trimmed; its stderr is the error when it fails.
pub(crate) fn python_output(python: &Path, code: &str) -> Result<String> {
    let output = Command::new(python)
        .args(["-c", code])
        .output()
        .with_context(|| format!("could not run {}", python.display()))?;
    if !output.status.success() {
        bail!(
            "`python -c {code:?}` failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
}

/// Waits for `child` at most `limit`; on time, kills its process group (the program it started
/// too) and answers `None`. The group is also ended after a normal exit, so nothing the flow
/// started outlives it.
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
    use crate::workspace_root;

    const SUITES: [Suite; 2] = [crate::sdk_e2e::SUITE, crate::acp_e2e::SUITE];

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_command_line_takes_a_program_flow_numbers_and_the_rest() {
        let parsed = parse_args(
            &args(&[
                "--only", "2,5", "--x", "a/b", "--only", "7", "--", "--x", "y",
            ]),
            "--x",
            true,
            "usage",
        )
        .unwrap();
        assert_eq!(parsed.program.as_deref(), Some("a/b"));
        assert_eq!(parsed.only, vec![2, 5, 7]);
        assert_eq!(parsed.rest, Some(args(&["--x", "y"])));
        assert_eq!(
            parse_args(&[], "--x", true, "").unwrap(),
            FlowArgs::default()
        );
        for bad in [
            &["--only", "two"][..],
            &["--only"],
            &["--x"],
            &["--verbose"],
        ] {
            let err = parse_args(&args(bad), "--x", true, "usage: here").unwrap_err();
            assert!(format!("{err:#}").contains("usage: here") || bad == ["--only", "two"]);
        }
        assert!(parse_args(&args(&["--", "y"]), "--x", false, "").is_err());
    }

    #[test]
    fn every_flow_has_its_scenario_and_a_title() {
        for suite in SUITES {
            let all = suite.flows(&workspace_root(), &[]).unwrap();
            let numbers: Vec<u32> = all.iter().map(|f| f.number).collect();
            assert_eq!(
                numbers,
                (1..=all.len() as u32).collect::<Vec<_>>(),
                "{}",
                suite.name
            );
            assert!(all.len() >= 10, "{}: ten flows: {numbers:?}", suite.name);
            for flow in &all {
                assert!(
                    flow.title.starts_with(&format!("{}. ", flow.number)),
                    "{}: {}",
                    flow.stem,
                    flow.title
                );
            }
            assert_eq!(suite.flows(&workspace_root(), &[3]).unwrap().len(), 1);
            assert!(suite.flows(&workspace_root(), &[99]).is_err());
        }
    }

    /// A rule a script waits for by name must be in its scenario (a typo would only show as
    /// a failure against every program).
    #[test]
    fn the_rules_a_script_names_are_in_its_scenario() {
        for suite in SUITES {
            for flow in suite.flows(&workspace_root(), &[]).unwrap() {
                let scenario: serde_json::Value =
                    serde_json::from_str(&std::fs::read_to_string(&flow.scenario).unwrap())
                        .unwrap();
                let names: Vec<&str> = scenario["rules"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter_map(|r| r["name"].as_str())
                    .collect();
                let script = std::fs::read_to_string(&flow.script).unwrap();
                for call in [
                    "request_answered_by(\"",
                    "wait_for_rule(\"",
                    "check_cache_read(\"",
                    "check_continues(\"",
                ] {
                    for (at, _) in script.match_indices(call) {
                        let rest = &script[at + call.len()..];
                        let name = &rest[..rest.find('"').unwrap()];
                        assert!(names.contains(&name), "{}: no rule {name:?}", flow.stem);
                    }
                }
            }
        }
    }
}
