//! The App: the UI's whole state and its transitions, with no terminal in it. The session's
//! [`Event`]s go in through [`App::handle`] (`incoming`, `reply`, `replay`), keys through
//! [`App::handle_key`] (`keys`), and both return the [`Op`]s to submit; whoever submits them
//! tells the app the id each got ([`App::submitted`]). [`App::render`] (`view`) draws a
//! frame. The terminal loop (`run`) only moves events in and ops out and draws when
//! [`App::is_dirty`].
//!
//! The turn guard and the queue: a prompt (or a command that talks to the model) holds the
//! guard from its submission until the `TurnEnded` naming its op; what is submitted meanwhile
//! waits in `queue` (shown under the input) and goes when the guard is released. A command
//! that runs no turn of the model (`/cost`) takes no guard, and its turn's events are not the
//! spinner's. A turn the session starts itself (background agents' reports) holds the guard
//! too while it runs.

use std::collections::{HashMap, HashSet, VecDeque};
use std::time::Duration;

/// How soon a second Esc must follow the first to open the rewind list.
const ESC_ESC: Duration = Duration::from_millis(800);

use tine_session::{CommandInfo, Op, OpId, PermissionMode, SessionInfo};
use tokio::time::Instant;

use crate::away::AwayState;
use crate::elicitation::ElicitationDialog;
use crate::entry::Entry;
use crate::idle::{IDLE_AFTER, IdleTimer};
use crate::input::PromptInput;
use crate::panel_task::PanelTask;
use crate::permission::PermissionDialog;
use crate::slash::Completion;
use crate::speculation::SpeculationState;
use crate::stream::MarkdownStream;
use crate::tool_call::ToolState;
use crate::transcript::Transcript;

/// The spinner's frames and pace (it ticks only while a turn runs).
pub(crate) const SPINNER: &[&str] = &["·", "✢", "✳", "✶", "✻", "✽", "✻", "✶", "✳", "✢"];
pub(crate) const SPINNER_INTERVAL: Duration = Duration::from_millis(120);
/// How long "press Ctrl+C again to exit" stays armed.
pub(crate) const CTRL_C_WINDOW: Duration = Duration::from_secs(2);

/// What the app is started with besides what the session tells it.
#[derive(Debug, Clone)]
pub struct AppConfig {
    /// Earlier prompts, oldest first, for Up/Down.
    pub history: Vec<String>,
    /// Whether the terminal loop keeps the prompt history on disk
    /// (`$TINE_HOME/history.jsonl`, per project): it loads this project's prompts when the
    /// session is configured and adds each prompt and command sent.
    pub history_file: bool,
    /// How long after a turn, with nothing sent, the idle hint goes to the session
    /// ([`Op::FlushBackground`], [`Op::NotifyIdle`]); a minute by default.
    pub idle_after: Duration,
    /// Whether the transcript opens with Claude Code's welcome line (where this is, where the
    /// help is) once the session is configured.
    pub welcome: bool,
    /// Whether the terminal is a tmux pane (`$TMUX`): a copy to the clipboard (OSC 52) then
    /// needs tmux's `set-clipboard on`, and `/export` says so.
    pub tmux: bool,
}

impl Default for AppConfig {
    fn default() -> Self {
        Self {
            history: Vec::new(),
            history_file: false,
            idle_after: IDLE_AFTER,
            welcome: false,
            tmux: false,
        }
    }
}

/// Something waiting for the turn guard.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Queued {
    Prompt(String),
    Command { command: CommandInfo, args: String },
}

impl Queued {
    /// As typed.
    pub(crate) fn text(&self) -> String {
        match self {
            Queued::Prompt(t) => t.clone(),
            Queued::Command { command, args } if args.is_empty() => format!("/{}", command.name),
            Queued::Command { command, args } => format!("/{} {args}", command.name),
        }
    }
}

/// The running turn.
#[derive(Debug, Clone)]
pub(crate) struct Turn {
    /// The op whose turn it is (`None` until its submission is told).
    pub(crate) op: Option<OpId>,
    pub(crate) started: Instant,
    /// Transcript length when the current reply began (a discarded reply is cut back to it).
    pub(crate) reply_start: usize,
    /// Esc was pressed: "Interrupted by user" is shown already.
    pub(crate) interrupted: bool,
}

/// Where the help panel is scrolled to (it scrolls where the terminal is too short for it).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct HelpScroll {
    /// The first row shown.
    pub(crate) scroll: usize,
    /// Rows shown, and rows in all, at the last frame.
    pub(crate) visible: usize,
    pub(crate) total: usize,
}

/// The status line's figures.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct StatusFigures {
    pub(crate) model: String,
    pub(crate) context_tokens: u64,
    pub(crate) context_window: u64,
    pub(crate) cost_usd: f64,
    pub(crate) cache_read_share: Option<f64>,
}

/// The interactive UI's state: a pure state machine (session events, keys and time in, ops
/// out, a frame drawn on request).
pub struct App {
    pub(crate) config: AppConfig,
    /// When Esc was last pressed on an empty, idle prompt (a second press soon after rewinds).
    pub(crate) last_esc: Option<std::time::Instant>,
    /// The rewind picker (Esc Esc, `/rewind`).
    pub(crate) rewind: crate::rewind::RewindPicker,
    /// `/resume`'s session list.
    pub(crate) resume: crate::resume_picker::ResumePicker,
    /// What the last rewind asked to restore (a conflict's "anyway" asks the same).
    pub(crate) rewind_scope: tine_session::RewindScope,
    /// What the session said it is (its last `Configured`).
    pub(crate) info: Option<SessionInfo>,
    /// The commands completion and dispatch read (`slash::table`).
    pub(crate) commands: Vec<CommandInfo>,
    pub(crate) transcript: Transcript,
    pub(crate) input: PromptInput,
    /// Ctrl+R over the prompt history (the box shows the match while it is open).
    pub(crate) history_search: crate::history_search::HistorySearch,
    pub(crate) completion: Completion,
    /// The `@` file picker over the project.
    pub(crate) mention: crate::at_mention::MentionPicker,
    pub(crate) dialog: PermissionDialog,
    /// An MCP server's questions (drawn over the bottom of the screen, keys go to it first).
    pub(crate) elicitation: ElicitationDialog,
    pub(crate) help_open: bool,
    /// The help panel's scroll, and its rows and the rows shown when last drawn.
    pub(crate) help: HelpScroll,
    pub(crate) tasks_open: bool,
    /// The tasks panel's selected row (in its order: running first).
    pub(crate) task_selected: usize,
    pub(crate) tasks: Vec<PanelTask>,
    pub(crate) status: StatusFigures,
    /// The session's last usage report, as a status line command is told it.
    pub(crate) usage: Option<tine_session::UsageReport>,
    /// The settings' status line command: its runs and the line it printed.
    pub(crate) status_command: crate::status_command::StatusCommand,
    pub(crate) mode: PermissionMode,
    pub(crate) turn: Option<Turn>,
    pub(crate) queue: VecDeque<Queued>,
    /// For each turn op handed out and not yet told submitted: whether it holds the guard.
    pub(crate) submitting: VecDeque<bool>,
    /// Turn ops of commands that run no turn of the model: their turns are not shown.
    pub(crate) quiet: HashSet<OpId>,
    /// Ops whose failure is only logged (an answer to a question withdrawn meanwhile).
    pub(crate) quiet_failures: HashSet<OpId>,
    /// The `/clear` whose new conversation is already on screen (cleared when it was sent).
    pub(crate) cleared_by: Option<OpId>,
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
    pub(crate) open_text: Option<usize>,
    pub(crate) open_thinking: Option<usize>,
    /// Tool calls' entries by `tool_use` id.
    pub(crate) tools: HashMap<String, usize>,
    pub(crate) away: AwayState,
    pub(crate) speculation: SpeculationState,
    pub(crate) idle: IdleTimer,
    /// Text for the terminal loop to copy to the clipboard (OSC 52), once.
    pub(crate) clipboard: Option<String>,
}

impl App {
    /// An app waiting for the session's `Configured`.
    pub fn new(config: AppConfig) -> Self {
        Self {
            info: None,
            commands: crate::slash::table(&[]),
            transcript: Transcript::new(),
            input: PromptInput::new(config.history.clone()),
            history_search: crate::history_search::HistorySearch::default(),
            completion: Completion::default(),
            mention: crate::at_mention::MentionPicker::default(),
            dialog: PermissionDialog::default(),
            elicitation: ElicitationDialog::default(),
            help_open: false,
            help: HelpScroll::default(),
            tasks_open: false,
            task_selected: 0,
            tasks: Vec::new(),
            status: StatusFigures::default(),
            usage: None,
            status_command: crate::status_command::StatusCommand::default(),
            mode: PermissionMode::Default,
            turn: None,
            queue: VecDeque::new(),
            submitting: VecDeque::new(),
            quiet: HashSet::new(),
            quiet_failures: HashSet::new(),
            cleared_by: None,
            retry: None,
            last_esc: None,
            rewind: crate::rewind::RewindPicker::default(),
            resume: crate::resume_picker::ResumePicker::default(),
            rewind_scope: tine_session::RewindScope::Both,
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
            away: AwayState::default(),
            speculation: SpeculationState::default(),
            idle: IdleTimer::new(config.idle_after),
            clipboard: None,
            config,
        }
    }

    /// Whether something changed since the last frame.
    pub fn is_dirty(&self) -> bool {
        self.dirty
    }

    /// Draw the next frame whatever changed (the screen was retaken).
    pub fn mark_dirty(&mut self) {
        self.dirty = true;
    }

    /// Whether the person asked to exit (`/exit`, Ctrl-D on an empty prompt, Ctrl-C twice).
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

    /// The op whose turn holds the guard, once its submission was told.
    pub fn turn_op(&self) -> Option<OpId> {
        self.turn.as_ref().and_then(|t| t.op)
    }

    /// What the session said it is, from its last `Configured` (the conversation in place).
    pub fn session(&self) -> Option<&SessionInfo> {
        self.info.as_ref()
    }

    /// Whether the transcript has nothing in it.
    pub fn transcript_is_empty(&self) -> bool {
        self.transcript.is_empty()
    }

    /// The prompt box's text.
    pub fn input_text(&self) -> &str {
        self.input.text()
    }

    /// What waits for the turn guard, as typed, in order.
    pub fn queued(&self) -> impl Iterator<Item = String> + '_ {
        self.queue.iter().map(Queued::text)
    }

    /// The permission mode shown.
    pub fn permission_mode(&self) -> PermissionMode {
        self.mode
    }

    /// How many questions (permission requests, a stuck model) the dialog holds, the one shown
    /// included; 0 when it is closed.
    pub fn questions_waiting(&self) -> usize {
        self.dialog.waiting()
    }

    /// The away card shown, if any.
    pub fn away_card(&self) -> Option<&str> {
        self.away.card()
    }

    /// Whether the terminal loop keeps the prompt history on disk ([`AppConfig::history_file`]).
    pub fn keeps_history_file(&self) -> bool {
        self.config.history_file
    }

    /// Text to copy to the system clipboard (`/export` without a file), once: the terminal
    /// loop writes it as OSC 52. Already cut to what one sequence carries.
    pub fn take_clipboard(&mut self) -> Option<String> {
        self.clipboard.take()
    }

    /// Earlier prompts (from the history file), before those of this run.
    pub fn add_history(&mut self, earlier: Vec<String>) {
        self.input.prepend_history(earlier);
    }

    /// When the app next needs to wake without input: the spinner's next frame while a turn
    /// runs, the end of the Ctrl+C window, a pause in typing to speculate on, the idle hint,
    /// a status line command's run due.
    /// `None` when there is nothing of the kind: no timer at all.
    pub fn next_wakeup(&self) -> Option<Instant> {
        [
            self.spinner_next.filter(|_| self.turn.is_some()),
            self.ctrl_c_at.map(|t| t + CTRL_C_WINDOW),
            self.speculation.deadline(),
            self.idle.deadline(),
            self.mention.deadline(),
            self.status_command.deadline(),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Time passed: the spinner moves on, the Ctrl+C hint expires, the `@` picker's walk is
    /// taken in, the status line command runs when due and its line is taken in.
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
        if self.mention.poll() {
            self.dirty = true;
        }
        if self.tick_status_command(now) {
            self.dirty = true;
        }
    }

    /// What is due at `now`: a draft to speculate on once typing paused, the idle hint.
    pub fn due_ops(&mut self, now: Instant) -> Vec<Op> {
        let allowed = self.turn.is_none() && !self.dialog.is_open();
        let mut ops: Vec<Op> = self.speculation.due(now, allowed).into_iter().collect();
        ops.extend(self.idle.due(now));
        ops
    }

    /// `op`, handed out by this app, was submitted as `id`: a turn's op takes the guard it
    /// reserved (or is a command's whose turn is not shown); an answer's failure is only
    /// logged. Call it for every op, in the order handed out.
    pub fn submitted(&mut self, op: &Op, id: OpId) {
        match op {
            Op::Prompt(_) | Op::Command { .. } | Op::Compact { .. } => {
                let guard = self.submitting.pop_front().unwrap_or(false);
                match &mut self.turn {
                    Some(turn) if guard && turn.op.is_none() => turn.op = Some(id),
                    _ => {
                        self.quiet.insert(id);
                    }
                }
                if matches!(op, Op::Command { name, .. } if name == "clear") {
                    self.cleared_by = Some(id);
                }
            }
            Op::Answer { .. } => {
                self.quiet_failures.insert(id);
            }
            _ => {}
        }
    }

    pub(crate) fn begin_turn(&mut self, op: Option<OpId>) {
        let now = Instant::now();
        self.turn = Some(Turn {
            op,
            started: now,
            reply_start: self.transcript.len(),
            interrupted: false,
        });
        self.idle.disarm();
        self.spinner_frame = 0;
        self.spinner_next = Some(now + SPINNER_INTERVAL);
    }

    /// The guard is released: the turn's state goes, queued work starts.
    pub(crate) fn release_turn(&mut self) -> Vec<Op> {
        self.turn = None;
        self.spinner_next = None;
        self.retry = None;
        self.dialog.clear();
        self.quiet_failures.clear();
        let now = Instant::now();
        self.away.note_turn_end(now);
        self.idle.arm(now);
        self.drain_queue()
    }

    /// Starts queued work until something holds the guard again.
    fn drain_queue(&mut self) -> Vec<Op> {
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
    pub(crate) fn dispatch(&mut self, item: Queued) -> Vec<Op> {
        if self.turn.is_some() {
            self.queue.push_back(item);
            return Vec::new();
        }
        self.start(item)
    }

    fn start(&mut self, item: Queued) -> Vec<Op> {
        self.idle.disarm();
        match item {
            Queued::Prompt(text) => {
                self.close_open();
                self.transcript.push(Entry::User { text: text.clone() });
                self.begin_turn(None);
                self.submitting.push_back(true);
                vec![Op::Prompt(text)]
            }
            Queued::Command { command, args } => {
                // `/export` without a file copies to the clipboard (Claude Code's offer): the
                // session gives the text as data and the loop writes OSC 52.
                let sent_args = if command.name == "export" && args.trim().is_empty() {
                    tine_session::EXPORT_CLIPBOARD.to_owned()
                } else {
                    args.clone()
                };
                if command.name == "clear" {
                    self.clear_transcript();
                } else {
                    self.close_open();
                    let shown = Queued::Command {
                        command: command.clone(),
                        args: args.clone(),
                    };
                    self.transcript.push(Entry::User { text: shown.text() });
                }
                if command.runs_turn {
                    self.begin_turn(None);
                }
                self.submitting.push_back(command.runs_turn);
                vec![Op::Command {
                    name: command.name,
                    args: sent_args,
                }]
            }
        }
    }

    /// Esc (or Ctrl+C) while a turn runs.
    pub(crate) fn interrupt(&mut self) -> Vec<Op> {
        let Some(turn) = &mut self.turn else {
            // Esc Esc on an empty prompt: the prompts a rewind can go back to (`/rewind`).
            if self.input.is_empty() {
                let now = std::time::Instant::now();
                if self
                    .last_esc
                    .is_some_and(|then| now.duration_since(then) < ESC_ESC)
                {
                    self.last_esc = None;
                    return vec![Op::RewindPoints];
                }
                self.last_esc = Some(now);
            }
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
        vec![Op::Interrupt]
    }

    pub(crate) fn interrupt_running_tools(&mut self) {
        let running: Vec<usize> = self.tools.values().copied().collect();
        for i in running {
            if let Some(Entry::Tool(call)) = self.transcript.get_mut(i)
                && call.is_running()
            {
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
    pub(crate) fn forget_from(&mut self, len: usize) {
        self.open_text = self.open_text.filter(|i| *i < len);
        self.open_thinking = self.open_thinking.filter(|i| *i < len);
        self.tools.retain(|_, i| *i < len);
    }

    pub(crate) fn close_text(&mut self) {
        if let Some(i) = self.open_text.take()
            && let Some(Entry::Assistant(stream)) = self.transcript.get_mut(i)
        {
            stream.finish();
        }
    }

    pub(crate) fn close_thinking(&mut self) {
        if let Some(i) = self.open_thinking.take()
            && let Some(Entry::Thinking { done, .. }) = self.transcript.get_mut(i)
        {
            *done = true;
        }
    }

    pub(crate) fn close_open(&mut self) {
        self.close_text();
        self.close_thinking();
    }

    /// A finished markdown entry (a command's answer).
    pub(crate) fn push_markdown(&mut self, text: &str) {
        self.transcript.push(Entry::CommandOutput {
            body: MarkdownStream::complete(&crate::wrap::sanitize(text)),
        });
    }

    /// Leave: the front end shuts the session down once the loop returns.
    pub(crate) fn exit(&mut self) -> Vec<Op> {
        self.exit = true;
        Vec::new()
    }
}
