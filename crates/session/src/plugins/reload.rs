//! `/reload-plugins`: the conversation assembled again in place (the settings' plugins read
//! anew, their servers, hooks, agents and skills with them), so what changed is said: which
//! plugins, and whether the tool array changed, which is a prompt-cache break the person
//! asked for (the next request writes the whole prompt again). Skills and deferred tools new
//! since the conversation's first message (frozen in the transcript) are named to the model
//! with the next prompt.

use std::collections::BTreeSet;

use tine_api_client::ToolArray;

use crate::conversation::Conversation;

/// What the conversation had before the reload.
pub(crate) struct Reloaded {
    plugins: Vec<String>,
    tools: ToolArray,
    skills: BTreeSet<String>,
    deferred: BTreeSet<String>,
}

impl Reloaded {
    pub(crate) fn before(conv: &Conversation) -> Self {
        let tools = conv.engine.config().tool_definitions.clone();
        Self {
            plugins: conv.plugins.plugins.iter().map(|p| p.id.clone()).collect(),
            deferred: tools.deferred().map(|d| d.name.clone()).collect(),
            tools,
            skills: conv.skills.skills.iter().map(|s| s.name.clone()).collect(),
        }
    }

    /// What changed, for people; the model is told of new skills and deferred tools with the
    /// next prompt.
    pub(crate) fn after(self, conv: &mut Conversation) -> String {
        let now: Vec<String> = conv.plugins.plugins.iter().map(|p| p.id.clone()).collect();
        let mut text = match now.is_empty() {
            true => "Reloaded plugins: none loaded.".to_owned(),
            false => format!("Reloaded plugins: {}.", now.join(", ")),
        };
        let added: Vec<&String> = now.iter().filter(|p| !self.plugins.contains(p)).collect();
        let removed: Vec<&String> = self.plugins.iter().filter(|p| !now.contains(p)).collect();
        if !added.is_empty() {
            text.push_str(&format!(
                " New: {}.",
                added
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        if !removed.is_empty() {
            text.push_str(&format!(
                " Gone: {}.",
                removed
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        let tools = conv.engine.config().tool_definitions.clone();
        text.push_str(match tools == self.tools {
            true => " The tool array is unchanged: the prompt cache holds.",
            false => {
                " The tool array changed: the next request writes the prompt cache again \
                 (a cache break you asked for)."
            }
        });
        for warning in &conv.plugins.warnings {
            text.push_str(&format!("\nwarning: {warning}"));
        }
        let skills: BTreeSet<String> = conv.skills.skills.iter().map(|s| s.name.clone()).collect();
        if skills != self.skills && !conv.skills.skills.is_empty() {
            conv.attach_to_next_prompt(format!(
                "<system-reminder>\nThe plugins were reloaded; the skills available now \
                 replace the list given before.\n</system-reminder>\n\n{}",
                crate::skills::listing(&conv.skills.skills)
            ));
        }
        let new_deferred: Vec<String> = tools
            .deferred()
            .map(|d| d.name.clone())
            .filter(|name| !self.deferred.contains(name))
            .collect();
        if let (false, Some(mcp)) = (new_deferred.is_empty(), &conv.mcp) {
            mcp.new_deferred.add(new_deferred);
        }
        text
    }
}
