//! What a front end says about the session it wants: [`SessionOptions`]. Everything else
//! (settings, permissions, tools, context, memory, the forks' parent, the stop-hook pipeline)
//! [`crate::Session::start`] works out from these, the environment and the settings files.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tine_api_client::{Effort, ModelClient, ThinkingConfig};
use tine_config::SessionId;
use tine_config::settings::SettingsSource;
use tine_fork_runtime::DEFAULT_DRAIN_TIMEOUT;
use tine_mcp::SdkMcpRelay;
use tine_permissions::PermissionMode;

/// Which conversation to run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Resume {
    /// A new session with a fresh id.
    #[default]
    New,
    /// The latest session of this directory (`--continue`).
    Latest,
    /// This session of this directory (`--resume ID`).
    Id(SessionId),
}

/// Who answers the permission engine's "ask".
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Approvals {
    /// Nobody can (headless `-p`): an ask is a denial telling the model how the user can allow
    /// the call (`--allowedTools`, `--permission-mode`, settings).
    #[default]
    Headless,
    /// A person: an ask becomes a [`crate::SessionEvent::PermissionRequest`] the front end
    /// answers; the call waits for it (or for the turn's interruption). A stuck model and an MCP
    /// server's question are asked too.
    Interactive,
    /// An app (the Agent SDK's `can_use_tool`, `--permission-prompt-tool stdio`): an ask is a
    /// `PermissionRequest` the front end relays and answers; everything else is as headless
    /// (a stuck model stops the turn, an MCP server's question is declined).
    App,
}

/// How to start a session. [`SessionOptions::new`] gives the defaults of a plain `tine` in
/// `cwd`; set the fields a flag changed. The session keeps a copy: `Op::Clear` and
/// `Op::Resume` assemble the next conversation from it.
#[derive(Clone)]
pub struct SessionOptions {
    /// The working directory (made canonical by start).
    pub cwd: PathBuf,
    /// `TINE_HOME`; `None`: from the environment (`TINE_HOME`, else `~/.tine`).
    pub home: Option<PathBuf>,
    /// The user's home directory (Claude Code's `~/.claude/` files, `~` in rules); `None`:
    /// `$HOME`.
    pub user_home: Option<PathBuf>,
    /// Who talks to the model (the session, and every fork of it); `None`: Anthropic's HTTP
    /// client configured from the environment (`ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL`, ...),
    /// checked first of all. Another provider's client (the cli's `--provider openai`) is
    /// built by the front end and handed over here.
    pub client: Option<Arc<dyn ModelClient>>,
    /// `--model`; else `ANTHROPIC_MODEL`, the settings' `model`, the default. An alias
    /// (`opus`, `sonnet`, `haiku`) is resolved to its current id (a `[1m]` suffix stays: the
    /// client strips it on the wire and sends the 1M-context beta); forks ask the same model. After a `--fallback-model` switch the session goes on with that one.
    pub model: Option<String>,
    /// The small fast model of side queries (WebFetch's summaries); `None`:
    /// `ANTHROPIC_SMALL_FAST_MODEL`, else the default. A front end handing over a non-Anthropic
    /// `client` names one its endpoint serves.
    pub small_model: Option<String>,
    /// `--settings`: a file or inline JSON, the flag source of settings.
    pub settings_flag: Option<String>,
    /// The managed-settings file; `None`: `TINE_MANAGED_SETTINGS` or none.
    pub managed_settings: Option<PathBuf>,
    /// `--permission-mode`; else the settings' `defaultMode`.
    pub permission_mode: Option<PermissionMode>,
    /// `--allowedTools` rules, one per entry (already split).
    pub allowed_tools: Vec<String>,
    /// `--disallowedTools` rules, one per entry.
    pub disallowed_tools: Vec<String>,
    /// A new session, `--continue` or `--resume ID`.
    pub resume: Resume,
    /// This session replaces one the user cleared (`/clear`): SessionStart hooks are told
    /// `source: "clear"`.
    pub cleared: bool,
    /// `--bare`: no instruction files, no git, no memory, no background work.
    pub bare: bool,
    /// `--max-turns`: requests per turn.
    pub max_turns: Option<u32>,
    /// `--append-system-prompt`.
    pub append_system_prompt: Option<String>,
    /// `--system-prompt`: replaces tine's default system prompt (the appended text still
    /// follows it). Rendered once: every request of the session sends the same bytes.
    pub system_prompt: Option<String>,
    /// `--add-dir`: more directories counted as the project (read and, as the mode allows,
    /// written like it), besides the settings' `permissions.additionalDirectories`. Each must
    /// be an existing directory; symbolic links are resolved.
    pub add_dirs: Vec<PathBuf>,
    /// `--session-id`: the id of a new session (a UUID no transcript of this directory uses).
    /// Only with [`Resume::New`], or for the fork of [`SessionOptions::fork_session`].
    pub session_id: Option<SessionId>,
    /// `--fallback-model`: when the main model stays overloaded, the turn goes on with this
    /// one (the user is told). Must differ from the main model.
    pub fallback_model: Option<String>,
    /// `--json-schema`: every turn must end with a final answer valid against this schema,
    /// given through the `StructuredOutput` tool; it comes back as
    /// [`crate::TurnEnd::structured_output`].
    pub json_schema: Option<serde_json::Value>,
    /// `--include-partial-messages`: the main thread's raw stream events come as
    /// [`crate::SessionEvent::StreamEvent`].
    pub include_partial_messages: bool,
    /// `--permission-prompt-tool mcp__SERVER__TOOL`: headless, an ask goes to this MCP tool
    /// instead of becoming a denial.
    pub permission_prompt_tool: Option<String>,
    /// `--sandbox`: Bash in the OS sandbox for this run (settings' `sandbox.enabled` also
    /// turns it on; the session decides with them, see its `sandbox` module).
    pub sandbox: bool,
    /// The program that runs a sandboxed command (`PROGRAM __sandbox ... -- COMMAND`: the
    /// tine binary); `None`: no sandbox can be had (a required one refuses the start).
    pub sandbox_launcher: Option<PathBuf>,
    /// `--provider`; else `provider` in user, local, flag or managed settings (never the
    /// project's), else anthropic. With openai the session builds the chat-completions client
    /// from `OPENAI_*` or the settings' `openai` object, unless `client` is given.
    pub provider: Option<tine_api_client::Provider>,
    /// Who answers permission asks: a person (interactive) or the rules alone (headless).
    pub approvals: Approvals,
    /// Write the transcript.
    pub persist: bool,
    /// Send [`crate::SessionEvent::Request`] and [`crate::SessionEvent::CacheBreak`] events.
    pub verbose: bool,
    /// `--mcp-config` values, each a file or inline JSON, in command-line order: their
    /// servers start (no trust needed) besides those of `.mcp.json` (when trusted) and
    /// settings. The session starts and stops every server (see `mcp`).
    pub mcp_configs: Vec<String>,
    /// `--strict-mcp-config`: only the `--mcp-config` servers.
    pub strict_mcp_config: bool,
    /// `--plugin-dir` (repeatable, as the Agent SDK passes it): Claude Code plugins loaded
    /// from these folders for the session, besides the ones settings enable (see `plugins`).
    pub plugin_dirs: Vec<PathBuf>,
    /// Typed agents the front end's app defines (the Agent SDK's `agents`): beside the built-in
    /// and Markdown ones, winning a name.
    pub agents: Vec<tine_fork_runtime::AgentDefinition>,
    /// How long [`crate::SessionHandle::shutdown`] waits for background jobs before giving up
    /// on them (they are then cancelled, and aborted if they do not stop).
    pub drain_grace: Duration,
    /// The Agent SDK app's relay to its in-process MCP servers (`mcp_servers` entries of type
    /// `sdk`, which reach `--mcp-config` as `{"type": "sdk", "name": ...}`): the headless front
    /// end speaking the SDK's control protocol implements it with `mcp_message` requests.
    /// `None`: such a server fails at start-up, saying it needs an SDK app.
    pub sdk_mcp_relay: Option<Arc<dyn SdkMcpRelay>>,
    /// Hooks an app registers (the Agent SDK's `initialize` request's `hooks`, answered
    /// through its callbacks): they run beside the settings' hooks. A malformed value refuses
    /// the start ([`crate::StartError::AppHooks`]).
    pub hook_callbacks: Option<crate::AppHooks>,
    /// `--include-hook-events`: each hook run (a command or an app's callback) is reported as
    /// [`crate::SessionEvent::Hook`] when it starts and when it ends.
    pub include_hook_events: bool,
    /// `--tools`: the only built-in tools offered (by name; `Task` is the Agent tool's old
    /// name); empty: none. MCP servers' tools and StructuredOutput are not built-ins and stay.
    /// `None` (`--tools default`): all of them.
    pub builtin_tools: Option<Vec<String>>,
    /// `--setting-sources`: of the user, project and local settings (and their scopes'
    /// instruction files, skills, agents and custom commands), only these are read; `None`:
    /// all. Managed settings and `--settings` always are. (`.mcp.json` servers are not
    /// filtered: they start only when trusted.)
    pub setting_sources: Option<Vec<SettingsSource>>,
    /// `--max-budget-usd`: once the session has spent more than this (forks and side queries
    /// included), no further request is made and the turn ends with `error_max_budget_usd`.
    pub max_budget_usd: Option<f64>,
    /// `--fork-session`: a resumed conversation continues under a new session id in a
    /// transcript of its own (`session_id`'s, when given), the old one left as it was.
    pub fork_session: bool,
    /// `--resume-session-at UUID`: resume the conversation only up to and including the
    /// message with this uuid (the rest is left out of the history; the transcript keeps it).
    pub resume_session_at: Option<String>,
    /// `--thinking` / `--max-thinking-tokens`: the thinking at start, over
    /// `MAX_THINKING_TOKENS` and `alwaysThinkingEnabled` (`Disabled`: off). `None`: those decide.
    pub thinking: Option<ThinkingConfig>,
    /// `--effort`: sent as `output_config.effort` on every request of the main model (forks
    /// that share its cache too).
    pub effort: Option<Effort>,
    /// `--betas`: `anthropic-beta` flags on every request of the session, forks included
    /// (besides `ANTHROPIC_BETAS`). Only tine's own Anthropic client takes them.
    pub betas: Vec<String>,
    /// The editor's files, for a front end speaking for an editor (ACP's `fs/read_text_file`
    /// and `fs/write_text_file`): Read, Write and Edit of text files go through it, so the
    /// model sees unsaved buffers and the editor applies the changes (forks and sub-agents
    /// too). `None`: they use the disk.
    pub editor_files: Option<Arc<dyn tine_tools::EditorFiles>>,
    /// The editor's terminal (ACP's `terminal/*`): the main thread's foreground Bash commands
    /// run there, unless the Bash sandbox is on (the editor's terminal is outside it). `None`:
    /// locally.
    pub editor_terminal: Option<Arc<dyn tine_tools::EditorTerminal>>,
}

impl SessionOptions {
    /// What the conversations after the first are assembled from: these options, with the
    /// first conversation's own choices (which one, its id) taken out.
    pub(crate) fn template(&self) -> Self {
        let mut template = self.clone();
        template.resume = Resume::New;
        template.session_id = None;
        template.cleared = false;
        template.fork_session = false;
        template.resume_session_at = None;
        template
    }

    /// The defaults: a new, persisted, headless session in `cwd`, everything else from the
    /// environment and settings.
    pub fn new(cwd: impl Into<PathBuf>) -> Self {
        Self {
            cwd: cwd.into(),
            home: None,
            user_home: None,
            client: None,
            model: None,
            small_model: None,
            settings_flag: None,
            managed_settings: None,
            permission_mode: None,
            allowed_tools: Vec::new(),
            disallowed_tools: Vec::new(),
            resume: Resume::New,
            cleared: false,
            bare: false,
            max_turns: None,
            append_system_prompt: None,
            system_prompt: None,
            add_dirs: Vec::new(),
            session_id: None,
            fallback_model: None,
            json_schema: None,
            include_partial_messages: false,
            permission_prompt_tool: None,
            sandbox: false,
            sandbox_launcher: None,
            provider: None,
            approvals: Approvals::Headless,
            persist: true,
            verbose: false,
            mcp_configs: Vec::new(),
            strict_mcp_config: false,
            plugin_dirs: Vec::new(),
            agents: Vec::new(),
            drain_grace: DEFAULT_DRAIN_TIMEOUT,
            sdk_mcp_relay: None,
            hook_callbacks: None,
            include_hook_events: false,
            builtin_tools: None,
            setting_sources: None,
            max_budget_usd: None,
            fork_session: false,
            resume_session_at: None,
            thinking: None,
            effort: None,
            betas: Vec::new(),
            editor_files: None,
            editor_terminal: None,
        }
    }
}
