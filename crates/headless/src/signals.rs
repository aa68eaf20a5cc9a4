//! The signals that end a run: SIGINT (Ctrl-C), SIGTERM (CI runners, `timeout`, `docker stop`)
//! and SIGHUP (the terminal closed) all cancel the turn the same way: running tools are killed,
//! the transcript stays whole, and tine exits with 128 + the signal's number (130, 143, 129).
//! A second signal exits at once, after killing every tool process.

use std::sync::Arc;
use std::sync::atomic::{AtomicI32, Ordering};

use tine_session::{Op, SessionHandle};
use tokio::signal::unix::{Signal, SignalKind, signal};

/// The POSIX numbers of the signals handled here (the same on every Unix tine runs on).
const SIGHUP: i32 = 1;
const SIGINT: i32 = 2;
const SIGTERM: i32 = 15;

/// Which signal ended the run, if one did. Cloning shares it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Interrupt {
    signal: Arc<AtomicI32>,
}

impl Interrupt {
    /// Whether a signal has asked the run to end.
    pub(crate) fn is_set(&self) -> bool {
        self.signal.load(Ordering::SeqCst) != 0
    }

    /// The exit code for the signal received (128 + its number), as shells report it.
    pub(crate) fn exit_code(&self) -> Option<u8> {
        exit_code_for(self.signal.load(Ordering::SeqCst))
    }

    /// Records `signo`; true when it is the first signal of the run.
    fn record(&self, signo: i32) -> bool {
        self.signal
            .compare_exchange(0, signo, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
    }
}

fn exit_code_for(signo: i32) -> Option<u8> {
    (signo != 0)
        .then(|| u8::try_from(128 + signo).ok())
        .flatten()
}

/// Installs the handlers: the first signal aborts `session` (`Op::Abort`); a second one kills
/// the tool processes and exits with the first signal's code.
pub(crate) fn watch(session: SessionHandle) -> std::io::Result<Interrupt> {
    let interrupt = Interrupt::default();
    let mut handlers = [
        (SIGINT, listen(SignalKind::interrupt(), "SIGINT")?),
        (SIGTERM, listen(SignalKind::terminate(), "SIGTERM")?),
        (SIGHUP, listen(SignalKind::hangup(), "SIGHUP")?),
    ];
    let shared = interrupt.clone();
    tokio::spawn(async move {
        loop {
            let received = next_signal(&mut handlers).await;
            if shared.record(received) {
                tracing::info!(signal = received, "signal received; cancelling the turn");
                let _ = session.submit(Op::Abort);
                continue;
            }
            tine_tools::kill_tool_processes();
            let code = shared.exit_code().unwrap_or(1);
            std::process::exit(i32::from(code));
        }
    });
    Ok(interrupt)
}

fn listen(kind: SignalKind, name: &str) -> std::io::Result<Signal> {
    signal(kind)
        .map_err(|e| std::io::Error::other(format!("cannot install the {name} handler: {e}")))
}

/// The number of the next signal to arrive on any of `handlers`.
async fn next_signal(handlers: &mut [(i32, Signal); 3]) -> i32 {
    let [(int_no, int), (term_no, term), (hup_no, hup)] = handlers;
    tokio::select! {
        Some(()) = int.recv() => *int_no,
        Some(()) = term.recv() => *term_no,
        Some(()) = hup.recv() => *hup_no,
        // The signal driver is gone (the runtime is shutting down): nothing more will come.
        else => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_are_128_plus_the_signal() {
        assert_eq!(exit_code_for(SIGINT), Some(130));
        assert_eq!(exit_code_for(SIGTERM), Some(143));
        assert_eq!(exit_code_for(SIGHUP), Some(129));
        assert_eq!(exit_code_for(0), None);
    }

    #[test]
    fn only_the_first_signal_is_recorded() {
        let interrupt = Interrupt::default();
        assert!(!interrupt.is_set());
        assert!(interrupt.record(SIGTERM));
        assert!(!interrupt.record(SIGINT));
        assert_eq!(interrupt.exit_code(), Some(143));
    }
}
