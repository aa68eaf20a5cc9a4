//! A terminal of the editor a front end speaks for (ACP's `terminal/*` methods). With
//! [`EditorTerm`] on the context, Bash runs a foreground command in the editor's terminal, so
//! the person watches it there; the output, the exit code and the directory it ended in come
//! back as from a local shell. A sandboxed session never does (the editor's terminal is not
//! in tine's sandbox), nor does a background command, a fork or a sub-agent (the extension is
//! the main thread's).

use std::fmt;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::editor_files::EditorFuture;
use crate::extensions::ContextExtension;

/// How a command run in the editor's terminal ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TerminalRun {
    /// What it printed (standard output and error together), as the editor kept it.
    pub output: String,
    /// The editor cut the output short.
    pub truncated: bool,
    /// How it ended.
    pub ending: TerminalEnding,
}

/// The end of a command in the editor's terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TerminalEnding {
    /// It exited, with this code (`None`: a signal ended it).
    Exited(Option<i32>),
    /// The time ran out: it was killed.
    TimedOut,
    /// The turn was cancelled: it was killed.
    Cancelled,
}

/// A terminal of the editor (ACP's `terminal/create`, `wait_for_exit`, `output`, `kill`,
/// `release`).
pub trait EditorTerminal: Send + Sync + 'static {
    /// Runs `script` with `bash -c` in `cwd` in a new terminal of the editor until it exits,
    /// `timeout` passes or `cancel` fires (then it is killed), and releases the terminal.
    /// `command` is the model's command line, which the script runs (the editor may show it).
    fn run<'a>(
        &'a self,
        command: &'a str,
        script: &'a str,
        cwd: &'a Path,
        timeout: Duration,
        cancel: &'a CancellationToken,
    ) -> EditorFuture<'a, TerminalRun>;
}

/// The editor terminal Bash finds on its context (`ctx.with_ext(EditorTerm(Arc::new(t)))`).
/// Forks and sub-agents do not inherit it: their commands run locally.
#[derive(Clone)]
pub struct EditorTerm(pub Arc<dyn EditorTerminal>);

impl ContextExtension for EditorTerm {
    fn fork(&self) -> Option<Self> {
        None
    }
}

impl fmt::Debug for EditorTerm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("EditorTerm")
    }
}
