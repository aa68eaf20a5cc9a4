//! The vocabulary shared by tools and the permission engine: what a call touches, and what a
//! tool's own check says about it. Kept apart so tools and the engine depend on it, not on
//! each other.

use std::path::PathBuf;

/// What one tool call touches, as the permission rules see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PermissionTarget {
    /// A shell command (matched by `Bash(...)` rules, analysed part by part), and the
    /// directory the shell is in, where its relative paths start.
    Bash {
        /// The command line.
        command: String,
        /// The directory it runs in.
        cwd: PathBuf,
    },
    /// A file or directory that is only read (Read, Glob, Grep), absolute.
    FileRead {
        /// The file read.
        path: PathBuf,
    },
    /// A file that is written or edited (Write, Edit), absolute.
    FileWrite {
        /// The file written.
        path: PathBuf,
    },
    /// A URL fetched over the network (matched by `WebFetch(domain:host)` rules).
    Url {
        /// The URL fetched.
        url: String,
    },
    /// Anything else: matched by tool name only, or by `Tool(content)` with this content.
    Other {
        /// What a rule's parentheses match against, when the tool has such a thing.
        content: Option<String>,
    },
}

/// What a tool's own `check_permissions` says about one call: the third step of the decision
/// order (deny rules, ask rules, the tool's own check, allow rules, the mode's default).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolVerdict {
    /// The tool has nothing to say; the engine goes on to allow rules and the mode.
    Passthrough,
    /// The call is safe on its own terms (e.g. a read-only command); no approval needed.
    Allow {
        /// Why it may run.
        reason: String,
    },
    /// A person must approve, whatever the allow rules say.
    Ask {
        /// Why it must ask.
        reason: String,
    },
    /// Refused outright.
    Deny {
        /// Why it may not run.
        reason: String,
    },
}
