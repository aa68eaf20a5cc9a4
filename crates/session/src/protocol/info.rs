//! What a front end knows about the session it drives: [`SessionInfo`], sent as
//! [`SessionEvent::Configured`](crate::SessionEvent::Configured) when it starts and whenever
//! another conversation takes its place, with the command table a front end completes and
//! dispatches from ([`CommandInfo`]) and the settings' status line command
//! ([`StatusLineCommand`]).

use std::path::PathBuf;
use std::time::Duration;

use tine_config::SessionId;
use tine_permissions::PermissionMode;

/// The Claude Code version whose stream-json and control protocol tine speaks (the Agent SDK
/// checks a CLI's version; `tine --version` and the `init` line name it beside tine's own).
pub const CLAUDE_CODE_PROTOCOL_VERSION: &str = "2.1.332";

/// What a front end shows about the session (the stream-json `init` line, a status line, the
/// prompt box's completion).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionInfo {
    /// The session's id (its transcript's name).
    pub session_id: SessionId,
    /// The working directory (the project).
    pub cwd: PathBuf,
    /// `TINE_HOME`.
    pub home: PathBuf,
    /// The model the session asks.
    pub model: String,
    /// The tool array's names, in order.
    pub tools: Vec<String>,
    /// The permission mode at start.
    pub permission_mode: PermissionMode,
    /// Whether a person may cycle to bypassPermissions (Shift+Tab): only in a session started
    /// in it, as in Claude Code, and never when settings disable it.
    pub bypass_available: bool,
    /// Where the transcript is written.
    pub transcript_path: PathBuf,
    /// Whether the session continues an earlier one (its history follows `Configured`).
    pub resumed: bool,
    /// Whether auto memory is on.
    pub memory: bool,
    /// Whether extended thinking is on.
    pub thinking: bool,
    /// After how long idle a returning person gets an away summary (`None`: off).
    pub away_after: Option<Duration>,
    /// Whether the front end should hand drafts over for speculation.
    pub speculation: bool,
    /// The slash commands the session answers: its built-ins, then the skills, then the
    /// custom commands (a skill wins a name over a custom command, as in Claude Code).
    pub commands: Vec<CommandInfo>,
    /// The settings' `statusLine` command, for an interactive front end to run (headless
    /// runs none). `None`: not set, malformed (a warning notice says so), or not allowed
    /// (`disableAllHooks`, managed `allowManagedHooksOnly`: only a managed one runs).
    pub status_line: Option<StatusLineCommand>,
    /// The output style in force for this conversation (`outputStyle`; `default` when none
    /// is set), as Claude Code names it to a status line command.
    pub output_style: String,
    /// The directories the session may work in besides `cwd` (`--add-dir`,
    /// `permissions.additionalDirectories`).
    pub added_dirs: Vec<PathBuf>,
    /// The model's context window on the session's endpoint, in tokens, as the status line's
    /// figures give it ([`UsageReport::context_window`](crate::UsageReport), until the first
    /// request's report).
    pub context_window: u64,
}

/// Claude Code's `statusLine: {"type": "command", "command", "padding", "refreshInterval"}`:
/// a shell command given the session's figures as JSON on its standard input, whose first
/// line of output is the status line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusLineCommand {
    /// Run with `sh -c` in the project.
    pub command: String,
    /// Extra columns before the line, beside the UI's own margin (`padding`, default 0).
    pub padding: u16,
    /// Also run it this often, besides when the figures change (`refreshInterval`, in
    /// seconds, at least 1; `None`: only on changes).
    pub refresh_interval: Option<Duration>,
}

/// One slash command of the session's table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandInfo {
    /// Without the slash.
    pub name: String,
    /// One line for `/help` and completion.
    pub description: String,
    /// Whether it talks to the model: its `TurnEnded` comes after a turn of the model (a
    /// front end shows the spinner); every command is a turn op either way.
    pub runs_turn: bool,
    /// Where it comes from.
    pub source: CommandSource,
}

/// Where a command of the table comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandSource {
    /// One of the session's own.
    Builtin,
    /// A skill (`.tine/skills/NAME/SKILL.md`, `.claude/skills/`, the user's): `/NAME [args]`.
    Skill,
    /// A Markdown prompt of `.tine/commands/` or `.claude/commands/`.
    Custom,
}
