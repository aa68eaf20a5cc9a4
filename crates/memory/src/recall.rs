//! Recall (seed 000 §8.3, `findRelevantMemories`): on each user turn, pick the few memories
//! that help with the prompt and attach them to that turn.
//!
//! The topic files are scanned (newest first, at most 200, frontmatter from the first 30
//! lines); a side query with a JSON schema (`{selected_memories: [...]}`, `max_tokens` 256)
//! picks at most 5 not already shown in this session; each is attached cut to 200 lines /
//! 4 KB, and a session attaches at most 60 KB in all. Single-word prompts ("continue") and
//! acknowledgements ("ok thanks, looks good": [`crate::batch::is_acknowledgement`]) recall
//! nothing.
//!
//! What costs nothing is not asked for: with no candidate (an empty directory, everything
//! shown already) no side query is sent; memories this session's own extraction saved
//! ([`SessionMemories`]) are not candidates, because they came from this very conversation;
//! and when the candidates are small together ([`RECALL_INLINE_BYTES`]) they are attached
//! without asking, at most [`RECALL_MAX_FILES`] a turn, each once.
//!
//! What must be asked is asked on a cached prefix: the selection query's system prompt and the
//! manifest come first, with a cache breakpoint after the manifest, and the user's prompt
//! after it. The manifest changes only when a memory is shown or saved, so from the second
//! turn on the query reads it from the cache (once it is long enough to be cached at all:
//! 1024 tokens on most models; a shorter one costs little uncached).

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use futures::future::BoxFuture;
use serde_json::{Value, json};
use tine_api_client::{CacheControl, ContentBlock, Message, TextBlock, Usage};
use tine_fork_runtime::{SideModel, SideQueryError};
use tine_query_loop::utc_date;

use crate::batch::is_acknowledgement;
use crate::topic::{MemoryHeader, scan_memories};

/// Memory files considered per turn.
pub(crate) const RECALL_SCAN_LIMIT: usize = 200;
/// Memories attached per turn.
pub(crate) const RECALL_MAX_FILES: usize = 5;
/// Lines of one attached memory.
pub(crate) const RECALL_MAX_LINES: usize = 200;
/// Bytes of one attached memory.
pub(crate) const RECALL_MAX_FILE_BYTES: usize = 4 * 1024;
/// Bytes attached over a whole session.
pub(crate) const RECALL_MAX_SESSION_BYTES: usize = 60 * 1024;
/// The selection query's output cap: a list of file names needs no more.
pub(crate) const RECALL_MAX_TOKENS: u32 = 256;
/// The query source recall's side queries are billed to.
pub(crate) const RECALL_QUERY_SOURCE: &str = "memory_recall";
/// When every candidate together is at most this big, they are attached without a selection
/// query, [`RECALL_MAX_FILES`] a turn: the query, sent on every turn until it picks them (its
/// manifest too short to be cached), costs more than attaching them once (they then sit in the
/// cached conversation at a tenth of the price).
pub(crate) const RECALL_INLINE_BYTES: usize = 4 * 1024;
/// Opens the selection query's user message (mock scenarios match on it).
pub const RECALL_MARKER: &str = "<memory-recall>";

const SELECTOR_SYSTEM_PROMPT: &str = "\
You select memories for a coding agent. You are given the user's latest message and a list of \
memory files saved in earlier sessions (file name, [type], name: description). Choose the files \
whose content will clearly help the agent respond to this message: facts about the user, the \
project, feedback on how to work, or references it will need. Choose at most 5, the most useful \
first. Choose none when nothing is clearly relevant; do not choose memories that are only \
loosely related. Use the file names exactly as listed.";

/// The memories a session learned itself (file names relative to the memory directory),
/// shared by its extraction job, which adds what it saves, and its [`Recall`], which does not
/// offer them back.
#[derive(Debug, Clone, Default)]
pub struct SessionMemories {
    files: Arc<Mutex<HashSet<String>>>,
}

impl SessionMemories {
    /// No memory shown yet.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, HashSet<String>> {
        self.files.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records `files` as shown.
    pub fn extend<S: AsRef<str>>(&self, files: &[S]) {
        let mut set = self.lock();
        for file in files {
            set.insert(file.as_ref().to_owned());
        }
    }

    /// Whether `file` was shown already.
    pub fn contains(&self, file: &str) -> bool {
        self.lock().contains(file)
    }
}

/// Why recall gave no attachment.
#[derive(Debug, thiserror::Error)]
pub enum RecallError {
    /// The selecting side query failed.
    #[error("memory recall: {0}")]
    SideQuery(#[from] SideQueryError),
    /// The task scanning the memory directory panicked or was cancelled.
    #[error("memory recall: the scan task failed: {0}")]
    Join(String),
}

/// Picks the relevant memories for a prompt. [`SideQuerySelector`] asks the model; tests and
/// hosts may plug in their own.
pub trait MemorySelector: Send + Sync {
    /// File names (as in `manifest`) of at most `limit` memories that help with `prompt`.
    fn select<'a>(
        &'a self,
        prompt: &'a str,
        manifest: &'a str,
        limit: usize,
    ) -> BoxFuture<'a, Result<Selection, RecallError>>;
}

/// What a selector chose, and what choosing cost.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Selection {
    /// The chosen files (relative to the memory directory), most relevant first.
    pub files: Vec<String>,
    /// What choosing used.
    pub usage: Usage,
}

/// The selector of seed 000 §8.3: one `side_query` with a JSON schema, `max_tokens` 256, its
/// own system prompt (the CLI prefix skipped), billed to `memory_recall`.
pub type SideQuerySelector = SideModel;

/// The schema of the selection answer.
pub(crate) fn selection_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "selected_memories": {
                "type": "array",
                "items": {"type": "string"},
                "description": "file names of the chosen memories, most useful first"
            }
        },
        "required": ["selected_memories"]
    })
}

/// The selection query's user message: the manifest first, ending in a cache breakpoint (it
/// is the same from turn to turn), then the prompt (new every turn).
pub(crate) fn selection_message(prompt: &str, manifest: &str, limit: usize) -> Message {
    let manifest = TextBlock::new(format!(
        "{RECALL_MARKER}\nMemory files (choose at most {limit}):\n{manifest}\n"
    ))
    .with_cache_control(CacheControl::ephemeral());
    let prompt = format!("The user's message:\n{prompt}\n</memory-recall>");
    Message::user(vec![
        ContentBlock::Text(manifest),
        ContentBlock::text(prompt),
    ])
}

impl MemorySelector for SideModel {
    fn select<'a>(
        &'a self,
        prompt: &'a str,
        manifest: &'a str,
        limit: usize,
    ) -> BoxFuture<'a, Result<Selection, RecallError>> {
        Box::pin(async move {
            let query = self
                .query(
                    RECALL_QUERY_SOURCE,
                    vec![selection_message(prompt, manifest, limit)],
                )
                .with_system(SELECTOR_SYSTEM_PROMPT)
                .skipping_system_prefix()
                .with_schema(selection_schema())
                .with_max_tokens(RECALL_MAX_TOKENS);
            let result = self.ask(&query).await?;
            let files = result
                .json
                .as_ref()
                .and_then(|v| v.get("selected_memories"))
                .and_then(Value::as_array)
                .map(|list| {
                    list.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default();
            Ok(Selection {
                files,
                usage: result.usage,
            })
        })
    }
}

/// What recall attaches to one turn.
#[derive(Debug, Clone, PartialEq)]
pub struct RecallAttachment {
    /// A `<system-reminder>` block to put before the user's prompt in that turn's message.
    pub text: String,
    /// The attached files, relative to the memory directory.
    pub files: Vec<String>,
    /// Bytes of memory content attached this turn.
    pub bytes: usize,
    /// What the selection query cost.
    pub usage: Usage,
}

#[derive(Debug, Default)]
struct RecallState {
    shown: HashSet<PathBuf>,
    bytes_used: usize,
}

/// Recall for one session: remembers what it already showed and how much.
pub struct Recall {
    dir: PathBuf,
    selector: Arc<dyn MemorySelector>,
    learned: SessionMemories,
    inline_bytes: usize,
    /// The memory text the conversation already holds (the index in its first message):
    /// a memory whose whole text is in it is not attached again.
    context: Mutex<Option<Arc<str>>>,
    state: Mutex<RecallState>,
}

impl Recall {
    /// Recall over the memory directory `dir`, choosing with `selector`.
    pub fn new(dir: impl Into<PathBuf>, selector: Arc<dyn MemorySelector>) -> Self {
        Self {
            dir: dir.into(),
            selector,
            learned: SessionMemories::default(),
            inline_bytes: RECALL_INLINE_BYTES,
            context: Mutex::new(None),
            state: Mutex::new(RecallState::default()),
        }
    }

    /// The memory text the conversation starts with (the `MEMORY.md` index as the session's
    /// context renders it): a one-line memory whose index line already says all of it is not
    /// attached (it would only repeat, uncached once and cached on every later turn).
    pub fn with_context(self, context: impl Into<Arc<str>>) -> Self {
        *self.context.lock().unwrap_or_else(PoisonError::into_inner) = Some(context.into());
        self
    }

    /// Forgets that context: a resumed conversation starts with the index as it was then,
    /// not as it is now.
    pub fn forget_context(&self) {
        *self.context.lock().unwrap_or_else(PoisonError::into_inner) = None;
    }

    /// Whether the conversation's context already holds all of `content` (its text after the
    /// frontmatter, without a final period).
    fn in_context(&self, content: &str) -> bool {
        let context = self.context.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(context) = context.as_deref() else {
            return false;
        };
        let body = without_frontmatter(content).trim().trim_end_matches('.');
        !body.is_empty() && !body.contains('\n') && context.contains(body)
    }

    /// Attaches the candidates without a selection query up to `bytes` in all (0: always ask).
    pub fn with_inline_bytes(mut self, bytes: usize) -> Self {
        self.inline_bytes = bytes;
        self
    }

    /// Leaves out the memories in `learned` (what this session saved itself).
    pub fn with_learned(mut self, learned: SessionMemories) -> Self {
        self.learned = learned;
        self
    }

    fn lock(&self) -> MutexGuard<'_, RecallState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Bytes attached so far in this session.
    pub fn bytes_used(&self) -> usize {
        self.lock().bytes_used
    }

    /// The memories to attach to the turn starting with `prompt`, if any.
    pub async fn attachment_for(
        &self,
        prompt: &str,
    ) -> Result<Option<RecallAttachment>, RecallError> {
        if prompt.split_whitespace().nth(1).is_none() || is_acknowledgement(prompt) {
            return Ok(None);
        }
        if self.lock().bytes_used >= RECALL_MAX_SESSION_BYTES {
            return Ok(None);
        }
        let dir = self.dir.clone();
        let scan = tokio::task::spawn_blocking(move || scan_memories(&dir, RECALL_SCAN_LIMIT))
            .await
            .map_err(|e| RecallError::Join(e.to_string()))?;
        let candidates: Vec<MemoryHeader> = {
            let state = self.lock();
            scan.memories
                .into_iter()
                .filter(|m| !state.shown.contains(&m.path) && !self.learned.contains(&m.file_name))
                .collect()
        };
        if candidates.is_empty() {
            return Ok(None);
        }
        let selection = if self.fits_inline(&candidates).await {
            Selection {
                files: candidates.iter().map(|m| m.file_name.clone()).collect(),
                usage: Usage::default(),
            }
        } else {
            let manifest = candidates
                .iter()
                .map(MemoryHeader::manifest_line)
                .collect::<Vec<_>>()
                .join("\n");
            self.selector
                .select(prompt, &manifest, RECALL_MAX_FILES)
                .await?
        };
        let mut chosen: Vec<&MemoryHeader> = Vec::new();
        for name in &selection.files {
            let name = name.trim();
            if let Some(m) = candidates.iter().find(|m| m.file_name == name)
                && !chosen.iter().any(|c| c.path == m.path)
            {
                chosen.push(m);
            }
            if chosen.len() == RECALL_MAX_FILES {
                break;
            }
        }
        let mut sections = Vec::new();
        let mut files = Vec::new();
        let mut bytes = 0;
        for memory in chosen {
            let Some(content) = read_capped(&memory.path).await else {
                continue;
            };
            if self.in_context(&content) {
                // Shown already, by the index: not offered again.
                self.lock().shown.insert(memory.path.clone());
                continue;
            }
            let mut state = self.lock();
            if state.bytes_used + content.len() > RECALL_MAX_SESSION_BYTES {
                tracing::debug!("memory recall reached its per-session budget");
                break;
            }
            state.bytes_used += content.len();
            state.shown.insert(memory.path.clone());
            drop(state);
            bytes += content.len();
            sections.push(render_memory(memory, &content));
            files.push(memory.file_name.clone());
        }
        if files.is_empty() {
            return Ok(None);
        }
        let text = format!(
            "<system-reminder>\nMemories from earlier sessions (files in {}) that may help with \
             this request (they record what was true when saved; check them against the code \
             before relying on them):\n\n{}\n</system-reminder>",
            self.dir.display(),
            sections.join("\n\n")
        );
        Ok(Some(RecallAttachment {
            text,
            files,
            bytes,
            usage: selection.usage,
        }))
    }
}

impl Recall {
    /// Whether `candidates` are small enough together to attach without asking (the first
    /// [`RECALL_MAX_FILES`] this turn, the rest on the next ones).
    async fn fits_inline(&self, candidates: &[MemoryHeader]) -> bool {
        if self.inline_bytes == 0 {
            return false;
        }
        let mut total = 0u64;
        for memory in candidates {
            match tokio::fs::metadata(&memory.path).await {
                Ok(meta) => total += meta.len(),
                Err(_) => return false,
            }
        }
        total <= self.inline_bytes as u64
    }
}

/// One attached memory: its file name (the attachment names the directory once), type and date, then its text without the frontmatter (its
/// name and description are in the index the session already has), the description first
/// when the text does not say it.
fn render_memory(memory: &MemoryHeader, content: &str) -> String {
    let kind = memory
        .frontmatter
        .kind
        .map_or_else(String::new, |k| format!("{k}, "));
    let body = without_frontmatter(content).trim();
    let description = memory
        .frontmatter
        .description
        .as_deref()
        .filter(|d| !body.contains(d.trim_end_matches('.')))
        .map_or_else(String::new, |d| format!("{d}\n"));
    format!(
        "## {} ({kind}saved {})\n{description}{body}",
        memory.file_name,
        utc_date(memory.modified),
    )
}

/// `text` after its frontmatter block (all of it when there is none).
fn without_frontmatter(text: &str) -> &str {
    let body = text.trim_start_matches('\u{feff}');
    let mut lines = body.split_inclusive('\n');
    if lines.next().map(str::trim_end) != Some("---") {
        return text;
    }
    let mut start = 0;
    for (i, line) in body.split_inclusive('\n').enumerate() {
        start += line.len();
        if i > 0 && line.trim_end() == "---" {
            return &body[start..];
        }
    }
    text
}

/// A memory's text cut to [`RECALL_MAX_LINES`] lines and [`RECALL_MAX_FILE_BYTES`] bytes, with
/// a note when cut. `None` when it cannot be read.
async fn read_capped(path: &Path) -> Option<String> {
    let bytes = tokio::fs::read(path).await.ok()?;
    let text = String::from_utf8_lossy(&bytes);
    Some(cap_text(&text, path))
}

fn cap_text(text: &str, path: &Path) -> String {
    let mut out = String::new();
    let mut cut = false;
    for (i, line) in text.lines().enumerate() {
        if i == RECALL_MAX_LINES {
            cut = true;
            break;
        }
        if out.len() + line.len() + 1 > RECALL_MAX_FILE_BYTES {
            let room = RECALL_MAX_FILE_BYTES.saturating_sub(out.len());
            let mut end = room.min(line.len());
            while !line.is_char_boundary(end) {
                end -= 1;
            }
            out.push_str(&line[..end]);
            cut = true;
            break;
        }
        out.push_str(line);
        out.push('\n');
    }
    if cut {
        out.push_str(&format!(
            "\n[... cut to {RECALL_MAX_LINES} lines / {RECALL_MAX_FILE_BYTES} bytes; read {} for the rest]",
            path.display()
        ));
    }
    out
}

#[cfg(test)]
#[path = "recall_tests.rs"]
mod tests;
