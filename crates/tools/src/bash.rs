//! Bash command analysis (tree-sitter-bash): read / search / list / other, read-only verdicts.

/// Whether `command` only reads (no writes, no code execution beyond allowlisted readers).
///
/// Conservative first version: plain words only, allowlisted programs; anything with shell
/// syntax (quotes, substitution, redirection, lists) is treated as not read-only.
pub fn is_read_only_command(command: &str) -> bool {
    let plain = command
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, ' ' | '.' | '_' | '/' | '-' | ','));
    if !plain {
        return false;
    }
    let mut words = command.split_whitespace();
    let Some(program) = words.next() else {
        return false;
    };
    matches!(
        program,
        "ls" | "pwd"
            | "cat"
            | "head"
            | "tail"
            | "wc"
            | "echo"
            | "grep"
            | "which"
            | "whoami"
            | "date"
    )
}
