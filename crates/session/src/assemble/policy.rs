//! The second stage: what may run. The permission engine's context from the settings' rules
//! and modes (a deny or ask rule that cannot be understood refuses the start, as does a
//! malformed `hooks` section or app hooks value: fail closed), the flags' mode and rules,
//! `--add-dir`, the Bash sandbox, and bypassPermissions as settings allow it.

use std::path::PathBuf;
use std::str::FromStr;

use tine_config::settings::{self, LoadedSettings, SettingsError};
use tine_permissions::{
    PermissionContext, PermissionMode, PermissionRule, RuleBehavior, RuleSource,
};
use tine_query_loop::hooks::HookConfig;
use tine_tools::sandbox::BashSandbox;

use super::ground::Ground;
use crate::error::StartError;
use crate::options::SessionOptions;
use crate::protocol::Notice;

/// What may run, decided once.
pub(crate) struct Policy {
    pub context: PermissionContext,
    pub hooks: HookConfig,
    /// `None`: Bash runs unsandboxed.
    pub sandbox: Option<BashSandbox>,
    /// The settings file that disables bypassPermissions, if one does.
    pub bypass_disabled_by: Option<String>,
    /// The permission mode at start.
    pub mode: PermissionMode,
}

impl Policy {
    pub(crate) fn decide(
        options: &SessionOptions,
        ground: &Ground,
        notices: &mut Vec<Notice>,
    ) -> Result<Self, StartError> {
        let Ground {
            cwd,
            loaded,
            user_home,
            ..
        } = ground;
        // The permission engine parses the rules and modes settings hand over as text; what
        // it cannot understand is judged with the rest (a deny rule it cannot read stops the
        // run). Hooks likewise: one that cannot be run as written stops the session (it may be
        // a guard).
        let (mut context, mut rule_errors) =
            PermissionContext::from_settings(loaded, cwd.clone(), user_home.clone(), None);
        let (mut hooks, hook_errors) = HookConfig::from_settings(loaded);
        rule_errors.extend(hook_errors);
        // The plugins' hooks, each with its `CLAUDE_PLUGIN_ROOT` (checked when they loaded: a
        // plugin whose hooks cannot run was skipped whole, its warnings said then).
        for plugin in &ground.plugins.plugins {
            hooks.add_hooks(&plugin.parts.hooks, &plugin.parts.env);
        }
        check_settings(loaded, &rule_errors, notices)?;
        // An app's hooks run beside the settings' (both, as Claude Code runs both).
        let hooks = crate::hooks::with_app_hooks(hooks, options.hook_callbacks.as_ref(), notices)?;
        let flag_mode = options.permission_mode;
        if let Some(mode) = flag_mode {
            context.mode = mode;
        }
        let add_dirs: Vec<PathBuf> =
            crate::flags::add_directories(&mut context, &options.add_dirs, cwd)?;
        let outcome = crate::sandbox::decide(
            options.sandbox,
            options.sandbox_launcher.as_deref(),
            cwd,
            loaded,
            user_home.as_deref(),
            &add_dirs,
        )
        .map_err(StartError::Sandbox)?;
        notices.extend(outcome.warnings.into_iter().map(Notice::warning));
        add_rules(&mut context, &options.allowed_tools, RuleBehavior::Allow)?;
        add_rules(&mut context, &options.disallowed_tools, RuleBehavior::Deny)?;
        let bypass_disabled_by = loaded.bypass_disabled_by();
        if context.mode == PermissionMode::BypassPermissions
            && let Some(file) = &bypass_disabled_by
        {
            if flag_mode.is_some() {
                return Err(StartError::BypassDisabled { file: file.clone() });
            }
            notices.push(Notice::warning(format!(
                "defaultMode bypassPermissions is disabled by {file} \
                 (permissions.disableBypassPermissionsMode); using default"
            )));
            context.mode = PermissionMode::Default;
        }
        let mode = context.mode;
        Ok(Self {
            context,
            hooks,
            sandbox: outcome.sandbox,
            bypass_disabled_by,
            mode,
        })
    }
}

/// Fail closed: every settings warning is a notice, and start-up is refused when a file that
/// exists could not be read or parsed, `--settings` names one that cannot be read, or a deny
/// or ask rule could not be understood (`rule_errors`, the permission engine's): running
/// without it would allow what the user forbade.
fn check_settings(
    loaded: &LoadedSettings,
    rule_errors: &[SettingsError],
    notices: &mut Vec<Notice>,
) -> Result<(), StartError> {
    let problems = || loaded.errors.iter().chain(rule_errors);
    let warnings: Vec<String> = problems()
        .filter(|e| !e.is_fatal())
        .map(ToString::to_string)
        .collect();
    let errors: Vec<String> = problems()
        .filter(|e| e.is_fatal())
        .map(ToString::to_string)
        .collect();
    if errors.is_empty() {
        notices.extend(warnings.into_iter().map(Notice::warning));
        return Ok(());
    }
    Err(StartError::Settings {
        warnings,
        errors,
        refusal: settings::REFUSAL.to_owned(),
    })
}

/// `--allowedTools` / `--disallowedTools` as session rules.
fn add_rules(
    permissions: &mut PermissionContext,
    values: &[String],
    behavior: RuleBehavior,
) -> Result<(), StartError> {
    let flag = match behavior {
        RuleBehavior::Allow => "--allowedTools",
        RuleBehavior::Deny => "--disallowedTools",
        RuleBehavior::Ask => "--askTools",
    };
    for text in values {
        let rule = PermissionRule::from_str(text).map_err(|error| {
            StartError::Rule(format!("invalid rule `{text}` in {flag}: {error}"))
        })?;
        permissions.add_session_rule(rule, behavior, RuleSource::CliArg);
    }
    Ok(())
}
