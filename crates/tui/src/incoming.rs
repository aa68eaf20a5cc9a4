//! What each of the session's events does to the [`App`] ([`App::handle`]): a new
//! conversation in place (its `Configured` starts the transcript over), the turns' start and
//! end by op id (the guard released, queued work sent), questions into their dialogs,
//! commands' answers, background work into the tasks panel and the transcript, the status
//! line's figures (and a status line command's run due when they change). The running turn's
//! own events (text, tools) are `reply`'s; a resumed conversation shown again is `replay`'s.

use tine_session::{
    AgentReport, BackgroundEvent, CommandOutput, CompactBoundary, Event, NoticeLevel, Op, OpId,
    SessionEvent, SessionInfo, StoppedTask, TaskState, TurnOutcome, UsageReport,
};

use crate::app::{App, StatusFigures};
use crate::entry::Entry;
use crate::panel_task::{PanelTask, job_title};

impl App {
    /// One event from the session; returns the ops it makes due (what was queued behind a turn
    /// that ended).
    pub fn handle(&mut self, event: Event) -> Vec<Op> {
        self.dirty = true;
        let Event { id, msg } = event;
        let cwd = self.info.as_ref().map(|info| info.cwd.clone());
        match msg {
            SessionEvent::Configured(info) => self.configure(id, info),
            SessionEvent::History(items) => self.replay(items),
            SessionEvent::Notice(notice) => self.notice(notice.level, notice.text),
            SessionEvent::OpFailed { message } => {
                if id.is_some_and(|id| self.quiet_failures.remove(&id)) {
                    // An answer to a question withdrawn meanwhile: nothing waits for it.
                    tracing::debug!(%message, "answer not taken");
                } else {
                    self.notice(NoticeLevel::Warning, message);
                }
            }
            SessionEvent::AgentReports(reports) => {
                for report in &reports {
                    self.notice(NoticeLevel::Info, report_line(report));
                }
            }
            SessionEvent::TurnStarted => self.turn_started(id),
            SessionEvent::Query(event) => self.query(event),
            SessionEvent::ToolInput { id, tool, input } => self.tool_input(id, tool, &input),
            SessionEvent::PermissionRequest(request) => {
                self.dialog.push(request, cwd.as_deref());
            }
            SessionEvent::PermissionWithdrawn { question } => self.dialog.withdraw(question),
            SessionEvent::StuckModel(question) => self.dialog.push_stuck(question, cwd.as_deref()),
            SessionEvent::Elicitation(question) => self.elicitation.push(question),
            SessionEvent::ElicitationWithdrawn { question } => self.elicitation.withdraw(question),
            SessionEvent::CommandOutput(output) => self.command_output(output),
            // Its failed `TurnEnded` follows and shows the reason as the turn's error.
            SessionEvent::PromptBlocked { .. } => {}
            SessionEvent::TurnEnded(end) => {
                self.status_figures_changed(None);
                return self.turn_ended(id, end.outcome);
            }
            SessionEvent::Background(event) => self.background(event),
            SessionEvent::Task(update) => {
                let cwd = self.info.as_ref().map(|info| info.cwd.as_path());
                let task = PanelTask::of_task(update, cwd);
                self.upsert_task(task);
            }
            SessionEvent::TaskStopped(stopped) => {
                self.notice(NoticeLevel::Info, stopped_line(&stopped));
            }
            SessionEvent::Usage(report) => {
                self.status = figures(&report);
                self.status_figures_changed(Some(report));
            }
            SessionEvent::PermissionModeChanged(mode) => {
                self.mode = mode;
                self.status_figures_changed(None);
            }
            SessionEvent::ModelChanged(model) => {
                self.status.model = model;
                self.status_figures_changed(None);
            }
            // `/thinking`'s answer says so in the transcript.
            SessionEvent::ThinkingChanged(on) => {
                self.status_command.thinking = on;
                self.status_figures_changed(None);
            }
            // Verbose sessions only; the UI keeps them in the log.
            SessionEvent::Request(summary) => tracing::debug!(?summary, "request"),
            SessionEvent::CacheBreak(text) => tracing::info!(%text, "cache break"),
            // Only `-p --include-partial-messages` asks for raw events; a fallback's notice
            // says it, and the status line's model follows the usage reports.
            SessionEvent::StreamEvent(_) | SessionEvent::ModelFallback { .. } => {}
            SessionEvent::AwaySummary(text) => self.away.show(&text),
            // Only `-p --include-hook-events` asks for hook runs.
            SessionEvent::Hook(_) => {}
            // The channel closes after it; the front end has the report.
            SessionEvent::ShutdownComplete(_) => {}
            // The prompt comes back to the box after a conversation rewind.
            SessionEvent::Rewound(report) => {
                self.notice(NoticeLevel::Info, rewound_line(&report));
                if report.scope.conversation() && self.input.is_empty() {
                    self.input.set_text(&report.text);
                }
            }
            SessionEvent::RewindPoints(points) => {
                if points.is_empty() {
                    self.notice(NoticeLevel::Info, "Nothing to rewind yet.".to_owned());
                }
                self.rewind.open(points);
            }
            SessionEvent::RewindConflicts { prompt, files } => {
                self.rewind.conflicts(prompt, files, self.rewind_scope);
            }
        }
        Vec::new()
    }

    pub(crate) fn notice(&mut self, level: NoticeLevel, text: String) {
        // Background work reports at any time, also while a reply streams: the reply goes on
        // in its own entry above the notice rather than being cut in two.
        self.transcript.push(Entry::Notice { level, text });
    }

    /// The conversation in place: the first is welcomed; another (`/clear`, `/resume ID`)
    /// starts the transcript over, unless the `/clear` that asked for it cleared it already.
    fn configure(&mut self, id: Option<OpId>, info: SessionInfo) {
        let first = self.info.is_none();
        let cleared = id.is_some() && id == self.cleared_by;
        if cleared {
            self.cleared_by = None;
        } else if !first {
            self.clear_transcript();
        }
        self.commands = crate::slash::table(&info.commands);
        self.mode = info.permission_mode;
        // The figures were the previous conversation's.
        self.status = StatusFigures {
            model: info.model.clone(),
            ..StatusFigures::default()
        };
        let new_session = self.info.as_ref().map(|i| &i.session_id) != Some(&info.session_id);
        self.usage = None;
        self.status_command
            .configure(&info, new_session, tokio::time::Instant::now());
        self.away.set_after(info.away_after);
        self.speculation.set_on(info.speculation);
        if first && self.config.welcome {
            // Claude Code's welcome line: where this is and where the help is.
            let text = format!(
                "Welcome to tine · /help for commands and keys · cwd: {}",
                info.cwd.display()
            );
            self.notice(NoticeLevel::Info, text);
        }
        self.info = Some(info);
    }

    fn turn_started(&mut self, id: Option<OpId>) {
        if id.is_some_and(|id| self.quiet.contains(&id)) {
            return;
        }
        // A turn the UI did not submit (background agents' reports): it holds the guard.
        if self.turn.is_none() {
            self.begin_turn(id);
        }
    }

    fn turn_ended(&mut self, id: Option<OpId>, outcome: TurnOutcome) -> Vec<Op> {
        if id.is_some_and(|id| self.quiet.remove(&id)) {
            return Vec::new();
        }
        self.close_open();
        let ours = self
            .turn
            .as_ref()
            .is_some_and(|turn| turn.op.is_none() || turn.op == id);
        if !ours {
            // Another turn (the session's own, started while this one was being sent).
            if let TurnOutcome::Failed { message } = outcome {
                self.transcript.push(Entry::Error { message });
            }
            return Vec::new();
        }
        let was_interrupted = self.turn.as_ref().is_some_and(|t| t.interrupted);
        if outcome != TurnOutcome::Completed {
            self.interrupt_running_tools();
        }
        match outcome {
            TurnOutcome::Completed => {}
            TurnOutcome::Interrupted if was_interrupted => {}
            TurnOutcome::Interrupted => {
                self.transcript.push(Entry::Interrupted);
            }
            TurnOutcome::Failed { message } => {
                self.transcript.push(Entry::Error { message });
            }
        }
        self.release_turn()
    }

    /// A command's answer: `/compact`'s card (as an automatic compaction shows), an error, or
    /// its text.
    fn command_output(&mut self, output: CommandOutput) {
        // `/resume` without an id: its sessions to choose from (the text stays as the list).
        if output.command == "resume" && output.data.get("sessions").is_some() {
            self.resume.open(&output.data);
        }
        // `/model` without a name: the models to switch to.
        if output.command == "model" && output.data.get("choices").is_some() {
            self.resume.open_models(&output.data);
        }
        // `/export` without a file: the text for the clipboard, said in the UI's words.
        if output.command == "export"
            && let Some(text) = output.data.get("clipboard").and_then(|t| t.as_str())
        {
            self.copy_to_clipboard(text);
            return;
        }
        let boundary = output
            .data
            .get("compact_boundary")
            .filter(|b| !b.is_null())
            .and_then(|b| serde_json::from_value::<CompactBoundary>(b.clone()).ok());
        if let Some(boundary) = boundary {
            self.close_open();
            self.transcript.push(Entry::Compacted(boundary));
        } else if output.is_error {
            self.transcript.push(Entry::Error {
                message: output.text,
            });
        } else {
            self.push_markdown(&output.text);
        }
    }

    /// Hands `text` to the loop for the clipboard (cut to what one OSC 52 sequence carries)
    /// and says what was copied.
    fn copy_to_clipboard(&mut self, text: &str) {
        let kept = crate::clipboard::fit(text);
        let lines = text.lines().count();
        let mut said = if kept.len() == text.len() {
            format!("Copied to clipboard ({lines} lines)")
        } else {
            format!(
                "Copied the first {} of {lines} lines to clipboard: terminals take about {} KB \
                 through OSC 52; `/export FILE` writes it all",
                kept.lines().count(),
                crate::clipboard::MAX_SEQUENCE / 1000
            )
        };
        if self.config.tmux {
            said.push_str(" · in tmux this needs `set -g set-clipboard on`");
        }
        self.clipboard = Some(kept.to_owned());
        self.push_markdown(&said);
    }

    /// A job of the pipeline: in the panel, and what it has to say ("saved 2 memories", a
    /// failure) in the transcript too.
    fn background(&mut self, event: BackgroundEvent) {
        self.upsert_task(PanelTask::of_job(&event));
        match event {
            BackgroundEvent::Finished { outcome, .. } if !outcome.summary.is_empty() => {
                self.notice(NoticeLevel::Info, outcome.summary);
            }
            BackgroundEvent::Failed { job, error } => {
                self.notice(
                    NoticeLevel::Warning,
                    format!("{}: {error}", job_title(&job)),
                );
            }
            BackgroundEvent::Started { .. }
            | BackgroundEvent::Finished { .. }
            | BackgroundEvent::Cancelled { .. } => {}
        }
    }
}

/// The status line's figures of a usage report.
fn figures(report: &UsageReport) -> StatusFigures {
    StatusFigures {
        model: report.model.clone(),
        context_tokens: report.context_tokens,
        context_window: report.context_window,
        cost_usd: report.cost.total().cost_usd,
        cache_read_share: report.cache_read_share,
    }
}

/// The line the transcript shows for each background agent's report delivered.
fn report_line(report: &AgentReport) -> String {
    let how = match &report.state {
        TaskState::Completed => "completed".to_owned(),
        TaskState::Failed(why) => format!("failed: {why}"),
        TaskState::Cancelled => "was stopped".to_owned(),
        TaskState::Running => "is running".to_owned(),
    };
    format!(
        "agent \"{}\" {how}; its report goes to the model",
        report.description
    )
}

/// What the transcript says of a task the person stopped.
fn stopped_line(stopped: &StoppedTask) -> String {
    match stopped {
        StoppedTask::Agent { description } => format!("stopping agent \"{description}\""),
        StoppedTask::Shell { command } => format!("killed `{command}`"),
        StoppedTask::Dream => "dream killed; its lock was rolled back".to_owned(),
    }
}

/// What a rewind did, in a line.
fn rewound_line(report: &tine_session::RewindReport) -> String {
    let what = match report.scope {
        tine_session::RewindScope::Both => "the code and the conversation",
        tine_session::RewindScope::Code => "the code",
        tine_session::RewindScope::Conversation => "the conversation",
    };
    let files = report.restored.len() + report.removed.len();
    match (report.scope.code(), files) {
        (true, 1) => format!(
            "Rewound {what} to before prompt {} (1 file put back).",
            report.prompt
        ),
        (true, n) => format!(
            "Rewound {what} to before prompt {} ({n} files put back).",
            report.prompt
        ),
        (false, _) => format!("Rewound {what} to before prompt {}.", report.prompt),
    }
}
