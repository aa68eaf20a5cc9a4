//! `tine`: the terminal coding agent: the interactive UI (bare `tine` on a terminal) or headless
//! (`tine -p PROMPT`), both front ends of one `tine-session`.
//!
//! Modules, in reading order:
//! - [`args`]: the command line (clap), Claude-Code-compatible flags.
//! - [`profile`]: `TINE_PROFILE_STARTUP=1`, each phase's time and resident set on stderr, and
//!   where the resident pages are at the exit.
//! - [`setup`]: the command line and environment → `tine-session`'s `SessionOptions`, the
//!   same for both front ends; [`flags`]: the flags that shape a session (system prompt,
//!   `--add-dir`, `--session-id`, bypass as root, `-p`'s `--json-schema`, `--fallback-model`, ...).
//! - headless `-p` is tine-headless (stream-json and the Agent SDK's control protocol too).
//! - [`interactive`]: bare `tine` on a terminal: the TUI (tine-tui) on the session.
//! - [`logging`]: the file log under `$TINE_HOME/logs/` (`--verbose` or `TINE_LOG`).
//! - [`memory_cmd`]: `tine memory path|list|show NAME|dream`.
//! - [`compact_cmd`]: `tine compact log [SESSION]` (`/compact` is a command of the session).
//! - [`mcp_cmd`]: `tine mcp list|get|add|remove|trust`.
//! - [`plugin_cmd`]: `tine plugin marketplace add|list|remove`, `install`, `list`,
//!   `enable|disable|uninstall` (carried out by tine-session's `PluginCommands`, as `/plugin`).
//! - [`skills_cmd`]: `tine skills list` (`/skills` is a command of the session).
//! - [`doctor`]: `tine doctor`, what this installation would run with.
//! - [`sandbox_exec`]: the hidden launcher of the Bash sandbox, `tine __sandbox ... -- COMMAND`
//!   (the session decides the sandbox; Landlock itself is tine-tools').

mod args;
mod compact_cmd;
mod doctor;
mod flags;
mod interactive;
mod logging;
mod mcp_cmd;
mod memory_cmd;
mod plugin_cmd;
mod profile;
mod rewind_cmd;
mod sandbox_exec;
mod setup;
mod skills_cmd;

use std::process::ExitCode;

use clap::Parser;

use crate::args::Command;

fn main() -> ExitCode {
    let mut profile = profile::StartupProfile::from_env();
    let args = args::Args::parse();
    if args.version {
        println!("{}", args::version_line());
        return ExitCode::SUCCESS;
    }
    match &args.command {
        // The sandbox launcher runs before every sandboxed Bash command.
        Some(Command::Sandbox { args }) => return sandbox_exec::launcher_main(args),
        Some(Command::Watchdog { args }) => return tine_tools::watchdog_main(args),
        Some(Command::Doctor(options)) => return doctor::run(options),
        Some(Command::Compact { command }) => return outcome("compact", compact_cmd::run(command)),
        Some(Command::Memory { command }) => return outcome("memory", memory_cmd::run(command)),
        Some(Command::Skills { .. }) => return outcome("skills", skills_cmd::run()),
        Some(Command::Mcp { args }) => return outcome("mcp", mcp_cmd::run(args)),
        Some(Command::Plugin { args }) => return outcome("plugin", plugin_cmd::run(args)),
        Some(Command::Rewind(options)) => return outcome("rewind", rewind_cmd::run(options)),
        Some(Command::Acp) | None => {}
    }
    // Reap what a killed tine left, and record this session's tool processes so nothing of it
    // outlives even a `kill -9` (`tine_tools::install_process_records`).
    if let (Ok(home), Ok(exe)) = (tine_config::tine_home_from_env(), std::env::current_exe()) {
        tine_tools::install_process_records(&home, exe);
    }
    profile.mark("args");
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("tine: cannot start the async runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    profile.mark("runtime");
    let code = runtime.block_on(async {
        let result = if matches!(args.command, Some(Command::Acp)) {
            acp(args).await
        } else if interactive::wanted(&args) {
            interactive::run(args).await
        } else {
            headless(args, &mut profile).await
        };
        match result {
            Ok(code) => code,
            Err(error) => {
                eprintln!("tine: {error:#}");
                ExitCode::FAILURE
            }
        }
    });
    // No tool process outlives tine: background shells, and anything a command left running.
    tine_tools::kill_tool_processes();
    // Do not wait for detached work (a tool's orphaned reader, a hook) at exit.
    runtime.shutdown_background();
    profile.finish();
    code
}

/// `tine -p`: tine-headless on the session the flags ask for, asks answered by the rules.
async fn headless(
    args: args::Args,
    profile: &mut profile::StartupProfile,
) -> anyhow::Result<ExitCode> {
    use std::io::IsTerminal;
    if !args.print && args.prompt.is_none() && std::io::stdin().is_terminal() {
        anyhow::bail!(
            "the interactive terminal UI needs a terminal on standard input and output: run \
             `tine -p \"your prompt\"` (or pipe the prompt on standard input)"
        );
    }
    // `--permission-prompt-tool stdio`: the app on the other end of the control protocol
    // answers (the Agent SDK's `can_use_tool`), not an MCP tool.
    let stdio = args.permission_prompt_tool.as_deref() == Some("stdio");
    let mut args = args;
    if stdio {
        args.permission_prompt_tool = None;
    }
    let options = setup::session_options(&args, tine_session::Approvals::Headless)?;
    untrusted_notice(&options);
    profile.mark("options");
    let mut config = tine_headless::Headless::new(args.input_format, args.output_format)
        .with_verbose(args.verbose)
        .with_permission_prompt_stdio(stdio)
        .with_replay_user_messages(args.replay_user_messages);
    if let Some(prompt) = &args.prompt {
        config = config.with_prompt(prompt.clone());
    }
    Ok(tine_headless::run(options, config, &mut |phase| profile.mark(phase)).await?)
}

/// Headless trusts the folder for the run (the caller chose to run tine there), but a folder
/// not trusted interactively gets one stderr line naming the hooks and allow rules of its own
/// settings that are in force, so a CI log shows them.
fn untrusted_notice(options: &tine_session::SessionOptions) {
    use tine_config::SettingsSource;
    let Some(home) = &options.home else { return };
    let reads_project = options.setting_sources.as_ref().is_none_or(|sources| {
        sources.contains(&SettingsSource::Project) || sources.contains(&SettingsSource::Local)
    });
    if !reads_project || tine_config::trust::is_trusted(home, &options.cwd) {
        return;
    }
    let line = tine_session::workspace_summary(&options.cwd, home).line();
    if !line.is_empty() {
        eprintln!(
            "tine: this folder is not trusted; -p runs it with its own settings in force: {line}              (run `tine` here once to trust it, or pass --setting-sources user to leave them out)"
        );
    }
}

/// `tine acp`: tine-acp on standard input and output, every session of the flags' shape, asks
/// answered by the editor.
async fn acp(args: args::Args) -> anyhow::Result<ExitCode> {
    let template = setup::session_options(&args, tine_session::Approvals::App)?;
    let config = tine_acp::AcpConfig {
        template,
        bypass_allowed: flags::bypass_allowed(),
    };
    tine_acp::serve(config).await?;
    Ok(ExitCode::SUCCESS)
}

/// A command's text on stdout, or its error on stderr (and a failing exit).
fn outcome(command: &str, result: anyhow::Result<String>) -> ExitCode {
    match result {
        Ok(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("tine {command}: {error:#}");
            ExitCode::FAILURE
        }
    }
}
