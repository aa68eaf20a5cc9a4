//! Headless `-p`, a front end of the session protocol: start the session, submit the prompt
//! (or each stream-json line) as an op, print the events as they come, end with `Op::Finish`
//! (background agents report as further turns, background jobs are drained), and turn the
//! ending into an exit code. Ctrl-C, SIGTERM and SIGHUP abort the session (the turn's tools are
//! killed, background jobs cancelled, the transcript stays whole) and exit with 128 + the
//! signal's number (see [`crate::signals`]); a second signal exits at once.

use std::io::{IsTerminal, Read};
use std::process::ExitCode;

use tine_session::{Event, Op, SessionEvent, SessionOptions, ShutdownReport};

use crate::config::{Headless, HeadlessError, InputFormat};
use crate::front::Front;
use crate::output::Printer;
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
    if config.input == InputFormat::StreamJson {
        return crate::control::run(options, config, mark).await;
    }
    let args = config;
    let (session, mut events) = crate::start::start(options).await?;
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
    let mut front = Front::new(
        Printer::new(args.output, args.verbose, info),
        events,
        args.output,
    );
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
        // Taken by `control` above.
        InputFormat::StreamJson => ShutdownReport::default(),
    };
    front.flush_background();
    front.final_result(report, false);
    mark("result");
    if let Some(code) = interrupted.exit_code() {
        return Ok(ExitCode::from(code));
    }
    Ok(if front.last_success {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
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
