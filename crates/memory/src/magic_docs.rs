//! Magic Docs (seed 001 §16.2.4 ③): a file whose first line is `# MAGIC DOC: <title>`
//! (optionally followed by an italic instruction line) is tracked once the session's Read tool
//! shows it, and kept true to the conversation by [`crate::magic_docs_job`]'s fork after each
//! main turn.
//!
//! - [`detect_magic_doc_header`]: the header and its instruction, from a file's first lines.
//! - [`MagicDocs`]: the session's tracked files. Read tells it through the context's
//!   [`FileReadListener`] ([`MagicDocs::listener`]); a resumed session rebuilds it from the
//!   Read calls of its transcript ([`MagicDocs::rebuild_from`]).
//! - [`MagicDocsOptions`]: the `magicDocsEnabled` setting. Off, nothing is installed: no
//!   listener, no job, no byte sent.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use serde_json::Value;
use tine_api_client::{ContentBlock, Message, MessageContent, Role};
use tine_config::settings::LoadedSettings;
use tine_tools::{FileReadListener, HEAD_LINES};

/// The setting that turns Magic Docs off (`false`); on by default.
pub(crate) const MAGIC_DOCS_SETTING: &str = "magicDocsEnabled";

/// The first line's prefix (matched without regard to case or the spaces around its words).
pub const MAGIC_DOC_PREFIX: &str = "# MAGIC DOC:";

/// A Magic Doc's header, as its file says it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MagicDocHeader {
    /// What follows `# MAGIC DOC:`, trimmed.
    pub title: String,
    /// The first line exactly as written (the fork must keep it).
    pub header_line: String,
    /// The italic line after the header (`_..._` or `*...*`, one blank line allowed before
    /// it), without its markers; `None` when there is none.
    pub instruction: Option<String>,
    /// That line exactly as written.
    pub instruction_line: Option<String>,
}

/// The header of a Magic Doc from the first lines of its text, or `None` when the first line
/// is not `# MAGIC DOC: <title>` with a non-empty title.
pub(crate) fn detect_magic_doc_header(text: &str) -> Option<MagicDocHeader> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.lines();
    let header_line = lines.next()?.trim_end_matches('\r');
    let title = magic_title(header_line)?;
    let mut next = lines.next().map(|l| l.trim_end_matches('\r'));
    if next.is_some_and(|l| l.trim().is_empty()) {
        next = lines.next().map(|l| l.trim_end_matches('\r'));
    }
    let instruction = next.and_then(italic_text);
    Some(MagicDocHeader {
        title,
        header_line: header_line.to_owned(),
        instruction_line: instruction.as_ref().and(next).map(str::to_owned),
        instruction,
    })
}

/// The title of a `# MAGIC DOC: title` line.
fn magic_title(line: &str) -> Option<String> {
    let rest = line.trim_start().strip_prefix('#')?.trim_start();
    let (magic, rest) = rest.split_at_checked(5)?;
    if !magic.eq_ignore_ascii_case("MAGIC") || !rest.starts_with(char::is_whitespace) {
        return None;
    }
    let rest = rest.trim_start();
    let (doc, rest) = rest.split_at_checked(3)?;
    if !doc.eq_ignore_ascii_case("DOC") {
        return None;
    }
    let title = rest.trim_start().strip_prefix(':')?.trim();
    (!title.is_empty()).then(|| title.to_owned())
}

/// The text of a line wholly in italics (`_text_` or `*text*`, not `**bold**`).
fn italic_text(line: &str) -> Option<String> {
    let line = line.trim();
    let inner = ['_', '*'].into_iter().find_map(|mark| {
        let inner = line.strip_prefix(mark)?.strip_suffix(mark)?;
        (!inner.starts_with(mark) && !inner.ends_with(mark)).then_some(inner)
    })?;
    let inner = inner.trim();
    (!inner.is_empty()).then(|| inner.to_owned())
}

/// Reads the first lines of `path` from disk and detects its header (blocking I/O: a few
/// kilobytes at most).
pub(crate) fn read_magic_doc_header(path: &Path) -> Option<MagicDocHeader> {
    use std::io::Read;
    let file = std::fs::File::open(path).ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut head = Vec::with_capacity(4096);
    file.take(4096).read_to_end(&mut head).ok()?;
    detect_magic_doc_header(&String::from_utf8_lossy(&head))
}

/// The session's tracked Magic Docs, by the path Read resolved. Clones share one set.
#[derive(Clone, Default)]
pub struct MagicDocs {
    tracked: Arc<Mutex<BTreeMap<PathBuf, MagicDocHeader>>>,
}

impl std::fmt::Debug for MagicDocs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.lock().keys()).finish()
    }
}

impl MagicDocs {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, BTreeMap<PathBuf, MagicDocHeader>> {
        self.tracked.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Tracks `path` (absolute) with `header`; a second read of it refreshes the header.
    pub fn track(&self, path: &Path, header: MagicDocHeader) {
        let newly = self.lock().insert(path.to_path_buf(), header).is_none();
        if newly {
            tracing::debug!(path = %path.display(), "tracking a magic doc");
        }
    }

    /// Stops tracking `path` (its header is gone).
    pub fn untrack(&self, path: &Path) {
        self.lock().remove(path);
    }

    /// The tracked files and their headers, by path.
    pub fn tracked(&self) -> Vec<(PathBuf, MagicDocHeader)> {
        self.lock()
            .iter()
            .map(|(p, h)| (p.clone(), h.clone()))
            .collect()
    }

    /// Whether no file is tracked (the job then starts nothing).
    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }

    /// What Read calls with each file it shows from line 1: a Magic Doc's header tracks it.
    pub fn listener(&self) -> FileReadListener {
        let docs = self.clone();
        FileReadListener(Arc::new(move |path: &Path, head: &str| {
            if let Some(header) = detect_magic_doc_header(head) {
                docs.track(path, header);
            }
        }))
    }

    /// Tracks again what a resumed session's Read calls showed: every `file_path` a
    /// successful Read of `messages` named (from line 1), resolved against `cwd` as the tool
    /// resolves it, that is a Magic Doc on disk now. Blocking I/O (one small read per file):
    /// call it at start-up, off the runtime's hot path.
    pub fn rebuild_from(&self, messages: &[Message], cwd: &Path) {
        for path in read_paths(messages, cwd) {
            if let Some(header) = read_magic_doc_header(&path) {
                self.track(&path, header);
            }
        }
    }
}

/// The files that successful Read calls from line 1 in `messages` showed, resolved against
/// `cwd`, in order and without repeats.
fn read_paths(messages: &[Message], cwd: &Path) -> Vec<PathBuf> {
    let blocks = |m: &'_ Message| match &m.content {
        MessageContent::Blocks(blocks) => blocks.clone(),
        MessageContent::Text(_) => Vec::new(),
    };
    let failed: Vec<String> = messages
        .iter()
        .filter(|m| m.role == Role::User)
        .flat_map(blocks)
        .filter_map(|b| match b {
            ContentBlock::ToolResult(r) if r.is_error == Some(true) => Some(r.tool_use_id),
            _ => None,
        })
        .collect();
    let mut paths: Vec<PathBuf> = Vec::new();
    for block in messages
        .iter()
        .filter(|m| m.role == Role::Assistant)
        .flat_map(blocks)
    {
        let ContentBlock::ToolUse(call) = block else {
            continue;
        };
        if call.name != "Read" || failed.contains(&call.id) {
            continue;
        }
        if call
            .input
            .get("offset")
            .and_then(Value::as_u64)
            .unwrap_or(1)
            > 1
        {
            continue;
        }
        let Some(file_path) = call.input.get("file_path").and_then(Value::as_str) else {
            continue;
        };
        let path = tine_permissions::normalize(&cwd.join(file_path));
        if !paths.contains(&path) {
            paths.push(path);
        }
    }
    paths
}

/// Whether Magic Docs run in this session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MagicDocsOptions {
    /// `magicDocsEnabled` (default on).
    pub enabled: bool,
}

impl Default for MagicDocsOptions {
    fn default() -> Self {
        Self { enabled: true }
    }
}

impl MagicDocsOptions {
    /// The options from settings; a value that is not a boolean is ignored with a warning
    /// for the host to show.
    pub fn from_settings(settings: &LoadedSettings) -> (Self, Option<String>) {
        let mut options = Self::default();
        let Some((value, source)) = settings.get(MAGIC_DOCS_SETTING) else {
            return (options, None);
        };
        match value.as_bool() {
            Some(on) => {
                options.enabled = on;
                (options, None)
            }
            None => (
                options,
                Some(format!(
                    "`{MAGIC_DOCS_SETTING}` in {} must be true or false, not {value}; Magic Docs \
                     stay on",
                    source.as_str()
                )),
            ),
        }
    }
}

/// The lines of `HEAD_LINES` Read hands over are enough for a header and its instruction.
const _: () = assert!(HEAD_LINES >= 3);

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn the_header_needs_the_first_line_and_a_title() {
        let h = detect_magic_doc_header(
            "# MAGIC DOC: System Architecture\n_Keep this up to date._\nbody",
        )
        .unwrap();
        assert_eq!(h.title, "System Architecture");
        assert_eq!(h.header_line, "# MAGIC DOC: System Architecture");
        assert_eq!(h.instruction.as_deref(), Some("Keep this up to date."));
        assert_eq!(
            h.instruction_line.as_deref(),
            Some("_Keep this up to date._")
        );

        let h = detect_magic_doc_header("#  magic  doc :  T \n\n*be brief*\n").unwrap();
        assert_eq!(h.title, "T");
        assert_eq!(h.instruction.as_deref(), Some("be brief"));

        let h = detect_magic_doc_header("\u{feff}# MAGIC DOC: T\r\n**bold**\r\n").unwrap();
        assert_eq!(h.instruction, None);
        assert_eq!(h.header_line, "# MAGIC DOC: T");

        for not_magic in [
            "",
            "# MAGIC DOC:",
            "# MAGIC DOC:   ",
            "intro\n# MAGIC DOC: T",
            "# MAGICDOC: T",
            "## Notes: MAGIC DOC: T",
            "MAGIC DOC: T",
        ] {
            assert_eq!(detect_magic_doc_header(not_magic), None, "{not_magic:?}");
        }
    }

    #[test]
    fn a_resumed_session_tracks_what_its_reads_showed_that_is_still_magic() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        std::fs::create_dir_all(cwd.join("src")).unwrap();
        std::fs::write(cwd.join("src/ARCH.md"), "# MAGIC DOC: Arch\n").unwrap();
        std::fs::write(cwd.join("plain.md"), "# Plain\n").unwrap();
        std::fs::write(cwd.join("failed.md"), "# MAGIC DOC: F\n").unwrap();
        std::fs::write(cwd.join("later.md"), "# MAGIC DOC: L\n").unwrap();
        let call = |id: &str, input: Value| ContentBlock::tool_use(id, "Read", input);
        let messages = vec![
            Message::user(vec![ContentBlock::text("read them")]),
            Message::assistant(vec![
                call("a", serde_json::json!({"file_path": "src/ARCH.md"})),
                call("b", serde_json::json!({"file_path": "plain.md"})),
                call("c", serde_json::json!({"file_path": "failed.md"})),
                call(
                    "d",
                    serde_json::json!({"file_path": "later.md", "offset": 5}),
                ),
            ]),
            Message::user(vec![
                ContentBlock::tool_result("a", "1\t# MAGIC DOC: Arch", false),
                ContentBlock::tool_result("b", "1\t# Plain", false),
                ContentBlock::tool_result("c", "no such file", true),
                ContentBlock::tool_result("d", "", false),
            ]),
        ];
        let docs = MagicDocs::new();
        docs.rebuild_from(&messages, cwd);
        let tracked = docs.tracked();
        assert_eq!(tracked.len(), 1, "{tracked:?}");
        assert_eq!(tracked[0].0, cwd.join("src/ARCH.md"));
        assert_eq!(tracked[0].1.title, "Arch");
    }
}
