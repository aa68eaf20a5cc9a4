//! The few colours and styles the UI uses, in one place. Named ANSI colours where the meaning is
//! generic (so the terminal's palette applies), RGB only for diff backgrounds.

use ratatui::style::{Color, Modifier, Style};

pub(crate) fn dim() -> Style {
    Style::default().fg(Color::DarkGray)
}

pub(crate) fn bold() -> Style {
    Style::default().add_modifier(Modifier::BOLD)
}

pub(crate) fn accent() -> Style {
    Style::default().fg(Color::Cyan)
}

pub(crate) fn error() -> Style {
    Style::default().fg(Color::Red)
}

pub(crate) fn warning() -> Style {
    Style::default().fg(Color::Yellow)
}

pub(crate) fn success() -> Style {
    Style::default().fg(Color::Green)
}

pub(crate) fn user_prompt() -> Style {
    Style::default().fg(Color::Gray)
}

pub(crate) fn inline_code() -> Style {
    Style::default().fg(Color::Magenta)
}

pub(crate) fn code_plain() -> Style {
    Style::default().fg(Color::Gray)
}

pub(crate) fn link() -> Style {
    Style::default()
        .fg(Color::Blue)
        .add_modifier(Modifier::UNDERLINED)
}

pub(crate) fn thinking() -> Style {
    Style::default()
        .fg(Color::DarkGray)
        .add_modifier(Modifier::ITALIC)
}

pub(crate) fn diff_removed() -> Style {
    Style::default().fg(Color::Red).bg(Color::Rgb(61, 1, 0))
}

pub(crate) fn diff_added() -> Style {
    Style::default().fg(Color::Green).bg(Color::Rgb(2, 40, 0))
}

pub(crate) fn selected() -> Style {
    Style::default()
        .fg(Color::Cyan)
        .add_modifier(Modifier::BOLD)
}

pub(crate) fn border() -> Style {
    Style::default().fg(Color::DarkGray)
}

pub(crate) fn dialog_border() -> Style {
    Style::default().fg(Color::Yellow)
}

/// The query in a prompt found by Ctrl+R.
pub(crate) fn search_match() -> Style {
    Style::default()
        .fg(Color::Black)
        .bg(Color::Yellow)
        .add_modifier(Modifier::BOLD)
}
