//! The slash commands the session answers ([`Submission::Command`](crate::Submission)), the
//! same for every front end. A front end handles its own (`/help`, `/exit`) and sends the rest;
//! [`COMMANDS`] says which the session knows, so headless `-p` sends anything else to the model
//! as a prompt, as it always did.

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::actor::Actor;
use crate::event::{CommandOutput, MAIN_SOURCE, SessionCost, SessionEvent, TurnEnd, TurnOutcome};
use crate::submission::SubmissionId;

/// A command the session knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommandSpec {
    /// Without the slash.
    pub name: &'static str,
    /// One line for `/help` and completion.
    pub summary: &'static str,
    /// Whether it talks to the model (a front end holds its turn guard until `TurnEnded`;
    /// every command gets exactly one `TurnEnded` either way).
    pub runs_turn: bool,
}

/// Every command the session answers.
pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec {
        name: "cost",
        summary: "what this session spent: total, per source, and the last request's cache read share",
        runs_turn: false,
    },
    CommandSpec {
        name: "compact",
        summary: "replace the conversation by a summary now (`/compact FOCUS` says what to keep; \
                  `/compact log` shows what each compaction dropped)",
        runs_turn: true,
    },
    CommandSpec {
        name: "mcp",
        summary: "the MCP servers and their state (`/mcp restart NAME` reconnects one)",
        runs_turn: false,
    },
];

/// The spec of `name`, if the session knows it.
pub fn find(name: &str) -> Option<&'static CommandSpec> {
    COMMANDS.iter().find(|c| c.name == name)
}

/// Runs command `name` as submission `id`.
pub(crate) async fn run(
    actor: &mut Actor,
    id: SubmissionId,
    name: &str,
    args: &str,
    token: CancellationToken,
) -> TurnEnd {
    let (text, is_error, data) = match name {
        "cost" => {
            let report = actor.usage_report();
            (
                cost_text(&report.cost, report.cache_read_share),
                false,
                json!({"total_cost_usd": report.cost.total().cost_usd}),
            )
        }
        "compact" => compact(actor, args.trim(), &token).await,
        "mcp" => crate::mcp::command(actor.mcp.as_ref(), args).await,
        _ => (format!("unknown command /{name}"), true, Value::Null),
    };
    actor.emit(SessionEvent::CommandOutput(CommandOutput {
        id,
        command: name.to_owned(),
        text: text.clone(),
        is_error,
        data,
    }));
    let outcome = if is_error && token.is_cancelled() {
        TurnOutcome::Interrupted
    } else if is_error {
        TurnOutcome::Failed { message: text }
    } else {
        TurnOutcome::Completed
    };
    actor.end(id, outcome, None)
}

/// `/compact [focus]` (the history replaced by a summary now) and `/compact log` (what each
/// compaction of this session dropped). The data is `{"compact_boundary": ...}` (null for the
/// log and on failure).
async fn compact(
    actor: &mut Actor,
    args: &str,
    token: &CancellationToken,
) -> (String, bool, Value) {
    let none = || json!({"compact_boundary": Value::Null});
    if args == "log" {
        let config = actor.engine.config();
        let (home, cwd) = (config.home.clone(), config.cwd.clone());
        let session = actor.engine.session_id().clone();
        return match tine_compaction::compact_log(&home, &cwd, Some(session)).await {
            Ok(log) => (log, false, none()),
            Err(error) => (error.to_string(), true, none()),
        };
    }
    let focus = (!args.is_empty()).then_some(args);
    // The summary request stops with the submission's token.
    actor.engine.set_cancellation(token.clone());
    match actor.engine.compact_now(focus).await {
        Ok(boundary) => {
            let reattached = if boundary.files_reattached.is_empty() {
                String::new()
            } else {
                format!("; re-attached {}", boundary.files_reattached.join(", "))
            };
            let text = format!(
                "Compacted {} messages (about {} tokens) into a summary of about {} tokens{reattached}. \
                 `/compact log` shows what was dropped.",
                boundary.messages_summarized, boundary.tokens_before, boundary.tokens_after,
            );
            (text, false, json!({"compact_boundary": boundary}))
        }
        Err(error) => (error.to_string(), true, none()),
    }
}

/// `/cost`: the total, each source (main first), and the cache read share.
pub fn cost_text(cost: &SessionCost, cache_read_share: Option<f64>) -> String {
    let total = cost.total();
    let mut text = format!(
        "Total cost: ${:.4} ({} requests)\n",
        total.cost_usd, total.requests
    );
    let main = cost.by_source.get(MAIN_SOURCE);
    let others = cost
        .by_source
        .iter()
        .filter(|(s, _)| s.as_str() != MAIN_SOURCE);
    for (source, usage) in main
        .map(|m| (MAIN_SOURCE, m))
        .into_iter()
        .chain(others.map(|(s, u)| (s.as_str(), u)))
    {
        text.push_str(&format!(
            "- {source}: ${:.4}, {} requests, {} input + {} cache read + {} cache write, {} output tokens\n",
            usage.cost_usd,
            usage.requests,
            usage.usage.input_tokens,
            usage.usage.cache_read_input_tokens,
            usage.usage.cache_creation_input_tokens,
            usage.usage.output_tokens
        ));
    }
    // A blank line: the list ends before the last line.
    text.push('\n');
    match cache_read_share {
        Some(share) => text.push_str(&format!(
            "Last request's prompt read from the cache: {:.0}%\n",
            share * 100.0
        )),
        None => text.push_str("No request yet.\n"),
    }
    text
}
