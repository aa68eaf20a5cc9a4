//! What a tool call runs in: the session's working directory (shared, because Bash's `cd`
//! persists between calls), the file-state cache, a cancellation token, a progress sink, the
//! registry of background shells, the todo list, and hooks the layers above inject (the
//! WebFetch summarizer, since that model call belongs to them).

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures::future::BoxFuture;
use tine_permissions::normalize;
use tokio_util::sync::CancellationToken;

use crate::builtin::background::BackgroundTasks;
use crate::builtin::todo::TodoList;
use crate::file_state::FileStateCache;
use crate::sandbox::BashSandbox;

/// One progress report of a running tool ("3.2 s, 142 lines").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolProgress {
    /// The tool reporting (its name).
    pub tool: String,
    /// Time since the call started.
    pub elapsed: Duration,
    /// Lines of output so far.
    pub lines: u64,
    /// Bytes of output so far.
    pub bytes: u64,
}

impl fmt::Display for ToolProgress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
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

/// The error a [`WebSummarizer`] returns (its own layer's error, boxed).
pub type SummarizerError = Box<dyn std::error::Error + Send + Sync>;

/// The fetched page WebFetch hands to the summarizer.
#[derive(Debug, Clone, Copy)]
pub struct WebSummaryRequest<'a> {
    pub url: &'a str,
    /// The model's question about the page.
    pub prompt: &'a str,
    /// The page as text (already converted from HTML and size-capped).
    pub content: &'a str,
}

/// Answers WebFetch's `prompt` about a page with a small, fast model. Implemented by the layer
/// that owns model calls; without one, WebFetch returns the page text itself.
pub trait WebSummarizer: Send + Sync {
    fn summarize<'a>(
        &'a self,
        request: WebSummaryRequest<'a>,
    ) -> BoxFuture<'a, Result<String, SummarizerError>>;
}

/// Everything a tool call may use besides its input. Cloning shares the session state (cwd,
/// caches, registry); [`ToolContext::fork`] makes the isolated copy a fork needs.
#[derive(Clone)]
pub struct ToolContext {
    cwd: Arc<Mutex<PathBuf>>,
    file_state: Arc<FileStateCache>,
    cancel: CancellationToken,
    progress: Arc<dyn ProgressSink>,
    background: BackgroundTasks,
    todos: TodoList,
    web_summarizer: Option<Arc<dyn WebSummarizer>>,
    /// The OS sandbox Bash starts its shell through, when the session enabled one.
    sandbox: Option<Arc<BashSandbox>>,
}

impl fmt::Debug for ToolContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolContext")
            .field("cwd", &self.cwd())
            .field("files_remembered", &self.file_state.len())
            .field("cancelled", &self.cancel.is_cancelled())
            .field("web_summarizer", &self.web_summarizer.is_some())
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
            background: BackgroundTasks::default(),
            todos: TodoList::default(),
            web_summarizer: None,
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

    /// Installs the WebFetch summarizer.
    pub fn with_web_summarizer(mut self, summarizer: Arc<dyn WebSummarizer>) -> Self {
        self.web_summarizer = Some(summarizer);
        self
    }

    /// Runs Bash commands under `sandbox` (forks inherit it).
    pub fn with_sandbox(mut self, sandbox: BashSandbox) -> Self {
        self.sandbox = Some(Arc::new(sandbox));
        self
    }

    /// Uses `background` as the registry of background shells.
    pub fn with_background_tasks(mut self, background: BackgroundTasks) -> Self {
        self.background = background;
        self
    }

    /// The isolated context of a fork (design.md "One fork"): its own copy of the cwd and of
    /// the file-state cache, a child cancellation token (cancelling the parent cancels the fork,
    /// not the reverse), its own todo list and background registry, no progress sink.
    pub fn fork(&self) -> Self {
        Self {
            cwd: Arc::new(Mutex::new(self.cwd())),
            file_state: Arc::new(self.file_state.as_ref().clone()),
            cancel: self.cancel.child_token(),
            progress: Arc::new(NoProgress),
            background: BackgroundTasks::default(),
            todos: TodoList::default(),
            web_summarizer: self.web_summarizer.clone(),
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

    /// The registry of background shells.
    pub fn background(&self) -> &BackgroundTasks {
        &self.background
    }

    /// The session's todo list (TodoWrite).
    pub fn todos(&self) -> &TodoList {
        &self.todos
    }

    /// The Bash sandbox, when the session enabled one.
    pub fn sandbox(&self) -> Option<&BashSandbox> {
        self.sandbox.as_deref()
    }

    /// The injected WebFetch summarizer, if any.
    pub fn web_summarizer(&self) -> Option<&Arc<dyn WebSummarizer>> {
        self.web_summarizer.as_ref()
    }
}
