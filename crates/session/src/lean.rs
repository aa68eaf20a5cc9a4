//! The lean prompt profile (issue 37): for a model with a small window, the core tools (Bash,
//! Read, Edit, Write, Glob, Grep) and a short system prompt ([`tine_query_loop::LEAN_SYSTEM_PROMPT`])
//! instead of the whole set. Chosen once at start, like everything in the prefix: on its own
//! below [`LEAN_BELOW`] tokens of window, or by `TINE_PROMPT_PROFILE` (`lean`, `full`). The
//! environment, instruction files and any MCP servers stay as they are.

use crate::protocol::Notice;

/// Windows smaller than this get the lean profile unless `TINE_PROMPT_PROFILE=full`.
pub(crate) const LEAN_BELOW: u64 = 16_384;

/// The variable choosing the profile: `lean`, `full`, or unset (by the window).
pub(crate) const PROFILE_ENV: &str = "TINE_PROMPT_PROFILE";

/// The built-ins the lean profile offers (`--tools` still chooses for itself).
pub(crate) const LEAN_TOOLS: &[&str] = &["Bash", "Read", "Edit", "Write", "Glob", "Grep"];

/// Whether the session's prefix is lean, for a `window`-token model; says why when it is.
pub(crate) fn decide(window: u64, profile: Option<&str>, notices: &mut Vec<Notice>) -> bool {
    match profile.map(str::trim).filter(|p| !p.is_empty()) {
        Some(p) if p.eq_ignore_ascii_case("lean") => return true,
        Some(p) if p.eq_ignore_ascii_case("full") => return false,
        Some(other) => notices.push(Notice::warning(format!(
            "{PROFILE_ENV}={other} is not a profile (lean or full); the profile follows the \
             window"
        ))),
        None => {}
    }
    let lean = window < LEAN_BELOW;
    if lean {
        notices.push(Notice::info(format!(
            "a lean prompt for this {window}-token window: the core tools ({}) and a short \
             system prompt ({PROFILE_ENV}=full for the whole set)",
            LEAN_TOOLS.join(", ")
        )));
    }
    lean
}

/// The tool names the session offers: `--tools`' when given, else the lean set when lean.
pub(crate) fn tool_names(lean: bool, asked: Option<&[String]>) -> Option<Vec<String>> {
    match (asked, lean) {
        (Some(asked), _) => Some(asked.to_vec()),
        (None, true) => Some(LEAN_TOOLS.iter().map(|t| (*t).to_owned()).collect()),
        (None, false) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_window_is_lean_and_the_variable_decides_first() {
        let mut notices = Vec::new();
        assert!(decide(8_192, None, &mut notices));
        assert!(notices[0].text.contains("8192-token window"), "{notices:?}");
        assert!(!decide(200_000, None, &mut Vec::new()));
        assert!(!decide(16_384, None, &mut Vec::new()));
        assert!(!decide(8_192, Some("full"), &mut Vec::new()));
        assert!(decide(200_000, Some("LEAN"), &mut Vec::new()));
        let mut notices = Vec::new();
        assert!(!decide(200_000, Some("tiny"), &mut notices));
        assert!(notices[0].text.contains("not a profile"));
    }

    #[test]
    fn tools_asked_for_win_over_the_lean_set() {
        let asked = vec!["Read".to_owned()];
        assert_eq!(tool_names(true, Some(&asked)), Some(asked.clone()));
        assert_eq!(tool_names(true, None).map(|t| t.len()), Some(6));
        assert_eq!(tool_names(false, None), None);
    }
}
