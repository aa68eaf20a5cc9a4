//! Headless `-p`, a front end of the session protocol: start the session, submit the prompt
//! (or each stream-json line) as an op, print the events as they come, end with `Op::Finish`
//! (background agents report as further turns, background jobs are drained), and turn the
//! ending into an exit code. Ctrl-C, SIGTERM and SIGHUP abort the session (the turn's tools are
//! killed, background jobs cancelled, the transcript stays whole) and exit with 128 + the
//! signal's number (see [`crate::signals`]); a second signal exits at once.

use std::io::{IsTerminal, Read};
use std::process::ExitCode;

use serde_json::Value;
use tine_fork_runtime::BackgroundEvent;
use tine_session::{
    Event, Op, OpId, Session, SessionEvent, SessionHandle, SessionOptions, ShutdownReport,
    StartError, TurnEnd,
};
use tokio::io::AsyncBufReadExt;
use tokio::sync::mpsc::UnboundedReceiver;

use crate::config::{Headless, HeadlessError, InputFormat, OutputFormat};
use crate::output::{Printer, ResultSummary};
use crate::signals;

type Result<T> = std::result::Result<T, HeadlessError>;

fn input_error(message: impl Into<String>) -> HeadlessError {
    HeadlessError::Input(message.into())
}

/// A headless run: starts the session of `options`, reads the input `config` says, submits it,
/// prints the events as they come and returns the exit code (128 + a signal's number when one
/// ended it). `mark` names the start-up phases as they end (`session`, `ready`).
pub async fn run(
    options: SessionOptions,
    config: Headless,
    mark: &mut dyn FnMut(&'static str),
) -> Result<ExitCode> {
    let args = config;
    let (session, mut events) = start(options).await?;
    mark("session");
    // The first event says what the session is.
    let info = match events.recv().await {
        Some(Event {
            msg: SessionEvent::Configured(info),
            ..
        }) => info,
        _ => return Err(input_error("the session ended before it started")),
    };
    let interrupted = signals::watch(session.clone()).map_err(|e| input_error(e.to_string()))?;
    let mut front = Front {
        printer: Printer::new(args.output, args.verbose, info),
        events,
        background: Vec::new(),
        format: args.output,
        deferred: None,
        last_success: true,
    };
    // Start-up's notices (settings warnings, ...) before anything else.
    front.pending();
    let report = match args.input {
        InputFormat::Text => {
            let prompt = text_prompt(&args)?;
            front.printer.init();
            mark("ready");
            let id = session
                .submit(Op::parse(&prompt))
                .map_err(|e| input_error(e.to_string()))?;
            let _ = session.submit(Op::Finish);
            front.until_end(Some(id)).await
        }
        InputFormat::StreamJson => {
            front.printer.init();
            mark("ready");
            front.stream_json(&session, &interrupted).await?
        }
    };
    front.flush_background();
    front.final_result(report, args.input == InputFormat::StreamJson);
    if let Some(code) = interrupted.exit_code() {
        return Ok(ExitCode::from(code));
    }
    Ok(if front.last_success {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Starts the session; a settings refusal says everything that was wrong first.
async fn start(options: SessionOptions) -> Result<(SessionHandle, UnboundedReceiver<Event>)> {
    match Session::start(options).await {
        Ok(started) => Ok(started),
        Err(StartError::Settings {
            warnings,
            errors,
            refusal,
        }) => {
            for warning in warnings {
                eprintln!("tine: warning: {warning}");
            }
            for error in errors {
                eprintln!("tine: error: {error}");
            }
            Err(HeadlessError::Refused(refusal))
        }
        Err(error) => Err(error.into()),
    }
}

/// The printing side of the session's events.
struct Front {
    printer: Printer,
    events: UnboundedReceiver<Event>,
    /// Background jobs' reports, printed between turns (after a turn's messages, before its
    /// result; text mode: before the final result).
    background: Vec<BackgroundEvent>,
    format: OutputFormat,
    /// The turn whose result the run ends with: text mode's prompt (or a later report turn
    /// with a result), `json`'s last turn.
    deferred: Option<TurnEnd>,
    last_success: bool,
}

impl Front {
    /// Text mode: everything until the session's end; `prompt` is the op whose end the result
    /// reports (a later turn with a result, background agents' reports, replaces it).
    async fn until_end(&mut self, prompt: Option<OpId>) -> ShutdownReport {
        while let Some(event) = self.events.recv().await {
            match event.msg {
                SessionEvent::TurnEnded(end) => {
                    if end.result.is_some() || event.id == prompt {
                        self.deferred = Some(end);
                    }
                }
                SessionEvent::ShutdownComplete(report) => return report,
                msg => self.show(msg),
            }
        }
        ShutdownReport::default()
    }

    /// Stream-json input: each line a prompt, submitted once the turn before it is over, its
    /// result printed when it ends (`json`: the last one, at the end); background agents'
    /// report turns print theirs as they come. The input's end is `Op::Finish`.
    async fn stream_json(
        &mut self,
        session: &SessionHandle,
        interrupted: &signals::Interrupt,
    ) -> Result<ShutdownReport> {
        let mut lines = tokio::io::BufReader::new(tokio::io::stdin()).lines();
        let mut line_number = 0usize;
        let mut waiting: Option<OpId> = None;
        let mut input_open = true;
        loop {
            tokio::select! {
                biased;
                event = self.events.recv() => {
                    let Some(event) = event else {
                        return Ok(ShutdownReport::default());
                    };
                    match event.msg {
                        SessionEvent::ShutdownComplete(report) => return Ok(report),
                        SessionEvent::TurnEnded(end) => {
                            let ours = event.id.is_some() && event.id == waiting;
                            if ours {
                                waiting = None;
                            }
                            let aborted = self.turn_ended(end, ours);
                            if ours && input_open && (aborted || interrupted.is_set()) {
                                input_open = false;
                                let _ = session.submit(Op::Finish);
                            }
                        }
                        msg => self.show(msg),
                    }
                }
                line = lines.next_line(), if input_open && waiting.is_none() => {
                    let line = line.map_err(|e| input_error(format!("cannot read standard input: {e}")))?;
                    let Some(line) = line else {
                        input_open = false;
                        let _ = session.submit(Op::Finish);
                        continue;
                    };
                    line_number += 1;
                    if line.trim().is_empty() {
                        continue;
                    }
                    match stream_json_prompt(&line) {
                        Ok(Some(prompt)) => waiting = session.submit(Op::parse(&prompt)).ok(),
                        Ok(None) => {}
                        Err(error) => {
                            eprintln!("tine: warning: standard input line {line_number}: {error}");
                        }
                    }
                }
            }
        }
    }

    /// A turn ended in a stream-json run: its result line (`json`: kept for the one object at
    /// the end). Returns whether it was aborted.
    fn turn_ended(&mut self, end: TurnEnd, ours: bool) -> bool {
        self.flush_background();
        let Some(turn) = &end.result else {
            if ours {
                self.last_success = self.printer.command_result(&end);
            }
            return false;
        };
        let aborted = turn.terminal == tine_query_loop::Terminal::Aborted;
        let summary = ResultSummary::of(&end, turn, end.cost.clone(), &end.denials);
        self.last_success = !summary.is_error();
        if self.format == OutputFormat::Json {
            // `json` prints one object: the last turn's, once the input ends and the
            // background work is done (so its cost is in it).
            self.deferred = Some(end);
        } else {
            // Each line counts what was spent so far; background work still running is
            // reported by its own `system` line when it ends.
            self.printer.result(&summary);
        }
        aborted
    }

    /// The run's last word: text mode's result (or the command's), `json`'s one object.
    fn final_result(&mut self, report: ShutdownReport, stream_input: bool) {
        let Some(end) = self.deferred.take() else {
            return;
        };
        match &end.result {
            Some(turn) => {
                let summary = ResultSummary::of(&end, turn, report.cost, &report.denials);
                self.last_success = !summary.is_error();
                if stream_input {
                    let value = summary.to_value(self.printer.info());
                    self.printer.print_value(&value);
                } else {
                    self.printer.result(&summary);
                }
            }
            None => self.last_success = self.printer.command_result(&end),
        }
    }

    /// Everything already received.
    fn pending(&mut self) {
        while let Ok(event) = self.events.try_recv() {
            self.show(event.msg);
        }
    }

    fn flush_background(&mut self) {
        for event in std::mem::take(&mut self.background) {
            self.printer.background(&event);
        }
    }

    fn show(&mut self, msg: SessionEvent) {
        match msg {
            SessionEvent::Query(event) => self.printer.event(&event),
            SessionEvent::Background(event) => self.background.push(event),
            SessionEvent::Notice(notice) => self.printer.notice(&notice),
            SessionEvent::OpFailed { message } => eprintln!("tine: {message}"),
            SessionEvent::Request(request) => self.printer.request(&request),
            SessionEvent::CacheBreak(text) => eprintln!("[tine] cache break: {text}"),
            SessionEvent::StreamEvent(event) => self.printer.stream_event(&event),
            SessionEvent::ModelFallback { from, to } => self.printer.model_fallback(&from, &to),
            SessionEvent::CommandOutput(output) => self.printer.command_output(&output),
            // `/clear` or `/resume ID` put another conversation in place.
            SessionEvent::Configured(info) => self.printer.set_info(info),
            // Only a front end with an idle clock asks for one; headless sessions answer asks
            // by their rules (and stop a stuck model); a blocked prompt's reason is printed
            // with its failed end (`command_result`); the rest is for status lines and panels.
            SessionEvent::AwaySummary(_)
            | SessionEvent::History(_)
            | SessionEvent::AgentReports(_)
            | SessionEvent::TurnStarted
            | SessionEvent::PromptBlocked { .. }
            | SessionEvent::TurnEnded(_)
            | SessionEvent::ShutdownComplete(_)
            | SessionEvent::ToolInput { .. }
            | SessionEvent::PermissionRequest(_)
            | SessionEvent::PermissionWithdrawn { .. }
            | SessionEvent::StuckModel(_)
            | SessionEvent::Elicitation(_)
            | SessionEvent::ElicitationWithdrawn { .. }
            | SessionEvent::Task(_)
            | SessionEvent::TaskStopped(_)
            | SessionEvent::Usage(_)
            | SessionEvent::PermissionModeChanged(_)
            | SessionEvent::ModelChanged(_)
            | SessionEvent::ThinkingChanged(_)
            | SessionEvent::Hook(_) => {}
        }
    }
}

/// The prompt: the argument, else all of standard input.
fn text_prompt(args: &Headless) -> Result<String> {
    let prompt = match &args.prompt {
        Some(prompt) => prompt.clone(),
        None => {
            if std::io::stdin().is_terminal() {
                return Err(input_error(
                    "no prompt: pass one as `tine -p \"...\"` or on standard input",
                ));
            }
            let mut text = String::new();
            std::io::stdin().read_to_string(&mut text).map_err(|e| {
                input_error(format!("cannot read the prompt from standard input: {e}"))
            })?;
            text
        }
    };
    if prompt.trim().is_empty() {
        return Err(input_error(
            "the prompt is empty: pass one as `tine -p \"...\"` or on standard input",
        ));
    }
    Ok(prompt)
}

/// One line of `--input-format stream-json`: `{"type":"user","message":{"role":"user",
/// "content": "..." | [{"type":"text","text":"..."}, ...]}}`. Other message types are skipped.
pub fn stream_json_prompt(line: &str) -> std::result::Result<Option<String>, String> {
    let value: Value = serde_json::from_str(line).map_err(|_| "not a JSON object".to_owned())?;
    match value.get("type").and_then(Value::as_str) {
        Some("user") => {}
        Some(_) => return Ok(None),
        None => return Err("a message needs a \"type\" (\"user\")".to_owned()),
    }
    let content = value
        .get("message")
        .and_then(|m| m.get("content"))
        .ok_or_else(|| "a user message needs message.content".to_owned())?;
    let text = match content {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => {
            return Err(
                "message.content must be a string or an array of content blocks".to_owned(),
            );
        }
    };
    if text.trim().is_empty() {
        return Err("the user message has no text".to_owned());
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
