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
        let first_w = spans_width(&self.first);
        let rest_w = spans_width(&self.rest);
        let width = usize::from(width.max(1));
        let body_first = width.saturating_sub(first_w).max(1);
        let body_rest = width.saturating_sub(rest_w).max(1);
        let rows = wrap_spans(&self.body.spans, body_first, body_rest);
        for (i, row) in rows.into_iter().enumerate() {
            let prefix = if i == 0 { &self.first } else { &self.rest };
            let mut spans = prefix.clone();
            spans.extend(row);
            let mut line = Line::from(spans);
            line.style = self.body.style;
            out.push(line);
        }
    }
}

/// Display width of spans.
pub(crate) fn spans_width(spans: &[Span<'_>]) -> usize {
    spans.iter().map(|s| s.content.width()).sum()
}

/// Wraps one line of spans: the first row holds `first` columns, the others `rest`. Breaks at
/// spaces; a word longer than a row is cut. Spaces at a break are dropped, leading indentation
/// of the line is kept. Always returns at least one row.
pub(crate) fn wrap_spans(
    spans: &[Span<'static>],
    first: usize,
    rest: usize,
) -> Vec<Vec<Span<'static>>> {
    let total = spans_width(spans);
    if total <= first {
        return vec![spans.to_vec()];
    }
    let tokens = tokenize(spans);
    let mut rows: Vec<Vec<Span<'static>>> = Vec::new();
    let mut row = Row::default();
    let mut limit = first;
    let mut at_line_start = true;
    // Spaces between words wait until the next word shows they are not at a break.
    let mut pending: Option<Token> = None;
    for token in tokens {
        if token.space {
            if at_line_start {
                // Leading indentation of the line stays; cut if it overflows the row.
                row.push_cut(&token, &mut rows, &mut limit, rest);
            } else {
                pending = Some(token);
            }
            continue;
        }
        at_line_start = false;
        let w = token.width();
        let gap = pending.as_ref().map_or(0, Token::width);
        if row.width + gap + w <= limit {
            if let Some(space) = pending.take() {
                row.push(&space);
            }
            row.push(&token);
        } else if w <= rest && row.width > 0 {
            pending = None;
            rows.push(std::mem::take(&mut row).spans);
            limit = rest;
            row.push(&token);
        } else {
            if let Some(space) = pending.take()
                && row.width + space.width() < limit
            {
                row.push(&space);
            }
            row.push_cut(&token, &mut rows, &mut limit, rest);
        }
    }
    if !row.spans.is_empty() || rows.is_empty() {
        rows.push(row.spans);
    }
    rows
}

/// A run of spaces or of non-spaces, possibly across spans of different styles.
struct Token {
    parts: Vec<(String, Style)>,
    space: bool,
}

impl Token {
    fn width(&self) -> usize {
        self.parts.iter().map(|(t, _)| t.width()).sum()
    }
}

fn tokenize(spans: &[Span<'static>]) -> Vec<Token> {
    let mut tokens: Vec<Token> = Vec::new();
    for span in spans {
        let mut start = 0;
        let text = span.content.as_ref();
        let mut current: Option<bool> = None;
        for (i, c) in text.char_indices() {
            let space = c == ' ' || c == '\t';
            if current.is_some_and(|s| s != space) {
                push_part(
                    &mut tokens,
                    &text[start..i],
                    span.style,
                    current == Some(true),
                );
                start = i;
            }
            current = Some(space);
        }
        if let Some(space) = current {
            push_part(&mut tokens, &text[start..], span.style, space);
        }
    }
    tokens
}

fn push_part(tokens: &mut Vec<Token>, text: &str, style: Style, space: bool) {
    match tokens.last_mut() {
        Some(last) if last.space == space => last.parts.push((text.to_owned(), style)),
        _ => tokens.push(Token {
            parts: vec![(text.to_owned(), style)],
            space,
        }),
    }
}

#[derive(Default)]
struct Row {
    spans: Vec<Span<'static>>,
    width: usize,
}

impl Row {
    fn push(&mut self, token: &Token) {
        for (text, style) in &token.parts {
            self.push_str(text, *style);
        }
    }

    fn push_str(&mut self, text: &str, style: Style) {
        if text.is_empty() {
            return;
        }
        self.width += text.width();
        match self.spans.last_mut() {
            Some(last) if last.style == style => last.content.to_mut().push_str(text),
            _ => self.spans.push(Span::styled(text.to_owned(), style)),
        }
    }

    /// Pushes a token character by character, starting new rows as they fill.
    fn push_cut(
        &mut self,
        token: &Token,
        rows: &mut Vec<Vec<Span<'static>>>,
        limit: &mut usize,
        rest: usize,
    ) {
        for (text, style) in &token.parts {
            let mut piece = String::new();
            let mut piece_w = 0;
            for c in text.chars() {
                let cw = c.width().unwrap_or(0);
                if self.width + piece_w + cw > *limit && self.width + piece_w > 0 {
                    self.push_str(&piece, *style);
                    piece.clear();
                    piece_w = 0;
                    rows.push(std::mem::take(self).spans);
                    *limit = rest;
                }
                piece.push(c);
                piece_w += cw;
            }
            self.push_str(&piece, *style);
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
