//! tine-permissions: what may run. The permission engine (modes, rules, the decision order,
//! answers to asks, the session's record of denials; seed 003 §五), the path resolver every
//! decision about a path goes through, and bash command analysis. It sits under `tine-tools`:
//! tools describe what a call touches ([`PermissionTarget`]) and give their own verdict
//! ([`ToolVerdict`]); the engine decides. Rules and `defaultMode` come from the settings of
//! `tine-config`, as written, and are parsed here ([`PermissionSettings`]).
//!
//! Order for one call (`PermissionContext::decide`): deny rules; the tool's own `Deny`; ask
//! rules; writes under `.git/`, `.tine/` or `.claude/` (ask, even in bypass); the tool's own
//! `Ask`; plan mode refuses writes; bypass allows; allow rules; the mode's default (reads inside
//! the project pass in every mode, edits inside the project pass in `acceptEdits`); the tool's
//! own `Allow`, which never reaches a file outside the project; otherwise ask — which `dontAsk`
//! turns into a denial.
//!
//! Every path is judged where it really leads (`resolve`: the existing part followed through
//! symbolic links, the rest lexical), once, here: in-project checks, protected directories and
//! file rules (deny and ask rules match the given or the resolved path, allow rules the
//! resolved one) for every tool and for the paths of Bash commands (`bash_paths`).
//!
//! Bash is judged part by part ([`analyze`]): a deny or ask rule matching any part catches
//! the whole line, and the line is allowed only when every part is allowed by a rule or is
//! read-only and reads only inside the project (or where a Read allow rule reaches). An allow
//! rule for `a` therefore never lets `a && rm -rf x` through, and `cat ~/.ssh/id_rsa` asks.
//!
//! # Example
//!
//! ```
//! use tine_permissions::{
//!     PermissionContext, PermissionMode, PermissionQuery, PermissionRule, PermissionTarget,
//!     RuleBehavior, RuleSource, ToolVerdict,
//! };
//!
//! let mut context = PermissionContext::new(PermissionMode::Default, "/work/project");
//! let rule: PermissionRule = "Bash(npm test:*)".parse()?;
//! context.add_session_rule(rule, RuleBehavior::Allow, RuleSource::CliArg);
//!
//! let decide = |command: &str| {
//!     let target = PermissionTarget::Bash {
//!         command: command.into(),
//!         cwd: "/work/project".into(),
//!     };
//!     let request = PermissionQuery {
//!         tool: "Bash",
//!         target: &target,
//!         verdict: &ToolVerdict::Passthrough,
//!         is_read_only: false,
//!     };
//!     context.decide(&request)
//! };
//! assert!(decide("npm test -- --watch=false").is_allow());
//! // The allow rule covers one part; the other part still needs a person.
//! assert!(decide("npm test && rm -rf node_modules").is_ask());
//! # Ok::<(), tine_permissions::RuleParseError>(())
//! ```
//!
//! `examples/decide.rs` prints the decisions for a few calls in every mode
//! (`cargo run -p tine-permissions --example decide`); `tine-tools`'s `examples/run_tool.rs`
//! runs a real tool behind them.
//!
//! Modules in reading order (private: the items re-exported at the root are the API):
//!
//! - `verdict`: the vocabulary shared with tools ([`PermissionTarget`], what a call touches;
//!   [`ToolVerdict`], a tool's own verdict).
//! - `mode`, `rule`: the permission modes and the rule grammar (`Bash(npm test:*)`).
//! - `settings`: the rules and default mode of every settings source, parsed, fail-closed.
//! - `resolve`: where a path really leads (symlinks followed for the part that exists).
//! - `engine`, `engine_bash`, `bash_paths`, `matching`: the decision for one call, Bash part
//!   by part and the paths its commands touch.
//! - `suggest`: what "yes, and don't ask again" offers ([`AlwaysAllow`]): a mode for edits, the
//!   rule of a Bash command's prefix, never more than the person saw.
//! - `answer`: a person's answer to an ask, persisted rules, the denial log.
//! - `bash`: bash command analysis (tree-sitter-bash), read-only or not, part by part
//!   ([`analyze`], [`CommandAnalysis`]).
//!
//! # Types from lower crates
//!
//! Signatures take [`tine_config`]'s settings ([`tine_config::LoadedSettings`],
//! [`tine_config::SettingsPaths`], [`tine_config::RuleList`], [`tine_config::SettingsError`]):
//! the rules are read from the settings files that crate loads.
#![warn(missing_docs, unnameable_types)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod bash;
mod verdict;

mod answer;
mod bash_paths;
mod engine;
mod engine_bash;
mod matching;
mod mode;
mod resolve;
mod rule;
mod settings;
mod suggest;

pub use answer::{AskResolution, Denial, DenialLog};
pub use engine::{DecisionReason, PermissionContext, PermissionDecision, PermissionQuery};
pub use mode::PermissionMode;
pub use resolve::{ResolvedPath, normalize, resolve_path};
pub use rule::{PermissionRule, RuleBehavior, RuleParseError, RuleSource, SourcedRule};
pub use settings::PermissionSettings;
pub use suggest::{AlwaysAllow, PersistDestination};

pub use bash::{
    CommandAnalysis, CommandKind, KindSummary, Redirection, SimpleCommand, Word, analyze,
    is_read_only_command,
};
pub use verdict::{PermissionTarget, ToolVerdict};

#[cfg(test)]
#[path = "rule_tests.rs"]
mod rule_tests;

#[cfg(test)]
#[path = "engine_tests.rs"]
mod engine_tests;

#[cfg(test)]
#[path = "suggest_tests.rs"]
mod suggest_tests;
