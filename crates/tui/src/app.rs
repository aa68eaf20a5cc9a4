//! The App: the UI's whole state and its transitions, with no terminal in it. The session's
//! events go in through [`App::handle`], keys through [`App::handle_key`] (in `keys.rs`), and
//! both return the [`UiCommand`]s to send; [`App::render`] (in `view.rs`) draws a frame. The
//! terminal loop (`run.rs`) only moves events in and commands out and draws when
//! [`App::is_dirty`].
//!
//! The turn guard and the queue are seed 003 §六's QueryGuard and message queue: a prompt
//! submitted while a turn runs waits in `queue` (shown under the input) and goes when
//! `TurnEnded` releases the guard.

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

use tokio::time::Instant;

use crate::elicitation::ElicitationDialog;
use crate::entry::Entry;
use crate::event::{PermissionMode, TaskView, TurnEndReason, UiCommand, UiEvent, UsageView};
use crate::input::PromptInput;
use crate::permission::PermissionDialog;
use crate::slash::{self, Completion, SlashCommandSpec};
use crate::stream::MarkdownStream;
use crate::tool_call::{Progress, ToolCall, ToolState};
use crate::transcript::Transcript;
use crate::wrap::sanitize;

/// The spinner's frames and pace (it ticks only while a turn runs).
pub const SPINNER: &[&str] = &["·", "✢", "✳", "✶", "✻", "✽", "✻", "✶", "✳", "✢"];
pub const SPINNER_INTERVAL: Duration = Duration::from_millis(120);
/// How long "press Ctrl+C again to exit" stays armed.
pub const CTRL_C_WINDOW: Duration = Duration::from_secs(2);

/// What the app is started with.
#[derive(Debug, Clone, Default)]
pub struct AppConfig {
    pub model: String,
    pub permission_mode: PermissionMode,
    /// Whether Shift+Tab may reach bypassPermissions (the session was started allowing it).
    pub bypass_available: bool,
    /// Custom commands (`.tine/commands/*.md`), after the built-ins.
    pub custom_commands: Vec<SlashCommandSpec>,
    /// Earlier prompts, oldest first, for Up/Down.
    pub history: Vec<String>,
}

/// Something waiting for the turn guard.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Queued {
    Prompt(String),
    Command {
        spec: SlashCommandSpec,
        args: String,
    },
}

impl Queued {
    pub fn text(&self) -> String {
        match self {
            Queued::Prompt(t) => t.clone(),
            Queued::Command { spec, args } if args.is_empty() => format!("/{}", spec.name),
            Queued::Command { spec, args } => format!("/{} {args}", spec.name),
        }
    }
}

/// The running turn.
#[derive(Debug, Clone)]
pub struct Turn {
    pub started: Instant,
    /// Transcript length when the current reply began (a discarded reply is cut back to it).
    pub reply_start: usize,
    /// Esc was pressed: "Interrupted by user" is shown already.
    pub interrupted: bool,
}

pub struct App {
    pub(crate) commands: Vec<SlashCommandSpec>,
    pub(crate) bypass_available: bool,
    pub(crate) transcript: Transcript,
    pub(crate) input: PromptInput,
    pub(crate) completion: Completion,
    pub(crate) dialog: PermissionDialog,
    /// An MCP server's questions (drawn over the bottom of the screen, keys go to it first).
    pub(crate) elicitation: ElicitationDialog,
    pub(crate) help_open: bool,
    pub(crate) tasks_open: bool,
    /// The tasks panel's selected row (in its order: running first).
    pub(crate) task_selected: usize,
    pub(crate) tasks: Vec<TaskView>,
    pub(crate) usage: UsageView,
    pub(crate) mode: PermissionMode,
    pub(crate) turn: Option<Turn>,
    pub(crate) queue: VecDeque<Queued>,
    /// A retry under way, shown beside the spinner.
    pub(crate) retry: Option<String>,
    /// Ctrl+O: results and thinking in full.
    pub(crate) expanded: bool,
    pub(crate) ctrl_c_at: Option<Instant>,
    pub(crate) spinner_frame: usize,
    pub(crate) spinner_next: Option<Instant>,
    pub(crate) dirty: bool,
    pub(crate) exit: bool,
    /// Ctrl+Z: the terminal loop hands the terminal back and stops the process.
    pub(crate) suspend: bool,
    open_text: Option<usize>,
    open_thinking: Option<usize>,
    tools: HashMap<String, usize>,
    pub(crate) away: crate::away::AwayState,
    pub(crate) speculation: crate::speculation::SpeculationState,
}

impl App {
    pub fn new(config: AppConfig) -> Self {
        let mut commands = slash::builtins();
        for custom in config.custom_commands {
            if !commands.iter().any(|c| c.name == custom.name) {
                commands.push(custom);
            }
        }
        Self {
            commands,
            bypass_available: config.bypass_available,
            transcript: Transcript::new(),
            input: PromptInput::new(config.history),
            completion: Completion::default(),
            dialog: PermissionDialog::default(),
            elicitation: ElicitationDialog::default(),
            help_open: false,
            tasks_open: false,
            task_selected: 0,
            tasks: Vec::new(),
            usage: UsageView {
                model: config.model,
                ..UsageView::default()
            },
            mode: config.permission_mode,
            turn: None,
            queue: VecDeque::new(),
            retry: None,
            expanded: false,
            ctrl_c_at: None,
            spinner_frame: 0,
            spinner_next: None,
            dirty: true,
            exit: false,
            suspend: false,
            open_text: None,
            open_thinking: None,
            tools: HashMap::new(),
            away: Default::default(),
            speculation: Default::default(),
        }
    }

    /// Whether something changed since the last frame.
    pub fn is_dirty(&self) -> bool {
        self.dirty
    }

    pub fn mark_dirty(&mut self) {
        self.dirty = true;
    }

    /// Whether the app asked to exit.
    pub fn should_exit(&self) -> bool {
        self.exit
    }

    /// Whether Ctrl+Z asked to suspend (once: the request is taken).
    pub fn take_suspend(&mut self) -> bool {
        std::mem::take(&mut self.suspend)
    }

    /// Whether a turn runs (the guard is held).
    pub fn is_busy(&self) -> bool {
        self.turn.is_some()
    }

    pub fn transcript(&self) -> &Transcript {
        &self.transcript
    }

    pub fn input(&self) -> &PromptInput {
        &self.input
    }

    pub fn queued(&self) -> impl Iterator<Item = &Queued> {
        self.queue.iter()
    }

    pub fn permission_mode(&self) -> PermissionMode {
        self.mode
    }

    pub fn dialog(&self) -> &PermissionDialog {
        &self.dialog
    }

    /// When the app next needs to wake without input: the spinner's next frame while a turn
    /// runs, the end of the Ctrl+C window. `None` when idle: no timer at all.
    pub fn next_wakeup(&self) -> Option<Instant> {
        let hint = self.ctrl_c_at.map(|t| t + CTRL_C_WINDOW);
        let hint = match (hint, self.speculation_deadline()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        match (self.spinner_next.filter(|_| self.turn.is_some()), hint) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Time passed: the spinner moves on, the Ctrl+C hint expires.
    pub fn tick(&mut self, now: Instant) {
        if self.turn.is_some()
            && let Some(next) = self.spinner_next
            && now >= next
        {
            self.spinner_frame = (self.spinner_frame + 1) % SPINNER.len();
            self.spinner_next = Some(now + SPINNER_INTERVAL);
            self.dirty = true;
        }
        if self.ctrl_c_at.is_some_and(|t| now >= t + CTRL_C_WINDOW) {
            self.ctrl_c_at = None;
            self.dirty = true;
        }
    }

    /// One event from the session.
    pub fn handle(&mut self, event: UiEvent) -> Vec<UiCommand> {
        self.dirty = true;
        match event {
            UiEvent::TurnStarted => {
                if self.turn.is_none() {
                    self.begin_turn();
                }
            }
            UiEvent::RequestStarted => {
                self.close_open();
                self.retry = None;
                let len = self.transcript.len();
                if let Some(turn) = &mut self.turn {
                    turn.reply_start = len;
                }
            }
            UiEvent::TextDelta(text) => {
                self.retry = None;
                self.close_thinking();
                let index = match self.open_text {
                    Some(i) => i,
                    None => {
                        let i = self
                            .transcript
                            .push(Entry::Assistant(MarkdownStream::new()));
                        self.open_text = Some(i);
                        i
                    }
                };
                if let Some(Entry::Assistant(stream)) = self.transcript.get_mut(index) {
                    stream.push(&sanitize(&text));
                }
            }
            UiEvent::ThinkingDelta(delta) => {
                self.retry = None;
                self.close_text();
                let index = match self.open_thinking {
                    Some(i) => i,
                    None => {
                        let i = self.transcript.push(Entry::Thinking {
                            text: String::new(),
                            done: false,
                        });
                        self.open_thinking = Some(i);
                        i
                    }
                };
                if let Some(Entry::Thinking { text, .. }) = self.transcript.get_mut(index) {
                    text.push_str(&delta);
                }
            }
            UiEvent::ToolStarted { id, tool, args } => match self.tools.get(&id).copied() {
                Some(i) => {
                    if let Some(Entry::Tool(call)) = self.transcript.get_mut(i) {
                        call.tool = tool;
                        if !args.is_empty() {
                            call.args = args;
                        }
                    }
                }
                None => {
                    self.close_open();
                    let call = ToolCall::new(id.clone(), tool, args, Instant::now());
                    let i = self.transcript.push(Entry::Tool(call));
                    self.tools.insert(id, i);
                }
            },
            UiEvent::ToolProgress {
                id,
                elapsed,
                lines,
                bytes,
            } => {
                if let Some(i) = self.tools.get(&id).copied()
                    && let Some(Entry::Tool(call)) = self.transcript.get_mut(i)
                {
                    call.progress = Some(Progress {
                        elapsed,
                        lines,
                        bytes,
                    });
                }
            }
            UiEvent::ToolFinished { id, result } => match self.tools.get(&id).copied() {
                Some(i) => {
                    if let Some(Entry::Tool(call)) = self.transcript.get_mut(i) {
                        call.finish(result);
                    }
                }
                None => {
                    self.close_open();
                    let mut call =
                        ToolCall::new(id.clone(), "Tool".into(), String::new(), Instant::now());
                    call.finish(result);
                    let i = self.transcript.push(Entry::Tool(call));
                    self.tools.insert(id, i);
                }
            },
            UiEvent::PermissionRequest(request) => self.dialog.push(request),
            UiEvent::StuckModel(question) => self.dialog.push_stuck(question),
            UiEvent::Elicitation(request) => self.elicitation.push(request),
            UiEvent::ElicitationWithdrawn { id } => self.elicitation.withdraw(&id),
            UiEvent::Retry {
                message,
                discard_partial,
            } => {
                if discard_partial && let Some(turn) = &self.turn {
                    let keep = turn.reply_start;
                    self.transcript.truncate(keep);
                    self.forget_from(keep);
                }
                self.retry = Some(message);
            }
            UiEvent::TurnEnded { reason } => {
                self.note_turn_end(Instant::now());
                return self.end_turn(reason);
            }
            UiEvent::AwaySummary(text) => self.show_away_summary(&text),
            // Background work reports at any time, also while a reply streams: the reply goes
            // on in its own entry above the notice rather than being cut in two.
            UiEvent::Notice { level, text } => {
                self.transcript.push(Entry::Notice { level, text });
            }
            UiEvent::CommandOutput { command: _, text } => {
                self.transcript.push(Entry::CommandOutput {
                    body: MarkdownStream::complete(&sanitize(&text)),
                });
            }
            UiEvent::Task(task) => match self.tasks.iter_mut().find(|t| t.id == task.id) {
                Some(existing) => *existing = task,
                None => self.tasks.push(task),
            },
            UiEvent::Usage(usage) => self.usage = usage,
            UiEvent::PermissionModeChanged(mode) => self.mode = mode,
            UiEvent::UserMessage(text) => {
                self.close_open();
                self.transcript.push(Entry::User { text });
            }
            UiEvent::Cleared => self.clear_transcript(),
            UiEvent::Compacted(view) => {
                self.close_open();
                self.transcript.push(Entry::Compacted(view));
            }
        }
        Vec::new()
    }

    fn begin_turn(&mut self) {
        let now = Instant::now();
        self.turn = Some(Turn {
            started: now,
            reply_start: self.transcript.len(),
            interrupted: false,
        });
        self.spinner_frame = 0;
        self.spinner_next = Some(now + SPINNER_INTERVAL);
    }

    fn end_turn(&mut self, reason: TurnEndReason) -> Vec<UiCommand> {
        self.close_open();
        let was_interrupted = self.turn.as_ref().is_some_and(|t| t.interrupted);
        if !matches!(reason, TurnEndReason::Completed) {
            self.interrupt_running_tools();
        }
        match reason {
            TurnEndReason::Completed => {}
            TurnEndReason::Interrupted if was_interrupted => {}
            TurnEndReason::Interrupted => {
                self.transcript.push(Entry::Interrupted);
            }
            TurnEndReason::Failed { message } => {
                self.transcript.push(Entry::Error { message });
            }
        }
        self.turn = None;
        self.spinner_next = None;
        self.retry = None;
        self.dialog.clear();
        self.drain_queue()
    }

    /// Starts queued work until something holds the guard again.
    fn drain_queue(&mut self) -> Vec<UiCommand> {
        let mut out = Vec::new();
        while self.turn.is_none() {
            let Some(item) = self.queue.pop_front() else {
                break;
            };
            out.extend(self.start(item));
        }
        out
    }

    /// Sends `item` now if no turn runs, else queues it.
    pub(crate) fn dispatch(&mut self, item: Queued) -> Vec<UiCommand> {
        if self.turn.is_some() {
            self.queue.push_back(item);
            return Vec::new();
        }
        self.start(item)
    }

    fn start(&mut self, item: Queued) -> Vec<UiCommand> {
        match item {
            Queued::Prompt(text) => {
                self.close_open();
                self.transcript.push(Entry::User { text: text.clone() });
                self.begin_turn();
                vec![UiCommand::Submit(text)]
            }
            Queued::Command { spec, args } => {
                if spec.name == "clear" {
                    self.clear_transcript();
                } else {
                    self.close_open();
                    let shown = Queued::Command {
                        spec: spec.clone(),
                        args: args.clone(),
                    };
                    self.transcript.push(Entry::User { text: shown.text() });
                }
                if spec.runs_turn {
                    self.begin_turn();
                }
                vec![UiCommand::SlashCommand {
                    name: spec.name,
                    args,
                }]
            }
        }
    }

    /// Esc (or Ctrl+C) while a turn runs.
    pub(crate) fn interrupt(&mut self) -> Vec<UiCommand> {
        let Some(turn) = &mut self.turn else {
            return Vec::new();
        };
        if turn.interrupted {
            return Vec::new();
        }
        turn.interrupted = true;
        self.close_open();
        self.interrupt_running_tools();
        self.transcript.push(Entry::Interrupted);
        self.dialog.clear();
        self.elicitation.clear();
        self.retry = None;
        // Queued prompts come back to the box, to be edited or sent again (as Claude Code).
        if !self.queue.is_empty() {
            let mut parts: Vec<String> = self.queue.drain(..).map(|q| q.text()).collect();
            if !self.input.is_empty() {
                parts.push(self.input.text().to_owned());
            }
            self.input.set_text(&parts.join("\n"));
        }
        vec![UiCommand::Interrupt]
    }

    fn interrupt_running_tools(&mut self) {
        let running: Vec<usize> = self.tools.values().copied().collect();
        for i in running {
            let is_running =
                matches!(self.transcript.get(i), Some(Entry::Tool(c)) if c.is_running());
            if is_running && let Some(Entry::Tool(call)) = self.transcript.get_mut(i) {
                call.state = ToolState::Interrupted;
            }
        }
    }

    pub(crate) fn clear_transcript(&mut self) {
        self.transcript.clear();
        self.open_text = None;
        self.open_thinking = None;
        self.tools.clear();
        if let Some(turn) = &mut self.turn {
            turn.reply_start = 0;
        }
    }

    /// Forgets open entries and tool ids at or after `len` (they were cut off).
    fn forget_from(&mut self, len: usize) {
        self.open_text = self.open_text.filter(|i| *i < len);
        self.open_thinking = self.open_thinking.filter(|i| *i < len);
        self.tools.retain(|_, i| *i < len);
    }

    fn close_text(&mut self) {
        if let Some(i) = self.open_text.take()
            && let Some(Entry::Assistant(stream)) = self.transcript.get_mut(i)
        {
            stream.finish();
        }
    }

    fn close_thinking(&mut self) {
        if let Some(i) = self.open_thinking.take()
            && let Some(Entry::Thinking { done, .. }) = self.transcript.get_mut(i)
        {
            *done = true;
        }
    }

    fn close_open(&mut self) {
        self.close_text();
        self.close_thinking();
    }

    pub(crate) fn exit(&mut self) -> Vec<UiCommand> {
        self.exit = true;
        vec![UiCommand::Exit]
    }
}
