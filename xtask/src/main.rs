//! `cargo xtask`: the project's developer commands, in Rust so they run wherever cargo does.
//!
//! Modules: `layers` (the crate layering check), `bench` (the benchmark registry).

mod bench;
mod layers;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{Context, Result, bail};

const USAGE: &str = "\
usage: cargo xtask <command>

commands:
  ci             cargo fmt --check, clippy -D warnings, the layering check, the tests
  check-layers   fail if a crate depends upward or sideways (docs/ARCHITECTURE.md)
  bench [NAME]   list the benchmarks, or run one (or `all`)
  demo           an offline session of tine against the bundled simulator
  mock [ARGS]    run the simulator: tine-mock --port N --scenario FILE [--log DIR]
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("xtask: {err:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &[String]) -> Result<()> {
    let root = workspace_root();
    match args.first().map(String::as_str) {
        Some("ci") => ci(&root),
        Some("check-layers") => check_layers(&root),
        Some("bench") => bench::run(&root, args.get(1).map(String::as_str)),
        Some("demo") => demo(),
        Some("mock") => mock(&root, &args[1..]),
        Some("help") | Some("--help") | Some("-h") | None => {
            print!("{USAGE}");
            Ok(())
        }
        Some(other) => bail!("unknown command `{other}`\n\n{USAGE}"),
    }
}

/// The workspace root: xtask's manifest lives one level below it.
pub(crate) fn workspace_root() -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().map(Path::to_path_buf).unwrap_or(manifest)
}

pub(crate) fn cargo(root: &Path, args: &[&str]) -> Result<()> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    eprintln!("$ cargo {}", args.join(" "));
    let status = Command::new(cargo)
        .args(args)
        .current_dir(root)
        .status()
        .context("could not start cargo")?;
    if !status.success() {
        bail!("`cargo {}` failed ({status})", args.join(" "));
    }
    Ok(())
}

fn ci(root: &Path) -> Result<()> {
    cargo(root, &["fmt", "--all", "--", "--check"])?;
    cargo(
        root,
        &[
            "clippy",
            "--workspace",
            "--all-targets",
            "--",
            "-D",
            "warnings",
        ],
    )?;
    check_layers(root)?;
    cargo(root, &["test", "--workspace"])
}

fn check_layers(root: &Path) -> Result<()> {
    let violations = layers::check_workspace(root)?;
    if violations.is_empty() {
        println!("layering: ok");
        return Ok(());
    }
    for v in &violations {
        println!("layering: {v}");
    }
    bail!("{} layering violation(s)", violations.len())
}

/// `cargo xtask mock ARGS`: `cargo run -p tine-mock-api --bin tine-mock -- ARGS`.
fn mock(root: &Path, args: &[String]) -> Result<()> {
    let mut cargo_args = vec!["run", "-p", "tine-mock-api", "--bin", "tine-mock", "--"];
    cargo_args.extend(args.iter().map(String::as_str));
    cargo(root, &cargo_args)
}

fn demo() -> Result<()> {
    use std::io::{BufRead, BufReader};
    use std::process::{Child, Stdio};

    use serde_json::Value;

    /// The mock, stopped (killed and reaped) however the demo ends.
    struct Mock(Child);
    impl Drop for Mock {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
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

    let root = workspace_root();
    cargo(
        &root,
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
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .map(|dir| {
            if dir.is_absolute() {
                dir
            } else {
                root.join(dir)
            }
        })
        .unwrap_or_else(|| root.join("target"))
        .join("debug");
    let scenario = root.join("crates/mock-api/scenarios/demo.json");

    let mut mock = Command::new(target.join("tine-mock"))
        .args(["--port", "0", "--scenario"])
        .arg(&scenario)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .context("could not start tine-mock")?;
    let stdout = mock.stdout.take().context("tine-mock has no stdout")?;
    let mock = Mock(mock);
    let mut first_line = String::new();
    BufReader::new(stdout)
        .read_line(&mut first_line)
        .context("reading tine-mock's first line")?;
    let base_url = first_line
        .trim()
        .strip_prefix("listening on ")
        .with_context(|| format!("unexpected first line from tine-mock: {first_line:?}"))?
        .to_owned();

    let scratch = Scratch(std::env::temp_dir().join(format!("tine-demo-{}", std::process::id())));
    let project = scratch.0.join("project");
    let home = scratch.0.join("home");
    std::fs::create_dir_all(&project).context("creating the scratch project")?;
    std::fs::create_dir_all(&home).context("creating the scratch TINE_HOME")?;
    std::fs::write(project.join("hello.txt"), "Helo, world!\n").context("writing hello.txt")?;

    let prompt = "Fix the typo in hello.txt";
    println!("tine demo: an offline session against the bundled simulator (no key, no network)");
    println!(
        "  project   {}  (hello.txt: \"Helo, world!\")",
        project.display()
    );
    println!("  simulator {base_url}  ({})", scenario.display());
    println!();
    println!("$ tine -p \"{prompt}\" --permission-mode acceptEdits --allowedTools \"Bash(cat:*)\"");
    println!();

    let output = Command::new(target.join("tine"))
        .args(["-p", prompt, "--permission-mode", "acceptEdits"])
        .args([
            "--allowedTools",
            "Bash(cat:*)",
            "--output-format",
            "stream-json",
        ])
        .current_dir(&project)
        .env("ANTHROPIC_BASE_URL", &base_url)
        .env("ANTHROPIC_API_KEY", "demo")
        .env_remove("ANTHROPIC_AUTH_TOKEN")
        .env_remove("ANTHROPIC_MODEL")
        .env("TINE_HOME", &home)
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .context("could not run tine")?;

    let mut result = None;
    let mut per_request = Vec::new();
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        let Ok(event) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        match event["type"].as_str() {
            Some("assistant") => {
                per_request.push(event["message"]["usage"].clone());
                for block in event["message"]["content"].as_array().into_iter().flatten() {
                    match block["type"].as_str() {
                        Some("thinking") => {
                            println!(
                                "  (thinking) {}",
                                short(block["thinking"].as_str().unwrap_or(""), 90)
                            );
                        }
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
            Some("result") => result = Some(event),
            _ => {}
        }
    }
    drop(mock);
    let Some(result) = result else {
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
    let usage = &result["usage"];
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
        "  cost   ${:.4}",
        result["total_cost_usd"].as_f64().unwrap_or(0.0)
    );
    Ok(())
}
