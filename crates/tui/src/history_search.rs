//! Ctrl+R: searching the prompt history as bash's reverse-i-search and Claude Code's do. The
//! prompts searched are the prompt box's history (this project's history file, then this
//! run's), the newest match first, again as the query changes; Ctrl+R again goes to the next
//! older match (the same prompt is not offered twice). The box shows the match with the query
//! highlighted and `search prompts: <query>` under it.
//!
//! Keys, as Claude Code's documentation gives them: Enter sends the match at once (Claude
//! Code's "accept and execute", also bash's), Tab and → put it in the box to edit; Ctrl+C
//! and Backspace on an empty query cancel and restore what was typed. Esc and Ctrl+G cancel
//! too (bash's Ctrl+G, and Esc closes every other list of this UI; Claude Code's Esc accepts
//! instead: this is where tine differs, so Esc never loses what was typed).

use std::collections::HashSet;
use std::ops::Range;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthChar;

use crate::theme;

/// What a key did to the search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SearchOutcome {
    /// Still searching.
    Searching,
    /// Closed: the box gets `text` back (the match taken, or what was typed before).
    Closed { text: String, send: bool },
}

/// The search, while it is open.
#[derive(Debug, Default)]
pub(crate) struct HistorySearch {
    open: bool,
    query: String,
    /// What the box held when the search began, given back on cancel.
    draft: String,
    /// The prompt shown: its index in the history and where the query is in it.
    found: Option<(usize, Range<usize>)>,
    /// The last query (or Ctrl+R) found nothing (more): the match shown is an earlier one.
    failed: bool,
    /// The prompts offered for this query (a prompt sent several times is offered once).
    offered: HashSet<String>,
}

impl HistorySearch {
    pub(crate) fn is_open(&self) -> bool {
        self.open
    }

    /// Ctrl+R on the prompt: the search opens on the newest prompt.
    pub(crate) fn open(&mut self, draft: &str, history: &[String]) {
        *self = Self {
            open: true,
            draft: draft.to_owned(),
            ..Self::default()
        };
        self.search(history, false);
    }

    /// One key while open.
    pub(crate) fn key(&mut self, key: KeyEvent, history: &[String]) -> SearchOutcome {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        match key.code {
            KeyCode::Char('r') if ctrl => {
                self.search(history, true);
            }
            KeyCode::Char('c' | 'g') if ctrl => return self.cancel(),
            KeyCode::Esc => return self.cancel(),
            KeyCode::Enter => return self.accept(history, true),
            KeyCode::Tab | KeyCode::Right => return self.accept(history, false),
            KeyCode::Backspace if self.query.is_empty() => return self.cancel(),
            KeyCode::Backspace => {
                self.query.pop();
                self.search(history, false);
            }
            KeyCode::Char(c) if !ctrl && !alt => {
                self.query.push(c);
                self.search(history, false);
            }
            _ => {}
        }
        SearchOutcome::Searching
    }

    /// Pasted text joins the query (its first line: prompts are searched a line at a time).
    pub(crate) fn paste(&mut self, text: &str, history: &[String]) {
        let line = text.lines().next().unwrap_or_default();
        self.query.push_str(line);
        self.search(history, false);
    }

    fn cancel(&mut self) -> SearchOutcome {
        self.open = false;
        SearchOutcome::Closed {
            text: std::mem::take(&mut self.draft),
            send: false,
        }
    }

    /// The match into the box (and sent, for Enter); with none found, what was typed comes
    /// back and nothing is sent.
    fn accept(&mut self, history: &[String], send: bool) -> SearchOutcome {
        self.open = false;
        match self.found.take().and_then(|(i, _)| history.get(i)) {
            Some(text) => SearchOutcome::Closed {
                text: text.clone(),
                send,
            },
            None => SearchOutcome::Closed {
                text: std::mem::take(&mut self.draft),
                send: false,
            },
        }
    }

    /// The newest prompt before index `before` holding the query, not offered yet for this
    /// query (`older`: Ctrl+R goes on from the match shown; else the query changed and the
    /// search starts over). Where there is none, the match shown stays and the search says it
    /// failed.
    fn search(&mut self, history: &[String], older: bool) {
        let before = match (&self.found, older) {
            (Some((i, _)), true) => *i,
            _ => {
                self.offered.clear();
                history.len()
            }
        };
        let hit = history[..before.min(history.len())]
            .iter()
            .enumerate()
            .rev()
            .filter(|(_, text)| !self.offered.contains(*text))
            .find_map(|(i, text)| find_ignoring_case(text, &self.query).map(|r| (i, r)));
        self.failed = hit.is_none();
        match hit {
            Some((i, range)) => {
                self.offered.insert(history[i].clone());
                self.found = Some((i, range));
            }
            None => {
                if let Some((i, range)) = &mut self.found {
                    // The match shown may not hold a longer query: it stays, unhighlighted.
                    *range = history
                        .get(*i)
                        .and_then(|text| find_ignoring_case(text, &self.query))
                        .unwrap_or(0..0);
                }
            }
        }
    }

    /// The prompt box's rows while searching: the match (or what was typed, with none yet),
    /// hard wrapped at `width` as the box wraps, the query highlighted; and the row the
    /// highlight begins on (the box scrolls to it).
    pub(crate) fn box_rows(&self, history: &[String], width: u16) -> (Vec<Line<'static>>, usize) {
        let (text, range) = match &self.found {
            Some((i, range)) => match history.get(*i) {
                Some(text) => (text.as_str(), range.clone()),
                None => (self.draft.as_str(), 0..0),
            },
            None => (self.draft.as_str(), 0..0),
        };
        wrap_highlighted(text, range, width)
    }

    /// The line under the box: `search prompts: <query>`, and whether it found anything.
    /// Returns the line and the column of the cursor (after the query).
    pub(crate) fn line(&self, width: u16) -> (Line<'static>, u16) {
        let label = if self.failed {
            "no matching prompt: "
        } else {
            "search prompts: "
        };
        let label_style = if self.failed {
            theme::warning()
        } else {
            theme::dim()
        };
        let mut spans = vec![
            Span::styled(format!("  {label}"), label_style),
            Span::raw(self.query.clone()),
        ];
        let cursor = 2 + label.chars().count() + self.query.chars().map(char_width).sum::<usize>();
        spans.push(Span::styled(
            "  (enter send · tab edit · esc cancel · ctrl+r older)",
            theme::dim(),
        ));
        let line = crate::wrap::truncate(Line::from(spans), usize::from(width));
        let cursor = u16::try_from(cursor)
            .unwrap_or(u16::MAX)
            .min(width.saturating_sub(1));
        (line, cursor)
    }
}

fn char_width(c: char) -> usize {
    c.width().unwrap_or(0)
}

/// Where `needle` first occurs in `hay`, ignoring case, as a byte range of `hay` (the empty
/// needle occurs at the start).
pub(crate) fn find_ignoring_case(hay: &str, needle: &str) -> Option<Range<usize>> {
    if needle.is_empty() {
        return Some(0..0);
    }
    let folded = |s: &str| -> Vec<char> { s.chars().flat_map(char::to_lowercase).collect() };
    let needle = folded(needle);
    for (start, _) in hay.char_indices() {
        let mut wanted = needle.iter();
        let mut end = start;
        let mut matched = true;
        'chars: for c in hay[start..].chars() {
            for lower in c.to_lowercase() {
                match wanted.next() {
                    Some(w) if *w == lower => {}
                    // A partial fold (one char folding into several) does not count.
                    Some(_) | None => {
                        matched = false;
                        break 'chars;
                    }
                }
            }
            end += c.len_utf8();
            if wanted.len() == 0 {
                break;
            }
        }
        if matched && wanted.len() == 0 {
            return Some(start..end);
        }
    }
    None
}

/// `text` hard wrapped at `width` columns (as the prompt box wraps), the bytes `range`
/// highlighted, newlines starting rows; and the row the highlight begins on.
fn wrap_highlighted(text: &str, range: Range<usize>, width: u16) -> (Vec<Line<'static>>, usize) {
    let width = usize::from(width.max(1));
    let mut rows: Vec<Vec<(String, bool)>> = vec![Vec::new()];
    let mut col = 0;
    let mut focus = None;
    for (i, c) in text.char_indices() {
        if c == '\n' {
            rows.push(Vec::new());
            col = 0;
            continue;
        }
        let c = if c.is_control() { ' ' } else { c };
        let w = char_width(c);
        if col + w > width {
            rows.push(Vec::new());
            col = 0;
        }
        let lit = range.contains(&i);
        if lit && focus.is_none() {
            focus = Some(rows.len() - 1);
        }
        if let Some(row) = rows.last_mut() {
            match row.last_mut() {
                Some((run, l)) if *l == lit => run.push(c),
                _ => row.push((c.to_string(), lit)),
            }
        }
        col += w;
    }
    let lines = rows
        .into_iter()
        .map(|runs| {
            Line::from(
                runs.into_iter()
                    .map(|(text, lit)| {
                        let style = if lit {
                            theme::search_match()
                        } else {
                            Style::default()
                        };
                        Span::styled(text, style)
                    })
                    .collect::<Vec<_>>(),
            )
        })
        .collect();
    (lines, focus.unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn history() -> Vec<String> {
        [
            "cargo test",
            "fix the parser",
            "Cargo build --release",
            "fix the parser",
            "ls",
        ]
        .map(str::to_owned)
        .to_vec()
    }

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    fn ctrl(c: char) -> KeyEvent {
        KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
    }

    fn shown(search: &HistorySearch, history: &[String]) -> Option<String> {
        search.found.as_ref().map(|(i, _)| history[*i].clone())
    }

    #[test]
    fn the_newest_match_first_then_older_ones_each_once() {
        let h = history();
        let mut s = HistorySearch::default();
        s.open("draft", &h);
        assert_eq!(
            shown(&s, &h).as_deref(),
            Some("ls"),
            "empty query: the newest"
        );
        for c in "carg".chars() {
            s.key(key(KeyCode::Char(c)), &h);
        }
        assert_eq!(shown(&s, &h).as_deref(), Some("Cargo build --release"));
        assert_eq!(s.found.as_ref().map(|(_, r)| r.clone()), Some(0..4));
        s.key(ctrl('r'), &h);
        assert_eq!(shown(&s, &h).as_deref(), Some("cargo test"));
        assert!(!s.failed);
        s.key(ctrl('r'), &h);
        assert!(s.failed, "nothing older");
        assert_eq!(
            shown(&s, &h).as_deref(),
            Some("cargo test"),
            "the match stays"
        );
        // A duplicate is offered once.
        let mut s = HistorySearch::default();
        s.open("", &h);
        for c in "fix".chars() {
            s.key(key(KeyCode::Char(c)), &h);
        }
        assert_eq!(s.found.as_ref().map(|(i, _)| *i), Some(3));
        s.key(ctrl('r'), &h);
        assert!(s.failed, "the older copy of the same prompt is skipped");
    }

    #[test]
    fn enter_sends_tab_edits_and_cancel_restores() {
        let h = history();
        let mut s = HistorySearch::default();
        s.open("half typed", &h);
        s.key(key(KeyCode::Char('t')), &h);
        s.key(key(KeyCode::Char('e')), &h);
        assert_eq!(
            s.key(key(KeyCode::Enter), &h),
            SearchOutcome::Closed {
                text: "cargo test".into(),
                send: true
            }
        );
        for (close, want) in [
            (key(KeyCode::Tab), ("fix the parser", false)),
            (key(KeyCode::Right), ("fix the parser", false)),
            (key(KeyCode::Esc), ("half typed", false)),
            (ctrl('g'), ("half typed", false)),
            (ctrl('c'), ("half typed", false)),
        ] {
            s.open("half typed", &h);
            s.key(key(KeyCode::Char('p')), &h);
            s.key(key(KeyCode::Char('a')), &h);
            assert_eq!(
                s.key(close, &h),
                SearchOutcome::Closed {
                    text: want.0.into(),
                    send: want.1
                },
                "{close:?}"
            );
            assert!(!s.is_open());
        }
        // Backspace on an empty query cancels; nothing found sends nothing.
        s.open("typed", &h);
        assert_eq!(
            s.key(key(KeyCode::Backspace), &h),
            SearchOutcome::Closed {
                text: "typed".into(),
                send: false
            }
        );
        s.open("typed", &[]);
        s.key(key(KeyCode::Char('x')), &[]);
        assert!(s.failed);
        assert_eq!(
            s.key(key(KeyCode::Enter), &[]),
            SearchOutcome::Closed {
                text: "typed".into(),
                send: false
            }
        );
    }

    #[test]
    fn case_is_ignored_and_ranges_are_bytes_of_the_prompt() {
        assert_eq!(find_ignoring_case("Hello World", "world"), Some(6..11));
        assert_eq!(find_ignoring_case("naïve ÉTÉ", "été"), Some(7..12));
        assert_eq!(find_ignoring_case("abc", "abcd"), None);
        assert_eq!(find_ignoring_case("abc", ""), Some(0..0));
        let (rows, focus) = wrap_highlighted("abcdef\nxyz", 2..5, 4);
        assert_eq!(focus, 0);
        assert_eq!(wrap_highlighted("abcdef\nxyz", 8..9, 4).1, 2);
        let texts: Vec<String> = rows.iter().map(ToString::to_string).collect();
        assert_eq!(texts, ["abcd", "ef", "xyz"]);
        assert_eq!(rows[0].spans[1].content, "cd");
        assert_eq!(rows[0].spans[1].style, theme::search_match());
        assert_eq!(rows[1].spans[0].content, "e");
        assert_eq!(rows[1].spans[0].style, theme::search_match());
    }
}
