//! Load layered settings: a user file, a project file with comments and a trailing comma, a
//! local file and inline `--settings` JSON, then ask which source each key comes from.
//!
//!     cargo run -p tine-config --example layered_settings

use std::fs;

use tine_config::settings::{self, SettingsPaths};
use tine_config::{FlagSettings, RuleList, SettingsSource};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let scratch = tempfile::tempdir()?;
    let home = scratch.path().join("tine-home");
    let project = scratch.path().join("project");
    fs::create_dir_all(&home)?;
    fs::create_dir_all(project.join(".tine"))?;

    fs::write(
        home.join("settings.json"),
        r#"{ "model": "claude-sonnet-4-5", "autoMemoryEnabled": true }"#,
    )?;
    fs::write(
        project.join(".tine/settings.json"),
        r#"{
            // checked in: the team's rules
            "permissions": { "allow": ["Bash(cargo test:*)"], "deny": ["Read(./.env)"], },
        }"#,
    )?;
    fs::write(
        project.join(".tine/settings.local.json"),
        r#"{ "model": "claude-opus-4-1", "unknownSetting": 1 }"#,
    )?;

    // The managed file is moved into the scratch directory so the example never reads /etc.
    let paths = SettingsPaths::new(&project, &home)
        .with_managed(scratch.path().join("managed-settings.json"))
        .with_flag(FlagSettings::from_arg(r#"{"autoMemoryEnabled": false}"#));
    let loaded = settings::load(&paths);

    println!("layers, lowest precedence first:");
    for layer in &loaded.layers {
        let file = layer
            .path
            .as_deref()
            .map_or("(inline)".into(), |p| p.display().to_string());
        println!("  {:<16} {file}", layer.source.as_str());
    }
    for key in ["model", "autoMemoryEnabled"] {
        if let Some((value, source)) = loaded.get(key) {
            println!("{key} = {value} (from {})", source.as_str());
        }
    }
    if let Some(project_layer) = loaded.layer(SettingsSource::Project) {
        for list in [RuleList::Allow, RuleList::Deny] {
            for rule in project_layer.permissions.rules(list) {
                println!("{} rule {} at {}", list.key(), rule.text, rule.at);
            }
        }
    }
    for warning in loaded.warnings() {
        println!("warning: {warning}");
    }
    let fatal = loaded.fatal_errors().count();
    println!("fatal problems: {fatal}");
    Ok(())
}
