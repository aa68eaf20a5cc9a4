//! Edit/Write results as coloured diffs: removed lines red with `-`, added green with `+`, each
//! with its line number, three lines of context around each change, `⋮` between hunks. From the
//! texts before and after (diffed here with `similar`) or from a unified diff already made.

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use similar::{ChangeTag, TextDiff};

use crate::theme;
use crate::wrap::{IndentedLine, sanitize};

const CONTEXT: usize = 3;

/// Where a diff comes from: the file's text before and after (a permission request's
/// preview, diffed here), or a unified diff already made (an Edit's or Write's result).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DiffSource<'a> {
    Texts { before: &'a str, after: &'a str },
    Unified(&'a str),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DiffLineKind {
    Context,
    Added,
    Removed,
    /// Lines left out between two hunks.
    Gap,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DiffLine {
    pub kind: DiffLineKind,
    /// 1-based line number in the old text (context and removed lines).
    pub old: Option<usize>,
    /// 1-based line number in the new text (context and added lines).
    pub new: Option<usize>,
    pub text: String,
}

/// The lines of a diff, hunk after hunk.
pub(crate) fn diff_lines(source: &DiffSource<'_>) -> Vec<DiffLine> {
    match *source {
        DiffSource::Texts { before, after } => from_texts(before, after),
        DiffSource::Unified(unified) => from_unified(unified),
    }
}

/// (added, removed)
pub(crate) fn counts(lines: &[DiffLine]) -> (usize, usize) {
    lines.iter().fold((0, 0), |(a, r), l| match l.kind {
        DiffLineKind::Added => (a + 1, r),
        DiffLineKind::Removed => (a, r + 1),
        DiffLineKind::Context | DiffLineKind::Gap => (a, r),
    })
}

fn from_texts(before: &str, after: &str) -> Vec<DiffLine> {
    let diff = TextDiff::from_lines(before, after);
    let mut out = Vec::new();
    for (i, group) in diff.grouped_ops(CONTEXT).iter().enumerate() {
        if i > 0 {
            out.push(gap());
        }
        for op in group {
            for change in diff.iter_changes(op) {
                let kind = match change.tag() {
                    ChangeTag::Equal => DiffLineKind::Context,
                    ChangeTag::Insert => DiffLineKind::Added,
                    ChangeTag::Delete => DiffLineKind::Removed,
                };
                let text = change.value();
                out.push(DiffLine {
                    kind,
                    old: change.old_index().map(|n| n + 1),
                    new: change.new_index().map(|n| n + 1),
                    text: text.strip_suffix('\n').unwrap_or(text).to_owned(),
                });
            }
        }
    }
    out
}

fn from_unified(unified: &str) -> Vec<DiffLine> {
    let mut out = Vec::new();
    let (mut old, mut new) = (0usize, 0usize);
    let mut in_hunk = false;
    for line in unified.lines() {
        if let Some(header) = line.strip_prefix("@@") {
            if in_hunk {
                out.push(gap());
            }
            in_hunk = true;
            (old, new) = hunk_starts(header);
            continue;
        }
        if !in_hunk {
            continue; // "--- a" / "+++ b" headers
        }
        let (kind, text) = match line.chars().next() {
            Some('+') => (DiffLineKind::Added, &line[1..]),
            Some('-') => (DiffLineKind::Removed, &line[1..]),
            Some(' ') => (DiffLineKind::Context, &line[1..]),
            Some('\\') => continue, // "\ No newline at end of file"
            Some(_) => (DiffLineKind::Context, line),
            None => (DiffLineKind::Context, ""),
        };
        let (o, n) = match kind {
            DiffLineKind::Added => {
                new += 1;
                (None, Some(new - 1))
            }
            DiffLineKind::Removed => {
                old += 1;
                (Some(old - 1), None)
            }
            DiffLineKind::Context | DiffLineKind::Gap => {
                old += 1;
                new += 1;
                (Some(old - 1), Some(new - 1))
            }
        };
        out.push(DiffLine {
            kind,
            old: o,
            new: n,
            text: text.to_owned(),
        });
    }
    out
}

/// "-12,7 +12,8 @@ ..." → (12, 12)
fn hunk_starts(header: &str) -> (usize, usize) {
    let mut old = 1;
    let mut new = 1;
    for part in header.split_whitespace() {
        let number = |p: &str| {
            p.split(',')
                .next()
                .and_then(|n| n.parse::<usize>().ok())
                .unwrap_or(1)
        };
        if let Some(p) = part.strip_prefix('-') {
            old = number(p).max(1);
        } else if let Some(p) = part.strip_prefix('+') {
            new = number(p).max(1);
        }
    }
    (old, new)
}

fn gap() -> DiffLine {
    DiffLine {
        kind: DiffLineKind::Gap,
        old: None,
        new: None,
        text: String::new(),
    }
}

/// The diff as lines for the transcript: at most `max` diff lines (then how many more).
pub(crate) fn render(lines: &[DiffLine], max: Option<usize>) -> (Vec<IndentedLine>, usize) {
    let widest = lines
        .iter()
        .filter_map(|l| l.new.or(l.old))
        .max()
        .unwrap_or(1);
    let digits = widest.to_string().len();
    let shown = max.map_or(lines.len(), |m| m.min(lines.len()));
    let mut out = Vec::with_capacity(shown);
    for line in &lines[..shown] {
        let (sign, style, number) = match line.kind {
            DiffLineKind::Added => ("+", theme::diff_added(), line.new),
            DiffLineKind::Removed => ("-", theme::diff_removed(), line.old),
            DiffLineKind::Context => (" ", Style::default(), line.new.or(line.old)),
            DiffLineKind::Gap => {
                let pad = " ".repeat(digits);
                out.push(IndentedLine::plain(Line::from(Span::styled(
                    format!("{pad} ⋮"),
                    theme::dim(),
                ))));
                continue;
            }
        };
        let number = number.map_or_else(|| " ".repeat(digits), |n| format!("{n:>digits$}"));
        let gutter = vec![
            Span::styled(number, theme::dim()),
            Span::raw(" "),
            Span::styled(format!("{sign} "), style),
        ];
        let rest = vec![Span::raw(" ".repeat(digits + 3))];
        let text = sanitize(&line.text);
        out.push(IndentedLine {
            first: gutter,
            rest,
            body: Line::from(Span::styled(text, style)),
        });
    }
    (out, lines.len() - shown)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn short(lines: &[DiffLine]) -> Vec<String> {
        lines
            .iter()
            .map(|l| {
                let sign = match l.kind {
                    DiffLineKind::Added => "+",
                    DiffLineKind::Removed => "-",
                    DiffLineKind::Context => " ",
                    DiffLineKind::Gap => "~",
                };
                let n = |x: Option<usize>| x.map_or("_".to_owned(), |n| n.to_string());
                format!("{}{}{sign}{}", n(l.old), n(l.new), l.text)
            })
            .collect()
    }

    #[test]
    fn texts_give_numbered_hunks_with_context() {
        let before: String = (1..=20).map(|i| format!("line {i}\n")).collect();
        let after = before
            .replace("line 3\n", "line three\n")
            .replace("line 18\n", "");
        let lines = diff_lines(&DiffSource::Texts {
            before: &before,
            after: &after,
        });
        let s = short(&lines);
        assert_eq!(
            s[..4],
            ["11 line 1", "22 line 2", "3_-line 3", "_3+line three"]
        );
        assert!(
            s.contains(&"__~".to_owned()),
            "a gap between the hunks: {s:?}"
        );
        assert!(s.contains(&"18_-line 18".to_owned()), "{s:?}");
        assert_eq!(counts(&lines), (1, 2));
    }

    #[test]
    fn unified_and_texts_agree() {
        let before = "a\nb\nc\nd\n";
        let after = "a\nB\nc\nd\ne\n";
        let unified = TextDiff::from_lines(before, after)
            .unified_diff()
            .context_radius(3)
            .header("f", "f")
            .to_string();
        let from_texts = diff_lines(&DiffSource::Texts { before, after });
        assert_eq!(diff_lines(&DiffSource::Unified(&unified)), from_texts);
    }

    #[test]
    fn render_caps_and_counts_the_rest() {
        let after: String = (1..=30).map(|i| format!("{i}\n")).collect();
        let lines = diff_lines(&DiffSource::Texts {
            before: "",
            after: &after,
        });
        let (rows, more) = render(&lines, Some(10));
        assert_eq!(rows.len(), 10);
        assert_eq!(more, 20);
        assert_eq!(rows[0].first[0].content, " 1");
    }

    /// A permission request's preview is the whole file before and after (the session reads
    /// it), so its lines are numbered as the file's, with context; the edit's strings alone
    /// when the file does not hold them.
    #[test]
    fn an_edit_preview_numbers_the_lines_as_the_file_does() {
        let lines = diff_lines(&DiffSource::Texts {
            before: "one\ntwo\nthree\nfour\n",
            after: "one\ntwo\nTHREE\nfour\n",
        });
        let removed = lines
            .iter()
            .find(|l| l.kind == DiffLineKind::Removed)
            .map(|l| (l.old, l.text.as_str()));
        assert_eq!(removed, Some((Some(3), "three")));
        assert!(
            lines.iter().any(|l| l.text == "two"),
            "context around the change: {lines:?}"
        );
        let lines = diff_lines(&DiffSource::Texts {
            before: "nine",
            after: "NINE",
        });
        assert_eq!(lines.len(), 2, "{lines:?}");
    }
}
