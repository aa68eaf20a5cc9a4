//! Why the loop went round again ([`Transition`]) and why it stopped ([`Terminal`]): the
//! "flight recorder" of seed 003 §三. Every iteration after the first records one transition;
//! the chain shows with `--verbose` and in the transcript.

use serde::Serialize;

/// Why the loop continued into another iteration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Transition {
    /// The model called tools; their results were appended.
    ToolUse {
        /// The tools called.
        tools: Vec<String>,
    },
    /// The reply was cut at `max_tokens` under the capped default limit: the same request is
    /// sent again with the raised limit, and the cut reply is dropped.
    MaxOutputTokensEscalation {
        /// The limit before.
        from: u32,
        /// The limit now.
        to: u32,
    },
    /// The reply was cut at `max_tokens` with the raised limit: it is kept and a "resume
    /// directly" message is appended (`attempt` of 3).
    MaxOutputTokensRecovery {
        /// The attempt's number.
        attempt: u32,
    },
    /// A stop hook blocked the end of the turn; its reason was given to the model.
    StopHook {
        /// The hook's reason.
        reason: String,
    },
    /// The prompt was too long; the compactor shrank the history (at most once per loop).
    ReactiveCompact,
    /// The host snipped old history to fit (a compactor may report this instead).
    HistorySnip,
    /// Old messages were folded into a summary in place (a compactor may report this instead).
    ContextCollapse,
    /// The host moved the running turn to the background and the loop carried on there.
    AutoBackground,
    /// The API paused a long turn (`pause_turn`, server tools such as web search): the reply
    /// is sent back as it is so the model carries on.
    PauseTurn,
}

impl Transition {
    /// A short label for logs and `--verbose`.
    pub fn label(&self) -> String {
        match self {
            Self::ToolUse { tools } => format!("tool_use [{}]", tools.join(", ")),
            Self::MaxOutputTokensEscalation { from, to } => {
                format!("max_output_tokens escalation {from} -> {to}")
            }
            Self::MaxOutputTokensRecovery { attempt } => {
                format!("max_output_tokens recovery #{attempt}")
            }
            Self::StopHook { reason } => format!("stop_hook: {reason}"),
            Self::ReactiveCompact => "reactive_compact".to_owned(),
            Self::HistorySnip => "history_snip".to_owned(),
            Self::ContextCollapse => "context_collapse".to_owned(),
            Self::AutoBackground => "auto_background".to_owned(),
            Self::PauseTurn => "pause_turn".to_owned(),
        }
    }
}

/// Why the loop ended. The last event of every [`crate::query::query`] stream.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Terminal {
    /// The model ended its turn and no stop hook objected.
    Completed,
    /// The turn cap was reached with tool calls still coming.
    MaxTurns {
        /// Requests made.
        turns: u32,
    },
    /// Cancelled (Ctrl-C, a parent's cancellation); running tools were killed.
    Aborted,
    /// The API refused the prompt as too long and compaction could not help.
    PromptTooLong {
        /// The prompt's tokens, when the API said.
        tokens: Option<u64>,
        /// The limit, when the API said.
        maximum: Option<u64>,
    },
    /// The API or the stream failed in a way retries could not mend.
    ModelError {
        /// What failed.
        message: String,
    },
    /// The next request does not fit the model's context window with room for a reply, and
    /// compaction cannot make it fit (the current prompt is kept whole): nothing was sent.
    BlockingLimit {
        /// The request's prompt, in (estimated) tokens.
        tokens: u64,
        /// The model's context window.
        limit: u64,
        /// Of `tokens`, tine's fixed part: the system prompt and the tool array.
        prefix: u64,
    },
    /// A stop hook asked to end the work (`"continue": false`).
    StopHookPrevented {
        /// The hook's reason, for the user.
        reason: Option<String>,
    },
    /// The model was stuck: it made the same tool call (same input) `repeats` times in a row
    /// and it failed the same way each time (`error` is the start of that error), so the turn
    /// was stopped rather than paying for more of the same (see [`crate::RepeatedFailureHandler`]).
    RepeatedToolFailure {
        /// The tool.
        tool: String,
        /// The start of its error.
        error: String,
        /// How many times in a row.
        repeats: u32,
    },
    /// The session spent more than `--max-budget-usd` allows; no further request was made.
    MaxBudget {
        /// What the session had spent, in millionths of a dollar.
        spent_micro_usd: u64,
        /// The limit, in millionths of a dollar.
        limit_micro_usd: u64,
    },
}

impl Terminal {
    /// Whether the loop ended the way the model meant it to.
    pub fn is_success(&self) -> bool {
        matches!(self, Self::Completed)
    }

    /// The `subtype` Claude Code's `result` object uses for this ending.
    pub fn subtype(&self) -> &'static str {
        match self {
            Self::Completed => "success",
            Self::MaxTurns { .. } => "error_max_turns",
            Self::Aborted => "error_aborted",
            Self::PromptTooLong { .. } => "error_prompt_too_long",
            Self::ModelError { .. } => "error_during_execution",
            Self::BlockingLimit { .. } => "error_blocking_limit",
            Self::StopHookPrevented { .. } => "error_stop_hook_prevented",
            Self::RepeatedToolFailure { .. } => "error_repeated_tool_failure",
            Self::MaxBudget { .. } => "error_max_budget_usd",
        }
    }

    /// A one-line description for people.
    pub fn describe(&self) -> String {
        match self {
            Self::Completed => "completed".to_owned(),
            Self::MaxTurns { turns } => {
                format!("stopped after {turns} turns (raise --max-turns to let it go on)")
            }
            Self::Aborted => "aborted".to_owned(),
            Self::PromptTooLong { tokens, maximum } => match (tokens, maximum) {
                (Some(t), Some(m)) => format!(
                    "the conversation is too long for the model ({t} tokens > {m}); start a new session or compact it"
                ),
                _ => {
                    "the conversation is too long for the model; start a new session or compact it"
                        .to_owned()
                }
            },
            Self::ModelError { message } => format!("model error: {message}"),
            Self::BlockingLimit {
                tokens,
                limit,
                prefix,
            } => blocking_limit(*tokens, *limit, *prefix),
            Self::StopHookPrevented { reason } => match reason {
                Some(r) => format!("a stop hook ended the work: {r}"),
                None => "a stop hook ended the work".to_owned(),
            },
            Self::RepeatedToolFailure {
                tool,
                error,
                repeats,
            } => format!(
                "the model was stuck: it made the same {tool} call {repeats} times in a row and \
                 it failed the same way each time ({error}); the turn was stopped. Rephrase the \
                 request or fix what the call needs, then try again"
            ),
            Self::MaxBudget {
                spent_micro_usd,
                limit_micro_usd,
            } => format!(
                "reached the maximum budget: spent {} of {} (raise --max-budget-usd to let it \
                 go on)",
                dollars(*spent_micro_usd),
                dollars(*limit_micro_usd)
            ),
        }
    }
}

/// What to do when a request cannot fit the window: the fixed prompt alone, or the conversation.
fn blocking_limit(tokens: u64, limit: u64, prefix: u64) -> String {
    let helps = "TINE_PROMPT_PROFILE=lean (the core tools and a short system prompt; on its own \
                 below a 16k window), fewer MCP tools, or a bigger window (the server's context size, then TINE_CONTEXT_WINDOW or \
                 openai.contextWindow to match)";
    let floor = crate::reply_room::reply_floor(limit);
    if prefix + floor > limit {
        format!(
            "tine's fixed prompt (system prompt and tool definitions, about {prefix} tokens) \
             does not fit the model's {limit}-token context window with room for a reply, so \
             nothing was sent; compaction cannot shrink it. What helps: {helps}"
        )
    } else {
        format!(
            "the request (about {tokens} tokens, {prefix} of them tine's fixed prompt) does not \
             fit the model's {limit}-token context window with room for a reply, and compaction \
             cannot shrink it (the current prompt is kept whole), so nothing was sent. Shorten \
             the prompt or start a new session; also {helps}"
        )
    }
}

/// `micro` millionths of a dollar as dollars, for people: `$0.0123`.
fn dollars(micro: u64) -> String {
    let usd = micro as f64 / 1_000_000.0;
    format!("${usd:.4}")
}
