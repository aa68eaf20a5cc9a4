//! `tine compact log [SESSION]`: what each compaction of a session dropped. (`/compact
//! [focus]` and `/compact log`, headless or not, are commands of the session: tine-session's
//! `commands`.)

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, anyhow, bail};
use tine_compaction::compact_log;
use tine_config::{SessionId, tine_home_from_env};

const USAGE: &str = "usage: tine compact log [SESSION_ID]";

/// `tine compact log [SESSION_ID]` (the latest session of this directory by default).
pub fn run(args: &[String]) -> ExitCode {
    match run_inner(args) {
        Ok(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("tine compact: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn run_inner(args: &[String]) -> Result<String> {
    let session = match args {
        [log] if log == "log" => None,
        [log, id] if log == "log" => Some(SessionId::parse(id).map_err(|e| anyhow!(e))?),
        _ => bail!("{USAGE}"),
    };
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let cwd: PathBuf = std::fs::canonicalize(&cwd).unwrap_or(cwd);
    let home = tine_home_from_env().map_err(|e| anyhow!(e))?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime
        .block_on(compact_log(&home, &cwd, session))
        .map_err(|e| anyhow!(e))
}
