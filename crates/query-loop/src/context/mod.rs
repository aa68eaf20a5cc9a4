//! Context assembly: what the model is told about where it runs, gathered once per session and
//! rendered to text once, so every request of the session (and every fork) sends the same bytes.
//!
//! The split keeps the system prompt stable across sessions, as Claude Code does:
//! - the **system prompt** ([`render_system_prompt`]) depends only on settings and tine's
//!   version: the base instructions ([`BASE_SYSTEM_PROMPT`]), the model, and the user's
//!   `--append-system-prompt`. Two sessions of a project send the same bytes, so the second one's
//!   first request reads the first one's cached tools and system prompt;
//! - the **user context** ([`SessionContext::user_context`]): everything that changes while a
//!   person works (the environment facts with today's date, the git snapshot) and the instruction
//!   files (AGENTS.md, CLAUDE.md), in one `<system-reminder>` block prepended to the session's
//!   first user message. It is frozen in the transcript with that message, so a resumed session
//!   replays those bytes instead of rendering new ones, and its first request reads the whole
//!   previous conversation from the cache.
//!
//! Everything is in a fixed order and the date has day resolution, so the same inputs render to
//! the same bytes.

mod git;
mod instructions;

use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

pub(crate) use git::git_snapshot;
pub use git::{GitSnapshot, MAX_GIT_STATUS_CHARS};
pub use instructions::{
    InstructionFile, InstructionSource, MAX_INSTRUCTION_FILE_BYTES, discover_instruction_files,
    find_repo_root,
};

use crate::timestamp::utc_date;

/// tine's base instructions: the start of every main-thread system prompt.
pub const BASE_SYSTEM_PROMPT: &str = include_str!("../prompts/system.md");

/// The lean profile's base instructions, for a model with a small window (issue 37): what a
/// small model needs to use the core tools, in a tenth of [`BASE_SYSTEM_PROMPT`]'s bytes.
pub const LEAN_SYSTEM_PROMPT: &str = include_str!("../prompts/lean.md");

/// Default bound on each git call while gathering.
pub(crate) const DEFAULT_GIT_TIMEOUT: Duration = Duration::from_secs(3);

/// Inputs of [`SessionContext::gather`].
#[derive(Debug, Clone)]
pub struct GatherOptions {
    /// `TINE_HOME` (holds the user's AGENTS.md).
    pub home: PathBuf,
    /// The session's working directory (absolute, ideally canonical).
    pub cwd: PathBuf,
    /// The session's model (named in the environment facts).
    pub model: String,
    /// `YYYY-MM-DD`; `None` for today (UTC).
    pub date: Option<String>,
    /// Take a git snapshot (off for `--bare` or when git must not run).
    pub git: bool,
    /// How long git may take before the snapshot is skipped.
    pub git_timeout: Duration,
}

impl GatherOptions {
    /// Options for a session of `model` in `cwd` under `home`: today's date, with git.
    pub fn new(home: PathBuf, cwd: PathBuf, model: impl Into<String>) -> Self {
        Self {
            home,
            cwd,
            model: model.into(),
            date: None,
            git: true,
            git_timeout: DEFAULT_GIT_TIMEOUT,
        }
    }
}

/// Facts about the machine and directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvironmentFacts {
    /// The working directory.
    pub cwd: PathBuf,
    /// Whether it is inside a git repository.
    pub is_git_repo: bool,
    /// `std::env::consts::OS`: `linux`, `macos`, ...
    pub platform: String,
    /// e.g. `Linux 6.8.0-45-generic`; `None` if unknown.
    pub os_version: Option<String>,
    /// `YYYY-MM-DD`.
    pub date: String,
    /// The session's model.
    pub model: String,
    /// More directories the session may work in (`--add-dir`, `additionalDirectories`), told
    /// to the model as Claude Code tells it; empty: no line.
    pub additional_directories: Vec<PathBuf>,
}

/// Everything gathered about the session's surroundings, once, at start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionContext {
    /// The machine and directory.
    pub environment: EnvironmentFacts,
    /// `None` outside a repository, without git, or when git timed out.
    pub git: Option<GitSnapshot>,
    /// AGENTS.md / CLAUDE.md files found, in the order they are rendered.
    pub instructions: Vec<InstructionFile>,
}

impl SessionContext {
    /// Gathers the context: instruction files (bounded reads, off the runtime), environment
    /// facts, and the git snapshot, concurrently. Never fails: what cannot be read is left out.
    pub async fn gather(options: &GatherOptions) -> SessionContext {
        let home = options.home.clone();
        let cwd = options.cwd.clone();
        let discovery = tokio::task::spawn_blocking(move || {
            let is_repo = find_repo_root(&cwd).is_some();
            (discover_instruction_files(&home, &cwd), is_repo)
        });
        let git = async {
            if options.git {
                git_snapshot(&options.cwd, options.git_timeout).await
            } else {
                None
            }
        };
        let (discovered, git, os_version) = tokio::join!(discovery, git, os_version());
        let (instructions, is_git_repo) = discovered.unwrap_or_else(|error| {
            tracing::error!(%error, "instruction file discovery failed");
            (Vec::new(), false)
        });
        let environment = EnvironmentFacts {
            cwd: options.cwd.clone(),
            is_git_repo,
            platform: std::env::consts::OS.to_owned(),
            os_version,
            date: options
                .date
                .clone()
                .unwrap_or_else(|| utc_date(SystemTime::now())),
            model: options.model.clone(),
            additional_directories: Vec::new(),
        };
        SessionContext {
            environment,
            git,
            instructions,
        }
    }

    /// Renders both texts once; keep the result for the whole session (and hand the same bytes
    /// to forks).
    pub fn render(&self, base: &str, append: Option<&str>) -> RenderedContext {
        RenderedContext {
            system_prompt: render_system_prompt(base, &self.environment.model, append).into(),
            user_context: self.user_context().into(),
        }
    }

    /// The session's surroundings as one `<system-reminder>` block for the first user message:
    /// the environment facts, the git snapshot, then the instruction files.
    pub fn user_context(&self) -> String {
        let mut out = String::from(
            "<system-reminder>\n\
             As you answer the user's questions, you can use the following context:\n",
        );
        render_environment(&mut out, &self.environment);
        if let Some(git) = &self.git {
            out.push_str("\n# gitStatus\n");
            render_git(&mut out, git);
            out.push('\n');
        }
        if !self.instructions.is_empty() {
            render_instructions(&mut out, &self.instructions);
        }
        out.push_str(
            "\nIMPORTANT: this context may or may not be relevant to your tasks. You should not \
             respond to this context unless it is highly relevant to your task.\n\
             </system-reminder>",
        );
        out
    }
}

fn render_environment(out: &mut String, env: &EnvironmentFacts) {
    // Claude Code's line, after the git one, only when there are any.
    let additional = if env.additional_directories.is_empty() {
        String::new()
    } else {
        let dirs: Vec<String> = env
            .additional_directories
            .iter()
            .map(|dir| dir.display().to_string())
            .collect();
        format!("\nAdditional working directories: {}", dirs.join(", "))
    };
    let _ = writeln!(
        out,
        "# Environment\n\
         Here is useful information about the environment you are running in:\n<env>\n\
         Working directory: {}\n\
         Is directory a git repo: {}{additional}\n\
         Platform: {}\n\
         OS Version: {}\n\
         Today's date: {}\n\
         </env>",
        env.cwd.display(),
        if env.is_git_repo { "Yes" } else { "No" },
        env.platform,
        env.os_version.as_deref().unwrap_or("unknown"),
        env.date,
    );
}

fn render_instructions(out: &mut String, instructions: &[InstructionFile]) {
    out.push_str(
        "\n# Instructions\n\
         Codebase and user instructions are shown below. Be sure to adhere to these \
         instructions. IMPORTANT: These instructions OVERRIDE any default behavior and you \
         MUST follow them exactly as written.\n",
    );
    for file in instructions {
        let _ = write!(
            out,
            "\nContents of {} ({}):\n\n{}",
            file.path.display(),
            file.source.label(),
            file.content.trim_end()
        );
        if file.truncated {
            let _ = write!(
                out,
                "\n\n[truncated: the file is longer than {} KB; read it with the Read tool for the rest]",
                MAX_INSTRUCTION_FILE_BYTES / 1024
            );
        }
        out.push('\n');
    }
}

/// The session's context as text, rendered once: what every request of the session sends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderedContext {
    /// The whole system prompt (a cache breakpoint goes on its end).
    pub system_prompt: Arc<str>,
    /// The `<system-reminder>` block to prepend to the first user message of a new session.
    pub user_context: Arc<str>,
}

/// The session's system prompt: `base`, the model, then `append` (`--append-system-prompt`).
/// Nothing that changes while a person works (the date, git, files) goes here: the bytes must
/// stay the same across the sessions of a project so each reads the previous one's cache.
pub(crate) fn render_system_prompt(base: &str, model: &str, append: Option<&str>) -> String {
    let mut out = base.trim_end().to_owned();
    let _ = write!(out, "\n\nYou are powered by the model {model}.");
    if let Some(append) = append.map(str::trim).filter(|a| !a.is_empty()) {
        out.push_str("\n\n");
        out.push_str(append);
    }
    out
}

fn render_git(out: &mut String, git: &GitSnapshot) {
    out.push_str(
        "This is the git status at the start of the conversation. Note that this status is a \
         snapshot in time, and will not update during the conversation.\n",
    );
    let _ = writeln!(
        out,
        "Current branch: {}",
        git.branch.as_deref().unwrap_or("(detached HEAD)")
    );
    if let Some(main) = &git.main_branch {
        let _ = writeln!(
            out,
            "\nMain branch (you will usually use this for PRs): {main}"
        );
    }
    out.push_str("\nStatus:\n");
    if git.status.is_empty() {
        out.push_str("(clean)");
    } else {
        out.push_str(&git.status);
    }
    if git.status_truncated {
        let _ = write!(
            out,
            "\n... (truncated because it exceeds {MAX_GIT_STATUS_CHARS} characters; run \
             \"git status\" with the Bash tool for the rest)"
        );
    }
    if !git.recent_commits.is_empty() {
        out.push_str("\n\nRecent commits:\n");
        out.push_str(&git.recent_commits.join("\n"));
    }
}

/// `Linux 6.8.0`-style kernel name and release.
async fn os_version() -> Option<String> {
    #[cfg(target_os = "linux")]
    {
        let release = tokio::fs::read_to_string("/proc/sys/kernel/osrelease")
            .await
            .ok()?;
        Some(format!("Linux {}", release.trim()))
    }
    #[cfg(not(target_os = "linux"))]
    {
        let mut cmd = tokio::process::Command::new("uname");
        cmd.arg("-sr").kill_on_drop(true);
        let output = tokio::time::timeout(Duration::from_secs(2), cmd.output())
            .await
            .ok()?
            .ok()?;
        output
            .status
            .success()
            .then(|| String::from_utf8_lossy(&output.stdout).trim().to_owned())
    }
}

#[cfg(test)]
#[path = "context_tests.rs"]
mod tests;
