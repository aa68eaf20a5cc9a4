//! Syntax highlighting of code blocks with syntect (pure-Rust regexes). The syntax set and the
//! theme are loaded once, on the first code block that names a language; a block is highlighted
//! line by line as it streams, each line once (the caller keeps the lines).

use std::sync::OnceLock;

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use syntect::highlighting::{
    FontStyle, HighlightIterator, HighlightState, Highlighter, Theme, ThemeSet,
};
use syntect::parsing::{ParseState, ScopeStack, SyntaxReference, SyntaxSet};

use crate::theme;

struct Assets {
    syntaxes: SyntaxSet,
    theme: Theme,
}

static ASSETS: OnceLock<Option<Assets>> = OnceLock::new();

const THEME: &str = "base16-ocean.dark";

fn assets() -> Option<&'static Assets> {
    ASSETS
        .get_or_init(|| {
            let syntaxes = SyntaxSet::load_defaults_newlines();
            let mut themes = ThemeSet::load_defaults();
            let theme = themes.themes.remove(THEME)?;
            Some(Assets { syntaxes, theme })
        })
        .as_ref()
}

/// Loads the syntax set and theme now (the terminal loop does it off the first frame's path).
pub(crate) fn preload() {
    let _ = assets();
}

/// Highlights one code block, line by line, carrying syntect's state between lines.
pub(crate) struct CodeHighlighter {
    state: Option<State>,
}

struct State {
    assets: &'static Assets,
    highlighter: Highlighter<'static>,
    parse: ParseState,
    highlight: HighlightState,
}

impl CodeHighlighter {
    /// A highlighter for the fence's info string (`rust`, `py`, `sh`, ...). Unknown or empty
    /// languages are shown plain, without loading anything.
    pub(crate) fn new(info: &str) -> Self {
        let lang = info.split_whitespace().next().unwrap_or_default();
        if lang.is_empty() {
            return Self { state: None };
        }
        let state = assets().and_then(|assets| {
            let syntax = find_syntax(&assets.syntaxes, lang)?;
            let highlighter = Highlighter::new(&assets.theme);
            let highlight = HighlightState::new(&highlighter, ScopeStack::new());
            Some(State {
                assets,
                highlighter,
                parse: ParseState::new(syntax),
                highlight,
            })
        });
        Self { state }
    }

    /// The next line of the block (without its newline), highlighted; the state moves on.
    pub(crate) fn line(&mut self, text: &str) -> Line<'static> {
        match &mut self.state {
            Some(state) => highlight(
                state.assets,
                &state.highlighter,
                &mut state.parse,
                &mut state.highlight,
                text,
            ),
            None => plain(text),
        }
    }

    /// A line not yet complete (still streaming): highlighted from the current state, which
    /// does not move.
    pub(crate) fn peek(&self, text: &str) -> Line<'static> {
        match &self.state {
            Some(state) => {
                let mut parse = state.parse.clone();
                let mut hl = state.highlight.clone();
                highlight(state.assets, &state.highlighter, &mut parse, &mut hl, text)
            }
            None => plain(text),
        }
    }
}

fn find_syntax<'a>(set: &'a SyntaxSet, lang: &str) -> Option<&'a SyntaxReference> {
    let lower = lang.to_ascii_lowercase();
    let token = match lower.as_str() {
        // Not in syntect's default set; JavaScript's grammar is the closest.
        "ts" | "typescript" | "tsx" | "jsx" | "mjs" | "cjs" => "js",
        "shell" | "zsh" | "console" | "shellscript" => "sh",
        "jsonc" | "json5" => "json",
        "yml" => "yaml",
        "golang" => "go",
        "py3" | "python3" => "py",
        other => other,
    };
    set.find_syntax_by_token(token)
}

fn highlight(
    assets: &Assets,
    highlighter: &Highlighter<'_>,
    parse: &mut ParseState,
    state: &mut HighlightState,
    text: &str,
) -> Line<'static> {
    // The "newlines" syntaxes expect each line to end with one.
    let with_newline = format!("{text}\n");
    let Ok(ops) = parse.parse_line(&with_newline, &assets.syntaxes) else {
        return plain(text);
    };
    let spans: Vec<Span<'static>> = HighlightIterator::new(state, &ops, &with_newline, highlighter)
        .filter_map(|(style, piece)| {
            let piece = piece.strip_suffix('\n').unwrap_or(piece);
            (!piece.is_empty()).then(|| Span::styled(piece.to_owned(), convert(style)))
        })
        .collect();
    Line::from(spans)
}

fn plain(text: &str) -> Line<'static> {
    Line::from(Span::styled(text.to_owned(), theme::code_plain()))
}

fn convert(style: syntect::highlighting::Style) -> Style {
    let fg = style.foreground;
    let mut out = Style::default().fg(Color::Rgb(fg.r, fg.g, fg.b));
    if style.font_style.contains(FontStyle::BOLD) {
        out = out.add_modifier(Modifier::BOLD);
    }
    if style.font_style.contains(FontStyle::ITALIC) {
        out = out.add_modifier(Modifier::ITALIC);
    }
    if style.font_style.contains(FontStyle::UNDERLINE) {
        out = out.add_modifier(Modifier::UNDERLINED);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_language_gets_colours_and_keeps_the_text() {
        let mut hl = CodeHighlighter::new("rust");
        let line = hl.line("fn main() { let x = 1; }");
        assert_eq!(line.to_string(), "fn main() { let x = 1; }");
        let colours: std::collections::HashSet<_> = line.spans.iter().map(|s| s.style.fg).collect();
        assert!(colours.len() > 1, "expected several colours, got {line:?}");
    }

    #[test]
    fn state_carries_across_lines() {
        let mut hl = CodeHighlighter::new("rust");
        let _ = hl.line("/* a comment");
        let inside = hl.line("still comment */ fn");
        let mut fresh = CodeHighlighter::new("rust");
        let alone = fresh.line("still comment */ fn");
        assert_ne!(inside, alone, "the second line is inside the comment");
    }

    #[test]
    fn peek_does_not_move_the_state() {
        let mut hl = CodeHighlighter::new("py");
        let _ = hl.peek("\"\"\"open docstring");
        let a = hl.line("x = 1");
        let mut fresh = CodeHighlighter::new("py");
        assert_eq!(a, fresh.line("x = 1"));
    }

    #[test]
    fn unknown_language_is_plain() {
        let mut hl = CodeHighlighter::new("no-such-language");
        let line = hl.line("whatever");
        assert_eq!(line.spans.len(), 1);
        assert_eq!(line.spans[0].style, theme::code_plain());
    }
}
