//! The command line and the environment to the [`SessionOptions`] of `tine-session`, the same
//! for both front ends: the working directory and `TINE_HOME`, the log, the flags; the session
//! decides the rest once (provider and credentials, settings, permissions, the sandbox, tools,
//! context, memory).

use anyhow::{Context, Result, anyhow};
use tine_config::{SessionId, tine_home_from_env};
use tine_session::{Approvals, Resume, SessionOptions};

use crate::args::{Args, split_rules};

pub(crate) use tine_session::{settings_paths, user_home_from_env as user_home};

/// The current directory (made canonical) and `TINE_HOME`, for the commands beside a session.
pub(crate) fn here() -> Result<(std::path::PathBuf, std::path::PathBuf)> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let cwd = std::fs::canonicalize(&cwd).unwrap_or(cwd);
    let home = tine_home_from_env().map_err(|e| anyhow!(e))?;
    Ok((cwd, home))
}

/// The session `args` ask for; `approvals` says who answers asks (headless `-p`: the rules).
pub(crate) fn session_options(args: &Args, approvals: Approvals) -> Result<SessionOptions> {
    let cwd = match &args.cwd {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    let cwd = std::fs::canonicalize(&cwd)
        .with_context(|| format!("cannot use {} as the working directory", cwd.display()))?;
    let home = tine_home_from_env().map_err(|e| anyhow!(e))?;
    let headless = approvals == Approvals::Headless;
    let path = match headless {
        true => crate::logging::init(&home, args.verbose),
        // The UI owns the terminal: always the file (info, or `TINE_LOG`), never stderr.
        false => crate::logging::init_with_default(&home, Some("info")),
    };
    if let Some(path) = path {
        tracing::info!(log = %path.display(), "tine starting");
    }
    let mut options = SessionOptions::new(cwd);
    options.home = Some(home);
    options.provider = args.provider;
    options.model = args.model.clone();
    options.settings_flag = args.settings.clone();
    options.allowed_tools = split_rules(&args.allowed_tools);
    options.disallowed_tools = split_rules(&args.disallowed_tools);
    options.resume = if let Some(id) = &args.resume {
        Resume::Id(SessionId::parse(id).map_err(|e| anyhow!(e))?)
    } else if args.continue_session {
        Resume::Latest
    } else {
        Resume::New
    };
    options.bare = args.bare;
    options.max_turns = args.max_turns;
    // --permission-mode, the system prompt, --add-dir, --session-id and -p's own flags.
    crate::flags::SessionFlags::from_args(args, headless)?.apply(&mut options);
    options.verbose = args.verbose && headless;
    options.approvals = approvals;
    options.mcp_configs = args.mcp_config.clone();
    options.strict_mcp_config = args.strict_mcp_config;
    options.plugin_dirs = args.plugin_dir.clone();
    options.sandbox = args.sandbox;
    // This binary is the launcher: `tine __sandbox ... -- COMMAND`.
    options.sandbox_launcher = std::env::current_exe().ok();
    Ok(options)
}
