//! What a custom command's body runs and reads before it is sent, as Claude Code does:
//! each `` !`command` `` runs with the Bash tool and its output takes the pattern's place, and
//! each `@path` naming a file is read with the Read tool and attached after the prompt.
//!
//! A person's prompt gets the same `@path` attachments (`attach_mentions`), a directory as its
//! listing, and no shell patterns; a mention that cannot be read stays text, with a warning.
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
                true,
            )
            .await?;
            text = text.replacen(&pattern, &shell_output(&output), 1);
        }
    }
    let mut attached = Vec::new();
    for reference in references {
        if let Some(attachment) = attachment(engine, permissions, &ctx, &reference, true).await? {
            attached.push(attachment);
        }
    }
    Ok(with_attachments(text, &attached))
}

/// A person's `prompt` with the files and directories its `@path`s name attached after it,
/// as Claude Code attaches mentions: a file as a Read of it, a directory as its listing. A
/// mention that names neither stays text; one refused or unreadable stays text too, and the
/// warnings say why. A prompt with no mention is returned as it is, byte for byte.
pub(crate) async fn attach_mentions(
    engine: &QueryEngine,
    permissions: &Permissions,
    prompt: &str,
    token: &CancellationToken,
) -> (String, Vec<String>) {
    let references = file_references(prompt);
    if references.is_empty() {
        return (prompt.to_owned(), Vec::new());
    }
    let ctx = engine
        .tool_context()
        .clone()
        .with_cancellation(token.clone());
    let (mut attached, mut warnings) = (Vec::new(), Vec::new());
    for reference in references {
        match attachment(engine, permissions, &ctx, &reference, false).await {
            Ok(Some(attachment)) => attached.push(attachment),
            Ok(None) => {}
            Err(error) => warnings.push(format!("@{reference} was not attached: {error}")),
        }
    }
    (with_attachments(prompt.to_owned(), &attached), warnings)
}

/// `text`, then the attachments (none: `text` unchanged).
fn with_attachments(text: String, attached: &[String]) -> String {
    if attached.is_empty() {
        return text;
    }
    format!("{}\n\n{}", text.trim_end(), attached.join("\n"))
}

/// What `@reference` attaches: a file read with the Read tool, a directory's listing (as
/// Claude Code shows it, an `ls` of it), both through the permission decision on reading it;
/// `None` when it names neither (an e-mail address, a name: it stays text, as Claude Code
/// leaves it). `in_command`: a custom command's (a refusal says what one may read).
async fn attachment(
    engine: &QueryEngine,
    permissions: &Permissions,
    ctx: &ToolContext,
    reference: &str,
    in_command: bool,
) -> Result<Option<String>, String> {
    let path = resolve(reference, &ctx.cwd());
    let is_dir = path.is_dir();
    if !is_dir && !path.is_file() {
        return Ok(None);
    }
    let read = engine
        .config()
        .tools
        .iter()
        .find(|t| t.name() == "Read")
        .cloned()
        .ok_or_else(|| {
            format!(
                "reading @{reference} needs the Read tool, which is not available in this \
                 session (a deny rule removed it)"
            )
        })?;
    let pattern = format!("@{reference}");
    let read_input = json!({"file_path": path});
    if !is_dir {
        let content = call(
            read.as_ref(),
            read_input.clone(),
            permissions,
            ctx,
            &pattern,
            in_command,
        )
        .await?;
        return Ok(Some(reminder("Read", &read_input, &content)));
    }
    // A directory: reading it is what is decided; the listing is made here, not by Bash.
    if let PermissionOutcome::Deny { reason } | PermissionOutcome::Ask { reason } =
        permissions.outcome(read.as_ref(), &read_input, ctx).await
    {
        return Err(refusal(&pattern, &reason, in_command));
    }
    let dir = path.clone();
    let listing = tokio::task::spawn_blocking(move || listing(&dir))
        .await
        .map_err(|error| format!("{pattern}: the listing failed: {error}"))?
        .map_err(|error| format!("{pattern}: {error}"))?;
    let shown = path.display();
    let input =
        json!({"command": format!("ls {shown}"), "description": format!("Lists files in {shown}")});
    Ok(Some(reminder("Bash", &input, &listing)))
}

/// A tool call and its result as the model is shown them outside its own calls.
fn reminder(tool: &str, input: &Value, content: &str) -> String {
    format!(
        "<system-reminder>\nCalled the {tool} tool with the following input: {input}\n\
         </system-reminder>\n<system-reminder>\nResult of calling the {tool} tool:\n{content}\n\
         </system-reminder>"
    )
}

/// `dir`'s entries by name, one a line, directories with a trailing `/`.
fn listing(dir: &Path) -> std::io::Result<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)?
        .filter_map(Result::ok)
        .map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
                format!("{name}/")
            } else {
                name
            }
        })
        .collect();
    names.sort();
    Ok(names.join("\n"))
}

/// One call through the session's permission decision, then the tool; the pattern names it in
/// an error (which says what a command may run when it is one's).
async fn call(
    tool: &dyn Tool,
    input: Value,
    permissions: &Permissions,
    ctx: &ToolContext,
    pattern: &str,
    in_command: bool,
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
        PermissionOutcome::Deny { reason } | PermissionOutcome::Ask { reason } => {
            Err(refusal(pattern, &reason, in_command))
        }
    }
}

/// Why `pattern` was not run or read.
fn refusal(pattern: &str, reason: &str, in_command: bool) -> String {
    if in_command {
        format!(
            "permission check failed for `{pattern}` in the command: {reason}. A custom command \
             may run what its front matter allows (`allowed-tools: Bash(git status:*)`), what \
             the session's rules allow, or what a person approves"
        )
    } else {
        format!("permission check failed for `{pattern}`: {reason}")
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
