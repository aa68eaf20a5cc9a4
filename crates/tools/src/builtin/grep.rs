//! Grep: ripgrep's search in process (`grep-regex`, `grep-searcher`, `ignore`), with
//! ripgrep's flags as Claude Code exposes them: output modes, context, case, multiline, file
//! types and globs, and pagination with `head_limit` / `offset`.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};
use ignore::overrides::OverrideBuilder;
use ignore::types::TypesBuilder;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::input::str_arg;
use super::walk::{
    collect_parallel, display_path, modified, render_search, search_blocking, search_root,
    search_target, walker,
};
use crate::context::ToolContext;
use crate::tool::{Tool, ToolError, ToolFuture, ToolOutput, parse_input};
use tine_permissions::PermissionTarget;

/// Entries (lines, files or counts) returned when the call sets no `head_limit`.
pub(crate) const DEFAULT_HEAD_LIMIT: usize = 250;
/// Characters kept of one output line (minified files would flood the context otherwise).
pub(crate) const MAX_LINE_CHARS: usize = 500;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
enum OutputMode {
    Content,
    #[default]
    FilesWithMatches,
    Count,
}

#[derive(Deserialize)]
struct GrepInput {
    pattern: String,
    path: Option<String>,
    glob: Option<String>,
    #[serde(rename = "type")]
    file_type: Option<String>,
    #[serde(default)]
    output_mode: OutputMode,
    #[serde(rename = "-A")]
    after: Option<usize>,
    #[serde(rename = "-B")]
    before: Option<usize>,
    #[serde(rename = "-C")]
    context: Option<usize>,
    #[serde(rename = "-n")]
    line_numbers: Option<bool>,
    #[serde(rename = "-i", default)]
    case_insensitive: bool,
    #[serde(default)]
    multiline: bool,
    head_limit: Option<usize>,
    #[serde(default)]
    offset: usize,
}

/// The Grep tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct GrepTool;

const DESCRIPTION: &str = "\
Searches file contents with ripgrep regular expressions (ripgrep's syntax, not grep's: escape \
literal braces, `interface\\{\\}`). Use it, not `grep` or `rg` through Bash. Files ignored by \
.gitignore are skipped; paths are relative to the working directory.
- `output_mode`: \"files_with_matches\" (the default: paths), \"content\" (matching lines, with \
-A/-B/-C context and -n line numbers) or \"count\".
- Narrow the files with `glob` (\"*.{ts,tsx}\") or `type` (\"py\", \"rust\").
- A pattern matches within one line unless `multiline` is true (`struct \\{[\\s\\S]*?field`).
- Results are paged: `head_limit` entries (default 250, 0 for all) after skipping `offset`.";

impl Tool for GrepTool {
    fn name(&self) -> &str {
        "Grep"
    }

    fn description(&self) -> String {
        DESCRIPTION.to_owned()
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "pattern": {
                    "type": "string",
                    "description": "The regular expression to search for"
                },
                "path": {
                    "type": "string",
                    "description": "File or directory to search (default: the working directory)"
                },
                "glob": {
                    "type": "string",
                    "description": "Only files matching this glob (rg --glob)"
                },
                "output_mode": {
                    "type": "string",
                    "enum": ["content", "files_with_matches", "count"],
                    "description": "Default: files_with_matches"
                },
                "-B": {
                    "type": "integer",
                    "minimum": 0,
                    "description": "Lines before each match (content mode)"
                },
                "-A": {
                    "type": "integer",
                    "minimum": 0,
                    "description": "Lines after each match (content mode)"
                },
                "-C": {
                    "type": "integer",
                    "minimum": 0,
                    "description": "Lines before and after each match (content mode)"
                },
                "-n": {
                    "type": "boolean",
                    "description": "Line numbers (content mode; default true)"
                },
                "-i": {
                    "type": "boolean",
                    "description": "Case insensitive"
                },
                "type": {
                    "type": "string",
                    "description": "File type (rg --type): js, py, rust, go, java, ..."
                },
                "head_limit": {
                    "type": "integer",
                    "minimum": 0,
                    "description": "At most this many lines or entries (default 250; 0: no limit)"
                },
                "offset": {
                    "type": "integer",
                    "minimum": 0,
                    "description": "Lines or entries to skip first (default 0)"
                },
                "multiline": {
                    "type": "boolean",
                    "description": "Let . match newlines and a pattern span lines (rg -U --multiline-dotall)"
                }
            },
            "required": ["pattern"],
            "additionalProperties": false
        })
    }

    fn call<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let input: GrepInput = parse_input(input)?;
            let root = search_root(input.path.as_deref(), ctx)?;
            let search = Search::prepare(&input, &root)?;
            let files = search_blocking(ctx, move |cancel| search.run(&root, cancel)).await?;
            Ok(render(&input, files, &ctx.cwd()))
        })
    }

    fn permission_target(&self, input: &Value, ctx: &ToolContext) -> PermissionTarget {
        search_target(input, ctx)
    }

    fn is_read_only(&self, _input: &Value) -> bool {
        true
    }

    fn render_call(&self, input: &Value) -> String {
        let pattern = str_arg(input, "pattern").unwrap_or("?");
        render_search("Grep", &format!("\"{pattern}\""), input)
    }
}

/// One output line of a file's matches.
enum Line {
    Match(Option<u64>, Vec<u8>),
    Context(Option<u64>, Vec<u8>),
    Break,
}

/// What one file yielded.
struct FileResult {
    path: PathBuf,
    mtime: SystemTime,
    /// Matching lines (or matches, in multiline mode).
    count: u64,
    lines: Vec<Line>,
}

/// A prepared search: the matcher, the searcher's settings and the walk's filters.
struct Search {
    matcher: RegexMatcher,
    mode: OutputMode,
    before: usize,
    after: usize,
    multiline: bool,
    types: ignore::types::Types,
    overrides: ignore::overrides::Override,
}

impl Search {
    fn prepare(input: &GrepInput, root: &Path) -> Result<Self, ToolError> {
        let mut builder = RegexMatcherBuilder::new();
        builder.case_insensitive(input.case_insensitive);
        if input.multiline {
            builder.multi_line(true).dot_matches_new_line(true);
        } else {
            builder.line_terminator(Some(b'\n'));
        }
        let matcher = builder.build(&input.pattern).map_err(|error| {
            ToolError::InvalidInput(format!("`pattern` is not a valid regex: {error}"))
        })?;

        let mut types = TypesBuilder::new();
        types.add_defaults();
        if let Some(name) = &input.file_type {
            types.select(name);
        }
        let types = types.build().map_err(|error| {
            ToolError::InvalidInput(format!(
                "`type` is not a known file type ({error}); use names like rust, py, js, ts, go"
            ))
        })?;

        let mut overrides = OverrideBuilder::new(root);
        if let Some(globs) = &input.glob {
            for glob in globs.split_whitespace() {
                overrides.add(glob).map_err(|error| {
                    ToolError::InvalidInput(format!("`glob` is not a valid glob: {error}"))
                })?;
            }
        }
        let overrides = overrides.build().map_err(|error| {
            ToolError::InvalidInput(format!("`glob` is not a valid glob: {error}"))
        })?;

        let (before, after) = match input.output_mode {
            OutputMode::Content => {
                let both = input.context.unwrap_or(0);
                (input.before.unwrap_or(both), input.after.unwrap_or(both))
            }
            OutputMode::FilesWithMatches | OutputMode::Count => (0, 0),
        };
        Ok(Self {
            matcher,
            mode: input.output_mode,
            before,
            after,
            multiline: input.multiline,
            types,
            overrides,
        })
    }

    fn searcher(&self) -> Searcher {
        SearcherBuilder::new()
            .line_number(true)
            .multi_line(self.multiline)
            .before_context(self.before)
            .after_context(self.after)
            .binary_detection(BinaryDetection::quit(0))
            .build()
    }

    fn run(&self, root: &Path, cancel: &CancellationToken) -> Result<Vec<FileResult>, ToolError> {
        let mut walk = walker(root);
        walk.types(self.types.clone())
            .overrides(self.overrides.clone());
        let mut files = collect_parallel(&walk, cancel, || {
            let matcher = self.matcher.clone();
            let mut searcher = self.searcher();
            let mode = self.mode;
            Box::new(move |entry| {
                if !entry.file_type().is_some_and(|kind| kind.is_file()) {
                    return None;
                }
                let mut sink = FileSink {
                    mode,
                    count: 0,
                    lines: Vec::new(),
                };
                if let Err(error) = searcher.search_path(&matcher, entry.path(), &mut sink) {
                    tracing::debug!(path = %entry.path().display(), %error, "grep skipped a file");
                    return None;
                }
                if sink.count == 0 {
                    return None;
                }
                let mtime = match mode {
                    OutputMode::FilesWithMatches => modified(&entry),
                    OutputMode::Content | OutputMode::Count => SystemTime::UNIX_EPOCH,
                };
                Some(FileResult {
                    path: entry.into_path(),
                    mtime,
                    count: sink.count,
                    lines: sink.lines,
                })
            })
        });
        match self.mode {
            OutputMode::FilesWithMatches => {
                files.sort_by(|a, b| b.mtime.cmp(&a.mtime).then_with(|| a.path.cmp(&b.path)))
            }
            OutputMode::Content | OutputMode::Count => files.sort_by(|a, b| a.path.cmp(&b.path)),
        }
        Ok(files)
    }
}

struct FileSink {
    mode: OutputMode,
    count: u64,
    lines: Vec<Line>,
}

fn strip_terminator(bytes: &[u8]) -> Vec<u8> {
    let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    bytes.strip_suffix(b"\r").unwrap_or(bytes).to_vec()
}

impl Sink for FileSink {
    type Error = std::io::Error;

    fn matched(
        &mut self,
        _searcher: &Searcher,
        found: &SinkMatch<'_>,
    ) -> Result<bool, Self::Error> {
        self.count += 1;
        match self.mode {
            // One match is enough to list the file.
            OutputMode::FilesWithMatches => Ok(false),
            OutputMode::Count => Ok(true),
            OutputMode::Content => {
                let first = found.line_number();
                for (index, line) in found.lines().enumerate() {
                    let number = first.map(|first| first + index as u64);
                    self.lines.push(Line::Match(number, strip_terminator(line)));
                }
                Ok(true)
            }
        }
    }

    fn context(
        &mut self,
        _searcher: &Searcher,
        context: &SinkContext<'_>,
    ) -> Result<bool, Self::Error> {
        self.lines.push(Line::Context(
            context.line_number(),
            strip_terminator(context.bytes()),
        ));
        Ok(true)
    }

    fn context_break(&mut self, _searcher: &Searcher) -> Result<bool, Self::Error> {
        self.lines.push(Line::Break);
        Ok(true)
    }
}

fn shown_text(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    match text.char_indices().nth(MAX_LINE_CHARS) {
        Some((cut, _)) => format!("{} [... line truncated]", &text[..cut]),
        None => text.into_owned(),
    }
}

fn render(input: &GrepInput, files: Vec<FileResult>, cwd: &Path) -> ToolOutput {
    let numbered = input.line_numbers.unwrap_or(true);
    let with_context = input.before.or(input.after).or(input.context).unwrap_or(0) > 0;
    let mut entries: Vec<String> = Vec::new();
    match input.output_mode {
        OutputMode::FilesWithMatches => {
            entries.extend(files.iter().map(|file| display_path(&file.path, cwd)));
        }
        OutputMode::Count => {
            entries.extend(
                files
                    .iter()
                    .map(|file| format!("{}:{}", display_path(&file.path, cwd), file.count)),
            );
        }
        OutputMode::Content => {
            for (index, file) in files.iter().enumerate() {
                if with_context && index > 0 {
                    entries.push("--".to_owned());
                }
                let path = display_path(&file.path, cwd);
                for line in &file.lines {
                    let (separator, number, bytes) = match line {
                        Line::Match(number, bytes) => (':', number, bytes),
                        Line::Context(number, bytes) => ('-', number, bytes),
                        Line::Break => {
                            entries.push("--".to_owned());
                            continue;
                        }
                    };
                    let text = shown_text(bytes);
                    entries.push(match (numbered, number) {
                        (true, Some(number)) => {
                            format!("{path}{separator}{number}{separator}{text}")
                        }
                        _ => format!("{path}{separator}{text}"),
                    });
                }
            }
        }
    }

    let total = entries.len();
    let limit = input.head_limit.unwrap_or(DEFAULT_HEAD_LIMIT);
    let shown: Vec<String> = entries
        .into_iter()
        .skip(input.offset)
        .take(if limit == 0 { usize::MAX } else { limit })
        .collect();
    let paginated = input.offset > 0 || input.offset + shown.len() < total;
    let pagination = if paginated {
        format!(
            "\n\n[Showing results with pagination = limit: {limit}, offset: {}; {total} in all]",
            input.offset
        )
    } else {
        String::new()
    };

    let files_found = files.len();
    let plural = |n: usize| if n == 1 { "file" } else { "files" };
    match input.output_mode {
        OutputMode::FilesWithMatches => {
            if files_found == 0 {
                return ToolOutput::text("No files found").with_summary("Found 0 files");
            }
            ToolOutput::text(format!(
                "Found {files_found} {}\n{}{pagination}",
                plural(files_found),
                shown.join("\n")
            ))
            .with_summary(format!("Found {files_found} {}", plural(files_found)))
        }
        OutputMode::Content => {
            if files_found == 0 {
                return ToolOutput::text("No matches found").with_summary("Found 0 lines");
            }
            let matches: u64 = files.iter().map(|file| file.count).sum();
            ToolOutput::text(format!("{}{pagination}", shown.join("\n"))).with_summary(format!(
                "Found {matches} matching lines in {files_found} {}",
                plural(files_found)
            ))
        }
        OutputMode::Count => {
            if files_found == 0 {
                return ToolOutput::text("No matches found").with_summary("Found 0 matches");
            }
            let matches: u64 = files.iter().map(|file| file.count).sum();
            ToolOutput::text(format!(
                "{}\n\nFound {matches} total occurrences across {files_found} {}.{pagination}",
                shown.join("\n"),
                plural(files_found)
            ))
            .with_summary(format!(
                "Found {matches} matches in {files_found} {}",
                plural(files_found)
            ))
        }
    }
}
