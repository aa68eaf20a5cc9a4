//! `cargo xtask examples`: build every crate's examples once, then run each (they talk to the
//! bundled simulator in-process, so no key and no network), failing on the first that fails.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

/// Examples that need a terminal (built, not run).
const INTERACTIVE: &[(&str, &str)] = &[("tine-tui", "tui_demo")];

/// One example: its package and its name (`cargo run -p PACKAGE --example NAME`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Example {
    pub(crate) package: String,
    pub(crate) name: String,
}

/// Every `crates/*/examples/*.rs` (and `examples/NAME/main.rs`), sorted.
pub(crate) fn find(root: &Path) -> Result<Vec<Example>> {
    let mut found = Vec::new();
    let crates = root.join("crates");
    for entry in std::fs::read_dir(&crates).context("cannot list crates/")? {
        let dir = entry?.path();
        let examples = dir.join("examples");
        if !examples.is_dir() {
            continue;
        }
        let package = package_name(&dir.join("Cargo.toml"))?;
        for file in std::fs::read_dir(&examples)? {
            let path = file?.path();
            let name = if path.extension().is_some_and(|e| e == "rs") {
                path.file_stem()
            } else if path.join("main.rs").is_file() {
                path.file_name()
            } else {
                None
            };
            if let Some(name) = name {
                found.push(Example {
                    package: package.clone(),
                    name: name.to_string_lossy().into_owned(),
                });
            }
        }
    }
    found.sort_by(|a, b| (&a.package, &a.name).cmp(&(&b.package, &b.name)));
    Ok(found)
}

fn package_name(manifest: &Path) -> Result<String> {
    let text = std::fs::read_to_string(manifest)
        .with_context(|| format!("cannot read {}", manifest.display()))?;
    text.lines()
        .find_map(|l| {
            let value = l.trim().strip_prefix("name")?.trim().strip_prefix('=')?;
            Some(value.trim().trim_matches('"').to_string())
        })
        .with_context(|| format!("no package name in {}", manifest.display()))
}

pub(crate) fn run(root: &Path) -> Result<()> {
    let examples = find(root)?;
    if examples.is_empty() {
        bail!("no examples under crates/*/examples");
    }
    // The test profile: the dependencies `cargo test` already built are reused (a dev-profile
    // build would compile every dependency once more). Its outputs land in target/debug.
    crate::cargo(
        root,
        &["build", "--workspace", "--examples", "--profile", "test"],
    )?;
    let dir = target_dir(root).join("debug").join("examples");
    let mut failed = Vec::new();
    let mut ran = 0;
    for example in &examples {
        if INTERACTIVE.contains(&(example.package.as_str(), example.name.as_str())) {
            eprintln!("  (built, not run: {} needs a terminal)", example.name);
            continue;
        }
        ran += 1;
        let binary = dir.join(format!("{}{}", example.name, std::env::consts::EXE_SUFFIX));
        eprintln!(
            "$ cargo run -p {} --example {}",
            example.package, example.name
        );
        let output = Command::new(&binary)
            .current_dir(root)
            // Offline by construction: no credential of the caller reaches an example.
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("ANTHROPIC_AUTH_TOKEN")
            .env_remove("ANTHROPIC_BASE_URL")
            .output()
            .with_context(|| format!("cannot start {}", binary.display()))?;
        if output.status.success() {
            let lines = String::from_utf8_lossy(&output.stdout).lines().count();
            eprintln!("  ok ({lines} lines of output)");
        } else {
            eprintln!("{}", String::from_utf8_lossy(&output.stdout));
            eprintln!("{}", String::from_utf8_lossy(&output.stderr));
            failed.push(format!("{} --example {}", example.package, example.name));
        }
    }
    if !failed.is_empty() {
        bail!("{} example(s) failed: {}", failed.len(), failed.join(", "));
    }
    println!("examples: {ran} ran, {} built", examples.len());
    Ok(())
}

fn target_dir(root: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_examples_directory_is_found_with_its_package() {
        let found = find(&crate::workspace_root()).unwrap();
        let config = Example {
            package: "tine-config".into(),
            name: "layered_settings".into(),
        };
        assert!(found.contains(&config), "{found:?}");
        assert!(found.iter().all(|e| e.package.starts_with("tine-")));
    }
}
