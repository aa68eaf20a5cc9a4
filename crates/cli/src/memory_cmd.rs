//! `tine memory path|list|show NAME`: the memory directory for people and scripts. Resolved the
//! way a session resolves it (TINE_MEMORY_DIR, the autoMemoryDirectory setting, the default).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, anyhow, bail};
use tine_memory::{MemoryEnv, MemoryResolution, list, memory_path, resolve_memory_dir, show};
use tine_query_loop::tine_home_from_env;
use tine_tools::settings::{self, SettingsPaths};

const USAGE: &str = "usage: tine memory path | list | show NAME";

/// Runs the subcommand on its arguments (after `memory`).
pub fn run(args: &[String]) -> ExitCode {
    match run_inner(args) {
        Ok(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("tine memory: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn run_inner(args: &[String]) -> Result<String> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let cwd: PathBuf = std::fs::canonicalize(&cwd).unwrap_or(cwd);
    let home = tine_home_from_env().map_err(|e| anyhow!(e))?;
    let mut paths = SettingsPaths::new(&cwd, &home);
    if let Some(user_home) = std::env::var_os("HOME").filter(|h| !h.is_empty()) {
        paths = paths.with_user_home(&PathBuf::from(user_home));
    }
    if let Some(managed) = std::env::var_os("TINE_MANAGED_SETTINGS") {
        paths = paths.with_managed(managed);
    }
    // Only the memory directory is read here and nothing runs: every problem is a warning.
    let loaded = settings::load(&paths);
    for error in &loaded.errors {
        eprintln!("tine: warning: {error}");
    }
    let resolution = resolve_memory_dir(&MemoryEnv::from_process(), &loaded, &home, &cwd);
    match args.first().map(String::as_str) {
        Some("path") => Ok(memory_path(&resolution)),
        Some("list") => match &resolution {
            MemoryResolution::Enabled(dir) => Ok(list(dir)),
            MemoryResolution::Disabled(why) => bail!("auto memory is off: {why}"),
        },
        Some("show") => {
            let Some(name) = args.get(1) else {
                bail!("`show` needs a memory name (see `tine memory list`)\n{USAGE}");
            };
            match &resolution {
                MemoryResolution::Enabled(dir) => show(dir, name).map_err(|e| anyhow!(e)),
                MemoryResolution::Disabled(why) => bail!("auto memory is off: {why}"),
            }
        }
        Some(other) => bail!("unknown memory command `{other}`\n{USAGE}"),
        None => bail!("{USAGE}"),
    }
}
