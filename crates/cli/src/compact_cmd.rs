//! Compaction from the command line: `/compact [focus]` and `/compact log` as a headless
//! prompt (`tine -c -p "/compact keep the API design"`), and `tine compact log [SESSION]`.
//! (The slash commands of an interactive session are dispatched by the session layer.)

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, anyhow, bail};
use serde_json::json;
use tine_compaction::compact_log;
use tine_config::{SessionId, tine_home_from_env};
use tine_fork_runtime::{SourceUsage, UsageLedger};
use tine_query_loop::QueryEngine;

use crate::args::OutputFormat;
use crate::output::{RunCost, SessionInfo};

const USAGE: &str = "usage: tine compact log [SESSION_ID]";

/// A `/compact` prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SlashCompact {
    /// `/compact [what to keep]`.
    Compact(Option<String>),
    /// `/compact log`: what each compaction of this session dropped.
    Log,
}

/// The `/compact` command a prompt is, if it is one.
pub fn parse(prompt: &str) -> Option<SlashCompact> {
    let rest = prompt.trim().strip_prefix("/compact")?;
    if !rest.is_empty() && !rest.starts_with(char::is_whitespace) {
        return None; // `/compaction`, ...
    }
    let rest = rest.trim();
    Some(match rest {
        "" => SlashCompact::Compact(None),
        "log" => SlashCompact::Log,
        focus => SlashCompact::Compact(Some(focus.to_owned())),
    })
}

/// Runs `/compact ...` instead of a turn and prints a short result (a `result` object in
/// json and stream-json).
pub async fn run_slash(
    engine: &mut QueryEngine,
    command: SlashCompact,
    format: OutputFormat,
    info: &SessionInfo,
    ledger: &UsageLedger,
) -> ExitCode {
    let outcome = match command {
        SlashCompact::Log => {
            let home = engine.config().home.clone();
            let cwd = engine.config().cwd.clone();
            compact_log(&home, &cwd, Some(engine.session_id().clone()))
                .await
                .map(|log| (log, None))
                .map_err(|e| e.to_string())
        }
        SlashCompact::Compact(focus) => match engine.compact_now(focus.as_deref()).await {
            Ok(boundary) => {
                let text = format!(
                    "Compacted {} messages (about {} tokens) into a summary of about {} tokens{}. \
                     `/compact log` shows what was dropped.",
                    boundary.messages_summarized,
                    boundary.tokens_before,
                    boundary.tokens_after,
                    if boundary.files_reattached.is_empty() {
                        String::new()
                    } else {
                        format!("; re-attached {}", boundary.files_reattached.join(", "))
                    }
                );
                Ok((text, Some(boundary)))
            }
            Err(error) => Err(error.to_string()),
        },
    };
    let main = SourceUsage {
        usage: engine.total_usage(),
        cost_usd: engine.total_cost_usd(),
        requests: 0,
    };
    let cost = RunCost::collect(main, ledger).total().cost_usd;
    let code = if outcome.is_ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    };
    match format {
        OutputFormat::Text => match &outcome {
            Ok((text, _)) => print!("{}{}", text, if text.ends_with('\n') { "" } else { "\n" }),
            Err(error) => eprintln!("tine: {error}"),
        },
        OutputFormat::Json | OutputFormat::StreamJson => {
            let (result, boundary, error) = match outcome {
                Ok((text, boundary)) => (text, boundary, None),
                Err(error) => (String::new(), None, Some(error)),
            };
            let value = json!({
                "type": "result",
                "subtype": if error.is_none() { "success" } else { "error_during_execution" },
                "is_error": error.is_some(),
                "result": result,
                "error": error,
                "session_id": info.session_id,
                "total_cost_usd": cost,
                "compact_boundary": boundary,
            });
            println!("{value}");
        }
    }
    code
}

/// `tine compact log [SESSION_ID]` (the latest session of this directory by default).
pub fn run(args: &[String]) -> ExitCode {
    match run_inner(args) {
        Ok(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("tine compact: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn run_inner(args: &[String]) -> Result<String> {
    let session = match args {
        [log] if log == "log" => None,
        [log, id] if log == "log" => Some(SessionId::parse(id).map_err(|e| anyhow!(e))?),
        _ => bail!("{USAGE}"),
    };
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let cwd: PathBuf = std::fs::canonicalize(&cwd).unwrap_or(cwd);
    let home = tine_home_from_env().map_err(|e| anyhow!(e))?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime
        .block_on(compact_log(&home, &cwd, session))
        .map_err(|e| anyhow!(e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slash_compact_prompts() {
        assert_eq!(parse("/compact"), Some(SlashCompact::Compact(None)));
        assert_eq!(
            parse("  /compact keep the API  "),
            Some(SlashCompact::Compact(Some("keep the API".into())))
        );
        assert_eq!(parse("/compact log"), Some(SlashCompact::Log));
        assert_eq!(parse("/compaction"), None);
        assert_eq!(parse("please /compact"), None);
    }
}
