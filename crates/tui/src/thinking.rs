//! Extended thinking in the UI: Tab on the prompt turns it on or off from the next request
//! (Claude Code's toggle), sent to the session as its `/thinking` command, whose answer the
//! transcript shows. Thinking itself streams into a collapsed "✻ Thinking…" entry
//! ([`crate::entry::Entry::Thinking`]) that Ctrl+O expands.

use crate::app::{App, Queued};
use crate::event::UiCommand;
use crate::slash::SlashCommandSpec;

impl App {
    /// Tab (no completion list open): toggle thinking. Queued behind a running turn, like any
    /// command, so it takes effect between turns.
    pub(crate) fn toggle_thinking(&mut self) -> Vec<UiCommand> {
        self.dispatch(Queued::Command {
            spec: SlashCommandSpec::new("thinking", "Toggle extended thinking", false),
            args: String::new(),
        })
    }
}
