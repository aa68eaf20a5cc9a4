//! The task between the UI and the session: session events go to the UI through the
//! [`Adapter`], the UI's commands become handle calls (one arm per [`UiCommand`]). It owns the
//! session, so the commands that change which conversation runs (`/clear`, `/resume ID`,
//! `/model NAME`) shut one session down (its extraction flushed) and start the next, and the
//! status line starts again with the new one. It also puts the model's background shells in
//! the tasks panel until they end, and, when the person has been idle for
//! [`IDLE_FLUSH`], has the session start what background jobs put off (a batched memory
//! extraction), so memories do not wait for the exit, and Notification hooks hear
//! `idle_prompt`. Sub-agents are listed in the tasks panel too (see `agents`), a task the
//! person stops there is stopped by the session, and background agents' reports become the
//! next turn's input.

use std::path::PathBuf;
use std::time::Duration;

use tine_config::SessionId;
use tine_fork_runtime::TaskNotification;
use tine_query_loop::{QueryEvent, load_session};
use tine_session::custom_commands::CustomCommand;
use tine_session::{
    ElicitationId, PermissionAnswer as SessionAnswer, PermissionId, Resume, Session,
    SessionEndReason, SessionEvent, SessionHandle, SessionOptions, SessionSummary, StoppedTask,
    StuckDecision, StuckId, Submission,
};
use tine_tools::{TaskStatus as ShellStatus, ToolDisplay};
use tine_tui::{
    NoticeLevel, PermissionAnswer, SlashCommandSpec, TaskKind, TaskStatus, TaskView, TurnEndReason,
    UiCommand, UiEvent, UsageView,
};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};
use tokio_util::sync::CancellationToken;

use super::adapter::{Adapter, session_mode, ui_mode};
use super::agents::{AgentTasks, report_notice, reports_prompt};
use super::{history, local, replay};

/// How long after a turn, with nothing typed, the deferred background work starts.
pub const IDLE_FLUSH: Duration = Duration::from_secs(60);

/// Makes the options of a session: which conversation, and a model other than the start's.
pub type OptionsFactory = Box<dyn Fn(Resume, Option<String>) -> SessionOptions + Send>;

/// A running session and its events.
pub struct Running {
    pub handle: SessionHandle,
    pub events: UnboundedReceiver<SessionEvent>,
}

impl Running {
    pub async fn start(options: SessionOptions) -> Result<Self, tine_session::StartError> {
        let (handle, events) = Session::start(options).await?;
        Ok(Self { handle, events })
    }
}

/// What the driver needs besides the session.
pub struct Driver {
    /// `None` only when a restart failed twice; the driver then ends.
    pub session: Option<Running>,
    pub cwd: PathBuf,
    pub factory: OptionsFactory,
    pub ui: UnboundedSender<UiEvent>,
    pub custom: Vec<CustomCommand>,
    /// `None`: no history on disk (tests).
    pub history: Option<PathBuf>,
    pub user_home: Option<PathBuf>,
    /// The model a `/model NAME` chose, kept across `/clear` and `/resume`.
    pub model: Option<String>,
    pub adapter: Adapter,
    /// How long an idle person waits for the deferred background work ([`IDLE_FLUSH`]).
    pub idle_flush: Duration,
    /// When the deferred background work starts, if the person stays idle.
    pub idle_at: Option<tokio::time::Instant>,
    /// Sub-agents in the tasks panel, and their reports waiting for the next turn.
    pub agents: AgentTurns,
}

/// Background agents' reports, delivered as the next turn's input once no turn runs.
#[derive(Debug, Default)]
pub struct AgentTurns {
    /// What the tasks panel was told about each agent.
    pub tasks: AgentTasks,
    /// Whether a background agent may still report (the driver waits for it).
    pub armed: bool,
    /// Reports that came while a turn ran.
    pub pending: Vec<TaskNotification>,
    /// Whether a turn the UI shows runs (between its `TurnStarted` and `TurnEnded`).
    pub busy: bool,
}

/// How the driver ended: the last session's summary (for the line after exit).
pub struct Ended {
    pub summary: Option<SessionSummary>,
}

impl Driver {
    /// Runs until the UI exits (or goes away) or `stop` is cancelled (a signal: everything is
    /// cancelled and nothing waited for), then shuts the session down.
    pub async fn run(
        mut self,
        mut commands: UnboundedReceiver<UiCommand>,
        stop: CancellationToken,
    ) -> Ended {
        // SessionEnd's reason.
        let mut reason = SessionEndReason::Other;
        while let Some(session) = self.session.as_mut() {
            let idle_at = self.idle_at;
            let registry = session.handle.tasks().clone();
            let reports = self.agents.armed;
            tokio::select! {
                event = session.events.recv() => match event {
                    Some(event) => self.forward(event),
                    None => break,
                },
                command = commands.recv() => match command {
                    Some(UiCommand::Exit) | None => {
                        reason = SessionEndReason::PromptInputExit;
                        break;
                    }
                    Some(command) => self.apply(command).await,
                },
                () = stop.cancelled() => {
                    session.handle.cancellation().cancel();
                    break;
                }
                () = tokio::time::sleep_until(idle_at.unwrap_or_else(tokio::time::Instant::now)),
                    if idle_at.is_some() =>
                {
                    self.idle_at = None;
                    session.handle.flush_background();
                    session.handle.notify_idle();
                }
                notifications = registry.next_notifications(far_future()), if reports => {
                    match notifications {
                        Some(notifications) => self.agent_reports(notifications),
                        None => self.agents.armed = false,
                    }
                }
            }
        }
        let Some(session) = self.session.take() else {
            return Ended { summary: None };
        };
        let summary = session.handle.summary().clone();
        let _report = session.handle.shutdown_because(reason).await;
        Ended {
            summary: Some(summary),
        }
    }

    fn forward(&mut self, event: SessionEvent) {
        if let SessionEvent::Query(QueryEvent::ToolResult { output, .. }) = &event
            && let ToolDisplay::Shell {
                background_task: Some(id),
                ..
            } = &output.display
        {
            self.watch_shell(id);
        }
        let mut ended = false;
        for event in self.adapter.map(event) {
            match event {
                UiEvent::TurnStarted => self.agents.busy = true,
                UiEvent::TurnEnded { .. } => {
                    self.idle_at = Some(tokio::time::Instant::now() + self.idle_flush);
                    self.agents.busy = false;
                    ended = true;
                }
                _ => {}
            }
            let _ = self.ui.send(event);
        }
        self.sync_agents();
        if ended && !self.agents.pending.is_empty() {
            let pending = std::mem::take(&mut self.agents.pending);
            self.agent_reports(pending);
        }
    }

    /// The registry's agents into the tasks panel; waits for reports while any runs in the
    /// background.
    fn sync_agents(&mut self) {
        let Some(session) = &self.session else {
            return;
        };
        let registry = session.handle.tasks();
        for event in self.agents.tasks.changes(registry) {
            let _ = self.ui.send(event);
        }
        if registry.running_in_background() > 0 {
            self.agents.armed = true;
        }
    }

    /// Background agents ended: their reports are the next turn's input (now, or when the
    /// running turn ends), each said in the transcript.
    fn agent_reports(&mut self, notifications: Vec<TaskNotification>) {
        self.sync_agents();
        if self.agents.busy {
            self.agents.pending.extend(notifications);
            return;
        }
        let Some(session) = &self.session else {
            return;
        };
        for notification in &notifications {
            let _ = self.ui.send(report_notice(notification));
        }
        self.idle_at = None;
        if session
            .handle
            .submit(Submission::Prompt(reports_prompt(&notifications)))
            .is_ok()
        {
            // The UI holds its guard from the turn's `TurnStarted`; nothing else may start
            // before it comes.
            self.agents.busy = true;
        }
    }

    /// Shell `id` runs in the background: in the tasks panel until it ends.
    fn watch_shell(&self, id: &str) {
        let Some(shells) = self
            .session
            .as_ref()
            .and_then(|s| s.handle.background_shells())
        else {
            return;
        };
        let title = shells
            .list()
            .into_iter()
            .find(|(task, ..)| task == id)
            .map_or_else(|| id.to_owned(), |(_, command, _)| command);
        let id = id.to_owned();
        let view = {
            let id = id.clone();
            move |status| {
                UiEvent::Task(TaskView {
                    id: id.clone(),
                    kind: TaskKind::Shell,
                    title: title.clone(),
                    status,
                })
            }
        };
        let _ = self.ui.send(view(TaskStatus::Running));
        let ui = self.ui.clone();
        tokio::spawn(async move {
            let status = match shells.wait(&id).await {
                Some(ShellStatus::Exited(Some(0))) => TaskStatus::Finished {
                    summary: "exited with code 0".into(),
                },
                Some(ShellStatus::Killed) | None => TaskStatus::Cancelled,
                Some(other) => TaskStatus::Failed {
                    error: other.to_string(),
                },
            };
            let _ = ui.send(view(status));
        });
    }

    fn notice(&self, level: NoticeLevel, text: impl Into<String>) {
        let _ = self.ui.send(UiEvent::Notice {
            level,
            text: text.into(),
        });
    }

    fn output(&self, command: &str, text: String) {
        let _ = self.ui.send(UiEvent::CommandOutput {
            command: command.to_owned(),
            text,
        });
    }

    /// The UI holds its turn guard for this command: end it.
    fn end_turn(&self, reason: TurnEndReason) {
        let _ = self.ui.send(UiEvent::TurnEnded { reason });
    }

    fn remember(&self, text: &str) {
        if let Some(path) = &self.history {
            history::append(path, &self.cwd, text);
        }
    }

    /// One command of the UI.
    pub async fn apply(&mut self, command: UiCommand) {
        let Some(session) = self.session.as_ref() else {
            return;
        };
        let handle = &session.handle;
        if matches!(
            command,
            UiCommand::Submit(_) | UiCommand::SlashCommand { .. }
        ) {
            self.idle_at = None;
        }
        match command {
            UiCommand::Submit(text) => {
                self.remember(&text);
                if handle.submit(Submission::Prompt(text)).is_err() {
                    self.end_turn(TurnEndReason::Failed {
                        message: "the session has ended".into(),
                    });
                }
            }
            UiCommand::SlashCommand { name, args } => {
                let line = if args.is_empty() {
                    format!("/{name}")
                } else {
                    format!("/{name} {args}")
                };
                self.remember(&line);
                self.slash(&name, &args).await;
            }
            UiCommand::Interrupt => handle.interrupt(),
            UiCommand::AnswerPermission { id, answer } => {
                let Ok(number) = id.parse::<u64>() else {
                    self.notice(NoticeLevel::Error, format!("no permission request {id}"));
                    return;
                };
                let answer = match answer {
                    PermissionAnswer::Once => SessionAnswer::Once,
                    PermissionAnswer::Always => SessionAnswer::Always,
                    PermissionAnswer::No { feedback } => SessionAnswer::Deny { feedback },
                };
                if let Err(error) = handle.answer_permission(PermissionId(number), answer) {
                    // Withdrawn meanwhile (the turn ended): nothing waits for it.
                    tracing::debug!(%error, "permission answer not taken");
                }
            }
            UiCommand::AnswerStuck { id, keep_going } => {
                let Ok(number) = id.parse::<u64>() else {
                    self.notice(NoticeLevel::Error, format!("no question {id}"));
                    return;
                };
                let decision = if keep_going {
                    StuckDecision::KeepGoing
                } else {
                    StuckDecision::Stop
                };
                if let Err(error) = handle.answer_stuck(StuckId(number), decision) {
                    // Its turn ended meanwhile: nothing waits for it.
                    tracing::debug!(%error, "stuck answer not taken");
                }
            }
            UiCommand::AnswerElicitation { id, reply } => {
                let Ok(number) = id.parse::<u64>() else {
                    self.notice(NoticeLevel::Error, format!("no MCP question {id}"));
                    return;
                };
                let answer = super::elicitation::answer(reply);
                if let Err(error) = handle.answer_elicitation(ElicitationId(number), answer) {
                    // Withdrawn meanwhile (the turn ended, the server gave up).
                    tracing::debug!(%error, "elicitation answer not taken");
                }
            }
            UiCommand::CyclePermissionMode { to } => {
                if let Err(error) = handle.set_permission_mode(session_mode(to)) {
                    self.notice(NoticeLevel::Warning, error.to_string());
                    let current = ui_mode(handle.permission_mode());
                    let _ = self.ui.send(UiEvent::PermissionModeChanged(current));
                }
            }
            UiCommand::StopTask { id } => match handle.stop_task(&id) {
                Ok(stopped) => {
                    let text = match stopped {
                        StoppedTask::Agent { description } => {
                            format!("stopping agent \"{description}\"")
                        }
                        StoppedTask::Shell { command } => format!("killed `{command}`"),
                        StoppedTask::Dream => "dream killed; its lock was rolled back".to_owned(),
                    };
                    self.notice(NoticeLevel::Info, text);
                }
                Err(error) => self.notice(NoticeLevel::Warning, error.to_string()),
            },
            UiCommand::BackgroundAgents => {
                let moved = handle.background_agents();
                let text = match moved {
                    0 => "no sub-agent is running in the foreground".to_owned(),
                    1 => "sent the sub-agent to the background; it reports when done".to_owned(),
                    n => format!("sent {n} sub-agents to the background; they report when done"),
                };
                self.notice(NoticeLevel::Info, text);
                self.agents.armed = true;
            }
            // The run loop ends on it before it gets here.
            UiCommand::Exit => {}
            UiCommand::AwaySummary => handle.away_summary(),
            UiCommand::Speculate(draft) => handle.speculate(draft),
        }
    }

    async fn slash(&mut self, name: &str, args: &str) {
        let Some(session) = self.session.as_ref() else {
            return;
        };
        let summary = session.handle.summary().clone();
        let mode = session.handle.permission_mode();
        match name {
            "clear" => {
                self.restart(Resume::New, SessionEndReason::Clear).await;
            }
            "resume" if args.is_empty() => self.output(name, local::list_sessions(&summary)),
            "resume" => match SessionId::parse(args) {
                Ok(id) => {
                    if self.restart(Resume::Id(id), SessionEndReason::Other).await {
                        let _ = self.ui.send(UiEvent::Cleared);
                        self.replay().await;
                    }
                }
                Err(error) => self.notice(NoticeLevel::Error, error.to_string()),
            },
            "model" if args.is_empty() => self.output(
                name,
                format!(
                    "Model: **{}** (`/model NAME` changes it for this session)",
                    summary.model
                ),
            ),
            "model" => {
                self.model = Some(args.to_owned());
                if self
                    .restart(
                        Resume::Id(summary.session_id.clone()),
                        SessionEndReason::Other,
                    )
                    .await
                    && let Some(session) = &self.session
                {
                    let model = session.handle.summary().model.clone();
                    self.notice(NoticeLevel::Info, format!("Model set to {model}"));
                }
            }
            "memory" => self.output(name, local::memory(&summary, self.user_home.as_deref())),
            "permissions" => {
                self.output(
                    name,
                    local::permissions(&summary, mode.as_str(), self.user_home.as_deref()),
                );
            }
            // The UI answers these itself.
            "help" | "tasks" | "exit" => {}
            _ => {
                if let Some(spec) = tine_session::find_command(name) {
                    match session.handle.submit(Submission::Command {
                        name: name.to_owned(),
                        args: args.to_owned(),
                    }) {
                        Ok(id) if !spec.runs_turn => self.adapter.mark_quiet(id),
                        Ok(_) => {}
                        Err(_) => self.notice(NoticeLevel::Error, "the session has ended"),
                    }
                } else if self.custom.iter().any(|c| c.name == name) {
                    // The session expands it and runs it with its `model` and `allowed-tools`.
                    let command = Submission::Command {
                        name: name.to_owned(),
                        args: args.to_owned(),
                    };
                    if session.handle.submit(command).is_err() {
                        self.end_turn(TurnEndReason::Failed {
                            message: "the session has ended".into(),
                        });
                    }
                } else if runs_turn(name) {
                    self.end_turn(TurnEndReason::Failed {
                        message: format!("/{name} is not available in this version of tine"),
                    });
                } else {
                    self.notice(
                        NoticeLevel::Warning,
                        format!("/{name} is not available in this version of tine"),
                    );
                }
            }
        }
    }

    /// Shuts the running session down (its extraction flushed; what it still says reaches the
    /// UI) and starts `resume` in its place; when that fails, the earlier conversation again.
    /// Returns whether the new one runs. `reason` is the old one's SessionEnd reason (`/clear`
    /// also tells the new one's SessionStart hooks).
    async fn restart(&mut self, resume: Resume, reason: SessionEndReason) -> bool {
        let Some(old) = self.session.take() else {
            return false;
        };
        let previous = old.handle.summary().session_id.clone();
        let mut old_events = old.events;
        let _report = old.handle.shutdown_because(reason).await;
        while let Ok(event) = old_events.try_recv() {
            self.forward(event);
        }
        let mut options = (self.factory)(resume, self.model.clone());
        options.cleared = reason == SessionEndReason::Clear;
        match Running::start(options).await {
            Ok(running) => {
                // The status line starts again: the figures were the previous session's.
                let _ = self.ui.send(UiEvent::Usage(UsageView {
                    model: running.handle.summary().model.clone(),
                    ..UsageView::default()
                }));
                self.session = Some(running);
                true
            }
            Err(error) => {
                self.notice(NoticeLevel::Error, error.to_string());
                let options = (self.factory)(Resume::Id(previous), None);
                match Running::start(options).await {
                    Ok(running) => self.session = Some(running),
                    Err(error) => self.notice(NoticeLevel::Error, error.to_string()),
                }
                false
            }
        }
    }

    /// The conversation of the running session, shown again.
    pub async fn replay(&mut self) {
        let Some(session) = &self.session else {
            return;
        };
        let summary = session.handle.summary();
        match load_session(&summary.home, &summary.cwd, &summary.session_id).await {
            Ok(resumed) => {
                for event in replay::replay_chain(&resumed.chain) {
                    let _ = self.ui.send(event);
                }
            }
            Err(error) => self.notice(NoticeLevel::Warning, error.to_string()),
        }
    }
}

/// The UI's specs of the custom commands (they run a turn: the body is a prompt).
pub fn custom_specs(custom: &[CustomCommand]) -> Vec<SlashCommandSpec> {
    custom
        .iter()
        .map(|c| SlashCommandSpec::new(&c.name, &c.description, true))
        .collect()
}

/// A deadline nobody reaches: the UI waits for agents as long as they run.
fn far_future() -> tokio::time::Instant {
    tokio::time::Instant::now() + Duration::from_secs(365 * 24 * 3_600)
}

/// Whether the UI holds its turn guard for built-in `name`.
fn runs_turn(name: &str) -> bool {
    tine_tui::slash::builtins()
        .iter()
        .any(|spec| spec.name == name && spec.runs_turn)
}
