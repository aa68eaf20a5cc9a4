//! The slash commands the session answers ([`Op::Command`](crate::Op)), the
//! same for every front end: the built-ins of [`COMMANDS`], then the custom commands of
//! `.tine/commands/` and `.claude/commands/` (their body a prompt with `$ARGUMENTS`, run with
//! their front matter's `model` and `allowed-tools`), and any other `/word` is sent to the
//! model as text, as Claude Code does. A front end may answer some itself first (the TUI's
//! `/help`, `/clear`, `/exit`).

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::command_table::COMMANDS;
use crate::conversation::Conversation;
use crate::custom_commands;
use crate::protocol::{
    CommandOutput, MAIN_SOURCE, SessionCost, SessionEvent, TurnEnd, TurnOutcome,
};

/// Runs command `name` (the actor carries out `/clear` and `/resume ID` itself).
pub(crate) async fn run(
    conv: &mut Conversation,
    name: &str,
    args: &str,
    token: CancellationToken,
) -> TurnEnd {
    let (text, is_error, data) = match name {
        "help" => (
            help(&conv.command_dirs, &conv.skills.skills, &conv.plugins),
            false,
            Value::Null,
        ),
        "model" => model(conv, args.trim()),
        "memory" => match &conv.memory {
            Some(memory) => (tine_memory::list(memory.dir()), false, Value::Null),
            None => (
                "Auto memory is off for this session.".to_owned(),
                false,
                Value::Null,
            ),
        },
        "permissions" => {
            let mut text = crate::listing::permissions(&conv.settings, conv.permissions.mode());
            text.push_str(&crate::listing::trust(&conv.info.home, &conv.info.cwd));
            (text, false, Value::Null)
        }
        "resume" => {
            let (text, data) = crate::listing::sessions(&conv.info);
            (text, false, data)
        }
        "init" => {
            let prompt = if args.trim().is_empty() {
                INIT_PROMPT.to_owned()
            } else {
                format!("{INIT_PROMPT}\n\nAlso: {}", args.trim())
            };
            return conv.run_turn(&prompt, token).await;
        }
        "cost" => {
            let report = conv.usage_report();
            (
                cost_text(&report.cost, report.cache_read_share),
                false,
                json!({"total_cost_usd": report.cost.total().cost_usd}),
            )
        }
        "compact" => compact(conv, args.trim(), &token).await,
        "output-style" => output_style(conv, args.trim()),
        "context" => (crate::context_view::view(conv), false, Value::Null),
        "export" if args.trim() == crate::export::EXPORT_CLIPBOARD => {
            let text = crate::export::text(conv.engine.messages());
            let lines = text.lines().count();
            (
                format!("The conversation as plain text ({lines} lines), for the clipboard."),
                false,
                json!({"clipboard": text, "lines": lines}),
            )
        }
        "export" => {
            let path = crate::export::target(&conv.info.cwd, args);
            let text = crate::export::text(conv.engine.messages());
            match std::fs::write(&path, text) {
                Ok(()) => (
                    format!("Exported the conversation to {}", path.display()),
                    false,
                    json!({"path": path}),
                ),
                Err(error) => (
                    format!(
                        "cannot write {}: {error}; give another path: /export FILE",
                        path.display()
                    ),
                    true,
                    Value::Null,
                ),
            }
        }
        "mcp" => {
            crate::mcp::command(conv.mcp.as_mut(), &mut conv.engine, &conv.permissions, args).await
        }
        "thinking" => match crate::thinking::command(conv.engine.thinking(), args) {
            Ok((next, text, data)) => {
                conv.engine.set_thinking(next);
                (text, false, data)
            }
            Err(text) => (text, true, Value::Null),
        },
        "plugin" => plugin(conv, args).await,
        "skills" => (
            crate::skills::list_text(&conv.skills.skills, &conv.skills.warnings),
            false,
            json!({"skills": conv.skills.skills.iter().map(|s| s.name.as_str()).collect::<Vec<_>>()}),
        ),
        _ => return custom_or_text(conv, name, args, token).await,
    };
    conv.emit(SessionEvent::CommandOutput(CommandOutput {
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
    conv.end(outcome, None)
}

/// What `/init` asks the model (Claude Code's `/init`, writing AGENTS.md, the file other
/// agents read too).
pub(crate) const INIT_PROMPT: &str = "Please analyze this codebase and create an AGENTS.md file at \
the root of the project: it will be given to future coding agents working in this repository. \
Add (1) the commands used to build, lint and test, including how to run a single test, and \
(2) the high-level architecture: what one can only understand by reading several files. If an \
AGENTS.md or CLAUDE.md already exists, improve it instead of starting over. Be concise: do not \
list what the file tree shows at a glance, and do not invent anything (no generic advice).";

/// A skill's turn, a custom command's (its body expanded, on its `model`, with its
/// `allowed-tools`), or the text of an unknown `/word` sent as a prompt.
async fn custom_or_text(
    conv: &mut Conversation,
    name: &str,
    args: &str,
    token: CancellationToken,
) -> TurnEnd {
    // A skill wins a name over a custom command, as in Claude Code ("if a skill and a
    // command share the same name, the skill takes precedence").
    if let Some(skill) = conv.skills.find(name).cloned() {
        return run_skill(conv, &skill, args, token).await;
    }
    // The project's and user's commands, then a plugin's (`/PLUGIN:NAME`, or `/NAME` that
    // one plugin alone has), then a plugin skill by its bare name.
    let custom = custom_commands::load(&conv.command_dirs)
        .into_iter()
        .find(|c| c.name == name)
        .or_else(|| conv.plugins.command(name).cloned());
    if custom.is_none()
        && let Some(skill) = bare_plugin_skill(conv, name)
    {
        return run_skill(conv, &skill, args, token).await;
    }
    let Some(custom) = custom else {
        let text = if args.is_empty() {
            format!("/{name}")
        } else {
            format!("/{name} {args}")
        };
        return conv.run_turn(&text, token).await;
    };
    let prompt = custom_commands::expand(&custom.body, args);
    let mut rules = Vec::new();
    for text in &custom.allowed_tools {
        match text.parse::<tine_permissions::PermissionRule>() {
            Ok(rule) => rules.push(rule),
            Err(error) => conv.emit(SessionEvent::Notice(crate::protocol::Notice::warning(
                format!(
                    "{}: allowed-tools `{text}` is not a rule ({error}); ignored",
                    custom.path.display()
                ),
            ))),
        }
    }
    let previous_model = conv.engine.config().model.clone();
    if let Some(model) = &custom.model {
        conv.engine
            .set_model(tine_api_client::resolve_model_alias(model));
    }
    conv.permissions.set_turn_allow(rules);
    // `!`command`` and `@path`, under the command's allowed-tools.
    let end = match crate::command_inline::prepare(&conv.engine, &conv.permissions, prompt, &token)
        .await
    {
        Ok(prompt) => conv.run_turn(&prompt, token).await,
        Err(message) => conv.end(TurnOutcome::Failed { message }, None),
    };
    conv.permissions.set_turn_allow(Vec::new());
    conv.engine.set_model(previous_model);
    end
}

/// The one plugin skill named `PLUGIN:name`, when no other skill has that bare name.
fn bare_plugin_skill(conv: &Conversation, name: &str) -> Option<crate::skills::Skill> {
    let mut found = conv
        .skills
        .skills
        .iter()
        .filter(|s| s.scope == crate::skills::SkillScope::Plugin)
        .filter(|s| s.name.rsplit_once(':').is_some_and(|(_, n)| n == name));
    match (found.next(), found.next()) {
        (Some(skill), None) => Some(skill.clone()),
        _ => None,
    }
}

/// `/plugin [list]`, and `/plugin enable|disable|install|uninstall|marketplace ...` as
/// `tine plugin` does them (off the runtime's threads: they read, copy and clone). What they
/// change applies from the next session or `/reload-plugins`: this conversation's tool array
/// and listing stay as they are.
async fn plugin(conv: &Conversation, args: &str) -> (String, bool, Value) {
    let commands = crate::plugins::PluginCommands {
        cwd: conv.info.cwd.clone(),
        home: conv.info.home.clone(),
        user_home: conv.plugins.user_home.clone(),
    };
    let words: Vec<String> = args.split_whitespace().map(str::to_owned).collect();
    let listing = words.is_empty() || words == ["list"];
    let words = if listing {
        vec!["list".to_owned()]
    } else {
        words
    };
    let result = tokio::task::spawn_blocking(move || commands.run(&words))
        .await
        .unwrap_or_else(|e| {
            Err(crate::plugins::PluginCommandError::NotFound(format!(
                "the plugin command stopped: {e}"
            )))
        });
    let loaded: Vec<&str> = conv.plugins.plugins.iter().map(|p| p.id.as_str()).collect();
    let data = json!({"plugins": loaded});
    match (result, listing) {
        (Ok(installed), true) => (
            crate::plugins::list_text(&conv.plugins, &installed),
            false,
            data,
        ),
        (Ok(text), false) => (text, false, data),
        (Err(error), _) => (error.to_string(), true, data),
    }
}

/// `/NAME [args]` of a skill: its instructions are the prompt, its `allowed-tools` allowed
/// while the turn runs (the actor clears them when the submission ends).
async fn run_skill(
    conv: &mut Conversation,
    skill: &crate::skills::Skill,
    args: &str,
    token: CancellationToken,
) -> TurnEnd {
    let (rules, errors) = crate::skill_tool::parse_allowed(skill);
    for error in errors {
        conv.emit(SessionEvent::Notice(crate::protocol::Notice::warning(
            error,
        )));
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
    crate::skill_tool::grants(conv.engine.tool_context()).extend(rules);
    conv.run_turn(&prompt, token).await
}

/// `/help`: the session's commands, the custom ones and the skills (a custom command a skill
/// of the same name hides is left out: `/NAME` runs the skill).
fn help(
    command_dirs: &[std::path::PathBuf],
    skills: &[crate::skills::Skill],
    plugins: &crate::plugins::SessionPlugins,
) -> String {
    let mut text = String::from("Commands:\n");
    for spec in COMMANDS {
        text.push_str(&format!("- /{}: {}\n", spec.name, spec.summary));
    }
    let custom: Vec<_> = custom_commands::load(command_dirs)
        .into_iter()
        .chain(plugins.commands().cloned())
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
fn model(conv: &mut Conversation, args: &str) -> (String, bool, Value) {
    if args.is_empty() {
        let model = conv.engine.config().model.clone();
        let mut choices: Vec<Value> = [
            ("opus", "Opus 5.5: the default, the most capable"),
            ("sonnet", "Sonnet 5.5: fast and capable"),
            ("haiku", "Haiku 5.5: the fastest and cheapest"),
        ]
        .iter()
        .map(|(name, about)| {
            json!({"name": name, "id": tine_api_client::resolve_model_alias(name), "about": about})
        })
        .collect();
        // The model in use and the ones this session asked before.
        for used in std::iter::once(model.clone()).chain(conv.cost().by_model.keys().cloned()) {
            if !choices.iter().any(|c| c["id"] == used.as_str()) {
                choices.push(json!({"name": used, "id": used, "about": "used in this session"}));
            }
        }
        let list: Vec<String> = choices
            .iter()
            .map(|c| {
                format!(
                    "- {} ({})",
                    c["name"].as_str().unwrap_or(""),
                    c["about"].as_str().unwrap_or("")
                )
            })
            .collect();
        return (
            format!(
                "Model: {model}\n\n`/model NAME` switches to:\n{}",
                list.join("\n")
            ),
            false,
            json!({"model": model, "choices": choices}),
        );
    }
    let model = tine_api_client::resolve_model_alias(args);
    conv.engine.set_model(model.clone());
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
    conv: &mut Conversation,
    args: &str,
    token: &CancellationToken,
) -> (String, bool, Value) {
    let none = || json!({"compact_boundary": Value::Null});
    if args == "log" {
        let config = conv.engine.config();
        let (home, cwd) = (config.home.clone(), config.cwd.clone());
        let session = conv.engine.session_id().clone();
        return match tine_compaction::compact_log(&home, &cwd, Some(session)).await {
            Ok(log) => (log, false, none()),
            Err(error) => (error.to_string(), true, none()),
        };
    }
    let focus = (!args.is_empty()).then_some(args);
    // The summary request stops with the submission's token.
    conv.engine.set_cancellation(token.clone());
    match conv.engine.compact_now(focus).await {
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
pub(crate) fn cost_text(cost: &SessionCost, cache_read_share: Option<f64>) -> String {
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
    if total.usage.estimated {
        text.push_str(
            "\nNote: some token counts are estimates: the server streamed no usage (a local \
             model's server), so tine counted the request and the reply itself.\n",
        );
    }
    // A model priced by assumption says so (a Claude id the table lacks: its family's price).
    for model in cost.by_model.keys() {
        if let Some(note) = tine_api_client::model_info(model).note(model) {
            text.push_str(&format!("\nNote: {note}.\n"));
        }
    }
    text
}

/// `Op::McpRestart`: `/mcp restart NAME`, its answer a command output.
pub(crate) async fn mcp_restart(conv: &mut Conversation, server: &str) {
    let args = format!("restart {server}");
    let (text, is_error, data) = crate::mcp::command(
        conv.mcp.as_mut(),
        &mut conv.engine,
        &conv.permissions,
        &args,
    )
    .await;
    conv.emit(SessionEvent::CommandOutput(CommandOutput {
        command: "mcp".to_owned(),
        text,
        is_error,
        data,
    }));
}

/// `Op::McpToggle`: server `server` off (its tools leave the array) or on again (reconnected,
/// its tools offered as after a restart).
pub(crate) async fn mcp_toggle(conv: &mut Conversation, server: &str, enabled: bool) {
    if !crate::mcp::knows(conv.mcp.as_ref(), server) {
        conv.emit(SessionEvent::OpFailed {
            message: format!("no MCP server named `{server}`"),
        });
        return;
    }
    if enabled {
        return mcp_restart(conv, server).await;
    }
    match crate::mcp::disable(
        conv.mcp.as_mut(),
        &mut conv.engine,
        &conv.permissions,
        server,
    ) {
        Ok((text, data)) => conv.emit(SessionEvent::CommandOutput(CommandOutput {
            command: "mcp".to_owned(),
            text,
            is_error: false,
            data,
        })),
        Err(message) => conv.emit(SessionEvent::OpFailed { message }),
    }
}

/// `/output-style`: the styles and the one in use; `/output-style NAME` keeps NAME in the
/// project's local settings, for the next session (the system prompt is part of the cache key).
fn output_style(conv: &Conversation, name: &str) -> (String, bool, Value) {
    let (cwd, home) = (&conv.info.cwd, &conv.info.home);
    let user_home = crate::assemble::user_home_from_env();
    let current = conv
        .settings
        .get("outputStyle")
        .and_then(|(v, _)| v.as_str().map(str::to_owned))
        .unwrap_or_else(|| "Default".to_owned());
    let why = "A style changes the system prompt, which is part of every request's cache key: it \
               applies from the next session or after /clear, so this conversation keeps its cache.";
    if name.is_empty() {
        let mut text = format!("Output style: **{current}**\n");
        for style in crate::output_style::all(cwd, home, user_home.as_deref()) {
            text.push_str(&format!("- {}: {}\n", style.name, style.description));
        }
        text.push_str(&format!("\n`/output-style NAME` chooses one. {why}"));
        return (text, false, json!({"outputStyle": current}));
    }
    let Some(style) = crate::output_style::find(name, cwd, home, user_home.as_deref()) else {
        return (
            format!("no output style named {name}: `/output-style` lists them"),
            true,
            Value::Null,
        );
    };
    let path = cwd.join(".tine/settings.local.json");
    if let Some(dir) = path.parent()
        && let Err(error) = std::fs::create_dir_all(dir)
    {
        return (
            format!("cannot create {}: {error}", dir.display()),
            true,
            Value::Null,
        );
    }
    let saved = tine_config::settings::edit_file(&path, |edit| {
        edit.set(&["outputStyle"], &json!(style.name))
    });
    match saved {
        Ok(()) => (
            format!(
                "Output style set to **{}** in {}. {why}",
                style.name,
                path.display()
            ),
            false,
            json!({"outputStyle": style.name}),
        ),
        Err(error) => (
            format!("cannot save the output style: {error}"),
            true,
            Value::Null,
        ),
    }
}
