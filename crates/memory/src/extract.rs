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
//! - One run at a time, as the fork runtime's [`CoalescingJob`] runs it: a trigger during a run
//!   waits (the latest wins) and a trailing run follows when the current one ends, if it is
//!   due by then. The job reports an [`ExtractionOutcome`].

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::SystemTime;

use futures::future::BoxFuture;
use tine_api_client::{ContentBlock, Message, MessageContent};
use tine_config::settings::LoadedSettings;
use tine_fork_runtime::{
    BackgroundJob, CoalescedWork, CoalescingJob, ForkError, ForkParams, ForkResult, JobContext,
    JobError, JobOutcome, Trigger, WrapsJob, run_forked_agent,
};
use tine_permissions::PermissionContext;
use tine_query_loop::utc_date;
use tine_query_loop::{CanUseTool, TranscriptAnnotator, TranscriptRecord};

use crate::batch::{Batch, assess};
use crate::cursor::{Cursor, MEMORY_CURSOR_KIND};
use crate::error::MemoryError;
use crate::extract_outcome::{ExtractionOutcome, ForkRun, RunReport};
use crate::extract_prompt::{ExtractPromptInput, build_extract_prompt};
use crate::fork_changes::{diff, snapshot};
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
    job: CoalescingJob<Extraction>,
}

/// What one run of the job does, and the cursor it moves.
struct Extraction {
    dir: MemoryDir,
    sandbox: Arc<MemorySandbox>,
    options: ExtractionOptions,
    /// Told about every memory a run saves (so recall does not offer them back).
    learned: Option<SessionMemories>,
    /// Where each completed run's cursor is recorded (the session's transcript).
    cursor_log: Mutex<Option<TranscriptAnnotator>>,
    cursor: Mutex<Option<Cursor>>,
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
        let sandbox = Arc::new(MemorySandbox::scoped(dir.path(), project)?);
        Ok(Self {
            job: CoalescingJob::new(Extraction {
                dir,
                sandbox,
                options: ExtractionOptions {
                    every: options.every.max(1),
                    ..options
                },
                learned,
                cursor_log: Mutex::new(None),
                cursor: Mutex::new(None),
            }),
        })
    }

    /// The options the job runs with.
    pub fn options(&self) -> ExtractionOptions {
        self.job.work().options
    }

    /// The sandbox the fork's tools run in (writes only inside the memory directory).
    pub fn sandbox(&self) -> &Arc<MemorySandbox> {
        &self.job.work().sandbox
    }

    /// Whether a run is in progress.
    pub fn is_running(&self) -> bool {
        self.job.is_running()
    }

    /// Records the cursor of every completed run in the session's transcript through
    /// `annotator`, for [`ExtractionJob::restore`] in a later process.
    pub fn record_cursor_in(&self, annotator: TranscriptAnnotator) {
        *self
            .job
            .work()
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
            Some(cursor) => *self.job.work().cursor() = Some(cursor),
            None => tracing::debug!("skipping an unreadable memory_cursor record"),
        }
    }

    /// Runs extraction for `ctx` now, ignoring the one-at-a-time gate and the batch size
    /// (tests, `tine memory` tooling). The cursor still applies.
    pub async fn extract_once(&self, ctx: &JobContext) -> Result<RunReport, ExtractError> {
        self.job.work().extract_once(ctx).await
    }

    /// What the messages since the cursor hold, for `ctx`'s conversation.
    pub fn pending_batch(&self, ctx: &JobContext) -> Batch {
        self.job.work().batch(ctx)
    }

    /// Compaction's hook: call it with the context of the history about to be replaced, and
    /// await it, before replacing it. It extracts whatever has gathered, due or not. If a run
    /// is in progress it returns at once and the trailing run covers these messages (the
    /// context holds them, pinned), whatever turns end meanwhile.
    pub fn before_compaction(
        &self,
        ctx: JobContext,
    ) -> BoxFuture<'static, Result<JobOutcome, JobError>> {
        self.job.start(ctx, Trigger::Pinned)
    }
}

/// Extraction's turns, runs and flushes are its [`CoalescingJob`]'s: a run starts once
/// [`ExtractionOptions::every`] eligible turns have gathered, a flush extracts what the last
/// turns left if any of it is worth a look, and during a run a trigger waits for the trailing
/// run.
impl WrapsJob for ExtractionJob {
    fn job(&self) -> &dyn BackgroundJob {
        &self.job
    }
}

impl CoalescedWork for Extraction {
    type Report = RunReport;
    type Error = ExtractError;

    fn name(&self) -> &str {
        EXTRACTION_JOB
    }

    /// Whether enough eligible turns have gathered for a run.
    fn due(&self, ctx: &JobContext) -> bool {
        self.batch(ctx).eligible >= self.options.every as usize
    }

    fn flushes(&self) -> bool {
        true
    }

    fn worth_flushing(&self, ctx: &JobContext) -> bool {
        let batch = self.batch(ctx);
        batch.eligible > 0 || batch.handled > 0
    }

    fn run_once<'a>(
        &'a self,
        ctx: &'a JobContext,
    ) -> BoxFuture<'a, Result<RunReport, ExtractError>> {
        Box::pin(self.extract_once(ctx))
    }

    fn outcome(&self, reports: Vec<RunReport>, error: Option<ExtractError>) -> JobOutcome {
        let outcome = ExtractionOutcome::of(reports, error.map(|e| e.to_string()));
        JobOutcome::new(outcome.summary(), outcome)
    }
}

impl Extraction {
    fn cursor(&self) -> MutexGuard<'_, Option<Cursor>> {
        self.cursor.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Where the new messages start: after the cursor, or 0 when the message at the cursor is
    /// gone or changed (compaction rewrote the history).
    fn new_messages_start(&self, messages: &[Message]) -> usize {
        Cursor::start_in(self.cursor().as_ref(), messages)
    }

    /// What the messages of `ctx` since the cursor hold.
    fn batch(&self, ctx: &JobContext) -> Batch {
        let messages = &ctx.cache_safe.messages;
        let start = self.new_messages_start(messages);
        assess(
            &messages[start..],
            self.sandbox.writes(),
            &ctx.parent.tool_context.cwd(),
        )
    }

    fn move_cursor(&self, messages: &[Message]) -> Option<Cursor> {
        let cursor = Cursor::after(messages)?;
        *self.cursor() = Some(cursor.clone());
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
        let batch = assess(new, self.sandbox.writes(), &cwd);
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
        let policy = self.sandbox.policy();
        let mut params = ForkParams::new(
            Arc::clone(&ctx.cache_safe),
            vec![Message::user(vec![ContentBlock::text(prompt)])],
            Arc::new(policy.clone()) as Arc<dyn CanUseTool>,
            EXTRACTION_JOB,
        );
        params.max_turns = Some(self.options.max_turns);
        // Ends after a turn of successful memory writes, the prompt's turn 2: no closing request.
        params.end_after_tools = Some(policy.end_after_writes(cwd.clone()));
        params.skip_transcript = true;
        params.skip_cache_write = self.options.cache_parent_tail;
        // Never set: it would change the thinking budget and so the cache key (seed 000 §5.1).
        params.max_output_tokens = None;
        let result: ForkResult = run_forked_agent(&ctx.parent, params).await?;
        if let Some(why) = result.unfinished() {
            return Err(ExtractError::Unfinished(why));
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

#[cfg(test)]
#[path = "extract_tests.rs"]
mod tests;
