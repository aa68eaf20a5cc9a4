//! How the transcript and the dialogs name what a call touches: files inside the project
//! relative to it (`src/main.rs`, in call lines, dialogs and diffs alike; outside it,
//! absolute), the call's argument as the session words it ([`call_summary`]), and a call the
//! person refused as "Rejected by you" rather than the instructions written for the model.

use std::path::Path;

use serde_json::Value;
use tine_session::call_summary;

/// What the session tells the model when a person answered "No".
const DECLINED_MARK: &str = "The user doesn't want to proceed with this tool use";
/// Before the feedback typed with that "No".
const FEEDBACK_MARK: &str = "The user said: ";

/// Whether `tool`'s argument is a file.
pub(crate) fn is_file_tool(tool: &str) -> bool {
    matches!(
        tool,
        "Read" | "Write" | "Edit" | "MultiEdit" | "NotebookEdit"
    )
}

/// `path` relative to `cwd` when it is inside it (`src/main.rs`), else as it is.
pub(crate) fn shown_path(path: &str, cwd: &Path) -> String {
    match Path::new(path).strip_prefix(cwd) {
        Ok(rest) if !rest.as_os_str().is_empty() => rest.display().to_string(),
        _ => path.to_owned(),
    }
}

/// The call's argument as shown: [`call_summary`], a file relative to the project.
pub(crate) fn call_args(tool: &str, input: &Value, cwd: Option<&Path>) -> String {
    let args = call_summary(tool, input);
    match cwd {
        Some(cwd) if is_file_tool(tool) => shown_path(&args, cwd),
        _ => args,
    }
}

/// What a permission request touches, as shown (its target; a file relative to the project).
pub(crate) fn target(tool: &str, target: &str, cwd: Option<&Path>) -> String {
    match cwd {
        Some(cwd) if is_file_tool(tool) => shown_path(target, cwd),
        _ => target.to_owned(),
    }
}

/// "Rejected by you" (with what the person said) for a result the session wrote because the
/// person answered "No"; `None` for any other result (the whole text stays behind Ctrl+O).
pub(crate) fn declined_summary(content: &str) -> Option<String> {
    if !content.contains(DECLINED_MARK) {
        return None;
    }
    Some(match content.split_once(FEEDBACK_MARK) {
        Some((_, feedback)) if !feedback.trim().is_empty() => {
            format!("Rejected by you: {}", feedback.trim())
        }
        _ => "Rejected by you".to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn files_show_relative_to_the_project_commands_as_they_are() {
        let cwd = Path::new("/p");
        let input = json!({"file_path": "/p/src/a.rs", "content": "x"});
        assert_eq!(call_args("Write", &input, Some(cwd)), "src/a.rs");
        assert_eq!(target("Write", "/p/src/a.rs", Some(cwd)), "src/a.rs");
        assert_eq!(shown_path("/elsewhere/b.rs", cwd), "/elsewhere/b.rs");
        assert_eq!(shown_path("/p2/b.rs", cwd), "/p2/b.rs");
        assert_eq!(
            call_args("Bash", &json!({"command": "cat /p/x"}), Some(cwd)),
            "cat /p/x",
            "commands are shown as they are"
        );
        assert_eq!(target("Bash", "cat /p/x", Some(cwd)), "cat /p/x");
    }

    #[test]
    fn a_refusal_reads_as_the_persons() {
        let declined = format!("{DECLINED_MARK}. STOP what you are doing.");
        assert_eq!(
            declined_summary(&declined).as_deref(),
            Some("Rejected by you")
        );
        let with = format!("{declined} {FEEDBACK_MARK}use printf");
        assert_eq!(
            declined_summary(&with).as_deref(),
            Some("Rejected by you: use printf")
        );
        assert_eq!(declined_summary("No such file"), None);
    }
}
