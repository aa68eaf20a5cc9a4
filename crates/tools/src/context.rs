//! What a tool call runs in: the session's working directory (shared, because Bash's `cd`
//! persists between calls), the file-state cache, a cancellation token, a progress sink, the
//! Bash sandbox, and tool-specific state by type (`extensions`: the todo list, background
//! shells, the WebFetch summarizer the layers above inject), which this module does not know.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tine_permissions::normalize;
use tokio_util::sync::CancellationToken;

use crate::activity::SubagentProgress;
use crate::extensions::{ContextExtension, Extensions};
use crate::file_state::FileStateCache;
use crate::sandbox::BashSandbox;

/// One progress report of a running tool ("3.2 s, 142 lines"; a sub-agent's latest calls).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolProgress {
    /// The tool reporting (its name).
    pub tool: String,
    /// Time since the call started.
    pub elapsed: Duration,
    /// Lines of output so far.
    pub lines: u64,
    /// Bytes of output so far.
    pub bytes: u64,
    /// What the sub-agent the tool runs (Agent) did last; shared, since the event carrying it
    /// is cloned on its way to every front end.
    pub subagent: Option<Arc<SubagentProgress>>,
}

impl fmt::Display for ToolProgress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(agent) = &self.subagent {
            let uses = agent.activity.totals.tool_uses;
            let unit = if uses == 1 { "tool use" } else { "tool uses" };
            return write!(f, "{:.1} s, {uses} {unit}", self.elapsed.as_secs_f64());
        }
        let lines = if self.lines == 1 { "line" } else { "lines" };
        write!(
            f,
            "{:.1} s, {} {lines}",
            self.elapsed.as_secs_f64(),
            self.lines
        )
    }
}

/// Where running tools send progress. The UI implements it; tests collect into a vector.
pub trait ProgressSink: Send + Sync {
    /// Takes one progress report (called from the tool's task; must not block).
    fn report(&self, progress: ToolProgress);
}

/// A sink that drops every report (headless runs, forks).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoProgress;

impl ProgressSink for NoProgress {
    fn report(&self, _progress: ToolProgress) {}
}

/// A sink that forwards reports into a tokio channel.
#[derive(Debug, Clone)]
pub struct ChannelProgress(pub tokio::sync::mpsc::UnboundedSender<ToolProgress>);

impl ProgressSink for ChannelProgress {
    fn report(&self, progress: ToolProgress) {
        // A closed receiver means nobody is watching; progress is advisory.
        let _ = self.0.send(progress);
    }
}

/// Everything a tool call may use besides its input. Cloning shares the session state (cwd,
/// caches, registry); [`ToolContext::fork`] makes the isolated copy a fork needs.
#[derive(Clone)]
pub struct ToolContext {
    cwd: Arc<Mutex<PathBuf>>,
    file_state: Arc<FileStateCache>,
    cancel: CancellationToken,
    progress: Arc<dyn ProgressSink>,
    /// Tool-specific state by type; see [`ToolContext::ext`].
    extensions: Extensions,
    /// The OS sandbox Bash starts its shell through, when the session enabled one.
    sandbox: Option<Arc<BashSandbox>>,
}

impl fmt::Debug for ToolContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolContext")
            .field("cwd", &self.cwd())
            .field("files_remembered", &self.file_state.len())
            .field("cancelled", &self.cancel.is_cancelled())
            .field("extensions", &self.extensions)
            .field("sandbox", &self.sandbox.is_some())
            .finish_non_exhaustive()
    }
}

impl ToolContext {
    /// A fresh session context rooted at `cwd` (made absolute against the process's cwd).
    pub fn new(cwd: impl Into<PathBuf>) -> Self {
        let cwd = cwd.into();
        let cwd = if cwd.is_absolute() {
            cwd
        } else {
            std::env::current_dir().unwrap_or_default().join(cwd)
        };
        Self {
            cwd: Arc::new(Mutex::new(normalize(&cwd))),
            file_state: Arc::new(FileStateCache::new()),
            cancel: CancellationToken::new(),
            progress: Arc::new(NoProgress),
            extensions: Extensions::default(),
            sandbox: None,
        }
    }

    /// Uses `file_state` instead of the fresh cache.
    pub fn with_file_state(mut self, file_state: Arc<FileStateCache>) -> Self {
        self.file_state = file_state;
        self
    }

    /// Uses `cancel` as this context's cancellation token.
    pub fn with_cancellation(mut self, cancel: CancellationToken) -> Self {
        self.cancel = cancel;
        self
    }

    /// Sends progress to `sink` (the loop may give each call its own sink).
    pub fn with_progress(mut self, sink: Arc<dyn ProgressSink>) -> Self {
        self.progress = sink;
        self
    }

    /// Stores `value` as this context's `T` (shared by its clones), e.g. the WebFetch
    /// summarizer: `ctx.with_ext(WebFetchSummarizer(..))`.
    pub fn with_ext<T: ContextExtension>(self, value: T) -> Self {
        self.extensions.insert(value);
        self
    }

    /// This context with `value` as its `T` for one call only: the loop gives each tool call
    /// the turn in progress this way. Other clones and forks do not see it; the shared state
    /// stays shared.
    pub fn with_call_ext<T: ContextExtension>(mut self, value: T) -> Self {
        self.extensions = self.extensions.with_call_value(value);
        self
    }

    /// Runs Bash commands under `sandbox` (forks inherit it).
    pub fn with_sandbox(mut self, sandbox: BashSandbox) -> Self {
        self.sandbox = Some(Arc::new(sandbox));
        self
    }

    /// The isolated context of a fork (design.md "One fork"): its own copy of the cwd and of
    /// the file-state cache, a child cancellation token (cancelling the parent cancels the fork,
    /// not the reverse), no progress sink, and of the extensions what each one's
    /// [`ContextExtension::fork`] gives (its own todo list and background shells, the same
    /// WebFetch summarizer).
    pub fn fork(&self) -> Self {
        Self {
            cwd: Arc::new(Mutex::new(self.cwd())),
            file_state: Arc::new(self.file_state.as_ref().clone()),
            cancel: self.cancel.child_token(),
            progress: Arc::new(NoProgress),
            extensions: self.extensions.fork(),
            sandbox: self.sandbox.clone(),
        }
    }

    /// The current working directory (absolute).
    pub fn cwd(&self) -> PathBuf {
        self.cwd
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Moves the working directory (Bash does this after a `cd`).
    pub fn set_cwd(&self, cwd: impl Into<PathBuf>) {
        let cwd = normalize(&cwd.into());
        *self.cwd.lock().unwrap_or_else(PoisonError::into_inner) = cwd;
    }

    /// `path` made absolute against the cwd, with `.` and `..` resolved lexically.
    pub fn resolve_path(&self, path: impl AsRef<Path>) -> PathBuf {
        let path = path.as_ref();
        if path.is_absolute() {
            normalize(path)
        } else {
            normalize(&self.cwd().join(path))
        }
    }

    /// The session's file-state cache.
    pub fn file_state(&self) -> &Arc<FileStateCache> {
        &self.file_state
    }

    /// The token whose cancellation stops running tools.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.cancel
    }

    /// Sends one progress report.
    pub fn report_progress(&self, progress: ToolProgress) {
        self.progress.report(progress);
    }

    /// The Bash sandbox, when the session enabled one.
    pub fn sandbox(&self) -> Option<&BashSandbox> {
        self.sandbox.as_deref()
    }

    /// This context's `T`, if one was stored ([`Self::with_ext`], [`Self::insert_ext`]).
    pub fn ext<T: ContextExtension>(&self) -> Option<Arc<T>> {
        self.extensions.get()
    }

    /// This context's `T`, made with `T::default()` the first time a tool asks (the todo list,
    /// the background shells); clones of the context share it.
    pub fn ext_or_default<T: ContextExtension + Default>(&self) -> Arc<T> {
        self.extensions.get_or_insert_with(T::default)
    }

    /// Stores `value` as this context's `T`, for it and every clone.
    pub fn insert_ext<T: ContextExtension>(&self, value: T) {
        self.extensions.insert(value);
    }
}
