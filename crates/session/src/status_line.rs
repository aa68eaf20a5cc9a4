//! The settings' `statusLine` (Claude Code's): `{"type": "command", "command": "...",
//! "padding": N, "refreshInterval": S}`, read once per conversation and handed to front ends
//! in [`SessionInfo`](crate::SessionInfo); the session never runs it (an interactive front end
//! does, in a trusted folder; headless `-p` does not). As in Claude Code, it runs under the
//! hooks' gates: with `disableAllHooks` set outside managed settings, or `allowManagedHooksOnly`
//! in managed settings, only a managed `statusLine` counts. The figures the command is given
//! that a front end cannot know itself are the session's too: the output style in force
//! ([`output_style_name`]).

use std::time::Duration;

use serde_json::Value;
use tine_config::SettingsSource;
use tine_config::settings::LoadedSettings;

use crate::protocol::StatusLineCommand;

/// The `statusLine` in force, or why the one set is not taken (a warning for the person).
pub(crate) fn read(settings: &LoadedSettings) -> Result<Option<StatusLineCommand>, String> {
    let managed_only = managed_only(settings);
    let found = if managed_only {
        settings
            .layers
            .iter()
            .rev()
            .filter(|l| l.source == SettingsSource::Managed)
            .find_map(|l| l.raw.get("statusLine").map(|v| (v, l.source)))
    } else {
        settings.get("statusLine")
    };
    let Some((value, source)) = found else {
        return Ok(None);
    };
    parse(value).map(Some).map_err(|why| {
        format!(
            "statusLine in {source} is not used: {why} (Claude Code's shape is \
             {{\"type\": \"command\", \"command\": \"...\", \"padding\": 0}})"
        )
    })
}

/// Whether only managed settings may give the status line: `allowManagedHooksOnly` in managed
/// settings, or `disableAllHooks` true where it is set with the highest precedence outside
/// them (Claude Code's gates for hooks, which its status line shares).
fn managed_only(settings: &LoadedSettings) -> bool {
    let managed_says = settings
        .layers
        .iter()
        .filter(|l| l.source == SettingsSource::Managed)
        .any(|l| l.raw.get("allowManagedHooksOnly") == Some(&Value::Bool(true)));
    let disabled = settings
        .get_excluding("disableAllHooks", &[SettingsSource::Managed])
        .is_some_and(|(v, _)| v == &Value::Bool(true));
    managed_says || disabled
}

fn parse(value: &Value) -> Result<StatusLineCommand, String> {
    let object = value.as_object().ok_or("it is not an object")?;
    match object.get("type").and_then(Value::as_str) {
        Some("command") => {}
        Some(other) => return Err(format!("its type is {other:?}, not \"command\"")),
        None => return Err("it has no \"type\": \"command\"".to_owned()),
    }
    let command = object
        .get("command")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .ok_or("it has no command")?;
    let padding = match object.get("padding") {
        None | Some(Value::Null) => 0,
        Some(v) => v
            .as_u64()
            .map(|p| u16::try_from(p).unwrap_or(u16::MAX))
            .ok_or("its padding is not a whole number of columns")?,
    };
    let refresh_interval = match object.get("refreshInterval") {
        None | Some(Value::Null) => None,
        Some(v) => {
            let seconds = v
                .as_f64()
                .filter(|s| s.is_finite() && *s >= 1.0)
                .ok_or("its refreshInterval is not a number of seconds, at least 1")?;
            Some(Duration::from_secs_f64(seconds.min(86_400.0)))
        }
    };
    Ok(StatusLineCommand {
        command: command.to_owned(),
        padding,
        refresh_interval,
    })
}

/// The output style in force, as a status line command is told it (`outputStyle`, or
/// Claude Code's `default`).
pub(crate) fn output_style_name(settings: &LoadedSettings) -> String {
    settings
        .get("outputStyle")
        .and_then(|(v, _)| v.as_str())
        .map(str::trim)
        .filter(|name| !name.is_empty())
        .unwrap_or("default")
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tine_config::settings::{SettingsPaths, load};

    /// Settings from user, project and managed files (`None`: not written).
    fn loaded(user: Option<&str>, project: Option<&str>, managed: Option<&str>) -> LoadedSettings {
        let root = tempfile::tempdir().unwrap();
        let (cwd, home) = (root.path().join("p"), root.path().join("h"));
        std::fs::create_dir_all(cwd.join(".tine")).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        let managed_path = root.path().join("managed.json");
        for (path, text) in [
            (home.join("settings.json"), user),
            (cwd.join(".tine/settings.json"), project),
            (managed_path.clone(), managed),
        ] {
            if let Some(text) = text {
                std::fs::write(path, text).unwrap();
            }
        }
        load(&SettingsPaths::new(&cwd, &home).with_managed(managed_path))
    }

    #[test]
    fn the_command_padding_and_interval_are_read_the_project_winning() {
        let settings = loaded(
            Some(r#"{"statusLine": {"type": "command", "command": "user.sh"}}"#),
            Some(concat!(
                r#"{"statusLine": {"type": "command", "command": " ./line.sh ", "#,
                r#""padding": 2, "refreshInterval": 5}}"#
            )),
            None,
        );
        assert_eq!(
            read(&settings),
            Ok(Some(StatusLineCommand {
                command: "./line.sh".to_owned(),
                padding: 2,
                refresh_interval: Some(Duration::from_secs(5)),
            }))
        );
        let user = loaded(
            Some(r#"{"statusLine": {"type": "command", "command": "user.sh"}}"#),
            None,
            None,
        );
        let line = read(&user).unwrap().unwrap();
        assert_eq!((line.command.as_str(), line.padding), ("user.sh", 0));
        assert_eq!(line.refresh_interval, None);
        assert_eq!(read(&loaded(None, None, None)), Ok(None));
    }

    #[test]
    fn a_malformed_status_line_is_refused_with_a_reason() {
        for (text, why) in [
            (r#"{"statusLine": "line.sh"}"#, "not an object"),
            (
                r#"{"statusLine": {"type": "static", "command": "x"}}"#,
                "not \"command\"",
            ),
            (r#"{"statusLine": {"type": "command"}}"#, "no command"),
            (
                r#"{"statusLine": {"type": "command", "command": "x", "padding": -1}}"#,
                "padding",
            ),
            (
                r#"{"statusLine": {"type": "command", "command": "x", "refreshInterval": 0.5}}"#,
                "refreshInterval",
            ),
        ] {
            let error = read(&loaded(Some(text), None, None)).unwrap_err();
            assert!(error.contains(why), "{text}: {error}");
            assert!(error.contains("userSettings"), "{error}");
        }
    }

    #[test]
    fn disabled_hooks_or_managed_only_hooks_leave_only_a_managed_status_line() {
        let user =
            r#"{"statusLine": {"type": "command", "command": "user.sh"}, "disableAllHooks": true}"#;
        assert_eq!(read(&loaded(Some(user), None, None)), Ok(None));
        let managed = r#"{"statusLine": {"type": "command", "command": "managed.sh"}}"#;
        let line = read(&loaded(Some(user), None, Some(managed)))
            .unwrap()
            .unwrap();
        assert_eq!(line.command, "managed.sh");
        let only = r#"{"allowManagedHooksOnly": true}"#;
        let user = r#"{"statusLine": {"type": "command", "command": "user.sh"}}"#;
        assert_eq!(read(&loaded(Some(user), None, Some(only))), Ok(None));
        // Turned off in a lower file and on again in a higher one: the higher wins.
        let project = r#"{"disableAllHooks": false}"#;
        let user =
            r#"{"statusLine": {"type": "command", "command": "user.sh"}, "disableAllHooks": true}"#;
        let line = read(&loaded(Some(user), Some(project), None))
            .unwrap()
            .unwrap();
        assert_eq!(line.command, "user.sh");
    }

    #[test]
    fn the_output_style_is_named_as_claude_code_names_it() {
        assert_eq!(output_style_name(&loaded(None, None, None)), "default");
        let user = r#"{"outputStyle": "Explanatory"}"#;
        assert_eq!(
            output_style_name(&loaded(Some(user), None, None)),
            "Explanatory"
        );
    }
}
