//! Memory extraction (seed 001 §16.2.4 ①, seed 000 §8.1, seed 003 §十): a [`BackgroundJob`] of
//! the stop-hook pipeline that forks an agent on the parent's prompt cache to save what the
//! new messages taught into the memory directory.
//!
//! - A cursor ([`crate::cursor`]: message count plus a hash of the message at it) so each run
//!   sees only new messages. If compaction removed that message, every message counts as new
//!   (never none). The cursor moves only after a successful run, and is kept in the session's
//!   transcript ([`ExtractionJob::record_cursor_in`], [`ExtractionJob::restore`]), so a
//!   resumed session does not extract its whole history again.
//! - Batched ([`crate::batch`]): the fork runs once [`ExtractionOptions::every`] eligible turns
//!   have gathered since the cursor, and on [`BackgroundJob::flush`] (idle, exit) or
//!   [`ExtractionJob::before_compaction`]. Turns with nothing to learn start nothing; they stay
//!   in the next run's window.
//! - If the main agent itself wrote into the memory directory and nothing else since the
//!   cursor is eligible, no fork: the cursor moves and the run is a skip.
//! - One run at a time: a trigger during a run stashes its context (the latest wins) and a
//!   trailing run follows when the current one ends, if it is due by then.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::SystemTime;

use futures::future::BoxFuture;
use serde_json::{Value, json};
use tine_api_client::{ContentBlock, Message, MessageContent, Role, ToolUseBlock, Usage};
use tine_config::settings::LoadedSettings;
use tine_fork_runtime::{
    BackgroundJob, ForkError, ForkParams, ForkResult, JobContext, JobError, JobOutcome,
    run_forked_agent,
};
use tine_permissions::PermissionContext;
use tine_query_loop::utc_date;
use tine_query_loop::{CanUseTool, EndAfterTools, Terminal, TranscriptAnnotator, TranscriptRecord};

use crate::batch::{Batch, assess};
use crate::cursor::{Cursor, MEMORY_CURSOR_KIND};
use crate::error::MemoryError;
use crate::extract_prompt::{ExtractPromptInput, build_extract_prompt};
use crate::fork_changes::{billed_equivalent_input, diff, snapshot};
use crate::memdir::{INDEX_FILE, MemoryDir};
use crate::recall::SessionMemories;
use crate::sandbox::MemorySandbox;
use crate::topic::scan_memories;

/// The job's name in pipeline events.
pub const EXTRACTION_JOB: &str = "extract_memories";
/// The fork's turn cap (seed 000 §8.1: typically 2–4 turns; 5 stops rabbit holes).
pub(crate) const EXTRACTION_MAX_TURNS: u32 = 5;
/// Memories listed in the fork's manifest.
const MANIFEST_LIMIT: usize = 200;
/// The default of [`ExtractionOptions::every`], measured by `cargo xtask bench cost` (the
/// 100-turn chat): see the README's "Memory" section for the figures.
pub const DEFAULT_EXTRACT_EVERY: u32 = 8;
/// The setting that overrides [`DEFAULT_EXTRACT_EVERY`] (a number of eligible turns, >= 1).
pub(crate) const EXTRACT_EVERY_SETTING: &str = "autoMemoryExtractEvery";

/// Why one extraction run failed.
#[derive(Debug, thiserror::Error)]
pub enum ExtractError {
    /// The extraction fork could not run.
    #[error(transparent)]
    Fork(#[from] ForkError),
    /// The fork stopped before it finished.
    #[error("the memory extraction fork did not finish: {0}")]
    Unfinished(String),
    /// Reading or writing the memory directory failed.
    #[error(transparent)]
    Memory(#[from] MemoryError),
    /// The task scanning the memory directory panicked or was cancelled.
    #[error("the memory scan task failed: {0}")]
    Join(String),
}

#[derive(Default)]
struct State {
    cursor: Option<Cursor>,
    running: bool,
    /// A trigger that came during a run.
    pending: Option<Pending>,
    /// The last turn's context, for [`BackgroundJob::flush`].
    latest: Option<JobContext>,
}

/// A stashed trigger. `forced` runs even when no batch is due (a flush or an explicit run);
/// `pinned` is not replaced by later triggers (its messages are about to leave the history).
struct Pending {
    ctx: JobContext,
    forced: bool,
    pinned: bool,
}

struct Inner {
    dir: MemoryDir,
    sandbox: Arc<MemorySandbox>,
    options: ExtractionOptions,
    /// Told about every memory a run saves (so recall does not offer them back).
    learned: Option<SessionMemories>,
    /// Where each completed run's cursor is recorded (the session's transcript).
    cursor_log: Mutex<Option<TranscriptAnnotator>>,
    state: Mutex<State>,
}

/// How the extraction fork runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExtractionOptions {
    /// The fork's turn cap (5 by default).
    pub max_turns: u32,
    /// Put the fork's cache breakpoint on the parent's last message instead of on the fork's
    /// own prompt (default: on). The fork still reads the parent's whole cached prefix, and
    /// the entry it writes ends at the parent's final reply, which is exactly what the main
    /// thread's next request reads: the main thread no longer pays to write that reply, and
    /// the fork's prompt, read by no one after a one-request fork, is not written at 1.25x.
    /// Measured by `benches/memory.rs`; with it off the fork caches its own prompt instead
    /// (Claude Code's choice), which only pays off for forks of three or more requests.
    pub cache_parent_tail: bool,
    /// Fork once this many eligible turns have gathered since the last run (1: after every
    /// turn that has something to learn). Flushes run whatever has gathered.
    pub every: u32,
}

impl Default for ExtractionOptions {
    fn default() -> Self {
        Self {
            max_turns: EXTRACTION_MAX_TURNS,
            cache_parent_tail: true,
            every: DEFAULT_EXTRACT_EVERY,
        }
    }
}

impl ExtractionOptions {
    /// The defaults with the `autoMemoryExtractEvery` setting applied. A value that is not a whole
    /// number >= 1 is ignored with a warning the host should show.
    pub fn from_settings(settings: &LoadedSettings) -> (Self, Option<String>) {
        let mut options = Self::default();
        let Some((value, source)) = settings.get(EXTRACT_EVERY_SETTING) else {
            return (options, None);
        };
        match value.as_u64().and_then(|n| u32::try_from(n).ok()) {
            Some(n) if n >= 1 => {
                options.every = n;
                (options, None)
            }
            _ => (
                options,
                Some(format!(
                    "`{EXTRACT_EVERY_SETTING}` in {} must be a whole number of turns >= 1, not \
                     {value}; using {DEFAULT_EXTRACT_EVERY}",
                    source.as_str()
                )),
            ),
        }
    }
}

/// The extraction job. Register one per main-thread session on its `StopHookPipeline`; it
/// keeps the session's cursor.
#[derive(Clone)]
pub struct ExtractionJob {
    inner: Arc<Inner>,
}

/// What one run did.
#[derive(Debug, Clone, PartialEq)]
pub enum RunReport {
    /// No message since the cursor.
    NothingNew,
    /// The main agent wrote memory itself; the cursor moved without a fork.
    SkippedMainAgentWrote {
        /// Messages since the cursor.
        new_messages: usize,
    },
    /// Every new turn was an acknowledgement with no tool use; the cursor stays, so the next
    /// run still covers them.
    NothingToLearn {
        /// Messages since the cursor.
        new_messages: usize,
    },
    /// The fork ran.
    Extracted(Box<ForkRun>),
}

/// A fork's run: what it wrote and what it cost.
#[derive(Debug, Clone, PartialEq)]
pub struct ForkRun {
    /// Messages since the cursor that the fork was given.
    pub new_messages: usize,
    /// Topic files written or changed (relative to the memory directory).
    pub files: Vec<String>,
    /// Whether `MEMORY.md` changed.
    pub index_updated: bool,
    /// Usage summed over the fork's requests.
    pub usage: Usage,
    /// The first request's usage (its cache read shows the parent's prefix was reused).
    pub first_request_usage: Option<Usage>,
    /// What the fork cost, in US dollars.
    pub cost_usd: f64,
    /// Requests the fork made.
    pub requests: u32,
}

impl ExtractionJob {
    /// A job writing into `dir` (created if needed; its canonical path bounds the sandbox),
    /// with the default [`ExtractionOptions`].
    pub fn new(dir: MemoryDir) -> Result<Self, MemoryError> {
        Self::with_options(dir, ExtractionOptions::default())
    }

    /// A job for `dir` with these options.
    pub fn with_options(dir: MemoryDir, options: ExtractionOptions) -> Result<Self, MemoryError> {
        Self::build(dir, options, None, None)
    }

    /// Like [`ExtractionJob::with_options`], with the fork's reads judged against the
    /// session's project (its directories, home and deny/ask rules; see
    /// [`MemorySandbox::for_project`]) instead of the fork's working directory.
    pub fn for_project(
        dir: MemoryDir,
        options: ExtractionOptions,
        project: &PermissionContext,
    ) -> Result<Self, MemoryError> {
        Self::build(dir, options, None, Some(project))
    }

    /// Like [`ExtractionJob::with_options`], telling `learned` about every memory saved, and
    /// scoped to `project` when given (as [`ExtractionJob::for_project`]).
    pub fn with_learned(
        dir: MemoryDir,
        options: ExtractionOptions,
        learned: SessionMemories,
        project: Option<&PermissionContext>,
    ) -> Result<Self, MemoryError> {
        Self::build(dir, options, Some(learned), project)
    }

    fn build(
        dir: MemoryDir,
        options: ExtractionOptions,
        learned: Option<SessionMemories>,
        project: Option<&PermissionContext>,
    ) -> Result<Self, MemoryError> {
        let mut sandbox = MemorySandbox::new(dir.path())?;
        if let Some(project) = project {
            sandbox = sandbox.for_project(project);
        }
        let sandbox = Arc::new(sandbox);
        Ok(Self {
            inner: Arc::new(Inner {
                dir,
                sandbox,
                options: ExtractionOptions {
                    every: options.every.max(1),
                    ..options
                },
                learned,
                cursor_log: Mutex::new(None),
                state: Mutex::new(State::default()),
            }),
        })
    }

    /// The options the job runs with.
    pub fn options(&self) -> ExtractionOptions {
        self.inner.options
    }

    /// The sandbox the fork's tools run in (writes only inside the memory directory).
    pub fn sandbox(&self) -> &Arc<MemorySandbox> {
        &self.inner.sandbox
    }

    /// Whether a run is in progress.
    pub fn is_running(&self) -> bool {
        self.inner.lock().running
    }

    /// Records the cursor of every completed run in the session's transcript through
    /// `annotator`, for [`ExtractionJob::restore`] in a later process.
    pub fn record_cursor_in(&self, annotator: TranscriptAnnotator) {
        *self
            .inner
            .cursor_log
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(annotator);
    }

    /// Takes the cursor from a resumed session's annotation, if `record` is one (the host
    /// hands it every annotation in file order; the last cursor wins). Other records are
    /// ignored.
    pub fn restore(&self, record: &TranscriptRecord) {
        if record.kind.as_str() != MEMORY_CURSOR_KIND {
            return;
        }
        match record.data.as_ref().and_then(Cursor::from_annotation) {
            Some(cursor) => self.inner.lock().cursor = Some(cursor),
            None => tracing::debug!("skipping an unreadable memory_cursor record"),
        }
    }

    /// Runs extraction for `ctx` now, ignoring the one-at-a-time gate and the batch size
    /// (tests, `tine memory` tooling). The cursor still applies.
    pub async fn extract_once(&self, ctx: &JobContext) -> Result<RunReport, ExtractError> {
        self.inner.extract_once(ctx).await
    }

    /// What the messages since the cursor hold, for `ctx`'s conversation.
    pub fn pending_batch(&self, ctx: &JobContext) -> Batch {
        let state = self.inner.lock();
        self.inner.batch(&state, ctx)
    }

    /// The hook for compaction (not built yet): call it with the context of the history about
    /// to be replaced, and await it, before replacing it. It extracts whatever has gathered,
    /// due or not. If a run is in progress it returns at once and the trailing run covers
    /// these messages (the context holds them), whatever turns end meanwhile.
    pub fn before_compaction(
        &self,
        ctx: JobContext,
    ) -> BoxFuture<'static, Result<JobOutcome, JobError>> {
        start(&self.inner, ctx, true)
    }
}

impl BackgroundJob for ExtractionJob {
    fn name(&self) -> &str {
        EXTRACTION_JOB
    }

    /// Keeps `ctx` for a flush; a run starts once [`ExtractionOptions::every`] eligible turns
    /// have gathered. During a run the trigger is stashed for the trailing run instead.
    fn should_run(&self, ctx: &JobContext) -> bool {
        let mut state = self.inner.lock();
        state.latest = Some(ctx.clone());
        if state.running {
            stash(&mut state, ctx.clone(), false);
            return false;
        }
        self.inner.due(&state, ctx)
    }

    /// Runs now, due or not (the pipeline calls it when `should_run` said so).
    fn run(&self, ctx: JobContext) -> BoxFuture<'static, Result<JobOutcome, JobError>> {
        start(&self.inner, ctx, false)
    }

    /// Extracts what the last turns left, if any of it is worth a look.
    fn flush(&self) -> Option<BoxFuture<'static, Result<JobOutcome, JobError>>> {
        let mut state = self.inner.lock();
        let ctx = state.latest.clone()?;
        if state.running {
            // The running task (which the pipeline tracks) picks it up as its trailing run.
            stash(&mut state, ctx, true);
            return None;
        }
        let batch = self.inner.batch(&state, &ctx);
        if batch.eligible == 0 && batch.handled == 0 {
            return None;
        }
        drop(state);
        Some(start(&self.inner, ctx, true))
    }
}

/// Stashes a trigger for the trailing run: the latest wins, unless the stashed one is pinned;
/// a forced trigger stays forced.
fn stash(state: &mut State, ctx: JobContext, forced: bool) {
    match &mut state.pending {
        Some(pending) if pending.pinned => pending.forced = true,
        Some(pending) => {
            pending.forced |= forced;
            pending.ctx = ctx;
        }
        None => {
            state.pending = Some(Pending {
                ctx,
                forced,
                pinned: false,
            });
        }
    }
}

/// Starts a run of `ctx` (and its trailing runs), or stashes it when one is in progress.
/// `pin` keeps the stashed context from being replaced (compaction).
fn start(
    inner: &Arc<Inner>,
    ctx: JobContext,
    pin: bool,
) -> BoxFuture<'static, Result<JobOutcome, JobError>> {
    let inner = Arc::clone(inner);
    {
        let mut state = inner.lock();
        if state.running {
            if pin {
                state.pending = Some(Pending {
                    ctx,
                    forced: true,
                    pinned: true,
                });
            } else {
                stash(&mut state, ctx, true);
            }
            return Box::pin(async {
                Ok(JobOutcome {
                    summary: String::new(),
                    data: json!({"status": "stashed"}),
                })
            });
        }
        state.running = true;
    }
    Box::pin(async move {
        let mut guard = RunningGuard {
            inner: Arc::clone(&inner),
            armed: true,
        };
        let mut ctx = ctx;
        let mut reports = Vec::new();
        let mut last_error = None;
        loop {
            match inner.extract_once(&ctx).await {
                Ok(report) => reports.push(report),
                Err(error) => {
                    tracing::warn!(%error, "memory extraction failed");
                    last_error = Some(error);
                }
            }
            // Take the stash and clear `running` under one lock, so a trigger is never lost
            // between the two.
            let mut state = inner.lock();
            let next = state
                .pending
                .take()
                .filter(|p| p.forced || inner.due(&state, &p.ctx));
            match next {
                Some(next) => ctx = next.ctx,
                None => {
                    state.running = false;
                    guard.armed = false;
                    break;
                }
            }
        }
        match (reports.is_empty(), last_error) {
            (true, Some(error)) => Err(Box::new(error) as JobError),
            (_, error) => Ok(outcome(&reports, error.as_ref())),
        }
    })
}

/// Clears `running` (and the stash) when a run is dropped midway (the session was cancelled).
struct RunningGuard {
    inner: Arc<Inner>,
    armed: bool,
}

impl Drop for RunningGuard {
    fn drop(&mut self) {
        if self.armed {
            let mut state = self.inner.lock();
            state.running = false;
            state.pending = None;
        }
    }
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Where the new messages start: after the cursor, or 0 when the message at the cursor is
    /// gone or changed (compaction rewrote the history).
    fn new_messages_start(&self, messages: &[Message]) -> usize {
        Cursor::start_in(self.lock().cursor.as_ref(), messages)
    }

    /// What the messages of `ctx` since the cursor hold.
    fn batch(&self, state: &State, ctx: &JobContext) -> Batch {
        let messages = &ctx.cache_safe.messages;
        let start = Cursor::start_in(state.cursor.as_ref(), messages);
        assess(
            &messages[start..],
            &self.sandbox,
            &ctx.parent.tool_context.cwd(),
        )
    }

    /// Whether enough eligible turns have gathered for a run.
    fn due(&self, state: &State, ctx: &JobContext) -> bool {
        self.batch(state, ctx).eligible >= self.options.every as usize
    }

    fn move_cursor(&self, messages: &[Message]) -> Option<Cursor> {
        let cursor = Cursor::after(messages)?;
        self.lock().cursor = Some(cursor.clone());
        Some(cursor)
    }

    /// Moves the cursor past `messages` and records it in the transcript (a failure to record
    /// only costs a resumed session a longer first window).
    async fn advance_cursor(&self, messages: &[Message]) {
        let Some(cursor) = self.move_cursor(messages) else {
            return;
        };
        let annotator = self
            .cursor_log
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        if let Some(annotator) = annotator
            && let Err(error) = annotator
                .annotate(MEMORY_CURSOR_KIND, &cursor.to_annotation())
                .await
        {
            tracing::warn!(%error, "could not record the memory extraction cursor");
        }
    }

    async fn extract_once(&self, ctx: &JobContext) -> Result<RunReport, ExtractError> {
        let messages = Arc::clone(&ctx.cache_safe.messages);
        let start = self.new_messages_start(&messages);
        let new = &messages[start..];
        if new.is_empty() {
            return Ok(RunReport::NothingNew);
        }
        let cwd = ctx.parent.tool_context.cwd();
        let batch = assess(new, &self.sandbox, &cwd);
        if batch.eligible == 0 {
            if batch.handled > 0 {
                tracing::debug!("the main agent wrote memory itself; extraction skipped");
                self.advance_cursor(&messages).await;
                return Ok(RunReport::SkippedMainAgentWrote {
                    new_messages: new.len(),
                });
            }
            return Ok(RunReport::NothingToLearn {
                new_messages: new.len(),
            });
        }

        let dir = self.sandbox.dir().to_path_buf();
        let (before, scan) = blocking({
            let dir = dir.clone();
            move || (snapshot(&dir), scan_memories(&dir, MANIFEST_LIMIT))
        })
        .await?;
        let (listed, unlisted): (Vec<_>, Vec<_>) = scan
            .memories
            .iter()
            .partition(|m| listed_in_context(&messages, &m.file_name));
        let manifest = unlisted
            .iter()
            .map(|m| m.manifest_line())
            .collect::<Vec<_>>()
            .join("\n");
        let prompt = build_extract_prompt(&ExtractPromptInput {
            dir: &dir,
            new_messages: new.len(),
            manifest: &manifest,
            in_context: listed.len(),
            max_turns: self.options.max_turns,
            today: &utc_date(SystemTime::now()),
        });
        let sandbox: Arc<dyn CanUseTool> = Arc::clone(&self.sandbox) as Arc<dyn CanUseTool>;
        let mut params = ForkParams::new(
            Arc::clone(&ctx.cache_safe),
            vec![Message::user(vec![ContentBlock::text(prompt)])],
            sandbox,
            EXTRACTION_JOB,
        );
        params.max_turns = Some(self.options.max_turns);
        params.end_after_tools = Some(end_after_memory_writes(
            Arc::clone(&self.sandbox),
            cwd.clone(),
        ));
        params.skip_transcript = true;
        params.skip_cache_write = self.options.cache_parent_tail;
        // Never set: it would change the thinking budget and so the cache key (seed 000 §5.1).
        params.max_output_tokens = None;
        let result: ForkResult = run_forked_agent(&ctx.parent, params).await?;
        match &result.terminal {
            Terminal::Completed | Terminal::MaxTurns { .. } => {}
            other @ (Terminal::Aborted
            | Terminal::PromptTooLong { .. }
            | Terminal::ModelError { .. }
            | Terminal::BlockingLimit { .. }
            | Terminal::StopHookPrevented { .. }
            | Terminal::RepeatedToolFailure { .. }) => {
                return Err(ExtractError::Unfinished(other.describe()));
            }
        }
        let after = blocking(move || snapshot(&dir)).await?;
        let changed = diff(&before, &after);
        let index_updated = changed.iter().any(|f| f == INDEX_FILE);
        let files: Vec<String> = changed.into_iter().filter(|f| f != INDEX_FILE).collect();
        if let Some(learned) = &self.learned {
            learned.extend(&files);
        }
        self.advance_cursor(&messages).await;
        tracing::debug!(
            dir = %self.dir.path().display(),
            saved = files.len(),
            "memory extraction finished"
        );
        Ok(RunReport::Extracted(Box::new(ForkRun {
            new_messages: new.len(),
            files,
            index_updated,
            usage: result.usage,
            first_request_usage: result.first_request_usage,
            cost_usd: result.cost_usd,
            requests: result.requests,
        })))
    }
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, ExtractError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ExtractError::Join(e.to_string()))
}

/// Whether the conversation's first message (where the session's context puts the
/// `MEMORY.md` index) links `file_name` as the index does: `](file_name)`.
fn listed_in_context(messages: &[Message], file_name: &str) -> bool {
    let Some(first) = messages.first() else {
        return false;
    };
    let link = format!("]({file_name})");
    match &first.content {
        MessageContent::Text(text) => text.contains(&link),
        MessageContent::Blocks(blocks) => blocks.iter().any(|block| match block {
            ContentBlock::Text(text) => text.text.contains(&link),
            _ => false,
        }),
    }
}

/// Whether an assistant message among `messages` called Write or Edit on a file inside the
/// memory directory.
pub(crate) fn main_agent_wrote_memory(
    messages: &[Message],
    sandbox: &MemorySandbox,
    cwd: &Path,
) -> bool {
    messages
        .iter()
        .filter(|m| m.role == Role::Assistant)
        .filter_map(|m| match &m.content {
            MessageContent::Blocks(blocks) => Some(blocks),
            MessageContent::Text(_) => None,
        })
        .flatten()
        .any(|block| match block {
            ContentBlock::ToolUse(call) if matches!(call.name.as_str(), "Write" | "Edit") => call
                .input
                .get("file_path")
                .and_then(Value::as_str)
                .is_some_and(|p| sandbox.is_inside(p, cwd)),
            _ => false,
        })
}

/// Ends the fork once a turn did nothing but write memory, successfully: the prompt's turn 2.
/// Asking the model for a closing line would cost a whole request (the parent's prefix read
/// again, the fork's prompt and writes sent uncached) for a reply nobody reads.
fn end_after_memory_writes(sandbox: Arc<MemorySandbox>, cwd: PathBuf) -> EndAfterTools {
    Arc::new(move |calls: &[ToolUseBlock], results: &Message| {
        let all_writes = !calls.is_empty()
            && calls.iter().all(|call| {
                matches!(call.name.as_str(), "Write" | "Edit")
                    && call
                        .input
                        .get("file_path")
                        .and_then(Value::as_str)
                        .is_some_and(|p| sandbox.is_inside(p, &cwd))
            });
        let all_succeeded = match &results.content {
            MessageContent::Blocks(blocks) => blocks.iter().all(|b| match b {
                ContentBlock::ToolResult(r) => r.is_error != Some(true),
                _ => true,
            }),
            MessageContent::Text(_) => true,
        };
        all_writes && all_succeeded
    })
}

fn usage_json(usage: &Usage) -> Value {
    json!({
        "input_tokens": usage.input_tokens,
        "cache_read_input_tokens": usage.cache_read_input_tokens,
        "cache_creation_input_tokens": usage.cache_creation_input_tokens,
        "output_tokens": usage.output_tokens,
        // What was read from the cache against what was billed at the full (or write) rate.
        "read_from_cache": usage.cache_read_input_tokens,
        "billed_in_full": usage.input_tokens + usage.cache_creation_input_tokens,
        "billed_equivalent_input": billed_equivalent_input(usage),
    })
}

fn report_json(report: &RunReport) -> Value {
    match report {
        RunReport::NothingNew => json!({"status": "nothing_new"}),
        RunReport::SkippedMainAgentWrote { new_messages } => {
            json!({"status": "skipped_main_agent_wrote", "new_messages": new_messages})
        }
        RunReport::NothingToLearn { new_messages } => {
            json!({"status": "nothing_to_learn", "new_messages": new_messages})
        }
        RunReport::Extracted(run) => json!({
            "status": "extracted",
            "new_messages": run.new_messages,
            "files": run.files,
            "index_updated": run.index_updated,
            "requests": run.requests,
            "cost_usd": run.cost_usd,
            "usage": usage_json(&run.usage),
            "first_request_usage": run.first_request_usage.as_ref().map(usage_json),
        }),
    }
}

/// The job's outcome over one run and its trailing runs.
fn outcome(reports: &[RunReport], error: Option<&ExtractError>) -> JobOutcome {
    let mut files: Vec<String> = Vec::new();
    let mut index_updated = false;
    let mut usage = Usage::default();
    for report in reports {
        if let RunReport::Extracted(run) = report {
            for f in &run.files {
                if !files.contains(f) {
                    files.push(f.clone());
                }
            }
            index_updated |= run.index_updated;
            usage += run.usage;
        }
    }
    let summary = match files.len() {
        0 if index_updated => "updated the memory index".to_owned(),
        0 => String::new(),
        1 => format!("saved 1 memory: {}", files[0]),
        n => format!("saved {n} memories: {}", files.join(", ")),
    };
    let status = reports.last().map_or("failed", |r| match r {
        RunReport::NothingNew => "nothing_new",
        RunReport::SkippedMainAgentWrote { .. } => "skipped_main_agent_wrote",
        RunReport::NothingToLearn { .. } => "nothing_to_learn",
        RunReport::Extracted(_) => "extracted",
    });
    JobOutcome {
        summary,
        data: json!({
            "status": status,
            "files": files,
            "index_updated": index_updated,
            "usage": usage_json(&usage),
            "runs": reports.iter().map(report_json).collect::<Vec<_>>(),
            "error": error.map(ToString::to_string),
        }),
    }
}

#[cfg(test)]
#[path = "extract_tests.rs"]
mod tests;
