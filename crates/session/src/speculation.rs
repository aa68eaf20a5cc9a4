//! Speculation (seed 001 §16.2.4 ④): while the person types, the front end hands the session
//! the draft ([`crate::Op::Speculate`]); the session forks on the last turn's
//! cached prefix with the draft as the next prompt and lets the fork run read-only tools only
//! (Read, Glob, Grep: [`SAFE_READ_ONLY_TOOLS`]), at most [`MAX_SPECULATION_TURNS`] turns. When
//! the prompt then submitted matches the draft ([`matches_draft`]), the tools' results go with
//! it as an attachment, so the model answers without calling them first: the first token
//! comes a round trip (or more) sooner. Otherwise the speculation is cancelled and dropped.
//!
//! Nothing a speculation does is visible unless it hits: it writes nothing (its sandbox
//! refuses every other tool, through the permission engine for the reads it allows), no
//! transcript, and its requests write no cache entry (`skip_cache_write`). Off
//! (`speculationEnabled` not true, the default, or `--bare`), the handle's call does nothing
//! and the front end sends none.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;
use tine_api_client::{ContentBlock, Message, MessageContent, ToolResultContent};
use tine_config::settings::LoadedSettings;
use tine_fork_runtime::{
    CacheSafeParams, ForkParams, ForkPolicy, ForkScope, ParentContext, Refusals, run_forked_agent,
};
use tine_permissions::PermissionContext;
use tine_query_loop::CanUseTool;
use tine_tools::Tool;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// The setting that turns speculation on (`true`); off by default, since every pause in
/// typing costs a request.
pub const SPECULATION_SETTING: &str = "speculationEnabled";
/// The fork's turn cap (Claude Code's `MAX_SPECULATION_TURNS`).
pub const MAX_SPECULATION_TURNS: u32 = 20;
/// The only tools a speculation may run.
pub const SAFE_READ_ONLY_TOOLS: &[&str] = &["Read", "Glob", "Grep"];
/// The ledger source of its requests.
pub const SPECULATION_QUERY_SOURCE: &str = "speculation";
/// The tag of the attachment a hit adds to the prompt.
pub const SPECULATION_MARKER: &str = "<speculative-tool-results>";
/// Characters of tool output a hit attaches at most (the rest is left for the model to
/// fetch itself).
pub const SPECULATION_MAX_CHARS: usize = 60_000;

/// Whether speculation is on: `speculationEnabled` is `true`.
pub fn enabled(settings: &LoadedSettings) -> bool {
    settings
        .get(SPECULATION_SETTING)
        .and_then(|(v, _)| v.as_bool())
        .unwrap_or(false)
}

/// Whether `prompt` is the request `draft` predicted: the same words, or `draft` followed by
/// a few more (at least 80% of the prompt was typed when it was speculated on).
pub fn matches_draft(prompt: &str, draft: &str) -> bool {
    let norm = |s: &str| {
        s.split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .to_lowercase()
    };
    let (prompt, draft) = (norm(prompt), norm(draft));
    if draft.is_empty() {
        return false;
    }
    prompt == draft || (prompt.starts_with(&draft) && draft.len() * 5 >= prompt.len() * 4)
}

/// One read-only call a speculation ran, and what it returned.
#[derive(Debug, Clone, PartialEq)]
pub struct SpeculatedCall {
    /// The tool's name (Read, Glob or Grep).
    pub tool: String,
    /// Its input, as the model gave it.
    pub input: Value,
    /// The text of its result.
    pub output: String,
}

/// What a finished speculation holds.
#[derive(Debug, Clone, Default)]
pub struct SpeculationResult {
    /// The calls that succeeded, in order.
    pub calls: Vec<SpeculatedCall>,
    /// How long it ran.
    pub elapsed: Duration,
    /// The requests it sent.
    pub requests: u32,
}

impl SpeculationResult {
    /// The attachment a hit adds to its prompt, or `None` when no call succeeded.
    pub fn attachment(&self) -> Option<String> {
        if self.calls.is_empty() {
            return None;
        }
        let mut out = format!(
            "{SPECULATION_MARKER}\nWhile the user typed this request, these read-only tools ran \
             for it a moment ago; use their results instead of calling them again.\n"
        );
        let mut left = SPECULATION_MAX_CHARS;
        for call in &self.calls {
            if call.output.len() > left {
                break;
            }
            left -= call.output.len();
            out.push_str(&format!(
                "<call tool=\"{}\" input='{}'>\n{}\n</call>\n",
                call.tool,
                call.input,
                call.output.trim_end()
            ));
        }
        out.push_str("</speculative-tool-results>");
        Some(out)
    }
}

struct InFlight {
    draft: String,
    token: CancellationToken,
    task: JoinHandle<Option<SpeculationResult>>,
}

/// The session's speculation: at most one in flight, for the latest draft.
pub(crate) struct Speculator {
    parent: Arc<ParentContext>,
    sandbox: Arc<ForkPolicy>,
    current: Option<InFlight>,
    /// Drafts speculated on, and those a submitted prompt matched (the benchmark's hit rate).
    pub started: u64,
    pub hits: u64,
}

impl Speculator {
    /// Speculation forking from `parent`, its reads judged by `permissions` (the session's).
    pub(crate) fn new(parent: Arc<ParentContext>, permissions: &PermissionContext) -> Self {
        Self {
            parent,
            sandbox: Arc::new(speculation_policy(permissions)),
            current: None,
            started: 0,
            hits: 0,
        }
    }

    /// Speculates on `draft` from the last turn's `params` (none before the first turn: there
    /// is no cached prefix to share), replacing a speculation on an older draft.
    pub(crate) fn start(&mut self, draft: String, params: Option<Arc<CacheSafeParams>>) {
        if self.current.as_ref().is_some_and(|c| c.draft == draft) {
            return;
        }
        self.cancel();
        let Some(params) = params else {
            return;
        };
        let token = self.parent.tool_context.cancellation().child_token();
        let mut fork = ForkParams::new(
            params,
            vec![Message::user(vec![ContentBlock::text(draft.clone())])],
            Arc::clone(&self.sandbox) as Arc<dyn CanUseTool>,
            SPECULATION_QUERY_SOURCE,
        );
        fork.max_turns = Some(MAX_SPECULATION_TURNS);
        fork.skip_transcript = true;
        fork.skip_cache_write = true;
        fork.overrides.cancellation = Some(token.clone());
        let parent = Arc::clone(&self.parent);
        let stop = token.clone();
        let task = tokio::spawn(async move {
            let started = Instant::now();
            let run = tokio::select! {
                run = run_forked_agent(&parent, fork) => run,
                () = stop.cancelled() => return None,
            };
            match run {
                Ok(result) => Some(SpeculationResult {
                    calls: read_calls(&result.messages),
                    elapsed: started.elapsed(),
                    requests: result.requests,
                }),
                Err(error) => {
                    tracing::debug!(%error, "speculation failed");
                    None
                }
            }
        });
        self.started += 1;
        self.current = Some(InFlight { draft, token, task });
    }

    /// The attachment for `prompt` if the speculation in flight predicted it (waiting for it
    /// to finish, unless `turn` is cancelled first), else `None`; either way nothing is in
    /// flight afterwards.
    pub(crate) async fn take(&mut self, prompt: &str, turn: &CancellationToken) -> Option<String> {
        let current = self.current.take()?;
        if !matches_draft(prompt, &current.draft) {
            current.token.cancel();
            current.task.abort();
            return None;
        }
        self.hits += 1;
        let token = current.token.clone();
        let result = tokio::select! {
            joined = current.task => joined.ok().flatten(),
            () = turn.cancelled() => {
                token.cancel();
                None
            }
        };
        result.and_then(|r| r.attachment())
    }

    /// Cancels the speculation in flight, if any.
    pub(crate) fn cancel(&mut self) {
        if let Some(current) = self.current.take() {
            current.token.cancel();
            current.task.abort();
        }
    }
}

/// The successful calls of `messages` (a fork's), with their results' text.
fn read_calls(messages: &[Message]) -> Vec<SpeculatedCall> {
    let blocks = |m: &Message| match &m.content {
        MessageContent::Blocks(blocks) => blocks.clone(),
        MessageContent::Text(_) => Vec::new(),
    };
    let all: Vec<ContentBlock> = messages.iter().flat_map(blocks).collect();
    let mut calls = Vec::new();
    for block in &all {
        let ContentBlock::ToolUse(call) = block else {
            continue;
        };
        let result = all.iter().find_map(|b| match b {
            ContentBlock::ToolResult(r) if r.tool_use_id == call.id && r.is_error != Some(true) => {
                Some(r)
            }
            _ => None,
        });
        let Some(result) = result else {
            continue;
        };
        let output = match &result.content {
            Some(ToolResultContent::Text(text)) => text.clone(),
            Some(ToolResultContent::Blocks(blocks)) => blocks
                .iter()
                .filter_map(|b| match b {
                    ContentBlock::Text(t) => Some(t.text.as_str()),
                    _ => None,
                })
                .collect::<Vec<_>>()
                .join("\n"),
            None => String::new(),
        };
        calls.push(SpeculatedCall {
            tool: call.name.clone(),
            input: call.input.clone(),
            output,
        });
    }
    calls
}

/// The speculation fork's `can_use_tool`: Read, Glob and Grep, as the permission engine
/// judges them for the session (what it would ask about is refused: nobody is asked about a
/// guess); every other tool, and so every write, refused. The tool array stays whole (the
/// cache key).
pub fn speculation_policy(permissions: &PermissionContext) -> ForkPolicy {
    ForkPolicy::judged_in(ForkScope::session(permissions), SpeculationRefusals)
        .only_tools(SAFE_READ_ONLY_TOOLS)
        .read_only()
}

/// How speculation's refusals read.
struct SpeculationRefusals;

impl Refusals for SpeculationRefusals {
    fn tool_not_allowed(&self, tool: &dyn Tool, _input: &Value) -> String {
        format!(
            "Speculation runs only {}; `{}` is not available while the user types.",
            SAFE_READ_ONLY_TOOLS.join(", "),
            tool.name()
        )
    }

    fn judged(&self, tool: &dyn Tool, message: &str, _context: &PermissionContext) -> String {
        format!("{} refused during speculation: {message}", tool.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_draft_predicts_the_same_words_or_most_of_them() {
        assert!(matches_draft("Explain  src/lib.rs", "explain src/lib.rs"));
        assert!(matches_draft(
            "explain src/lib.rs now",
            "explain src/lib.rs"
        ));
        assert!(!matches_draft(
            "explain src/lib.rs and then the tests",
            "explain src/lib.rs"
        ));
        assert!(!matches_draft("fix the parser", "explain src/lib.rs"));
        assert!(!matches_draft("anything", "   "));
    }
}
