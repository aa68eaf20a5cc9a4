//! The Magic Docs fork (seed 001 §16.2.4 ③): after each main turn with tracked files, a
//! [`BackgroundJob`] forks on the parent's prompt cache (the saved `CacheSafeParams`, as
//! extraction does) and lets the fork Edit the tracked files, and nothing else, to keep them
//! true to what the conversation established.
//!
//! - The prompt names each file's absolute path, quotes its `# MAGIC DOC:` line and its
//!   instruction, and gives its current text; the fork's file-state cache holds exactly that
//!   text, so Edit's read-before-write check passes for it and fails if the file moved on.
//! - The fork's `can_use_tool` is the fork runtime's [`ForkPolicy`] set up for it: Edit of a
//!   tracked file (on the path the permission engine resolves), judged by the engine for the
//!   session's project in `acceptEdits` with its deny and ask rules (an ask is a denial: a fork
//!   cannot ask); every other call is refused. The tool array is not filtered (it is part of
//!   the cache key).
//! - One run at a time, as the fork runtime's [`CoalescingJob`] runs it: a turn that ends
//!   during a run waits and a trailing run follows. The job reports a [`MagicDocsOutcome`].

use std::path::PathBuf;
use std::sync::Arc;
use std::time::SystemTime;

use futures::future::BoxFuture;
use serde::Serialize;
use serde_json::Value;
use tine_api_client::{ContentBlock, Message, Usage};
use tine_fork_runtime::{
    BackgroundJob, CoalescedWork, CoalescingJob, ForkError, ForkParams, ForkPolicy, ForkScope,
    JobContext, JobOutcome, Refusals, WrapsJob, WritableFiles, run_forked_agent,
};
use tine_permissions::{PermissionContext, PermissionMode};
use tine_query_loop::CanUseTool;
use tine_tools::{FileStateCache, Tool};

use crate::fork_changes::{optional_usage_figures, usage_figures};
use crate::magic_docs::{MagicDocHeader, MagicDocs, detect_magic_doc_header};

/// The job's name in pipeline events.
pub const MAGIC_DOCS_JOB: &str = "magic_docs";
/// The tag opening the fork's prompt (how a test or a log finds it).
pub const MAGIC_DOCS_MARKER: &str = "<magic-docs-update>";
/// The fork's turn cap: its edits in one turn, a retry of a failed one, a last word.
pub(crate) const MAGIC_DOCS_MAX_TURNS: u32 = 3;
/// A tracked file bigger than this is not quoted whole, so it is left alone this turn.
pub(crate) const MAGIC_DOC_MAX_BYTES: u64 = 64 * 1024;

/// Why one update failed.
#[derive(Debug, thiserror::Error)]
pub enum MagicDocsError {
    /// The update fork could not run.
    #[error(transparent)]
    Fork(#[from] ForkError),
    /// The fork stopped before it finished.
    #[error("the Magic Docs fork did not finish: {0}")]
    Unfinished(String),
    /// The task reading the tracked files panicked or was cancelled.
    #[error("the Magic Docs read task failed: {0}")]
    Join(String),
}

/// One tracked file as the fork is shown it.
#[derive(Debug, Clone)]
struct DocNow {
    path: PathBuf,
    header: MagicDocHeader,
    content: String,
    mtime: Option<SystemTime>,
}

/// One update of the tracked files.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum MagicDocsRun {
    /// No file is tracked any more (each gone, or its header removed): no fork.
    NothingTracked,
    /// The fork ran and changed nothing.
    Unchanged(MagicDocsFork),
    /// The fork ran and changed files.
    Updated(MagicDocsFork),
}

impl MagicDocsRun {
    /// The run's status, as its report's `status` says it.
    pub fn status(&self) -> MagicDocsStatus {
        match self {
            Self::NothingTracked => MagicDocsStatus::NothingTracked,
            Self::Unchanged(_) => MagicDocsStatus::Unchanged,
            Self::Updated(_) => MagicDocsStatus::Updated,
        }
    }

    /// The files it changed.
    pub fn updated(&self) -> &[String] {
        match self {
            Self::NothingTracked => &[],
            Self::Unchanged(fork) | Self::Updated(fork) => &fork.updated,
        }
    }
}

/// What one update fork saw, changed and cost.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MagicDocsFork {
    /// The tracked files it was shown (absolute paths).
    pub tracked: Vec<String>,
    /// Those whose text changed.
    pub updated: Vec<String>,
    /// Requests the fork made.
    pub requests: u32,
    /// What the fork cost, in US dollars.
    pub cost_usd: f64,
    /// Usage summed over the fork's requests.
    #[serde(serialize_with = "usage_figures")]
    pub usage: Usage,
    /// The first request's usage (its cache read shows the parent's prefix was reused).
    #[serde(serialize_with = "optional_usage_figures")]
    pub first_request_usage: Option<Usage>,
}

/// How the last update ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MagicDocsStatus {
    /// Nothing was tracked.
    NothingTracked,
    /// Nothing changed.
    Unchanged,
    /// Files changed.
    Updated,
    /// No update completed.
    Failed,
}

/// What the Magic Docs job did over one run and its trailing runs: its typed outcome.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MagicDocsOutcome {
    /// The last run's status.
    pub status: MagicDocsStatus,
    /// The files changed, each once, in order.
    pub updated: Vec<String>,
    /// Each run's report, in order.
    pub runs: Vec<MagicDocsRun>,
    /// Why the last run failed, when it did.
    pub error: Option<String>,
}

impl MagicDocsOutcome {
    fn of(runs: Vec<MagicDocsRun>, error: Option<String>) -> Self {
        let mut updated: Vec<String> = Vec::new();
        for path in runs.iter().flat_map(MagicDocsRun::updated) {
            if !updated.contains(path) {
                updated.push(path.clone());
            }
        }
        Self {
            status: runs
                .last()
                .map_or(MagicDocsStatus::Failed, MagicDocsRun::status),
            updated,
            runs,
            error,
        }
    }

    /// One line for people: "updated magic doc docs/a.md" (empty when nothing changed).
    pub fn summary(&self) -> String {
        match self.updated.len() {
            0 => String::new(),
            1 => format!("updated magic doc {}", self.updated[0]),
            n => format!("updated {n} magic docs: {}", self.updated.join(", ")),
        }
    }
}

/// The Magic Docs job: register one per main-thread session, sharing its [`MagicDocs`] with
/// the Read listener on the session's tool context.
#[derive(Clone)]
pub struct MagicDocsJob {
    job: CoalescingJob<DocsUpdate>,
}

/// What one run of the job does.
struct DocsUpdate {
    docs: MagicDocs,
    project: Option<Arc<PermissionContext>>,
}

impl MagicDocsJob {
    /// A job updating what `docs` tracks; with `project` (the session's permissions) the
    /// fork's edits are judged by its rules, else by the fork's working directory alone.
    pub fn new(docs: MagicDocs, project: Option<&PermissionContext>) -> Self {
        Self {
            job: CoalescingJob::new(DocsUpdate {
                docs,
                project: project.map(|p| Arc::new(p.clone())),
            }),
        }
    }

    /// The tracked files.
    pub fn docs(&self) -> &MagicDocs {
        &self.job.work().docs
    }

    /// Runs one update for `ctx` now, whether or not another is running (tests).
    pub async fn update_once(&self, ctx: &JobContext) -> Result<MagicDocsRun, MagicDocsError> {
        self.job.work().update_once(ctx).await
    }
}

/// After every turn while a file is tracked, one run at a time: a turn that ends during a
/// run waits for the trailing run. Flushes do not run it.
impl WrapsJob for MagicDocsJob {
    fn job(&self) -> &dyn BackgroundJob {
        &self.job
    }
}

impl CoalescedWork for DocsUpdate {
    type Report = MagicDocsRun;
    type Error = MagicDocsError;

    fn name(&self) -> &str {
        MAGIC_DOCS_JOB
    }

    fn concerns(&self, _ctx: &JobContext) -> bool {
        !self.docs.is_empty()
    }

    fn run_once<'a>(
        &'a self,
        ctx: &'a JobContext,
    ) -> BoxFuture<'a, Result<MagicDocsRun, MagicDocsError>> {
        Box::pin(self.update_once(ctx))
    }

    fn outcome(&self, runs: Vec<MagicDocsRun>, error: Option<MagicDocsError>) -> JobOutcome {
        let outcome = MagicDocsOutcome::of(runs, error.map(|e| e.to_string()));
        JobOutcome::new(outcome.summary(), outcome)
    }
}

impl DocsUpdate {
    async fn update_once(&self, ctx: &JobContext) -> Result<MagicDocsRun, MagicDocsError> {
        let docs = current_docs(&self.docs).await?;
        if docs.is_empty() {
            return Ok(MagicDocsRun::NothingTracked);
        }
        let paths: Vec<PathBuf> = docs.iter().map(|d| d.path.clone()).collect();
        let policy = magic_docs_policy(&paths, self.project.as_deref());
        let file_state = Arc::new(FileStateCache::new());
        for doc in &docs {
            file_state.record(&doc.path, doc.content.as_bytes(), doc.mtime);
        }
        let mut params = ForkParams::new(
            Arc::clone(&ctx.cache_safe),
            vec![Message::user(vec![ContentBlock::text(build_prompt(&docs))])],
            Arc::new(policy.clone()) as Arc<dyn CanUseTool>,
            MAGIC_DOCS_JOB,
        );
        params.max_turns = Some(MAGIC_DOCS_MAX_TURNS);
        params.skip_transcript = true;
        // Reads the parent's whole prefix and writes no entry of its own (read by no one).
        params.skip_cache_write = true;
        // Never set: it would change the thinking budget and so the cache key.
        params.max_output_tokens = None;
        params.overrides.file_state = Some(file_state);
        // Ends after a turn of successful Edits of tracked files: no closing request.
        params.end_after_tools = Some(policy.end_after_writes(ctx.parent.tool_context.cwd()));
        let result = run_forked_agent(&ctx.parent, params).await?;
        if let Some(why) = result.unfinished() {
            return Err(MagicDocsError::Unfinished(why));
        }
        let after = current_docs(&self.docs).await?;
        let updated: Vec<String> = docs
            .iter()
            .filter(|before| {
                after
                    .iter()
                    .find(|a| a.path == before.path)
                    .is_none_or(|a| a.content != before.content)
            })
            .map(|d| d.path.display().to_string())
            .collect();
        let fork = MagicDocsFork {
            tracked: paths.iter().map(|p| p.display().to_string()).collect(),
            requests: result.requests,
            cost_usd: result.cost_usd,
            usage: result.usage,
            first_request_usage: result.first_request_usage,
            updated,
        };
        Ok(if fork.updated.is_empty() {
            MagicDocsRun::Unchanged(fork)
        } else {
            MagicDocsRun::Updated(fork)
        })
    }
}

/// The tracked files as they are on disk now; a file whose header is gone (or that is gone)
/// is no longer tracked, one too big to quote is skipped this time.
async fn current_docs(docs: &MagicDocs) -> Result<Vec<DocNow>, MagicDocsError> {
    let docs = docs.clone();
    tokio::task::spawn_blocking(move || {
        let mut now = Vec::new();
        for (path, _) in docs.tracked() {
            let meta = std::fs::metadata(&path).ok();
            if meta.as_ref().is_some_and(|m| m.len() > MAGIC_DOC_MAX_BYTES) {
                tracing::info!(path = %path.display(), "magic doc too big to update; skipped");
                continue;
            }
            let content = std::fs::read(&path)
                .ok()
                .and_then(|bytes| String::from_utf8(bytes).ok());
            let header = content.as_deref().and_then(detect_magic_doc_header);
            match (content, header) {
                (Some(content), Some(header)) => {
                    docs.track(&path, header.clone());
                    now.push(DocNow {
                        path,
                        header,
                        content,
                        mtime: meta.and_then(|m| m.modified().ok()),
                    });
                }
                _ => docs.untrack(&path),
            }
        }
        now
    })
    .await
    .map_err(|e| MagicDocsError::Join(e.to_string()))
}

/// The fork's instruction: what to keep, each file's path, header and instruction quoted,
/// and its current text.
fn build_prompt(docs: &[DocNow]) -> String {
    let mut out = format!(
        "{MAGIC_DOCS_MARKER}\nThis message is not part of the conversation with the user. \
         Keep the Magic Docs below true to what the conversation above established: add new \
         decisions, facts and conventions, correct what is now wrong, in place (the document \
         describes the current state, it is not a changelog). If there is nothing substantial \
         to change, reply in one short sentence and call no tool.\n\n\
         Rules: use only the Edit tool, only on the files named here (every other call is \
         refused); make all edits in one reply, in parallel; keep each file's first line \
         exactly as it is and the instruction line after it unchanged; follow each file's \
         instruction; never mention these instructions or the update in the documents.\n"
    );
    for doc in docs {
        out.push_str(&format!(
            "\n<magic-doc path=\"{}\">\nHeader line: {}\n",
            doc.path.display(),
            doc.header.header_line
        ));
        match (&doc.header.instruction_line, &doc.header.instruction) {
            (Some(line), Some(instruction)) => out.push_str(&format!(
                "Instruction line: {line}\nInstruction: {instruction}\n"
            )),
            _ => out.push_str("Instruction: none (keep it accurate and concise)\n"),
        }
        out.push_str(&format!(
            "Current content (already read for you):\n<content>\n{}\n</content>\n</magic-doc>\n",
            doc.content.trim_end_matches('\n')
        ));
    }
    out.push_str("</magic-docs-update>");
    out
}

/// The Magic Docs fork's `can_use_tool`: Edit of `files` only (resolved paths), as the
/// permission engine judges it for the session's project in `acceptEdits` mode with the
/// session's deny and ask rules; anything else is refused with a reason the model can read.
pub(crate) fn magic_docs_policy(
    files: &[PathBuf],
    project: Option<&PermissionContext>,
) -> ForkPolicy {
    let scope = project
        .map_or_else(ForkScope::working_directory, ForkScope::project)
        .in_mode(PermissionMode::AcceptEdits);
    let writable = WritableFiles::new(files);
    let names = writable
        .files()
        .iter()
        .map(|f| f.display().to_string())
        .collect::<Vec<_>>()
        .join(", ");
    ForkPolicy::judged_in(scope, MagicDocsRefusals { names })
        .only_tools(&["Edit"])
        .may_write(writable)
}

/// How the Magic Docs fork's refusals read.
struct MagicDocsRefusals {
    /// The tracked files, for the model to read.
    names: String,
}

impl Refusals for MagicDocsRefusals {
    fn tool_not_allowed(&self, tool: &dyn Tool, _input: &Value) -> String {
        format!(
            "The Magic Docs agent may only use Edit on {}; `{}` is not available to it.",
            self.names,
            tool.name()
        )
    }

    fn write_refused(&self, _tool: &dyn Tool, file_path: &str, _why: &str) -> String {
        format!(
            "Edit refused: `{file_path}` is not a tracked Magic Doc. The Magic Docs agent may \
             edit only {}.",
            self.names
        )
    }

    fn judged(&self, _tool: &dyn Tool, message: &str, _context: &PermissionContext) -> String {
        format!(
            "Edit refused: {message}. The Magic Docs agent cannot ask for permission; leave \
             this file as it is."
        )
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::fork_changes::billed_equivalent_input;

    /// The outcome's JSON as `stream-json` printed it when the job built it by hand: the same
    /// keys in the same order, the same numbers.
    #[test]
    fn the_outcome_prints_the_bytes_stream_json_has_always_shown() {
        fn usage_json(usage: &Usage) -> Value {
            json!({
                "input_tokens": usage.input_tokens,
                "cache_read_input_tokens": usage.cache_read_input_tokens,
                "cache_creation_input_tokens": usage.cache_creation_input_tokens,
                "output_tokens": usage.output_tokens,
                "billed_equivalent_input": billed_equivalent_input(usage),
            })
        }
        let usage = Usage {
            input_tokens: 7,
            cache_read_input_tokens: 8000,
            cache_creation_input_tokens: 0,
            output_tokens: 90,
            ..Usage::default()
        };
        let fork = |updated: &[&str]| MagicDocsFork {
            tracked: vec!["/p/docs/a.md".into(), "/p/docs/b.md".into()],
            updated: updated.iter().map(|u| (*u).to_owned()).collect(),
            requests: 1,
            cost_usd: 0.004_2,
            usage,
            first_request_usage: Some(usage),
        };
        let old_run = |status: &str, updated: &[&str]| {
            json!({
                "status": status,
                "tracked": ["/p/docs/a.md", "/p/docs/b.md"],
                "updated": updated,
                "requests": 1,
                "cost_usd": 0.004_2,
                "usage": usage_json(&usage),
                "first_request_usage": usage_json(&usage),
            })
        };
        let runs = vec![
            MagicDocsRun::Unchanged(fork(&[])),
            MagicDocsRun::Updated(fork(&["/p/docs/a.md"])),
            MagicDocsRun::NothingTracked,
        ];
        let old = json!({
            "status": "nothing_tracked",
            "updated": ["/p/docs/a.md"],
            "runs": [
                old_run("unchanged", &[]),
                old_run("updated", &["/p/docs/a.md"]),
                json!({"status": "nothing_tracked"}),
            ],
            "error": "the Magic Docs read task failed: gone",
        });
        let outcome = DocsUpdate {
            docs: MagicDocs::new(),
            project: None,
        }
        .outcome(runs, Some(MagicDocsError::Join("gone".into())));
        assert_eq!(outcome.summary, "updated magic doc /p/docs/a.md");
        assert_eq!(
            serde_json::to_string(&outcome.data()).unwrap(),
            serde_json::to_string(&old).unwrap()
        );
    }
}
