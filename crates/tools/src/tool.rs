//! The `Tool` interface (seed 003 §四): identity, the input schema, the description the model
//! reads, `call`, the permission declarations and checks, concurrency safety, and the short
//! texts UIs render. [`run_tool`] is how the loop runs one call: validate, call, and turn every
//! failure into an `is_error` result the model can read.

use std::path::PathBuf;

use futures::future::BoxFuture;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::context::{ToolContext, ToolProgress};
use crate::display::ToolDisplay;
use crate::schema::{SchemaViolation, validate};
use tine_permissions::{PermissionTarget, ToolVerdict};

/// What a tool call produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOutput {
    /// The text the model sees as the `tool_result` content.
    pub content: String,
    /// Whether the result is an error (`is_error` on the wire).
    pub is_error: bool,
    /// A one-line summary for UIs ("Read 42 lines", "Added 3 lines, removed 1").
    pub summary: String,
    /// Structured extras a UI may render instead of `content`.
    pub display: ToolDisplay,
    /// Images and documents sent with the text (Read of a PNG or a PDF): the `tool_result`
    /// then carries content blocks, the text first.
    pub media: Vec<ToolMedia>,
    /// Deferred tools this result loads (ToolSearch's): the `tool_result` then holds one
    /// `tool_reference` per name and nothing else, and `content` goes beside it as text.
    pub references: Vec<String>,
}

/// A binary attachment of a result, base64-encoded as the API takes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolMedia {
    /// Image or document.
    pub kind: MediaKind,
    /// `image/png`, `image/jpeg`, `image/gif`, `image/webp`, `application/pdf`.
    pub media_type: String,
    /// The bytes in standard base64.
    pub data: String,
}

/// Which content block a [`ToolMedia`] becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MediaKind {
    /// An `image` block.
    Image,
    /// A `document` block (PDF).
    Document,
}

impl ToolOutput {
    /// A successful result whose summary is its first line.
    pub fn text(content: impl Into<String>) -> Self {
        let content = content.into();
        let summary = content.lines().next().unwrap_or_default().to_owned();
        Self {
            content,
            is_error: false,
            summary,
            display: ToolDisplay::None,
            media: Vec::new(),
            references: Vec::new(),
        }
    }

    /// An error result.
    pub fn error(content: impl Into<String>) -> Self {
        Self {
            is_error: true,
            ..Self::text(content)
        }
    }

    /// Replaces the UI summary.
    pub fn with_summary(mut self, summary: impl Into<String>) -> Self {
        self.summary = summary.into();
        self
    }

    /// Attaches an image or document.
    pub fn with_media(mut self, media: ToolMedia) -> Self {
        self.media.push(media);
        self
    }

    /// Loads the deferred tools `names` (see [`ToolOutput::references`]).
    pub fn with_references(mut self, names: impl IntoIterator<Item = String>) -> Self {
        self.references.extend(names);
        self
    }

    /// Attaches structured extras.
    pub fn with_display(mut self, display: ToolDisplay) -> Self {
        self.display = display;
        self
    }
}

/// Why a tool call failed. Every message says what to do next.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// The input cannot be used as given.
    #[error("invalid input: {0}")]
    InvalidInput(String),
    /// The input does not match the tool's schema.
    #[error(transparent)]
    Schema(#[from] SchemaViolation),
    /// The file does not exist.
    #[error("File does not exist: {}", .0.display())]
    NotFound(PathBuf),
    /// The path is a directory.
    #[error("{} is a directory, not a file; use Glob or Bash `ls` to list it", .0.display())]
    IsDirectory(PathBuf),
    /// The file is binary.
    #[error("{} is a binary file and cannot be shown as text", .0.display())]
    BinaryFile(PathBuf),
    /// The file was not read, or changed since it was read.
    #[error(transparent)]
    Stale(#[from] crate::file_state::Staleness),
    /// Edit's `old_string` is not in the file.
    #[error("`old_string` was not found in {}; read the file again and copy the text exactly, including whitespace", .0.display())]
    OldStringNotFound(PathBuf),
    /// Edit's `old_string` is in the file more than once.
    #[error("`old_string` appears {count} times in {}; add surrounding context to make it unique, or set `replace_all` to change every occurrence", .path.display())]
    OldStringAmbiguous {
        /// The file.
        path: PathBuf,
        /// How many times it appears.
        count: usize,
    },
    /// Edit would change nothing.
    #[error("`old_string` and `new_string` are identical; there is nothing to change")]
    NoChange,
    /// A file operation failed.
    #[error("{context} {}: {source}", .path.display())]
    Io {
        /// What was being done (`cannot read`, `cannot write`).
        context: &'static str,
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The call was cancelled.
    #[error("the tool call was cancelled")]
    Cancelled,
    /// Any other failure, as the model should read it.
    #[error("{0}")]
    Failed(String),
}

impl ToolError {
    /// An I/O failure on `path` while doing `context` ("cannot read").
    pub fn io(context: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io {
            context,
            path: path.into(),
            source,
        }
    }
}

/// The future a tool's `call` returns.
pub type ToolFuture<'a> = BoxFuture<'a, Result<ToolOutput, ToolError>>;

/// A tool the model can call. Object-safe: the pool holds `Arc<dyn Tool>`, built-in and MCP
/// alike.
pub trait Tool: Send + Sync {
    /// The name the model calls it by (unique in a pool).
    fn name(&self) -> &str;

    /// Other names accepted for it (older or alternative spellings).
    fn aliases(&self) -> &[&str] {
        &[]
    }

    /// The description the model reads: what the tool does and how to use it well.
    fn description(&self) -> String;

    /// The JSON Schema of the input, with Claude Code's field names.
    fn input_schema(&self) -> Value;

    /// Runs the call. `input` has already been checked against [`Tool::input_schema`] when
    /// called through [`run_tool`].
    fn call<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> ToolFuture<'a>;

    /// What the call touches, for the permission rules.
    fn permission_target(&self, input: &Value, ctx: &ToolContext) -> PermissionTarget;

    /// The tool's own opinion on a call (third step of the decision order).
    fn check_permissions(&self, _input: &Value, _ctx: &ToolContext) -> ToolVerdict {
        ToolVerdict::Passthrough
    }

    /// Whether the call only reads (no file, process or network state changes). Default: no,
    /// as in Claude Code's tool defaults: a tool that does not say is one that changes things.
    fn is_read_only(&self, _input: &Value) -> bool {
        false
    }

    /// Whether the call may destroy data (overwrite, delete).
    fn is_destructive(&self, _input: &Value) -> bool {
        false
    }

    /// Whether the call may run in parallel with other concurrency-safe calls.
    fn is_concurrency_safe(&self, input: &Value) -> bool {
        self.is_read_only(input)
    }

    /// A short text for the call itself ("Bash(ls -la src)").
    fn render_call(&self, input: &Value) -> String {
        format!("{}({})", self.name(), input)
    }

    /// A short text for progress ("3.2 s, 142 lines").
    fn render_progress(&self, progress: &ToolProgress) -> String {
        progress.to_string()
    }

    /// A short text for the result.
    fn render_result(&self, output: &ToolOutput) -> String {
        output.summary.clone()
    }
}

/// Deserializes an already-validated input into the tool's typed parameters.
pub fn parse_input<T: DeserializeOwned>(input: Value) -> Result<T, ToolError> {
    serde_json::from_value(input).map_err(|error| ToolError::InvalidInput(error.to_string()))
}

/// Runs one call the way the loop should: the input is validated against the schema, the call
/// runs, and any failure becomes an `is_error` output naming what went wrong.
pub async fn run_tool(tool: &dyn Tool, input: Value, ctx: &ToolContext) -> ToolOutput {
    if let Err(violation) = validate(&tool.input_schema(), &input) {
        return error_output(tool, &ToolError::Schema(violation));
    }
    if ctx.cancellation().is_cancelled() {
        return error_output(tool, &ToolError::Cancelled);
    }
    match tool.call(input, ctx).await {
        Ok(output) => output,
        Err(error) => error_output(tool, &error),
    }
}

fn error_output(tool: &dyn Tool, error: &ToolError) -> ToolOutput {
    tracing::debug!(tool = tool.name(), %error, "tool call failed");
    let content = match error {
        ToolError::Schema(_) | ToolError::InvalidInput(_) => {
            format!(
                "InputValidationError: {} was called with {error}",
                tool.name()
            )
        }
        ToolError::NotFound(_)
        | ToolError::IsDirectory(_)
        | ToolError::BinaryFile(_)
        | ToolError::Stale(_)
        | ToolError::OldStringNotFound(_)
        | ToolError::OldStringAmbiguous { .. }
        | ToolError::NoChange
        | ToolError::Io { .. }
        | ToolError::Cancelled
        | ToolError::Failed(_) => format!("Error: {error}"),
    };
    ToolOutput::error(content).with_summary(error.to_string())
}
