//! Topic files and the index: a memory is a Markdown file with frontmatter (`name`,
//! `description`, `type`) and a body, plus one line in `MEMORY.md`
//! (`- [Title](file.md) — hook`). Parsing is tolerant: a malformed file is skipped and reported,
//! never a panic.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::error::MemoryError;
use crate::memdir::{
    INDEX_FILE, MAX_INDEX_LINE_CHARS, MemoryDir, MemoryWriteLock, WRITE_LOCK_TIMEOUT,
    check_file_name,
};

/// The four kinds of memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MemoryType {
    /// Who the user is: role, expertise, preferences about working together.
    User,
    /// Guidance the user gave about how to work (do this, never that).
    Feedback,
    /// Facts about the project not in the code or its instruction files: stack, decisions,
    /// deadlines, who owns what.
    Project,
    /// Where to find things outside the repository (dashboards, tickets, docs).
    Reference,
}

impl MemoryType {
    /// Every type, in the order the prompts list them.
    pub const ALL: [MemoryType; 4] = [Self::User, Self::Feedback, Self::Project, Self::Reference];

    /// The type as written in frontmatter (`user`, `feedback`, `project`, `reference`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::User => "user",
            Self::Feedback => "feedback",
            Self::Project => "project",
            Self::Reference => "reference",
        }
    }

    /// The type written as `s`, if it is one.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|t| t.as_str().eq_ignore_ascii_case(s.trim()))
    }
}

impl fmt::Display for MemoryType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A topic file's frontmatter. Missing fields stay `None`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Frontmatter {
    /// `name:`, a short title.
    pub name: Option<String>,
    /// `description:`, what recall chooses by.
    pub description: Option<String>,
    /// `type:`.
    pub kind: Option<MemoryType>,
}

/// Why a file could not be read as a memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryIssue {
    /// The file.
    pub file: PathBuf,
    /// What is wrong with it.
    pub problem: String,
}

impl fmt::Display for MemoryIssue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.file.display(), self.problem)
    }
}

/// One topic file's header, as scanned.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryHeader {
    /// The file.
    pub path: PathBuf,
    /// Relative to the memory directory, `/`-separated (`project_stack.md`).
    pub file_name: String,
    /// Its frontmatter.
    pub frontmatter: Frontmatter,
    /// When it was last modified.
    pub modified: SystemTime,
    /// Problems that did not stop the file from being used (an unknown `type`, ...).
    pub warnings: Vec<String>,
}

impl MemoryHeader {
    /// The frontmatter name, else the file stem.
    pub fn title(&self) -> &str {
        self.frontmatter.name.as_deref().unwrap_or_else(|| {
            self.file_name
                .rsplit('/')
                .next()
                .and_then(|n| n.strip_suffix(".md"))
                .unwrap_or(&self.file_name)
        })
    }

    /// One manifest line: `- project_stack.md [project] Project stack: React 18, ...`.
    pub fn manifest_line(&self) -> String {
        let kind = self
            .frontmatter
            .kind
            .map_or_else(String::new, |k| format!(" [{k}]"));
        let description = self
            .frontmatter
            .description
            .as_deref()
            .map_or_else(String::new, |d| format!(": {d}"));
        format!("- {}{kind} {}{description}", self.file_name, self.title())
    }
}

/// What a scan found.
#[derive(Debug, Clone, Default)]
pub struct Scan {
    /// Newest first.
    pub memories: Vec<MemoryHeader>,
    /// Files that could not be read as memories.
    pub issues: Vec<MemoryIssue>,
}

impl Scan {
    /// The manifest given to the extraction fork and to recall: one line per memory.
    pub fn manifest(&self) -> String {
        self.memories
            .iter()
            .map(MemoryHeader::manifest_line)
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// Parses frontmatter at the top of `text`. `Err` says why the file is not a memory.
pub(crate) fn parse_frontmatter(text: &str) -> Result<(Frontmatter, Vec<String>), String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.lines();
    match lines.next() {
        Some(first) if first.trim_end() == "---" => {}
        _ => return Err("no frontmatter (the file must start with a `---` line)".to_owned()),
    }
    let mut fm = Frontmatter::default();
    let mut warnings = Vec::new();
    let mut closed = false;
    for line in lines {
        if line.trim_end() == "---" {
            closed = true;
            break;
        }
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let value = unquote(value.trim());
        if value.is_empty() {
            continue;
        }
        match key.trim() {
            "name" => fm.name = Some(value.to_owned()),
            "description" => fm.description = Some(value.to_owned()),
            "type" => match MemoryType::parse(value) {
                Some(kind) => fm.kind = Some(kind),
                None => warnings.push(format!(
                    "unknown type `{value}` (use user, feedback, project or reference)"
                )),
            },
            _ => {}
        }
    }
    if !closed {
        return Err("frontmatter is not closed by a `---` line".to_owned());
    }
    if fm.kind.is_none() && warnings.is_empty() {
        warnings.push("no `type` in the frontmatter".to_owned());
    }
    if fm.description.is_none() {
        warnings.push("no `description` in the frontmatter".to_owned());
    }
    Ok((fm, warnings))
}

fn unquote(value: &str) -> &str {
    for q in ['"', '\''] {
        if let Some(inner) = value.strip_prefix(q).and_then(|v| v.strip_suffix(q)) {
            return inner;
        }
    }
    value
}

/// Lines read from each file when scanning (frontmatter is at the top).
pub(crate) const SCAN_HEAD_LINES: usize = 30;

/// Scans the memory directory's topic files (every `*.md` but `MEMORY.md`, subdirectories
/// included, hidden entries skipped): newest first, at most `limit`, reading only the first
/// 30 lines of each. A missing directory is an empty scan.
pub fn scan_memories(dir: &Path, limit: usize) -> Scan {
    let mut found: Vec<(PathBuf, String, SystemTime)> = Vec::new();
    let mut scan = Scan::default();
    collect_md(dir, dir, 0, &mut found, &mut scan.issues);
    found.sort_by(|a, b| b.2.cmp(&a.2).then_with(|| a.1.cmp(&b.1)));
    for (path, file_name, modified) in found.into_iter().take(limit) {
        let head = match read_head(&path, SCAN_HEAD_LINES) {
            Ok(head) => head,
            Err(problem) => {
                scan.issues.push(MemoryIssue {
                    file: path,
                    problem,
                });
                continue;
            }
        };
        match parse_frontmatter(&head) {
            Ok((frontmatter, warnings)) => scan.memories.push(MemoryHeader {
                path,
                file_name,
                frontmatter,
                modified,
                warnings,
            }),
            Err(problem) => scan.issues.push(MemoryIssue {
                file: path,
                problem,
            }),
        }
    }
    scan
}

const MAX_SCAN_DEPTH: usize = 4;

fn collect_md(
    root: &Path,
    dir: &Path,
    depth: usize,
    found: &mut Vec<(PathBuf, String, SystemTime)>,
    issues: &mut Vec<MemoryIssue>,
) {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return,
        Err(e) => {
            issues.push(MemoryIssue {
                file: dir.to_path_buf(),
                problem: format!("cannot list: {e}"),
            });
            return;
        }
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.') {
            continue;
        }
        let path = entry.path();
        // Follows symlinks: a link may point anywhere, but reading is harmless and the user
        // may keep memories elsewhere on purpose.
        let Ok(meta) = std::fs::metadata(&path) else {
            continue;
        };
        if meta.is_dir() {
            if depth < MAX_SCAN_DEPTH {
                collect_md(root, &path, depth + 1, found, issues);
            }
            continue;
        }
        if !name.ends_with(".md") || (depth == 0 && name == INDEX_FILE) {
            continue;
        }
        let rel = path
            .strip_prefix(root)
            .map(|r| r.to_string_lossy().replace('\\', "/"))
            .unwrap_or_else(|_| name.to_string());
        let modified = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
        found.push((path, rel, modified));
    }
}

fn read_head(path: &Path, lines: usize) -> Result<String, String> {
    use std::io::{BufRead, BufReader};
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read: {e}"))?;
    let mut reader = BufReader::new(file);
    let mut out = String::new();
    let mut buf = Vec::new();
    for _ in 0..lines {
        buf.clear();
        match reader.read_until(b'\n', &mut buf) {
            Ok(0) => break,
            Ok(_) => match std::str::from_utf8(&buf) {
                Ok(s) => out.push_str(s),
                Err(_) => return Err("not UTF-8 text".to_owned()),
            },
            Err(e) => return Err(format!("cannot read: {e}")),
        }
    }
    Ok(out)
}

/// The text of a topic file.
pub(crate) fn render_topic(name: &str, description: &str, kind: MemoryType, body: &str) -> String {
    let one_line = |s: &str| s.replace(['\n', '\r'], " ");
    format!(
        "---\nname: {}\ndescription: {}\ntype: {kind}\n---\n\n{}\n",
        one_line(name),
        one_line(description),
        body.trim_end()
    )
}

/// An index line, `- [Title](file.md) — hook`, cut to [`MAX_INDEX_LINE_CHARS`] characters.
pub(crate) fn index_line(title: &str, file_name: &str, hook: &str) -> String {
    let line = format!(
        "- [{}]({file_name}) — {}",
        title.replace(['\n', '\r', '[', ']'], " "),
        hook.replace(['\n', '\r'], " ")
    );
    if line.chars().count() <= MAX_INDEX_LINE_CHARS {
        return line;
    }
    let mut cut: String = line.chars().take(MAX_INDEX_LINE_CHARS - 1).collect();
    cut.push('…');
    cut
}

/// A memory to save.
#[derive(Debug, Clone)]
pub struct NewMemory<'a> {
    /// The file name (`project_stack.md`).
    pub file_name: &'a str,
    /// The frontmatter's `name`.
    pub name: &'a str,
    /// The frontmatter's `description`.
    pub description: &'a str,
    /// The frontmatter's `type`.
    pub kind: MemoryType,
    /// The memory itself.
    pub body: &'a str,
}

/// Saves a memory: the topic file, and its index line (replacing the line that links the same
/// file, else appended). Both writes are atomic, and the whole read-modify-write holds the
/// directory's write lock, so sessions saving at once lose nothing. Blocking.
pub fn save_memory(dir: &MemoryDir, memory: &NewMemory<'_>) -> Result<PathBuf, MemoryError> {
    check_file_name(memory.file_name)?;
    let _lock = MemoryWriteLock::acquire(dir.path(), WRITE_LOCK_TIMEOUT)?;
    let path = dir.write_file(
        memory.file_name,
        &render_topic(memory.name, memory.description, memory.kind, memory.body),
    )?;
    let index_path = dir.index_path();
    let existing = match std::fs::read_to_string(&index_path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(MemoryError::io("cannot read", index_path, e)),
    };
    let line = index_line(memory.name, memory.file_name, memory.description);
    let link = format!("]({})", memory.file_name);
    let mut replaced = false;
    let mut lines: Vec<String> = existing
        .lines()
        .map(|l| {
            if !replaced && l.contains(&link) {
                replaced = true;
                line.clone()
            } else {
                l.to_owned()
            }
        })
        .collect();
    if !replaced {
        lines.push(line);
    }
    let mut text = lines.join("\n");
    text.push('\n');
    dir.write_file(INDEX_FILE, &text)?;
    Ok(path)
}

#[cfg(test)]
#[path = "topic_tests.rs"]
mod tests;
