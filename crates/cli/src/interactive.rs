//! Interactive `tine`: the terminal UI (tine-tui) as a front end of the session (tine-session).
//! Bare `tine` on a terminal opens it in the current directory; `tine -c` / `tine -r ID` open it
//! with the conversation shown again. The UI and the session know nothing of each other: the
//! [`adapter`] maps the session's events to the UI's, the [`driver`] the UI's commands to the
//! session handle's calls (and runs the commands that change the conversation: `/clear`,
//! `/resume`, `/model`), [`replay`] shows a resumed conversation, [`history`] keeps the prompt
//! box's history on disk, [`local`] answers `/memory`, `/permissions` and `/resume`'s list.
//!
//! Logs go to `$TINE_HOME/logs/tine.log` (info, or `TINE_LOG`), never the screen. Exiting
//! (`/exit`, Ctrl-D on an empty prompt, Ctrl-C twice) restores the terminal, then shuts the
//! session down (background work such as memory extraction is flushed, the transcript
//! complete) and prints how to resume. SIGTERM and SIGHUP restore the terminal and end at once.

pub mod adapter;
pub mod agents;
pub mod driver;
pub mod elicitation;
pub mod history;
pub mod local;
pub mod replay;
pub mod server_tools;
#[cfg(test)]
mod tests;

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, Result, anyhow};
use tine_api_client::ModelClient;
use tine_config::{SessionId, tine_home_from_env};
use tine_permissions::PermissionMode;
use tine_session::custom_commands;
use tine_session::{Approvals, Resume, SessionOptions};
use tine_tui::{App, AppConfig, TerminalOptions, UiCommand, UiEvent};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::args::{Args, split_rules};
use adapter::{Adapter, ui_mode};
use driver::{Driver, OptionsFactory, Running, custom_specs};

/// Whether `args` ask for the UI: no `-p`, no prompt, standard input and output terminals.
pub fn wanted(args: &Args) -> bool {
    !args.print
        && args.prompt.is_none()
        && std::io::stdin().is_terminal()
        && std::io::stdout().is_terminal()
}

/// Everything a UI session is started from, also again for `/clear`, `/resume`, `/model`.
#[derive(Clone)]
pub struct Launch {
    pub cwd: PathBuf,
    pub home: PathBuf,
    pub user_home: Option<PathBuf>,
    pub model: Option<String>,
    /// Side queries' model (the openai provider's); `None`: the session's default.
    pub small_model: Option<String>,
    pub settings_flag: Option<String>,
    /// The managed-settings file; `None`: `TINE_MANAGED_SETTINGS` or none.
    pub managed_settings: Option<PathBuf>,
    pub permission_mode: Option<PermissionMode>,
    pub allowed_tools: Vec<String>,
    pub disallowed_tools: Vec<String>,
    pub bare: bool,
    pub max_turns: Option<u32>,
    pub append_system_prompt: Option<String>,
    /// `--system-prompt`, `--add-dir`, `--session-id`, ... (the fields above win where both
    /// say something: tests set them).
    pub flags: crate::flags::SessionFlags,
    pub sandbox_flag: bool,
    /// `--mcp-config` values and `--strict-mcp-config`.
    pub mcp_configs: Vec<String>,
    pub strict_mcp_config: bool,
    /// The openai provider's client (tests: a scripted or mock one); `None`: the session
    /// builds Anthropic's from the environment.
    pub client: Option<Arc<dyn ModelClient>>,
}

impl Launch {
    pub fn from_args(args: &Args) -> Result<Self> {
        let cwd = match &args.cwd {
            Some(dir) => dir.clone(),
            None => std::env::current_dir().context("cannot read the current directory")?,
        };
        let cwd = std::fs::canonicalize(&cwd).unwrap_or(cwd);
        let home = tine_home_from_env().map_err(|e| anyhow!(e))?;
        let user_home = tine_session::user_home_from_env();
        // The provider and its credentials first: without them nothing else matters, and the
        // message is one line. Its client serves every session of the launch (`/clear`,
        // `/resume`, `/model` restart with it).
        let provider = crate::provider::for_session(
            args.provider,
            args.model.as_deref(),
            &crate::provider::Place {
                cwd: &cwd,
                home: &home,
                user_home: user_home.as_deref(),
                settings_flag: args.settings.as_deref(),
                managed_settings: None,
            },
        )?;
        for warning in &provider.warnings {
            eprintln!("tine: warning: {warning}");
        }
        let flags = crate::flags::SessionFlags::from_args(args, false)?;
        Ok(Self {
            cwd,
            home,
            user_home,
            model: provider.model,
            small_model: provider.small_model,
            settings_flag: args.settings.clone(),
            managed_settings: None,
            permission_mode: flags.permission_mode,
            allowed_tools: split_rules(&args.allowed_tools),
            disallowed_tools: split_rules(&args.disallowed_tools),
            bare: args.bare,
            max_turns: args.max_turns,
            append_system_prompt: flags.append_system_prompt.clone(),
            flags,
            sandbox_flag: args.sandbox,
            mcp_configs: args.mcp_config.clone(),
            strict_mcp_config: args.strict_mcp_config,
            client: provider.client,
        })
    }

    /// The options of one session of this launch.
    pub fn options(&self, resume: Resume, model: Option<String>) -> SessionOptions {
        let mut options = SessionOptions::new(self.cwd.clone());
        options.home = Some(self.home.clone());
        options.user_home = self.user_home.clone();
        options.client = self.client.clone();
        options.model = model.or_else(|| self.model.clone());
        options.small_model = self.small_model.clone();
        options.settings_flag = self.settings_flag.clone();
        options.managed_settings = self.managed_settings.clone();
        options.permission_mode = self.permission_mode;
        options.allowed_tools = self.allowed_tools.clone();
        options.disallowed_tools = self.disallowed_tools.clone();
        options.resume = resume;
        options.bare = self.bare;
        options.max_turns = self.max_turns;
        self.flags.apply(&mut options);
        options.permission_mode = self.permission_mode;
        options.append_system_prompt = self.append_system_prompt.clone();
        options.approvals = Approvals::Interactive;
        options.mcp_configs = self.mcp_configs.clone();
        options.strict_mcp_config = self.strict_mcp_config;
        let flag = self.sandbox_flag;
        options.sandbox = Some(Box::new(move |inputs| {
            crate::sandbox_settings::session_sandbox(flag, inputs).map_err(|e| format!("{e:#}"))
        }));
        options
    }

    fn factory(&self) -> OptionsFactory {
        let mut launch = self.clone();
        // `--session-id` named the first session; `/clear` and `/resume` start others.
        launch.flags.session_id = None;
        Box::new(move |resume, model| launch.options(resume, model))
    }
}

/// Which conversation `args` open.
pub fn resume_of(args: &Args) -> Result<Resume> {
    if let Some(id) = &args.resume {
        return Ok(Resume::Id(SessionId::parse(id).map_err(|e| anyhow!(e))?));
    }
    Ok(if args.continue_session {
        Resume::Latest
    } else {
        Resume::New
    })
}

/// Bare `tine`: the UI until the person exits.
pub async fn run(args: Args) -> Result<ExitCode> {
    let launch = Launch::from_args(&args)?;
    let resume = resume_of(&args)?;
    init_log(&launch.home);
    let started = start(&launch, resume).await?;
    let ended = ui(started).await?;
    if let Some(summary) = ended.summary
        && summary.transcript_path.exists()
    {
        println!(
            "Resume this session with:\n  tine -r {}\n(or `tine -c` for the latest one here)",
            summary.session_id
        );
    }
    Ok(ExitCode::from(ended.code))
}

/// The log of an interactive session: always to the file (info, or `TINE_LOG`), never stderr,
/// which the UI owns.
fn init_log(home: &std::path::Path) {
    let path = crate::logging::init_with_default(home, Some("info"));
    if let Some(path) = path {
        tracing::info!(log = %path.display(), "tine interactive starting");
    }
}

/// A session and the app ready to show it.
pub struct Started {
    pub driver: Driver,
    pub app: App,
    pub ui_events: mpsc::UnboundedReceiver<UiEvent>,
}

/// Starts the session and builds the app (and, when resumed, the replay).
pub async fn start(launch: &Launch, resume: Resume) -> Result<Started> {
    let running = Running::start(launch.options(resume, None))
        .await
        .map_err(|e| anyhow!(e))?;
    let summary = running.handle.summary().clone();
    // Skills are `/NAME` too: the session runs the one named (a skill wins a name over a
    // custom command, as in Claude Code).
    let mut custom = skill_commands(&summary.cwd, &launch.home, launch.user_home.as_deref());
    let commands = custom_commands::load(&custom_commands::command_dirs(
        &summary.cwd,
        &launch.home,
        launch.user_home.as_deref(),
    ));
    for command in commands {
        if !custom.iter().any(|c| c.name == command.name) {
            custom.push(command);
        }
    }
    let history_path = history::history_path(&launch.home);
    // Shift+Tab reaches bypassPermissions only in a session started in it
    // (--dangerously-skip-permissions, --permission-mode, a settings defaultMode), as in
    // Claude Code: three presses must not turn every check off. Never when settings disable it.
    let bypass_available = summary.permission_mode == PermissionMode::BypassPermissions
        && !bypass_disabled(launch, &summary);
    let mut app = App::new(AppConfig {
        model: summary.model.clone(),
        permission_mode: ui_mode(summary.permission_mode),
        bypass_available,
        custom_commands: custom_specs(&custom),
        history: history::load(&history_path, &summary.cwd),
    });
    // Claude Code's welcome line: where this is and where the help is.
    app.handle(UiEvent::Notice {
        level: tine_tui::NoticeLevel::Info,
        text: format!(
            "Welcome to tine · /help for commands and keys · cwd: {}",
            summary.cwd.display()
        ),
    });
    // The session's settings: the away card's idle gap, speculation while typing.
    app.set_away_after(summary.away_after);
    app.set_speculation(summary.speculation);
    let (ui_tx, ui_events) = mpsc::unbounded_channel();
    let mut driver = Driver {
        session: Some(running),
        cwd: summary.cwd.clone(),
        factory: launch.factory(),
        ui: ui_tx,
        custom,
        history: Some(history_path),
        user_home: launch.user_home.clone(),
        model: None,
        adapter: Adapter::new(summary.cwd.clone()),
        idle_flush: driver::IDLE_FLUSH,
        idle_at: None,
        agents: driver::AgentTurns::default(),
    };
    if summary.resumed {
        driver.replay().await;
    }
    Ok(Started {
        driver,
        app,
        ui_events,
    })
}

/// The skills as the UI's commands (completion, dispatch); the session runs them.
fn skill_commands(
    cwd: &std::path::Path,
    home: &std::path::Path,
    user_home: Option<&std::path::Path>,
) -> Vec<custom_commands::CustomCommand> {
    use tine_session::skills;
    let (found, _warnings) = skills::load(&skills::skill_dirs(cwd, home, user_home));
    found
        .into_iter()
        .map(|skill| custom_commands::CustomCommand {
            name: skill.name,
            description: format!("(skill) {}", skill.description),
            body: String::new(),
            path: skill.path,
            allowed_tools: Vec::new(),
            model: None,
        })
        .collect()
}

/// Whether settings refuse bypassPermissions (then Shift+Tab never reaches it).
fn bypass_disabled(launch: &Launch, summary: &tine_session::SessionSummary) -> bool {
    let paths = tine_session::settings_paths(
        &summary.cwd,
        &launch.home,
        launch.user_home.as_deref(),
        launch
            .settings_flag
            .as_deref()
            .map(tine_config::settings::FlagSettings::from_arg),
    );
    tine_config::settings::load(&paths)
        .bypass_disabled_by()
        .is_some()
}

/// How the UI ended.
pub struct UiEnded {
    pub summary: Option<tine_session::SessionSummary>,
    pub code: u8,
}

/// The UI on the real terminal, with the driver beside it, until the person exits or a signal
/// comes; then the session is shut down.
async fn ui(started: Started) -> Result<UiEnded> {
    let Started {
        driver,
        mut app,
        ui_events,
    } = started;
    let (commands_tx, commands_rx) = mpsc::unbounded_channel::<UiCommand>();
    let stop = CancellationToken::new();
    let driver_task = tokio::spawn(driver.run(commands_rx, stop.clone()));
    let signal = termination();
    let mut code = 0u8;
    tokio::select! {
        result = tine_tui::run(&mut app, ui_events, commands_tx.clone(), TerminalOptions::default()) => {
            // The terminal is restored when `run` returns.
            if let Err(error) = result {
                tracing::error!(%error, "the terminal UI failed");
                stop.cancel();
                drop(commands_tx);
                let _ = driver_task.await;
                return Err(anyhow!(error));
            }
        }
        signal = signal => {
            // Dropping the UI's future dropped its terminal guard: the terminal is restored.
            code = 128 + signal;
            stop.cancel();
        }
    }
    drop(commands_tx);
    if code == 0 {
        eprintln!("Saving the session…");
    }
    let ended = driver_task
        .await
        .map_err(|e| anyhow!("the session task failed: {e}"))?;
    Ok(UiEnded {
        summary: ended.summary,
        code,
    })
}

/// Resolves on SIGTERM or SIGHUP with the signal's number (Ctrl-C is the UI's key in raw mode).
async fn termination() -> u8 {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut hup)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::hangup()),
    ) else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = term.recv() => 15,
        _ = hup.recv() => 1,
    }
}
