//! The command-line flags that shape a session, Claude Code's: read once (files read, JSON
//! parsed, the mode checked) into [`SessionFlags`], which both front ends hand to the session.
//! `--fallback-model`, `--json-schema`, `--include-partial-messages` and
//! `--permission-prompt-tool` are `-p` flags, as in Claude Code: the UI has a person. The
//! Agent SDK's flags (`--tools`, `--setting-sources`, `--max-budget-usd`, `--fork-session`,
//! `--resume-session-at`, `--thinking`, `--max-thinking-tokens`, `--effort`, `--betas`) shape
//! any session; the Claude Code options tine lacks are refused by name.

use std::path::PathBuf;

use anyhow::{Context, Result, anyhow, bail};
use serde_json::Value;
use tine_api_client::{Effort, ThinkingConfig};
use tine_config::SessionId;
use tine_config::settings::SettingsSource;
use tine_permissions::PermissionMode;
use tine_query_loop::DEFAULT_THINKING_BUDGET;
use tine_session::SessionOptions;

use crate::args::{Args, OutputFormat, ThinkingMode};

/// The environment variable that says tine runs in a sandbox (a container): bypassPermissions
/// is then allowed as root, as Claude Code allows it.
pub(crate) const IS_SANDBOX: &str = "IS_SANDBOX";

/// What the flags ask of the session.
#[derive(Debug, Clone, Default)]
pub(crate) struct SessionFlags {
    pub permission_mode: Option<PermissionMode>,
    pub system_prompt: Option<String>,
    pub append_system_prompt: Option<String>,
    pub add_dirs: Vec<PathBuf>,
    /// Only for the launch's first session (a `/clear` starts another with a fresh id).
    pub session_id: Option<SessionId>,
    pub fallback_model: Option<String>,
    pub json_schema: Option<Value>,
    pub include_partial_messages: bool,
    /// `--include-hook-events`, with `--output-format stream-json`.
    pub include_hook_events: bool,
    pub permission_prompt_tool: Option<String>,
    /// `--permission-prompt-tool stdio`: the app answers asks over the control protocol
    /// (`can_use_tool`); `permission_prompt_tool` is then `None`.
    pub permission_prompt_stdio: bool,
    /// `--tools`: `None` for all built-ins.
    pub builtin_tools: Option<Vec<String>>,
    pub setting_sources: Option<Vec<SettingsSource>>,
    pub max_budget_usd: Option<f64>,
    pub fork_session: bool,
    pub resume_session_at: Option<String>,
    /// `--thinking` / `--max-thinking-tokens` (`Disabled`: off).
    pub thinking: Option<ThinkingConfig>,
    pub effort: Option<Effort>,
    pub betas: Vec<String>,
}

impl SessionFlags {
    /// Reads `args`' flags; `headless` (`-p`) takes the flags only `-p` has.
    pub(crate) fn from_args(args: &Args, headless: bool) -> Result<Self> {
        let mut permission_mode = args
            .permission_mode
            .as_deref()
            .map(parse_mode)
            .transpose()?;
        if args.dangerously_skip_permissions {
            permission_mode = Some(PermissionMode::BypassPermissions);
        }
        if permission_mode == Some(PermissionMode::BypassPermissions) {
            check_bypass_allowed(
                is_root(),
                std::env::var(IS_SANDBOX).ok().as_deref(),
                args.dangerously_skip_permissions,
            )?;
        }
        let system_prompt = match (&args.system_prompt, &args.system_prompt_file) {
            (Some(text), _) => Some(text.clone()),
            (None, Some(file)) => Some(read_prompt_file("--system-prompt-file", file)?),
            (None, None) => None,
        };
        let append_system_prompt =
            match (&args.append_system_prompt, &args.append_system_prompt_file) {
                (Some(text), _) => Some(text.clone()),
                (None, Some(file)) => Some(read_prompt_file("--append-system-prompt-file", file)?),
                (None, None) => None,
            };
        if let Some((flag, what)) = args.unsupported.first() {
            bail!(
                "{flag}: tine does not support this option of Claude Code's ({what}); run \
                 without it"
            );
        }
        let session_id = args
            .session_id
            .as_deref()
            .map(SessionId::parse)
            .transpose()
            .map_err(|e| anyhow!(e))?;
        let resuming = args.resume.is_some() || args.continue_session;
        if session_id.is_some() && resuming && !args.fork_session {
            bail!(
                "--session-id can only be used with --continue or --resume if --fork-session \
                 is also given (the new id is the fork's)"
            );
        }
        if args.resume_session_at.is_some() && !resuming {
            bail!("--resume-session-at needs --resume ID or --continue: it picks where to resume");
        }
        let mut flags = Self {
            permission_mode,
            system_prompt,
            append_system_prompt,
            add_dirs: args.add_dir.clone(),
            session_id,
            builtin_tools: args.tools.as_deref().and_then(builtin_tools),
            setting_sources: args
                .setting_sources
                .as_deref()
                .map(setting_sources)
                .transpose()?,
            max_budget_usd: args.max_budget_usd.map(budget).transpose()?,
            // Without --resume or --continue the session is new anyway: nothing to fork.
            fork_session: args.fork_session && resuming,
            resume_session_at: args.resume_session_at.clone(),
            thinking: thinking(args.thinking, args.max_thinking_tokens)?,
            effort: args.effort,
            betas: betas(&args.betas),
            ..Self::default()
        };
        if headless {
            flags.fallback_model = args.fallback_model.clone();
            flags.json_schema = args
                .json_schema
                .as_deref()
                .map(|text| {
                    serde_json::from_str::<Value>(text)
                        .context("--json-schema is not valid JSON (pass the schema itself)")
                })
                .transpose()?;
            let stream_json = args.output_format == OutputFormat::StreamJson;
            flags.include_partial_messages = args.include_partial_messages && stream_json;
            flags.include_hook_events = args.include_hook_events && stream_json;
            match args.permission_prompt_tool.as_deref() {
                // The Agent SDK's: asks go to the app as `can_use_tool` control requests.
                Some("stdio") => flags.permission_prompt_stdio = true,
                Some(tool) if !tool.starts_with("mcp__") => bail!(
                    "--permission-prompt-tool {tool}: name an MCP tool as mcp__SERVER__TOOL \
                     (its server configured with --mcp-config or .mcp.json), or stdio (the \
                     Agent SDK's control protocol)"
                ),
                tool => flags.permission_prompt_tool = tool.map(str::to_owned),
            }
        }
        Ok(flags)
    }

    /// Sets the options these flags decide.
    pub(crate) fn apply(&self, options: &mut SessionOptions) {
        options.permission_mode = self.permission_mode;
        options.system_prompt = self.system_prompt.clone();
        options.append_system_prompt = self.append_system_prompt.clone();
        options.add_dirs = self.add_dirs.clone();
        options.session_id = self.session_id.clone();
        options.fallback_model = self.fallback_model.clone();
        options.json_schema = self.json_schema.clone();
        options.include_partial_messages = self.include_partial_messages;
        options.include_hook_events = self.include_hook_events;
        options.permission_prompt_tool = self.permission_prompt_tool.clone();
        options.builtin_tools = self.builtin_tools.clone();
        options.setting_sources = self.setting_sources.clone();
        options.max_budget_usd = self.max_budget_usd;
        options.fork_session = self.fork_session;
        options.resume_session_at = self.resume_session_at.clone();
        options.thinking = self.thinking;
        options.effort = self.effort;
        options.betas = self.betas.clone();
    }
}

/// Names separated by commas (or spaces), trimmed, empty ones dropped.
fn list(text: &str) -> impl Iterator<Item = &str> {
    text.split([',', ' ', '\t'])
        .map(str::trim)
        .filter(|name| !name.is_empty())
}

/// `--tools`: `default` is every built-in (`None`); "" none; else the names given.
fn builtin_tools(text: &str) -> Option<Vec<String>> {
    match text.trim() {
        "default" => None,
        names => Some(list(names).map(str::to_owned).collect()),
    }
}

/// `--setting-sources`: user, project and local, comma separated (empty: none).
fn setting_sources(text: &str) -> Result<Vec<SettingsSource>> {
    list(text)
        .map(|name| match name {
            "user" => Ok(SettingsSource::User),
            "project" => Ok(SettingsSource::Project),
            "local" => Ok(SettingsSource::Local),
            other => Err(anyhow!(
                "--setting-sources: unknown source `{other}`: use user, project and/or local, \
                 comma separated (managed settings and --settings always apply)"
            )),
        })
        .collect()
}

/// `--max-budget-usd`: a positive number of dollars.
fn budget(usd: f64) -> Result<f64> {
    if usd.is_finite() && usd > 0.0 {
        Ok(usd)
    } else {
        bail!("--max-budget-usd {usd}: give a positive number of US dollars (like 0.50)")
    }
}

/// `--thinking` and `--max-thinking-tokens` as the thinking the session starts with.
fn thinking(mode: Option<ThinkingMode>, tokens: Option<u32>) -> Result<Option<ThinkingConfig>> {
    let enabled = |budget_tokens| Some(ThinkingConfig::Enabled { budget_tokens });
    Ok(match (mode, tokens) {
        (None, None) => None,
        (None, Some(0)) | (Some(ThinkingMode::Disabled), None | Some(0)) => {
            Some(ThinkingConfig::Disabled)
        }
        (None, Some(n)) => enabled(n),
        (Some(ThinkingMode::Enabled), None) => enabled(DEFAULT_THINKING_BUDGET),
        (Some(ThinkingMode::Adaptive), None) => Some(ThinkingConfig::Adaptive),
        (Some(ThinkingMode::Enabled), Some(n)) if n > 0 => enabled(n),
        (Some(mode), Some(n)) => bail!(
            "--thinking {} and --max-thinking-tokens {n} disagree (use --thinking enabled with \
             a budget above 0, or only one of them)",
            mode.name()
        ),
    })
}

/// `--betas`: each value's comma-separated flags, in order, once each.
fn betas(values: &[String]) -> Vec<String> {
    let mut betas: Vec<String> = Vec::new();
    for beta in values.iter().flat_map(|value| list(value)) {
        if !betas.iter().any(|b| b == beta) {
            betas.push(beta.to_owned());
        }
    }
    betas
}

/// `--permission-mode`'s value.
pub(crate) fn parse_mode(text: &str) -> Result<PermissionMode> {
    serde_json::from_value(Value::String(text.to_owned())).map_err(|_| {
        anyhow!(
            "unknown --permission-mode `{text}`: use default, acceptEdits, plan, \
             bypassPermissions or dontAsk"
        )
    })
}

/// Claude Code refuses bypassPermissions as root (a mistake there can break the machine)
/// unless `IS_SANDBOX=1` says the machine is a disposable sandbox.
fn check_bypass_allowed(root: bool, is_sandbox: Option<&str>, dangerous_flag: bool) -> Result<()> {
    if !root || is_sandbox == Some("1") {
        return Ok(());
    }
    let flag = if dangerous_flag {
        "--dangerously-skip-permissions"
    } else {
        "--permission-mode bypassPermissions"
    };
    bail!(
        "{flag} cannot be used with root/sudo privileges for security reasons; run as an \
         ordinary user, or set IS_SANDBOX=1 if this is a disposable sandbox (a container)"
    )
}

/// Whether bypassPermissions may be used here (not as root outside a sandbox).
pub(crate) fn bypass_allowed() -> bool {
    check_bypass_allowed(is_root(), std::env::var(IS_SANDBOX).ok().as_deref(), false).is_ok()
}

fn is_root() -> bool {
    nix::unistd::getuid().is_root()
}

fn read_prompt_file(flag: &str, path: &std::path::Path) -> Result<String> {
    std::fs::read_to_string(path)
        .with_context(|| format!("{flag} {}: cannot read it", path.display()))
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    fn flags(args: &[&str]) -> Result<SessionFlags> {
        let args = Args::try_parse_from(["tine", "-p", "x"].iter().chain(args)).unwrap();
        SessionFlags::from_args(&args, true)
    }

    #[test]
    fn the_sdks_list_flags_are_read_as_it_writes_them() {
        let read = flags(&[
            "--tools",
            "Read, Bash",
            "--setting-sources=",
            "--betas",
            "a,b",
            "--betas",
            "b,c",
        ])
        .unwrap();
        assert_eq!(read.builtin_tools, Some(vec!["Read".into(), "Bash".into()]));
        assert_eq!(read.setting_sources, Some(vec![]));
        assert_eq!(read.betas, ["a", "b", "c"]);
        assert_eq!(flags(&["--tools", "default"]).unwrap().builtin_tools, None);
        assert_eq!(flags(&["--tools", ""]).unwrap().builtin_tools, Some(vec![]));
        assert_eq!(
            flags(&["--setting-sources=user,local"])
                .unwrap()
                .setting_sources,
            Some(vec![SettingsSource::User, SettingsSource::Local])
        );
        assert!(flags(&["--setting-sources", "managed"]).is_err());
        assert!(flags(&["--max-budget-usd", "0"]).is_err());
        assert_eq!(
            flags(&["--max-budget-usd", "0.25"]).unwrap().max_budget_usd,
            Some(0.25)
        );
    }

    #[test]
    fn thinking_flags_combine_as_the_sdk_passes_them() {
        let enabled = |budget_tokens| Some(ThinkingConfig::Enabled { budget_tokens });
        let thinking = |args: &[&str]| flags(args).map(|f| f.thinking);
        assert_eq!(thinking(&[]).unwrap(), None);
        assert_eq!(
            thinking(&["--max-thinking-tokens", "8000"]).unwrap(),
            enabled(8000)
        );
        assert_eq!(
            thinking(&["--max-thinking-tokens", "0"]).unwrap(),
            Some(ThinkingConfig::Disabled)
        );
        assert_eq!(
            thinking(&["--thinking", "adaptive"]).unwrap(),
            Some(ThinkingConfig::Adaptive)
        );
        assert_eq!(
            thinking(&["--thinking", "disabled"]).unwrap(),
            Some(ThinkingConfig::Disabled)
        );
        assert_eq!(
            thinking(&["--thinking", "enabled"]).unwrap(),
            enabled(DEFAULT_THINKING_BUDGET)
        );
        assert_eq!(
            thinking(&["--thinking", "enabled", "--max-thinking-tokens", "3000"]).unwrap(),
            enabled(3000)
        );
        for bad in [
            ["--thinking", "adaptive", "--max-thinking-tokens", "3000"],
            ["--thinking", "enabled", "--max-thinking-tokens", "0"],
        ] {
            let error = thinking(&bad).unwrap_err().to_string();
            assert!(error.contains("--max-thinking-tokens"), "{error}");
        }
    }

    #[test]
    fn resuming_flags_need_a_resume_and_stdio_answers_over_the_protocol() {
        let error = flags(&["--resume-session-at", "u"])
            .unwrap_err()
            .to_string();
        assert!(error.contains("--resume-session-at needs"), "{error}");
        // A fork without a resume: the session is new anyway.
        assert!(!flags(&["--fork-session"]).unwrap().fork_session);
        let id = "123e4567-e89b-12d3-a456-426614174000";
        let forked = flags(&["-r", id, "--fork-session", "--resume-session-at", "u"]).unwrap();
        assert!(forked.fork_session);
        assert_eq!(forked.resume_session_at.as_deref(), Some("u"));
        let stdio = flags(&["--permission-prompt-tool", "stdio"]).unwrap();
        assert!(stdio.permission_prompt_stdio);
        assert_eq!(stdio.permission_prompt_tool, None);
        let mcp = flags(&["--permission-prompt-tool", "mcp__p__ask"]).unwrap();
        assert_eq!(mcp.permission_prompt_tool.as_deref(), Some("mcp__p__ask"));
        assert!(!mcp.permission_prompt_stdio);
        let error = flags(&["--agents", "{}"]).unwrap_err().to_string();
        assert!(
            error.starts_with("--agents: tine does not support"),
            "{error}"
        );
    }

    #[test]
    fn bypass_as_root_needs_is_sandbox() {
        assert!(check_bypass_allowed(false, None, true).is_ok());
        assert!(check_bypass_allowed(true, Some("1"), true).is_ok());
        let error = check_bypass_allowed(true, None, true)
            .unwrap_err()
            .to_string();
        assert!(error.contains("--dangerously-skip-permissions cannot be used with root"));
        let error = check_bypass_allowed(true, Some("0"), false)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("--permission-mode bypassPermissions"),
            "{error}"
        );
    }
}
