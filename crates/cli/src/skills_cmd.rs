//! `tine skills list`: the skills a session here would have, where each is from, and the ones
//! skipped (with why), read the way a session reads them.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, anyhow, bail};
use tine_config::tine_home_from_env;
use tine_session::skills;

const USAGE: &str = "usage: tine skills list";

/// Runs the subcommand on its arguments (after `skills`).
pub fn run(args: &[String]) -> ExitCode {
    match run_inner(args) {
        Ok(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("tine skills: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn run_inner(args: &[String]) -> Result<String> {
    match args.first().map(String::as_str) {
        Some("list") | None => {}
        Some("-h" | "--help") => return Ok(format!("{USAGE}\n")),
        Some(other) => bail!("unknown subcommand `{other}`; {USAGE}"),
    }
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let cwd: PathBuf = std::fs::canonicalize(&cwd).unwrap_or(cwd);
    let home = tine_home_from_env().map_err(|e| anyhow!(e))?;
    let user_home = tine_session::user_home_from_env();
    let (found, warnings) = skills::load(&skills::skill_dirs(&cwd, &home, user_home.as_deref()));
    Ok(skills::list_text(&found, &warnings))
}
