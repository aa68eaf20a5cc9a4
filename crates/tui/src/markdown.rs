//! Markdown (one chunk of complete blocks) to styled lines: `**bold**` bold without the
//! asterisks, italics, inline code, headings, lists, quotes, links, tables, rules, and code
//! blocks highlighted. The streaming side ([`crate::stream`]) decides which chunks are complete.

use pulldown_cmark::{Alignment, CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthStr;

use crate::highlight::CodeHighlighter;
use crate::theme;
use crate::wrap::{IndentedLine, spans_width};

/// Renders complete markdown blocks. No blank line at the start or the end.
pub(crate) fn render(text: &str) -> Vec<IndentedLine> {
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let mut r = Renderer::default();
    for event in Parser::new_ext(text, options) {
        r.event(event);
    }
    r.flush();
    while r.out.last().is_some_and(|l| {
        l.body.spans.is_empty() && l.first.iter().all(|s| s.content.trim().is_empty())
    }) {
        r.out.pop();
    }
    r.out
}

enum Container {
    Quote,
    Item { bullet: String, used: bool },
}

struct Table {
    aligns: Vec<Alignment>,
    rows: Vec<Vec<Vec<Span<'static>>>>,
    row: Vec<Vec<Span<'static>>>,
    header_rows: usize,
}

#[derive(Default)]
struct Renderer {
    out: Vec<IndentedLine>,
    spans: Vec<Span<'static>>,
    styles: Vec<Style>,
    containers: Vec<Container>,
    lists: Vec<Option<u64>>,
    code: Option<(CodeHighlighter, String)>,
    table: Option<Table>,
    /// (destination, index in `spans` where the link text starts)
    links: Vec<(String, usize)>,
    pending_blank: bool,
}

impl Renderer {
    fn style(&self) -> Style {
        self.styles.last().copied().unwrap_or_default()
    }

    fn push_style(&mut self, style: Style) {
        let combined = self.style().patch(style);
        self.styles.push(combined);
    }

    fn pop_style(&mut self) {
        self.styles.pop();
    }

    fn text(&mut self, text: &str, style: Style) {
        if text.is_empty() {
            return;
        }
        match self.spans.last_mut() {
            Some(last) if last.style == style => last.content.to_mut().push_str(text),
            _ => self.spans.push(Span::styled(text.to_owned(), style)),
        }
    }

    /// The prefixes of the next line: (first row, continuation rows).
    fn prefixes(&mut self, consume_bullets: bool) -> (Vec<Span<'static>>, Vec<Span<'static>>) {
        let mut first = Vec::new();
        let mut rest = Vec::new();
        for c in &mut self.containers {
            match c {
                Container::Quote => {
                    first.push(Span::styled("│ ", theme::dim()));
                    rest.push(Span::styled("│ ", theme::dim()));
                }
                Container::Item { bullet, used } => {
                    let pad = " ".repeat(bullet.width());
                    if *used {
                        first.push(Span::raw(pad.clone()));
                    } else {
                        first.push(Span::styled(bullet.clone(), theme::accent()));
                        if consume_bullets {
                            *used = true;
                        }
                    }
                    rest.push(Span::raw(pad));
                }
            }
        }
        (first, rest)
    }

    fn emit(&mut self, body: Line<'static>) {
        let (first, rest) = self.prefixes(true);
        self.out.push(IndentedLine { first, rest, body });
    }

    /// Ends the current line of inline content, if any.
    fn flush(&mut self) {
        if self.spans.is_empty() {
            return;
        }
        let spans = std::mem::take(&mut self.spans);
        self.emit(Line::from(spans));
    }

    fn blank(&mut self) {
        let (mut first, _) = self.prefixes(false);
        // Only the quote bars continue through a blank line.
        first.retain(|s| s.content.contains('│'));
        self.out.push(IndentedLine {
            rest: first.clone(),
            first,
            body: Line::default(),
        });
    }

    fn start_block(&mut self) {
        self.flush();
        if self.pending_blank && !self.out.is_empty() {
            self.blank();
        }
        self.pending_blank = false;
    }

    fn end_block(&mut self) {
        self.flush();
        self.pending_blank = true;
    }

    fn in_item(&self) -> bool {
        self.containers
            .iter()
            .any(|c| matches!(c, Container::Item { .. }))
    }

    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(text) => {
                if let Some((_, buf)) = &mut self.code {
                    buf.push_str(&text);
                } else {
                    let style = self.style();
                    let mut lines = text.split('\n');
                    if let Some(first) = lines.next() {
                        self.text(first, style);
                    }
                    for line in lines {
                        self.flush();
                        self.text(line, style);
                    }
                }
            }
            Event::Code(code) | Event::InlineMath(code) => {
                let style = self.style().patch(theme::inline_code());
                self.text(&code, style);
            }
            Event::DisplayMath(math) => {
                let style = theme::inline_code();
                self.text(&math, style);
            }
            Event::Html(html) | Event::InlineHtml(html) => {
                let style = self.style().patch(theme::dim());
                let mut lines = html.split('\n');
                if let Some(first) = lines.next() {
                    self.text(first, style);
                }
                for line in lines {
                    self.flush();
                    self.text(line, style);
                }
            }
            Event::FootnoteReference(name) => {
                let style = self.style();
                self.text(&format!("[^{name}]"), style);
            }
            Event::SoftBreak => {
                let style = self.style();
                self.text(" ", style);
            }
            Event::HardBreak => self.flush(),
            Event::Rule => {
                self.start_block();
                self.emit(Line::from(Span::styled("─".repeat(40), theme::dim())));
                self.end_block();
            }
            Event::TaskListMarker(done) => {
                let style = self.style();
                self.text(if done { "☒ " } else { "☐ " }, style);
            }
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph | Tag::HtmlBlock => self.start_block(),
            Tag::Heading { level, .. } => {
                self.start_block();
                let style = match level {
                    HeadingLevel::H1 => theme::bold().add_modifier(Modifier::UNDERLINED),
                    HeadingLevel::H2 => theme::bold(),
                    _ => theme::bold().add_modifier(Modifier::ITALIC),
                };
                self.push_style(style);
            }
            Tag::BlockQuote(_) => {
                self.start_block();
                self.containers.push(Container::Quote);
                self.push_style(Style::default().add_modifier(Modifier::ITALIC));
            }
            Tag::CodeBlock(kind) => {
                self.start_block();
                let info = match &kind {
                    CodeBlockKind::Fenced(info) => info.as_ref(),
                    CodeBlockKind::Indented => "",
                };
                self.code = Some((CodeHighlighter::new(info), String::new()));
            }
            Tag::List(start) => {
                if self.in_item() {
                    self.flush();
                } else {
                    self.start_block();
                }
                self.lists.push(start);
            }
            Tag::Item => {
                self.flush();
                let depth = self.lists.len();
                let bullet = match self.lists.last_mut() {
                    Some(Some(n)) => {
                        let b = format!("{n}. ");
                        *n += 1;
                        b
                    }
                    _ => match depth {
                        0 | 1 => "• ".to_owned(),
                        2 => "◦ ".to_owned(),
                        _ => "▪ ".to_owned(),
                    },
                };
                self.containers.push(Container::Item {
                    bullet,
                    used: false,
                });
            }
            Tag::Table(aligns) => {
                self.start_block();
                self.table = Some(Table {
                    aligns,
                    rows: Vec::new(),
                    row: Vec::new(),
                    header_rows: 0,
                });
            }
            Tag::TableHead | Tag::TableRow | Tag::TableCell => {}
            Tag::Emphasis => self.push_style(Style::default().add_modifier(Modifier::ITALIC)),
            Tag::Strong => self.push_style(theme::bold()),
            Tag::Strikethrough => {
                self.push_style(Style::default().add_modifier(Modifier::CROSSED_OUT));
            }
            Tag::Superscript | Tag::Subscript => self.push_style(Style::default()),
            Tag::Link { dest_url, .. } => {
                self.links.push((dest_url.to_string(), self.spans.len()));
                self.push_style(theme::link());
            }
            Tag::Image { dest_url, .. } => {
                let style = self.style().patch(theme::dim());
                self.text("[image: ", style);
                self.links.push((dest_url.to_string(), usize::MAX));
                self.push_style(theme::dim());
            }
            Tag::FootnoteDefinition(name) => {
                self.start_block();
                let style = self.style().patch(theme::dim());
                self.text(&format!("[^{name}]: "), style);
            }
            Tag::DefinitionList | Tag::DefinitionListTitle | Tag::DefinitionListDefinition => {
                self.start_block();
            }
            Tag::MetadataBlock(_) => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph | TagEnd::HtmlBlock => self.end_block(),
            TagEnd::Heading(_) => {
                self.pop_style();
                self.end_block();
            }
            TagEnd::BlockQuote(_) => {
                self.flush();
                self.pop_style();
                self.containers.pop();
                self.pending_blank = true;
            }
            TagEnd::CodeBlock => {
                if let Some((mut hl, buf)) = self.code.take() {
                    let body = buf.strip_suffix('\n').unwrap_or(&buf);
                    for line in body.split('\n') {
                        let line = hl.line(line);
                        self.emit(line);
                    }
                }
                self.end_block();
            }
            TagEnd::List(_) => {
                self.flush();
                self.lists.pop();
                if !self.in_item() {
                    self.pending_blank = true;
                }
            }
            TagEnd::Item => {
                self.flush();
                self.containers.pop();
            }
            TagEnd::Table => {
                if let Some(table) = self.table.take() {
                    self.render_table(table);
                }
                self.end_block();
            }
            TagEnd::TableHead => {
                if let Some(t) = &mut self.table {
                    t.rows.push(std::mem::take(&mut t.row));
                    t.header_rows = t.rows.len();
                }
            }
            TagEnd::TableRow => {
                if let Some(t) = &mut self.table {
                    t.rows.push(std::mem::take(&mut t.row));
                }
            }
            TagEnd::TableCell => {
                let cell = std::mem::take(&mut self.spans);
                if let Some(t) = &mut self.table {
                    t.row.push(cell);
                }
            }
            TagEnd::Emphasis
            | TagEnd::Strong
            | TagEnd::Strikethrough
            | TagEnd::Superscript
            | TagEnd::Subscript => self.pop_style(),
            TagEnd::Link => {
                self.pop_style();
                if let Some((dest, start)) = self.links.pop() {
                    let shown: String = self
                        .spans
                        .get(start..)
                        .unwrap_or_default()
                        .iter()
                        .map(|s| s.content.as_ref())
                        .collect();
                    if !dest.is_empty() && shown != dest && !dest.starts_with('#') {
                        let style = self.style().patch(theme::dim());
                        self.text(&format!(" ({dest})"), style);
                    }
                }
            }
            TagEnd::Image => {
                self.pop_style();
                self.links.pop();
                let style = self.style().patch(theme::dim());
                self.text("]", style);
            }
            TagEnd::FootnoteDefinition
            | TagEnd::DefinitionList
            | TagEnd::DefinitionListTitle
            | TagEnd::DefinitionListDefinition => self.end_block(),
            TagEnd::MetadataBlock(_) => {}
        }
    }

    fn render_table(&mut self, table: Table) {
        let columns = table.rows.iter().map(Vec::len).max().unwrap_or(0);
        let mut widths = vec![0usize; columns];
        for row in &table.rows {
            for (i, cell) in row.iter().enumerate() {
                widths[i] = widths[i].max(spans_width(cell));
            }
        }
        let sep = || Span::styled(" │ ", theme::dim());
        for (r, row) in table.rows.into_iter().enumerate() {
            let mut spans = Vec::new();
            for (i, width) in widths.iter().enumerate() {
                if i > 0 {
                    spans.push(sep());
                }
                let cell = row.get(i).cloned().unwrap_or_default();
                let pad = width.saturating_sub(spans_width(&cell));
                let (left, right) = match table.aligns.get(i) {
                    Some(Alignment::Right) => (pad, 0),
                    Some(Alignment::Center) => (pad / 2, pad - pad / 2),
                    _ => (0, pad),
                };
                if left > 0 {
                    spans.push(Span::raw(" ".repeat(left)));
                }
                let header = r < table.header_rows;
                for span in cell {
                    let style = if header {
                        span.style.patch(theme::bold())
                    } else {
                        span.style
                    };
                    spans.push(Span::styled(span.content, style));
                }
                if right > 0 && i + 1 < widths.len() {
                    spans.push(Span::raw(" ".repeat(right)));
                }
            }
            self.emit(Line::from(spans));
            if r + 1 == table.header_rows {
                let rule: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
                self.emit(Line::from(Span::styled(rule.join("─┼─"), theme::dim())));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(lines: &[IndentedLine]) -> Vec<String> {
        lines
            .iter()
            .map(|l| {
                let mut s: String = l.first.iter().map(|s| s.content.as_ref()).collect();
                s.push_str(&l.body.to_string());
                s
            })
            .collect()
    }

    #[test]
    fn bold_loses_its_asterisks_and_gains_the_style() {
        let lines = render("a **bold** word");
        assert_eq!(plain(&lines), ["a bold word"]);
        let bold = &lines[0].body.spans[1];
        assert_eq!(bold.content, "bold");
        assert!(bold.style.add_modifier.contains(Modifier::BOLD));
    }

    #[test]
    fn blocks_are_separated_by_one_blank_line() {
        let lines = render("# Title\n\nSome text.\n\n- one\n- two\n\n> quoted");
        assert_eq!(
            plain(&lines),
            [
                "Title",
                "",
                "Some text.",
                "",
                "• one",
                "• two",
                "",
                "│ quoted"
            ]
        );
    }

    #[test]
    fn ordered_lists_keep_their_start_and_nest() {
        let lines = render("3. three\n4. four\n   - inner");
        assert_eq!(plain(&lines), ["3. three", "4. four", "   ◦ inner"]);
    }

    #[test]
    fn links_show_their_destination() {
        let lines = render("see [the docs](https://example.com/docs)");
        assert_eq!(plain(&lines), ["see the docs (https://example.com/docs)"]);
    }

    #[test]
    fn tables_are_aligned() {
        let lines = render("| a | bb |\n|---|---:|\n| ccc | d |");
        assert_eq!(plain(&lines), ["a   │ bb", "────┼───", "ccc │  d"]);
    }

    #[test]
    fn code_blocks_keep_their_lines_without_fences() {
        let lines = render("```\nlet a = 1;\n\nlet b = 2;\n```");
        assert_eq!(plain(&lines), ["let a = 1;", "", "let b = 2;"]);
    }
}
