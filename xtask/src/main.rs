//! `cargo xtask`: the project's developer commands, in Rust so they run wherever cargo does.
//!
//! Modules: `layers` (the crate layering check), `bench` (the benchmark registry), `demo` (the
//! offline demo against the simulator), `examples` (every crate's examples built and run),
//! `fuzz` (the property tests at scale), `killtest` (kill -9 trials of the real binary),
//! `sdk_e2e` (the real Python Agent SDK driving a CLI against the simulator), `acp_e2e` (the
//! real Python ACP client driving `tine acp` as an editor would), `pyflows` (what those two
//! share), `local_model` (tine against a real small local model's server), `startup_layout`
//! (the order of the binary's start-up code, traced under valgrind) and `symbol_pattern` (the
//! names it places them by).

mod acp_e2e;
mod bench;
mod demo;
mod examples;
mod fuzz;
mod killtest;
mod layers;
mod local_model;
mod pyflows;
mod sdk_e2e;
mod startup_layout;
mod symbol_pattern;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{Context, Result, bail};

const USAGE: &str = "\
usage: cargo xtask <command>

commands:
  ci             fmt --check, clippy -D warnings, the layering check, doc, examples, the tests
  check-layers   fail if a crate depends upward or sideways (docs/ARCHITECTURE.md)
  doc            cargo doc --workspace --no-deps with every rustdoc warning an error
  examples       build every crate's examples once and run each (offline, on the simulator)
  bench [NAME]   list the benchmarks, or run one (or `all`)
  demo           an offline session of tine against the bundled simulator
  fuzz [TARGET] [--cases N]
                 the fuzz property tests at scale (sse, settings, rules, bash, tools, all)
  killtest [--trials N] [--seed S] [--keep]
                 kill -9 tine -p at random moments; check transcripts, resume, memory files
  sdk-e2e [--cli PATH|bundled] [--only N[,N..]]
                 the Python Agent SDK's flows against tine (or another CLI) and the simulator
  acp-e2e [--agent PATH [-- ARGS..]] [--only N[,N..]]
                 the Python ACP client, as an editor, against `tine acp` (or another agent)
  local-model [--python PATH]
                 tine against a real small local model (llama-cpp-python's server, SmolLM2)
  startup-layout write crates/cli/startup-layout.ld: the functions tine -p and a resume run,
                 in order, traced under valgrind on a release build (see crates/cli/build.rs)
  mock [ARGS]    run the simulator: tine-mock --port N --scenario FILE [--log DIR]
  help           this list (also --help, -h)
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
        Some("doc") => doc(&root),
        Some("examples") => examples::run(&root),
        Some("bench") => bench::run(&root, args.get(1).map(String::as_str)),
        Some("demo") => demo::demo(),
        Some("fuzz") => fuzz::run(&root, &args[1..]),
        Some("killtest") => killtest::run(&args[1..]),
        Some("sdk-e2e") => sdk_e2e::run(&args[1..]),
        Some("acp-e2e") => acp_e2e::run(&args[1..]),
        Some("local-model") => local_model::run(&root, &args[1..]),
        Some("startup-layout") => startup_layout::run(&root),
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
    doc(root)?;
    examples::run(root)?;
    cargo(root, &["test", "--workspace"])
}

/// `cargo doc --workspace --no-deps`, a broken link or a missing doc an error.
fn doc(root: &Path) -> Result<()> {
    let cargo_bin = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let args = ["doc", "--workspace", "--no-deps"];
    eprintln!("$ RUSTDOCFLAGS=\"-D warnings\" cargo {}", args.join(" "));
    let status = Command::new(cargo_bin)
        .args(args)
        .env("RUSTDOCFLAGS", "-D warnings")
        .current_dir(root)
        .status()
        .context("could not start cargo")?;
    if !status.success() {
        bail!("`cargo doc` failed ({status})");
    }
    Ok(())
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
