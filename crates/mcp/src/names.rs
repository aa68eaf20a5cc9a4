//! The names the model calls MCP tools by: `mcp__SERVER__TOOL`, each part reduced to
//! `[A-Za-z0-9_-]` as Claude Code does, and kept within the Messages API's 64-character limit
//! (a longer name would make the API refuse every request of the session).

/// The prefix of every MCP tool name.
pub(crate) const MCP_PREFIX: &str = "mcp__";

/// The longest tool name the Messages API accepts.
pub(crate) const MAX_TOOL_NAME_LEN: usize = 64;

/// `name` with every character outside `[A-Za-z0-9_-]` replaced by `_`.
pub(crate) fn sanitize(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// `mcp__SERVER__TOOL` for a server and one of its tools. A name over 64 characters keeps its
/// start and ends with a hash of the whole, so two long names stay distinct.
pub fn tool_name(server: &str, tool: &str) -> String {
    let full = format!("{MCP_PREFIX}{}__{}", sanitize(server), sanitize(tool));
    if full.len() <= MAX_TOOL_NAME_LEN {
        return full;
    }
    let hash = format!("{:08x}", fnv1a(full.as_bytes()));
    let keep = MAX_TOOL_NAME_LEN - hash.len() - 1;
    // Sanitized names are ASCII, so any byte index is a character boundary.
    format!("{}_{hash}", &full[..keep])
}

/// Why a server name cannot be used.
pub(crate) fn invalid_server_name(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        return Some("is empty");
    }
    if sanitize(name).contains("__") {
        return Some(
            "contains `__` (after replacing characters outside A-Z a-z 0-9 _ -), which would make \
             the tool names mcp__SERVER__TOOL ambiguous",
        );
    }
    None
}

/// Whether `name` may be given to `tine mcp add` (Claude Code's rule: letters, digits, `_`, `-`).
pub(crate) fn is_plain_server_name(name: &str) -> bool {
    !name.is_empty() && sanitize(name) == name && invalid_server_name(name).is_none()
}

/// 32-bit FNV-1a: a stable hash (the same on every machine and run, unlike std's `DefaultHasher`
/// across versions), which is what a cache-stable tool name needs.
fn fnv1a(bytes: &[u8]) -> u32 {
    let mut hash: u32 = 0x811c_9dc5;
    for &byte in bytes {
        hash ^= u32::from(byte);
        hash = hash.wrapping_mul(0x0100_0193);
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_sanitized_and_bounded() {
        assert_eq!(
            tool_name("git hub", "create.issue"),
            "mcp__git_hub__create_issue"
        );
        assert_eq!(tool_name("a-b", "c_d"), "mcp__a-b__c_d");
        let long = tool_name("server", &"x".repeat(100));
        assert_eq!(long.len(), MAX_TOOL_NAME_LEN);
        assert_ne!(long, tool_name("server", &"x".repeat(101)));
        assert_eq!(long, tool_name("server", &"x".repeat(100)));
    }

    #[test]
    fn server_names_with_double_underscores_are_refused() {
        assert!(invalid_server_name("my__server").is_some());
        assert!(invalid_server_name("my._server").is_some());
        assert!(invalid_server_name("").is_some());
        assert!(invalid_server_name("my_server").is_none());
        assert!(is_plain_server_name("github"));
        assert!(!is_plain_server_name("git hub"));
    }
}
