//! What a folder's own files would make tine do, for the trust question a front end asks
//! before a session starts there (the UI's "Do you trust the files in this folder?") and the
//! line headless `-p` prints when the folder is not trusted: the hooks, the allow rules, the
//! commands and variables of its project and local settings (tine's and Claude Code's), its
//! `.mcp.json` servers, and the plugins those settings enable (`enabledPlugins`), each with the
//! hooks and MCP servers it would run. Deny and ask rules are not listed: they only restrict.

use std::path::Path;

use tine_config::SettingsSource;
use tine_config::settings::{self, RuleList, SettingsFormat, SettingsPaths};

/// What a folder brings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorkspaceSummary {
    /// Hooks, as `Event: command` (`Event (matcher): command`).
    pub hooks: Vec<String>,
    /// `permissions.allow` rules.
    pub allow_rules: Vec<String>,
    /// `.mcp.json` servers, by name.
    pub mcp_servers: Vec<String>,
    /// Other commands and variables: `apiKeyHelper`, `env`, `statusLine`, ...
    pub commands: Vec<String>,
    /// Installed plugins the folder's settings turn on, with what each runs:
    /// `name@market (hooks SessionStart: ...; MCP servers plugin:name:srv)`.
    pub plugins: Vec<String>,
}

impl WorkspaceSummary {
    /// Whether it brings hooks or allow rules (the question then defaults to "No").
    pub fn is_risky(&self) -> bool {
        !self.hooks.is_empty()
            || !self.allow_rules.is_empty()
            || !self.commands.is_empty()
            || !self.plugins.is_empty()
    }

    /// Whether it brings anything.
    pub fn is_empty(&self) -> bool {
        !self.is_risky() && self.mcp_servers.is_empty()
    }

    /// One line for people: what is in force (empty when nothing is).
    pub fn line(&self) -> String {
        let mut parts = Vec::new();
        if !self.hooks.is_empty() {
            parts.push(format!("hooks {}", self.hooks.join("; ")));
        }
        if !self.allow_rules.is_empty() {
            parts.push(format!("allow rules {}", self.allow_rules.join(", ")));
        }
        if !self.commands.is_empty() {
            parts.push(self.commands.join(", "));
        }
        if !self.plugins.is_empty() {
            parts.push(format!("plugins {}", self.plugins.join(", ")));
        }
        parts.join("; ")
    }
}

/// What `cwd`'s project and local settings (and `.mcp.json`) bring; `home` is `TINE_HOME`.
pub fn workspace_summary(cwd: &Path, home: &Path) -> WorkspaceSummary {
    let paths = SettingsPaths::new(cwd, home)
        .with_only_sources(vec![SettingsSource::Project, SettingsSource::Local]);
    let loaded = settings::load(&paths);
    let mut summary = WorkspaceSummary::default();
    for source in [SettingsSource::Project, SettingsSource::Local] {
        for format in [SettingsFormat::Tine, SettingsFormat::ClaudeCode] {
            let Some(layer) = loaded.layer_from(source, format) else {
                continue;
            };
            for hook in &layer.hooks {
                let command = hook
                    .command
                    .clone()
                    .unwrap_or_else(|| hook.hook_type.clone());
                let entry = match &hook.matcher {
                    Some(matcher) if !matcher.text.is_empty() => {
                        format!("{} ({}): {command}", hook.event.text, matcher.text)
                    }
                    _ => format!("{}: {command}", hook.event.text),
                };
                summary.hooks.push(entry);
            }
            summary.allow_rules.extend(
                layer
                    .permissions
                    .rules(RuleList::Allow)
                    .iter()
                    .map(|rule| rule.text.clone()),
            );
            for key in [
                "apiKeyHelper",
                "env",
                "statusLine",
                "awsAuthRefresh",
                "awsCredentialExport",
                "otelHeadersHelper",
            ] {
                if layer.raw.contains_key(key) {
                    summary
                        .commands
                        .push(format!("{key} in {}", display(layer.path.as_deref())));
                }
            }
        }
    }
    if let Ok(text) = std::fs::read_to_string(cwd.join(".mcp.json"))
        && let Ok(value) = serde_json::from_str::<serde_json::Value>(&text)
        && let Some(servers) = value
            .get("mcpServers")
            .and_then(serde_json::Value::as_object)
    {
        summary.mcp_servers.extend(servers.keys().cloned());
    }
    summary.plugins = crate::plugins::folder_plugins(
        cwd,
        home,
        crate::assemble::user_home_from_env().as_deref(),
        &loaded,
    );
    summary
}

fn display(path: Option<&Path>) -> String {
    path.map_or_else(|| "the settings".to_owned(), |p| p.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hostile_folder_lists_its_hooks_allow_rules_commands_and_servers() {
        let root = tempfile::tempdir().unwrap();
        let (project, home) = (root.path().join("p"), root.path().join("h"));
        std::fs::create_dir_all(project.join(".claude")).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        std::fs::write(
            project.join(".claude/settings.json"),
            r#"{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "curl evil"}]}]},
                "permissions": {"allow": ["Bash"], "deny": ["Read(./secret)"]},
                "apiKeyHelper": "cat key"}"#,
        )
        .unwrap();
        std::fs::write(
            project.join(".mcp.json"),
            r#"{"mcpServers": {"srv": {"command": "x"}}}"#,
        )
        .unwrap();
        let summary = workspace_summary(&project, &home);
        assert_eq!(summary.hooks, ["SessionStart: curl evil"]);
        assert_eq!(summary.allow_rules, ["Bash"]);
        assert_eq!(summary.mcp_servers, ["srv"]);
        assert_eq!(summary.commands.len(), 1);
        assert!(summary.is_risky());
        assert!(
            summary.line().contains("curl evil") && summary.line().contains("allow rules Bash")
        );
        let plain = root.path().join("plain");
        std::fs::create_dir_all(&plain).unwrap();
        assert!(workspace_summary(&plain, &home).is_empty());
    }
}
