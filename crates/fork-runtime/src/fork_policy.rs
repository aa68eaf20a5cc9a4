//! [`ForkPolicy`], the one `can_use_tool` of the forks that run with no one to ask: memory
//! extraction and dreams, Magic Docs, speculation, the read-only agents (Explore, Plan) and a
//! compaction summary. Its caller says what the fork may do, and each call is judged in this
//! order:
//!
//! 1. the tool: only those listed ([`ForkPolicy::only_tools`]; none for [`ForkPolicy::no_tools`]);
//! 2. a Write or Edit ([`FILE_WRITE_TOOLS`]) of a fork that may write lands only where its
//!    [`WritablePaths`] say, on the path the permission engine's resolver gives
//!    ([`resolve_write_path`]); a write to a place the fork owns is allowed there
//!    ([`ForkPolicy::owns_writes`]), any other goes on to the judge ([`ForkPolicy::may_write`]);
//! 3. any other call of a read-only fork ([`ForkPolicy::read_only`]) must be read-only as the
//!    tool itself says (a Bash line that writes, a background shell, are not);
//! 4. the judge: the permission engine in a [`ForkScope`] (the session's project or the
//!    session itself, the extra roots the fork may read, the mode it judges in), where an ask is
//!    a denial because a fork cannot ask; or another checker (the session's, for a sub-agent).
//!
//! Every refusal is worded by the caller's [`Refusals`]: the model reads it as the call's
//! result, so it says what the fork may do instead. The tool array itself is never filtered (it
//! is part of the prompt-cache key): a forbidden tool stays listed and is refused here.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::Value;
use tine_api_client::{ContentBlock, Message, MessageContent, ToolUseBlock};
use tine_permissions::{
    PermissionContext, PermissionDecision, PermissionMode, PermissionQuery, RuleBehavior,
    normalize, resolve_path,
};
use tine_query_loop::{CanUseTool, EndAfterTools, PermissionOutcome};
use tine_tools::{Tool, ToolContext};

/// The tools that write a file named by their `file_path`.
pub const FILE_WRITE_TOOLS: [&str; 2] = ["Write", "Edit"];

/// How a policy's refusals read. The model reads each as the call's result.
pub trait Refusals: Send + Sync {
    /// `tool` is not one the fork may call.
    fn tool_not_allowed(&self, tool: &dyn Tool, input: &Value) -> String;

    /// The call would change something and the fork is read-only (by default worded as a tool
    /// the fork may not call).
    fn not_read_only(&self, tool: &dyn Tool, input: &Value) -> String {
        self.tool_not_allowed(tool, input)
    }

    /// A write of `file_path` lands where the fork may not write (`why`).
    fn write_refused(&self, tool: &dyn Tool, _file_path: &str, why: &str) -> String {
        format!("{} refused: {why}", tool.name())
    }

    /// The permission engine denied the call, or would have asked (`message`), judging it in
    /// `context`.
    fn judged(&self, tool: &dyn Tool, message: &str, _context: &PermissionContext) -> String {
        format!("{} refused: {message}", tool.name())
    }
}

/// Where a fork's Write and Edit calls may land.
pub trait WritablePaths: Send + Sync {
    /// Where a write of `file_path` (resolved against `cwd` as the tools resolve it) lands,
    /// or why the fork may not write there.
    fn check(&self, file_path: &str, cwd: &Path) -> Result<PathBuf, String>;
}

/// The path a Write or Edit of `file_path` really opens: taken against `cwd` with `..`
/// resolved lexically (as `ToolContext::resolve_path` does), then through links by the
/// permission engine's resolver. An empty path or one with control characters is refused.
pub fn resolve_write_path(file_path: &str, cwd: &Path) -> Result<PathBuf, String> {
    if file_path.is_empty() {
        return Err("the file_path is empty".to_owned());
    }
    if file_path.chars().any(char::is_control) {
        return Err("the file_path contains control characters (a NUL byte?)".to_owned());
    }
    Ok(resolve_path(&normalize(&cwd.join(file_path))))
}

/// Exactly these files, and no other.
#[derive(Debug, Clone)]
pub struct WritableFiles {
    /// Resolved by the engine's resolver.
    files: Vec<PathBuf>,
}

impl WritableFiles {
    /// These files (each resolved).
    pub fn new(files: &[PathBuf]) -> Self {
        Self {
            files: files.iter().map(|f| resolve_path(f)).collect(),
        }
    }

    /// The files, resolved.
    pub fn files(&self) -> &[PathBuf] {
        &self.files
    }
}

impl WritablePaths for WritableFiles {
    fn check(&self, file_path: &str, cwd: &Path) -> Result<PathBuf, String> {
        let resolved = resolve_write_path(file_path, cwd)?;
        self.files
            .iter()
            .find(|f| **f == resolved)
            .cloned()
            .ok_or_else(|| format!("`{file_path}` is not one of the files this fork may write"))
    }
}

/// Where the permission engine judges a fork's calls: a copy of the session's permissions,
/// narrowed to what the fork needs.
#[derive(Debug, Clone)]
pub struct ForkScope {
    context: PermissionContext,
    /// Judge against the fork's own working directory at each call (no project known).
    follow_cwd: bool,
}

impl ForkScope {
    /// The session's permissions as they are: its mode, directories, home and every rule,
    /// allow rules included.
    pub fn session(permissions: &PermissionContext) -> Self {
        Self {
            context: permissions.clone(),
            follow_cwd: false,
        }
    }

    /// The session's project (its directories and home) under its deny and ask rules, in
    /// `default` mode. Allow rules are not carried: a fork does what it is set up for, not what
    /// the person let the main thread do.
    pub fn project(permissions: &PermissionContext) -> Self {
        let mut context = PermissionContext::new(PermissionMode::Default, permissions.cwd.clone());
        context.additional_directories = permissions.additional_directories.clone();
        context.home = permissions.home.clone();
        for rule in permissions.rules() {
            if rule.behavior != RuleBehavior::Allow {
                context.add_rule(rule.clone());
            }
        }
        Self {
            context,
            follow_cwd: false,
        }
    }

    /// No session known: the fork's working directory at each call, no rules, no home, in
    /// `default` mode.
    pub fn working_directory() -> Self {
        Self {
            context: PermissionContext::new(PermissionMode::Default, PathBuf::new()),
            follow_cwd: true,
        }
    }

    /// Judged in `mode` instead.
    pub fn in_mode(mut self, mode: PermissionMode) -> Self {
        self.context.mode = mode;
        self
    }

    /// Where `~` leads (unknown: a `~` path asks, so it is refused).
    pub fn with_home(mut self, home: Option<PathBuf>) -> Self {
        self.context.home = home;
        self
    }

    /// `dir` counts as one of the project's directories: the fork may read there (and, in
    /// `acceptEdits`, edit).
    pub fn with_root(mut self, dir: PathBuf) -> Self {
        self.context.additional_directories.push(dir);
        self
    }

    /// The engine's context for a call made in `ctx`.
    pub fn context_for(&self, ctx: &ToolContext) -> PermissionContext {
        let mut context = self.context.clone();
        if self.follow_cwd {
            context.cwd = ctx.cwd();
        }
        context
    }
}

/// The permission engine's decision on one call, asked as every checker asks it: the tool's
/// target and its own verdict, and whether the call is read-only.
pub fn engine_decision(
    context: &PermissionContext,
    tool: &dyn Tool,
    input: &Value,
    ctx: &ToolContext,
) -> PermissionDecision {
    let target = tool.permission_target(input, ctx);
    let verdict = tool.check_permissions(input, ctx);
    context.decide(&PermissionQuery {
        tool: tool.name(),
        target: &target,
        verdict: &verdict,
        is_read_only: tool.is_read_only(input),
    })
}

/// Who judges a call the policy's own checks let through.
#[derive(Clone)]
enum Judge {
    /// The permission engine in this scope; an ask is a denial.
    Engine(ForkScope),
    /// Another checker.
    Checker(Arc<dyn CanUseTool>),
    /// No call gets this far (a policy allowing no tool).
    Nobody,
}

#[derive(Clone)]
struct Writes {
    paths: Arc<dyn WritablePaths>,
    /// Allowed once the path passes (the fork's own place), else judged too.
    owned: bool,
}

/// A fork's `can_use_tool`, as its caller configured it (see the module's documentation).
#[derive(Clone)]
pub struct ForkPolicy {
    /// `None`: every tool.
    tools: Option<Arc<[String]>>,
    read_only: bool,
    writes: Option<Writes>,
    judge: Judge,
    refusals: Arc<dyn Refusals>,
}

impl ForkPolicy {
    /// Every tool, each call judged by the permission engine in `scope` (an ask is a denial).
    pub fn judged_in(scope: ForkScope, refusals: impl Refusals + 'static) -> Self {
        Self::with_judge(Judge::Engine(scope), refusals)
    }

    /// Every tool, each call judged by `checker` (the session's, whose asks a sub-agent
    /// cannot answer).
    pub fn judged_by(checker: Arc<dyn CanUseTool>, refusals: impl Refusals + 'static) -> Self {
        Self::with_judge(Judge::Checker(checker), refusals)
    }

    /// No tool at all (a compaction summary is written from the conversation alone).
    pub fn no_tools(refusals: impl Refusals + 'static) -> Self {
        Self::with_judge(Judge::Nobody, refusals).only_tools(&[])
    }

    fn with_judge(judge: Judge, refusals: impl Refusals + 'static) -> Self {
        Self {
            tools: None,
            read_only: false,
            writes: None,
            judge,
            refusals: Arc::new(refusals),
        }
    }

    /// Only these tools.
    pub fn only_tools(mut self, tools: &[&str]) -> Self {
        self.tools = Some(tools.iter().map(|t| (*t).to_owned()).collect());
        self
    }

    /// Every call but a permitted write must be read-only.
    pub fn read_only(mut self) -> Self {
        self.read_only = true;
        self
    }

    /// Writes land only in `paths`, a place the fork owns: a write there is allowed without
    /// the judge.
    pub fn owns_writes(mut self, paths: impl WritablePaths + 'static) -> Self {
        self.writes = Some(Writes {
            paths: Arc::new(paths),
            owned: true,
        });
        self
    }

    /// Writes land only in `paths`, and the judge has the last word on each.
    pub fn may_write(mut self, paths: impl WritablePaths + 'static) -> Self {
        self.writes = Some(Writes {
            paths: Arc::new(paths),
            owned: false,
        });
        self
    }

    fn allows_tool(&self, tool: &str) -> bool {
        self.tools
            .as_ref()
            .is_none_or(|tools| tools.iter().any(|t| t == tool))
    }

    /// The write `tool` with `input` would make, when the fork may write at all.
    fn write_of(&self, tool: &str, input: &Value) -> Option<(&Writes, String)> {
        let writes = self.writes.as_ref()?;
        FILE_WRITE_TOOLS.contains(&tool).then(|| {
            let file_path = input.get("file_path").and_then(Value::as_str);
            (writes, file_path.unwrap_or_default().to_owned())
        })
    }

    /// The decision for one call, or `None` when it is up to the policy's checker.
    pub fn decide(
        &self,
        tool: &dyn Tool,
        input: &Value,
        ctx: &ToolContext,
    ) -> Option<PermissionOutcome> {
        let refuse = |reason: String| Some(PermissionOutcome::Deny { reason });
        if !self.allows_tool(tool.name()) {
            return refuse(self.refusals.tool_not_allowed(tool, input));
        }
        if let Some((writes, file_path)) = self.write_of(tool.name(), input) {
            match writes.paths.check(&file_path, &ctx.cwd()) {
                Err(why) => return refuse(self.refusals.write_refused(tool, &file_path, &why)),
                Ok(_) if writes.owned => return Some(allowed()),
                Ok(_) => {}
            }
        } else if self.read_only && !tool.is_read_only(input) {
            return refuse(self.refusals.not_read_only(tool, input));
        }
        match &self.judge {
            Judge::Engine(scope) => {
                let context = scope.context_for(ctx);
                Some(match engine_decision(&context, tool, input, ctx) {
                    PermissionDecision::Allow { .. } => allowed(),
                    PermissionDecision::Ask { message, .. }
                    | PermissionDecision::Deny { message, .. } => PermissionOutcome::Deny {
                        reason: self.refusals.judged(tool, &message, &context),
                    },
                })
            }
            Judge::Checker(_) => None,
            Judge::Nobody => refuse(self.refusals.tool_not_allowed(tool, input)),
        }
    }

    /// Whether `call` is a write this policy lets through, judged in `cwd`.
    fn is_permitted_write(&self, call: &ToolUseBlock, cwd: &Path) -> bool {
        self.allows_tool(&call.name)
            && self
                .write_of(&call.name, &call.input)
                .is_some_and(|(writes, file_path)| writes.paths.check(&file_path, cwd).is_ok())
    }

    /// Ends the fork once a turn did nothing but writes this policy lets through, each
    /// successful: asking the model for a closing line would cost a whole request (the
    /// parent's prefix read again) for a reply nobody reads.
    pub fn end_after_writes(&self, cwd: PathBuf) -> EndAfterTools {
        let policy = self.clone();
        Arc::new(move |calls: &[ToolUseBlock], results: &Message| {
            !calls.is_empty()
                && calls
                    .iter()
                    .all(|call| policy.is_permitted_write(call, &cwd))
                && all_succeeded(results)
        })
    }
}

fn allowed() -> PermissionOutcome {
    PermissionOutcome::Allow {
        updated_input: None,
    }
}

/// Whether no tool result in `results` is an error.
fn all_succeeded(results: &Message) -> bool {
    match &results.content {
        MessageContent::Blocks(blocks) => blocks.iter().all(|b| match b {
            ContentBlock::ToolResult(r) => r.is_error != Some(true),
            _ => true,
        }),
        MessageContent::Text(_) => true,
    }
}

impl CanUseTool for ForkPolicy {
    fn check<'a>(
        &'a self,
        tool: &'a dyn Tool,
        input: &'a Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, PermissionOutcome> {
        match (self.decide(tool, input, ctx), &self.judge) {
            (None, Judge::Checker(checker)) => checker.check(tool, input, ctx),
            (outcome, _) => {
                let outcome = outcome.unwrap_or_else(|| PermissionOutcome::Deny {
                    reason: self.refusals.tool_not_allowed(tool, input),
                });
                if let PermissionOutcome::Deny { reason } = &outcome {
                    tracing::debug!(tool = tool.name(), %reason, "a fork's call was refused");
                }
                Box::pin(async move { outcome })
            }
        }
    }
}

#[cfg(test)]
#[path = "fork_policy_tests.rs"]
mod tests;
