//! The headless run: build the session, read the prompt(s), run each turn while printing its
//! events, and turn the ending into an exit code. Ctrl-C, SIGTERM and SIGHUP cancel the turn
//! (running tools are killed, the transcript stays whole) and exit with 128 + the signal's
//! number (see [`crate::signals`]); a second signal exits at once.

use std::io::{IsTerminal, Read};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use serde_json::Value;
use tine_fork_runtime::{DEFAULT_DRAIN_TIMEOUT, SourceUsage, StopHookPipeline, UsageLedger};
use tine_memory::AutoMemory;
use tine_query_loop::{QueryEngine, Terminal};
use tokio::io::AsyncBufReadExt;

use crate::args::{Args, InputFormat, OutputFormat};
use crate::output::{Printer, ResultSummary, RunCost, SessionInfo};
use crate::profile::StartupProfile;
use crate::setup::{self, Session};
use crate::signals::{self, Interrupt};

pub async fn run(args: Args, mut profile: StartupProfile) -> Result<ExitCode> {
    if !args.print && args.prompt.is_none() && std::io::stdin().is_terminal() {
        bail!(
            "the interactive terminal UI is not built yet: run `tine -p \"your prompt\"` \
             (or pipe the prompt on standard input)"
        );
    }
    let Session {
        mut engine,
        model,
        cwd,
        tool_names,
        permission_mode,
        pipeline,
        mut background,
        memory,
        ledger,
    } = setup::build(&args, &mut profile).await?;

    let info = SessionInfo {
        session_id: engine.session_id().to_string(),
        cwd: cwd.display().to_string(),
        model,
        tools: tool_names,
        permission_mode: permission_mode.to_string(),
    };
    let mut printer = Printer::new(args.output_format, args.verbose, info);

    let interrupted = signals::watch(engine.cancellation())?;

    let mut last_success = true;
    // The main thread's requests so far (the engine counts tokens and cost, not requests).
    let mut main_requests = 0u64;
    match args.input_format {
        InputFormat::Text => {
            let prompt = text_prompt(&args)?;
            printer.init();
            profile.mark("ready");
            if let Some(command) = crate::compact_cmd::parse(&prompt) {
                let format = args.output_format;
                let code = crate::compact_cmd::run_slash(
                    &mut engine,
                    command,
                    format,
                    printer.info(),
                    &ledger,
                )
                .await;
                return Ok(interrupted.exit_code().map_or(code, ExitCode::from));
            }
            let attachments = recall(memory.as_ref(), &prompt).await;
            pipeline.slot().clear();
            let turn = engine
                .submit_with_attachments(&prompt, &attachments, |event| printer.event(event))
                .await;
            main_requests += u64::from(turn.num_turns);
            // Background work (memory extraction) finishes before -p exits, bounded.
            finish_background(&pipeline, &interrupted).await;
            while let Ok(event) = background.try_recv() {
                printer.background(&event);
            }
            printer.result(&ResultSummary {
                turn: &turn,
                cost: run_cost(&engine, main_requests, &ledger),
                denials: engine.permission_denials(),
            });
            last_success = turn.terminal.is_success();
        }
        InputFormat::StreamJson => {
            printer.init();
            profile.mark("ready");
            let mut lines = tokio::io::BufReader::new(tokio::io::stdin()).lines();
            let mut line_number = 0usize;
            let mut deferred = None;
            let stop = engine.cancellation();
            loop {
                // Ctrl-C between turns ends the run too.
                let next = tokio::select! {
                    _ = stop.cancelled() => break,
                    next = lines.next_line() => next.context("cannot read standard input")?,
                };
                let Some(line) = next else { break };
                line_number += 1;
                if line.trim().is_empty() {
                    continue;
                }
                let prompt = match stream_json_prompt(&line) {
                    Ok(Some(prompt)) => prompt,
                    Ok(None) => continue,
                    Err(error) => {
                        eprintln!("tine: warning: standard input line {line_number}: {error}");
                        continue;
                    }
                };
                let attachments = recall(memory.as_ref(), &prompt).await;
                pipeline.slot().clear();
                let turn = engine
                    .submit_with_attachments(&prompt, &attachments, |event| printer.event(event))
                    .await;
                main_requests += u64::from(turn.num_turns);
                while let Ok(event) = background.try_recv() {
                    printer.background(&event);
                }
                if args.output_format != OutputFormat::Json {
                    // Each line counts what was spent so far; background work still running
                    // is reported by its own `system` line when it ends.
                    printer.result(&ResultSummary {
                        turn: &turn,
                        cost: run_cost(&engine, main_requests, &ledger),
                        denials: engine.permission_denials(),
                    });
                }
                let aborted = turn.terminal == Terminal::Aborted;
                last_success = turn.terminal.is_success();
                if args.output_format == OutputFormat::Json {
                    // `json` prints one object: the last turn's, once the input ends and the
                    // background work is done (so its cost is in it).
                    deferred = Some(turn);
                }
                if aborted || interrupted.is_set() {
                    break;
                }
            }
            finish_background(&pipeline, &interrupted).await;
            while let Ok(event) = background.try_recv() {
                printer.background(&event);
            }
            if let Some(turn) = deferred {
                let summary = ResultSummary {
                    turn: &turn,
                    cost: run_cost(&engine, main_requests, &ledger),
                    denials: engine.permission_denials(),
                };
                let value = summary.to_value(printer.info());
                printer.print_value(&value);
            }
        }
    }
    if let Some(code) = interrupted.exit_code() {
        return Ok(ExitCode::from(code));
    }
    Ok(if last_success {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// The memories recall attaches to this turn (none without auto memory; a failure is logged
/// and the turn goes on without them).
async fn recall(memory: Option<&AutoMemory>, prompt: &str) -> Vec<String> {
    let Some(memory) = memory else {
        return Vec::new();
    };
    match memory.recall().attachment_for(prompt).await {
        Ok(Some(attachment)) => {
            tracing::info!(files = ?attachment.files, "recalled memories");
            vec![attachment.text]
        }
        Ok(None) => Vec::new(),
        Err(error) => {
            tracing::warn!(%error, "memory recall failed; the turn goes on without it");
            Vec::new()
        }
    }
}

/// Every request of the run so far: the main thread's and the ledger's (side queries, forks).
fn run_cost(engine: &QueryEngine, main_requests: u64, ledger: &UsageLedger) -> RunCost {
    let main = SourceUsage {
        usage: engine.total_usage(),
        cost_usd: engine.total_cost_usd(),
        requests: main_requests,
    };
    RunCost::collect(main, ledger)
}

/// Runs the work the background jobs deferred (batched memory extraction: so a one-turn run
/// is remembered too) and waits for all of it (bounded), or cancels it after Ctrl-C.
async fn finish_background(pipeline: &StopHookPipeline, interrupted: &Interrupt) {
    if interrupted.is_set() {
        pipeline.cancel_all();
        return;
    }
    pipeline.flush();
    let report = pipeline.drain(DEFAULT_DRAIN_TIMEOUT).await;
    if report.cancelled > 0 {
        eprintln!(
            "tine: warning: {} background job(s) did not finish within {} s and were cancelled",
            report.cancelled,
            DEFAULT_DRAIN_TIMEOUT.as_secs()
        );
    }
}

/// The prompt: the argument, else all of standard input.
fn text_prompt(args: &Args) -> Result<String> {
    let prompt = match &args.prompt {
        Some(prompt) => prompt.clone(),
        None => {
            if std::io::stdin().is_terminal() {
                bail!("no prompt: pass one as `tine -p \"...\"` or on standard input");
            }
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .context("cannot read the prompt from standard input")?;
            text
        }
    };
    if prompt.trim().is_empty() {
        bail!("the prompt is empty: pass one as `tine -p \"...\"` or on standard input");
    }
    Ok(prompt)
}

/// One line of `--input-format stream-json`: `{"type":"user","message":{"role":"user",
/// "content": "..." | [{"type":"text","text":"..."}, ...]}}`. Other message types are skipped.
pub fn stream_json_prompt(line: &str) -> Result<Option<String>> {
    let value: Value = serde_json::from_str(line).context("not a JSON object")?;
    match value.get("type").and_then(Value::as_str) {
        Some("user") => {}
        Some(_) => return Ok(None),
        None => bail!("a message needs a \"type\" (\"user\")"),
    }
    let content = value
        .get("message")
        .and_then(|m| m.get("content"))
        .context("a user message needs message.content")?;
    let text = match content {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => bail!("message.content must be a string or an array of content blocks"),
    };
    if text.trim().is_empty() {
        bail!("the user message has no text");
    }
    Ok(Some(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_json_lines_give_the_user_text() {
        let line = r#"{"type":"user","message":{"role":"user","content":"hi there"}}"#;
        assert_eq!(
            stream_json_prompt(line).unwrap().as_deref(),
            Some("hi there")
        );
        let blocks = r#"{"type":"user","message":{"role":"user","content":[{"type":"text","text":"a"},{"type":"image"},{"type":"text","text":"b"}]}}"#;
        assert_eq!(stream_json_prompt(blocks).unwrap().as_deref(), Some("a\nb"));
        let other = r#"{"type":"control_request"}"#;
        assert_eq!(stream_json_prompt(other).unwrap(), None);
        assert!(stream_json_prompt("not json").is_err());
    }
}
