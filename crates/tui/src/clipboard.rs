//! Copying to the system clipboard through the terminal: the OSC 52 escape
//! (`ESC ] 52 ; c ; <base64> BEL`), which the terminal (or tmux with `set-clipboard on`, and
//! over SSH too) turns into a copy. The app only holds the text to copy
//! ([`App::take_clipboard`](crate::App::take_clipboard)); the terminal loop writes the
//! sequence. Terminals cap what one sequence may carry (about 100 KB in many: xterm's and
//! hterm's defaults, tmux's input buffer), so a longer text is cut at a line and the message
//! says so.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;

/// The longest OSC 52 sequence written, in bytes (escape, header and base64 included).
pub(crate) const MAX_SEQUENCE: usize = 100_000;

/// `ESC ] 52 ; c ;` and the closing BEL.
const FRAME: usize = "\u{1b}]52;c;".len() + 1;

/// The sequence copying `text`.
pub(crate) fn sequence(text: &str) -> String {
    format!("\u{1b}]52;c;{}\u{7}", STANDARD.encode(text))
}

/// What of `text` fits in one sequence: all of it, or its first lines (at least the first
/// line's start, cut at a character, when even that is too long).
pub(crate) fn fit(text: &str) -> &str {
    // Base64 takes 4 bytes for each 3, rounded up.
    let room = (MAX_SEQUENCE - FRAME) / 4 * 3;
    if text.len() <= room {
        return text;
    }
    let mut end = room;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    match text[..end].rfind('\n') {
        Some(nl) => &text[..=nl],
        None => &text[..end],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sequence_is_osc_52_with_the_text_in_base64() {
        assert_eq!(sequence("hi\n"), "\u{1b}]52;c;aGkK\u{7}");
        assert_eq!(sequence(""), "\u{1b}]52;c;\u{7}");
    }

    #[test]
    fn a_long_text_is_cut_at_a_line_to_fit_one_sequence() {
        let line = "é".repeat(30) + "\n";
        let text = line.repeat(5000);
        let kept = fit(&text);
        assert!(kept.len() < text.len());
        assert!(kept.ends_with('\n') && text.starts_with(kept));
        assert!(sequence(kept).len() <= MAX_SEQUENCE);
        assert!(sequence(&text[..kept.len() + line.len()]).len() > MAX_SEQUENCE);
        let short = "short\ntext";
        assert_eq!(fit(short), short);
        // One line too long for a sequence: its start, cut at a character.
        let one = "日".repeat(50_000);
        let kept = fit(&one);
        assert!(!kept.is_empty() && sequence(kept).len() <= MAX_SEQUENCE);
    }
}
