//! The decision for one tool call.

use std::path::{Path, PathBuf};

use crate::bash::{self, CommandAnalysis, SimpleCommand};
use crate::settings::{LoadedSettings, SettingsError};
use crate::verdict::{PermissionTarget, ToolVerdict};

use super::matching::{
    PathRoots, bash_is_exact, bash_matches, domain_matches, host_of, normalize, path_matches,
    protected_component, wildcard_matches,
};
use super::{PermissionMode, PermissionRule, RuleBehavior, RuleSource, SourcedRule};

/// One call to judge.
#[derive(Debug, Clone, Copy)]
pub struct PermissionRequest<'a> {
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
        rule: PermissionRule,
        behavior: RuleBehavior,
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
    ProtectedPath { path: PathBuf },
    /// Nothing allowed the call.
    NoRule,
}

/// Read-only programs whose operands are files or directories: reading them outside the
/// project needs approval, as a Read there would.
const READS_PATH_ARGUMENTS: &[&str] = &[
    "cat",
    "head",
    "tail",
    "less",
    "more",
    "ls",
    "find",
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "wc",
    "stat",
    "file",
    "du",
    "tree",
    "cd",
    "diff",
    "cmp",
    "sort",
    "uniq",
    "cut",
    "nl",
    "od",
    "xxd",
    "hexdump",
    "strings",
    "md5sum",
    "sha1sum",
    "sha256sum",
    "readlink",
    "realpath",
    "jq",
    "tac",
    "column",
    "pushd",
];

/// The engine's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PermissionDecision {
    Allow {
        reason: DecisionReason,
    },
    Ask {
        message: String,
        /// Rules that "always allow" would add.
        suggestions: Vec<PermissionRule>,
        reason: DecisionReason,
    },
    Deny {
        message: String,
        reason: DecisionReason,
    },
}

impl PermissionDecision {
    pub fn is_allow(&self) -> bool {
        matches!(self, PermissionDecision::Allow { .. })
    }
    pub fn is_ask(&self) -> bool {
        matches!(self, PermissionDecision::Ask { .. })
    }
    pub fn is_deny(&self) -> bool {
        matches!(self, PermissionDecision::Deny { .. })
    }
}

/// The session's permission state: mode, project directories, rules.
#[derive(Debug, Clone)]
pub struct PermissionContext {
    pub mode: PermissionMode,
    /// The working directory: the project, where `./x` rules start.
    pub cwd: PathBuf,
    /// More directories counted as the project (reads pass, `acceptEdits` edits pass).
    pub additional_directories: Vec<PathBuf>,
    /// The user's home, where `~/x` rules start.
    pub home: Option<PathBuf>,
    rules: Vec<SourcedRule>,
}

/// Programs that run the rest of their arguments as a command: deny and ask rules also look
/// behind them (`env rm x`, `timeout 5 rm x`, `xargs rm`).
const WRAPPERS: &[&str] = &[
    "env", "command", "builtin", "exec", "time", "nice", "nohup", "timeout", "stdbuf", "xargs",
    "sudo", "doas", "watch", "strace", "ionice", "chroot", "setsid", "unbuffer",
];

impl PermissionContext {
    pub fn new(mode: PermissionMode, cwd: impl Into<PathBuf>) -> Self {
        PermissionContext {
            mode,
            cwd: cwd.into(),
            additional_directories: Vec::new(),
            home: None,
            rules: Vec::new(),
        }
    }

    /// Build from loaded settings: their rules, `defaultMode` (unless `mode` overrides it, as a
    /// command-line flag does) and `additionalDirectories`. Bad rules come back as errors.
    pub fn from_settings(
        settings: &LoadedSettings,
        cwd: impl Into<PathBuf>,
        home: Option<PathBuf>,
        mode: Option<PermissionMode>,
    ) -> (Self, Vec<SettingsError>) {
        let (rules, errors) = settings.permission_rules();
        let mode = mode
            .or_else(|| settings.default_mode().map(|(m, _)| m))
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
            rules,
        };
        (context, errors)
    }

    pub fn with_home(mut self, home: impl Into<PathBuf>) -> Self {
        self.home = Some(home.into());
        self
    }

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

    pub fn rules(&self) -> &[SourcedRule] {
        &self.rules
    }

    /// Whether a tool-wide deny rule removes `tool` from the pool (seed 003 §四, step 2).
    pub fn is_tool_denied(&self, tool: &str) -> bool {
        self.rules.iter().any(|r| {
            r.behavior == RuleBehavior::Deny && r.rule.content.is_none() && r.rule.names_tool(tool)
        })
    }

    /// Whether `path` is inside the project (cwd or an additional directory).
    pub fn is_in_project(&self, path: &Path) -> bool {
        let path = normalize(path);
        std::iter::once(&self.cwd)
            .chain(&self.additional_directories)
            .any(|dir| path.starts_with(normalize(dir)))
    }

    /// Decide one call.
    pub fn decide(&self, request: &PermissionRequest<'_>) -> PermissionDecision {
        let decision = match request.target {
            PermissionTarget::Bash { command } => self.decide_bash(request, command),
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

    fn rule_reason(rule: &SourcedRule) -> DecisionReason {
        DecisionReason::Rule {
            rule: rule.rule.clone(),
            behavior: rule.behavior,
            source: rule.source,
        }
    }

    fn of(&self, behavior: RuleBehavior) -> impl Iterator<Item = &SourcedRule> {
        self.rules.iter().filter(move |r| r.behavior == behavior)
    }

    fn roots<'a>(&'a self, rule: &'a SourcedRule) -> PathRoots<'a> {
        PathRoots {
            cwd: &self.cwd,
            base_dir: &rule.base_dir,
            home: self.home.as_deref(),
        }
    }

    /// Whether a rule matches a non-Bash call.
    fn matches_simple(&self, sourced: &SourcedRule, tool: &str, target: &PermissionTarget) -> bool {
        let rule = &sourced.rule;
        let Some(content) = &rule.content else {
            return rule.names_tool(tool);
        };
        match target {
            PermissionTarget::FileRead { path } => {
                // An edit permission implies a read permission, not the reverse; deny Edit
                // rules do not hide files from reading.
                let applies = rule.tool == "Read"
                    || rule.tool == tool
                    || (sourced.behavior == RuleBehavior::Allow
                        && matches!(rule.tool.as_str(), "Edit" | "Write"));
                applies && path_matches(content, &self.roots(sourced), path)
            }
            PermissionTarget::FileWrite { path } => {
                let applies = matches!(rule.tool.as_str(), "Edit" | "Write") || rule.tool == tool;
                applies && path_matches(content, &self.roots(sourced), path)
            }
            PermissionTarget::Url { url } => rule.tool == tool && domain_matches(content, url),
            PermissionTarget::Other {
                content: Some(value),
            } => rule.tool == tool && (content == value || wildcard_matches(content, value)),
            PermissionTarget::Other { content: None } | PermissionTarget::Bash { .. } => false,
        }
    }

    fn decide_simple(&self, request: &PermissionRequest<'_>) -> PermissionDecision {
        let (tool, target) = (request.tool, request.target);
        if let Some(rule) = self
            .of(RuleBehavior::Deny)
            .find(|r| self.matches_simple(r, tool, target))
        {
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
        let suggestions = self.suggest_simple(tool, target);
        if let Some(rule) = self
            .of(RuleBehavior::Ask)
            .find(|r| self.matches_simple(r, tool, target))
        {
            return PermissionDecision::Ask {
                message: format!(
                    "the rule `{}` ({}) asks before {tool}",
                    rule.rule, rule.source
                ),
                suggestions,
                reason: Self::rule_reason(rule),
            };
        }
        if let PermissionTarget::FileWrite { path } = target
            && protected_component(path)
        {
            return PermissionDecision::Ask {
                message: format!("{tool} writes {}, inside .git/ or .tine/", path.display()),
                suggestions: Vec::new(),
                reason: DecisionReason::ProtectedPath { path: path.clone() },
            };
        }
        let writes = !request.is_read_only || matches!(target, PermissionTarget::FileWrite { .. });
        if let Some(decision) = self.tool_ask_plan_bypass(request, writes, suggestions.clone()) {
            return decision;
        }
        if let Some(rule) = self
            .of(RuleBehavior::Allow)
            .find(|r| self.matches_simple(r, tool, target))
        {
            return PermissionDecision::Allow {
                reason: Self::rule_reason(rule),
            };
        }
        match target {
            PermissionTarget::FileRead { path } if self.is_in_project(path) => {
                return PermissionDecision::Allow {
                    reason: DecisionReason::WorkingDirectory,
                };
            }
            PermissionTarget::FileWrite { path }
                if self.mode == PermissionMode::AcceptEdits && self.is_in_project(path) =>
            {
                return PermissionDecision::Allow {
                    reason: DecisionReason::WorkingDirectory,
                };
            }
            PermissionTarget::Other { .. } if request.is_read_only => {
                return PermissionDecision::Allow {
                    reason: DecisionReason::ReadOnly,
                };
            }
            _ => {}
        }
        let message = match target {
            PermissionTarget::FileRead { path } => {
                format!("{tool} reads {}, outside the project", path.display())
            }
            PermissionTarget::FileWrite { path } => format!("{tool} writes {}", path.display()),
            PermissionTarget::Url { url } => format!("{tool} fetches {url}"),
            PermissionTarget::Other { .. } | PermissionTarget::Bash { .. } => {
                format!("{tool} needs approval")
            }
        };
        PermissionDecision::Ask {
            message,
            suggestions,
            reason: DecisionReason::NoRule,
        }
    }

    /// Steps shared by every target after the protected-path check: the tool's own ask (which
    /// bypass overrides), plan refusing writes, bypass allowing, the tool's own allow.
    fn tool_ask_plan_bypass(
        &self,
        request: &PermissionRequest<'_>,
        writes: bool,
        suggestions: Vec<PermissionRule>,
    ) -> Option<PermissionDecision> {
        if let ToolVerdict::Ask { reason } = request.verdict
            && self.mode != PermissionMode::BypassPermissions
        {
            return Some(PermissionDecision::Ask {
                message: reason.clone(),
                suggestions,
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
        if let ToolVerdict::Allow { .. } = request.verdict {
            return Some(PermissionDecision::Allow {
                reason: DecisionReason::Tool,
            });
        }
        None
    }

    fn suggest_simple(&self, tool: &str, target: &PermissionTarget) -> Vec<PermissionRule> {
        match target {
            PermissionTarget::FileRead { path } => {
                let dir = if path.is_dir() {
                    path.as_path()
                } else {
                    path.parent().unwrap_or(path)
                };
                vec![PermissionRule::with_content(
                    "Read",
                    format!("/{}/**", dir.display()),
                )]
            }
            PermissionTarget::FileWrite { path } => {
                vec![PermissionRule::with_content(
                    "Edit",
                    format!("/{}", path.display()),
                )]
            }
            PermissionTarget::Url { url } => match host_of(url) {
                Some(host) => vec![PermissionRule::with_content(tool, format!("domain:{host}"))],
                None => vec![PermissionRule::tool(tool)],
            },
            PermissionTarget::Other { .. } | PermissionTarget::Bash { .. } => {
                vec![PermissionRule::tool(tool)]
            }
        }
    }

    // ----- Bash

    /// A Bash rule (tool-wide, or with content matching one of `texts`).
    fn bash_rule_matches(&self, sourced: &SourcedRule, tool: &str, texts: &[String]) -> bool {
        match &sourced.rule.content {
            None => sourced.rule.names_tool(tool),
            Some(content) => {
                sourced.rule.tool == tool && texts.iter().any(|t| bash_matches(content, t))
            }
        }
    }

    fn decide_bash(&self, request: &PermissionRequest<'_>, command: &str) -> PermissionDecision {
        let tool = request.tool;
        let analysis = bash::analyze(command);
        // Texts deny and ask rules look at: the whole line, each part, each part without its
        // prefix assignments, and what wrappers run.
        let mut texts = vec![command.trim().to_string()];
        for part in analysis.parts() {
            texts.extend(match_texts(part));
        }
        if let Some(rule) = self
            .of(RuleBehavior::Deny)
            .find(|r| self.bash_rule_matches(r, tool, &texts))
        {
            return deny(
                format!(
                    "`{command}` is denied by the rule `{}` ({})",
                    rule.rule, rule.source
                ),
                Self::rule_reason(rule),
            );
        }
        if let ToolVerdict::Deny { reason } = request.verdict {
            return deny(reason.clone(), DecisionReason::Tool);
        }
        let suggestions = suggest_bash(&analysis);
        if let Some(rule) = self
            .of(RuleBehavior::Ask)
            .find(|r| self.bash_rule_matches(r, tool, &texts))
        {
            return PermissionDecision::Ask {
                message: format!(
                    "the rule `{}` ({}) asks before `{command}`",
                    rule.rule, rule.source
                ),
                suggestions,
                reason: Self::rule_reason(rule),
            };
        }
        if let Some(path) = self.bash_protected_write(&analysis) {
            return PermissionDecision::Ask {
                message: format!(
                    "`{command}` may write {}, inside .git/ or .tine/",
                    path.display()
                ),
                suggestions: Vec::new(),
                reason: DecisionReason::ProtectedPath { path },
            };
        }
        let read_only = analysis.is_read_only();
        if let Some(decision) = self.tool_ask_plan_bypass(request, !read_only, suggestions.clone())
        {
            return decision;
        }
        // An exact rule for the whole line is the user's approval of exactly that line.
        if let Some(rule) = self.of(RuleBehavior::Allow).find(|r| {
            r.rule.tool == tool
                && r.rule
                    .content
                    .as_deref()
                    .is_some_and(|c| bash_is_exact(c) && c.trim() == command.trim())
        }) {
            return PermissionDecision::Allow {
                reason: Self::rule_reason(rule),
            };
        }
        if let Some(rule) = self
            .of(RuleBehavior::Allow)
            .find(|r| r.rule.content.is_none() && r.rule.names_tool(tool))
        {
            return PermissionDecision::Allow {
                reason: Self::rule_reason(rule),
            };
        }
        if read_only {
            // Read-only is not enough outside the project: `cat ~/.ssh/id_rsa` only reads.
            if let Some(path) = self.bash_read_outside_project(&analysis) {
                return PermissionDecision::Ask {
                    message: format!(
                        "`{command}` reads {}, outside the project's directories",
                        path.display()
                    ),
                    suggestions,
                    reason: DecisionReason::NoRule,
                };
            }
            return PermissionDecision::Allow {
                reason: DecisionReason::ReadOnly,
            };
        }
        let mut first_rule = None;
        let mut blocked = Vec::new();
        if analysis.splittable && !analysis.parts().is_empty() {
            for part in analysis.parts() {
                if part.is_read_only() {
                    continue;
                }
                match self.allow_rule_for_part(tool, part) {
                    Some(rule) => {
                        first_rule.get_or_insert(rule);
                    }
                    None => blocked.push(part.text.clone()),
                }
            }
        } else {
            blocked.push(command.trim().to_string());
        }
        if blocked.is_empty() {
            return PermissionDecision::Allow {
                reason: first_rule.map_or(DecisionReason::ReadOnly, Self::rule_reason),
            };
        }
        let why = analysis.not_read_only_reason().unwrap_or_default();
        PermissionDecision::Ask {
            message: if blocked.len() == 1 && blocked[0] == command.trim() {
                format!("`{command}` needs approval: {why}")
            } else {
                format!(
                    "`{command}` needs approval for: {}",
                    blocked
                        .iter()
                        .map(|b| format!("`{b}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            },
            suggestions,
            reason: DecisionReason::NoRule,
        }
    }

    /// The allow rule covering one part. A part that writes a file through a redirection is
    /// covered only by an exact rule for its full source (`Bash(echo hi > notes.txt)`).
    fn allow_rule_for_part(&self, tool: &str, part: &SimpleCommand) -> Option<&SourcedRule> {
        self.of(RuleBehavior::Allow).find(|r| {
            if r.rule.tool != tool {
                return false;
            }
            let Some(content) = r.rule.content.as_deref() else {
                return false;
            };
            if part.writes_file() {
                return bash_is_exact(content) && content.trim() == part.source.trim();
            }
            bash_matches(content, &part.text)
        })
    }

    /// A path a file-reading command (or `cd`) would touch outside the project's directories:
    /// an absolute, `~` or `..` argument that resolves outside, or one only known at run time
    /// (`$HOME/x`), which may be anywhere.
    fn bash_read_outside_project(&self, analysis: &CommandAnalysis) -> Option<PathBuf> {
        for part in analysis.parts() {
            let Some(program) = part.program.as_deref() else {
                continue;
            };
            let program = program.rsplit('/').next().unwrap_or(program);
            if !READS_PATH_ARGUMENTS.contains(&program) {
                continue;
            }
            for arg in &part.args {
                let Some(text) = arg.literal.as_deref() else {
                    if arg.raw.contains('$') || arg.raw.starts_with('~') {
                        return Some(PathBuf::from(&arg.raw));
                    }
                    continue;
                };
                // `--file=/etc/x` carries its path after the `=`; other flags carry none.
                let candidate = match text.strip_prefix('-') {
                    Some(flag) => match flag.split_once('=') {
                        Some((_, value)) => value,
                        None => continue,
                    },
                    None => text,
                };
                let path = if candidate == "~" || candidate.starts_with("~/") {
                    let Some(home) = &self.home else {
                        return Some(PathBuf::from(candidate));
                    };
                    home.join(candidate.trim_start_matches('~').trim_start_matches('/'))
                } else if candidate.starts_with('/') || candidate.split('/').any(|c| c == "..") {
                    self.cwd.join(candidate)
                } else {
                    continue; // relative, below the cwd
                };
                if !self.is_in_project(&path) {
                    return Some(normalize(&path));
                }
            }
        }
        None
    }

    /// A literal argument or redirect target of a writing part under `.git/` or `.tine/`.
    fn bash_protected_write(&self, analysis: &CommandAnalysis) -> Option<PathBuf> {
        for part in analysis.parts().iter().filter(|p| !p.is_read_only()) {
            let targets = part.args.iter().filter_map(|a| a.literal.clone()).chain(
                part.redirections
                    .iter()
                    .filter(|r| r.writes_file)
                    .map(|r| r.target.clone()),
            );
            for target in targets {
                let path = Path::new(&target);
                let path = if path.is_absolute() {
                    path.to_path_buf()
                } else {
                    self.cwd.join(path)
                };
                if protected_component(&path) {
                    return Some(normalize(&path));
                }
            }
        }
        None
    }
}

fn deny(message: String, reason: DecisionReason) -> PermissionDecision {
    PermissionDecision::Deny { message, reason }
}

/// Texts a part can be matched as by deny and ask rules.
fn match_texts(part: &SimpleCommand) -> Vec<String> {
    let mut texts = vec![part.text.clone()];
    let Some(program) = &part.program else {
        return texts;
    };
    let words: Vec<&str> = std::iter::once(program.as_str())
        .chain(part.args.iter().map(|a| a.text()))
        .collect();
    texts.push(words.join(" "));
    let name = program.rsplit('/').next().unwrap_or(program);
    if part.program.as_deref() != Some(name) {
        texts.push(
            std::iter::once(name)
                .chain(words[1..].iter().copied())
                .collect::<Vec<_>>()
                .join(" "),
        );
    }
    if WRAPPERS.contains(&name) {
        for start in 1..words.len() {
            if !words[start].starts_with('-') && !words[start].contains('=') {
                texts.push(words[start..].join(" "));
            }
        }
    }
    texts
}

/// "Always allow" suggestions: `Bash(program subcommand:*)` for parts with a plain subcommand,
/// the exact part otherwise. Never a rule for a read-only part (it needs none).
fn suggest_bash(analysis: &CommandAnalysis) -> Vec<PermissionRule> {
    let mut out: Vec<PermissionRule> = Vec::new();
    if !analysis.splittable {
        out.push(PermissionRule::with_content(
            "Bash",
            analysis.command.trim(),
        ));
        return out;
    }
    for part in analysis.parts().iter().filter(|p| !p.is_read_only()) {
        let content = match (
            &part.program,
            part.args.first().and_then(|a| a.literal.as_deref()),
        ) {
            (Some(program), Some(sub))
                if part.assignments.is_empty()
                    && !part.writes_file()
                    && !sub.starts_with('-')
                    && sub.chars().all(|c| {
                        c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ':' | '.')
                    }) =>
            {
                format!("{program} {sub}:*")
            }
            _ if part.writes_file() => part.source.trim().to_string(),
            _ => part.text.clone(),
        };
        let rule = PermissionRule::with_content("Bash", content);
        if !out.contains(&rule) {
            out.push(rule);
        }
    }
    out
}
