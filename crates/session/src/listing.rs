//! What `/permissions` lists (the mode and every rule with the file it comes from) and what
//! `/resume` without an id lists (this directory's sessions, newest first, each with its first
//! prompt).

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::time::SystemTime;

use serde_json::Value;
use tine_config::project_dir;
use tine_config::settings::{LoadedSettings, RuleList};
use tine_permissions::PermissionMode;

use crate::protocol::SessionInfo;

/// Sessions `/resume` lists at most.
const LISTED_SESSIONS: usize = 20;

/// `/permissions`' last line: whether this folder is trusted.
pub(crate) fn trust(home: &std::path::Path, cwd: &std::path::Path) -> String {
    if tine_config::trust::is_trusted(home, cwd) {
        format!(
            "\nWorkspace trust: this folder is trusted ({})\n",
            tine_config::trust::trust_file(home).display()
        )
    } else {
        "\nWorkspace trust: this folder is not trusted; headless -p, Agent SDK apps and editors \
         run it as their caller decided, and the terminal UI asks first\n"
            .to_owned()
    }
}

/// `/permissions`: the mode, then the allow, deny and ask rules of every settings file.
pub(crate) fn permissions(loaded: &LoadedSettings, mode: PermissionMode) -> String {
    let mode = mode.as_str();
    let mut text = format!("Permission mode: **{mode}** (Shift+Tab cycles)\n");
    for list in RuleList::ALL {
        let rules: Vec<String> = loaded
            .layers
            .iter()
            .flat_map(|layer| layer.permissions.rules(list))
            .map(|rule| format!("- `{}` ({})", rule.text, rule.at))
            .collect();
        let name = match list {
            RuleList::Allow => "Allow",
            RuleList::Deny => "Deny",
            RuleList::Ask => "Ask",
        };
        if rules.is_empty() {
            text.push_str(&format!("\n{name}: none\n"));
        } else {
            text.push_str(&format!("\n{name}:\n{}\n", rules.join("\n")));
        }
    }
    text
}

/// This directory's sessions, newest first, each with its first prompt.
pub(crate) fn sessions(summary: &SessionInfo) -> (String, Value) {
    let dir = project_dir(&summary.home, &summary.cwd);
    let mut sessions: Vec<(SystemTime, String, String, usize)> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let path = entry.path();
            if path.extension().and_then(|e| e.to_str()) != Some("jsonl") {
                return None;
            }
            let id = path.file_stem()?.to_str()?.to_owned();
            let modified = entry.metadata().ok()?.modified().ok()?;
            Some((modified, id, first_prompt(&path), messages(&path)))
        })
        .collect();
    if sessions.is_empty() {
        return (
            "No earlier session in this directory.".to_owned(),
            serde_json::json!({"sessions": []}),
        );
    }
    sessions.sort_by_key(|s| std::cmp::Reverse(s.0));
    let mut text = String::from("Sessions of this directory, newest first (`/resume ID`):\n");
    let mut listed = Vec::new();
    for (modified, id, prompt, count) in sessions.into_iter().take(LISTED_SESSIONS) {
        let current = id == summary.session_id.to_string();
        let mark = if current { " (this one)" } else { "" };
        text.push_str(&format!("- `{id}`{mark} {prompt} ({count} messages)\n"));
        let age = SystemTime::now()
            .duration_since(modified)
            .map_or(0, |d| d.as_secs());
        listed.push(serde_json::json!({
            "id": id, "prompt": prompt, "age_secs": age, "messages": count, "current": current,
        }));
    }
    (text, serde_json::json!({"sessions": listed}))
}

/// How many messages a transcript holds (its user and assistant records).
fn messages(path: &Path) -> usize {
    let Ok(file) = std::fs::File::open(path) else {
        return 0;
    };
    BufReader::new(file)
        .lines()
        .map_while(Result::ok)
        .filter(|line| {
            line.contains("\"type\":\"user\"") || line.contains("\"type\":\"assistant\"")
        })
        .count()
}

/// A prompt's text without the `<system-reminder>` blocks tine attached to it (an `@` mention's
/// Read, hook context): what the person typed.
fn without_reminders(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("<system-reminder>") {
        out.push_str(&rest[..start]);
        match rest[start..].find("</system-reminder>") {
            Some(end) => rest = &rest[start + end + "</system-reminder>".len()..],
            None => return out,
        }
    }
    out.push_str(rest);
    out
}

/// The first user prompt of a transcript (its first 200 lines), shortened.
fn first_prompt(path: &Path) -> String {
    let Ok(file) = std::fs::File::open(path) else {
        return String::new();
    };
    for line in BufReader::new(file).lines().take(200).map_while(Result::ok) {
        let Ok(record) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        if record.get("type").and_then(Value::as_str) != Some("user") {
            continue;
        }
        let content = &record["message"]["content"];
        let text = match content {
            Value::String(s) => s.clone(),
            Value::Array(blocks) => blocks
                .iter()
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .map(without_reminders)
                .collect::<Vec<_>>()
                .join(" "),
            _ => String::new(),
        };
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        if !text.is_empty() {
            let short: String = text.chars().take(60).collect();
            return if short.len() < text.len() {
                format!("{short}…")
            } else {
                short
            };
        }
    }
    String::new()
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_prompts_attachments_are_not_its_title() {
        assert_eq!(
            super::without_reminders(
                "what is in @src/main.rs\n\n<system-reminder>\nCalled the Read tool\n</system-reminder>\n<system-reminder>x</system-reminder>"
            )
            .trim(),
            "what is in @src/main.rs"
        );
        assert_eq!(
            super::without_reminders("<system-reminder>ctx</system-reminder>"),
            ""
        );
        assert_eq!(super::without_reminders("plain"), "plain");
    }
}
