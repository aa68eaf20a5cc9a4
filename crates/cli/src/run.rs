//! The headless run, a front end of `tine-session`: start the session, read the prompt(s),
//! submit each and print its events, and turn the ending into an exit code. Ctrl-C, SIGTERM
//! and SIGHUP cancel the session (the turn's tools are killed, background jobs cancelled, the
//! transcript stays whole) and exit with 128 + the signal's number (see [`crate::signals`]);
//! a second signal exits at once.

use std::io::{IsTerminal, Read};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use serde_json::Value;
use tine_session::{Session, SessionEvent, SessionHandle, StartError, Submission, TurnEnd};
use tokio::io::AsyncBufReadExt;
use tokio::sync::mpsc::UnboundedReceiver;

use crate::args::{Args, InputFormat, OutputFormat};
use crate::output::{Printer, ResultSummary, SessionInfo};
use crate::profile::StartupProfile;
use crate::signals;

pub async fn run(args: Args, mut profile: StartupProfile) -> Result<ExitCode> {
    if !args.print && args.prompt.is_none() && std::io::stdin().is_terminal() {
        bail!(
            "the interactive terminal UI is not built yet: run `tine -p \"your prompt\"` \
             (or pipe the prompt on standard input)"
        );
    }
    let options = crate::setup::session_options(&args, tine_session::Approvals::Headless)?;
    profile.mark("options");
    let (session, events) = match Session::start(options).await {
        Ok(started) => started,
        Err(StartError::Settings {
            warnings,
            errors,
            refusal,
        }) => {
            // Fail closed, saying everything that was wrong first.
            for warning in warnings {
                eprintln!("tine: warning: {warning}");
            }
            for error in errors {
                eprintln!("tine: error: {error}");
            }
            bail!("{refusal}");
        }
        Err(error) => return Err(error.into()),
    };
    profile.mark("session");
    let summary = session.summary();
    let info = SessionInfo {
        session_id: summary.session_id.to_string(),
        cwd: summary.cwd.display().to_string(),
        model: summary.model.clone(),
        tools: summary.tools.clone(),
        permission_mode: summary.permission_mode.to_string(),
    };
    let mut front = Front {
        printer: Printer::new(args.output_format, args.verbose, info),
        events,
        background: Vec::new(),
    };
    // Start-up's notices (settings warnings, ...) before anything else.
    front.pending();

    let interrupted = signals::watch(session.cancellation())?;

    let mut last_success = true;
    match args.input_format {
        InputFormat::Text => {
            let prompt = text_prompt(&args)?;
            front.printer.init();
            profile.mark("ready");
            let mut end = front.turn(&session, submission(&prompt)).await;
            // Background agents report as further turns, so the result includes them.
            let until = tokio::time::Instant::now() + session.drain_grace();
            while !interrupted.is_set() {
                let Some(reports) = session.agent_reports(until).await else {
                    break;
                };
                if interrupted.is_set() {
                    break;
                }
                let next = front.turn(&session, Submission::Prompt(reports)).await;
                if next.result.is_some() {
                    end = next;
                }
            }
            // Background work (memory extraction) finishes before -p exits, bounded; after a
            // signal it is cancelled instead.
            let report = session.shutdown().await;
            front.rest().await;
            front.flush_background();
            match &end.result {
                Some(turn) => {
                    let summary = ResultSummary::of(&end, turn, report.cost, &report.denials);
                    front.printer.result(&summary);
                    last_success = !summary.is_error();
                }
                None => last_success = front.printer.command_result(&end),
            }
        }
        InputFormat::StreamJson => {
            front.printer.init();
            profile.mark("ready");
            let mut lines = tokio::io::BufReader::new(tokio::io::stdin()).lines();
            let mut line_number = 0usize;
            let mut deferred = None;
            let stop = session.cancellation();
            // While input is open there is no drain bound: the person may still be typing.
            let open_ended = tokio::time::Instant::now() + OPEN_INPUT_WAIT;
            loop {
                // Ctrl-C between turns ends the run too. A background agent that ended is
                // reported as soon as the turn before it is over, as `-p` does, not at the
                // input's end.
                let input = tokio::select! {
                    biased;
                    _ = stop.cancelled() => break,
                    Some(reports) = session.agent_reports(open_ended) => StreamInput::Reports(reports),
                    next = lines.next_line() => {
                        StreamInput::Line(next.context("cannot read standard input")?)
                    }
                };
                let line = match input {
                    StreamInput::Reports(reports) => {
                        last_success = front
                            .report_turn(&session, reports, args.output_format, &mut deferred)
                            .await
                            .unwrap_or(last_success);
                        if interrupted.is_set() {
                            break;
                        }
                        continue;
                    }
                    StreamInput::Line(None) => break,
                    StreamInput::Line(Some(line)) => line,
                };
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
                let end = front.turn(&session, submission(&prompt)).await;
                front.flush_background();
                let Some(turn) = end.result.clone() else {
                    last_success = front.printer.command_result(&end);
                    continue;
                };
                let summary = ResultSummary::of(&end, &turn, end.cost.clone(), &end.denials);
                if args.output_format != OutputFormat::Json {
                    // Each line counts what was spent so far; background work still running
                    // is reported by its own `system` line when it ends.
                    front.printer.result(&summary);
                }
                let aborted = turn.terminal == tine_query_loop::Terminal::Aborted;
                last_success = !summary.is_error();
                if args.output_format == OutputFormat::Json {
                    // `json` prints one object: the last turn's, once the input ends and the
                    // background work is done (so its cost is in it).
                    deferred = Some((end.clone(), turn));
                }
                if aborted || interrupted.is_set() {
                    break;
                }
            }
            // Background agents still running at the input's end report as further turns,
            // within the drain bound.
            let until = tokio::time::Instant::now() + session.drain_grace();
            while !interrupted.is_set() {
                let Some(reports) = session.agent_reports(until).await else {
                    break;
                };
                if interrupted.is_set() {
                    break;
                }
                last_success = front
                    .report_turn(&session, reports, args.output_format, &mut deferred)
                    .await
                    .unwrap_or(last_success);
            }
            let report = session.shutdown().await;
            front.rest().await;
            front.flush_background();
            if let Some((end, turn)) = deferred {
                let summary = ResultSummary::of(&end, &turn, report.cost, &report.denials);
                let value = summary.to_value(front.printer.info());
                front.printer.print_value(&value);
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

/// A prompt, or a slash command: the session answers its built-ins and custom commands, and
/// sends any other `/word` to the model as text.
fn submission(prompt: &str) -> Submission {
    Submission::parse(prompt)
}

/// How long agents started while stream-json input is open may run before they are
/// stopped: no bound in practice (the input's end starts the drain bound).
const OPEN_INPUT_WAIT: std::time::Duration = std::time::Duration::from_secs(365 * 24 * 60 * 60);

/// What the stream-json loop got next.
enum StreamInput {
    Line(Option<String>),
    /// Background agents ended: their notifications, as the prompt of a turn.
    Reports(String),
}

/// The printing side of the session's events.
struct Front {
    printer: Printer,
    events: UnboundedReceiver<SessionEvent>,
    /// Background jobs' reports, printed between turns (as `-p` always has: after a turn's
    /// messages, before its result).
    background: Vec<tine_fork_runtime::BackgroundEvent>,
}

impl Front {
    /// Submits and prints the turn's events up to its end.
    async fn turn(&mut self, session: &SessionHandle, submission: Submission) -> TurnEnd {
        let id = match session.submit(submission) {
            Ok(id) => id,
            Err(error) => {
                return TurnEnd {
                    id: tine_session::SubmissionId(0),
                    outcome: tine_session::TurnOutcome::Failed {
                        message: error.to_string(),
                    },
                    result: None,
                    cost: tine_session::SessionCost::default(),
                    denials: Vec::new(),
                    structured_output: None,
                };
            }
        };
        loop {
            let Some(event) = self.events.recv().await else {
                return TurnEnd {
                    id,
                    outcome: tine_session::TurnOutcome::Failed {
                        message: "the session ended".to_owned(),
                    },
                    result: None,
                    cost: tine_session::SessionCost::default(),
                    denials: Vec::new(),
                    structured_output: None,
                };
            };
            match event {
                SessionEvent::TurnEnded(end) if end.id == id => return end,
                other => self.show(other),
            }
        }
    }

    /// Background agents' reports as a turn of a stream-json run: its result line (or, for
    /// `json`, the turn kept for the one object at the end). Returns whether it succeeded
    /// (`None`: no turn ran).
    async fn report_turn(
        &mut self,
        session: &SessionHandle,
        reports: String,
        format: OutputFormat,
        deferred: &mut Option<(TurnEnd, tine_query_loop::TurnResult)>,
    ) -> Option<bool> {
        let end = self.turn(session, Submission::Prompt(reports)).await;
        self.flush_background();
        let turn = end.result.clone()?;
        let summary = ResultSummary::of(&end, &turn, end.cost.clone(), &end.denials);
        let success = !summary.is_error();
        if format == OutputFormat::Json {
            *deferred = Some((end.clone(), turn));
        } else {
            self.printer.result(&summary);
        }
        Some(success)
    }

    /// Everything already received.
    fn pending(&mut self) {
        while let Ok(event) = self.events.try_recv() {
            self.show(event);
        }
    }

    /// Everything until the session's channel closes (after shutdown).
    async fn rest(&mut self) {
        while let Some(event) = self.events.recv().await {
            self.show(event);
        }
    }

    fn flush_background(&mut self) {
        for event in std::mem::take(&mut self.background) {
            self.printer.background(&event);
        }
    }

    fn show(&mut self, event: SessionEvent) {
        match event {
            SessionEvent::Query(event) => self.printer.event(&event),
            SessionEvent::Background(event) => self.background.push(event),
            SessionEvent::Notice(notice) => self.printer.notice(&notice),
            SessionEvent::Request(request) => self.printer.request(&request),
            SessionEvent::CacheBreak(text) => eprintln!("[tine] cache break: {text}"),
            SessionEvent::StreamEvent(event) => self.printer.stream_event(&event),
            SessionEvent::ModelFallback { from, to } => self.printer.model_fallback(&from, &to),
            // Only a front end with an idle clock asks for one.
            SessionEvent::AwaySummary(_) => {}
            SessionEvent::CommandOutput(output) => self.printer.command_output(&output),
            // Headless sessions answer asks by their rules (and stop a stuck model); a blocked
            // prompt's reason is printed with its failed end (`command_result`); the rest is
            // for status lines.
            SessionEvent::TurnStarted { .. }
            | SessionEvent::PromptBlocked { .. }
            | SessionEvent::TurnEnded(_)
            | SessionEvent::ToolInput { .. }
            | SessionEvent::PermissionRequest(_)
            | SessionEvent::StuckModel(_)
            | SessionEvent::Elicitation(_)
            | SessionEvent::ElicitationWithdrawn { .. }
            | SessionEvent::PermissionWithdrawn { .. }
            | SessionEvent::Usage(_)
            | SessionEvent::PermissionModeChanged(_) => {}
        }
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

    #[test]
    fn slash_words_are_commands_for_the_session() {
        assert_eq!(
            submission("/cost"),
            Submission::Command {
                name: "cost".into(),
                args: String::new()
            }
        );
        assert_eq!(
            submission("/review this"),
            Submission::Command {
                name: "review".into(),
                args: "this".into()
            }
        );
        assert_eq!(
            submission("/usr/bin/env?"),
            Submission::Prompt("/usr/bin/env?".into())
        );
    }
}
