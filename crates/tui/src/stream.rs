//! Streaming markdown: text arrives in deltas; what is complete is rendered once and kept
//! ("committed"), only the open tail is rendered again on each delta. A chunk is complete at a
//! blank line followed by a line that starts at column 0 (so a list item's indented
//! continuation is never cut off from its item), outside any code fence. A top-level fenced code
//! block is committed line by line as each line completes, its highlighter's state carried, so a
//! long block streams without being highlighted again. Wrapped rows of the committed part are
//! cached per width and extended, not redone; the open tail's rows are redone only from the
//! first changed line, and that line from its last rows on (`IndentedLine::rewrap_within`), so
//! a long paragraph or list that never reaches a blank line costs its new rows a frame, not its
//! length (`cargo xtask bench tui`: a 400-line paragraph's frame went from 2.06 ms to 0.72 ms
//! at p99).

use ratatui::text::{Line, Span};

use crate::highlight::CodeHighlighter;
use crate::markdown;
use crate::wrap::{IndentedLine, SpanPos};

/// One markdown text being streamed (or complete, after [`MarkdownStream::finish`]).
pub(crate) struct MarkdownStream {
    src: String,
    /// Rendered lines of `src[..pos]`.
    committed: Vec<IndentedLine>,
    pos: usize,
    /// Start of the first line of `src[pos..]` not yet scanned.
    scan: usize,
    /// A fence opened inside the uncommitted region (indented or nested): no cut until it closes.
    nested_fence: Option<Fence>,
    /// A top-level fenced block being committed line by line.
    code: Option<(Fence, CodeHighlighter)>,
    tail: Vec<IndentedLine>,
    /// The tail is rendered when next looked at, not on every delta (deltas between two frames
    /// cost one render).
    tail_stale: bool,
    /// Text arrived that `advance` has not looked at yet.
    unscanned: bool,
    /// No more text will come ...
    finished: bool,
    /// ... and everything is committed.
    settled: bool,
    /// How many chunks were rendered (committed) so far: for tests of the incremental claim.
    renders: usize,
    wrapped: Wrapped,
}

#[derive(Default)]
struct Wrapped {
    width: u16,
    rows: Vec<Line<'static>>,
    /// How many committed lines `rows` covers.
    upto: usize,
    tail: Vec<Line<'static>>,
    tail_valid: bool,
    /// The tail lines `tail` was made from, once the tail was rendered again (`None`: they are
    /// the stream's `tail`).
    wrapped_from: Option<Vec<IndentedLine>>,
    /// Per line of the tail `tail` was made from: how it was wrapped.
    tail_lines: Vec<TailLine>,
}

/// How one tail line was wrapped: the open block changes at its end, so the lines before the
/// change keep their rows and the changed line is wrapped again from its last rows.
struct TailLine {
    /// It took the text's first prefix (the bullet) rather than the continuation's.
    first_prefix: bool,
    /// Its first row in `Wrapped::tail`.
    row_start: usize,
    /// Where each of its rows starts in its spans.
    starts: Vec<SpanPos>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Fence {
    ch: char,
    len: usize,
}

impl Default for MarkdownStream {
    fn default() -> Self {
        Self::new()
    }
}

impl MarkdownStream {
    pub(crate) fn new() -> Self {
        Self {
            src: String::new(),
            committed: Vec::new(),
            pos: 0,
            scan: 0,
            nested_fence: None,
            code: None,
            tail: Vec::new(),
            tail_stale: false,
            unscanned: false,
            finished: false,
            settled: false,
            renders: 0,
            wrapped: Wrapped::default(),
        }
    }

    /// A complete text, rendered at once.
    pub(crate) fn complete(text: &str) -> Self {
        let mut s = Self::new();
        s.push(text);
        s.finish();
        s
    }

    /// Chunks rendered into the committed part so far.
    #[cfg(test)]
    pub(crate) fn committed_renders(&mut self) -> usize {
        self.settle();
        self.renders
    }

    /// Bytes of the source that are committed.
    #[cfg(test)]
    pub(crate) fn committed_len(&mut self) -> usize {
        self.settle();
        self.pos
    }

    /// Appends a delta. The work (committing what became complete, rendering the tail) is done
    /// when the text is next looked at: the deltas between two frames cost one pass, and a
    /// replayed conversation costs nothing until it scrolls into view.
    pub(crate) fn push(&mut self, delta: &str) {
        if self.finished || delta.is_empty() {
            return;
        }
        self.src.push_str(delta);
        self.unscanned = true;
    }

    /// The text is complete: everything will be committed.
    pub(crate) fn finish(&mut self) {
        self.finished = true;
    }

    /// Brings the rendered lines up to date with the source.
    fn settle(&mut self) {
        if self.unscanned {
            self.unscanned = false;
            self.advance();
            self.tail_stale = true;
        }
        if self.finished && !self.settled {
            self.settled = true;
            if let Some((_, mut hl)) = self.code.take() {
                let rest = &self.src[self.pos..];
                if !rest.is_empty() {
                    let line = hl.line(rest);
                    self.committed.push(IndentedLine::plain(line));
                }
            } else {
                let end = self.src.len();
                self.commit_markdown(end);
            }
            self.pos = self.src.len();
            self.scan = self.pos;
            self.tail.clear();
            self.tail_stale = false;
            self.wrapped.tail_valid = false;
        }
        self.render_tail();
    }

    fn advance(&mut self) {
        while let Some(nl) = self.src[self.scan..].find('\n') {
            let line_end = self.scan + nl;
            let next = line_end + 1;
            let line = &self.src[self.scan..line_end];
            if let Some((fence, hl)) = &mut self.code {
                // Inside a top-level block, `pos == scan`: each complete line is committed.
                if closes(line, *fence) {
                    self.code = None;
                } else {
                    let row = hl.line(line);
                    self.committed.push(IndentedLine::plain(row));
                }
                self.pos = next;
                self.scan = next;
                continue;
            }
            if let Some(fence) = self.nested_fence {
                if closes(line, fence) {
                    self.nested_fence = None;
                }
                self.scan = next;
                continue;
            }
            if let Some((fence, indent, info)) = opens(line) {
                if indent == 0 {
                    let info = info.to_owned();
                    self.commit_markdown(self.scan);
                    if !self.committed.is_empty() {
                        self.committed.push(IndentedLine::blank());
                    }
                    self.code = Some((fence, CodeHighlighter::new(&info)));
                    self.pos = next;
                } else {
                    self.nested_fence = Some(fence);
                }
                self.scan = next;
                continue;
            }
            if line.trim().is_empty() {
                match self.src[next..].chars().next() {
                    // The next block has not begun: look again on the next delta.
                    None => break,
                    Some(c) if !c.is_whitespace() => self.commit_markdown(next),
                    Some(_) => {}
                }
            }
            self.scan = next;
        }
    }

    /// Renders `src[pos..end]` into the committed lines.
    fn commit_markdown(&mut self, end: usize) {
        let chunk = &self.src[self.pos..end];
        if !chunk.trim().is_empty() {
            let lines = markdown::render(chunk);
            self.renders += 1;
            if !lines.is_empty() && !self.committed.is_empty() && !ends_blank(&self.committed) {
                self.committed.push(IndentedLine::blank());
            }
            self.committed.extend(lines);
        }
        self.pos = end;
        if self.scan < end {
            self.scan = end;
        }
    }

    fn render_tail(&mut self) {
        if !self.tail_stale {
            return;
        }
        self.tail_stale = false;
        // Keep the lines the wrapped rows were made from, to wrap only what changed.
        let previous = std::mem::take(&mut self.tail);
        if self.wrapped.tail_valid {
            self.wrapped.wrapped_from = Some(previous);
        }
        self.wrapped.tail_valid = false;
        let rest = &self.src[self.pos..];
        if let Some((_, hl)) = &self.code {
            if !rest.is_empty() {
                self.tail.push(IndentedLine::plain(hl.peek(rest)));
            }
            return;
        }
        if rest.trim().is_empty() {
            return;
        }
        let lines = markdown::render(rest);
        if !lines.is_empty() && !self.committed.is_empty() && !ends_blank(&self.committed) {
            self.tail.push(IndentedLine::blank());
        }
        self.tail.extend(lines);
    }

    /// Every logical line, committed then tail.
    #[cfg(test)]
    pub(crate) fn lines(&mut self) -> impl Iterator<Item = &IndentedLine> {
        self.settle();
        self.committed.iter().chain(self.tail.iter())
    }

    /// The wrapped rows at `width`, each line prefixed by `first` (the first row of the whole
    /// text) or `rest`: `(committed rows, tail rows)`. Committed rows are cached and extended;
    /// tail rows are cached until the tail changes.
    pub(crate) fn rows(
        &mut self,
        width: u16,
        first: &[Span<'static>],
        rest: &[Span<'static>],
    ) -> (&[Line<'static>], &[Line<'static>]) {
        self.settle();
        if self.wrapped.width != width {
            self.wrapped = Wrapped {
                width,
                ..Wrapped::default()
            };
        }
        let w = &mut self.wrapped;
        for (i, line) in self.committed.iter().enumerate().skip(w.upto) {
            let prefix = if i == 0 { first } else { rest };
            line.wrap_within(prefix, rest, width, &mut w.rows);
        }
        w.upto = self.committed.len();
        if !w.tail_valid {
            let first_prefix = |i: usize| i == 0 && self.committed.is_empty();
            w.rewrap_tail(&self.tail, first_prefix, first, rest);
        }
        (&w.rows, &w.tail)
    }
}

impl Wrapped {
    /// Brings the tail's rows up to `tail`: the lines before the first that changed keep their
    /// rows, that one is wrapped again from its last rows, the rest anew. A long open paragraph
    /// costs its last rows a frame, not its length.
    fn rewrap_tail(
        &mut self,
        tail: &[IndentedLine],
        first_prefix: impl Fn(usize) -> bool,
        first: &[Span<'static>],
        rest: &[Span<'static>],
    ) {
        let old = self.wrapped_from.take().unwrap_or_default();
        let mut records = std::mem::take(&mut self.tail_lines);
        if records.len() != old.len() {
            // Rows not made from `old` (never wrapped before): start over.
            records.clear();
            self.tail.clear();
        }
        let same = old
            .iter()
            .zip(tail)
            .zip(&records)
            .enumerate()
            .take_while(|(i, ((a, b), r))| a == b && r.first_prefix == first_prefix(*i))
            .count();
        let mut lines: Vec<TailLine> = Vec::with_capacity(tail.len());
        let mut changed = records.into_iter();
        lines.extend(changed.by_ref().take(same));
        let mut next = same;
        let record = changed.next();
        let end_of = |r: &TailLine, after: Option<&TailLine>, all: usize| {
            after.map_or(all, |a| a.row_start).max(r.row_start)
        };
        let after = changed.next();
        match (record, old.get(same), tail.get(same)) {
            (Some(record), Some(before), Some(now))
                if record.first_prefix == first_prefix(same) =>
            {
                let end = end_of(&record, after.as_ref(), self.tail.len());
                self.tail.truncate(end);
                let lead = if record.first_prefix { first } else { rest };
                let starts = now.rewrap_within(
                    before,
                    record.starts,
                    lead,
                    rest,
                    self.width,
                    &mut self.tail,
                );
                lines.push(TailLine {
                    first_prefix: record.first_prefix,
                    row_start: record.row_start,
                    starts,
                });
                next += 1;
            }
            (Some(record), ..) => self.tail.truncate(record.row_start),
            (None, ..) => {}
        }
        for (i, line) in tail.iter().enumerate().skip(next) {
            let row_start = self.tail.len();
            let lead = if first_prefix(i) { first } else { rest };
            let starts = line.wrap_within(lead, rest, self.width, &mut self.tail);
            lines.push(TailLine {
                first_prefix: first_prefix(i),
                row_start,
                starts,
            });
        }
        self.tail_lines = lines;
        self.tail_valid = true;
    }
}

fn ends_blank(lines: &[IndentedLine]) -> bool {
    lines.last().is_some_and(|l| l.body.spans.is_empty())
}

/// A fence opening line: (fence, indentation, info string).
fn opens(line: &str) -> Option<(Fence, usize, &str)> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let rest = &line[indent..];
    let ch = rest.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let len = rest.chars().take_while(|c| *c == ch).count();
    if len < 3 {
        return None;
    }
    let info = rest[len..].trim();
    // A backtick fence's info string may not contain backticks (that is inline code).
    if ch == '`' && info.contains('`') {
        return None;
    }
    Some((Fence { ch, len }, indent, info))
}

fn closes(line: &str, fence: Fence) -> bool {
    let trimmed = line.trim_start_matches(' ');
    if line.len() - trimmed.len() > 3 {
        return false;
    }
    let len = trimmed.chars().take_while(|c| *c == fence.ch).count();
    len >= fence.len && trimmed[len * fence.ch.len_utf8()..].trim().is_empty()
}

#[cfg(test)]
#[path = "stream_tests.rs"]
mod tests;
