use proptest::prelude::*;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};

use super::parse_line;

fn text_of(line: &Line<'_>) -> String {
    line.spans.iter().map(|s| s.content.as_ref()).collect()
}

#[test]
fn colours_and_attributes_become_styles_and_reset_ends_them() {
    let line = parse_line("\x1b[32m+3\x1b[0m \x1b[1;33m~2\x1b[22m!\x1b[m end");
    assert_eq!(
        line.spans,
        vec![
            Span::styled("+3", Style::default().fg(Color::Green)),
            Span::raw(" "),
            Span::styled(
                "~2",
                Style::default()
                    .fg(Color::Yellow)
                    .add_modifier(Modifier::BOLD)
            ),
            Span::styled(
                "!",
                Style::default()
                    .fg(Color::Yellow)
                    .remove_modifier(Modifier::BOLD | Modifier::DIM)
            ),
            Span::raw(" end"),
        ]
    );
}

#[test]
fn bright_256_and_truecolour_in_both_forms() {
    let style = |text: &str| parse_line(text).spans[0].style;
    assert_eq!(style("\x1b[91mx").fg, Some(Color::LightRed));
    assert_eq!(style("\x1b[104mx").bg, Some(Color::LightBlue));
    assert_eq!(style("\x1b[38;5;208mx").fg, Some(Color::Indexed(208)));
    assert_eq!(style("\x1b[38;5;1mx").fg, Some(Color::Red));
    assert_eq!(
        style("\x1b[48;2;10;20;30mx").bg,
        Some(Color::Rgb(10, 20, 30))
    );
    assert_eq!(style("\x1b[38:2::1:2:3mx").fg, Some(Color::Rgb(1, 2, 3)));
    assert_eq!(style("\x1b[38:2:4:5:6mx").fg, Some(Color::Rgb(4, 5, 6)));
    assert_eq!(style("\x1b[38:5:99mx").fg, Some(Color::Indexed(99)));
    // A colour's parameters are not read as codes of their own: 38;5;1 is not bold.
    let s = style("\x1b[38;5;1;4mx");
    assert_eq!(s.fg, Some(Color::Red));
    assert!(s.add_modifier.contains(Modifier::UNDERLINED));
    assert!(!s.add_modifier.contains(Modifier::BOLD));
    let s = style("\x1b[1;2;3;7;9mx");
    for m in [
        Modifier::BOLD,
        Modifier::DIM,
        Modifier::ITALIC,
        Modifier::REVERSED,
        Modifier::CROSSED_OUT,
    ] {
        assert!(s.add_modifier.contains(m), "{m:?}");
    }
    assert_eq!(style("\x1b[31;39mx").fg, None);
    // Out of range or cut short: no colour, no panic.
    assert_eq!(style("\x1b[38;5;300mx").fg, None);
    assert_eq!(style("\x1b[38;2;1mx").fg, None);
}

#[test]
fn other_escapes_and_controls_are_dropped_and_a_links_text_stays() {
    let line = parse_line(concat!(
        "\x1b]8;;https://example.com\x1b\\PR #7\x1b]8;;\x1b\\ ",
        "\x1b[2K\x1b[?25l\x1b]0;title\x07ok\r\t\x07\x1bc!",
    ));
    assert_eq!(text_of(&line), "PR #7 ok !");
    assert!(line.spans.iter().all(|s| s.style == Style::default()));
    // An escape cut off at the end of the line takes nothing else with it.
    assert_eq!(text_of(&parse_line("fine\x1b[3")), "fine");
    assert_eq!(text_of(&parse_line("fine\x1b")), "fine");
}

proptest! {
    /// Whatever a command prints, the line shows no escape or control character.
    #[test]
    fn nothing_printed_reaches_the_terminal_as_a_control(
        text in "\\PC*|[\\x00-\\x7f\u{9b}\u{1b}]*"
    ) {
        let shown = text_of(&parse_line(&text));
        prop_assert!(!shown.chars().any(char::is_control), "{shown:?}");
    }

    /// SGR sequences anywhere in plain text leave its characters as they were.
    #[test]
    fn sgr_sequences_change_styles_not_text(
        words in proptest::collection::vec(("[a-zA-Z0-9 .:%$|/-]{0,8}", "[0-9;:]{0,12}"), 0..8)
    ) {
        let mut printed = String::new();
        let mut plain = String::new();
        for (word, params) in &words {
            printed.push_str(&format!("\x1b[{params}m{word}"));
            plain.push_str(word);
        }
        prop_assert_eq!(text_of(&parse_line(&printed)), plain);
    }
}
