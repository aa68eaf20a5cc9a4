//! The permission engine: modes, rules, the decision order, answers to asks, and the session's
//! record of denials (seed 003 §五).
//!
//! Order for one call (`PermissionContext::decide`): deny rules; the tool's own `Deny`; ask
//! rules; writes under `.git/` or `.tine/` (ask, even in bypass); the tool's own `Ask`; plan
//! mode refuses writes; bypass allows; the tool's own `Allow`; allow rules; the mode's default
//! (read-only Bash and reads inside the project pass in every mode, edits inside the project
//! pass in `acceptEdits`); otherwise ask — which `dontAsk` turns into a denial.
//!
//! Bash is judged part by part (`crate::bash`): a deny or ask rule matching any part catches
//! the whole line, and the line is allowed only when every part is allowed by a rule or is
//! read-only. An allow rule for `a` therefore never lets `a && rm -rf x` through.

mod answer;
mod engine;
mod matching;
mod mode;
mod rule;

pub use answer::{Denial, DenialLog, PermissionAnswer, PersistDestination};
pub use engine::{DecisionReason, PermissionContext, PermissionDecision, PermissionRequest};
pub use mode::PermissionMode;
pub use rule::{PermissionRule, RuleBehavior, RuleParseError, RuleSource, SourcedRule};

#[cfg(test)]
#[path = "rule_tests.rs"]
mod rule_tests;

#[cfg(test)]
#[path = "engine_tests.rs"]
mod engine_tests;
