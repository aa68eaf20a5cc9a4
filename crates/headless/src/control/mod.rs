//! Stream-json input, and on it the Claude Agent SDK's control protocol: user messages become
//! prompts; `control_request`s from the app become ops (`requests`); what tine asks the app
//! (`can_use_tool` under `--permission-prompt-tool stdio`) goes out as its own
//! `control_request`s and their answers come back as the questions' answers (`outbound`,
//! `permission`). The session starts on the app's first line: when that is `initialize` (an
//! SDK sends it first), what it registers is part of the session from its first request, and
//! its answer names the session's commands, agents and models. Standard input is
//! read all along, also while a turn runs (an `interrupt` must reach it); its end is
//! `Op::Finish`: what is still open is denied, background agents report, and the run ends.
//!
//! - `lines`: standard input, line by line (capped), parsed.
//! - `outbound`: tine's requests to the app and their answers; every stdout line written whole.
//! - `permission`: `can_use_tool` and its answer.
//! - `requests`: the app's requests as ops.
//! - `messages`: `init`, replayed user messages, task lines, bad input.
//! - `prompt`: a user message as the prompt it carries.

mod bridges;
mod initialize;
mod lines;
mod messages;
mod outbound;
mod permission;
mod prompt;
mod requests;

use std::collections::{HashMap, HashSet};
use std::process::ExitCode;
use std::sync::Arc;

use serde_json::Value;
use tine_session::{
    Answer, Approvals, Event, Op, OpId, QuestionId, SessionEvent, SessionHandle, SessionInfo,
    SessionOptions, ShutdownReport, UsageReport,
};
use tokio::io::BufReader;
use tokio::sync::mpsc;

use crate::config::{Headless, HeadlessError, OutputFormat};
use crate::front::Front;
use crate::output::Printer;
use crate::signals;
use lines::Line;
use outbound::{Outbound, respond, write_line};
use requests::{Awaiting, Handled};

pub use prompt::stream_json_prompt;

/// A stream-json run (see the module doc).
pub(crate) async fn run(
    mut options: SessionOptions,
    config: Headless,
    mark: &mut dyn FnMut(&'static str),
) -> Result<ExitCode, HeadlessError> {
    let mut input = read_input();
    // The session starts on the app's first line: with what an `initialize` registers when
    // that is the line (an SDK sends it first), else at once.
    let mut early = Vec::new();
    let mut initialize = None;
    let mut input_open = true;
    loop {
        let Some((number, line)) = input.recv().await else {
            input_open = false;
            break;
        };
        match line {
            Line::Nothing => continue,
            Line::Request { id, request }
                if request.get("subtype").and_then(Value::as_str) == Some("initialize") =>
            {
                initialize = Some((id, request));
            }
            other => early.push((number, other)),
        }
        break;
    }
    if config.permission_prompt_stdio {
        options.approvals = Approvals::App;
    }
    // An SDK always passes `--verbose` (Claude Code requires it with stream-json): it asks
    // for every message, not the loop's diagnostics on the app's stderr; those go to the log.
    options.verbose = false;
    let outbound = Arc::new(Outbound::default());
    let mut refused = None;
    if let Some((id, request)) = &initialize {
        match initialize::apply(request, &mut options) {
            Ok(()) => {
                if let Some(hooks) = request.get("hooks").filter(|h| !h.is_null()) {
                    options.hook_callbacks = Some(tine_session::AppHooks {
                        hooks: hooks.clone(),
                        callbacks: Arc::new(bridges::AppCallbacks(Arc::clone(&outbound))),
                    });
                }
            }
            Err(error) => refused = Some((id.clone(), error)),
        }
    }
    // The app's in-process MCP servers, if its `--mcp-config` names any.
    options.sdk_mcp_relay = Some(Arc::new(bridges::AppMcp(Arc::clone(&outbound))));
    let agents: Vec<String> = options.agents.iter().map(|a| a.name.clone()).collect();
    // Display only: the SDK's `forwardSubagentText` asks for sub-agents' text in the stream.
    let subagent_text = initialize.as_ref().is_some_and(|(_, request)| {
        request.get("forwardSubagentText").and_then(Value::as_bool) == Some(true)
    });
    // While the session starts, the app may already be asked things (an SDK MCP server's
    // handshake): its answers are taken as they come, the rest waits.
    let start = crate::start::start(options);
    tokio::pin!(start);
    let started = loop {
        tokio::select! {
            started = &mut start => break started,
            line = input.recv(), if input_open => match line {
                Some((_, Line::Response { id, result })) => outbound.resolve(&id, result),
                Some(other) => early.push(other),
                None => {
                    input_open = false;
                    outbound.close();
                }
            },
        }
    };
    let (session, mut events) = started?;
    mark("session");
    let info = match events.recv().await {
        Some(Event {
            msg: SessionEvent::Configured(info),
            ..
        }) => info,
        _ => {
            return Err(HeadlessError::Input(
                "the session ended before it started".into(),
            ));
        }
    };
    let interrupted =
        signals::watch(session.clone()).map_err(|e| HeadlessError::Input(e.to_string()))?;
    match (&initialize, refused) {
        (_, Some((id, error))) => respond(&id, Err(error)),
        (Some((id, _)), None) => respond(id, Ok(initialize::answer(&info, &agents))),
        (None, None) => {}
    }
    let mut control = Control {
        front: Front::new(
            Printer::new(config.output, false, info.clone()).with_subagent_text(subagent_text),
            events,
            config.output,
        ),
        session,
        outbound,
        replay: config.replay_user_messages,
        stream_json: config.output == OutputFormat::StreamJson,
        awaiting: HashMap::new(),
        prompts: HashMap::new(),
        internal: Vec::new(),
        asks: HashMap::new(),
        usage: None,
        info,
        input_open,
        tasks_seen: HashSet::new(),
    };
    if config.output == OutputFormat::StreamJson {
        write_line(&messages::init(&control.info));
    }
    mark("ready");
    // Start-up's notices (settings warnings, ...) after the init line.
    control.front.pending();
    for (number, line) in early {
        control.line(number, line);
    }
    if !control.input_open {
        control.close_input();
    }
    let report = control.until_end(&mut input, &interrupted).await;
    control.front.flush_background();
    control.front.final_result(report, true);
    if let Some(code) = interrupted.exit_code() {
        return Ok(ExitCode::from(code));
    }
    Ok(if control.front.last_success {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Standard input, read on a task of its own (line numbers from 1), so the session's events
/// and the app's lines are both taken as they come.
fn read_input() -> mpsc::UnboundedReceiver<(usize, Line)> {
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut stdin = BufReader::new(tokio::io::stdin());
        let mut number = 0;
        loop {
            number += 1;
            let line = match lines::next_line(&mut stdin).await {
                Ok(None) => return,
                Ok(Some(Ok(text))) => lines::parse(&text),
                Ok(Some(Err(error))) => Line::Bad { error },
                Err(error) => {
                    let _ = tx.send((
                        number,
                        Line::Bad {
                            error: format!("cannot read standard input: {error}"),
                        },
                    ));
                    return;
                }
            };
            if tx.send((number, line)).is_err() {
                return;
            }
        }
    });
    rx
}

/// A stream-json run's state beside the printer.
struct Control {
    front: Front,
    session: SessionHandle,
    outbound: Arc<Outbound>,
    /// `--replay-user-messages`: each user message is echoed with its uuid.
    replay: bool,
    /// Whether stdout is stream-json (the task lines are written only then).
    stream_json: bool,
    /// The app's requests answered by an op's events: op → (request id, what answers it).
    awaiting: HashMap<OpId, (String, Awaiting)>,
    /// The ops of the user messages read, by their uuid (`rewind_files`).
    prompts: HashMap<String, OpId>,
    /// Ops tine submitted for the app's requests (`/mcp` for `mcp_status`): their turn's output
    /// is not printed as the app's.
    internal: Vec<OpId>,
    /// `can_use_tool` requests still open: the session's question → tine's request id.
    asks: HashMap<QuestionId, String>,
    /// The last status-line figures (`get_context_usage`).
    usage: Option<UsageReport>,
    info: SessionInfo,
    input_open: bool,
    /// The tasks said to have started (`task_started` once each, however an agent's updates
    /// come).
    tasks_seen: HashSet<String>,
}

impl Control {
    /// Everything until the session's end.
    async fn until_end(
        &mut self,
        input: &mut mpsc::UnboundedReceiver<(usize, Line)>,
        interrupted: &signals::Interrupt,
    ) -> ShutdownReport {
        loop {
            tokio::select! {
                biased;
                event = self.front.events.recv() => {
                    let Some(event) = event else {
                        return ShutdownReport::default();
                    };
                    if let Some(report) = self.event(event, interrupted) {
                        return report;
                    }
                }
                line = input.recv(), if self.input_open => match line {
                    Some((number, line)) => self.line(number, line),
                    None => self.close_input(),
                },
            }
        }
    }

    /// The app's input ended: what it was asked is denied, then the session finishes.
    fn close_input(&mut self) {
        self.input_open = false;
        self.outbound.close();
        let _ = self.session.submit(Op::Finish);
    }

    /// One line of the app's.
    fn line(&mut self, number: usize, line: Line) {
        match line {
            Line::User {
                text,
                content,
                uuid,
            } => {
                let uuid = uuid.unwrap_or_else(messages::new_uuid);
                if self.replay {
                    write_line(&messages::replayed_user(&self.info, &text, Some(&uuid)));
                }
                let op = match content {
                    Some(blocks) => Op::PromptContent(blocks),
                    None => Op::parse(&text),
                };
                let submitted = self.session.submit(op);
                if let Ok(op) = &submitted {
                    // `rewind_files` names a prompt by this uuid.
                    self.prompts.insert(uuid, *op);
                }
                if let Err(error) = submitted {
                    write_line(&messages::bad_input(number, &error.to_string()));
                }
            }
            Line::Request { id, request } => {
                match requests::handle(&self.session, &request, self.usage.as_ref(), &self.prompts)
                {
                    Handled::Now(result) => respond(&id, result),
                    Handled::Later(op, awaiting) => {
                        if awaiting == Awaiting::McpStatus {
                            self.internal.push(op);
                        }
                        self.awaiting.insert(op, (id, awaiting));
                    }
                }
            }
            Line::Response { id, result } => self.outbound.resolve(&id, result),
            Line::Cancel { id } => {
                tracing::debug!(%id, "the app withdrew a request tine answers at once; ignored");
            }
            Line::Nothing => {}
            Line::Bad { error } => write_line(&messages::bad_input(number, &error)),
        }
    }

    /// One event of the session's; `Some` once it has ended.
    fn event(&mut self, event: Event, interrupted: &signals::Interrupt) -> Option<ShutdownReport> {
        if let Some(id) = event.id
            && let Some((request, awaiting)) = self.awaiting.get(&id).cloned()
            && let Some(result) = requests::answered(awaiting, &event.msg)
        {
            self.awaiting.remove(&id);
            respond(&request, result);
        }
        let internal = event.id.is_some_and(|id| self.internal.contains(&id));
        match event.msg {
            SessionEvent::ShutdownComplete(report) => return Some(report),
            SessionEvent::TurnEnded(end) => {
                if internal {
                    self.internal.retain(|op| Some(*op) != event.id);
                    return None;
                }
                // An interrupt the app asked for ends this turn only; a signal ends the run.
                let _aborted = self.front.turn_ended(end, true);
                if self.input_open && interrupted.is_set() {
                    self.close_input();
                }
            }
            SessionEvent::CommandOutput(_) | SessionEvent::TurnStarted if internal => {}
            SessionEvent::PermissionRequest(request) => self.ask(request),
            SessionEvent::PermissionWithdrawn { question } => {
                if let Some(id) = self.asks.remove(&question) {
                    self.outbound.cancel(&id);
                }
            }
            SessionEvent::Task(task) => {
                let first = self.tasks_seen.insert(task.id.clone());
                if self.stream_json {
                    for line in messages::task(&self.info, &task, first) {
                        write_line(&line);
                    }
                }
            }
            SessionEvent::Usage(report) => self.usage = Some(report),
            SessionEvent::Configured(info) => {
                self.info = info.clone();
                self.front.show(SessionEvent::Configured(info));
            }
            msg => self.front.show(msg),
        }
        None
    }

    /// A call the rules leave open: the app's `can_use_tool` decides it.
    fn ask(&mut self, request: tine_session::PermissionRequest) {
        let (id, answer) = self.outbound.request(permission::can_use_tool(&request));
        self.asks.insert(request.id, id);
        let session = self.session.clone();
        let question = request.id;
        tokio::spawn(async move {
            let answer = permission::answer(answer.await);
            let _ = session.submit(Op::Answer {
                question,
                answer: Answer::Permission(answer),
            });
        });
    }
}
