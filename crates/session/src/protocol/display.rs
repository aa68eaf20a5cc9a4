//! How a tool call reads to people, the same in every front end: `Read(src/main.rs)`,
//! `Bash(cargo test)`.

use serde_json::Value;

/// The call's argument as people read it: the file, the command, the pattern, the URL; for
/// another tool its input as JSON, cut at 80 characters.
pub fn call_summary(tool: &str, input: &Value) -> String {
    let field = |name: &str| input.get(name).and_then(Value::as_str).map(str::to_owned);
    let picked = match tool {
        "Bash" => field("command"),
        "Read" | "Write" | "Edit" | "MultiEdit" | "NotebookEdit" => {
            field("file_path").or_else(|| field("notebook_path"))
        }
        "Grep" | "Glob" => field("pattern"),
        "WebFetch" => field("url"),
        "WebSearch" => field("query"),
        "Task" | "Agent" => field("description"),
        _ => None,
    };
    picked.unwrap_or_else(|| match input {
        Value::Object(map) if map.is_empty() => String::new(),
        Value::Null => String::new(),
        other => {
            let text = other.to_string();
            match text.char_indices().nth(80) {
                Some((cut, _)) => format!("{}…", &text[..cut]),
                None => text,
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn call_lines_name_the_file_or_command() {
        assert_eq!(
            call_summary("Bash", &json!({"command": "ls -la"})),
            "ls -la"
        );
        assert_eq!(
            call_summary(
                "Edit",
                &json!({"file_path": "/p/src/a.rs", "old_string": "x"})
            ),
            "/p/src/a.rs"
        );
        assert_eq!(call_summary("Other", &json!({})), "");
        assert_eq!(call_summary("Other", &json!({"a": 1})), "{\"a\":1}");
    }
}
