//! tine-memory: automatic memory (seed 001 §16.2.4 ①, seed 000 §七–§八, seed 003 §十). Tell
//! tine once that the project uses React 18 and PostgreSQL, and the next session knows.
//!
//! Modules in reading order (private: the items named below, re-exported at the root, are the
//! API):
//! - `memdir`: where the memory directory is (`TINE_MEMORY_DIR`, `autoMemoryDirectory`, or
//!   `$TINE_HOME/projects/<project>/memory`), whether auto memory is on, and `MEMORY.md` as
//!   loaded into the context once per session.
//! - `topic`: topic files (frontmatter `name`, `description`, `type`), the tolerant scan,
//!   index lines, saving a memory.
//! - `sandbox`: [`MemorySandbox`], the memory forks' `can_use_tool` (the fork runtime's
//!   `ForkPolicy` set up for memory), and where a memory write may land.
//! - `write_guard`: [`guard_memory_writes`], Read/Write/Edit made safe for several sessions
//!   saving memories at once (a lock across processes, `MEMORY.md` merged, files 0600).
//! - `batch`: which turns are worth extracting (not "ok, thanks", not memory the main agent
//!   wrote itself) and when a batch is due.
//! - `cursor`: where extraction stopped, kept in the session's transcript.
//! - `extract_prompt`, `extract`, `extract_outcome`: the [`ExtractionJob`], a background job of
//!   the stop-hook pipeline (one run at a time, the fork runtime's `CoalescingJob`) that forks
//!   on the parent's prompt cache every few eligible turns (and when the host flushes it: idle,
//!   exit, before compaction), saves memories and reports an [`ExtractionOutcome`].
//! - `fork_changes`: what a memory fork changed in the directory and what it cost.
//! - `magic_docs`, `magic_docs_job`: Magic Docs: files whose first line is
//!   `# MAGIC DOC: <title>` are tracked when Read shows them, and a cache-sharing fork that may
//!   only Edit them keeps them true to the conversation after each turn ([`MagicDocsOutcome`]).
//! - `consolidation_lock`: [`ConsolidationLock`], `.consolidate-lock`: the last
//!   consolidation as its mtime, an OS lock held for a whole dream, exact across processes.
//! - `dream_gate`: when a dream runs: enabled, time, scan throttle, sessions, lock.
//! - `dream_prompt`, `dream_task`, `dream_tidy`, `dream_run`, `dream`: the [`DreamJob`], a
//!   background job that consolidates memory on the parent's prompt cache once the gates pass,
//!   as a killable [`DreamTask`] whose failure or kill rolls the lock back, tidies the
//!   directory after a success and reports a [`DreamRun`].
//! - `recall`: [`Recall`], which attaches the memories relevant to a prompt to its turn.
//! - `session`: [`AutoMemory`], all of the above for one session, made at its start.
//! - `commands`: `tine memory path|list|show|dream`.
//! - `error`: the crate's typed errors ([`MemoryError`]).
//!
//! How a host wires it: resolve the directory with [`resolve_memory_dir`]; when enabled,
//! [`AutoMemory::start`], swap the session's tools for [`guard_memory_writes`]'s (before the
//! engine and the forks' parent context take them), append [`AutoMemory::context`] to the
//! session's context once, register [`AutoMemory::extraction_job`] on the session's
//! `StopHookPipeline`, submit [`AutoMemory::prompt_with_recall`]'s prompt on each user turn, and
//! `flush` the pipeline when the session goes idle and before it exits (extraction is batched).
//! A resumed session hands [`ExtractionJob::restore`] every annotation as the transcript is
//! read (`QueryEngine::resume_with`); every session gives [`AutoMemory::record_in`] the
//! engine's transcript annotator, so the extraction cursor survives the process.
//!
//! # Example
//!
//! A memory is a Markdown topic file with frontmatter in the memory directory, listed in its
//! `MEMORY.md` index. Save one and scan it back (what recall chooses from):
//!
//! ```
//! use tine_memory::{DirSource, MemoryDir, MemoryType, NewMemory, save_memory, scan_memories};
//!
//! let dir = tempfile::tempdir()?;
//! let memory = MemoryDir::new(dir.path().join("memory"), DirSource::Default);
//! memory.ensure()?;
//! save_memory(&memory, &NewMemory {
//!     file_name: "project_stack.md",
//!     name: "Project stack",
//!     description: "React 18 frontend, PostgreSQL database",
//!     kind: MemoryType::Project,
//!     body: "The project uses React 18 and PostgreSQL.",
//! })?;
//!
//! let scan = scan_memories(memory.path(), 200);
//! assert_eq!(scan.memories[0].file_name, "project_stack.md");
//! assert_eq!(scan.memories[0].frontmatter.kind, Some(MemoryType::Project));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The automatic part runs as background jobs of a session: [`ExtractionJob`] (a fork on the
//! parent's cache that writes topic files) and [`DreamJob`], with [`Recall`] attaching the
//! relevant files to a turn. `examples/remember_and_recall.rs` runs both over a scripted
//! session on the bundled simulator (`cargo run -p tine-memory --example remember_and_recall`).
//!
//! # Types from lower crates
//!
//! Signatures use [`tine_fork_runtime`]'s background jobs and parent context
//! ([`BackgroundJob`](tine_fork_runtime::BackgroundJob), [`ParentContext`](tine_fork_runtime::ParentContext)),
//! [`tine_query_loop`]'s transcript and permission vocabulary, [`tine_tools`]'s
//! [`Tool`](tine_tools::Tool), [`tine_permissions`]'s [`PermissionContext`](tine_permissions::PermissionContext),
//! [`tine_api_client`]'s messages and usage, and [`tine_config`]'s settings.
#![warn(missing_docs, unnameable_types)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod batch;
mod commands;
mod consolidation_lock;
mod cursor;
mod dream;
mod dream_gate;
mod dream_prompt;
mod dream_run;
mod dream_task;
mod dream_tidy;
mod error;
mod extract;
mod extract_outcome;
mod extract_prompt;
mod fork_changes;
mod magic_docs;
mod magic_docs_job;
mod memdir;
mod recall;
mod sandbox;
mod session;
mod topic;
mod write_guard;

pub use batch::Batch;

pub use commands::{DreamCommand, dream as dream_now, list, memory_path, show};
pub use consolidation_lock::{Acquire, ConsolidationLock, recorded_consolidation};
pub use dream::{DREAM_JOB, DreamError, DreamJob, OnDreamProgress};
pub use dream_gate::{
    DEFAULT_DREAM_MIN_HOURS, DEFAULT_DREAM_MIN_SESSIONS, DreamIo, DreamOptions, FileStamp,
    GateOutcome, Gates, Ready, ScanThrottle, SystemIo,
};
pub use dream_prompt::DREAM_MARKER;
pub use dream_run::DreamRun;
pub use dream_task::{DreamPhase, DreamStatus, DreamTask, DreamTaskState, DreamTurn};
pub use error::MemoryError;
pub use extract::{
    DEFAULT_EXTRACT_EVERY, EXTRACTION_JOB, ExtractError, ExtractionJob, ExtractionOptions,
};
pub use extract_outcome::{ExtractionOutcome, ExtractionStatus, ForkRun, RunReport};
pub use extract_prompt::EXTRACTION_MARKER;
pub use fork_changes::billed_equivalent_input;
pub use magic_docs::{MAGIC_DOC_PREFIX, MagicDocHeader, MagicDocs, MagicDocsOptions};
pub use magic_docs_job::{
    MAGIC_DOCS_JOB, MAGIC_DOCS_MARKER, MagicDocsError, MagicDocsFork, MagicDocsJob,
    MagicDocsOutcome, MagicDocsRun, MagicDocsStatus,
};
pub use memdir::{
    DirSource, INDEX_FILE, IndexForContext, IndexTruncation, MAX_INDEX_BYTES, MAX_INDEX_LINE_CHARS,
    MAX_INDEX_LINES, MemoryDir, MemoryEnv, MemoryResolution, default_memory_dir,
    resolve_memory_dir,
};
pub use recall::{
    MemorySelector, RECALL_MARKER, Recall, RecallAttachment, RecallError, Selection,
    SessionMemories, SideQuerySelector,
};
pub use sandbox::MemorySandbox;
pub use session::AutoMemory;
pub use topic::{
    Frontmatter, MemoryHeader, MemoryIssue, MemoryType, NewMemory, Scan, save_memory, scan_memories,
};
pub use write_guard::guard_memory_writes;
