//! The printing side of a headless run: the session's events as text, one `json` result, or
//! stream-json lines, with background jobs' reports held until a turn's end.

use tine_fork_runtime::BackgroundEvent;
use tine_session::{Event, OpId, SessionEvent, ShutdownReport, TurnEnd};
use tokio::sync::mpsc::UnboundedReceiver;

use crate::config::OutputFormat;
use crate::output::{Printer, ResultSummary};

/// The printing side of the session's events.
pub(crate) struct Front {
    pub(crate) printer: Printer,
    pub(crate) events: UnboundedReceiver<Event>,
    /// Background jobs' reports, printed between turns (after a turn's messages, before its
    /// result; text mode: before the final result).
    pub(crate) background: Vec<BackgroundEvent>,
    pub(crate) format: OutputFormat,
    /// The turn whose result the run ends with: text mode's prompt (or a later report turn
    /// with a result), `json`'s last turn.
    pub(crate) deferred: Option<TurnEnd>,
    pub(crate) last_success: bool,
}

impl Front {
    pub(crate) fn new(
        printer: Printer,
        events: UnboundedReceiver<Event>,
        format: OutputFormat,
    ) -> Self {
        Self {
            printer,
            events,
            background: Vec::new(),
            format,
            deferred: None,
            last_success: true,
        }
    }

    /// Text mode: everything until the session's end; `prompt` is the op whose end the result
    /// reports (a later turn with a result, background agents' reports, replaces it).
    pub(crate) async fn until_end(&mut self, prompt: Option<OpId>) -> ShutdownReport {
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

    /// A turn ended in a stream-json run: its result line (`json`: kept for the one object at
    /// the end). Returns whether it was aborted.
    pub(crate) fn turn_ended(&mut self, end: TurnEnd, ours: bool) -> bool {
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
    pub(crate) fn final_result(&mut self, report: ShutdownReport, stream_input: bool) {
        let Some(end) = self.deferred.take() else {
            return;
        };
        match &end.result {
            Some(turn) => {
                let summary = ResultSummary::of(&end, turn, report.cost, &report.denials);
                self.last_success = !summary.is_error();
                if stream_input {
                    let value = self.printer.result_value(&summary);
                    self.printer.print_value(&value);
                } else {
                    self.printer.result(&summary);
                }
            }
            None => self.last_success = self.printer.command_result(&end),
        }
    }

    /// Everything already received.
    pub(crate) fn pending(&mut self) {
        while let Ok(event) = self.events.try_recv() {
            self.show(event.msg);
        }
    }

    pub(crate) fn flush_background(&mut self) {
        for event in std::mem::take(&mut self.background) {
            self.printer.background(&event);
        }
    }

    pub(crate) fn show(&mut self, msg: SessionEvent) {
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
            // `--include-hook-events` (the session sends them only then).
            SessionEvent::Hook(run) => self.printer.hook(&run),
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
            // `/rewind`'s output says what it did; `rewind_files` answers with it.
            | SessionEvent::RewindPoints(_)
            | SessionEvent::Rewound(_)
            | SessionEvent::RewindConflicts { .. } => {}
        }
    }
}
