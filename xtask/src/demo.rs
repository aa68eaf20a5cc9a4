//! `cargo xtask demo`: offline sessions of tine against the bundled simulator (no key, no
//! network). Part 1: the model reads a file, edits it and runs a command. Part 2 (seed 001's
//! scenario): one session states the project's stack, the extraction fork saves it on the
//! parent's prompt cache, and the next session remembers it.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use anyhow::{Context, Result, bail};
use serde_json::Value;

use crate::{cargo, workspace_root};

/// The mock, stopped (killed and reaped) however the demo ends.
pub(crate) struct Mock {
    child: Child,
    pub(crate) base_url: String,
}

impl Drop for Mock {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The scratch directory, removed however the demo ends.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn short(text: &str, max: usize) -> String {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() <= max {
        return one_line;
    }
    let cut: String = one_line.chars().take(max).collect();
    format!("{cut}…")
}

fn tool_result_text(block: &Value) -> String {
    match &block["content"] {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join(" "),
        _ => String::new(),
    }
}

fn n(value: &Value) -> u64 {
    value.as_u64().unwrap_or(0)
}

pub(crate) fn start_mock(target: &Path, scenario: &Path) -> Result<Mock> {
    spawn_mock(
        Command::new(target.join("tine-mock"))
            .args(["--port", "0", "--scenario"])
            .arg(scenario),
    )
}

/// [`start_mock`], the simulator also appending every request to `log_dir/requests.jsonl`.
pub(crate) fn start_logging_mock(target: &Path, scenario: &Path, log_dir: &Path) -> Result<Mock> {
    spawn_mock(
        Command::new(target.join("tine-mock"))
            .args(["--port", "0", "--scenario"])
            .arg(scenario)
            .arg("--log")
            .arg(log_dir),
    )
}

fn spawn_mock(command: &mut Command) -> Result<Mock> {
    dies_with_xtask(command);
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .context("could not start tine-mock")?;
    let stdout = child.stdout.take().context("tine-mock has no stdout")?;
    let mut mock = Mock {
        child,
        base_url: String::new(),
    };
    let mut first_line = String::new();
    BufReader::new(stdout)
        .read_line(&mut first_line)
        .context("reading tine-mock's first line")?;
    mock.base_url = first_line
        .trim()
        .strip_prefix("listening on ")
        .with_context(|| format!("unexpected first line from tine-mock: {first_line:?}"))?
        .to_owned();
    Ok(mock)
}

/// Makes `command`'s child die with xtask, even when xtask is killed outright (`kill -9`,
/// a CI timeout), so no `tine-mock` or flow outlives it: `PR_SET_PDEATHSIG(SIGKILL)`, set in
/// the child before it execs. xtask spawns from its main thread, which lives as long as it
/// (the kernel sends the signal when the forking thread exits). Linux only; a no-op elsewhere.
pub(crate) fn dies_with_xtask(command: &mut Command) {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::process::CommandExt as _;
        let parent = std::process::id();
        // SAFETY: the closure runs in the child between fork and exec, where only
        // async-signal-safe calls are allowed: two system calls (prctl, getppid), no
        // allocation, no lock; its error is built from a raw errno.
        #[allow(unsafe_code)]
        unsafe {
            command.pre_exec(move || {
                nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL)
                    .map_err(|errno| std::io::Error::from_raw_os_error(errno as i32))?;
                // xtask died before the call: the signal will never come, so do not run.
                if u32::try_from(nix::unistd::getppid().as_raw()).ok() != Some(parent) {
                    return Err(std::io::Error::from_raw_os_error(
                        nix::errno::Errno::ESRCH as i32,
                    ));
                }
                Ok(())
            });
        }
    }
}

/// `tine ARGS` in `project` against `mock`, with the demo's own TINE_HOME.
fn tine(target: &Path, project: &Path, home: &Path, mock: &Mock, args: &[&str]) -> Result<Output> {
    Command::new(target.join("tine"))
        .args(args)
        .current_dir(project)
        .env("ANTHROPIC_BASE_URL", &mock.base_url)
        .env("ANTHROPIC_API_KEY", "demo")
        .env_remove("ANTHROPIC_AUTH_TOKEN")
        .env_remove("ANTHROPIC_MODEL")
        .env_remove("TINE_MEMORY_DIR")
        .env_remove("TINE_DISABLE_AUTO_MEMORY")
        .env("TINE_HOME", home)
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .context("could not run tine")
}

fn json_lines(output: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .collect()
}

fn result_of(output: &Output, lines: &[Value]) -> Result<Value> {
    let Some(result) = lines.iter().rev().find(|l| l["type"] == "result").cloned() else {
        bail!(
            "tine printed no result ({}); run with --verbose to see why",
            output.status
        );
    };
    if !output.status.success() || result["is_error"] == true {
        bail!(
            "the demo session failed: {}",
            result["error"].as_str().unwrap_or("unknown error")
        );
    }
    Ok(result)
}

/// Builds `tine` and `tine-mock` (debug) and returns the directory holding them.
pub(crate) fn build_binaries(root: &Path) -> Result<PathBuf> {
    cargo(
        root,
        &[
            "build",
            "--quiet",
            "-p",
            "tine-cli",
            "--bin",
            "tine",
            "-p",
            "tine-mock-api",
            "--bin",
            "tine-mock",
        ],
    )?;
    Ok(target_dir(root).join("debug"))
}

/// Cargo's target directory: `CARGO_TARGET_DIR` (relative to the workspace root) or `target`.
pub(crate) fn target_dir(root: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .map(|dir| {
            if dir.is_absolute() {
                dir
            } else {
                root.join(dir)
            }
        })
        .unwrap_or_else(|| root.join("target"))
}

pub(crate) fn demo() -> Result<()> {
    let root = workspace_root();
    let target = build_binaries(&root)?;
    let scratch = Scratch(std::env::temp_dir().join(format!("tine-demo-{}", std::process::id())));
    edit_session(&root, &target, &scratch.0)?;
    println!();
    memory_sessions(&root, &target, &scratch.0)
}

/// Part 1: read, edit, run; then the usage, cache and cost figures.
fn edit_session(root: &Path, target: &Path, scratch: &Path) -> Result<()> {
    let scenario = root.join("crates/mock-api/scenarios/demo.json");
    let mock = start_mock(target, &scenario)?;
    let project = scratch.join("project");
    let home = scratch.join("home");
    std::fs::create_dir_all(&project).context("creating the scratch project")?;
    std::fs::create_dir_all(&home).context("creating the scratch TINE_HOME")?;
    std::fs::write(project.join("hello.txt"), "Helo, world!\n").context("writing hello.txt")?;

    let prompt = "Fix the typo in hello.txt";
    println!("tine demo: offline sessions against the bundled simulator (no key, no network)");
    println!();
    println!("== 1. read, edit, run");
    println!(
        "  project   {}  (hello.txt: \"Helo, world!\")",
        project.display()
    );
    println!("  simulator {}  ({})", mock.base_url, scenario.display());
    println!();
    println!("$ tine -p \"{prompt}\" --permission-mode acceptEdits --allowedTools \"Bash(cat:*)\"");
    println!();
    let output = tine(
        target,
        &project,
        &home,
        &mock,
        &[
            "-p",
            prompt,
            "--permission-mode",
            "acceptEdits",
            "--allowedTools",
            "Bash(cat:*)",
            "--output-format",
            "stream-json",
        ],
    )?;
    let lines = json_lines(&output);
    let mut per_request = Vec::new();
    for event in &lines {
        match event["type"].as_str() {
            Some("assistant") => {
                per_request.push(event["message"]["usage"].clone());
                for block in event["message"]["content"].as_array().into_iter().flatten() {
                    match block["type"].as_str() {
                        Some("thinking") => println!(
                            "  (thinking) {}",
                            short(block["thinking"].as_str().unwrap_or(""), 90)
                        ),
                        Some("text") => println!(
                            "  model:     {}",
                            short(block["text"].as_str().unwrap_or(""), 90)
                        ),
                        Some("tool_use") => println!(
                            "  tool call: {} {}",
                            block["name"].as_str().unwrap_or("?"),
                            short(&block["input"].to_string(), 80)
                        ),
                        _ => {}
                    }
                }
            }
            Some("user") => {
                for block in event["message"]["content"].as_array().into_iter().flatten() {
                    if block["type"] == "tool_result" {
                        let label = if block["is_error"] == true {
                            "error:    "
                        } else {
                            "result:   "
                        };
                        println!("  {label} {}", short(&tool_result_text(block), 80));
                    }
                }
            }
            _ => {}
        }
    }
    drop(mock);
    let result = result_of(&output, &lines)?;

    let fixed = std::fs::read_to_string(project.join("hello.txt")).unwrap_or_default();
    println!();
    println!("hello.txt is now: {:?}", fixed.trim_end());
    println!();
    println!("requests (each reads the previous one's whole prompt from the prompt cache):");
    println!(
        "  {:>3}  {:>8}  {:>11}  {:>10}  {:>7}",
        "#", "input", "cache write", "cache read", "output"
    );
    for (i, usage) in per_request.iter().enumerate() {
        println!(
            "  {:>3}  {:>8}  {:>11}  {:>10}  {:>7}",
            i + 1,
            n(&usage["input_tokens"]),
            n(&usage["cache_creation_input_tokens"]),
            n(&usage["cache_read_input_tokens"]),
            n(&usage["output_tokens"])
        );
    }
    // The main thread's requests; `usage` and `total_cost_usd` also count background work.
    let usage = match &result["usage_by_source"]["main"] {
        Value::Null => &result["usage"],
        main => main,
    };
    let (input, written, read, out) = (
        n(&usage["input_tokens"]),
        n(&usage["cache_creation_input_tokens"]),
        n(&usage["cache_read_input_tokens"]),
        n(&usage["output_tokens"]),
    );
    let prompt_tokens = (input + written + read).max(1);
    println!();
    println!(
        "session {}: {} requests in {} ms",
        result["session_id"].as_str().unwrap_or("?"),
        n(&result["num_turns"]),
        n(&result["duration_ms"])
    );
    println!(
        "  usage  input {input}, cache writes {written}, cache reads {read}, output {out} tokens"
    );
    println!(
        "  cache  {:.0}% of prompt tokens read from the cache",
        read as f64 * 100.0 / prompt_tokens as f64
    );
    println!(
        "  cost   ${:.4} in all, by source: {}",
        result["total_cost_usd"].as_f64().unwrap_or(0.0),
        result["usage_by_source"]
            .as_object()
            .map(|sources| {
                sources
                    .iter()
                    .map(|(name, s)| {
                        format!(
                            "{name} ${:.4} ({} requests)",
                            s["cost_usd"].as_f64().unwrap_or(0.0),
                            n(&s["requests"])
                        )
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .unwrap_or_default()
    );
    Ok(())
}

/// Part 2: seed 001's scenario. Tell tine the stack once; the next session knows it.
fn memory_sessions(root: &Path, target: &Path, scratch: &Path) -> Result<()> {
    let scenario = root.join("crates/memory/scenarios/seed001.json");
    let mock = start_mock(target, &scenario)?;
    let project = scratch.join("memory-project");
    let home = scratch.join("memory-home");
    std::fs::create_dir_all(&project).context("creating the scratch project")?;
    std::fs::create_dir_all(&home).context("creating the scratch TINE_HOME")?;

    println!("== 2. automatic memory (seed 001's scenario)");
    let first = "this project uses React 18 and PostgreSQL";
    println!("$ tine -p \"{first}\"");
    let output = tine(
        target,
        &project,
        &home,
        &mock,
        &["-p", first, "--output-format", "stream-json"],
    )?;
    let lines = json_lines(&output);
    let result = result_of(&output, &lines)?;
    println!(
        "  model:     {}",
        short(result["result"].as_str().unwrap_or(""), 90)
    );
    let Some(saved) = lines
        .iter()
        .find(|l| l["type"] == "system" && l["subtype"] == "memory_saved")
    else {
        bail!("the extraction fork saved no memory");
    };
    println!(
        "  background: {}",
        saved["summary"].as_str().unwrap_or("memory saved")
    );
    let parent = &lines
        .iter()
        .find(|l| l["type"] == "assistant")
        .map(|l| l["message"]["usage"].clone())
        .unwrap_or_default();
    let fork = saved["data"]["runs"][0]["first_request_usage"].clone();
    let parent_cached =
        n(&parent["cache_read_input_tokens"]) + n(&parent["cache_creation_input_tokens"]);
    println!(
        "  extraction fork's first request: {} tokens read from the cache (the parent had {} cached), {} billed in full",
        n(&fork["read_from_cache"]),
        parent_cached,
        n(&fork["billed_in_full"])
    );
    let data = &saved["data"]["usage"];
    println!(
        "  extraction fork in all: billed-equivalent {} input tokens for a {} token prompt",
        data["billed_equivalent_input"]
            .as_f64()
            .unwrap_or(0.0)
            .round(),
        n(&data["input_tokens"])
            + n(&data["cache_read_input_tokens"])
            + n(&data["cache_creation_input_tokens"])
    );
    println!();
    println!("$ tine memory list");
    let list = tine(target, &project, &home, &mock, &["memory", "list"])?;
    for line in String::from_utf8_lossy(&list.stdout).lines() {
        println!("  {line}");
    }
    println!();
    let second = "which database does this project use?";
    println!("$ tine -p \"{second}\"   (a new session)");
    let output = tine(
        target,
        &project,
        &home,
        &mock,
        &["-p", second, "--output-format", "stream-json"],
    )?;
    let lines = json_lines(&output);
    let result = result_of(&output, &lines)?;
    println!(
        "  model:     {}",
        short(result["result"].as_str().unwrap_or(""), 90)
    );
    Ok(())
}
