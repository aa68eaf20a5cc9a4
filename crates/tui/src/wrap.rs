//! Word wrapping of styled lines to a width, with hanging prefixes (list bullets, quote bars,
//! the "⎿" gutter of tool results). Our own, so an entry's height at a width is exactly the
//! number of rows it draws: the transcript caches heights per width and lays out only what is
//! visible.

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// A logical line with the prefix of its first row and of its continuation rows.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct IndentedLine {
    pub first: Vec<Span<'static>>,
    pub rest: Vec<Span<'static>>,
    pub body: Line<'static>,
}

impl IndentedLine {
    /// A line without prefixes.
    pub(crate) fn plain(body: Line<'static>) -> Self {
        Self {
            first: Vec::new(),
            rest: Vec::new(),
            body,
        }
    }

    /// An empty line.
    pub(crate) fn blank() -> Self {
        Self::default()
    }

    /// The same line with `first` / `rest` put in front of its own prefixes.
    pub(crate) fn nested(mut self, first: &[Span<'static>], rest: &[Span<'static>]) -> Self {
        let mut f = first.to_vec();
        f.append(&mut self.first);
        let mut r = rest.to_vec();
        r.append(&mut self.rest);
        self.first = f;
        self.rest = r;
        self
    }

    /// The rows it draws at `width`.
    pub(crate) fn wrap(&self, width: u16, out: &mut Vec<Line<'static>>) {
        self.wrap_within(&[], &[], width, out);
    }

    /// The rows it draws at `width` with `outer_first` / `outer_rest` put in front of its own
    /// prefixes (as [`IndentedLine::nested`] would, without copying the line); returns where
    /// each row's body starts, so a longer version of the line can be wrapped again from its
    /// last rows ([`IndentedLine::rewrap_within`]).
    pub(crate) fn wrap_within(
        &self,
        outer_first: &[Span<'static>],
        outer_rest: &[Span<'static>],
        width: u16,
        out: &mut Vec<Line<'static>>,
    ) -> Vec<SpanPos> {
        let (body_first, body_rest) = self.body_widths(outer_first, outer_rest, width);
        let (rows, starts) = if spans_width(&self.body.spans) <= body_first {
            (vec![self.body.spans.clone()], vec![SpanPos::default()])
        } else {
            wrap_from(
                &self.body.spans,
                SpanPos::default(),
                body_first,
                body_rest,
                true,
            )
        };
        self.push_rows(outer_first, outer_rest, rows, true, out);
        starts
    }

    /// Wraps this line again where `old` (the same line before text was appended to it, or
    /// otherwise changed) was wrapped with `old_starts` into the last rows of `out`: the rows
    /// before the change stay, only the rest is wrapped again. Greedy wrapping decides a row
    /// from the text from that row's start on, so the result is the same as wrapping the whole
    /// line (`wrap_within`), at the cost of the changed rows. `out` ends with `old`'s rows.
    pub(crate) fn rewrap_within(
        &self,
        old: &IndentedLine,
        old_starts: Vec<SpanPos>,
        outer_first: &[Span<'static>],
        outer_rest: &[Span<'static>],
        width: u16,
        out: &mut Vec<Line<'static>>,
    ) -> Vec<SpanPos> {
        let old_rows = old_starts.len();
        let fresh = out.len().saturating_sub(old_rows);
        let same_frame = self.first == old.first
            && self.rest == old.rest
            && self.body.style == old.body.style
            && out.len() >= old_rows;
        let changed = common_prefix(&old.body.spans, &self.body.spans);
        // The row holding the first change, and the one before it (whose end a changed first
        // word of the next row decided) are wrapped again; rows before them cannot change.
        let holding = old_starts
            .partition_point(|s| *s < changed)
            .saturating_sub(1);
        let keep = holding.saturating_sub(1);
        // Leading indentation wider than the first row is laid out as the line's start only.
        let (body_first, _) = self.body_widths(outer_first, outer_rest, width);
        let indented = leading_space_width(&self.body.spans) >= body_first;
        if !same_frame || keep == 0 || indented {
            out.truncate(fresh);
            return self.wrap_within(outer_first, outer_rest, width, out);
        }
        let (_, body_rest) = self.body_widths(outer_first, outer_rest, width);
        let mut starts = old_starts;
        let from = starts[keep];
        starts.truncate(keep);
        out.truncate(fresh + keep);
        let (rows, more) = wrap_from(&self.body.spans, from, body_rest, body_rest, false);
        starts.extend(more);
        self.push_rows(outer_first, outer_rest, rows, false, out);
        starts
    }

    fn body_widths(
        &self,
        outer_first: &[Span<'static>],
        outer_rest: &[Span<'static>],
        width: u16,
    ) -> (usize, usize) {
        let first_w = spans_width(outer_first) + spans_width(&self.first);
        let rest_w = spans_width(outer_rest) + spans_width(&self.rest);
        let width = usize::from(width.max(1));
        (
            width.saturating_sub(first_w).max(1),
            width.saturating_sub(rest_w).max(1),
        )
    }

    /// Rows of body spans with the prefixes put in front (`starts_line`: the first row is the
    /// line's first).
    fn push_rows(
        &self,
        outer_first: &[Span<'static>],
        outer_rest: &[Span<'static>],
        rows: Vec<Vec<Span<'static>>>,
        starts_line: bool,
        out: &mut Vec<Line<'static>>,
    ) {
        for (i, row) in rows.into_iter().enumerate() {
            let (outer, own) = if i == 0 && starts_line {
                (outer_first, &self.first)
            } else {
                (outer_rest, &self.rest)
            };
            let mut spans = Vec::with_capacity(outer.len() + own.len() + row.len());
            spans.extend_from_slice(outer);
            spans.extend_from_slice(own);
            spans.extend(row);
            let mut line = Line::from(spans);
            line.style = self.body.style;
            out.push(line);
        }
    }
}

/// A place in a line's spans: the span, and a byte offset in its text.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct SpanPos {
    span: usize,
    byte: usize,
}

/// Where two lines' spans first differ (in text or style); the end of the shorter one when one
/// begins the other.
fn common_prefix(a: &[Span<'static>], b: &[Span<'static>]) -> SpanPos {
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        if x == y {
            continue;
        }
        if x.style != y.style {
            return SpanPos { span: i, byte: 0 };
        }
        let byte = x
            .content
            .bytes()
            .zip(y.content.bytes())
            .take_while(|(p, q)| p == q)
            .count();
        return SpanPos { span: i, byte };
    }
    SpanPos {
        span: a.len().min(b.len()),
        byte: 0,
    }
}

fn leading_space_width(spans: &[Span<'_>]) -> usize {
    let mut width = 0;
    for span in spans {
        let text = span.content.as_ref();
        let trimmed = text.trim_start_matches([' ', '\t']);
        width += text.len() - trimmed.len();
        if !trimmed.is_empty() {
            break;
        }
    }
    width
}

/// Display width of spans.
pub(crate) fn spans_width(spans: &[Span<'_>]) -> usize {
    spans.iter().map(|s| s.content.width()).sum()
}

/// Wraps one line of spans: the first row holds `first` columns, the others `rest`. Breaks at
/// spaces; a word longer than a row is cut. Spaces at a break are dropped, leading indentation
/// of the line is kept. Always returns at least one row.
#[cfg(test)]
fn wrap_spans(spans: &[Span<'static>], first: usize, rest: usize) -> Vec<Vec<Span<'static>>> {
    if spans_width(spans) <= first {
        return vec![spans.to_vec()];
    }
    wrap_from(spans, SpanPos::default(), first, rest, true).0
}

/// Wraps `spans` from `from` on (the start of a row, `at_line_start` when it is the line's
/// first): the rows, and where each row's text starts.
fn wrap_from(
    spans: &[Span<'static>],
    from: SpanPos,
    first: usize,
    rest: usize,
    at_line_start: bool,
) -> (Vec<Vec<Span<'static>>>, Vec<SpanPos>) {
    let (parts, tokens) = tokenize(spans, from);
    let mut out = Rows {
        rows: Vec::new(),
        starts: Vec::new(),
        row: Row::default(),
        limit: first,
        rest,
    };
    let mut at_line_start = at_line_start;
    // Spaces between words wait until the next word shows they are not at a break.
    let mut pending: Option<&Token> = None;
    for token in &tokens {
        let token_parts = &parts[token.parts.clone()];
        if token.space {
            if at_line_start {
                // Leading indentation of the line stays; cut if it overflows the row.
                out.push_cut(token_parts);
            } else {
                pending = Some(token);
            }
            continue;
        }
        at_line_start = false;
        let w = token.width;
        let gap = pending.map_or(0, |t| t.width);
        if out.row.width + gap + w <= out.limit {
            if let Some(space) = pending.take() {
                out.push(&parts[space.parts.clone()]);
            }
            out.push(token_parts);
        } else if w <= rest && out.row.width > 0 {
            pending = None;
            out.break_row();
            out.push(token_parts);
        } else {
            if let Some(space) = pending.take()
                && out.row.width + space.width < out.limit
            {
                out.push(&parts[space.parts.clone()]);
            }
            out.push_cut(token_parts);
        }
    }
    if !out.row.spans.is_empty() || out.rows.is_empty() {
        out.break_row();
    }
    // A row's start is where its first piece came from; an empty row starts where the text does.
    let starts = out
        .starts
        .iter()
        .map(|s| s.unwrap_or(from))
        .collect::<Vec<_>>();
    (out.rows, starts)
}

/// A piece of one span's text, with where it came from.
struct Part<'a> {
    text: &'a str,
    style: Style,
    pos: SpanPos,
}

/// A run of spaces or of non-spaces, possibly across spans of different styles: a range of
/// parts.
struct Token {
    parts: std::ops::Range<usize>,
    space: bool,
    width: usize,
}

fn tokenize<'a>(spans: &'a [Span<'static>], from: SpanPos) -> (Vec<Part<'a>>, Vec<Token>) {
    let mut parts: Vec<Part<'_>> = Vec::new();
    let mut tokens: Vec<Token> = Vec::new();
    for (index, span) in spans.iter().enumerate().skip(from.span) {
        let text = span.content.as_ref();
        let offset = if index == from.span {
            from.byte.min(text.len())
        } else {
            0
        };
        let mut start = offset;
        let mut current: Option<bool> = None;
        let mut push = |end: usize, space: bool, start: usize| {
            let piece = &text[start..end];
            let width = piece.width();
            parts.push(Part {
                text: piece,
                style: span.style,
                pos: SpanPos {
                    span: index,
                    byte: start,
                },
            });
            let at = parts.len() - 1;
            match tokens.last_mut() {
                Some(last) if last.space == space => {
                    last.parts.end = at + 1;
                    last.width += width;
                }
                _ => tokens.push(Token {
                    parts: at..at + 1,
                    space,
                    width,
                }),
            }
        };
        for (i, c) in text[offset..].char_indices() {
            let i = i + offset;
            let space = c == ' ' || c == '\t';
            if let Some(was) = current
                && was != space
            {
                push(i, was, start);
                start = i;
            }
            current = Some(space);
        }
        if let Some(space) = current {
            push(text.len(), space, start);
        }
    }
    (parts, tokens)
}

/// The rows being built.
struct Rows {
    rows: Vec<Vec<Span<'static>>>,
    /// Where each finished row's text starts (`None`: an empty row).
    starts: Vec<Option<SpanPos>>,
    row: Row,
    limit: usize,
    rest: usize,
}

impl Rows {
    fn push(&mut self, parts: &[Part<'_>]) {
        for part in parts {
            self.row.push_str(part.text, part.style, part.pos);
        }
    }

    fn break_row(&mut self) {
        let row = std::mem::take(&mut self.row);
        self.rows.push(row.spans);
        self.starts.push(row.start);
        self.limit = self.rest;
    }

    /// Pushes pieces character by character, starting new rows as they fill.
    fn push_cut(&mut self, parts: &[Part<'_>]) {
        for part in parts {
            let mut piece_start = 0;
            let mut piece_w = 0;
            for (i, c) in part.text.char_indices() {
                let cw = c.width().unwrap_or(0);
                if self.row.width + piece_w + cw > self.limit && self.row.width + piece_w > 0 {
                    self.push_piece(part, piece_start, i);
                    piece_start = i;
                    piece_w = 0;
                    self.break_row();
                }
                piece_w += cw;
            }
            self.push_piece(part, piece_start, part.text.len());
        }
    }

    fn push_piece(&mut self, part: &Part<'_>, start: usize, end: usize) {
        let pos = SpanPos {
            span: part.pos.span,
            byte: part.pos.byte + start,
        };
        self.row.push_str(&part.text[start..end], part.style, pos);
    }
}

#[derive(Default)]
struct Row {
    spans: Vec<Span<'static>>,
    width: usize,
    start: Option<SpanPos>,
}

impl Row {
    fn push_str(&mut self, text: &str, style: Style, pos: SpanPos) {
        if text.is_empty() {
            return;
        }
        if self.start.is_none() {
            self.start = Some(pos);
        }
        self.width += text.width();
        match self.spans.last_mut() {
            Some(last) if last.style == style => last.content.to_mut().push_str(text),
            _ => self.spans.push(Span::styled(text.to_owned(), style)),
        }
    }
}

/// Text from outside (the model, tool output) made safe to draw: tabs become spaces, escape
/// sequences and other control characters go (one ESC reaching the terminal would corrupt the
/// screen). Newlines are kept.
pub(crate) fn sanitize(text: &str) -> String {
    if !text.chars().any(|c| c.is_control() && c != '\n') {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' => out.push('\n'),
            '\t' => out.push_str("    "),
            '\u{1b}' => {
                // CSI "ESC [ ... final" and OSC "ESC ] ... BEL|ST": skip the whole sequence.
                match chars.peek() {
                    Some('[') => {
                        chars.next();
                        for c in chars.by_ref() {
                            if ('@'..='~').contains(&c) {
                                break;
                            }
                        }
                    }
                    Some(']') => {
                        chars.next();
                        while let Some(c) = chars.next() {
                            if c == '\u{7}' {
                                break;
                            }
                            if c == '\u{1b}' && chars.peek() == Some(&'\\') {
                                chars.next();
                                break;
                            }
                        }
                    }
                    _ => {
                        chars.next();
                    }
                }
            }
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// Truncates a line to `width` columns (for one-row widgets: the status line, list rows).
pub(crate) fn truncate(line: Line<'static>, width: usize) -> Line<'static> {
    if line.width() <= width {
        return line;
    }
    let mut out = Vec::new();
    let mut used = 0;
    for span in line.spans {
        let mut piece = String::new();
        for c in span.content.chars() {
            let cw = c.width().unwrap_or(0);
            if used + cw + 1 > width {
                break;
            }
            used += cw;
            piece.push(c);
        }
        let full = piece.len() == span.content.len();
        out.push(Span::styled(piece, span.style));
        if !full {
            break;
        }
    }
    out.push(Span::raw("…"));
    let mut truncated = Line::from(out);
    truncated.style = line.style;
    truncated
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::style::Stylize;

    fn texts(rows: &[Vec<Span<'static>>]) -> Vec<String> {
        rows.iter()
            .map(|r| r.iter().map(|s| s.content.as_ref()).collect::<String>())
            .collect()
    }

    #[test]
    fn breaks_at_spaces_and_drops_them() {
        let rows = wrap_spans(&[Span::raw("the quick brown fox jumps")], 10, 10);
        assert_eq!(texts(&rows), ["the quick", "brown fox", "jumps"]);
    }

    #[test]
    fn cuts_words_longer_than_a_row() {
        let rows = wrap_spans(&[Span::raw("abcdefghijkl mn")], 5, 5);
        assert_eq!(texts(&rows), ["abcde", "fghij", "kl mn"]);
    }

    #[test]
    fn keeps_styles_across_a_word_made_of_several_spans() {
        let spans = vec![Span::raw("aaa "), "bold".bold(), Span::raw(", tail")];
        let rows = wrap_spans(&spans, 8, 8);
        assert_eq!(texts(&rows), ["aaa", "bold,", "tail"]);
        assert_eq!(rows[1][0].content, "bold");
        assert!(
            rows[1][0]
                .style
                .add_modifier
                .contains(ratatui::style::Modifier::BOLD)
        );
    }

    #[test]
    fn keeps_leading_indentation() {
        let rows = wrap_spans(&[Span::raw("    code here and more")], 12, 12);
        assert_eq!(texts(&rows), ["    code", "here and", "more"]);
    }

    #[test]
    fn wide_characters_count_double() {
        let rows = wrap_spans(&[Span::raw("日本語の文字")], 6, 6);
        assert_eq!(texts(&rows), ["日本語", "の文字"]);
    }

    #[test]
    fn hanging_prefix_on_continuation_rows() {
        let line = IndentedLine {
            first: vec![Span::raw("• ")],
            rest: vec![Span::raw("  ")],
            body: Line::from("one two three four"),
        };
        let mut out = Vec::new();
        line.wrap(10, &mut out);
        let rows: Vec<String> = out.iter().map(|l| l.to_string()).collect();
        assert_eq!(rows, ["• one two", "  three", "  four"]);
    }

    /// A line grown piece by piece and wrapped again from its last rows each time has exactly
    /// the rows of wrapping it whole, whatever the words, styles, widths and prefixes.
    #[test]
    fn rewrapping_a_growing_line_equals_wrapping_it_whole() {
        use ratatui::style::Stylize;
        let mut seed = 0x2545_f491_u64;
        let mut next = move |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            usize::try_from(seed % n as u64).unwrap()
        };
        let words = [
            "a",
            "of",
            "the",
            "quick",
            "brownish",
            "日本語",
            "x",
            "supercalifragilistic",
            "https://example.com/a/very/long/path/that/is/longer/than/a/row/for/sure",
            "**",
            "`code`",
            "  ",
            " ",
        ];
        for case in 0..300 {
            let width = u16::try_from(8 + next(50)).unwrap();
            let first = vec![Span::raw("● ")];
            let rest = vec![Span::raw("  ")];
            let mut spans: Vec<Span<'static>> = Vec::new();
            let mut old: Option<(IndentedLine, Vec<SpanPos>, Vec<Line<'static>>)> = None;
            for _step in 0..40 {
                // Grow the text, sometimes restyle its end (as a closing `**` does).
                for _ in 0..1 + next(4) {
                    let word = words[next(words.len())].to_owned();
                    let text = if next(3) == 0 {
                        word
                    } else {
                        format!("{word} ")
                    };
                    match next(4) {
                        0 => spans.push(text.bold()),
                        1 => spans.push(Span::raw(text)),
                        _ => match spans.last_mut() {
                            Some(last) => last.content.to_mut().push_str(&text),
                            None => spans.push(Span::raw(text)),
                        },
                    }
                }
                if next(6) == 0
                    && let Some(last) = spans.last_mut()
                {
                    *last = last.clone().italic();
                }
                let line = IndentedLine::plain(Line::from(spans.clone()));
                let mut whole = Vec::new();
                line.wrap_within(&first, &rest, width, &mut whole);
                let (rows, starts) = match old.take() {
                    None => {
                        let mut rows = Vec::new();
                        let starts = line.wrap_within(&first, &rest, width, &mut rows);
                        (rows, starts)
                    }
                    Some((before, starts, mut rows)) => {
                        let starts =
                            line.rewrap_within(&before, starts, &first, &rest, width, &mut rows);
                        (rows, starts)
                    }
                };
                assert_eq!(rows, whole, "case {case}, width {width}: {spans:?}");
                assert_eq!(starts.len(), rows.len());
                old = Some((line, starts, rows));
            }
        }
    }

    #[test]
    fn sanitize_strips_escapes_and_expands_tabs() {
        assert_eq!(sanitize("\u{1b}[31mred\u{1b}[0m\tx\r\n"), "red    x\n");
        assert_eq!(sanitize("\u{1b}]0;title\u{7}after"), "after");
        assert_eq!(sanitize("plain"), "plain");
    }

    #[test]
    fn truncates_with_an_ellipsis() {
        let line = truncate(Line::from("abcdefgh"), 5);
        assert_eq!(line.to_string(), "abcd…");
    }
}
