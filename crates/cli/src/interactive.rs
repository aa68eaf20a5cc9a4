//! Interactive `tine`: the terminal UI (tine-tui) on the session (tine-session). Bare `tine` on
//! a terminal opens it in the current directory; `tine -c` / `tine -r ID` open it with the
//! conversation shown again. The UI speaks the session's protocol itself (ops out, events in);
//! this front end only starts both: the session's options from the command line with asks
//! answered by the person, the UI on the terminal, and after it the line saying how to resume.
//!
//! Logs go to `$TINE_HOME/logs/tine.log` (info, or `TINE_LOG`), never the screen. Exiting
//! (`/exit`, Ctrl-D on an empty prompt, Ctrl-C twice) restores the terminal, then shuts the
//! session down (background work such as memory extraction is flushed, the transcript
//! complete) and prints how to resume. SIGTERM and SIGHUP restore the terminal and end at once.

use std::io::IsTerminal;
use std::process::ExitCode;

use anyhow::{Result, anyhow};
use tine_session::{Approvals, Op, Session, SessionEndReason};
use tine_tui::{App, AppConfig, TerminalOptions};

use crate::args::Args;

/// Whether `args` ask for the UI: no `-p`, no prompt, standard input and output terminals.
pub(crate) fn wanted(args: &Args) -> bool {
    !args.print
        && args.prompt.is_none()
        && std::io::stdin().is_terminal()
        && std::io::stdout().is_terminal()
}

/// Bare `tine`: the UI until the person exits or a signal comes; then the session's end.
pub(crate) async fn run(args: Args) -> Result<ExitCode> {
    let options = crate::setup::session_options(&args, Approvals::Interactive)?;
    if !trusted(&options).await? {
        eprintln!("tine: this folder is not trusted: nothing from it was run");
        return Ok(ExitCode::FAILURE);
    }
    let (session, events) = Session::start(options).await.map_err(|e| anyhow!(e))?;
    let mut app = App::new(AppConfig {
        history_file: true,
        welcome: true,
        // A tmux pane: `/export`'s copy (OSC 52) needs tmux's `set-clipboard on`.
        tmux: std::env::var_os("TMUX").is_some(),
        ..AppConfig::default()
    });
    let mut ui = session.clone();
    let mut code = 0u8;
    tokio::select! {
        result = tine_tui::run(&mut app, events, &mut ui, TerminalOptions::default()) => {
            // The terminal is restored when `run` returns.
            if let Err(error) = result {
                tracing::error!(%error, "the terminal UI failed");
                let _ = session.submit(Op::Abort);
                session.shutdown().await;
                return Err(anyhow!(error));
            }
        }
        signal = termination() => {
            // Dropping the UI's future dropped its terminal guard: the terminal is restored.
            code = 128 + signal;
            let _ = session.submit(Op::Abort);
        }
    }
    let reason = if code == 0 {
        eprintln!("Saving the session…");
        SessionEndReason::PromptInputExit
    } else {
        SessionEndReason::Other
    };
    session.shutdown_because(reason).await;
    if let Some(info) = app.session()
        && info.transcript_path.exists()
    {
        println!(
            "Resume this session with:\n  tine -r {}\n(or `tine -c` for the latest one here)",
            info.session_id
        );
    }
    Ok(ExitCode::from(code))
}

/// Whether the session's folder is trusted: a folder (or a parent) trusted before, or the
/// person says so now, before anything of the folder runs ("Yes" is remembered in
/// `TINE_HOME/trust.json`).
async fn trusted(options: &tine_session::SessionOptions) -> Result<bool> {
    let home = options
        .home
        .clone()
        .ok_or_else(|| anyhow!("no TINE_HOME for the trust question"))?;
    let cwd = options.cwd.clone();
    if tine_config::trust::is_trusted(&home, &cwd) {
        return Ok(true);
    }
    let summary = tine_session::workspace_summary(&cwd, &home);
    let asked_in = cwd.clone();
    let yes = tokio::task::spawn_blocking(move || tine_tui::ask_trust(&asked_in, &summary))
        .await
        .map_err(|e| anyhow!(e))?
        .map_err(|e| anyhow!("the trust question could not be asked: {e}"))?;
    if yes {
        tine_config::trust::trust(&home, &cwd)
            .map_err(|e| anyhow!("cannot remember the trust of {}: {e}", cwd.display()))?;
    }
    Ok(yes)
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
