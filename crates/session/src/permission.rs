//! The main thread's `can_use_tool`: every call asks the permission engine; what it cannot
//! decide goes to a person ([`Approvals::Interactive`]: a [`PermissionRequest`] event, the call
//! waiting for its [`crate::Op::Answer`] or the turn's interruption) or
//! becomes a denial telling the model how the user can allow it ([`Approvals::Headless`]).
//! Forks never come here: they run with their own sandbox, where an ask is a denial.

use std::sync::{Arc, Mutex, PoisonError, RwLock};

use serde_json::Value;
use tine_config::settings::SettingsPaths;
use tine_permissions::PermissionTarget;
use tine_permissions::{
    AlwaysAllow, AskResolution as EngineAnswer, DecisionReason, DenialLog, PermissionContext,
    PermissionDecision, PermissionMode, PermissionQuery as EngineRequest, PermissionRule,
    RuleBehavior, RuleSource,
};
use tine_query_loop::PermissionOutcome;
use tine_query_loop::hooks::{HookEvent, Hooks};
use tine_tools::{Tool, ToolContext};

use crate::emit::Emitter;
use crate::error::{AnswerError, ModeError};
use crate::options::Approvals;
use crate::protocol::{Notice, PermissionRequest, SessionEvent};
use crate::protocol::{PermissionAnswer, PermissionUpdate, QuestionId};
use crate::questions::OpenQuestions;

/// What the model reads when a person refused a call (Claude Code's wording, in substance).
const DECLINED: &str = "The user doesn't want to proceed with this tool use. The tool use was \
     rejected (eg. if it was a file edit, the new_string was NOT written to the file). STOP what \
     you are doing and wait for the user to tell you how to proceed.";

/// The session's permission state, shared by the loop's checker and the handle.
pub(crate) struct Permissions {
    context: RwLock<PermissionContext>,
    /// Where "always" answers are saved.
    paths: SettingsPaths,
    approvals: Approvals,
    /// The settings file that disables bypassPermissions, if one does.
    bypass_disabled_by: Option<String>,
    denials: Mutex<DenialLog>,
    pending: OpenQuestions<PermissionAnswer>,
    events: Emitter,
    /// The user's hooks: Notification runs when a person is asked.
    hooks: Option<Hooks>,
    /// Allow rules of the running turn only (a custom command's `allowed-tools`; a skill's
    /// are its agent's tool context's, [`crate::skill_tool::SkillGrants`]).
    turn_allow: Mutex<Vec<PermissionRule>>,
    /// `--permission-prompt-tool`: headless, the MCP tool that answers asks.
    prompt_tool: Option<Arc<dyn Tool>>,
    /// The running turn, for an app's refusal that interrupts it.
    running: std::sync::OnceLock<std::sync::Weak<dyn crate::stuck::RunningTurn>>,
}

impl Permissions {
    pub(crate) fn new(
        context: PermissionContext,
        paths: SettingsPaths,
        approvals: Approvals,
        bypass_disabled_by: Option<String>,
        events: Emitter,
    ) -> Self {
        Self {
            context: RwLock::new(context),
            paths,
            approvals,
            bypass_disabled_by,
            denials: Mutex::new(DenialLog::default()),
            pending: OpenQuestions::default(),
            events,
            hooks: None,
            turn_allow: Mutex::new(Vec::new()),
            prompt_tool: None,
            running: std::sync::OnceLock::new(),
        }
    }

    /// Headless asks go to `tool` (`--permission-prompt-tool`) instead of becoming denials.
    pub(crate) fn with_prompt_tool(mut self, tool: Option<Arc<dyn Tool>>) -> Self {
        self.prompt_tool = tool;
        self
    }

    /// Whether a person answers (then a stuck model is asked about too).
    pub(crate) fn is_interactive(&self) -> bool {
        self.approvals == Approvals::Interactive
    }

    /// Who answers asks.
    pub(crate) fn approvals(&self) -> Approvals {
        self.approvals
    }

    /// Allow rules for the running turn (empty: none); replaces the previous turn's.
    pub(crate) fn set_turn_allow(&self, rules: Vec<PermissionRule>) {
        *self
            .turn_allow
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = rules;
    }

    /// Runs the Notification hooks of `hooks` whenever a person is asked.
    pub(crate) fn with_hooks(mut self, hooks: Option<Hooks>) -> Self {
        self.hooks = hooks.filter(|h| h.has(HookEvent::Notification));
        self
    }

    /// Whether a deny rule removes tool `name` from the tool array altogether.
    pub(crate) fn is_tool_denied(&self, name: &str) -> bool {
        self.read().is_tool_denied(name)
    }

    pub(crate) fn mode(&self) -> PermissionMode {
        self.read().mode
    }

    pub(crate) fn set_mode(&self, mode: PermissionMode) -> Result<(), ModeError> {
        if mode == PermissionMode::BypassPermissions
            && let Some(file) = &self.bypass_disabled_by
        {
            return Err(ModeError::BypassDisabled { file: file.clone() });
        }
        self.context
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .mode = mode;
        Ok(())
    }

    /// [`Permissions::set_mode`], told to the front end (a plan approved mid-turn).
    pub(crate) fn set_mode_announced(&self, mode: PermissionMode) -> Result<(), ModeError> {
        self.set_mode(mode)?;
        let _ = self.events.emit(SessionEvent::PermissionModeChanged(mode));
        Ok(())
    }

    /// Hands `answer` to the call waiting for it.
    pub(crate) fn answer(
        &self,
        id: QuestionId,
        answer: PermissionAnswer,
    ) -> Result<(), AnswerError> {
        self.pending.answer(id, answer)
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, PermissionContext> {
        self.context.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// The engine's decision for one call.
    pub(crate) fn decide(
        &self,
        tool: &dyn Tool,
        input: &Value,
        ctx: &ToolContext,
    ) -> (String, PermissionDecision) {
        let target = tool.permission_target(input, ctx);
        let verdict = tool.check_permissions(input, ctx);
        let request = EngineRequest {
            tool: tool.name(),
            target: &target,
            verdict: &verdict,
            is_read_only: tool.is_read_only(input),
        };
        let mut turn_allow = self
            .turn_allow
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        // The skills this agent loaded (never another agent's: see SkillGrants).
        if let Some(grants) = ctx.ext::<crate::skill_tool::SkillGrants>() {
            turn_allow.extend(grants.rules());
        }
        let worktree = crate::agents::worktree_of(ctx);
        let decision = if turn_allow.is_empty() && worktree.is_none() {
            self.read().decide(&request)
        } else {
            let mut context = self.read().clone();
            if let Some(worktree) = worktree {
                crate::agents::judge_in_worktree(&mut context, &worktree);
            }
            // A command's or a skill's `allowed-tools`: allow rules for its turn only (deny
            // rules still win).
            for rule in turn_allow {
                context.add_session_rule(rule, RuleBehavior::Allow, RuleSource::Session);
            }
            context.decide(&request)
        };
        (describe_target(&target), decision)
    }

    /// The outcome of one call, asking a person when the session has one.
    pub(crate) async fn outcome(
        &self,
        tool: &dyn Tool,
        input: &Value,
        ctx: &ToolContext,
    ) -> PermissionOutcome {
        let (target, decision) = self.decide(tool, input, ctx);
        match decision {
            PermissionDecision::Allow { .. } => PermissionOutcome::Allow {
                updated_input: None,
            },
            PermissionDecision::Deny { message, .. } => PermissionOutcome::Deny { reason: message },
            PermissionDecision::Ask {
                message, always, ..
            } => match (self.approvals, &self.prompt_tool) {
                (Approvals::Headless, Some(prompt_tool)) => {
                    crate::prompt_tool::ask(prompt_tool.as_ref(), tool, input, ctx).await
                }
                (Approvals::Headless, None) => headless_denial(tool, &message, always.as_ref()),
                (Approvals::Interactive | Approvals::App, _) => {
                    self.ask(tool, input, target, message, always, ctx).await
                }
            },
        }
    }

    /// The outcome of a call a PreToolUse hook allowed: what would only have asked a person
    /// runs; a deny rule still denies, and an ask rule or a protected path (`.git/`, `.tine/`,
    /// `.claude/`) still needs a person (Claude Code: "allow skips the prompt, not deny or ask
    /// rules").
    pub(crate) async fn hook_allowed_outcome(
        &self,
        tool: &dyn Tool,
        input: &Value,
        ctx: &ToolContext,
    ) -> PermissionOutcome {
        let (_, decision) = self.decide(tool, input, ctx);
        let keeps_asking = match &decision {
            PermissionDecision::Ask { reason, .. } => match reason {
                DecisionReason::Rule { .. } | DecisionReason::ProtectedPath { .. } => true,
                DecisionReason::Tool
                | DecisionReason::Mode(_)
                | DecisionReason::ReadOnly
                | DecisionReason::WorkingDirectory
                | DecisionReason::NoRule => false,
            },
            PermissionDecision::Allow { .. } | PermissionDecision::Deny { .. } => true,
        };
        if keeps_asking {
            self.outcome(tool, input, ctx).await
        } else {
            PermissionOutcome::Allow {
                updated_input: None,
            }
        }
    }

    /// The outcome of a call a PreToolUse hook wants a person to see: denied by a deny rule,
    /// else asked (headless: denied, saying how to allow it), whatever the rules allow.
    pub(crate) async fn hook_ask_outcome(
        &self,
        tool: &dyn Tool,
        input: &Value,
        ctx: &ToolContext,
        reason: &str,
    ) -> PermissionOutcome {
        let (target, decision) = self.decide(tool, input, ctx);
        let always = match decision {
            PermissionDecision::Deny { message, .. } => {
                return PermissionOutcome::Deny { reason: message };
            }
            PermissionDecision::Ask { always, .. } => always,
            PermissionDecision::Allow { .. } => None,
        };
        if self.approvals == Approvals::Headless
            && let Some(prompt_tool) = &self.prompt_tool
        {
            return crate::prompt_tool::ask(prompt_tool.as_ref(), tool, input, ctx).await;
        }
        match self.approvals {
            // No rule can stand in for the person the hook wants.
            Approvals::Headless => PermissionOutcome::Deny {
                reason: format!(
                    "{reason}. A PreToolUse hook asks for a person's approval of this call, \
                     which cannot be given in non-interactive mode (-p)."
                ),
            },
            Approvals::Interactive | Approvals::App => {
                self.ask(tool, input, target, reason.to_owned(), always, ctx)
                    .await
            }
        }
    }

    /// Sends the request and waits for its answer, or for the turn to be interrupted.
    async fn ask(
        &self,
        tool: &dyn Tool,
        input: &Value,
        target: String,
        reason: String,
        always: Option<AlwaysAllow>,
        ctx: &ToolContext,
    ) -> PermissionOutcome {
        match self
            .ask_answer(tool, input, target, &reason, always.clone(), ctx)
            .await
        {
            Ok(answer) => self.apply(tool, input, answer, always),
            Err(denied) => denied,
        }
    }

    /// Sends a request offering `always` as option 2, and waits for the answer; an
    /// interrupted turn withdraws it (`Err`: the denial the model reads).
    pub(crate) async fn ask_answer(
        &self,
        tool: &dyn Tool,
        input: &Value,
        target: String,
        reason: &str,
        always: Option<AlwaysAllow>,
        ctx: &ToolContext,
    ) -> Result<PermissionAnswer, PermissionOutcome> {
        let id = self.events.next_question();
        let target_path = target.clone();
        let rx = self.pending.open(id);
        let tool_use_id = ctx
            .ext::<tine_query_loop::CheckedCall>()
            .map(|call| call.tool_use_id.clone());
        let _ = self
            .events
            .emit(SessionEvent::PermissionRequest(PermissionRequest {
                id,
                tool: tool.name().to_owned(),
                input: input.clone(),
                target,
                reason: reason.to_owned(),
                always,
                preview: crate::preview::of_call(tool.name(), input, &target_path),
                tool_use_id,
            }));
        if let Some(hooks) = &self.hooks {
            // The question is on the screen already; a slow hook must not hold it up.
            let hooks = hooks.clone();
            let message = format!("tine needs your permission to use {}", tool.name());
            tokio::spawn(async move { hooks.notification(&message, "permission_prompt").await });
        }
        let answer = tokio::select! {
            answer = rx => answer.ok(),
            // The turn's token: an interruption withdraws the question.
            _ = ctx.cancellation().cancelled() => None,
        };
        let Some(answer) = answer else {
            self.pending.close(id);
            let _ = self
                .events
                .emit(SessionEvent::PermissionWithdrawn { question: id });
            return Err(PermissionOutcome::Deny {
                reason: format!("{reason}; the turn was interrupted before the user answered"),
            });
        };
        Ok(answer)
    }

    /// Applies `answer` to the permission state and the denial log; the call's outcome.
    /// `Always` does what the request offered: adds its rules (saved where it said), or
    /// switches the session's mode (told to the front end; nothing saved).
    fn apply(
        &self,
        tool: &dyn Tool,
        input: &Value,
        answer: PermissionAnswer,
        always: Option<AlwaysAllow>,
    ) -> PermissionOutcome {
        let (engine_answer, updated_input) = match (&answer, always) {
            (PermissionAnswer::Once, _) | (PermissionAnswer::Always, None) => {
                (EngineAnswer::ApproveOnce, None)
            }
            (PermissionAnswer::Always, Some(AlwaysAllow::Rules { rules, destination })) => {
                (EngineAnswer::AlwaysAllow { rules, destination }, None)
            }
            (PermissionAnswer::Always, Some(AlwaysAllow::Mode(mode))) => {
                self.set_mode_warning(mode);
                (EngineAnswer::ApproveOnce, None)
            }
            (PermissionAnswer::Deny { feedback }, _) => (
                EngineAnswer::Reject {
                    feedback: feedback.clone(),
                },
                None,
            ),
            (
                PermissionAnswer::Allow {
                    updated_input,
                    updates,
                },
                _,
            ) => {
                self.update(updates);
                (EngineAnswer::ApproveOnce, updated_input.clone())
            }
            (PermissionAnswer::Refuse { message, interrupt }, _) => {
                if *interrupt
                    && let Some(turn) = self.running.get().and_then(|w| w.upgrade())
                    && let Some(token) = turn.running_token()
                {
                    token.cancel();
                }
                (
                    EngineAnswer::Reject {
                        feedback: Some(message.clone()),
                    },
                    None,
                )
            }
        };
        let applied = {
            let mut context = self.context.write().unwrap_or_else(PoisonError::into_inner);
            let mut denials = self.denials.lock().unwrap_or_else(PoisonError::into_inner);
            context.apply_answer(
                &engine_answer,
                tool.name(),
                input,
                &self.paths,
                &mut denials,
            )
        };
        let proceeds = match applied {
            Ok(proceeds) => proceeds,
            Err(error) => {
                // The rule holds for this session; only saving it failed.
                self.unsaved(&error);
                engine_answer.proceeds()
            }
        };
        if proceeds {
            return PermissionOutcome::Allow { updated_input };
        }
        let reason = match answer {
            PermissionAnswer::Deny {
                feedback: Some(feedback),
            } if !feedback.trim().is_empty() => {
                format!("{DECLINED} The user said: {}", feedback.trim())
            }
            // An app's words, as Claude Code passes them.
            PermissionAnswer::Refuse { message, .. } => message,
            PermissionAnswer::Deny { .. }
            | PermissionAnswer::Once
            | PermissionAnswer::Always
            | PermissionAnswer::Allow { .. } => DECLINED.to_owned(),
        };
        PermissionOutcome::Deny { reason }
    }

    /// An app's permission changes: rules added (saved where they say), the mode.
    fn update(&self, updates: &[PermissionUpdate]) {
        for update in updates {
            match update {
                PermissionUpdate::AddRules {
                    rules,
                    behavior,
                    destination,
                } => {
                    let saved = self
                        .context
                        .write()
                        .unwrap_or_else(PoisonError::into_inner)
                        .remember_rules(rules, *behavior, *destination, &self.paths);
                    if let Err(error) = saved {
                        self.unsaved(&error);
                    }
                }
                PermissionUpdate::SetMode(mode) => self.set_mode_warning(*mode),
            }
        }
    }

    /// [`Permissions::set_mode_announced`]; a refusal (bypass disabled) becomes a warning.
    fn set_mode_warning(&self, mode: PermissionMode) {
        if let Err(error) = self.set_mode_announced(mode) {
            let _ = self
                .events
                .emit(SessionEvent::Notice(Notice::warning(error.to_string())));
        }
    }

    fn unsaved(&self, error: &dyn std::fmt::Display) {
        let _ = self
            .events
            .emit(SessionEvent::Notice(Notice::warning(format!(
                "the rule applies to this session but could not be saved: {error}"
            ))));
    }

    /// Where an app's refusal with `interrupt` finds the running turn (set once the session's
    /// shared state exists).
    pub(crate) fn set_running(&self, running: std::sync::Weak<dyn crate::stuck::RunningTurn>) {
        let _ = self.running.set(running);
    }
}

/// What a call touches, as people read it.
fn describe_target(target: &PermissionTarget) -> String {
    match target {
        PermissionTarget::Bash { command, .. } => command.clone(),
        PermissionTarget::FileRead { path } | PermissionTarget::FileWrite { path } => {
            path.display().to_string()
        }
        PermissionTarget::Url { url } => url.clone(),
        PermissionTarget::Other { content } => content.clone().unwrap_or_default(),
    }
}

/// A call that would need approval nobody can give: denied, saying how the user can allow it.
fn headless_denial(
    tool: &dyn Tool,
    message: &str,
    always: Option<&AlwaysAllow>,
) -> PermissionOutcome {
    let rule = always
        .and_then(|a| a.rules().first())
        .map(ToString::to_string)
        .unwrap_or_else(|| tool.name().to_owned());
    PermissionOutcome::Deny {
        reason: format!(
            "{message}. This call needs approval, which cannot be given in non-interactive \
             mode (-p). The user can allow it by running tine with --allowedTools \"{rule}\" \
             (or --permission-mode acceptEdits for file edits), or by adding the rule to \
             permissions.allow in settings."
        ),
    }
}

#[cfg(test)]
#[path = "permission_tests.rs"]
mod tests;
