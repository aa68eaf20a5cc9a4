//! The cache-break detector: when a request that should have read the previous request's
//! cached prefix did not (its usage says how many tokens were read), name the part of the cache
//! key that changed since: the model, a tool, the system prompt, the thinking config, or the
//! first differing message.
//!
//! Only hashes are kept ([`RequestFingerprint`]), never copies of prompts. They are stored with
//! the session as `cache_hashes` transcript annotations, so a resumed session (a new process)
//! compares its first request against the last request of the run before it. Each annotation
//! holds only what changed since the one before (`cache_break_record`), so it has the same size
//! at request 10 and at request 1000, and the transcript grows linearly.
//!
//! Nothing in the key changed but fewer tokens were read (TTL expiry, eviction, more than 20
//! new blocks past the lookback window): not an alarm, only a debug log.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tine_api_client::{Message, MessagesRequest, Role, SystemPrompt, Usage};
use tine_query_loop::{Annotation, RequestMonitor, TranscriptRecord};

#[path = "cache_break_record.rs"]
mod record;

use record::{HashesRecord, replay};

/// The transcript record kind the detector writes and reads back on resume.
pub const CACHE_HASHES_KIND: &str = "cache_hashes";
/// The annotation written where compaction changed the prefix on purpose: a resumed session
/// forgets its reference there too.
pub const CACHE_RESET_KIND: &str = "cache_reset";

/// How many breaks the detector keeps for the host to show.
pub const KEPT_BREAKS: usize = 32;

/// One tool of the request's array: its name and the hash of its definition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolHash {
    /// The tool's name.
    pub name: String,
    /// The hash of its definition's bytes.
    pub hash: String,
}

/// Stable hashes of everything in a request that is part of the prompt-cache key, with
/// `cache_control` removed (moving a breakpoint does not change the key). 128-bit SHA-256
/// prefixes, in hex.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestFingerprint {
    /// The model name (not a prompt; the cache is per model).
    pub model: String,
    /// The system blocks (a string system counts as one text block).
    pub system: String,
    /// Each tool definition, in order.
    pub tools: Vec<ToolHash>,
    /// The thinking config and `tool_choice` (they enter the key where the messages start).
    pub thinking: String,
    /// Running hash per message: entry `i` covers messages `0..=i`, so the first entry that
    /// differs between two fingerprints is the first differing message.
    pub messages: Vec<String>,
    /// Serialized size of the prompt (tools, system, messages) in bytes; about 4 per token.
    pub prompt_bytes: u64,
}

fn hex(digest: &[u8]) -> String {
    use std::fmt::Write;
    let mut out = String::with_capacity(32);
    for byte in digest.iter().take(16) {
        let _ = write!(out, "{byte:02x}");
    }
    out
}

fn hash_bytes(parts: &[&[u8]]) -> String {
    let mut hasher = Sha256::new();
    for part in parts {
        hasher.update((part.len() as u64).to_le_bytes());
        hasher.update(part);
    }
    hex(&hasher.finalize())
}

/// Removes a block's `cache_control`, and that of the blocks inside a `tool_result`.
fn strip_block(block: &mut Value) {
    let Some(object) = block.as_object_mut() else {
        return;
    };
    object.shift_remove("cache_control");
    if object.get("type").and_then(Value::as_str) == Some("tool_result")
        && let Some(Value::Array(inner)) = object.get_mut("content")
    {
        for item in inner {
            if let Some(o) = item.as_object_mut() {
                o.shift_remove("cache_control");
            }
        }
    }
}

/// A content (string or blocks) as canonical block bytes: a string is one text block.
fn content_bytes(content: Value) -> Vec<u8> {
    let mut blocks = match content {
        Value::String(text) => vec![json!({"type": "text", "text": text})],
        Value::Array(blocks) => blocks,
        other => vec![other],
    };
    for block in &mut blocks {
        strip_block(block);
        // Keys in sorted order, whatever order the value was built in: the fingerprints
        // recorded before stay comparable.
        block.sort_all_objects();
    }
    serde_json::to_vec(&blocks).unwrap_or_default()
}

fn system_bytes(system: Option<&SystemPrompt>) -> Vec<u8> {
    match system {
        None => Vec::new(),
        Some(SystemPrompt::Text(text)) => content_bytes(Value::String(text.clone())),
        Some(SystemPrompt::Blocks(blocks)) => {
            let values = blocks
                .iter()
                .map(|b| {
                    let mut v = serde_json::to_value(b).unwrap_or(Value::Null);
                    if let Some(o) = v.as_object_mut() {
                        o.insert("type".to_owned(), Value::from("text"));
                    }
                    v
                })
                .collect();
            content_bytes(Value::Array(values))
        }
    }
}

fn role_tag(role: Role) -> &'static [u8] {
    match role {
        Role::User => b"user",
        Role::Assistant => b"assistant",
    }
}

fn message_bytes(message: &Message) -> Vec<u8> {
    let content = serde_json::to_value(&message.content).unwrap_or(Value::Null);
    content_bytes(content)
}

impl RequestFingerprint {
    /// The fingerprint of `request`. Deterministic: the same request always gives the same one.
    pub fn of(request: &MessagesRequest) -> Self {
        let mut prompt_bytes = 0u64;
        let mut tools = Vec::with_capacity(request.tools.len());
        for tool in request.tools.iter() {
            let mut tool = tool.clone();
            tool.cache_control = None;
            let bytes = serde_json::to_vec(&tool).unwrap_or_default();
            prompt_bytes += bytes.len() as u64;
            // A deferred tool is not part of the cached prefix: loading one breaks nothing.
            if !tool.defer_loading {
                tools.push(ToolHash {
                    name: tool.name,
                    hash: hash_bytes(&[&bytes]),
                });
            }
        }
        let system = system_bytes(request.system.as_ref());
        prompt_bytes += system.len() as u64;
        let thinking =
            serde_json::to_vec(&(&request.thinking, &request.tool_choice)).unwrap_or_default();
        let mut running = String::new();
        let messages = request
            .messages
            .iter()
            .map(|message| {
                let bytes = message_bytes(message);
                prompt_bytes += bytes.len() as u64;
                running = hash_bytes(&[running.as_bytes(), role_tag(message.role), &bytes]);
                running.clone()
            })
            .collect();
        Self {
            model: request.model.clone(),
            system: hash_bytes(&[&system]),
            tools,
            thinking: hash_bytes(&[&thinking]),
            messages,
            prompt_bytes,
        }
    }

    /// What changed from `reference` to `self`, taken in cache-prefix order (model, tools,
    /// system, thinking, messages): the earliest change is what broke the prefix.
    /// [`BreakCause::Unknown`] when the reference's whole prompt is still a prefix of this one.
    pub fn diff(&self, reference: &RequestFingerprint) -> BreakCause {
        if self.model != reference.model {
            return BreakCause::Model {
                from: reference.model.clone(),
                to: self.model.clone(),
            };
        }
        if self.tools != reference.tools {
            return diff_tools(&reference.tools, &self.tools);
        }
        if self.system != reference.system {
            return BreakCause::System;
        }
        if self.thinking != reference.thinking {
            return BreakCause::Thinking;
        }
        let common = self.messages.len().min(reference.messages.len());
        if let Some(index) = (0..common).find(|&i| self.messages[i] != reference.messages[i]) {
            return BreakCause::Message { index };
        }
        if self.messages.len() < reference.messages.len() {
            // The history got shorter: the reference's entry (at its last message) is gone.
            return BreakCause::Message { index: common };
        }
        BreakCause::Unknown
    }
}

fn diff_tools(before: &[ToolHash], after: &[ToolHash]) -> BreakCause {
    let old: BTreeMap<&str, &str> = before
        .iter()
        .map(|t| (t.name.as_str(), t.hash.as_str()))
        .collect();
    let new: BTreeMap<&str, &str> = after
        .iter()
        .map(|t| (t.name.as_str(), t.hash.as_str()))
        .collect();
    let changed = after
        .iter()
        .filter(|t| old.get(t.name.as_str()).is_some_and(|h| *h != t.hash))
        .map(|t| t.name.clone())
        .collect();
    let added = after
        .iter()
        .filter(|t| !old.contains_key(t.name.as_str()))
        .map(|t| t.name.clone())
        .collect();
    let removed = before
        .iter()
        .filter(|t| !new.contains_key(t.name.as_str()))
        .map(|t| t.name.clone())
        .collect();
    let common: BTreeSet<&str> = old
        .keys()
        .filter(|n| new.contains_key(*n))
        .copied()
        .collect();
    let order_before: Vec<&str> = before
        .iter()
        .map(|t| t.name.as_str())
        .filter(|n| common.contains(n))
        .collect();
    let order_after: Vec<&str> = after
        .iter()
        .map(|t| t.name.as_str())
        .filter(|n| common.contains(n))
        .collect();
    BreakCause::Tools {
        changed,
        added,
        removed,
        reordered: order_before != order_after,
    }
}

/// Which part of the cache key changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "part", rename_all = "snake_case")]
pub enum BreakCause {
    /// The system prompt's bytes.
    System,
    /// The tool array: definitions that changed, tools added or removed, a new order.
    Tools {
        /// Tools whose definition changed.
        changed: Vec<String>,
        /// Tools added.
        added: Vec<String>,
        /// Tools removed.
        removed: Vec<String>,
        /// Whether the same tools came in another order.
        reordered: bool,
    },
    /// The model.
    Model {
        /// The model before.
        from: String,
        /// The model now.
        to: String,
    },
    /// The thinking config or `tool_choice`.
    Thinking,
    /// The first message (0-based) that differs, or where a shorter history ends.
    Message {
        /// The message's index.
        index: usize,
    },
    /// Nothing in the key changed (TTL expiry, eviction, lookback window): no alarm.
    Unknown,
}

impl fmt::Display for BreakCause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::System => f.write_str("the system prompt changed"),
            Self::Tools {
                changed,
                added,
                removed,
                reordered,
            } => {
                let mut parts = Vec::new();
                if !changed.is_empty() {
                    parts.push(format!("changed {}", changed.join(", ")));
                }
                if !added.is_empty() {
                    parts.push(format!("added {}", added.join(", ")));
                }
                if !removed.is_empty() {
                    parts.push(format!("removed {}", removed.join(", ")));
                }
                if *reordered {
                    parts.push("reordered".to_owned());
                }
                if parts.is_empty() {
                    parts.push("definitions differ".to_owned());
                }
                write!(f, "the tool array changed ({})", parts.join("; "))
            }
            Self::Model { from, to } => write!(f, "the model changed from {from} to {to}"),
            Self::Thinking => f.write_str("the thinking config or tool_choice changed"),
            Self::Message { index } => write!(f, "the history differs from message {index} on"),
            Self::Unknown => {
                f.write_str("nothing in the cache key changed (the entry expired or was evicted)")
            }
        }
    }
}

/// A request that read fewer cached tokens than its reference had cached.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheBreak {
    /// What the reference request had cached (its reads plus writes).
    pub expected_tokens: u64,
    /// What this request read.
    pub read_tokens: u64,
    /// What changed in the cache key, as far as the fingerprints tell.
    pub cause: BreakCause,
}

impl fmt::Display for CacheBreak {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "prompt cache break: read {} of {} cached tokens; {}",
            self.read_tokens, self.expected_tokens, self.cause
        )
    }
}

/// A request's fingerprint with its usage: what the detector compares (and, in transcripts
/// written before the delta records, the payload of each `cache_hashes` annotation).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CacheHashes {
    /// The hashes of the request's cache key.
    pub fingerprint: RequestFingerprint,
    /// What the request used.
    pub usage: Usage,
}

impl CacheHashes {
    fn cached_tokens(&self) -> u64 {
        self.usage.cache_read_input_tokens + self.usage.cache_creation_input_tokens
    }
}

/// Called with every reported break (a UI showing them under `--verbose`).
pub type OnCacheBreak = Arc<dyn Fn(&CacheBreak) + Send + Sync>;

#[derive(Default)]
struct DetectorState {
    pending: Option<RequestFingerprint>,
    /// What the next request is compared against.
    reference: Option<Arc<CacheHashes>>,
    /// The fingerprint of the last `cache_hashes` record written (or replayed on resume): the
    /// next record is written relative to it. Usually the reference itself, shared.
    written: Option<Arc<CacheHashes>>,
    breaks: VecDeque<CacheBreak>,
}

/// Watches the main thread's requests (a [`RequestMonitor`]) and reports cache breaks.
/// Share one per session: `EngineConfig { monitor: Some(detector.clone()), .. }`.
#[derive(Default)]
pub struct CacheBreakDetector {
    state: Mutex<DetectorState>,
    on_break: Option<OnCacheBreak>,
}

impl fmt::Debug for CacheBreakDetector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.lock();
        f.debug_struct("CacheBreakDetector")
            .field("pending", &state.pending.is_some())
            .field("reference", &state.reference.is_some())
            .field("breaks", &state.breaks.len())
            .finish()
    }
}

impl CacheBreakDetector {
    /// A detector that has seen no request yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Also calls `on_break` with every reported break.
    pub fn with_callback(mut self, on_break: OnCacheBreak) -> Self {
        self.on_break = Some(on_break);
        self
    }

    fn lock(&self) -> MutexGuard<'_, DetectorState> {
        // The state stays consistent between statements; a panicked holder does not spoil it.
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The breaks reported since the last call (at most [`KEPT_BREAKS`], newest last).
    pub fn take_breaks(&self) -> Vec<CacheBreak> {
        self.lock().breaks.drain(..).collect()
    }

    /// The request the next one is compared against.
    pub fn reference(&self) -> Option<CacheHashes> {
        self.lock().reference.as_deref().cloned()
    }

    /// Forget the reference, for a deliberate change of the prefix (after compaction, a model
    /// switch by the user), so the next request is not reported.
    pub fn reset_reference(&self) {
        self.lock().reference = None;
    }

    /// Compare a finished request against the reference; `Some` when it is a reportable break.
    fn check(reference: &CacheHashes, current: &CacheHashes) -> Option<CacheBreak> {
        let expected = reference.cached_tokens();
        let read = current.usage.cache_read_input_tokens;
        if expected == 0 || read >= expected {
            return None;
        }
        let cause = current.fingerprint.diff(&reference.fingerprint);
        match cause {
            BreakCause::Unknown => {
                tracing::debug!(
                    expected,
                    read,
                    "fewer cached tokens read, nothing in the key changed (expiry or eviction)"
                );
                None
            }
            BreakCause::System
            | BreakCause::Tools { .. }
            | BreakCause::Model { .. }
            | BreakCause::Thinking
            | BreakCause::Message { .. } => Some(CacheBreak {
                expected_tokens: expected,
                read_tokens: read,
                cause,
            }),
        }
    }
}

impl RequestMonitor for CacheBreakDetector {
    /// Compaction replaced the history: its next request is not a break.
    fn on_history_replaced(&self) -> Vec<Annotation> {
        self.reset_reference();
        vec![Annotation {
            kind: CACHE_RESET_KIND.to_owned(),
            data: serde_json::Value::Object(serde_json::Map::new()),
        }]
    }

    fn on_request(&self, request: &MessagesRequest) {
        let fingerprint = RequestFingerprint::of(request);
        self.lock().pending = Some(fingerprint);
    }

    fn on_usage(&self, usage: &Usage) -> Vec<Annotation> {
        let (found, record) = {
            let mut state = self.lock();
            let Some(fingerprint) = state.pending.take() else {
                return Vec::new();
            };
            let current = Arc::new(CacheHashes {
                fingerprint,
                usage: *usage,
            });
            let found = state
                .reference
                .as_ref()
                .and_then(|reference| Self::check(reference, &current));
            if let Some(found) = &found {
                if state.breaks.len() == KEPT_BREAKS {
                    state.breaks.pop_front();
                }
                state.breaks.push_back(found.clone());
            }
            let record = HashesRecord::new(
                &current,
                state.written.as_ref().map(|written| &written.fingerprint),
            );
            state.written = Some(Arc::clone(&current));
            state.reference = Some(current);
            (found, record)
        };
        if let Some(found) = &found {
            tracing::warn!(
                expected_tokens = found.expected_tokens,
                read_tokens = found.read_tokens,
                cause = %found.cause,
                "prompt cache break"
            );
            if let Some(callback) = &self.on_break {
                callback(found);
            }
        }
        match serde_json::to_value(&record) {
            Ok(data) => vec![Annotation {
                kind: CACHE_HASHES_KIND.to_owned(),
                data,
            }],
            Err(error) => {
                tracing::debug!(%error, "could not serialize the cache hashes");
                Vec::new()
            }
        }
    }

    fn on_resume(&self, record: &TranscriptRecord) {
        if record.kind.as_str() == CACHE_RESET_KIND {
            self.reset_reference();
            return;
        }
        if record.kind.as_str() != CACHE_HASHES_KIND {
            return;
        }
        let Some(data) = &record.data else { return };
        let mut state = self.lock();
        // The reference let go first, the last fingerprint is this state's alone and is
        // rebuilt in place.
        state.reference = None;
        let before = state
            .written
            .take()
            .map(|written| Arc::try_unwrap(written).unwrap_or_else(|shared| (*shared).clone()));
        let rebuilt = replay(before, data).map(Arc::new);
        state.reference.clone_from(&rebuilt);
        state.written = rebuilt;
    }
}

#[cfg(test)]
#[path = "cache_break_tests.rs"]
mod tests;
