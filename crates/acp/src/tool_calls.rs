//! A tine tool call as an editor shows it: its ACP `kind`, a title, the `locations` it touches
//! (so the editor can follow along), the content of the call (the diff an Edit or a Write makes)
//! and of its result (a Bash command's output, a Read's text, an error).

use std::path::PathBuf;

use agent_client_protocol::v1::schema::{
    ContentBlock, Diff, TextContent, ToolCall, ToolCallContent, ToolCallId, ToolCallLocation,
    ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields, ToolKind,
};
use serde_json::Value;
use tine_session::{ToolDisplay, ToolOutput, call_summary};

/// The longest result text sent back to the editor (the model sees all of it).
const MAX_RESULT_CHARS: usize = 20_000;

/// The kind of `tool`, by what it does.
pub(crate) fn kind(tool: &str) -> ToolKind {
    match tool {
        "Read" | "NotebookRead" => ToolKind::Read,
        "Edit" | "MultiEdit" | "Write" | "NotebookEdit" => ToolKind::Edit,
        "Bash" | "BashOutput" | "KillShell" | "KillBash" => ToolKind::Execute,
        "Grep" | "Glob" | "LS" | "ToolSearch" => ToolKind::Search,
        "WebFetch" | "WebSearch" => ToolKind::Fetch,
        "Task" | "Agent" | "TodoWrite" => ToolKind::Think,
        "ExitPlanMode" => ToolKind::SwitchMode,
        _ => ToolKind::Other,
    }
}

fn field<'a>(input: &'a Value, name: &str) -> Option<&'a str> {
    input.get(name).and_then(Value::as_str)
}

/// The call's title, as people read it: what it does to what.
pub(crate) fn title(tool: &str, input: &Value) -> String {
    let path = field(input, "file_path").or_else(|| field(input, "notebook_path"));
    match (tool, path) {
        ("Read", Some(path)) => format!("Read {path}"),
        ("Write", Some(path)) => format!("Write {path}"),
        ("Edit" | "MultiEdit" | "NotebookEdit", Some(path)) => format!("Edit {path}"),
        ("Bash", _) => match field(input, "command") {
            Some(command) => format!("`{}`", command.replace('`', "\\`")),
            None => "Terminal".to_owned(),
        },
        ("Grep", _) => match (field(input, "pattern"), field(input, "path")) {
            (Some(pattern), Some(path)) => format!("grep \"{pattern}\" {path}"),
            (Some(pattern), None) => format!("grep \"{pattern}\""),
            _ => "grep".to_owned(),
        },
        ("Glob", _) => match field(input, "pattern") {
            Some(pattern) => format!("Find {pattern}"),
            None => "Find".to_owned(),
        },
        ("WebFetch", _) => match field(input, "url") {
            Some(url) => format!("Fetch {url}"),
            None => "Fetch".to_owned(),
        },
        ("WebSearch", _) => match field(input, "query") {
            Some(query) => format!("Search the web: {query}"),
            None => "Search the web".to_owned(),
        },
        ("Task" | "Agent", _) => {
            field(input, "description").map_or_else(|| "Sub-agent".to_owned(), str::to_owned)
        }
        ("ExitPlanMode", _) => "Ready to code?".to_owned(),
        _ => {
            let summary = call_summary(tool, input);
            if summary.is_empty() {
                tool.to_owned()
            } else {
                summary
            }
        }
    }
}

/// The places the call touches: a file (with the line a Read starts at), or a search's path.
pub(crate) fn locations(tool: &str, input: &Value) -> Vec<ToolCallLocation> {
    let path = field(input, "file_path")
        .or_else(|| field(input, "notebook_path"))
        .or_else(|| match tool {
            "Grep" | "Glob" | "LS" => field(input, "path"),
            _ => None,
        });
    let Some(path) = path else {
        return Vec::new();
    };
    let mut location = ToolCallLocation::new(PathBuf::from(path));
    if tool == "Read"
        && let Some(offset) = input.get("offset").and_then(Value::as_u64)
    {
        location = location.line(u32::try_from(offset).ok());
    }
    vec![location]
}

/// What the call would change, shown before it runs: the edit's diff (the strings replaced, or
/// the whole new text of a Write).
pub(crate) fn call_content(tool: &str, input: &Value) -> Vec<ToolCallContent> {
    let Some(path) = field(input, "file_path") else {
        return Vec::new();
    };
    match tool {
        "Write" => {
            let text = field(input, "content").unwrap_or_default();
            vec![ToolCallContent::Diff(Diff::new(PathBuf::from(path), text))]
        }
        "Edit" => {
            let old = field(input, "old_string").unwrap_or_default();
            let new = field(input, "new_string").unwrap_or_default();
            vec![ToolCallContent::Diff(
                Diff::new(PathBuf::from(path), new)
                    .old_text((!old.is_empty()).then(|| old.to_owned())),
            )]
        }
        _ => Vec::new(),
    }
}

/// The `tool_call` announcing a call whose input is complete.
pub(crate) fn announce(id: &str, tool: &str, input: &Value) -> ToolCall {
    ToolCall::new(ToolCallId::new(id), title(tool, input))
        .kind(kind(tool))
        .status(ToolCallStatus::Pending)
        .locations(locations(tool, input))
        .content(call_content(tool, input))
        .raw_input(Some(input.clone()))
}

/// The update for a call the permission engine asks about (the editor shows it in its
/// question).
pub(crate) fn asked(
    id: &str,
    tool: &str,
    input: &Value,
    before_after: Option<(&str, &str)>,
) -> ToolCallUpdate {
    let content = match (before_after, field(input, "file_path")) {
        (Some((before, after)), Some(path)) => vec![ToolCallContent::Diff(
            Diff::new(PathBuf::from(path), after)
                .old_text((!before.is_empty()).then(|| before.to_owned())),
        )],
        _ => call_content(tool, input),
    };
    ToolCallUpdate::new(
        ToolCallId::new(id),
        ToolCallUpdateFields::new()
            .title(title(tool, input))
            .kind(kind(tool))
            .locations(locations(tool, input))
            .content(content)
            .raw_input(input.clone()),
    )
}

fn text_content(text: &str) -> ToolCallContent {
    let text = if text.len() > MAX_RESULT_CHARS {
        let mut cut = MAX_RESULT_CHARS;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        format!("{}\n… ({} more bytes)", &text[..cut], text.len() - cut)
    } else {
        text.to_owned()
    };
    ToolCallContent::from(ContentBlock::Text(TextContent::new(text)))
}

/// The update for a finished call: completed or failed, with what it produced.
pub(crate) fn finished(
    id: &str,
    tool: &str,
    input: Option<&Value>,
    output: &ToolOutput,
) -> ToolCallUpdate {
    let status = if output.is_error {
        ToolCallStatus::Failed
    } else {
        ToolCallStatus::Completed
    };
    let content = if output.is_error {
        vec![text_content(&output.content)]
    } else {
        match (&output.display, input) {
            (_, Some(input))
                if kind(tool) == ToolKind::Edit && !call_content(tool, input).is_empty() =>
            {
                call_content(tool, input)
            }
            (ToolDisplay::Shell { .. }, _) => {
                vec![text_content(&format!(
                    "```console\n{}\n```",
                    output.content.trim_end()
                ))]
            }
            _ if tool == "TodoWrite" => Vec::new(),
            _ => vec![text_content(&output.content)],
        }
    };
    ToolCallUpdate::new(
        ToolCallId::new(id),
        ToolCallUpdateFields::new()
            .status(status)
            .content(content)
            .raw_output(serde_json::json!({
                "content": output.content,
                "is_error": output.is_error,
                "summary": output.summary,
            })),
    )
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_read_is_a_read_of_its_file_at_its_line() {
        let input = json!({"file_path": "/p/src/lib.rs", "offset": 40});
        let call = announce("toolu_1", "Read", &input);
        let wire = serde_json::to_value(&call).unwrap();
        assert_eq!(wire["kind"], "read");
        assert_eq!(wire["title"], "Read /p/src/lib.rs");
        assert_eq!(wire["locations"][0]["path"], "/p/src/lib.rs");
        assert_eq!(wire["locations"][0]["line"], 40);
        assert_eq!(wire["rawInput"], input);
    }

    #[test]
    fn an_edit_shows_its_diff_and_bash_its_command() {
        let edit = json!({"file_path": "/p/a.rs", "old_string": "a", "new_string": "b"});
        let wire = serde_json::to_value(announce("t", "Edit", &edit)).unwrap();
        assert_eq!(wire["kind"], "edit");
        assert_eq!(wire["content"][0]["type"], "diff");
        assert_eq!(wire["content"][0]["oldText"], "a");
        assert_eq!(wire["content"][0]["newText"], "b");
        let bash = json!({"command": "cargo test"});
        let wire = serde_json::to_value(announce("t", "Bash", &bash)).unwrap();
        assert_eq!(wire["kind"], "execute");
        assert_eq!(wire["title"], "`cargo test`");
        assert!(
            wire.get("locations")
                .is_none_or(|l| l.as_array().is_some_and(Vec::is_empty))
        );
        for (tool, kind) in [
            ("Grep", "search"),
            ("WebFetch", "fetch"),
            ("Agent", "think"),
            ("mcp__x__y", "other"),
        ] {
            assert_eq!(
                serde_json::to_value(announce("t", tool, &json!({}))).unwrap()["kind"],
                kind,
                "{tool}"
            );
        }
    }

    #[test]
    fn a_result_completes_or_fails_the_call() {
        let ok = ToolOutput::text("line 1\nline 2");
        let wire = serde_json::to_value(finished("t", "Read", None, &ok)).unwrap();
        assert_eq!(wire["status"], "completed");
        assert_eq!(wire["content"][0]["content"]["text"], "line 1\nline 2");
        let failed = ToolOutput::error("no such file");
        let wire = serde_json::to_value(finished("t", "Read", None, &failed)).unwrap();
        assert_eq!(wire["status"], "failed");
        assert_eq!(wire["content"][0]["content"]["text"], "no such file");
        let write = json!({"file_path": "/p/new.txt", "content": "new\n"});
        let created = ToolOutput::text("File created successfully at: /p/new.txt");
        let wire = serde_json::to_value(finished("t", "Write", Some(&write), &created)).unwrap();
        assert_eq!(wire["content"][0]["type"], "diff");
        assert_eq!(wire["content"][0]["newText"], "new\n");
    }
}
