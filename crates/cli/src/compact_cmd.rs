//! `tine compact log [SESSION]`: what each compaction of a session dropped. (`/compact
//! [focus]` and `/compact log`, headless or not, are commands of the session: tine-session's
//! `commands`.)

use anyhow::{Context, Result, anyhow};
use tine_compaction::compact_log;
use tine_config::SessionId;

use crate::args::CompactCommand;

/// `tine compact log [SESSION_ID]` (the latest session of this directory by default).
pub(crate) fn run(command: &CompactCommand) -> Result<String> {
    let CompactCommand::Log { session } = command;
    let session = session
        .as_deref()
        .map(SessionId::parse)
        .transpose()
        .map_err(|e| anyhow!(e))?;
    let (cwd, home) = crate::setup::here()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime
        .block_on(compact_log(&home, &cwd, session))
        .map_err(|e| anyhow!(e))
}
