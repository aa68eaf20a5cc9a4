//! Why a session could not start, and why a handle's request was refused.

use std::path::PathBuf;

use tine_api_client::ApiError;
use tine_config::PathsError;
use tine_query_loop::{EngineError, TranscriptError};

use crate::protocol::QuestionId;

/// Why [`crate::Session::start`] refused. Each message says what to do about it.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// No credentials, or a malformed base URL.
    #[error("{0}")]
    Credentials(ApiError),
    /// The provider, or its model, cannot be used (`provider` in settings is neither
    /// anthropic nor openai, openai has no model name, ...).
    #[error(transparent)]
    Provider(#[from] ProviderError),
    /// The HTTP client could not be built (TLS roots).
    #[error("the HTTP client could not be built: {0}")]
    Client(String),
    /// The working directory cannot be used.
    #[error("cannot use {path} as the working directory: {message}")]
    Cwd {
        /// The directory.
        path: PathBuf,
        /// Why not.
        message: String,
    },
    /// tine's home cannot be found.
    #[error(transparent)]
    Home(#[from] PathsError),
    /// Fail closed: a settings file that exists could not be read or parsed, `--settings`
    /// names one that cannot be read, or a deny or ask rule could not be understood: running
    /// without it would allow what the user forbade. `warnings` are the settings' other
    /// problems, `errors` the fatal ones, each naming its file and line.
    #[error("{refusal}")]
    Settings {
        /// The settings' problems that cost only a key.
        warnings: Vec<String>,
        /// The fatal problems, each with its file and line.
        errors: Vec<String>,
        /// What to tell the person (the refusal, after the problems).
        refusal: String,
    },
    /// A rule of `--allowedTools` / `--disallowedTools`, or one settings gave that the
    /// permission engine cannot parse.
    #[error("{0}")]
    Rule(String),
    /// `--permission-mode bypassPermissions` while a settings file disables it.
    #[error(
        "--permission-mode bypassPermissions is disabled by {file} \
         (permissions.disableBypassPermissionsMode)"
    )]
    BypassDisabled {
        /// The settings file that disables it.
        file: String,
    },
    /// The sandbox decision refused (a required sandbox is unavailable, ...).
    #[error("{0}")]
    Sandbox(String),
    /// A flag's value cannot be used (`--add-dir` of a missing directory, a `--session-id`
    /// in use, a `--fallback-model` that is the main model, ...); the message names it.
    #[error("{0}")]
    Flag(String),
    /// The hooks an app registered ([`crate::SessionOptions::hook_callbacks`]) cannot be
    /// read: an unknown event, a matcher that is not valid, a group of the wrong shape (the
    /// message names it).
    #[error("{0}")]
    AppHooks(String),
    /// `--continue` in a directory with no session.
    #[error("no session to continue in {}: start one with `tine -p PROMPT`", cwd.display())]
    NoSessionToContinue {
        /// The directory.
        cwd: PathBuf,
    },
    /// Finding the latest session failed.
    #[error(transparent)]
    Transcript(#[from] TranscriptError),
    /// The transcript could not be opened, or the resumed one read.
    #[error(transparent)]
    Engine(#[from] EngineError),
}

/// The session's task has ended (shut down, or it stopped after a panic); nothing more can be
/// submitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the session has ended")]
pub struct SessionClosed;

/// Why an answer to a question was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AnswerError {
    /// Answered already, withdrawn (its turn was interrupted), or never asked.
    #[error("no open question {0} (answered already, withdrawn, or never asked)")]
    Unknown(QuestionId),
}

/// Why [`crate::Op::SetPermissionMode`] was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModeError {
    /// bypassPermissions is disabled by a settings file.
    #[error("bypassPermissions is disabled by {file} (permissions.disableBypassPermissionsMode)")]
    BypassDisabled {
        /// The settings file that disables it.
        file: String,
    },
}

/// Why the provider or its model cannot be used; the message says what to set.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ProviderError(pub String);
