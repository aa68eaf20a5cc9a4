//! The few colours and styles the UI uses, in one place. Named ANSI colours where the meaning is
//! generic (so the terminal's palette applies), RGB only for diff backgrounds.

use ratatui::style::{Color, Modifier, Style};

pub fn dim() -> Style {
    Style::default().fg(Color::DarkGray)
}

pub fn bold() -> Style {
    Style::default().add_modifier(Modifier::BOLD)
}

pub fn accent() -> Style {
    Style::default().fg(Color::Cyan)
}

pub fn error() -> Style {
    Style::default().fg(Color::Red)
}

pub fn warning() -> Style {
    Style::default().fg(Color::Yellow)
}

pub fn success() -> Style {
    Style::default().fg(Color::Green)
}

pub fn user_prompt() -> Style {
    Style::default().fg(Color::Gray)
}

pub fn inline_code() -> Style {
    Style::default().fg(Color::Magenta)
}

pub fn code_plain() -> Style {
    Style::default().fg(Color::Gray)
}

pub fn link() -> Style {
    Style::default()
        .fg(Color::Blue)
        .add_modifier(Modifier::UNDERLINED)
}

pub fn thinking() -> Style {
    Style::default()
        .fg(Color::DarkGray)
        .add_modifier(Modifier::ITALIC)
}

pub fn diff_removed() -> Style {
    Style::default().fg(Color::Red).bg(Color::Rgb(61, 1, 0))
}

pub fn diff_added() -> Style {
    Style::default().fg(Color::Green).bg(Color::Rgb(2, 40, 0))
}

pub fn selected() -> Style {
    Style::default()
        .fg(Color::Cyan)
        .add_modifier(Modifier::BOLD)
}

pub fn border() -> Style {
    Style::default().fg(Color::DarkGray)
}

pub fn dialog_border() -> Style {
    Style::default().fg(Color::Yellow)
}
