//! `tine rewind --list | N [--force] [-r ID]`: the files of a session of this directory back to
//! before one of its prompts (the latest session by default), from its checkpoints
//! (tine-checkpoints). What the session changed since goes back (Bash's creations, deletions
//! and moves included); files it never touched keep their edits; a file both it and someone
//! else changed is a conflict: nothing is written and the files are listed, unless `--force`.
//! The conversation is not changed here: the command says how to go on from before the prompt.

use std::fmt::Write as _;
use std::time::{Duration, UNIX_EPOCH};

use anyhow::{Context, Result, anyhow, bail};
use tine_checkpoints::{CheckpointConfig, CheckpointError, Checkpoints, SessionCheckpoints};
use tine_config::SessionId;

use crate::args::RewindArgs;

/// Runs `tine rewind`.
pub(crate) fn run(args: &RewindArgs) -> Result<String> {
    let (cwd, home) = crate::setup::here()?;
    let session = match &args.resume {
        Some(id) => SessionId::parse(id).map_err(|e| anyhow!(e))?,
        None => {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .context("cannot start the async runtime")?;
            runtime
                .block_on(tine_query_loop::latest_session(&home, &cwd))
                .map_err(|e| anyhow!(e))?
                .ok_or_else(|| anyhow!("no session of this directory to rewind; pass -r ID"))?
        }
    };
    let store = tine_config::project_dir(&home, &cwd).join("checkpoints");
    let records = SessionCheckpoints::load(&store, session.as_str())
        .map_err(|e| anyhow!(e))?
        .filter(|records| !records.prompts.is_empty())
        .ok_or_else(|| {
            anyhow!(
                "session {session} has no checkpoints: none of its prompts changed files, or \
                 checkpoints were off"
            )
        })?;
    let checkpoints = Checkpoints::open_existing(&store, &cwd, CheckpointConfig::default())
        .map_err(|e| anyhow!(e))?;
    match args.prompt {
        None => list(&checkpoints, &records, &session),
        Some(prompt) => rewind(&checkpoints, &records, &session, prompt, args.force),
    }
}

fn list(
    checkpoints: &Checkpoints,
    records: &SessionCheckpoints,
    session: &SessionId,
) -> Result<String> {
    let mut out = format!("checkpoints of session {session} (rewind with `tine rewind N`):\n");
    for record in &records.prompts {
        let files = plan_files(checkpoints, records, record.prompt).unwrap_or_default();
        let when = UNIX_EPOCH + Duration::from_secs(record.at);
        let age = when.elapsed().map_or(0, |d| d.as_secs() / 60);
        let _ = writeln!(
            out,
            "{:>3}  {:>4} min ago  {}  ({} file{} since)",
            record.prompt,
            age,
            record.text.lines().next().unwrap_or_default(),
            files.len(),
            if files.len() == 1 { "" } else { "s" }
        );
    }
    Ok(out.trim_end().to_owned())
}

fn plan_files(
    checkpoints: &Checkpoints,
    records: &SessionCheckpoints,
    prompt: usize,
) -> Result<Vec<std::path::PathBuf>, CheckpointError> {
    let Some(from) = records.prompts.iter().position(|r| r.prompt >= prompt) else {
        return Ok(Vec::new());
    };
    let turns = checkpoints.turns(records)?;
    let plan = checkpoints.plan_rewind(&turns, from)?;
    Ok(plan.restore.into_iter().chain(plan.remove).collect())
}

fn rewind(
    checkpoints: &Checkpoints,
    records: &SessionCheckpoints,
    session: &SessionId,
    prompt: usize,
    force: bool,
) -> Result<String> {
    let Some(from) = records.prompts.iter().position(|r| r.prompt >= prompt) else {
        let last = records.prompts.last().map_or(0, |r| r.prompt);
        bail!(
            "session {session} changed no files from prompt {prompt} on (its last checkpoint is \
             before prompt {last}): nothing to rewind; `tine rewind --list` shows them"
        );
    };
    let turns = checkpoints.turns(records).map_err(|e| anyhow!(e))?;
    let plan = checkpoints
        .plan_rewind(&turns, from)
        .map_err(|e| anyhow!(e))?;
    let report = match checkpoints.apply(&plan, force) {
        Ok(report) => report,
        Err(CheckpointError::Conflicts(files)) => {
            let list: Vec<String> = files.iter().map(|f| format!("  {}", f.display())).collect();
            bail!(
                "nothing was rewound: the session changed these files and so did someone else \
                 since; keep your edits, or run again with --force to put them back:\n{}",
                list.join("\n")
            );
        }
        Err(error) => return Err(anyhow!(error)),
    };
    // The rewound turns are gone: a later rewind must not take this one for someone's edit.
    let mut records = records.clone();
    records.prompts.truncate(from);
    records.save(checkpoints.store()).map_err(|e| anyhow!(e))?;
    let mut out = format!("rewound the files of session {session} to before prompt {prompt}");
    for path in &report.restored {
        let _ = write!(out, "\n  restored {}", path.display());
    }
    for path in &report.removed {
        let _ = write!(out, "\n  removed  {}", path.display());
    }
    if report.restored.is_empty() && report.removed.is_empty() {
        out.push_str("\n  (nothing had changed)");
    }
    let _ = write!(
        out,
        "\nthe conversation is unchanged: `tine -r {session}` goes on from its end"
    );
    Ok(out)
}
