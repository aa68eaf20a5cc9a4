//! `-p` text output: each reply printed once, even when it is sent again.
//!
//! A reply can be replaced after part of it streamed: a retry after a dropped or corrupt stream
//! (`RetryNotice::discard_partial`), or max_tokens escalation (the same request resent with a
//! larger limit, so the model starts again from the beginning). Printed text cannot be taken
//! back, so:
//! - Redirected (stdout is a file or a pipe): a reply is printed when it is final (it joined the
//!   conversation). A file never holds a lost attempt, so never a duplicate.
//! - On a terminal the reply streams live. A replacement prints nothing while it repeats what is
//!   on screen and only the rest once it gets past it; if it says something else, a note goes to
//!   stderr and the new reply is printed in full on a fresh line (a person reads it, not a file).
//!
//! A "resume directly" continuation (a reply cut at the raised limit is kept and the model is
//! asked to go on) is new text and is appended to the previous reply with no separator.

use std::io::Write;

/// How the next reply relates to what was printed before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReplyStart {
    /// A reply of its own: separated from earlier text by a line break.
    New,
    /// The continuation of the previous reply (cut at max_tokens, resumed directly).
    Continuation,
    /// The same reply again (a retry, an escalation): what it repeats is not printed twice.
    Replacement,
}

/// The text printer. `W` is stdout in the binary and a buffer in tests.
pub(crate) struct TextStream<W: Write> {
    out: W,
    /// Stream as it arrives (a terminal) or hold each reply until it is final.
    live: bool,
    printed_any: bool,
    at_line_start: bool,
    /// The next text of this reply starts on a new line if the output is mid-line.
    separate: bool,
    /// Live: the current reply's text that is on screen. Held: the current attempt's text.
    reply: String,
    /// Live, while a replacement repeats what is on screen: its text so far.
    replacement: Option<String>,
}

impl<W: Write> TextStream<W> {
    pub(crate) fn new(out: W, live: bool) -> Self {
        Self {
            out,
            live,
            printed_any: false,
            at_line_start: true,
            separate: false,
            reply: String::new(),
            replacement: None,
        }
    }

    /// A reply (or an attempt at one) begins.
    pub(crate) fn start(&mut self, start: ReplyStart) {
        match start {
            ReplyStart::New | ReplyStart::Continuation => {
                self.reply.clear();
                self.replacement = None;
                self.separate = start == ReplyStart::New && self.printed_any;
            }
            ReplyStart::Replacement if self.live => {
                // Keep what is on screen; the new attempt is compared with it from its start.
                self.replacement = Some(String::new());
            }
            ReplyStart::Replacement => self.reply.clear(),
        }
    }

    /// A piece of the current reply's text.
    pub(crate) fn delta(&mut self, text: &str) {
        if !self.live {
            self.reply.push_str(text);
            return;
        }
        let Some(mut replacement) = self.replacement.take() else {
            self.reply.push_str(text);
            self.print(text);
            return;
        };
        replacement.push_str(text);
        if self.reply.starts_with(replacement.as_str()) {
            self.replacement = Some(replacement); // still repeating what is shown
        } else if let Some(rest) = replacement.strip_prefix(self.reply.as_str()) {
            let rest = rest.to_owned();
            self.print(&rest);
            self.reply = replacement;
        } else {
            self.reprint(replacement);
        }
    }

    /// The current reply is final (it is now part of the conversation).
    pub(crate) fn finish_reply(&mut self) {
        if self.live {
            // A final reply shorter than what was shown differs from it: show it whole.
            if let Some(replacement) = self.replacement.take()
                && replacement != self.reply
            {
                self.reprint(replacement);
            }
        } else {
            let text = std::mem::take(&mut self.reply);
            self.print(&text);
        }
        self.reply.clear();
    }

    /// The end of the turn: the last line is terminated.
    pub(crate) fn finish_turn(&mut self) {
        if self.printed_any && !self.at_line_start {
            self.write("\n");
        }
    }

    /// Live only: the replacement says something else than what is on screen.
    fn reprint(&mut self, replacement: String) {
        eprintln!(
            "tine: the reply was sent again and differs from what was shown; it follows in full"
        );
        self.separate = true;
        self.print(&replacement);
        self.reply = replacement;
    }

    fn print(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        if std::mem::take(&mut self.separate) && !self.at_line_start {
            self.write("\n");
        }
        self.write(text);
    }

    fn write(&mut self, text: &str) {
        // A closed stdout (`| head`) is not an error worth reporting mid-stream.
        let _ = self.out.write_all(text.as_bytes());
        let _ = self.out.flush();
        self.printed_any = true;
        self.at_line_start = text.ends_with('\n');
    }

    #[cfg(test)]
    fn output(&self) -> &W {
        &self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream(live: bool) -> TextStream<Vec<u8>> {
        TextStream::new(Vec::new(), live)
    }

    fn text(s: &TextStream<Vec<u8>>) -> String {
        String::from_utf8(s.output().clone()).unwrap()
    }

    /// Plays one reply cut after `cut`, replaced by `again`.
    fn replaced(live: bool, cut: &[&str], again: &[&str]) -> String {
        let mut s = stream(live);
        s.start(ReplyStart::New);
        for d in cut {
            s.delta(d);
        }
        s.start(ReplyStart::Replacement);
        for d in again {
            s.delta(d);
        }
        s.finish_reply();
        s.finish_turn();
        text(&s)
    }

    #[test]
    fn a_replacement_repeating_the_shown_text_prints_only_the_rest() {
        let out = replaced(true, &["The whole ", "ans"], &["The ", "whole answer", "."]);
        assert_eq!(out, "The whole answer.\n");
    }

    #[test]
    fn a_different_replacement_is_shown_whole_on_a_fresh_line_when_live() {
        let out = replaced(true, &["First try"], &["Second ", "wording."]);
        assert_eq!(out, "First try\nSecond wording.\n");
        // Shorter than what was shown: also whole.
        let out = replaced(true, &["Hello world"], &["Hello"]);
        assert_eq!(out, "Hello world\nHello\n");
        // Identical: nothing more.
        let out = replaced(true, &["Same"], &["Same"]);
        assert_eq!(out, "Same\n");
    }

    #[test]
    fn redirected_output_prints_each_reply_once_when_final() {
        assert_eq!(
            replaced(false, &["First try"], &["Second ", "wording."]),
            "Second wording.\n"
        );
        assert_eq!(
            replaced(false, &["The whole"], &["The whole answer."]),
            "The whole answer.\n"
        );
        // A reply that never became final is never printed.
        let mut s = stream(false);
        s.start(ReplyStart::New);
        s.delta("lost");
        s.finish_turn();
        assert_eq!(text(&s), "");
    }

    #[test]
    fn replies_are_separated_and_continuations_appended() {
        for live in [true, false] {
            let mut s = stream(live);
            s.start(ReplyStart::New);
            s.delta("Reading.");
            s.finish_reply();
            s.start(ReplyStart::New);
            s.delta("part one, ");
            s.finish_reply();
            s.start(ReplyStart::Continuation);
            s.delta("part two.");
            s.finish_reply();
            s.finish_turn();
            assert_eq!(text(&s), "Reading.\npart one, part two.\n", "live: {live}");
        }
    }

    #[test]
    fn several_retries_still_print_once() {
        for live in [true, false] {
            let mut s = stream(live);
            s.start(ReplyStart::New);
            s.delta("abc");
            s.start(ReplyStart::Replacement);
            s.delta("ab");
            s.start(ReplyStart::Replacement);
            s.delta("abcdef");
            s.finish_reply();
            s.finish_turn();
            assert_eq!(text(&s), "abcdef\n", "live: {live}");
        }
    }
}
