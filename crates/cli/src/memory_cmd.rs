//! `tine memory path|list|show NAME|dream`: the memory directory for people and scripts.
//! Resolved the way a session resolves it (TINE_MEMORY_DIR, the autoMemoryDirectory setting,
//! the default).
//!
//! `dream` consolidates now (ignoring the time and session gates, still taking the lock). No
//! session's cache-safe params exist here, so its fork cannot share a prompt cache: it runs
//! from a minimal parent holding the real system prompt and tool array of a session in this
//! directory, without a conversation, and says so.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result, anyhow, bail};
use tine_config::SessionId;
use tine_config::settings::{self, LoadedSettings};
use tine_fork_runtime::{ParentContext, SessionLocation, UsageLedger};
use tine_memory::{
    DreamCommand, DreamOptions, DreamStatus, MemoryDir, MemoryEnv, MemoryResolution,
    guard_memory_writes, list, memory_path, resolve_memory_dir, show,
};
use tine_permissions::{PermissionContext, PermissionSettings};
use tine_query_loop::{BASE_SYSTEM_PROMPT, RequestTemplate, system_prompt_blocks};
use tine_tools::{Tool, ToolContext, ToolPool};
use tokio_util::sync::CancellationToken;

use crate::args::MemoryCommand;

/// `tine memory path|list|show NAME|dream`.
pub(crate) fn run(command: &MemoryCommand) -> Result<String> {
    let (cwd, home) = crate::setup::here()?;
    let user_home = crate::setup::user_home();
    let paths = crate::setup::settings_paths(&cwd, &home, user_home.as_deref(), None);
    // Only the memory directory is read here and nothing runs: every problem is a warning.
    let loaded = settings::load(&paths);
    let rule_errors = PermissionSettings::read(&loaded).errors;
    for error in loaded.errors.iter().chain(&rule_errors) {
        eprintln!("tine: warning: {error}");
    }
    let resolution = resolve_memory_dir(&MemoryEnv::from_process(), &loaded, &home, &cwd);
    let enabled = |resolution: &MemoryResolution| match resolution {
        MemoryResolution::Enabled(dir) => Ok(dir.clone()),
        MemoryResolution::Disabled(why) => Err(anyhow!("auto memory is off: {why}")),
    };
    match command {
        MemoryCommand::Path => {
            // Only the path on stdout, for scripts; where it comes from is a note.
            let (path, from) = memory_path(&resolution).map_err(|why| anyhow!(why))?;
            eprintln!("tine: ({from})");
            Ok(format!("{}\n", path.display()))
        }
        MemoryCommand::List => Ok(list(&enabled(&resolution)?)),
        MemoryCommand::Show { name } => show(&enabled(&resolution)?, name).map_err(|e| anyhow!(e)),
        MemoryCommand::Dream => {
            // A model runs tools here: settings that could not be read fully stop it, as
            // they stop a session.
            if loaded.fatal_errors().next().is_some() || rule_errors.iter().any(|e| e.is_fatal()) {
                bail!("{}", settings::REFUSAL);
            }
            let dir = enabled(&resolution)?;
            dream(Place {
                dir,
                loaded,
                home,
                cwd,
                user_home,
            })
        }
    }
}

/// Where `tine memory dream` runs.
struct Place {
    dir: MemoryDir,
    loaded: LoadedSettings,
    home: PathBuf,
    cwd: PathBuf,
    user_home: Option<PathBuf>,
}

fn dream(place: Place) -> Result<String> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let result = runtime.block_on(dream_async(place));
    tine_tools::kill_tool_processes();
    runtime.shutdown_background();
    result
}

async fn dream_async(place: Place) -> Result<String> {
    let Place {
        dir,
        loaded,
        home,
        cwd,
        user_home,
    } = place;
    let provider = tine_session::provider::choose(None, &loaded)?.provider;
    let model = tine_session::provider::model(provider, None, &loaded)?.value;
    let client_config =
        tine_session::provider::client_config(provider, &loaded).map_err(|e| anyhow!(e))?;
    let client = tokio::task::spawn_blocking(move || client_config.build())
        .await
        .context("the HTTP client could not be built")?
        .map_err(|e| anyhow!(e))?;

    // The system prompt and tool array a session here would send.
    let context = tine_session::gather_context(&home, &cwd, &model, false).await;
    let rendered = context.render(BASE_SYSTEM_PROMPT, None);
    let (permissions, _) = PermissionContext::from_settings(&loaded, cwd.clone(), user_home, None);
    let pool = ToolPool::builtin(|name| permissions.is_tool_denied(name));
    let tools: Vec<Arc<dyn Tool>> = pool.tools().to_vec();
    let definitions = pool.definitions().clone();
    let tools = guard_memory_writes(&tools, dir.path()).map_err(|e| anyhow!(e))?;
    let parent = ParentContext::new(
        client,
        tools.into(),
        ToolContext::new(&cwd),
        SessionLocation {
            home,
            cwd: cwd.clone(),
            session_id: SessionId::new_random(),
        },
    )
    .with_ledger(UsageLedger::default());
    let template = RequestTemplate {
        model,
        system: Arc::new(system_prompt_blocks(&rendered.system_prompt)),
        tools: definitions,
        thinking: None,
        skip_cache_write: false,
        replacements: None,
        effort: None,
    };
    let (options, warnings) = DreamOptions::from_settings(&loaded);
    for warning in warnings {
        eprintln!("tine: warning: {warning}");
    }

    // Ctrl-C kills the dream; its lock rolls back.
    let cancel = CancellationToken::new();
    let on_signal = cancel.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            on_signal.cancel();
        }
    });
    eprintln!("dream: consolidating {}", dir.path().display());
    let command = DreamCommand {
        dir,
        parent: Arc::new(parent),
        template,
        options,
        permissions: Some(permissions),
        cancel,
    };
    let (text, run) = tine_memory::dream_now(command, |line| eprintln!("{line}"))
        .await
        .map_err(|e| anyhow!(e))?;
    match &run.task.status {
        DreamStatus::Completed { .. } => Ok(text),
        DreamStatus::Killed | DreamStatus::Failed { .. } | DreamStatus::Running => {
            bail!("{}", run.summary())
        }
    }
}
