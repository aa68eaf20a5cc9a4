//! Bash: runs a command in its own process group (killed whole on timeout or cancellation),
//! caps its output, and keeps the working directory between calls by having the shell print
//! `pwd` into a side file after the command. With an editor terminal on the context
//! ([`EditorTerm`]) and no sandbox, a foreground command runs there instead, ending the same way.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::{Value, json};

use super::background::BackgroundTasks;
use super::shell::{
    CappedOutput, MAX_OUTPUT_BYTES, SharedOutput, forget_group_if_empty, kill_group, pump,
    shell_quote, spawn_shell, track_group,
};
use crate::context::{ToolContext, ToolProgress};
use crate::display::ToolDisplay;
use crate::editor_terminal::{EditorTerm, TerminalEnding};
use crate::tool::{Tool, ToolError, ToolFuture, ToolOutput, parse_input};
use tine_permissions::PermissionTarget;

/// Timeout when the call gives none (ms).
pub(crate) const DEFAULT_TIMEOUT_MS: u64 = 120_000;
/// The longest timeout a call may ask for (ms); longer ones are clamped.
pub(crate) const MAX_TIMEOUT_MS: u64 = 600_000;
/// How long to keep reading after the shell exits (a process it left in the background may
/// hold the pipe open forever).
const DRAIN_GRACE: Duration = Duration::from_millis(500);
/// How often progress is reported while a command runs.
const PROGRESS_EVERY: Duration = Duration::from_secs(1);

#[derive(Deserialize)]
struct BashInput {
    command: String,
    timeout: Option<f64>,
    #[serde(default)]
    run_in_background: bool,
}

/// The Bash tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct BashTool;

const DESCRIPTION: &str = "\
Runs a bash command in a persistent shell: the working directory carries over between calls \
(prefer absolute paths to `cd`).
- Keep Bash for programs (builds, tests, git, package managers): find files with Glob, search \
with Grep, read with Read, change with Edit or Write, not `find`, `grep`, `cat`, `head`, \
`tail`, `sed`, `awk` or `echo`.
- Quote paths that contain spaces (\"path with spaces\"). Before creating files or \
directories, check that the parent exists.
- The timeout is 120000 ms unless `timeout` sets one (at most 600000); on timeout the command \
and everything it started are killed. Output over 30000 characters is cut in the middle.
- Stdin is closed: never run interactive commands (editors, `git rebase -i`, prompts). Start \
what does not exit (servers, watchers) with `run_in_background`, not `&`: you get an id for \
BashOutput and KillShell.
- Join dependent commands with `&&` or `;`, not newlines; send independent ones as parallel \
calls.";

impl Tool for BashTool {
    fn name(&self) -> &str {
        "Bash"
    }

    fn description(&self) -> String {
        DESCRIPTION.to_owned()
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "command": {
                    "type": "string",
                    "description": "The command to run"
                },
                "timeout": {
                    "type": "number",
                    "minimum": 0,
                    "description": "Milliseconds (at most 600000)"
                },
                "description": {
                    "type": "string",
                    "description": "What the command does, in 5-10 words of active voice (git status: \"Show working tree status\")"
                },
                "run_in_background": {
                    "type": "boolean",
                    "description": "Run it in the background; read its output with BashOutput"
                }
            },
            "required": ["command"],
            "additionalProperties": false
        })
    }

    fn call<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let input: BashInput = parse_input(input)?;
            let cwd = ctx.cwd();
            if !cwd.is_dir() {
                return Err(ToolError::Failed(format!(
                    "the working directory {} no longer exists; `cd` to an existing directory \
                     with an absolute path",
                    cwd.display()
                )));
            }
            if input.run_in_background {
                let id = ctx
                    .ext_or_default::<BackgroundTasks>()
                    .spawn(&input.command, &cwd, ctx.sandbox())
                    .map_err(|error| ToolError::io("cannot start a shell in", &cwd, error))?;
                return Ok(ToolOutput::text(format!(
                    "Command running in background with ID: {id}. Read its output with \
                     BashOutput (bash_id \"{id}\"); stop it with KillShell (shell_id \"{id}\")."
                ))
                .with_summary(format!("Started background task {id}"))
                .with_display(ToolDisplay::Shell {
                    exit_code: None,
                    timed_out: false,
                    truncated: false,
                    background_task: Some(id),
                }));
            }
            let timeout_ms = input
                .timeout
                .filter(|ms| ms.is_finite() && *ms > 0.0)
                .map_or(DEFAULT_TIMEOUT_MS, |ms| ms as u64)
                .min(MAX_TIMEOUT_MS);
            run_foreground(&input.command, cwd, Duration::from_millis(timeout_ms), ctx).await
        })
    }

    /// The command and the shell's working directory (where its relative paths start). The
    /// engine judges the command itself (read-only, paths outside the project), so the tool
    /// has no verdict of its own: an allow here would skip those checks.
    fn permission_target(&self, input: &Value, ctx: &ToolContext) -> PermissionTarget {
        PermissionTarget::Bash {
            command: command_of(input).to_owned(),
            cwd: ctx.cwd(),
        }
    }

    fn is_read_only(&self, input: &Value) -> bool {
        let background = input
            .get("run_in_background")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        !background && tine_permissions::is_read_only_command(command_of(input))
    }

    fn is_destructive(&self, input: &Value) -> bool {
        looks_destructive(command_of(input))
    }

    fn render_call(&self, input: &Value) -> String {
        let command = command_of(input);
        let first = command.lines().next().unwrap_or_default();
        let shown: String = first.chars().take(160).collect();
        if shown.len() < command.len() {
            format!("Bash({shown}…)")
        } else {
            format!("Bash({shown})")
        }
    }
}

fn command_of(input: &Value) -> &str {
    input
        .get("command")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// A hint for UIs (a red marker), not a security boundary: the permission engine decides.
fn looks_destructive(command: &str) -> bool {
    const PROGRAMS: &[&str] = &["rm", "rmdir", "dd", "mkfs", "shred", "truncate"];
    const PHRASES: &[&str] = &[
        "git reset --hard",
        "git clean",
        "git push --force",
        "git push -f",
        "git checkout -- ",
        "git branch -D",
    ];
    let starts_program = command
        .split(['\n', ';', '&', '|'])
        .filter_map(|part| part.split_whitespace().next())
        .any(|program| {
            let program = program.rsplit('/').next().unwrap_or(program);
            PROGRAMS.contains(&program) || program.starts_with("mkfs.")
        });
    starts_program || PHRASES.iter().any(|phrase| command.contains(phrase))
}

async fn run_foreground(
    command: &str,
    cwd: PathBuf,
    timeout: Duration,
    ctx: &ToolContext,
) -> Result<ToolOutput, ToolError> {
    let cwd_file = tempfile::Builder::new()
        .prefix("tine-cwd-")
        .tempfile()
        .map_err(|error| {
            ToolError::io(
                "cannot create a temporary file in",
                std::env::temp_dir(),
                error,
            )
        })?;
    // The command runs first, on its own lines (a here-document must end on its own line);
    // then the shell records where it ended up and exits with the command's status.
    let script = format!(
        "exec 2>&1\n{command}\n__tine_status=$?\npwd -P >| {} 2>/dev/null\nexit $__tine_status\n",
        shell_quote(&cwd_file.path().to_string_lossy())
    );
    let started = Instant::now();
    if ctx.sandbox().is_none()
        && let Some(terminal) = ctx.ext::<EditorTerm>()
    {
        let run = terminal
            .0
            .run(command, &script, &cwd, timeout, ctx.cancellation())
            .await
            .map_err(ToolError::Failed)?;
        let mut captured = CappedOutput::new(MAX_OUTPUT_BYTES);
        captured.push(run.output.as_bytes());
        let truncated = run.truncated || captured.is_truncated();
        return Ok(finish(
            run.ending,
            &captured,
            truncated,
            cwd_file.path(),
            started,
            timeout,
            ctx,
        ));
    }
    let mut child = spawn_shell(&script, &cwd, ctx.sandbox())
        .map_err(|error| ToolError::io("cannot start a shell in", &cwd, error))?;
    let pgid = child.id();
    track_group(pgid);
    let output: SharedOutput = Arc::new(Mutex::new(CappedOutput::new(MAX_OUTPUT_BYTES)));
    let mut pumps = Vec::new();
    if let Some(stdout) = child.stdout.take() {
        pumps.push(tokio::spawn(pump(stdout, Arc::clone(&output))));
    }
    if let Some(stderr) = child.stderr.take() {
        pumps.push(tokio::spawn(pump(stderr, Arc::clone(&output))));
    }

    let deadline = tokio::time::sleep(timeout);
    tokio::pin!(deadline);
    let mut ticker =
        tokio::time::interval_at(tokio::time::Instant::now() + PROGRESS_EVERY, PROGRESS_EVERY);
    let ending = loop {
        tokio::select! {
            waited = child.wait() => break match waited {
                Ok(status) => {
                    forget_group_if_empty(pgid);
                    Ok(TerminalEnding::Exited(status.code()))
                }
                Err(error) => Err(error),
            },
            () = &mut deadline => {
                kill_group(pgid);
                let _ = child.wait().await;
                break Ok(TerminalEnding::TimedOut);
            }
            () = ctx.cancellation().cancelled() => {
                kill_group(pgid);
                let _ = child.wait().await;
                break Ok(TerminalEnding::Cancelled);
            }
            _ = ticker.tick() => {
                let (lines, bytes) = {
                    let output = output.lock().unwrap_or_else(PoisonError::into_inner);
                    (output.lines(), output.bytes())
                };
                ctx.report_progress(ToolProgress {
                    tool: "Bash".to_owned(),
                    elapsed: started.elapsed(),
                    lines,
                    bytes,
                    subagent: None,
                });
            }
        }
    };
    for pump in pumps {
        let abort = pump.abort_handle();
        if tokio::time::timeout(DRAIN_GRACE, pump).await.is_err() {
            abort.abort();
        }
    }

    let captured = output
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    let ending = match ending {
        Ok(ending) => ending,
        Err(error) => {
            kill_group(pgid);
            return Err(ToolError::Failed(format!(
                "waiting for the command failed: {error}"
            )));
        }
    };
    let truncated = captured.is_truncated();
    Ok(finish(
        ending,
        &captured,
        truncated,
        cwd_file.path(),
        started,
        timeout,
        ctx,
    ))
}

/// The result of a command that ended: its output with a note on how it ended, and the
/// directory it ended in kept for the next call.
fn finish(
    ending: TerminalEnding,
    captured: &CappedOutput,
    truncated: bool,
    cwd_file: &std::path::Path,
    started: Instant,
    timeout: Duration,
    ctx: &ToolContext,
) -> ToolOutput {
    let mut text = captured.render().trim_end().to_owned();
    let elapsed = started.elapsed();
    let (exit_code, timed_out, is_error, summary) = match ending {
        TerminalEnding::Exited(code) => {
            if let Ok(printed) = std::fs::read_to_string(cwd_file) {
                let new_cwd = PathBuf::from(printed.trim_end_matches('\n'));
                if !printed.trim().is_empty() && new_cwd.is_dir() {
                    ctx.set_cwd(new_cwd);
                }
            }
            match code {
                Some(0) => {}
                Some(code) => push_note(&mut text, &format!("Exit code {code}")),
                None => push_note(&mut text, "The command was ended by a signal"),
            }
            let summary = match code {
                Some(0) => format!("{:.1} s, {} lines", elapsed.as_secs_f64(), captured.lines()),
                _ => format!(
                    "failed ({})",
                    code.map_or("signal".to_owned(), |c| format!("exit {c}"))
                ),
            };
            (code, false, code != Some(0), summary)
        }
        TerminalEnding::TimedOut => {
            push_note(
                &mut text,
                &format!(
                    "Command timed out after {:.1} s; it and every process it started were killed",
                    timeout.as_secs_f64()
                ),
            );
            (None, true, true, "timed out".to_owned())
        }
        TerminalEnding::Cancelled => {
            push_note(
                &mut text,
                "Command was cancelled; it and every process it started were killed",
            );
            (None, false, true, "cancelled".to_owned())
        }
    };
    if text.is_empty() {
        text = "(no output)".to_owned();
    }
    let output = if is_error {
        ToolOutput::error(text)
    } else {
        ToolOutput::text(text)
    };
    output
        .with_summary(summary)
        .with_display(ToolDisplay::Shell {
            exit_code,
            timed_out,
            truncated,
            background_task: None,
        })
}

fn push_note(text: &mut String, note: &str) {
    if !text.is_empty() {
        text.push('\n');
    }
    text.push_str(note);
}
