//! What a headless run asks for ([`Headless`]: the input and output formats, the prompt) and
//! why it stops ([`HeadlessError`]).

use tine_session::StartError;

/// How `-p` prints its result (`--output-format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    /// Each reply's text.
    Text,
    /// One `result` object at the end.
    Json,
    /// One JSON object per line: system init, messages, results.
    #[value(name = "stream-json")]
    StreamJson,
}

/// How `-p` reads its input (`--input-format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum InputFormat {
    /// The prompt: the argument, else all of standard input.
    Text,
    /// One user message per line of standard input (and, from an SDK, control requests).
    #[value(name = "stream-json")]
    StreamJson,
}

/// What a headless run asks for besides the session's options.
#[derive(Debug, Clone)]
pub struct Headless {
    pub(crate) input: InputFormat,
    pub(crate) output: OutputFormat,
    pub(crate) verbose: bool,
    pub(crate) prompt: Option<String>,
    pub(crate) permission_prompt_stdio: bool,
    pub(crate) replay_user_messages: bool,
}

impl Headless {
    /// A run reading `input` and printing `output`.
    pub fn new(input: InputFormat, output: OutputFormat) -> Self {
        Self {
            input,
            output,
            verbose: false,
            prompt: None,
            permission_prompt_stdio: false,
            replay_user_messages: false,
        }
    }

    /// `--permission-prompt-tool stdio`: a call the rules leave open is the app's to decide
    /// (the Agent SDK's `can_use_tool`), asked over the control protocol.
    pub fn with_permission_prompt_stdio(mut self, stdio: bool) -> Self {
        self.permission_prompt_stdio = stdio;
        self
    }

    /// `--replay-user-messages`: each user message read is echoed back with its uuid.
    pub fn with_replay_user_messages(mut self, replay: bool) -> Self {
        self.replay_user_messages = replay;
        self
    }

    /// `--verbose`: the loop's transitions, retries and requests on stderr.
    pub fn with_verbose(mut self, verbose: bool) -> Self {
        self.verbose = verbose;
        self
    }

    /// The prompt (text input); without one it is all of standard input.
    pub fn with_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.prompt = Some(prompt.into());
        self
    }
}

/// Why a headless run could not go on; each message says what to do.
#[derive(Debug, thiserror::Error)]
pub enum HeadlessError {
    /// The session could not start (credentials, settings, a flag...).
    #[error(transparent)]
    Start(#[from] StartError),
    /// Settings that could not be read fully (fail closed); their problems were printed.
    #[error("{0}")]
    Refused(String),
    /// The input: no prompt, an empty one, standard input unreadable.
    #[error("{0}")]
    Input(String),
}
