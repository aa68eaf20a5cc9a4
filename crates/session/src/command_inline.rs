//! What a custom command's body runs and reads before it is sent, as Claude Code does:
//! each `` !`command` `` runs with the Bash tool and its output takes the pattern's place, and
//! each `@path` naming a file is read with the Read tool and attached after the prompt.
//!
//! Both go through the session's permission decision, with the command's `allowed-tools` as
//! allow rules (set for its turn before this runs): a call the rules allow runs, one that would
//! ask asks the person (interactive) or is refused (headless, as Claude Code refuses it), and a
//! refusal fails the command before any request is made, naming the pattern. The tools are the
//! session's own (a sandboxed Bash stays sandboxed; a file read counts as read for Edit).

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use tine_query_loop::{PermissionOutcome, QueryEngine};
use tine_tools::{Tool, ToolContext, run_tool};
use tokio_util::sync::CancellationToken;

use crate::permission::Permissions;

/// The `` !`command` `` patterns of `body`, in order: (the whole pattern, the command).
pub(crate) fn shell_patterns(body: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = body;
    while let Some(start) = rest.find("!`") {
        let after = &rest[start + 2..];
        let Some(end) = after.find('`') else {
            break;
        };
        let command = after[..end].trim();
        if !command.is_empty() && !after[..end].contains('\n') {
            out.push((format!("!`{}`", &after[..end]), command.to_owned()));
        }
        rest = &after[end + 1..];
    }
    out
}

/// The `@path` references of `body` (`@src/lib.rs`, `@"a b.txt"`), in order, each once: a word
/// that starts with `@` after the start or a space. Trailing punctuation (`@a.rs,`) is not part
/// of the path.
pub(crate) fn file_references(body: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut previous = ' ';
    let chars: Vec<(usize, char)> = body.char_indices().collect();
    let mut i = 0;
    while i < chars.len() {
        let (at, c) = chars[i];
        if c == '@' && previous.is_whitespace() {
            let after = &body[at + 1..];
            let reference = if let Some(quoted) = after.strip_prefix('"') {
                quoted.find('"').map(|end| quoted[..end].to_owned())
            } else {
                let end = after.find(char::is_whitespace).unwrap_or(after.len());
                Some(
                    after[..end]
                        .trim_end_matches([',', '.', ';', ':', ')', '!', '?', '\'', '"'])
                        .to_owned(),
                )
            };
            if let Some(reference) = reference.filter(|r| !r.is_empty())
                && !out.contains(&reference)
            {
                out.push(reference);
            }
        }
        previous = c;
        i += 1;
    }
    out
}

/// `reference` as a path: `~/` from the user's home, a relative one from `cwd`.
fn resolve(reference: &str, cwd: &Path) -> PathBuf {
    match reference.strip_prefix("~/") {
        Some(rest) => match std::env::var_os("HOME").filter(|h| !h.is_empty()) {
            Some(home) => PathBuf::from(home).join(rest),
            None => cwd.join(reference),
        },
        None => cwd.join(reference),
    }
}

/// `prompt` (the command's body with its arguments in place) with its shell patterns run and
/// its file references attached; `Err` says which pattern or file was refused or failed.
pub(crate) async fn prepare(
    engine: &QueryEngine,
    permissions: &Permissions,
    prompt: String,
    token: &CancellationToken,
) -> Result<String, String> {
    let patterns = shell_patterns(&prompt);
    let references = file_references(&prompt);
    if patterns.is_empty() && references.is_empty() {
        return Ok(prompt);
    }
    let ctx = engine
        .tool_context()
        .clone()
        .with_cancellation(token.clone());
    let tool = |name: &str| {
        engine
            .config()
            .tools
            .iter()
            .find(|t| t.name() == name)
            .cloned()
    };
    let mut text = prompt;
    if !patterns.is_empty() {
        let bash = tool("Bash").ok_or_else(|| {
            "the command runs shell commands (!`...`) but the Bash tool is not available in \
             this session (a deny rule removed it)"
                .to_owned()
        })?;
        for (pattern, command) in patterns {
            let output = call(
                bash.as_ref(),
                json!({"command": command}),
                permissions,
                &ctx,
                &pattern,
            )
            .await?;
            text = text.replacen(&pattern, &shell_output(&output), 1);
        }
    }
    let mut attached = Vec::new();
    for reference in references {
        let path = resolve(&reference, &ctx.cwd());
        if !path.is_file() {
            // Not a file (an e-mail address, a name): it stays text, as Claude Code leaves it.
            continue;
        }
        let read = tool("Read").ok_or_else(|| {
            format!(
                "the command reads @{reference} but the Read tool is not available in this \
                 session (a deny rule removed it)"
            )
        })?;
        let input = json!({"file_path": path});
        let content = call(
            read.as_ref(),
            input.clone(),
            permissions,
            &ctx,
            &format!("@{reference}"),
        )
        .await?;
        attached.push(format!(
            "<system-reminder>\nCalled the Read tool with the following input: {input}\n\
             </system-reminder>\n<system-reminder>\nResult of calling the Read tool:\n{content}\n\
             </system-reminder>"
        ));
    }
    if !attached.is_empty() {
        text = format!("{}\n\n{}", text.trim_end(), attached.join("\n"));
    }
    Ok(text)
}

/// One call through the session's permission decision, then the tool; the pattern names it in
/// an error.
async fn call(
    tool: &dyn Tool,
    input: Value,
    permissions: &Permissions,
    ctx: &ToolContext,
    pattern: &str,
) -> Result<String, String> {
    match permissions.outcome(tool, &input, ctx).await {
        PermissionOutcome::Allow { updated_input } => {
            let input = updated_input.unwrap_or(input);
            let output = run_tool(tool, input, ctx).await;
            if output.is_error && tool.name() != "Bash" {
                return Err(format!("{pattern}: {}", output.content));
            }
            Ok(output.content)
        }
        PermissionOutcome::Deny { reason } | PermissionOutcome::Ask { reason } => Err(format!(
            "permission check failed for `{pattern}` in the command: {reason}. A custom command \
             may run what its front matter allows (`allowed-tools: Bash(git status:*)`), what \
             the session's rules allow, or what a person approves"
        )),
    }
}

/// What a shell pattern becomes: the command's output (Bash's text, exit code notes included;
/// nothing when it printed nothing).
fn shell_output(content: &str) -> String {
    let content = content.trim_end();
    if content == "(no output)" {
        String::new()
    } else {
        content.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_patterns_are_the_backquoted_commands_after_a_bang() {
        assert_eq!(
            shell_patterns("Status: !`git status` and !` git diff HEAD ` but not `ls` or !`\n`"),
            [
                ("!`git status`".to_owned(), "git status".to_owned()),
                ("!` git diff HEAD `".to_owned(), "git diff HEAD".to_owned()),
            ]
        );
        assert!(shell_patterns("no !`end").is_empty());
    }

    #[test]
    fn file_references_are_words_starting_with_an_at() {
        assert_eq!(
            file_references("Review @src/lib.rs, then @\"a b.txt\" and @src/lib.rs; mail a@b.c"),
            ["src/lib.rs", "a b.txt"]
        );
        assert_eq!(file_references("@first\n@second."), ["first", "second"]);
        assert!(file_references("just @ text").is_empty());
    }

    #[test]
    fn references_resolve_from_the_project_or_home() {
        let cwd = Path::new("/p");
        assert_eq!(resolve("a/b.rs", cwd), PathBuf::from("/p/a/b.rs"));
        assert_eq!(resolve("/etc/x", cwd), PathBuf::from("/etc/x"));
    }
}
