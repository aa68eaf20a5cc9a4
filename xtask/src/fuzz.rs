//! `cargo xtask fuzz [TARGET|all] [--cases N]`: the property tests of `tests/suite/fuzz_*.rs`
//! at scale. `cargo test` runs a few cases of each; this runs N (`PROPTEST_CASES`), on the
//! stable toolchain (no cargo-fuzz, which needs nightly). A failure prints proptest's minimal
//! failing input; make it a named test next to the code it breaks.

use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result, bail};

/// (target, package, test filter, what it covers)
pub(crate) const TARGETS: &[(&str, &str, &str, &str)] = &[
    (
        "sse",
        "tine-api-client",
        "suite::fuzz_sse::",
        "SSE framing, event decoding, accumulation: any bytes, any split",
    ),
    (
        "settings",
        "tine-permissions",
        "suite::fuzz_settings::",
        "settings files: arbitrary and mutated JSON, deny rules kept",
    ),
    (
        "rules",
        "tine-permissions",
        "suite::fuzz_rules::",
        "rule grammar round trip, engine decisions, Bash deny rules",
    ),
    (
        "bash",
        "tine-tools",
        "suite::fuzz_bash::",
        "bash analysis: no panic, a write is never read-only",
    ),
    (
        "tools",
        "tine-tools",
        "suite::fuzz_tools::",
        "every built-in tool with arbitrary inputs, in a scratch dir",
    ),
];

const DEFAULT_CASES: u64 = 10_000;

pub(crate) fn run(root: &Path, args: &[String]) -> Result<()> {
    let mut target = None;
    let mut cases = DEFAULT_CASES;
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        match arg.as_str() {
            "--cases" => {
                let value = rest.next().context("`--cases` needs a number")?;
                cases = value
                    .parse()
                    .with_context(|| format!("`--cases {value}` is not a number"))?;
            }
            "--list" => target = Some("--list"),
            name if target.is_none() => target = Some(name),
            other => bail!("unexpected argument `{other}`"),
        }
    }
    let Some(target) = target.filter(|t| *t != "--list") else {
        println!(
            "fuzz targets (cargo xtask fuzz TARGET|all [--cases N], default {DEFAULT_CASES}):"
        );
        for (name, package, _, what) in TARGETS {
            println!("  {name:<10} {package:<16} {what}");
        }
        return Ok(());
    };
    let chosen: Vec<_> = TARGETS
        .iter()
        .filter(|(name, ..)| target == "all" || *name == target)
        .collect();
    if chosen.is_empty() {
        bail!("no fuzz target named `{target}`; `cargo xtask fuzz --list` lists them");
    }
    let mut failed = Vec::new();
    for (name, package, filter, _) in chosen {
        let started = Instant::now();
        println!("== fuzz {name}: {cases} cases per property");
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
        let status = std::process::Command::new(cargo)
            .args(["test", "--package", package, "--test", "all", "--", filter])
            .env("PROPTEST_CASES", cases.to_string())
            .current_dir(root)
            .status()
            .context("could not start cargo")?;
        let seconds = started.elapsed().as_secs_f64();
        if status.success() {
            println!("== fuzz {name}: ok ({cases} cases per property, {seconds:.0} s)");
        } else {
            println!("== fuzz {name}: FAILED ({status}, {seconds:.0} s)");
            failed.push(*name);
        }
    }
    if !failed.is_empty() {
        bail!("fuzz target(s) failed: {}", failed.join(", "));
    }
    Ok(())
}
