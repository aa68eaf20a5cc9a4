//! The decision for one tool call.

use std::path::{Path, PathBuf};

use tine_config::{LoadedSettings, SettingsError};

use crate::verdict::{PermissionTarget, ToolVerdict};

use super::matching::{
    PathRoots, domain_matches, host_of, path_matches, protected_dir, protected_file,
    wildcard_matches,
};
use super::resolve::{ResolvedPath, resolve_path};
use super::{
    AlwaysAllow, PermissionMode, PermissionRule, PermissionSettings, PersistDestination,
    RuleBehavior, RuleSource, SourcedRule,
};

/// One call to judge.
#[derive(Debug, Clone, Copy)]
pub struct PermissionQuery<'a> {
    /// The tool's name as the model called it.
    pub tool: &'a str,
    /// What the call touches.
    pub target: &'a PermissionTarget,
    /// The tool's own `check_permissions` answer.
    pub verdict: &'a ToolVerdict,
    /// The tool's `is_read_only(input)`.
    pub is_read_only: bool,
}

/// What decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecisionReason {
    /// A rule (the first one that mattered, for a compound command).
    Rule {
        /// The rule.
        rule: PermissionRule,
        /// Whether it allows, asks or denies.
        behavior: RuleBehavior,
        /// Where it came from (a settings file, the command line, the session).
        source: RuleSource,
    },
    /// The tool's own check.
    Tool,
    /// The permission mode.
    Mode(PermissionMode),
    /// A read-only command or tool.
    ReadOnly,
    /// A read (or, in `acceptEdits`, an edit) inside the project's directories.
    WorkingDirectory,
    /// A write under `.git/` or `.tine/`, which always needs a person.
    ProtectedPath {
        /// The protected path.
        path: PathBuf,
    },
    /// Nothing allowed the call.
    NoRule,
}

/// The engine's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PermissionDecision {
    /// The call may run.
    Allow {
        /// What allowed it.
        reason: DecisionReason,
    },
    /// A person must approve the call first.
    Ask {
        /// What to show the person.
        message: String,
        /// What "yes, and don't ask again" would do; `None` when nothing should.
        always: Option<AlwaysAllow>,
        /// What asked.
        reason: DecisionReason,
    },
    /// The call may not run.
    Deny {
        /// What to tell the model.
        message: String,
        /// What denied it.
        reason: DecisionReason,
    },
}

impl PermissionDecision {
    /// Whether the call may run.
    pub fn is_allow(&self) -> bool {
        matches!(self, PermissionDecision::Allow { .. })
    }
    /// Whether the call needs a person.
    pub fn is_ask(&self) -> bool {
        matches!(self, PermissionDecision::Ask { .. })
    }
    /// Whether the call is denied.
    pub fn is_deny(&self) -> bool {
        matches!(self, PermissionDecision::Deny { .. })
    }
}

/// The session's permission state: mode, project directories, rules.
#[derive(Debug, Clone)]
pub struct PermissionContext {
    /// The permission mode.
    pub mode: PermissionMode,
    /// The working directory: the project, where `./x` rules start.
    pub cwd: PathBuf,
    /// More directories counted as the project (reads pass, `acceptEdits` edits pass).
    pub additional_directories: Vec<PathBuf>,
    /// The user's home, where `~/x` rules start.
    pub home: Option<PathBuf>,
    /// A checkout of tine's own the call works in (a sub-agent's worktree under
    /// `TINE_HOME/worktrees/`): the protected directories (`.git`, `.tine`, `.claude`) are
    /// looked for below it only, so the `.tine` of `~/.tine/worktrees/…` does not make every
    /// write there ask. `None` (the main thread): along the whole path.
    pub isolated_root: Option<PathBuf>,
    rules: Vec<SourcedRule>,
}

impl PermissionContext {
    /// A context in `mode` for a project at `cwd`, with no rules.
    pub fn new(mode: PermissionMode, cwd: impl Into<PathBuf>) -> Self {
        PermissionContext {
            mode,
            cwd: cwd.into(),
            additional_directories: Vec::new(),
            home: None,
            isolated_root: None,
            rules: Vec::new(),
        }
    }

    /// Build from loaded settings: their rules, `defaultMode` (unless `mode` overrides it, as a
    /// command-line flag does) and `additionalDirectories`. What could not be parsed comes back
    /// as errors ([`PermissionSettings::read`]): a fatal one means the session must not start.
    pub fn from_settings(
        settings: &LoadedSettings,
        cwd: impl Into<PathBuf>,
        home: Option<PathBuf>,
        mode: Option<PermissionMode>,
    ) -> (Self, Vec<SettingsError>) {
        let PermissionSettings {
            rules,
            default_mode,
            errors,
        } = PermissionSettings::read(settings);
        let mode = mode
            .or_else(|| default_mode.map(|(m, _)| m))
            .unwrap_or_default();
        let additional_directories = settings
            .additional_directories(home.as_deref())
            .into_iter()
            .map(|(p, _)| p)
            .collect();
        let context = PermissionContext {
            mode,
            cwd: cwd.into(),
            additional_directories,
            home,
            isolated_root: None,
            rules,
        };
        (context, errors)
    }

    /// With the user's home (for `~/` rules).
    pub fn with_home(mut self, home: impl Into<PathBuf>) -> Self {
        self.home = Some(home.into());
        self
    }

    /// Adds a rule.
    pub fn add_rule(&mut self, rule: SourcedRule) {
        if !self.rules.contains(&rule) {
            self.rules.push(rule);
        }
    }

    /// Add a rule from this session or the command line (paths relative to the cwd).
    pub fn add_session_rule(
        &mut self,
        rule: PermissionRule,
        behavior: RuleBehavior,
        source: RuleSource,
    ) {
        let base_dir = self.cwd.clone();
        self.add_rule(SourcedRule {
            rule,
            behavior,
            source,
            base_dir,
        });
    }

    /// The rules, in the order added.
    pub fn rules(&self) -> &[SourcedRule] {
        &self.rules
    }

    /// Whether a tool-wide deny rule removes `tool` from the pool (seed 003 §四, step 2).
    pub fn is_tool_denied(&self, tool: &str) -> bool {
        self.rules.iter().any(|r| {
            r.behavior == RuleBehavior::Deny && r.rule.content.is_none() && r.rule.names_tool(tool)
        })
    }

    /// The project's directories (cwd and additional directories), resolved.
    fn project_dirs(&self) -> Vec<PathBuf> {
        std::iter::once(&self.cwd)
            .chain(&self.additional_directories)
            .map(|dir| resolve_path(dir))
            .collect()
    }

    /// Whether `path` is inside the project (cwd or an additional directory), once links are
    /// followed: a link in the project to `~/.ssh` leads outside.
    pub fn is_in_project(&self, path: &Path) -> bool {
        self.is_resolved_in_project(&ResolvedPath::new(&self.cwd, path))
    }

    pub(super) fn is_resolved_in_project(&self, path: &ResolvedPath) -> bool {
        self.project_dirs()
            .iter()
            .any(|dir| path.real.starts_with(dir))
    }

    /// Decide one call.
    pub fn decide(&self, request: &PermissionQuery<'_>) -> PermissionDecision {
        let decision = match request.target {
            PermissionTarget::Bash { command, cwd } => self.decide_bash(request, command, cwd),
            _ => self.decide_simple(request),
        };
        match decision {
            PermissionDecision::Ask {
                message, reason, ..
            } if self.mode == PermissionMode::DontAsk => PermissionDecision::Deny {
                message: format!("{message} (dontAsk mode refuses what it would ask)"),
                reason,
            },
            other => other,
        }
    }

    pub(super) fn rule_reason(rule: &SourcedRule) -> DecisionReason {
        DecisionReason::Rule {
            rule: rule.rule.clone(),
            behavior: rule.behavior,
            source: rule.source,
        }
    }

    pub(super) fn of(&self, behavior: RuleBehavior) -> impl Iterator<Item = &SourcedRule> {
        self.rules.iter().filter(move |r| r.behavior == behavior)
    }

    /// Whether a file rule's pattern matches `path`. Deny and ask rules match the path as
    /// given or as resolved (a link must not dodge a deny); allow rules only the resolved path
    /// (a link must not borrow an allowed spelling), from resolved roots.
    fn path_rule_matches(&self, sourced: &SourcedRule, content: &str, path: &ResolvedPath) -> bool {
        let home = self.home.as_deref();
        let resolved_home = home.map(resolve_path);
        let resolved = PathRoots {
            cwd: &resolve_path(&self.cwd),
            base_dir: &resolve_path(&sourced.base_dir),
            home: resolved_home.as_deref(),
        };
        if path_matches(content, &resolved, &path.real) {
            return true;
        }
        sourced.behavior != RuleBehavior::Allow
            && path_matches(
                content,
                &PathRoots {
                    cwd: &self.cwd,
                    base_dir: &sourced.base_dir,
                    home,
                },
                &path.given,
            )
    }

    /// Whether a file rule matches a read (`write == false`) or a write of `path` by `tool`.
    pub(super) fn file_rule_matches(
        &self,
        sourced: &SourcedRule,
        tool: &str,
        path: &ResolvedPath,
        write: bool,
    ) -> bool {
        let rule = &sourced.rule;
        let Some(content) = &rule.content else {
            return rule.names_tool(tool);
        };
        let applies = if write {
            matches!(rule.tool.as_str(), "Edit" | "Write") || rule.tool == tool
        } else {
            // An edit permission implies a read permission, not the reverse; deny Edit
            // rules do not hide files from reading.
            rule.tool == "Read"
                || rule.tool == tool
                || (sourced.behavior == RuleBehavior::Allow
                    && matches!(rule.tool.as_str(), "Edit" | "Write"))
        };
        applies && self.path_rule_matches(sourced, content, path)
    }

    /// Whether a rule matches a non-Bash call.
    fn matches_simple(
        &self,
        sourced: &SourcedRule,
        tool: &str,
        target: &PermissionTarget,
        path: Option<&ResolvedPath>,
    ) -> bool {
        let rule = &sourced.rule;
        let Some(content) = &rule.content else {
            return rule.names_tool(tool);
        };
        match (target, path) {
            (PermissionTarget::FileRead { .. }, Some(path)) => {
                self.file_rule_matches(sourced, tool, path, false)
            }
            (PermissionTarget::FileWrite { .. }, Some(path)) => {
                self.file_rule_matches(sourced, tool, path, true)
            }
            (PermissionTarget::Url { url }, _) => rule.tool == tool && domain_matches(content, url),
            (
                PermissionTarget::Other {
                    content: Some(value),
                },
                _,
            ) => rule.tool == tool && (content == value || wildcard_matches(content, value)),
            _ => false,
        }
    }

    fn decide_simple(&self, request: &PermissionQuery<'_>) -> PermissionDecision {
        let (tool, target) = (request.tool, request.target);
        let path = match target {
            PermissionTarget::FileRead { path } | PermissionTarget::FileWrite { path } => {
                Some(ResolvedPath::new(&self.cwd, path))
            }
            _ => None,
        };
        let path = path.as_ref();
        let matches = |r: &&SourcedRule| self.matches_simple(r, tool, target, path);
        if let Some(rule) = self.of(RuleBehavior::Deny).find(matches) {
            return PermissionDecision::Deny {
                message: format!(
                    "{tool} is denied by the rule `{}` ({})",
                    rule.rule, rule.source
                ),
                reason: Self::rule_reason(rule),
            };
        }
        if let ToolVerdict::Deny { reason } = request.verdict {
            return deny(reason.clone(), DecisionReason::Tool);
        }
        let always = self.suggest_simple(tool, target, path);
        if let Some(rule) = self.of(RuleBehavior::Ask).find(matches) {
            return PermissionDecision::Ask {
                message: format!(
                    "the rule `{}` ({}) asks before {tool}",
                    rule.rule, rule.source
                ),
                always,
                reason: Self::rule_reason(rule),
            };
        }
        if let (PermissionTarget::FileWrite { .. }, Some(path)) = (target, path)
            && let Some(dir) = self.protected(path)
        {
            return PermissionDecision::Ask {
                message: format!("{tool} writes {}, {dir}", describe(path)),
                always: None,
                reason: DecisionReason::ProtectedPath {
                    path: path.real.clone(),
                },
            };
        }
        let writes = !request.is_read_only || matches!(target, PermissionTarget::FileWrite { .. });
        if let Some(decision) = self.tool_ask_plan_bypass(request, writes, always.clone()) {
            return decision;
        }
        if let Some(rule) = self.of(RuleBehavior::Allow).find(matches) {
            return PermissionDecision::Allow {
                reason: Self::rule_reason(rule),
            };
        }
        let inside = path.is_some_and(|p| self.is_resolved_in_project(p));
        let allowed_by = match target {
            PermissionTarget::FileRead { .. } if inside => Some(DecisionReason::WorkingDirectory),
            PermissionTarget::FileWrite { .. }
                if inside && self.mode == PermissionMode::AcceptEdits =>
            {
                Some(DecisionReason::WorkingDirectory)
            }
            // An MCP tool's readOnlyHint is only its server's word: it spares the call plan
            // mode's refusal, never the approval.
            PermissionTarget::Other { .. }
                if request.is_read_only && !request.tool.starts_with("mcp__") =>
            {
                Some(DecisionReason::ReadOnly)
            }
            // The tool's own allow never reaches a file outside the project.
            PermissionTarget::FileRead { .. } | PermissionTarget::FileWrite { .. } if !inside => {
                None
            }
            _ if matches!(request.verdict, ToolVerdict::Allow { .. }) => Some(DecisionReason::Tool),
            _ => None,
        };
        if let Some(reason) = allowed_by {
            return PermissionDecision::Allow { reason };
        }
        let message = match (target, path) {
            (PermissionTarget::FileRead { .. }, Some(path)) => {
                format!("{tool} reads {}, outside the project", describe(path))
            }
            (PermissionTarget::FileWrite { .. }, Some(path)) => {
                format!("{tool} writes {}", describe(path))
            }
            (PermissionTarget::Url { url }, _) => format!("{tool} fetches {url}"),
            _ => format!("{tool} needs approval"),
        };
        PermissionDecision::Ask {
            message,
            always,
            reason: DecisionReason::NoRule,
        }
    }

    /// Steps shared by every target after the protected-path check: the tool's own ask (which
    /// bypass overrides), plan refusing writes, bypass allowing. The tool's own allow comes
    /// later, after the checks of where the call reads.
    pub(super) fn tool_ask_plan_bypass(
        &self,
        request: &PermissionQuery<'_>,
        writes: bool,
        always: Option<AlwaysAllow>,
    ) -> Option<PermissionDecision> {
        if let ToolVerdict::Ask { reason } = request.verdict
            && self.mode != PermissionMode::BypassPermissions
        {
            return Some(PermissionDecision::Ask {
                message: reason.clone(),
                always,
                reason: DecisionReason::Tool,
            });
        }
        if self.mode == PermissionMode::Plan && writes {
            return Some(deny(
                format!(
                    "plan mode: {} would change something; finish the plan first",
                    request.tool
                ),
                DecisionReason::Mode(PermissionMode::Plan),
            ));
        }
        if self.mode == PermissionMode::BypassPermissions {
            return Some(PermissionDecision::Allow {
                reason: DecisionReason::Mode(PermissionMode::BypassPermissions),
            });
        }
        None
    }

    /// What "don't ask again" offers for a call that is not Bash (`suggest`'s module doc).
    fn suggest_simple(
        &self,
        tool: &str,
        target: &PermissionTarget,
        path: Option<&ResolvedPath>,
    ) -> Option<AlwaysAllow> {
        let rule = match (target, path) {
            // Allow rules match resolved paths, so the suggestion names the real place.
            (PermissionTarget::FileRead { .. }, Some(path)) => read_rule_for(&path.real),
            (PermissionTarget::FileWrite { .. }, Some(path)) => {
                if self.is_resolved_in_project(path) {
                    // acceptEdits would change nothing, or plan mode refuses the edit anyway.
                    return (!matches!(
                        self.mode,
                        PermissionMode::AcceptEdits | PermissionMode::Plan
                    ))
                    .then_some(AlwaysAllow::Mode(PermissionMode::AcceptEdits));
                }
                // acceptEdits stops at the project: this file, for this session.
                return Some(AlwaysAllow::Rules {
                    rules: vec![PermissionRule::with_content(
                        "Edit",
                        format!("/{}", path.real.display()),
                    )],
                    destination: PersistDestination::Session,
                });
            }
            (PermissionTarget::Url { url }, _) => match host_of(url) {
                Some(host) => PermissionRule::with_content(tool, format!("domain:{host}")),
                None => PermissionRule::tool(tool),
            },
            _ => PermissionRule::tool(tool),
        };
        AlwaysAllow::saved(vec![rule])
    }
}

/// `Read(//dir/**)` for the directory of `path` (or `path` itself when it is a directory).
pub(super) fn read_rule_for(path: &Path) -> PermissionRule {
    let dir = if path.is_dir() {
        path
    } else {
        path.parent().unwrap_or(path)
    };
    PermissionRule::with_content("Read", format!("/{}/**", dir.display()))
}

/// `path`, and where it really leads when a link takes it elsewhere.
pub(super) fn describe(path: &ResolvedPath) -> String {
    if path.real == path.given {
        path.given.display().to_string()
    } else {
        format!(
            "{} (a link to {})",
            path.given.display(),
            path.real.display()
        )
    }
}

impl PermissionContext {
    /// Where a write of `path` lands when it always asks, as given or as resolved: inside a
    /// protected directory (`.git`, `.tine`, `.claude`: "inside .git/"; below the
    /// [`PermissionContext::isolated_root`] only, when the path is in it) or a protected file
    /// (`.mcp.json`).
    pub(super) fn protected(&self, path: &ResolvedPath) -> Option<String> {
        path.both()
            .find_map(|p| protected_at(p, self.below_isolated_root(p)))
    }

    /// The part of `path` below the isolated root, or the whole of it.
    fn below_isolated_root<'p>(&self, path: &'p Path) -> &'p Path {
        let Some(root) = &self.isolated_root else {
            return path;
        };
        [root.clone(), resolve_path(root)]
            .iter()
            .find_map(|root| path.strip_prefix(root).ok())
            .unwrap_or(path)
    }
}

/// [`PermissionContext::protected`] for one spelling `path`, its directories looked for in
/// `dirs` (the path, or its part below the isolated root).
fn protected_at(path: &Path, dirs: &Path) -> Option<String> {
    protected_dir(dirs)
        .map(|dir| format!("inside {dir}/"))
        .or_else(|| {
            protected_file(path).map(|file| {
                format!("the project's MCP server list {file}, whose servers tine starts")
            })
        })
}

pub(super) fn deny(message: String, reason: DecisionReason) -> PermissionDecision {
    PermissionDecision::Deny { message, reason }
}
