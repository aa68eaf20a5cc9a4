//! The `@` file picker: while the word at the cursor starts with `@`, the project's files and
//! directories that fuzzy-match what follows it (nucleo's matcher, scored as paths) are listed
//! under the prompt box, the best first; Tab or Enter puts `@path ` in place of the typed
//! `@query`, Esc closes the list until the text changes.
//!
//! The index is the project walked once, the first time the picker opens, as Glob and Grep
//! walk it (`.gitignore` honoured; [`tine_tools::project_paths`]), at most [`MAX_ENTRIES`]
//! entries, on a thread of its own so typing never waits for the disk; it is kept for the
//! session. Until it is in, the list is empty and the app polls for it ([`MentionPicker::deadline`]).

use std::path::PathBuf;
use std::sync::mpsc::{self, Receiver, TryRecvError};
use std::time::Duration;

use nucleo_matcher::pattern::{CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher};
use ratatui::text::{Line, Span};
use tokio::time::Instant;

use crate::theme;

/// At most this many files and directories are indexed.
pub(crate) const MAX_ENTRIES: usize = 20_000;
/// At most this many matches are listed.
pub(crate) const MAX_ROWS: usize = 8;
/// How often the app looks whether the walk is done, while it runs and the picker is open.
const POLL: Duration = Duration::from_millis(25);

/// The project's paths (directories with a trailing `/`), or the walk making them.
enum Index {
    Unwalked,
    Walking(Receiver<Vec<String>>),
    Ready(Vec<String>),
}

/// The `@query` being typed: where its `@` is, and what follows it up to the cursor.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Typed {
    start: usize,
    end: usize,
    query: String,
}

/// The picker's state: the index, the `@query` at the cursor, its best matches and the
/// selected one.
pub(crate) struct MentionPicker {
    index: Index,
    /// Made on the first match (its scratch memory is not small).
    matcher: Option<Matcher>,
    typed: Option<Typed>,
    matches: Vec<String>,
    selected: usize,
    /// The text the list was closed for (Esc); it opens again once the text changes.
    dismissed_for: Option<String>,
}

impl Default for MentionPicker {
    fn default() -> Self {
        Self {
            index: Index::Unwalked,
            matcher: None,
            typed: None,
            matches: Vec::new(),
            selected: 0,
            dismissed_for: None,
        }
    }
}

impl MentionPicker {
    /// Follows the prompt box: `text` with the cursor at byte `cursor`, in the project `root`
    /// (none before the session said where it runs). The first `@` starts the walk.
    pub(crate) fn refresh(&mut self, text: &str, cursor: usize, root: Option<&PathBuf>) {
        if self.dismissed_for.as_deref() != Some(text) {
            self.dismissed_for = None;
        }
        let typed = typed_at(text, cursor).filter(|_| self.dismissed_for.is_none());
        let Some(typed) = typed else {
            self.close();
            return;
        };
        if let (Index::Unwalked, Some(root)) = (&self.index, root) {
            self.index = walk(root.clone());
        }
        self.poll();
        let changed = self.typed.as_ref().map(|t| &t.query) != Some(&typed.query);
        self.typed = Some(typed);
        if changed {
            self.selected = 0;
            self.rematch();
        }
    }

    /// Takes the walk's result if it is done; whether it just came in (the list may change).
    pub(crate) fn poll(&mut self) -> bool {
        let Index::Walking(rx) = &self.index else {
            return false;
        };
        let paths = match rx.try_recv() {
            Ok(paths) => paths,
            Err(TryRecvError::Empty) => return false,
            Err(TryRecvError::Disconnected) => Vec::new(),
        };
        self.index = Index::Ready(paths);
        self.rematch();
        true
    }

    /// When to look for the walk's result again: soon, while it runs and the picker is open.
    pub(crate) fn deadline(&self) -> Option<Instant> {
        (matches!(self.index, Index::Walking(_)) && self.typed.is_some())
            .then(|| Instant::now() + POLL)
    }

    /// Whether the list shows (an `@query` is typed and something matches it).
    pub(crate) fn is_open(&self) -> bool {
        self.typed.is_some() && !self.matches.is_empty()
    }

    /// The listed paths, the best first.
    #[cfg(test)]
    pub(crate) fn matches(&self) -> &[String] {
        &self.matches
    }

    /// The selected row.
    pub(crate) fn selected(&self) -> usize {
        self.selected.min(self.matches.len().saturating_sub(1))
    }

    /// Up (`-1`) or Down (`1`), wrapping around.
    pub(crate) fn move_by(&mut self, delta: isize) {
        let count = self.matches.len();
        if count == 0 {
            return;
        }
        let n = isize::try_from(count).unwrap_or(isize::MAX);
        let current = isize::try_from(self.selected()).unwrap_or(0);
        self.selected = usize::try_from((current + delta).rem_euclid(n)).unwrap_or(0);
    }

    /// Esc: closed until `text` changes.
    pub(crate) fn dismiss(&mut self, text: &str) {
        self.dismissed_for = Some(text.to_owned());
        self.close();
    }

    /// What Tab or Enter does: the byte range of the typed `@query` and the `@path ` that
    /// takes its place (quoted when the path has a space, as `@"a b.txt"` is read).
    pub(crate) fn chosen(&self) -> Option<(std::ops::Range<usize>, String)> {
        let typed = self.typed.as_ref()?;
        let path = self.matches.get(self.selected())?;
        let mention = if path.contains(char::is_whitespace) {
            format!("@\"{path}\" ")
        } else {
            format!("@{path} ")
        };
        Some((typed.start..typed.end, mention))
    }

    /// The list's rows.
    pub(crate) fn rows(&self, width: u16) -> Vec<Line<'static>> {
        if !self.is_open() {
            return Vec::new();
        }
        let selected = self.selected();
        self.matches
            .iter()
            .enumerate()
            .map(|(i, path)| {
                let chosen = i == selected;
                let style = if chosen {
                    theme::selected()
                } else {
                    ratatui::style::Style::default()
                };
                let line = Line::from(vec![
                    Span::styled(if chosen { "❯ " } else { "  " }, style),
                    Span::styled(format!("@{path}"), style),
                ]);
                crate::wrap::truncate(line, usize::from(width))
            })
            .collect()
    }

    fn close(&mut self) {
        self.typed = None;
        self.matches.clear();
        self.selected = 0;
    }

    /// The best [`MAX_ROWS`] matches of the typed query; ties keep the index's order (shorter
    /// paths first).
    fn rematch(&mut self) {
        self.matches.clear();
        let (Some(typed), Index::Ready(paths)) = (&self.typed, &self.index) else {
            return;
        };
        if typed.query.is_empty() {
            self.matches = paths.iter().take(MAX_ROWS).cloned().collect();
            return;
        }
        let matcher = self
            .matcher
            .get_or_insert_with(|| Matcher::new(Config::DEFAULT.match_paths()));
        let pattern = Pattern::parse(&typed.query, CaseMatching::Smart, Normalization::Smart);
        self.matches = pattern
            .match_list(paths.iter(), matcher)
            .into_iter()
            .take(MAX_ROWS)
            .map(|(path, _)| path.clone())
            .collect();
    }
}

/// The `@query` that ends at `cursor`: a word (after the start or a space) starting with `@`,
/// not a quoted one.
fn typed_at(text: &str, cursor: usize) -> Option<Typed> {
    let before = text.get(..cursor)?;
    let start = before
        .char_indices()
        .rev()
        .find(|(_, c)| c.is_whitespace())
        .map_or(0, |(i, c)| i + c.len_utf8());
    let query = before[start..].strip_prefix('@')?;
    if query.starts_with('"') {
        return None;
    }
    Some(Typed {
        start,
        end: cursor,
        query: query.to_owned(),
    })
}

/// The walk of `root` on its own thread.
fn walk(root: PathBuf) -> Index {
    let (tx, rx) = mpsc::channel();
    let spawned = std::thread::Builder::new()
        .name("tine-at-index".into())
        .spawn(move || {
            let _ = tx.send(index_of(&tine_tools::project_paths(&root, MAX_ENTRIES)));
        });
    match spawned {
        Ok(_) => Index::Walking(rx),
        Err(error) => {
            tracing::warn!(%error, "the @ picker could not start its walk of the project");
            Index::Ready(Vec::new())
        }
    }
}

/// The walked paths as listed: directories with a trailing `/`, shorter paths first.
fn index_of(paths: &[(String, bool)]) -> Vec<String> {
    let mut out: Vec<String> = paths
        .iter()
        .map(|(path, dir)| {
            if *dir {
                format!("{path}/")
            } else {
                path.clone()
            }
        })
        .collect();
    out.sort_by(|a, b| a.len().cmp(&b.len()).then_with(|| a.cmp(b)));
    out
}

#[cfg(test)]
#[path = "at_mention_tests.rs"]
mod tests;
