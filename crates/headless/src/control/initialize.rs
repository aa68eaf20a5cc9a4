//! The app's `initialize` request, before the session starts: what it registers becomes part
//! of the session's options (its typed agents; its hooks once they are read), and its answer
//! names the session's commands, agents and models as Claude Code's does.

use serde_json::{Value, json};
use tine_session::{AgentDefinition, AgentSource, SessionInfo, SessionOptions};

/// Puts what `request` registers into `options`; `Err` names what cannot be used.
///
/// The TypeScript SDK sends here what the Python SDK puts on the command line: its system
/// prompt (`systemPrompt`, an array of parts, `[""]` for none; `appendSystemPrompt`), its
/// in-process servers (`sdkMcpServers`, their names), its other MCP servers (`mcpServers`,
/// under `--await-initialize`), `disallowedTools`, `settings` and `jsonSchema`.
pub(crate) fn apply(request: &Value, options: &mut SessionOptions) -> Result<(), String> {
    let field = |key: &str| request.get(key).filter(|v| !v.is_null());
    if let Some(agents) = field("agents") {
        options.agents = agents_of(agents)?;
    }
    if let Some(prompt) = field("systemPrompt") {
        options.system_prompt = Some(prompt_of(prompt, "systemPrompt")?);
    }
    if let Some(append) = field("appendSystemPrompt") {
        let append = prompt_of(append, "appendSystemPrompt")?;
        options.append_system_prompt = Some(match options.append_system_prompt.take() {
            Some(before) if !before.is_empty() => format!("{before}\n\n{append}"),
            _ => append,
        });
    }
    let mut servers = serde_json::Map::new();
    if let Some(names) = field("sdkMcpServers") {
        let names = strings_of(names, "sdkMcpServers")?;
        for name in names {
            servers.insert(name.clone(), json!({"type": "sdk", "name": name}));
        }
    }
    if let Some(configured) = field("mcpServers") {
        let Some(configured) = configured.as_object() else {
            return Err("initialize's `mcpServers` must be an object of server configs".to_owned());
        };
        servers.extend(configured.clone());
    }
    if !servers.is_empty() {
        options
            .mcp_configs
            .push(json!({ "mcpServers": servers }).to_string());
    }
    if let Some(tools) = field("disallowedTools") {
        options
            .disallowed_tools
            .extend(strings_of(tools, "disallowedTools")?);
    }
    if let Some(settings) = field("settings") {
        let settings = match settings {
            Value::String(text) => text.clone(),
            Value::Object(_) => settings.to_string(),
            _ => return Err("initialize's `settings` must be an object (or its JSON)".to_owned()),
        };
        options.settings_flag = Some(settings);
    }
    if let Some(schema) = field("jsonSchema") {
        options.json_schema = Some(schema.clone());
    }
    Ok(())
}

/// A prompt sent as a string or as an array of parts (joined by blank lines; `[""]` is an
/// empty prompt).
fn prompt_of(value: &Value, key: &str) -> Result<String, String> {
    match value {
        Value::String(text) => Ok(text.clone()),
        Value::Array(_) => Ok(strings_of(value, key)?
            .into_iter()
            .filter(|part| !part.is_empty())
            .collect::<Vec<_>>()
            .join("\n\n")),
        _ => Err(format!(
            "initialize's `{key}` must be a string or an array of strings"
        )),
    }
}

fn strings_of(value: &Value, key: &str) -> Result<Vec<String>, String> {
    value
        .as_array()
        .and_then(|items| {
            items
                .iter()
                .map(|item| item.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
        })
        .ok_or_else(|| format!("initialize's `{key}` must be an array of strings"))
}

/// The SDK's `agents` (`{NAME: {description, prompt, tools?, model?}}`).
fn agents_of(agents: &Value) -> Result<Vec<AgentDefinition>, String> {
    let Some(agents) = agents.as_object() else {
        return Err("initialize's `agents` must be an object of agent definitions".to_owned());
    };
    agents
        .iter()
        .map(|(name, agent)| {
            let text = |key: &str| agent.get(key).and_then(Value::as_str).map(str::to_owned);
            let (Some(description), Some(prompt)) = (text("description"), text("prompt")) else {
                return Err(format!(
                    "agent `{name}` needs a description and a prompt (initialize's `agents`)"
                ));
            };
            let tools = agent.get("tools").and_then(Value::as_array).map(|tools| {
                tools
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            });
            Ok(AgentDefinition {
                name: name.clone(),
                description,
                tools,
                model: text("model").filter(|m| m != "inherit"),
                system_prompt: prompt,
                read_only: false,
                isolation: None,
                source: AgentSource::App,
            })
        })
        .collect()
}

/// `initialize`'s answer: the session's commands, agents and models.
pub(crate) fn answer(info: &SessionInfo, options_agents: &[String]) -> Value {
    let commands: Vec<Value> = info
        .commands
        .iter()
        .map(|c| json!({"name": c.name, "description": c.description, "argumentHint": ""}))
        .collect();
    json!({
        "commands": commands,
        "agents": options_agents,
        "models": [
            {"value": "default", "displayName": "Default", "description": info.model},
            {"value": "opus", "displayName": "Opus", "description": "Claude Opus"},
            {"value": "sonnet", "displayName": "Sonnet", "description": "Claude Sonnet"},
            {"value": "haiku", "displayName": "Haiku", "description": "Claude Haiku"},
        ],
        "output_style": "default",
        "available_output_styles": ["default"],
        "pid": std::process::id(),
        "account": {},
        // What the TypeScript SDK checks was taken from the request (see `apply`).
        "mcp_servers_applied": true,
        "settings_applied": true,
        "disallowed_tools_applied": true,
        "hooks_applied": true,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_apps_agents_become_typed_agents() {
        let mut options = SessionOptions::new(".");
        let request = json!({"subtype": "initialize", "agents": {
            "reviewer": {"description": "reviews code", "prompt": "You review.", "tools": ["Read"], "model": "inherit"}}});
        apply(&request, &mut options).unwrap();
        assert_eq!(options.agents.len(), 1);
        assert_eq!(
            options.agents[0].tools.as_deref(),
            Some(&["Read".to_owned()][..])
        );
        assert_eq!(options.agents[0].model, None);
        let bad = json!({"agents": {"x": {"prompt": "p"}}});
        assert!(
            apply(&bad, &mut options)
                .unwrap_err()
                .contains("description")
        );
    }
}
