//! A line of a command's output with its colours kept: ANSI SGR sequences (`ESC [ … m`: bold,
//! dim, italic, underline, reverse, crossed out; the 16 colours, the 256 and 24-bit ones, in
//! the `;` and the `:` forms) become ratatui styles; every other escape (cursor moves, OSC 8
//! links, whose text stays, DCS and the like) and control character is dropped, so nothing a
//! command prints can move the cursor or change the terminal. `ansi-to-tui` was looked at: it
//! ends an OSC only at BEL (an OSC 8 link ended by `ESC \` would eat the line) and brings a
//! second `nom`; this is the small part of it the status line needs.

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};

const ESC: char = '\u{1b}';
const BEL: char = '\u{7}';

/// `text` (one line) as spans styled by its SGR sequences, starting from the default style.
pub(crate) fn parse_line(text: &str) -> Line<'static> {
    let mut spans: Vec<Span<'static>> = Vec::new();
    let mut style = Style::default();
    let mut run = String::new();
    let mut chars = text.chars().peekable();
    let flush = |run: &mut String, style: Style, spans: &mut Vec<Span<'static>>| {
        if !run.is_empty() {
            spans.push(Span::styled(std::mem::take(run), style));
        }
    };
    while let Some(c) = chars.next() {
        match c {
            ESC => match chars.next() {
                Some('[') => {
                    let mut params = String::new();
                    let mut last = None;
                    for c in chars.by_ref() {
                        if ('\u{40}'..='\u{7e}').contains(&c) {
                            last = Some(c);
                            break;
                        }
                        params.push(c);
                    }
                    // Only a plain SGR (no private marker such as `?`) styles the text.
                    if last == Some('m')
                        && params
                            .chars()
                            .all(|c| c.is_ascii_digit() || c == ';' || c == ':')
                    {
                        flush(&mut run, style, &mut spans);
                        style = apply_sgr(style, &params);
                    }
                }
                // OSC, DCS, SOS, PM, APC: a string up to BEL or ST (`ESC \`).
                Some(']' | 'P' | 'X' | '^' | '_') => {
                    while let Some(c) = chars.next() {
                        if c == BEL {
                            break;
                        }
                        if c == ESC && chars.peek() == Some(&'\\') {
                            chars.next();
                            break;
                        }
                    }
                }
                // Any other escape is two characters (or a lone ESC at the end).
                Some(_) | None => {}
            },
            '\t' => run.push(' '),
            // C0, DEL and C1 controls (U+009B is a one-character CSI: its parameters show).
            c if c.is_control() => {}
            c => run.push(c),
        }
    }
    flush(&mut run, style, &mut spans);
    Line::from(spans)
}

/// `style` after the SGR parameters `params` (`1;38;5;208`, `38:2::255:0:0`, empty for reset).
fn apply_sgr(mut style: Style, params: &str) -> Style {
    // `;` separates parameters; `:` separates a parameter's sub-parameters (ITU T.416).
    let groups: Vec<Vec<Option<u16>>> = params
        .split(';')
        .map(|group| group.split(':').map(|n| n.parse().ok()).collect())
        .collect();
    let mut i = 0;
    while i < groups.len() {
        let group = &groups[i];
        let code = group.first().copied().flatten().unwrap_or(0);
        i += 1;
        match code {
            0 => style = Style::default(),
            1 => style = style.add_modifier(Modifier::BOLD),
            2 => style = style.add_modifier(Modifier::DIM),
            3 => style = style.add_modifier(Modifier::ITALIC),
            4 => {
                // `4:0` is "no underline"; any other style of underline is one.
                style = if group.get(1).copied().flatten() == Some(0) {
                    style.remove_modifier(Modifier::UNDERLINED)
                } else {
                    style.add_modifier(Modifier::UNDERLINED)
                };
            }
            5 => style = style.add_modifier(Modifier::SLOW_BLINK),
            6 => style = style.add_modifier(Modifier::RAPID_BLINK),
            7 => style = style.add_modifier(Modifier::REVERSED),
            8 => style = style.add_modifier(Modifier::HIDDEN),
            9 => style = style.add_modifier(Modifier::CROSSED_OUT),
            21 => style = style.add_modifier(Modifier::UNDERLINED),
            22 => style = style.remove_modifier(Modifier::BOLD | Modifier::DIM),
            23 => style = style.remove_modifier(Modifier::ITALIC),
            24 => style = style.remove_modifier(Modifier::UNDERLINED),
            25 => style = style.remove_modifier(Modifier::SLOW_BLINK | Modifier::RAPID_BLINK),
            27 => style = style.remove_modifier(Modifier::REVERSED),
            28 => style = style.remove_modifier(Modifier::HIDDEN),
            29 => style = style.remove_modifier(Modifier::CROSSED_OUT),
            30..=37 => style = style.fg(basic(code - 30)),
            39 => style.fg = None,
            40..=47 => style = style.bg(basic(code - 40)),
            49 => style.bg = None,
            59 => style.underline_color = None,
            90..=97 => style = style.fg(basic(code - 90 + 8)),
            100..=107 => style = style.bg(basic(code - 100 + 8)),
            38 | 48 | 58 => {
                let color = if group.len() > 1 {
                    extended(&group[1..])
                } else {
                    // The `;` form: the colour's parameters are the next ones.
                    let rest: Vec<Option<u16>> = groups[i..]
                        .iter()
                        .map(|g| g.first().copied().flatten())
                        .collect();
                    let (color, used) = extended_semicolon(&rest);
                    i += used;
                    color
                };
                if let Some(color) = color {
                    match code {
                        38 => style = style.fg(color),
                        48 => style = style.bg(color),
                        _ => style = style.underline_color(color),
                    }
                }
            }
            // Fonts, frames, overlines and the rest: nothing a line of text shows here.
            _ => {}
        }
    }
    style
}

/// Colour `n` of the 16 (0–7 normal, 8–15 bright), as ratatui names them.
fn basic(n: u16) -> Color {
    match n {
        0 => Color::Black,
        1 => Color::Red,
        2 => Color::Green,
        3 => Color::Yellow,
        4 => Color::Blue,
        5 => Color::Magenta,
        6 => Color::Cyan,
        7 => Color::Gray,
        8 => Color::DarkGray,
        9 => Color::LightRed,
        10 => Color::LightGreen,
        11 => Color::LightYellow,
        12 => Color::LightBlue,
        13 => Color::LightMagenta,
        14 => Color::LightCyan,
        _ => Color::White,
    }
}

/// `5:N` or `2:[colour space:]R:G:B` (the `:` form's sub-parameters after 38/48/58).
fn extended(sub: &[Option<u16>]) -> Option<Color> {
    match sub.first().copied().flatten()? {
        5 => indexed(sub.get(1).copied().flatten()?),
        2 => {
            // With four numbers the first is the colour space id (often left empty).
            let rgb = if sub.len() >= 5 {
                &sub[2..5]
            } else {
                sub.get(1..4)?
            };
            rgb_of(rgb)
        }
        _ => None,
    }
}

/// The `;` form: `5;N` or `2;R;G;B`; the colour and how many parameters it took.
fn extended_semicolon(rest: &[Option<u16>]) -> (Option<Color>, usize) {
    match rest.first().copied().flatten() {
        Some(5) => (rest.get(1).copied().flatten().and_then(indexed), 2),
        Some(2) => (rest.get(1..4).and_then(rgb_of), 4),
        _ => (None, 1),
    }
}

fn indexed(n: u16) -> Option<Color> {
    let n = u8::try_from(n).ok()?;
    // The first 16 keep the terminal's palette, as their SGR 30–37/90–97 forms do.
    Some(if n < 16 {
        basic(u16::from(n))
    } else {
        Color::Indexed(n)
    })
}

fn rgb_of(rgb: &[Option<u16>]) -> Option<Color> {
    let channel = |i: usize| u8::try_from(rgb.get(i).copied().flatten().unwrap_or(0)).ok();
    Some(Color::Rgb(channel(0)?, channel(1)?, channel(2)?))
}

#[cfg(test)]
#[path = "sgr_tests.rs"]
mod tests;
