//! Start-up: from the command line and the environment to the [`SessionOptions`] of
//! `tine-session`, which assembles the session. The order is chosen for speed and clear
//! failures: the working directory and `TINE_HOME`, then the provider and its credentials (a
//! missing key is one line and nothing else; with openai the client is built here and handed
//! to the session), then the log; the rest (settings, permissions, tools, context, memory) is
//! the session's.

use anyhow::{Context, Result, anyhow};
use tine_config::{SessionId, tine_home_from_env};
use tine_session::{Approvals, Resume, SessionOptions};

use crate::args::{Args, split_rules};

pub use tine_session::{DEFAULT_MODEL, gather_context};
pub use tine_session::{settings_paths, user_home_from_env as user_home};

/// The session `args` ask for; `approvals` says who answers asks (headless `-p`: the rules).
pub fn session_options(args: &Args, approvals: Approvals) -> Result<SessionOptions> {
    let cwd = match &args.cwd {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    let cwd = std::fs::canonicalize(&cwd)
        .with_context(|| format!("cannot use {} as the working directory", cwd.display()))?;
    let home = tine_home_from_env().map_err(|e| anyhow!(e))?;
    // The provider and its credentials first: without them nothing else matters, and the
    // message is one line.
    let provider = crate::provider::for_session(
        args.provider,
        args.model.as_deref(),
        &crate::provider::Place {
            cwd: &cwd,
            home: &home,
            user_home: user_home().as_deref(),
            settings_flag: args.settings.as_deref(),
            managed_settings: None,
        },
    )?;
    for warning in &provider.warnings {
        eprintln!("tine: warning: {warning}");
    }
    let headless = approvals == Approvals::Headless;
    let path = match headless {
        true => crate::logging::init(&home, args.verbose),
        // The UI owns the terminal: always the file (info, or `TINE_LOG`), never stderr.
        false => crate::logging::init_with_default(&home, Some("info")),
    };
    if let Some(path) = path {
        tracing::info!(log = %path.display(), provider = %provider.provider, "tine starting");
    }
    let mut options = SessionOptions::new(cwd);
    options.home = Some(home);
    options.client = provider.client;
    options.model = provider.model;
    options.small_model = provider.small_model;
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
    let flag = args.sandbox;
    options.sandbox = Some(Box::new(move |inputs| {
        crate::sandbox_settings::session_sandbox(flag, inputs).map_err(|error| format!("{error:#}"))
    }));
    Ok(options)
}
