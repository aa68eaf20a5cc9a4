//! The permission engine: modes, rules, the decision order, answers to asks, and the session's
//! record of denials (seed 003 §五).
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
//! Bash is judged part by part (`crate::bash`): a deny or ask rule matching any part catches
//! the whole line, and the line is allowed only when every part is allowed by a rule or is
//! read-only and reads only inside the project (or where a Read allow rule reaches). An allow
//! rule for `a` therefore never lets `a && rm -rf x` through, and `cat ~/.ssh/id_rsa` asks.

mod answer;
mod bash_paths;
mod engine;
mod engine_bash;
mod matching;
mod mode;
mod resolve;
mod rule;
mod settings;

pub use answer::{Denial, DenialLog, PermissionAnswer, PersistDestination};
pub use engine::{DecisionReason, PermissionContext, PermissionDecision, PermissionRequest};
pub use mode::PermissionMode;
pub use resolve::{ResolvedPath, resolve_path};
pub use rule::{PermissionRule, RuleBehavior, RuleParseError, RuleSource, SourcedRule};
pub use settings::PermissionSettings;

#[cfg(test)]
#[path = "rule_tests.rs"]
mod rule_tests;

#[cfg(test)]
#[path = "engine_tests.rs"]
mod engine_tests;
