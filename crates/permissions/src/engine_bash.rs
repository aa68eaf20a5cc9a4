//! The decision for one Bash call: rules matched part by part, and the paths the line touches
//! judged as a Read or an Edit of them would be (`bash_paths`), so that read-only is never
//! enough to read outside the project.

use std::path::Path;

use crate::bash::{self, CommandAnalysis, SimpleCommand};
use crate::verdict::ToolVerdict;

use super::bash_paths::{PartPaths, line_paths};
use super::engine::read_rule_for;
use super::engine::{DecisionReason, PermissionDecision, PermissionQuery, deny, describe};
use super::matching::{bash_is_exact, bash_matches};
use super::resolve::ResolvedPath;
use super::suggest::bash_part_rule;
use super::{AlwaysAllow, PermissionContext, PermissionRule, RuleBehavior, SourcedRule};

/// Programs that run the rest of their arguments as a command: deny and ask rules also look
/// behind them (`env rm x`, `timeout 5 rm x`, `xargs rm`).
const WRAPPERS: &[&str] = &[
    "env", "command", "builtin", "exec", "time", "nice", "nohup", "timeout", "stdbuf", "xargs",
    "sudo", "doas", "watch", "strace", "ionice", "chroot", "setsid", "unbuffer",
];

/// A part that needs approval, and why.
struct Blocked {
    text: String,
    why: String,
    /// Blocked for where it reads, not for what it runs.
    by_path: bool,
}

impl PermissionContext {
    /// A Bash rule (tool-wide, or with content matching one of `texts`).
    fn bash_rule_matches(&self, sourced: &SourcedRule, tool: &str, texts: &[String]) -> bool {
        match &sourced.rule.content {
            None => sourced.rule.names_tool(tool),
            Some(content) => {
                sourced.rule.tool == tool && texts.iter().any(|t| bash_matches(content, t))
            }
        }
    }

    /// The first file rule of `behavior` (with a pattern: tool-wide Read rules are about the
    /// Read tool) matching a path the line reads, or a file it redirects output to.
    fn bash_path_rule(
        &self,
        behavior: RuleBehavior,
        analysis: &CommandAnalysis,
        paths: &[PartPaths],
    ) -> Option<(&SourcedRule, ResolvedPath)> {
        for (part, found) in analysis.parts().iter().zip(paths) {
            let (list, write) = if part.is_read_only() {
                (&found.reads, false)
            } else {
                (&found.redirect_writes, true)
            };
            let tool = if write { "Edit" } else { "Read" };
            for path in list {
                if let Some(rule) = self.of(behavior).find(|r| {
                    r.rule.content.is_some() && self.file_rule_matches(r, tool, path, write)
                }) {
                    return Some((rule, path.clone()));
                }
            }
        }
        None
    }

    pub(super) fn decide_bash(
        &self,
        request: &PermissionQuery<'_>,
        command: &str,
        shell_cwd: &Path,
    ) -> PermissionDecision {
        let tool = request.tool;
        let analysis = bash::analyze(command);
        let paths = line_paths(&analysis, shell_cwd, self.home.as_deref());
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
        if let Some((rule, path)) = self.bash_path_rule(RuleBehavior::Deny, &analysis, &paths) {
            return deny(
                format!(
                    "`{command}` touches {}, denied by the rule `{}` ({})",
                    describe(&path),
                    rule.rule,
                    rule.source
                ),
                Self::rule_reason(rule),
            );
        }
        if let ToolVerdict::Deny { reason } = request.verdict {
            return deny(reason.clone(), DecisionReason::Tool);
        }
        let mut suggestions = self.suggest_bash(tool, &analysis);
        if let Some(rule) = self
            .of(RuleBehavior::Ask)
            .find(|r| self.bash_rule_matches(r, tool, &texts))
        {
            return PermissionDecision::Ask {
                message: format!(
                    "the rule `{}` ({}) asks before `{command}`",
                    rule.rule, rule.source
                ),
                always: AlwaysAllow::saved(suggestions),
                reason: Self::rule_reason(rule),
            };
        }
        if let Some((rule, path)) = self.bash_path_rule(RuleBehavior::Ask, &analysis, &paths) {
            return PermissionDecision::Ask {
                message: format!(
                    "the rule `{}` ({}) asks before `{command}`, which touches {}",
                    rule.rule,
                    rule.source,
                    describe(&path)
                ),
                always: AlwaysAllow::saved(suggestions),
                reason: Self::rule_reason(rule),
            };
        }
        let protected_write = paths
            .iter()
            .flat_map(|p| &p.writes)
            .find_map(|path| self.protected(path).map(|dir| (path, dir)));
        if let Some((path, dir)) = protected_write {
            return PermissionDecision::Ask {
                message: format!("`{command}` may write {}, {dir}", describe(path)),
                always: None,
                reason: DecisionReason::ProtectedPath {
                    path: path.real.clone(),
                },
            };
        }
        let read_only = analysis.is_read_only();
        if let Some(decision) =
            self.tool_ask_plan_bypass(request, !read_only, AlwaysAllow::saved(suggestions.clone()))
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
        let tool_allows = matches!(request.verdict, ToolVerdict::Allow { .. });
        let mut first_rule = None;
        let mut blocked = Vec::new();
        if analysis.splittable && !analysis.parts().is_empty() {
            for (part, found) in analysis.parts().iter().zip(&paths) {
                if let Some(rule) = self.allow_rule_for_part(tool, part) {
                    first_rule.get_or_insert(rule);
                    continue;
                }
                if part.is_read_only() {
                    // Read-only is not enough outside the project: `cat ~/.ssh/id_rsa` only
                    // reads. Neither is the tool's own allow.
                    if let Some(why) = self.read_outside(found, &mut suggestions) {
                        blocked.push(Blocked {
                            text: part.text.clone(),
                            why,
                            by_path: true,
                        });
                    }
                    continue;
                }
                if !tool_allows {
                    blocked.push(Blocked {
                        text: part.text.clone(),
                        why: part.not_read_only.clone().unwrap_or_default(),
                        by_path: false,
                    });
                }
            }
        } else if !tool_allows {
            blocked.push(Blocked {
                text: command.trim().to_string(),
                why: analysis.not_read_only_reason().unwrap_or_default(),
                by_path: false,
            });
        }
        if blocked.is_empty() {
            return PermissionDecision::Allow {
                reason: match first_rule {
                    Some(rule) => Self::rule_reason(rule),
                    None if tool_allows && !read_only => DecisionReason::Tool,
                    None => DecisionReason::ReadOnly,
                },
            };
        }
        PermissionDecision::Ask {
            message: ask_message(command, &blocked, &analysis),
            always: AlwaysAllow::saved(suggestions),
            reason: DecisionReason::NoRule,
        }
    }

    /// Why a read-only part's reads need approval: a path outside the project's directories
    /// that no Read allow rule covers (its rule is suggested), or one only known at run time.
    fn read_outside(
        &self,
        found: &PartPaths,
        suggestions: &mut Vec<PermissionRule>,
    ) -> Option<String> {
        if let Some(why) = found.unknown.as_ref().or(found.follows_links.as_ref()) {
            return Some(why.clone());
        }
        let outside: Vec<&ResolvedPath> = found
            .reads
            .iter()
            .filter(|path| {
                !self.is_resolved_in_project(path)
                    && !self.of(RuleBehavior::Allow).any(|r| {
                        r.rule.content.is_some() && self.file_rule_matches(r, "Read", path, false)
                    })
            })
            .collect();
        let first = outside.first()?;
        for path in &outside {
            let rule = read_rule_for(&path.real);
            if !suggestions.contains(&rule) {
                suggestions.push(rule);
            }
        }
        Some(format!(
            "reads {}, outside the project's directories",
            describe(first)
        ))
    }

    /// The rules "don't ask again" adds for a line (`suggest`'s table): one per part that
    /// needs approval and no allow rule covers; none for a line that cannot be split.
    fn suggest_bash(&self, tool: &str, analysis: &CommandAnalysis) -> Vec<PermissionRule> {
        let mut out: Vec<PermissionRule> = Vec::new();
        if !analysis.splittable {
            return out;
        }
        for part in analysis.parts() {
            if part.is_read_only() || self.allow_rule_for_part(tool, part).is_some() {
                continue;
            }
            let rule = bash_part_rule(part);
            if !out.contains(&rule) {
                out.push(rule);
            }
        }
        out
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
}

fn ask_message(command: &str, blocked: &[Blocked], analysis: &CommandAnalysis) -> String {
    match blocked {
        [only] if only.by_path => format!("`{command}` {}", only.why),
        [only] if only.text == command.trim() => {
            let why = analysis
                .not_read_only_reason()
                .unwrap_or_else(|| only.why.clone());
            format!("`{command}` needs approval: {why}")
        }
        _ => format!(
            "`{command}` needs approval for: {}",
            blocked
                .iter()
                .map(|b| if b.by_path {
                    format!("`{}` ({})", b.text, b.why)
                } else {
                    format!("`{}`", b.text)
                })
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
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
