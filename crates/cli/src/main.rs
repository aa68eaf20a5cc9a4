//! `tine`: the terminal coding agent: the interactive UI (bare `tine` on a terminal) or headless
//! (`tine -p PROMPT`), both front ends of one `tine-session`.
//!
//! Modules, in reading order:
//! - [`args`]: the command line (clap), Claude-Code-compatible flags.
//! - [`profile`]: `TINE_PROFILE_STARTUP=1`, the time of each start-up phase on stderr.
//! - [`setup`]: the command line and environment → `tine-session`'s `SessionOptions`;
//!   [`flags`]: the flags that shape a session (system prompt, `--add-dir`, `--session-id`,
//!   bypass as root, `-p`'s `--json-schema`, `--fallback-model`, ...).
//! - [`provider`]: anthropic or openai: the client (built here, handed to the session), the
//!   model names and where each came from.
//! - [`output`]: text, json and stream-json printing; [`text`]: each reply printed once.
//! - [`run`]: headless `-p` as a front end of the session: submissions, events, exit codes.
//! - [`interactive`]: bare `tine` on a terminal: the TUI (tine-tui) wired to the session
//!   (tine-session): the adapter, the driver, replay on `-c`/`-r`, history, `/resume`.
//! - [`signals`]: SIGINT, SIGTERM and SIGHUP cancel the turn (exit 130, 143, 129).
//! - [`logging`]: the file log under `$TINE_HOME/logs/` (`--verbose` or `TINE_LOG`).
//! - [`memory_cmd`]: `tine memory path|list|show NAME|dream`.
//! - [`compact_cmd`]: `tine compact log [SESSION]` (`/compact` is a command of the session).
//! - [`mcp_cmd`]: `tine mcp list|get|add|remove|trust`.
//! - [`skills_cmd`]: `tine skills list` (`/skills` is a command of the session).
//! - [`doctor`]: `tine doctor`, what this installation would run with.
//! - [`sandbox_settings`], [`sandbox_exec`]: the optional Bash sandbox (Landlock): its settings,
//!   the start-up probe, and the hidden launcher `tine __sandbox ... -- COMMAND`.

mod args;
mod compact_cmd;
mod doctor;
mod flags;
mod interactive;
mod logging;
mod mcp_cmd;
mod memory_cmd;
mod output;
mod profile;
mod run;
mod sandbox_exec;
mod setup;
mod signals;
mod skills_cmd;
mod text;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    // The sandbox launcher first: it runs before every sandboxed Bash command.
    if std::env::args_os().nth(1).as_deref()
        == Some(std::ffi::OsStr::new(
            tine_tools::sandbox::SANDBOX_SUBCOMMAND,
        ))
    {
        let rest: Vec<std::ffi::OsString> = std::env::args_os().skip(2).collect();
        return sandbox_exec::launcher_main(&rest);
    }
    let mut profile = profile::StartupProfile::from_env();
    if std::env::args_os().nth(1).as_deref() == Some(std::ffi::OsStr::new("doctor")) {
        let rest: Vec<String> = std::env::args_os()
            .skip(2)
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        return doctor::run(&rest);
    }
    if std::env::args_os().nth(1).as_deref() == Some(std::ffi::OsStr::new("compact")) {
        let rest: Vec<String> = std::env::args_os()
            .skip(2)
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        return compact_cmd::run(&rest);
    }
    if std::env::args_os().nth(1).as_deref() == Some(std::ffi::OsStr::new("memory")) {
        let rest: Vec<String> = std::env::args_os()
            .skip(2)
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        return memory_cmd::run(&rest);
    }
    if std::env::args_os().nth(1).as_deref() == Some(std::ffi::OsStr::new("skills")) {
        let rest: Vec<String> = std::env::args_os()
            .skip(2)
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        return skills_cmd::run(&rest);
    }
    if std::env::args_os().nth(1).as_deref() == Some(std::ffi::OsStr::new("mcp")) {
        let rest: Vec<String> = std::env::args_os()
            .skip(2)
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        return mcp_cmd::run(&rest);
    }
    let args = args::Args::parse();
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
    let code = runtime.block_on(async move {
        let result = if interactive::wanted(&args) {
            interactive::run(args).await
        } else {
            run::run(args, profile).await
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
    code
}
