//! The command-line flags that shape a session, Claude Code's: read once (files read, JSON
//! parsed, the mode checked) into [`SessionFlags`], which both front ends hand to the session.
//! `--fallback-model`, `--json-schema`, `--include-partial-messages` and
//! `--permission-prompt-tool` are `-p` flags, as in Claude Code: the UI has a person.

use std::path::PathBuf;

use anyhow::{Context, Result, anyhow, bail};
use serde_json::Value;
use tine_config::SessionId;
use tine_permissions::PermissionMode;
use tine_session::SessionOptions;

use crate::args::{Args, OutputFormat};

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
    pub permission_prompt_tool: Option<String>,
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
        let session_id = args
            .session_id
            .as_deref()
            .map(SessionId::parse)
            .transpose()
            .map_err(|e| anyhow!(e))?;
        let mut flags = Self {
            permission_mode,
            system_prompt,
            append_system_prompt,
            add_dirs: args.add_dir.clone(),
            session_id,
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
            flags.include_partial_messages =
                args.include_partial_messages && args.output_format == OutputFormat::StreamJson;
            flags.permission_prompt_tool = args.permission_prompt_tool.clone();
            if let Some(tool) = &flags.permission_prompt_tool
                && !tool.starts_with("mcp__")
            {
                bail!(
                    "--permission-prompt-tool {tool}: name an MCP tool as mcp__SERVER__TOOL \
                     (its server configured with --mcp-config or .mcp.json)"
                );
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
        options.permission_prompt_tool = self.permission_prompt_tool.clone();
    }
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

fn is_root() -> bool {
    nix::unistd::getuid().is_root()
}

fn read_prompt_file(flag: &str, path: &std::path::Path) -> Result<String> {
    std::fs::read_to_string(path)
        .with_context(|| format!("{flag} {}: cannot read it", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

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
