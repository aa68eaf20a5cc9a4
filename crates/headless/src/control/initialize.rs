//! The app's `initialize` request, before the session starts: what it registers becomes part
//! of the session's options (its typed agents; its hooks once they are read), and its answer
//! names the session's commands, agents and models as Claude Code's does.

use serde_json::{Value, json};
use tine_session::{AgentDefinition, AgentSource, SessionInfo, SessionOptions};

/// Puts what `request` registers into `options`; `Err` names what cannot be used.
pub(crate) fn apply(request: &Value, options: &mut SessionOptions) -> Result<(), String> {
    if let Some(agents) = request.get("agents").filter(|a| !a.is_null()) {
        options.agents = agents_of(agents)?;
    }
    Ok(())
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
