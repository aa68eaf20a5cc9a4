//! The prompt box's text: multi-line editing with the usual keys (Ctrl+A/E/K/U/W/Y, Alt+B/F,
//! Home/End), history with Up/Down, and large pastes shown collapsed as
//! "[Pasted text #1 +120 lines]" and expanded on submit, as Claude Code does.

use unicode_width::UnicodeWidthChar;

/// A paste longer than this many lines, or characters, is shown collapsed.
pub(crate) const PASTE_COLLAPSE_LINES: usize = 5;
pub(crate) const PASTE_COLLAPSE_CHARS: usize = 1000;

#[derive(Debug, Clone, PartialEq, Eq)]
struct Paste {
    placeholder: String,
    content: String,
}

#[derive(Debug, Default)]
pub(crate) struct PromptInput {
    text: String,
    /// Byte offset, always on a char boundary.
    cursor: usize,
    history: Vec<String>,
    /// While browsing the history: the index shown.
    browsing: Option<usize>,
    /// What was being typed before browsing began.
    draft: String,
    pastes: Vec<Paste>,
    pasted: u32,
    /// The last killed text (Ctrl+Y yanks it back).
    kill: String,
}

impl PromptInput {
    /// An empty prompt with earlier prompts (oldest first) for Up/Down.
    pub(crate) fn new(history: Vec<String>) -> Self {
        Self {
            history,
            ..Self::default()
        }
    }

    pub(crate) fn text(&self) -> &str {
        &self.text
    }

    /// Where the cursor is, in bytes.
    pub(crate) fn cursor(&self) -> usize {
        self.cursor
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// Earlier prompts, oldest first (the history file's, then this run's).
    pub(crate) fn history(&self) -> &[String] {
        &self.history
    }

    /// Earlier prompts (oldest first) before those already in the history.
    pub(crate) fn prepend_history(&mut self, mut earlier: Vec<String>) {
        earlier.append(&mut self.history);
        self.history = earlier;
        self.browsing = None;
    }

    /// Replaces the text, cursor at the end.
    pub(crate) fn set_text(&mut self, text: &str) {
        self.text = text.to_owned();
        self.cursor = self.text.len();
        self.browsing = None;
    }

    /// Replaces the bytes `range` (up to the cursor) with `text`, the cursor after it.
    pub(crate) fn replace_range(&mut self, range: std::ops::Range<usize>, text: &str) {
        if self.text.get(range.clone()).is_none() {
            return;
        }
        self.text.replace_range(range.clone(), text);
        self.cursor = range.start + text.len();
        self.edited();
    }

    pub(crate) fn clear(&mut self) {
        self.text.clear();
        self.cursor = 0;
        self.browsing = None;
        self.pastes.clear();
    }

    fn edited(&mut self) {
        self.browsing = None;
    }

    pub(crate) fn insert_str(&mut self, s: &str) {
        let s = s.replace('\t', "    ");
        let s: String = s
            .chars()
            .filter(|c| *c == '\n' || !c.is_control())
            .collect();
        self.text.insert_str(self.cursor, &s);
        self.cursor += s.len();
        self.edited();
    }

    pub(crate) fn insert_char(&mut self, c: char) {
        let mut buf = [0u8; 4];
        self.insert_str(c.encode_utf8(&mut buf));
    }

    pub(crate) fn newline(&mut self) {
        self.insert_str("\n");
    }

    /// Enter after a trailing backslash: the backslash becomes a newline. Returns whether it
    /// did.
    pub(crate) fn backslash_newline(&mut self) -> bool {
        if self.text[..self.cursor].ends_with('\\') {
            self.cursor -= 1;
            self.text.remove(self.cursor);
            self.newline();
            true
        } else {
            false
        }
    }

    /// A bracketed paste: inserted as is when short, as a placeholder when long.
    pub(crate) fn paste(&mut self, raw: &str) {
        let content = raw.replace("\r\n", "\n").replace('\r', "\n");
        let lines = content.lines().count();
        if lines > PASTE_COLLAPSE_LINES || content.chars().count() > PASTE_COLLAPSE_CHARS {
            self.pasted += 1;
            let placeholder = format!("[Pasted text #{} +{lines} lines]", self.pasted);
            self.insert_str(&placeholder);
            self.pastes.push(Paste {
                placeholder,
                content,
            });
        } else {
            self.insert_str(&content);
        }
    }

    /// The text to send, pastes expanded; it goes into the history and the box empties.
    pub(crate) fn take_submission(&mut self) -> String {
        let mut text = std::mem::take(&mut self.text);
        for paste in self.pastes.drain(..) {
            if let Some(at) = text.find(&paste.placeholder) {
                text.replace_range(at..at + paste.placeholder.len(), &paste.content);
            }
        }
        self.cursor = 0;
        self.browsing = None;
        self.draft.clear();
        if !text.trim().is_empty() && self.history.last() != Some(&text) {
            self.history.push(text.clone());
        }
        text
    }

    fn prev_boundary(&self, at: usize) -> usize {
        self.text[..at]
            .char_indices()
            .next_back()
            .map_or(0, |(i, _)| i)
    }

    fn next_boundary(&self, at: usize) -> usize {
        self.text[at..]
            .chars()
            .next()
            .map_or(at, |c| at + c.len_utf8())
    }

    fn line_start(&self) -> usize {
        self.text[..self.cursor].rfind('\n').map_or(0, |i| i + 1)
    }

    fn line_end(&self) -> usize {
        self.text[self.cursor..]
            .find('\n')
            .map_or(self.text.len(), |i| self.cursor + i)
    }

    pub(crate) fn left(&mut self) {
        self.cursor = self.prev_boundary(self.cursor);
    }

    pub(crate) fn right(&mut self) {
        self.cursor = self.next_boundary(self.cursor);
    }

    pub(crate) fn home(&mut self) {
        self.cursor = self.line_start();
    }

    pub(crate) fn end(&mut self) {
        self.cursor = self.line_end();
    }

    pub(crate) fn backspace(&mut self) {
        if self.cursor > 0 {
            let start = self.prev_boundary(self.cursor);
            self.text.replace_range(start..self.cursor, "");
            self.cursor = start;
            self.edited();
        }
    }

    pub(crate) fn delete(&mut self) {
        if self.cursor < self.text.len() {
            let end = self.next_boundary(self.cursor);
            self.text.replace_range(self.cursor..end, "");
            self.edited();
        }
    }

    fn is_word(c: char) -> bool {
        c.is_alphanumeric() || c == '_'
    }

    fn word_left_of(&self, at: usize) -> usize {
        let before = &self.text[..at];
        let mut chars = before.char_indices().rev().peekable();
        let mut pos = at;
        while let Some(&(i, c)) = chars.peek() {
            if Self::is_word(c) {
                break;
            }
            pos = i;
            chars.next();
        }
        while let Some(&(i, c)) = chars.peek() {
            if !Self::is_word(c) {
                break;
            }
            pos = i;
            chars.next();
        }
        pos
    }

    fn word_right_of(&self, at: usize) -> usize {
        let mut pos = at;
        let mut chars = self.text[at..].chars().peekable();
        while let Some(&c) = chars.peek() {
            if Self::is_word(c) {
                break;
            }
            pos += c.len_utf8();
            chars.next();
        }
        while let Some(&c) = chars.peek() {
            if !Self::is_word(c) {
                break;
            }
            pos += c.len_utf8();
            chars.next();
        }
        pos
    }

    /// Alt+B, Ctrl+Left.
    pub(crate) fn word_left(&mut self) {
        self.cursor = self.word_left_of(self.cursor);
    }

    /// Alt+F, Ctrl+Right.
    pub(crate) fn word_right(&mut self) {
        self.cursor = self.word_right_of(self.cursor);
    }

    fn kill_range(&mut self, start: usize, end: usize) {
        if start < end {
            self.kill = self.text[start..end].to_owned();
            self.text.replace_range(start..end, "");
            self.cursor = start;
            self.edited();
        }
    }

    /// Ctrl+K: to the end of the line (at the end, the newline).
    pub(crate) fn kill_to_end(&mut self) {
        let end = self.line_end();
        let end = if end == self.cursor {
            self.next_boundary(end)
        } else {
            end
        };
        self.kill_range(self.cursor, end);
    }

    /// Ctrl+U: to the start of the line.
    pub(crate) fn kill_to_start(&mut self) {
        let start = self.line_start();
        self.kill_range(start, self.cursor);
    }

    /// Ctrl+W: the whitespace-delimited word before the cursor.
    pub(crate) fn kill_word_back(&mut self) {
        let before = &self.text[..self.cursor];
        let trimmed = before.trim_end_matches([' ', '\t']);
        let start = trimmed.rfind([' ', '\t', '\n']).map_or(0, |i| i + 1);
        self.kill_range(start, self.cursor);
    }

    /// Alt+Backspace: the word (letters, digits, `_`) before the cursor.
    pub(crate) fn kill_word_left(&mut self) {
        let start = self.word_left_of(self.cursor);
        self.kill_range(start, self.cursor);
    }

    /// Alt+D: the word after the cursor.
    pub(crate) fn kill_word_right(&mut self) {
        let end = self.word_right_of(self.cursor);
        self.kill_range(self.cursor, end);
    }

    /// Ctrl+Y.
    pub(crate) fn yank(&mut self) {
        let kill = self.kill.clone();
        self.insert_str(&kill);
    }

    /// (line index, column in chars) of the cursor.
    fn line_col(&self) -> (usize, usize) {
        let before = &self.text[..self.cursor];
        let line = before.matches('\n').count();
        let col = before[self.line_start()..].chars().count();
        (line, col)
    }

    fn move_to_line(&mut self, line: usize, col: usize) {
        let mut start = 0;
        for (i, l) in self.text.split('\n').enumerate() {
            if i == line {
                let offset: usize = l.chars().take(col).map(char::len_utf8).sum();
                self.cursor = start + offset;
                return;
            }
            start += l.len() + 1;
        }
    }

    /// Up: the line above, or on the first line the previous prompt of the history.
    pub(crate) fn up(&mut self) {
        let (line, col) = self.line_col();
        if line > 0 {
            self.move_to_line(line - 1, col);
            return;
        }
        let index = match self.browsing {
            Some(0) => return,
            Some(i) => i - 1,
            None if self.history.is_empty() => return,
            None => {
                self.draft = self.text.clone();
                self.history.len() - 1
            }
        };
        self.text = self.history[index].clone();
        self.cursor = self.text.len();
        self.browsing = Some(index);
    }

    /// Down: the line below, or on the last line the next prompt (then the draft again).
    pub(crate) fn down(&mut self) {
        let (line, col) = self.line_col();
        if line < self.text.matches('\n').count() {
            self.move_to_line(line + 1, col);
            return;
        }
        let Some(index) = self.browsing else { return };
        if index + 1 < self.history.len() {
            self.text = self.history[index + 1].clone();
            self.browsing = Some(index + 1);
        } else {
            self.text = std::mem::take(&mut self.draft);
            self.browsing = None;
        }
        self.cursor = self.text.len();
    }

    /// The text as rows of at most `width` columns (hard wrapped), and the cursor's (row, col).
    pub(crate) fn rows(&self, width: u16) -> (Vec<String>, (usize, usize)) {
        let width = usize::from(width.max(1));
        let mut rows = vec![String::new()];
        let mut col = 0;
        let mut cursor = (0, 0);
        let mut found = false;
        for (i, c) in self.text.char_indices() {
            if i == self.cursor {
                cursor = (rows.len() - 1, col);
                found = true;
            }
            if c == '\n' {
                rows.push(String::new());
                col = 0;
                continue;
            }
            let w = c.width().unwrap_or(0);
            if col + w > width {
                rows.push(String::new());
                col = 0;
                if i == self.cursor {
                    cursor = (rows.len() - 1, 0);
                }
            }
            if let Some(row) = rows.last_mut() {
                row.push(c);
            }
            col += w;
        }
        if !found {
            cursor = (rows.len() - 1, col);
        }
        if cursor.1 >= width {
            rows.push(String::new());
            cursor = (rows.len() - 1, 0);
        }
        (rows, cursor)
    }
}

#[cfg(test)]
#[path = "input_tests.rs"]
mod tests;
