//! The Magic Docs fork (seed 001 §16.2.4 ③): after each main turn with tracked files, a
//! [`BackgroundJob`] forks on the parent's prompt cache (the saved `CacheSafeParams`, as
//! extraction does) and lets the fork Edit the tracked files, and nothing else, to keep them
//! true to what the conversation established.
//!
//! - The prompt names each file's absolute path, quotes its `# MAGIC DOC:` line and its
//!   instruction, and gives its current text; the fork's file-state cache holds exactly that
//!   text, so Edit's read-before-write check passes for it and fails if the file moved on.
//! - [`MagicDocsSandbox`] is the fork's `can_use_tool`: Edit of a tracked file (on the path
//!   the permission engine resolves), judged by the engine for the session's project with its
//!   deny and ask rules (an ask is a denial: a fork cannot ask); every other call is refused.
//!   The tool array is not filtered (it is part of the cache key).
//! - One run at a time; a turn that ends during a run is stashed and a trailing run follows.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::SystemTime;

use futures::future::BoxFuture;
use serde_json::{Value, json};
use tine_api_client::{ContentBlock, Message, MessageContent, ToolUseBlock, Usage};
use tine_fork_runtime::{
    BackgroundJob, ForkError, ForkParams, JobContext, JobError, JobOutcome, run_forked_agent,
};
use tine_permissions::{
    PermissionContext, PermissionDecision, PermissionMode, PermissionQuery, RuleBehavior,
    SourcedRule, resolve_path,
};
use tine_query_loop::{CanUseTool, EndAfterTools, PermissionOutcome, Terminal};
use tine_tools::{FileStateCache, Tool, ToolContext};

use crate::fork_changes::billed_equivalent_input;
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

#[derive(Default)]
struct State {
    running: bool,
    /// The latest turn that ended during a run.
    pending: Option<JobContext>,
}

/// The Magic Docs job: register one per main-thread session, sharing its [`MagicDocs`] with
/// the Read listener on the session's tool context.
#[derive(Clone)]
pub struct MagicDocsJob {
    docs: MagicDocs,
    project: Option<Arc<PermissionContext>>,
    state: Arc<Mutex<State>>,
}

impl MagicDocsJob {
    /// A job updating what `docs` tracks; with `project` (the session's permissions) the
    /// fork's edits are judged by its rules, else by the fork's working directory alone.
    pub fn new(docs: MagicDocs, project: Option<&PermissionContext>) -> Self {
        Self {
            docs,
            project: project.map(|p| Arc::new(p.clone())),
            state: Arc::default(),
        }
    }

    /// The tracked files.
    pub fn docs(&self) -> &MagicDocs {
        &self.docs
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs one update for `ctx` now, whether or not another is running (tests).
    pub async fn update_once(&self, ctx: &JobContext) -> Result<Value, MagicDocsError> {
        let docs = current_docs(&self.docs).await?;
        if docs.is_empty() {
            return Ok(json!({"status": "nothing_tracked"}));
        }
        let paths: Vec<PathBuf> = docs.iter().map(|d| d.path.clone()).collect();
        let sandbox = Arc::new(MagicDocsSandbox::new(&paths, self.project.as_deref()));
        let file_state = Arc::new(FileStateCache::new());
        for doc in &docs {
            file_state.record(&doc.path, doc.content.as_bytes(), doc.mtime);
        }
        let mut params = ForkParams::new(
            Arc::clone(&ctx.cache_safe),
            vec![Message::user(vec![ContentBlock::text(build_prompt(&docs))])],
            Arc::clone(&sandbox) as Arc<dyn CanUseTool>,
            MAGIC_DOCS_JOB,
        );
        params.max_turns = Some(MAGIC_DOCS_MAX_TURNS);
        params.skip_transcript = true;
        // Reads the parent's whole prefix and writes no entry of its own (read by no one).
        params.skip_cache_write = true;
        // Never set: it would change the thinking budget and so the cache key.
        params.max_output_tokens = None;
        params.overrides.file_state = Some(file_state);
        params.end_after_tools = Some(end_after_edits(Arc::clone(&sandbox), ctx));
        let result = run_forked_agent(&ctx.parent, params).await?;
        match &result.terminal {
            Terminal::Completed | Terminal::MaxTurns { .. } => {}
            other @ (Terminal::Aborted
            | Terminal::PromptTooLong { .. }
            | Terminal::ModelError { .. }
            | Terminal::BlockingLimit { .. }
            | Terminal::StopHookPrevented { .. }
            | Terminal::RepeatedToolFailure { .. }) => {
                return Err(MagicDocsError::Unfinished(other.describe()));
            }
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
        Ok(json!({
            "status": if updated.is_empty() { "unchanged" } else { "updated" },
            "tracked": paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
            "updated": updated,
            "requests": result.requests,
            "cost_usd": result.cost_usd,
            "usage": usage_json(&result.usage),
            "first_request_usage": result.first_request_usage.as_ref().map(usage_json),
        }))
    }
}

impl BackgroundJob for MagicDocsJob {
    fn name(&self) -> &str {
        MAGIC_DOCS_JOB
    }

    /// After every turn while a file is tracked; a turn that ends during a run is kept for
    /// the trailing run instead.
    fn should_run(&self, ctx: &JobContext) -> bool {
        if self.docs.is_empty() {
            return false;
        }
        let mut state = self.lock();
        if state.running {
            state.pending = Some(ctx.clone());
            return false;
        }
        true
    }

    fn run(&self, ctx: JobContext) -> BoxFuture<'static, Result<JobOutcome, JobError>> {
        let job = self.clone();
        {
            let mut state = job.lock();
            if state.running {
                state.pending = Some(ctx);
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
            let mut guard = Running {
                job: job.clone(),
                armed: true,
            };
            let mut ctx = ctx;
            let mut runs = Vec::new();
            let mut last_error = None;
            loop {
                match job.update_once(&ctx).await {
                    Ok(run) => runs.push(run),
                    Err(error) => {
                        tracing::warn!(%error, "magic docs update failed");
                        last_error = Some(error);
                    }
                }
                let mut state = job.lock();
                match state.pending.take() {
                    Some(next) => ctx = next,
                    None => {
                        state.running = false;
                        guard.armed = false;
                        break;
                    }
                }
            }
            if runs.is_empty()
                && let Some(error) = last_error
            {
                return Err(Box::new(error) as JobError);
            }
            let mut updated: Vec<String> = Vec::new();
            for run in &runs {
                for path in run["updated"].as_array().into_iter().flatten() {
                    if let Some(path) = path.as_str()
                        && !updated.iter().any(|u| u == path)
                    {
                        updated.push(path.to_owned());
                    }
                }
            }
            let summary = match updated.len() {
                0 => String::new(),
                1 => format!("updated magic doc {}", updated[0]),
                n => format!("updated {n} magic docs: {}", updated.join(", ")),
            };
            Ok(JobOutcome {
                summary,
                data: json!({
                    "status": runs.last().map_or(json!("failed"), |r| r["status"].clone()),
                    "updated": updated,
                    "runs": runs,
                    "error": last_error.map(|e| e.to_string()),
                }),
            })
        })
    }
}

/// Clears `running` (and the stash) when a run is dropped midway (the session was cancelled).
struct Running {
    job: MagicDocsJob,
    armed: bool,
}

impl Drop for Running {
    fn drop(&mut self) {
        if self.armed {
            let mut state = self.job.lock();
            state.running = false;
            state.pending = None;
        }
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

/// Ends the fork once a turn did nothing but successful Edits of tracked files: a closing
/// reply would cost a request nobody reads.
fn end_after_edits(sandbox: Arc<MagicDocsSandbox>, ctx: &JobContext) -> EndAfterTools {
    let cwd = ctx.parent.tool_context.cwd();
    Arc::new(move |calls: &[ToolUseBlock], results: &Message| {
        let all_edits = !calls.is_empty()
            && calls.iter().all(|call| {
                call.name == "Edit"
                    && call
                        .input
                        .get("file_path")
                        .and_then(Value::as_str)
                        .is_some_and(|p| sandbox.tracked_path(p, &cwd).is_some())
            });
        let all_succeeded = match &results.content {
            MessageContent::Blocks(blocks) => blocks.iter().all(|b| match b {
                ContentBlock::ToolResult(r) => r.is_error != Some(true),
                _ => true,
            }),
            MessageContent::Text(_) => true,
        };
        all_edits && all_succeeded
    })
}

/// The Magic Docs fork's `can_use_tool`: Edit of a tracked file, as the permission engine
/// judges it for the session's project in `acceptEdits` mode with the session's deny and ask
/// rules; anything else is refused with a reason the model can read.
#[derive(Debug, Clone)]
pub struct MagicDocsSandbox {
    /// The tracked files, resolved by the engine's resolver.
    files: Vec<PathBuf>,
    cwd: Option<PathBuf>,
    additional_directories: Vec<PathBuf>,
    home: Option<PathBuf>,
    rules: Vec<SourcedRule>,
}

impl MagicDocsSandbox {
    /// A sandbox allowing Edit of `files` only, under `project`'s deny and ask rules when given.
    pub fn new(files: &[PathBuf], project: Option<&PermissionContext>) -> Self {
        Self {
            files: files.iter().map(|f| resolve_path(f)).collect(),
            cwd: project.map(|p| p.cwd.clone()),
            additional_directories: project
                .map(|p| p.additional_directories.clone())
                .unwrap_or_default(),
            home: project.and_then(|p| p.home.clone()),
            rules: project
                .map(|p| {
                    p.rules()
                        .iter()
                        .filter(|r| r.behavior != RuleBehavior::Allow)
                        .cloned()
                        .collect()
                })
                .unwrap_or_default(),
        }
    }

    /// The tracked file `file_path` (resolved against `cwd` as Edit resolves it, then through
    /// symlinks) is, if any.
    pub fn tracked_path(&self, file_path: &str, cwd: &Path) -> Option<PathBuf> {
        if file_path.is_empty() || file_path.chars().any(char::is_control) {
            return None;
        }
        let resolved = resolve_path(&tine_permissions::normalize(&cwd.join(file_path)));
        self.files.iter().find(|f| **f == resolved).cloned()
    }

    /// The decision for one call.
    pub fn decide(&self, tool: &dyn Tool, input: &Value, ctx: &ToolContext) -> PermissionOutcome {
        let names = || {
            self.files
                .iter()
                .map(|f| f.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        if tool.name() != "Edit" {
            return PermissionOutcome::Deny {
                reason: format!(
                    "The Magic Docs agent may only use Edit on {}; `{}` is not available to it.",
                    names(),
                    tool.name()
                ),
            };
        }
        let file_path = input.get("file_path").and_then(Value::as_str).unwrap_or("");
        if self.tracked_path(file_path, &ctx.cwd()).is_none() {
            return PermissionOutcome::Deny {
                reason: format!(
                    "Edit refused: `{file_path}` is not a tracked Magic Doc. The Magic Docs \
                     agent may edit only {}.",
                    names()
                ),
            };
        }
        let cwd = self.cwd.clone().unwrap_or_else(|| ctx.cwd());
        let mut permissions = PermissionContext::new(PermissionMode::AcceptEdits, cwd);
        permissions.additional_directories = self.additional_directories.clone();
        permissions.home = self.home.clone();
        for rule in &self.rules {
            permissions.add_rule(rule.clone());
        }
        let target = tool.permission_target(input, ctx);
        let verdict = tool.check_permissions(input, ctx);
        let request = PermissionQuery {
            tool: tool.name(),
            target: &target,
            verdict: &verdict,
            is_read_only: tool.is_read_only(input),
        };
        match permissions.decide(&request) {
            PermissionDecision::Allow { .. } => PermissionOutcome::Allow {
                updated_input: None,
            },
            PermissionDecision::Ask { message, .. } | PermissionDecision::Deny { message, .. } => {
                PermissionOutcome::Deny {
                    reason: format!(
                        "Edit refused: {message}. The Magic Docs agent cannot ask for \
                         permission; leave this file as it is."
                    ),
                }
            }
        }
    }
}

impl CanUseTool for MagicDocsSandbox {
    fn check<'a>(
        &'a self,
        tool: &'a dyn Tool,
        input: &'a Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, PermissionOutcome> {
        let outcome = self.decide(tool, input, ctx);
        if let PermissionOutcome::Deny { reason } = &outcome {
            tracing::debug!(tool = tool.name(), %reason, "magic docs sandbox denied a call");
        }
        Box::pin(async move { outcome })
    }
}

fn usage_json(usage: &Usage) -> Value {
    json!({
        "input_tokens": usage.input_tokens,
        "cache_read_input_tokens": usage.cache_read_input_tokens,
        "cache_creation_input_tokens": usage.cache_creation_input_tokens,
        "output_tokens": usage.output_tokens,
        "billed_equivalent_input": billed_equivalent_input(usage),
    })
}
