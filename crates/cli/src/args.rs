//! The command line, Claude-Code-compatible where the flags overlap.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Parser, Subcommand};
use tine_api_client::{Effort, Provider};
pub(crate) use tine_headless::{InputFormat, OutputFormat};

/// tine is a coding agent for your terminal: run `tine` in a project to work with it in the
/// interactive UI, or `tine -p "fix the failing test"` to have it answer once and exit.
#[derive(Debug, Clone, Parser)]
#[command(name = "tine", disable_version_flag = true, long_about = None)]
pub(crate) struct Args {
    /// Another command instead of a session.
    #[command(subcommand)]
    pub command: Option<Command>,

    /// The prompt. Without it, the prompt is read from standard input.
    pub prompt: Option<String>,

    /// Print the response and exit (headless). The prompt is the argument, or standard input.
    #[arg(short = 'p', long = "print")]
    pub print: bool,

    /// How the result is printed.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub output_format: OutputFormat,

    /// How input is read: `text` (the prompt) or `stream-json` (one user message per line of
    /// standard input: {"type":"user","message":{"role":"user","content":"..."}}).
    #[arg(long, value_enum, default_value_t = InputFormat::Text)]
    pub input_format: InputFormat,

    /// The model (default: $ANTHROPIC_MODEL, else claude-opus-5-5; with the openai provider,
    /// $OPENAI_MODEL), passed to the endpoint verbatim (`qwen2.5-coder:7b`).
    #[arg(long)]
    pub model: Option<String>,

    /// The model provider: anthropic (Messages API, ANTHROPIC_* variables) or openai
    /// (OpenAI-compatible chat completions: Ollama, vLLM, llama.cpp, LM Studio, OpenAI; set
    /// OPENAI_BASE_URL with its /v1 and OPENAI_API_KEY). Default: `provider` in settings, else
    /// anthropic.
    #[arg(long, value_name = "anthropic|openai", value_parser = parse_provider)]
    pub provider: Option<Provider>,

    /// Stop after this many model requests in a turn.
    #[arg(long)]
    pub max_turns: Option<u32>,

    /// default, acceptEdits, plan, bypassPermissions or dontAsk.
    #[arg(long)]
    pub permission_mode: Option<String>,

    /// Rules allowed without asking, comma or space separated: "Read,Bash(npm test:*)".
    #[arg(long = "allowedTools", alias = "allowed-tools", num_args = 1..)]
    pub allowed_tools: Vec<String>,

    /// Rules refused, comma or space separated: "Bash(rm:*) WebFetch".
    #[arg(long = "disallowedTools", alias = "disallowed-tools", num_args = 1..)]
    pub disallowed_tools: Vec<String>,

    /// Resume the session with this id (in this directory).
    #[arg(short = 'r', long, conflicts_with = "continue_session")]
    pub resume: Option<String>,

    /// Continue the most recent session of this directory.
    #[arg(short = 'c', long = "continue")]
    pub continue_session: bool,

    /// A settings file, or settings as inline JSON.
    #[arg(long)]
    pub settings: Option<String>,

    /// Text appended to the system prompt.
    #[arg(long, conflicts_with = "append_system_prompt_file")]
    pub append_system_prompt: Option<String>,

    /// A file whose text is appended to the system prompt.
    #[arg(long, value_name = "FILE")]
    pub append_system_prompt_file: Option<PathBuf>,

    /// The system prompt to use instead of tine's default (the appended text still follows).
    #[arg(long, conflicts_with = "system_prompt_file")]
    pub system_prompt: Option<String>,

    /// A file whose text replaces tine's default system prompt.
    #[arg(long, value_name = "FILE")]
    pub system_prompt_file: Option<PathBuf>,

    /// More directories the tools may use like the project (reads; edits as the mode allows),
    /// as `permissions.additionalDirectories` in settings.
    #[arg(long = "add-dir", value_name = "DIR", num_args = 1..)]
    pub add_dir: Vec<PathBuf>,

    /// Run every call without asking: bypassPermissions mode (deny rules still apply). Refused
    /// as root unless IS_SANDBOX=1 says this is a sandbox (a container).
    #[arg(long)]
    pub dangerously_skip_permissions: bool,

    /// The id of a new session (a UUID no session of this directory has); with --resume or
    /// --continue, only for the --fork-session copy.
    #[arg(long, value_name = "UUID", value_parser = parse_uuid)]
    pub session_id: Option<String>,

    /// With -p: when the model stays overloaded, go on with this model (not the main one).
    #[arg(long, value_name = "MODEL")]
    pub fallback_model: Option<String>,

    /// With -p: the final answer must be JSON valid against this JSON Schema (an object
    /// schema); the result carries it as `structured_output`.
    #[arg(long, value_name = "SCHEMA")]
    pub json_schema: Option<String>,

    /// With -p --output-format stream-json: also print the raw stream events
    /// (`stream_event` lines) as they arrive.
    #[arg(long)]
    pub include_partial_messages: bool,

    /// With -p: the MCP tool (mcp__SERVER__TOOL) that answers permission questions instead of
    /// refusing the call.
    #[arg(long, value_name = "mcp__SERVER__TOOL")]
    pub permission_prompt_tool: Option<String>,

    /// Show the loop's transitions, retries and requests on stderr, and log to $TINE_HOME/logs.
    #[arg(long)]
    pub verbose: bool,

    /// Run Bash commands in the OS sandbox (Landlock: writes only in the project and temp
    /// directories, network off unless `sandbox.allowNetwork`), as `sandbox.enabled` does.
    #[arg(long)]
    pub sandbox: bool,

    /// Minimal start: no git snapshot, no instruction-file discovery, no background work.
    #[arg(long)]
    pub bare: bool,

    /// MCP servers to start: a JSON file or inline JSON, `{"mcpServers": {...}}` as in
    /// .mcp.json. Repeatable; they start without the trust .mcp.json servers need.
    #[arg(long = "mcp-config", value_name = "FILE|JSON", num_args = 1..)]
    pub mcp_config: Vec<String>,

    /// Only the --mcp-config servers: none from .mcp.json or settings.
    #[arg(long)]
    pub strict_mcp_config: bool,

    /// Working directory (default: the current one).
    #[arg(long, hide = true)]
    pub cwd: Option<PathBuf>,

    /// The built-in tools offered: `default` (all of them), "" (none), or their names, comma
    /// separated ("Bash,Read,Edit"). MCP servers' tools are offered either way.
    #[arg(long, value_name = "default|TOOLS")]
    pub tools: Option<String>,

    /// Which settings files are read, comma separated: user, project, local (empty: none of
    /// them). Managed settings and --settings always apply.
    #[arg(long, value_name = "user,project,local")]
    pub setting_sources: Option<String>,

    /// Stop once the session has spent more than this many US dollars (the result's subtype
    /// is error_max_budget_usd).
    #[arg(long, value_name = "USD")]
    pub max_budget_usd: Option<f64>,

    /// With -p --output-format stream-json: hook events are messages on the stream too.
    #[arg(long)]
    pub include_hook_events: bool,

    /// With --resume or --continue: go on under a new session id, in a transcript of its own
    /// (the old one is left as it was).
    #[arg(long)]
    pub fork_session: bool,

    /// With --resume or --continue: resume only up to and including the message with this
    /// uuid.
    #[arg(long, value_name = "UUID")]
    pub resume_session_at: Option<String>,

    /// With -p --input-format stream-json: each user message read is echoed back on stdout.
    #[arg(long)]
    pub replay_user_messages: bool,

    /// With -p --input-format stream-json: the session starts on the app's initialize
    /// request (its MCP servers, settings and disallowed tools are part of it). tine always
    /// waits for the app's first line, so this only says the app sends initialize first.
    #[arg(long, hide = true)]
    pub await_initialize: bool,

    /// Extended thinking at start: adaptive (the model decides), enabled or disabled.
    #[arg(long, value_enum, value_name = "adaptive|enabled|disabled")]
    pub thinking: Option<ThinkingMode>,

    /// Thinking on with this budget of tokens (0: off).
    #[arg(long, value_name = "TOKENS")]
    pub max_thinking_tokens: Option<u32>,

    /// How much effort the model puts into its replies: low, medium, high, xhigh or max
    /// (sent as the Messages API's output_config.effort).
    #[arg(long, value_name = "low|medium|high|xhigh|max", value_parser = parse_effort)]
    pub effort: Option<Effort>,

    /// Anthropic beta headers (anthropic-beta) sent on every request, comma separated.
    #[arg(long, value_name = "BETAS", num_args = 1..)]
    pub betas: Vec<String>,

    /// Print the version: the Claude Code version whose protocol tine speaks, and tine's own.
    #[arg(short = 'v', short_alias = 'V', long = "version")]
    pub version: bool,

    /// Options of Claude Code's that tine does not have: each is refused by name.
    #[command(flatten)]
    pub unsupported: UnsupportedFlags,
}

/// `--thinking`'s values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ThinkingMode {
    /// The model decides when and how much to think.
    Adaptive,
    /// On, with Claude Code's default budget (or --max-thinking-tokens).
    Enabled,
    /// Off.
    Disabled,
}

impl ThinkingMode {
    /// The value as typed.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Adaptive => "adaptive",
            Self::Enabled => "enabled",
            Self::Disabled => "disabled",
        }
    }
}

/// Claude Code options the Agent SDK can pass that tine does not support: parsed, so the
/// refusal names the option and says so (instead of an argument error pointing elsewhere).
#[derive(Debug, Clone, Default, clap::Args)]
pub(crate) struct UnsupportedFlags {
    #[arg(long, hide = true, value_name = "TOKENS")]
    pub task_budget: Option<String>,
    #[arg(long, hide = true)]
    pub session_mirror: bool,
    #[arg(long, hide = true, value_name = "DIR")]
    pub plugin_dir: Vec<String>,
    #[arg(long, hide = true, value_name = "MODE")]
    pub thinking_display: Option<String>,
    #[arg(long, hide = true, value_name = "JSON")]
    pub agents: Option<String>,
    #[arg(long, hide = true, value_name = "UUID")]
    pub resume_drops_turn: Option<String>,
}

impl UnsupportedFlags {
    /// The first option given and what it is in Claude Code.
    pub(crate) fn first(&self) -> Option<(&'static str, &'static str)> {
        let given = [
            (
                self.task_budget.is_some(),
                "--task-budget",
                "the API-side task budget",
            ),
            (
                self.session_mirror,
                "--session-mirror",
                "mirroring transcripts to the SDK's session store",
            ),
            (!self.plugin_dir.is_empty(), "--plugin-dir", "plugins"),
            (
                self.thinking_display.is_some(),
                "--thinking-display",
                "summarized or omitted thinking text",
            ),
            (
                self.agents.is_some(),
                "--agents",
                "agents given as JSON on the command line (define them in .tine/agents or \
                 .claude/agents)",
            ),
            (
                self.resume_drops_turn.is_some(),
                "--resume-drops-turn",
                "checking what a truncating resume drops",
            ),
        ];
        given
            .into_iter()
            .find(|(set, _, _)| *set)
            .map(|(_, flag, what)| (flag, what))
    }
}

/// `tine -v`: the Claude Code version whose stream-json protocol tine speaks comes first (the
/// Agent SDK reads the first `X.Y.Z` and compares it with its minimum), then tine's own.
pub(crate) fn version_line() -> String {
    let protocol = tine_session::CLAUDE_CODE_PROTOCOL_VERSION;
    format!(
        "{protocol} (tine {}; speaks Claude Code {protocol}'s stream-json protocol)",
        env!("CARGO_PKG_VERSION")
    )
}

/// The commands beside a session.
#[derive(Debug, Clone, Subcommand)]
pub(crate) enum Command {
    /// What this installation would run with: provider, model, endpoint, credentials,
    /// settings, sandbox, MCP servers (`--check` sends one request).
    Doctor(DoctorArgs),
    /// What automatic memory has saved for this project.
    Memory {
        #[command(subcommand)]
        command: MemoryCommand,
    },
    /// What each compaction of a session dropped.
    Compact {
        #[command(subcommand)]
        command: CompactCommand,
    },
    /// The skills a session here would have, and where each is from.
    Skills {
        #[command(subcommand)]
        command: Option<SkillsCommand>,
    },
    /// The MCP servers a session here would start: list, get NAME, add NAME ..., remove NAME,
    /// trust NAME (`tine mcp --help` for each).
    Mcp {
        /// The MCP command and its arguments.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
        args: Vec<String>,
    },
    /// The files of a session back to before one of its prompts: `tine rewind --list`,
    /// `tine rewind N [--force]` (the latest session here, or `-r ID`).
    Rewind(RewindArgs),
    /// Serve editors over the Agent Client Protocol on standard input and output (Zed,
    /// JetBrains, Neovim): `{"agent_servers": {"tine": {"command": "tine", "args": ["acp"]}}}`.
    /// Flags before `acp` (`--model`, `--settings`, `--allowedTools`, ...) apply to every
    /// session the editor opens.
    Acp,
    /// The Bash sandbox's launcher: `__sandbox --write-root DIR ... [--allow-network] --
    /// PROGRAM ARGS` (tine runs it; not for people).
    #[command(name = "__sandbox", hide = true)]
    Sandbox {
        /// The launcher protocol's arguments.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
        args: Vec<OsString>,
    },
    /// The process watchdog of a session: `__watchdog PID START RECORD` (tine runs it; not
    /// for people).
    #[command(name = "__watchdog", hide = true)]
    Watchdog {
        /// The session's pid, its start time and its record.
        #[arg(num_args = 0..)]
        args: Vec<OsString>,
    },
}

/// `tine rewind`'s options.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct RewindArgs {
    /// The prompt to go back to before (its number in `--list`).
    #[arg(required_unless_present = "list")]
    pub prompt: Option<usize>,
    /// List the prompts with checkpoints, and what each changed since.
    #[arg(long)]
    pub list: bool,
    /// The session (default: the latest of this directory).
    #[arg(short = 'r', long = "resume", value_name = "ID")]
    pub resume: Option<String>,
    /// Also put back files someone else changed since.
    #[arg(long)]
    pub force: bool,
}

/// `tine doctor`'s options.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct DoctorArgs {
    /// A settings file, or settings as inline JSON (as a session's --settings).
    #[arg(long)]
    pub settings: Option<String>,
    /// The provider to check (as a session's --provider).
    #[arg(long, value_name = "anthropic|openai", value_parser = parse_provider)]
    pub provider: Option<Provider>,
    /// The model to check.
    #[arg(long)]
    pub model: Option<String>,
    /// Also send one request to the endpoint.
    #[arg(long)]
    pub check: bool,
}

/// `tine memory ...`.
#[derive(Debug, Clone, Subcommand)]
pub(crate) enum MemoryCommand {
    /// The memory directory (only the path on stdout; where it comes from on stderr).
    Path,
    /// Every memory, newest first.
    List,
    /// One memory's file.
    Show {
        /// Its name (see `tine memory list`).
        name: String,
    },
    /// Consolidate the memories now (takes the dream lock).
    Dream,
}

/// `tine compact ...`.
#[derive(Debug, Clone, Subcommand)]
pub(crate) enum CompactCommand {
    /// What each compaction dropped (the latest session of this directory by default).
    Log {
        /// The session's id.
        session: Option<String>,
    },
}

/// `tine skills ...`.
#[derive(Debug, Clone, Subcommand)]
pub(crate) enum SkillsCommand {
    /// The skills and where each is from (the default).
    List,
}

/// A session id given on the command line must be a UUID (Claude Code's rule).
fn parse_uuid(text: &str) -> Result<String, String> {
    let groups: Vec<&str> = text.split('-').collect();
    let lengths = [8, 4, 4, 4, 12];
    let ok = groups.len() == lengths.len()
        && groups
            .iter()
            .zip(lengths)
            .all(|(g, n)| g.len() == n && g.bytes().all(|b| b.is_ascii_hexdigit()));
    if ok {
        Ok(text.to_ascii_lowercase())
    } else {
        Err("invalid session ID: it must be a valid UUID \
             (like 123e4567-e89b-12d3-a456-426614174000)"
            .to_owned())
    }
}

fn parse_effort(text: &str) -> Result<Effort, String> {
    text.parse()
}

fn parse_provider(text: &str) -> Result<Provider, String> {
    text.parse()
        .map_err(|e: tine_api_client::ApiError| e.to_string())
}

/// Splits `--allowedTools` values into rules: commas and spaces separate rules, except inside
/// parentheses (`Bash(npm test:*)` stays one rule).
pub(crate) fn split_rules(values: &[String]) -> Vec<String> {
    let mut rules = Vec::new();
    for value in values {
        let mut depth = 0usize;
        let mut current = String::new();
        for c in value.chars() {
            match c {
                '(' => {
                    depth += 1;
                    current.push(c);
                }
                ')' => {
                    depth = depth.saturating_sub(1);
                    current.push(c);
                }
                ',' | ' ' | '\t' | '\n' if depth == 0 => {
                    if !current.trim().is_empty() {
                        rules.push(current.trim().to_owned());
                    }
                    current.clear();
                }
                _ => current.push(c),
            }
        }
        if !current.trim().is_empty() {
            rules.push(current.trim().to_owned());
        }
    }
    rules
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_split_on_commas_and_spaces_outside_parentheses() {
        let rules = split_rules(&[
            "Read,Bash(npm test:*) Edit".to_owned(),
            "Bash(git log, git diff)".to_owned(),
        ]);
        assert_eq!(
            rules,
            vec![
                "Read",
                "Bash(npm test:*)",
                "Edit",
                "Bash(git log, git diff)"
            ]
        );
    }

    #[test]
    fn p_takes_the_prompt_as_its_argument() {
        let args =
            Args::try_parse_from(["tine", "-p", "hello", "--output-format", "json"]).unwrap();
        assert!(args.print);
        assert_eq!(args.prompt.as_deref(), Some("hello"));
        assert_eq!(args.output_format, OutputFormat::Json);
    }

    #[test]
    fn subcommands_and_prompts_are_told_apart() {
        let args = Args::try_parse_from(["tine", "memory", "show", "x"]).unwrap();
        assert!(matches!(
            args.command,
            Some(Command::Memory { command: MemoryCommand::Show { name } }) if name == "x"
        ));
        let args = Args::try_parse_from(["tine", "fix the bug"]).unwrap();
        assert!(args.command.is_none());
        assert_eq!(args.prompt.as_deref(), Some("fix the bug"));
        let args = Args::try_parse_from([
            "tine",
            "__sandbox",
            "--write-root",
            "/a",
            "--",
            "sh",
            "-c",
            "x",
        ])
        .unwrap();
        let Some(Command::Sandbox { args }) = args.command else {
            panic!("not the launcher");
        };
        assert_eq!(args, ["--write-root", "/a", "--", "sh", "-c", "x"]);
        let args = Args::try_parse_from(["tine", "mcp", "add", "x", "--", "npx", "-y"]).unwrap();
        assert!(matches!(args.command, Some(Command::Mcp { args }) if args[0] == "add"));
    }

    #[test]
    fn provider_is_anthropic_or_openai() {
        let args = Args::try_parse_from(["tine", "-p", "x", "--provider", "openai"]).unwrap();
        assert_eq!(args.provider, Some(Provider::OpenAi));
        assert!(Args::try_parse_from(["tine", "-p", "x", "--provider", "ollama"]).is_err());
        assert_eq!(
            Args::try_parse_from(["tine", "-p", "x"]).unwrap().provider,
            None
        );
    }

    #[test]
    fn mcp_config_repeats_and_takes_files_or_json() {
        let args = Args::try_parse_from([
            "tine",
            "-p",
            "x",
            "--mcp-config",
            "a.json",
            "--mcp-config",
            r#"{"mcpServers":{}}"#,
            "--strict-mcp-config",
        ])
        .unwrap();
        assert_eq!(args.mcp_config, vec!["a.json", r#"{"mcpServers":{}}"#]);
        assert!(args.strict_mcp_config);
        assert_eq!(args.prompt.as_deref(), Some("x"));
    }

    #[test]
    fn session_ids_are_uuids_and_exclude_resuming() {
        let id = "123E4567-e89b-12d3-a456-426614174000";
        let args = Args::try_parse_from(["tine", "-p", "x", "--session-id", id]).unwrap();
        assert_eq!(
            args.session_id.as_deref(),
            Some("123e4567-e89b-12d3-a456-426614174000")
        );
        for bad in ["abc", "123e4567-e89b-12d3-a456-42661417400g", "../../etc"] {
            let error = Args::try_parse_from(["tine", "-p", "x", "--session-id", bad]).unwrap_err();
            assert!(error.to_string().contains("UUID"), "{error}");
        }
        // With -c or -r only for a fork.
        let args = Args::try_parse_from(["tine", "-p", "x", "--session-id", id, "-c"]).unwrap();
        assert!(crate::flags::SessionFlags::from_args(&args, true).is_err());
        let args = Args::try_parse_from([
            "tine",
            "-p",
            "x",
            "--session-id",
            id,
            "-c",
            "--fork-session",
        ])
        .unwrap();
        let flags = crate::flags::SessionFlags::from_args(&args, true).unwrap();
        assert!(flags.fork_session);
    }

    #[test]
    fn add_dir_repeats_and_system_prompt_flags_exclude_their_files() {
        let args = Args::try_parse_from([
            "tine",
            "-p",
            "x",
            "--add-dir",
            "../a",
            "--add-dir",
            "/b",
            "--system-prompt",
            "S",
        ])
        .unwrap();
        assert_eq!(
            args.add_dir,
            vec![PathBuf::from("../a"), PathBuf::from("/b")]
        );
        assert_eq!(args.system_prompt.as_deref(), Some("S"));
        assert!(
            Args::try_parse_from([
                "tine",
                "-p",
                "x",
                "--system-prompt",
                "S",
                "--system-prompt-file",
                "f"
            ])
            .is_err()
        );
    }

    #[test]
    fn allowed_tools_take_several_values() {
        let args =
            Args::try_parse_from(["tine", "-p", "x", "--allowedTools", "Read", "Edit"]).unwrap();
        // `x` stays the prompt; both rules are kept.
        assert_eq!(args.prompt.as_deref(), Some("x"));
        assert_eq!(args.allowed_tools, vec!["Read", "Edit"]);
    }
}
