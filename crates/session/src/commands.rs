//! The slash commands the session answers ([`Submission::Command`](crate::Submission)), the
//! same for every front end: the built-ins of [`COMMANDS`], then the custom commands of
//! `.tine/commands/` and `.claude/commands/` (their body a prompt with `$ARGUMENTS`, run with
//! their front matter's `model` and `allowed-tools`), and any other `/word` is sent to the
//! model as text, as Claude Code does. A front end may answer some itself first (the TUI's
//! `/help`, `/clear`, `/exit`).

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::actor::Actor;
use crate::custom_commands;
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
        name: "help",
        summary: "the commands the session answers, and the custom commands of this project",
        runs_turn: false,
    },
    CommandSpec {
        name: "model",
        summary: "show the model, or `/model NAME` to use another from now on (opus, sonnet, haiku or an id)",
        runs_turn: false,
    },
    CommandSpec {
        name: "memory",
        summary: "the memory files of this project",
        runs_turn: false,
    },
    CommandSpec {
        name: "init",
        summary: "write an AGENTS.md for this project from its code",
        runs_turn: true,
    },
    CommandSpec {
        name: "clear",
        summary: "start over (a new conversation)",
        runs_turn: false,
    },
    CommandSpec {
        name: "compact",
        summary: "replace the conversation by a summary now (`/compact FOCUS` says what to keep; \
                  `/compact log` shows what each compaction dropped)",
        runs_turn: true,
    },
    CommandSpec {
        name: "thinking",
        summary: "extended thinking on or off from the next request (`/thinking on|off`; alone, or Tab in the TUI, toggles)",
        runs_turn: false,
    },
    CommandSpec {
        name: "skills",
        summary: "the skills of this project and user (`/NAME [args]` runs one), and where each is from",
        runs_turn: false,
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
        "help" => (
            help(&actor.command_dirs, &actor.skills.skills),
            false,
            Value::Null,
        ),
        "model" => model(actor, args.trim()),
        "memory" => match &actor.memory {
            Some(memory) => (tine_memory::list(memory.dir()), false, Value::Null),
            None => (
                "Auto memory is off for this session.".to_owned(),
                false,
                Value::Null,
            ),
        },
        // Only an empty conversation can be cleared in place; the TUI starts a new session.
        "clear" if actor.engine.messages().is_empty() => (
            "Nothing to clear: the conversation is empty.".to_owned(),
            false,
            Value::Null,
        ),
        "clear" => (
            "/clear cannot start over inside this run; start a new `tine -p` run (or use \
             /clear in the interactive tine)"
                .to_owned(),
            true,
            Value::Null,
        ),
        "init" => {
            let prompt = if args.trim().is_empty() {
                INIT_PROMPT.to_owned()
            } else {
                format!("{INIT_PROMPT}\n\nAlso: {}", args.trim())
            };
            return actor.run_turn(id, &prompt, token).await;
        }
        "cost" => {
            let report = actor.usage_report();
            (
                cost_text(&report.cost, report.cache_read_share),
                false,
                json!({"total_cost_usd": report.cost.total().cost_usd}),
            )
        }
        "compact" => compact(actor, args.trim(), &token).await,
        "mcp" => crate::mcp::command(actor, args).await,
        "thinking" => match crate::thinking::command(actor.engine.thinking(), args) {
            Ok((next, text, data)) => {
                actor.engine.set_thinking(next);
                (text, false, data)
            }
            Err(text) => (text, true, Value::Null),
        },
        "skills" => (
            crate::skills::list_text(&actor.skills.skills, &actor.skills.warnings),
            false,
            json!({"skills": actor.skills.skills.iter().map(|s| s.name.as_str()).collect::<Vec<_>>()}),
        ),
        _ => return custom_or_text(actor, id, name, args, token).await,
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

/// What `/init` asks the model (Claude Code's `/init`, writing AGENTS.md, the file other
/// agents read too).
pub const INIT_PROMPT: &str = "Please analyze this codebase and create an AGENTS.md file at \
the root of the project: it will be given to future coding agents working in this repository. \
Add (1) the commands used to build, lint and test, including how to run a single test, and \
(2) the high-level architecture: what one can only understand by reading several files. If an \
AGENTS.md or CLAUDE.md already exists, improve it instead of starting over. Be concise: do not \
list what the file tree shows at a glance, and do not invent anything (no generic advice).";

/// A skill's turn, a custom command's (its body expanded, on its `model`, with its
/// `allowed-tools`), or the text of an unknown `/word` sent as a prompt.
async fn custom_or_text(
    actor: &mut Actor,
    id: SubmissionId,
    name: &str,
    args: &str,
    token: CancellationToken,
) -> TurnEnd {
    // A skill wins a name over a custom command, as in Claude Code ("if a skill and a
    // command share the same name, the skill takes precedence").
    if let Some(skill) = actor.skills.find(name).cloned() {
        return run_skill(actor, id, &skill, args, token).await;
    }
    let custom = custom_commands::load(&actor.command_dirs)
        .into_iter()
        .find(|c| c.name == name);
    let Some(custom) = custom else {
        let text = if args.is_empty() {
            format!("/{name}")
        } else {
            format!("/{name} {args}")
        };
        return actor.run_turn(id, &text, token).await;
    };
    let prompt = custom_commands::expand(&custom.body, args);
    let mut rules = Vec::new();
    for text in &custom.allowed_tools {
        match text.parse::<tine_permissions::PermissionRule>() {
            Ok(rule) => rules.push(rule),
            Err(error) => actor.emit(SessionEvent::Notice(crate::event::Notice::warning(
                format!(
                    "{}: allowed-tools `{text}` is not a rule ({error}); ignored",
                    custom.path.display()
                ),
            ))),
        }
    }
    let previous_model = actor.engine.config().model.clone();
    if let Some(model) = &custom.model {
        actor
            .engine
            .set_model(tine_api_client::resolve_model_alias(model));
    }
    actor.shared.permissions.set_turn_allow(rules);
    // `!`command`` and `@path`, under the command's allowed-tools.
    let end = match crate::command_inline::prepare(
        &actor.engine,
        &actor.shared.permissions,
        prompt,
        &token,
    )
    .await
    {
        Ok(prompt) => actor.run_turn(id, &prompt, token).await,
        Err(message) => actor.end(id, TurnOutcome::Failed { message }, None),
    };
    actor.shared.permissions.set_turn_allow(Vec::new());
    actor.engine.set_model(previous_model);
    end
}

/// `/NAME [args]` of a skill: its instructions are the prompt, its `allowed-tools` allowed
/// while the turn runs (the actor clears them when the submission ends).
async fn run_skill(
    actor: &mut Actor,
    id: SubmissionId,
    skill: &crate::skills::Skill,
    args: &str,
    token: CancellationToken,
) -> TurnEnd {
    let (rules, errors) = crate::skill_tool::parse_allowed(skill);
    for error in errors {
        actor.emit(SessionEvent::Notice(crate::event::Notice::warning(error)));
    }
    // The folder listing reads the disk: off the runtime's threads.
    let (owned, owned_args) = (skill.clone(), args.to_owned());
    let invocation =
        tokio::task::spawn_blocking(move || crate::skills::invocation_text(&owned, &owned_args))
            .await
            .unwrap_or_else(|_| crate::skills::invocation_text(skill, args));
    let prompt = format!(
        "<command-name>/{}</command-name>\n<command-args>{}</command-args>\n\n{invocation}",
        skill.name,
        args.trim()
    );
    // The main thread's grants (a sub-agent it starts has its own).
    crate::skill_tool::grants(actor.engine.tool_context()).extend(rules);
    actor.run_turn(id, &prompt, token).await
}

/// `/help`: the session's commands, the custom ones and the skills (a custom command a skill
/// of the same name hides is left out: `/NAME` runs the skill).
fn help(command_dirs: &[std::path::PathBuf], skills: &[crate::skills::Skill]) -> String {
    let mut text = String::from("Commands:\n");
    for spec in COMMANDS {
        text.push_str(&format!("- /{}: {}\n", spec.name, spec.summary));
    }
    let custom: Vec<_> = custom_commands::load(command_dirs)
        .into_iter()
        .filter(|c| !skills.iter().any(|s| s.name == c.name))
        .collect();
    if !custom.is_empty() {
        text.push_str("\nCustom commands:\n");
        for command in custom {
            text.push_str(&format!("- /{}: {}\n", command.name, command.description));
        }
    }
    if !skills.is_empty() {
        text.push_str("\nSkills (`/NAME [args]` runs one; the model loads them as it needs):\n");
        for skill in skills {
            text.push_str(&format!("- /{}: {}\n", skill.name, skill.description));
        }
    }
    text.push_str("\nAny other /word is sent to the model as text.\n");
    text
}

/// `/model` (which) and `/model NAME` (another from now on; an alias is its current id).
fn model(actor: &mut Actor, args: &str) -> (String, bool, Value) {
    if args.is_empty() {
        let model = actor.engine.config().model.clone();
        return (format!("Model: {model}"), false, json!({"model": model}));
    }
    let model = tine_api_client::resolve_model_alias(args);
    actor.engine.set_model(model.clone());
    (
        format!("Model set to {model}"),
        false,
        json!({"model": model}),
    )
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
