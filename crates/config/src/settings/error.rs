//! What can be wrong with settings, each naming the file and, where there is one, the line.
//!
//! Fail closed: a problem that may hide a restriction (a file that exists but cannot be read
//! or parsed, a deny or ask rule that cannot be understood) is fatal and a session must not
//! start; anything else (a wrong-typed `model`, an unknown key, a bad allow rule) is a warning
//! and only that key or element is dropped. [`SettingsError::is_fatal`] says which.
//!
//! [`SettingsError::Rule`] and [`SettingsError::UnknownMode`] are made by the permission
//! engine, which parses the texts this crate hands out; they live here so that every problem
//! with settings is one type, reported and judged the same way.

use std::fmt;

use super::{RuleList, SettingText};

/// Where in which settings source: `path`, `path:line` or `path:line:column`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// The file's path, or `--settings (inline JSON)`.
    pub file: String,
    /// The line (1-based), when known.
    pub line: Option<usize>,
    /// The column (1-based), when known.
    pub column: Option<usize>,
}

impl Location {
    /// A whole file, no position.
    pub fn file(file: impl Into<String>) -> Self {
        Location {
            file: file.into(),
            line: None,
            column: None,
        }
    }

    /// A position in a file.
    pub fn at(file: impl Into<String>, (line, column): (usize, usize)) -> Self {
        Location {
            file: file.into(),
            line: Some(line),
            column: Some(column),
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.file)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
            if let Some(column) = self.column {
                write!(f, ":{column}")?;
            }
        }
        Ok(())
    }
}

/// What a front end says after the fatal errors, before refusing to start.
pub const REFUSAL: &str = "not starting: settings could not be read fully, and a deny or ask rule \
                           that was not read would not be enforced (fix the problems above)";

/// Why settings could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    /// The file exists but could not be read.
    #[error("cannot read settings file {at}: {source}")]
    Read {
        /// The file.
        at: Location,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The file is not valid JSON (with comments).
    #[error(
        "{at}: invalid settings JSON: {message}; fix the file there (`//` comments and trailing \
         commas are fine) or move it away"
    )]
    Syntax {
        /// Where the parser stopped.
        at: Location,
        /// The parser's message.
        message: String,
    },
    /// The file is JSON but not an object.
    #[error("{at}: settings must be a JSON object, found {found}")]
    NotAnObject {
        /// The file.
        at: Location,
        /// The JSON type found instead.
        found: &'static str,
    },
    /// A key of the wrong type; `restrictive` when it held (or may have held) deny or ask rules.
    #[error("{at}: `{key}` must be {expected}, found {found}{}", consequence(*restrictive))]
    WrongType {
        /// Where the key is.
        at: Location,
        /// The key.
        key: String,
        /// The type it should have.
        expected: &'static str,
        /// The type it has.
        found: &'static str,
        /// Whether the key could hold deny or ask rules (the error is then fatal).
        restrictive: bool,
    },
    /// A rule the permission engine could not parse (`rule` as written and where, `error` its
    /// reason).
    #[error(
        "{}: invalid permission rule `{}` in `{}`: {error}{}",
        rule.at,
        rule.text,
        rule.key,
        rule_consequence(*list)
    )]
    Rule {
        /// The rule as written, with its key and location.
        rule: Box<SettingText>,
        /// The list it was in.
        list: RuleList,
        /// The parser's reason.
        #[source]
        error: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A `defaultMode` the permission engine does not have; `known` lists the ones it has.
    #[error("{at}: unknown `permissions.defaultMode` `{value}`: use {known} (ignored)")]
    UnknownMode {
        /// Where the mode is.
        at: Location,
        /// The mode as written.
        value: String,
        /// The modes the engine has.
        known: &'static str,
    },
    /// A hook that cannot be read or run as written (shape here; event names, matchers and
    /// types in the hook runner). Fatal: a hook may be a guard.
    #[error(
        "{at}: `{key}` {problem}; fix it: tine does not start with a hook it cannot run (a guard \
         that silently did not run would let through what it should stop)"
    )]
    Hook {
        /// Where the hook is.
        at: Location,
        /// The hook's key (`hooks.PreToolUse[0]`).
        key: String,
        /// What is wrong with it.
        problem: String,
    },
    /// A well-formed hook of Claude Code's that tine does not run (an event or type it lacks).
    #[error("{at}: `{key}` {what}; this hook does not run in tine")]
    HookNotRun {
        /// Where the hook is.
        at: Location,
        /// The hook's key.
        key: String,
        /// What tine lacks to run it.
        what: String,
    },
    /// A key tine does not know (a warning; the key is ignored).
    #[error("{at}: unknown setting `{key}` (ignored)")]
    UnknownKey {
        /// Where the key is.
        at: Location,
        /// The key.
        key: String,
    },
    /// A key set twice in one file.
    #[error("{at}: `{key}` is set twice in this file; {outcome}")]
    DuplicateKey {
        /// The second occurrence.
        at: Location,
        /// The key.
        key: String,
        /// Which value was kept and why.
        outcome: &'static str,
    },
    /// A file tine is changing has a value of the wrong shape where the change goes.
    #[error("{path}: `{key}` must be {expected}; fix it by hand before tine changes it")]
    Shape {
        /// The file.
        path: String,
        /// The key, as a path from the root (`permissions.allow`).
        key: String,
        /// The shape it should have.
        expected: &'static str,
    },
    /// The settings file could not be written.
    #[error("cannot write settings file {path}: {source}")]
    Write {
        /// The file.
        path: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
}

fn consequence(restrictive: bool) -> &'static str {
    if restrictive {
        "; fix it: tine does not start with restrictions it cannot read"
    } else {
        " (ignored)"
    }
}

fn rule_consequence(list: RuleList) -> &'static str {
    if list.restricts() {
        "; fix it: tine does not start with a deny or ask rule it cannot read"
    } else {
        " (the rule is ignored)"
    }
}

impl SettingsError {
    /// Whether the session must not start: what could not be read may have forbidden something.
    pub fn is_fatal(&self) -> bool {
        match self {
            SettingsError::Read { .. }
            | SettingsError::Syntax { .. }
            | SettingsError::NotAnObject { .. }
            | SettingsError::Hook { .. } => true,
            SettingsError::WrongType { restrictive, .. } => *restrictive,
            SettingsError::Rule { list, .. } => list.restricts(),
            SettingsError::UnknownMode { .. }
            | SettingsError::HookNotRun { .. }
            | SettingsError::UnknownKey { .. }
            | SettingsError::DuplicateKey { .. } => false,
            // Writing: the caller reports these; they never stop a session.
            SettingsError::Shape { .. } | SettingsError::Write { .. } => false,
        }
    }

    /// The settings file (or `--settings (inline JSON)`) the problem is in, as its messages
    /// spell it.
    pub fn file(&self) -> &str {
        match self {
            SettingsError::Read { at, .. }
            | SettingsError::Syntax { at, .. }
            | SettingsError::NotAnObject { at, .. }
            | SettingsError::WrongType { at, .. }
            | SettingsError::UnknownMode { at, .. }
            | SettingsError::Hook { at, .. }
            | SettingsError::HookNotRun { at, .. }
            | SettingsError::UnknownKey { at, .. }
            | SettingsError::DuplicateKey { at, .. } => &at.file,
            SettingsError::Rule { rule, .. } => &rule.at.file,
            SettingsError::Shape { path, .. } | SettingsError::Write { path, .. } => path,
        }
    }
}
