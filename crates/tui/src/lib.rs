//! tine-tui: the interactive terminal UI.
pub mod event;
pub mod highlight;
pub mod markdown;
pub mod stream;
pub mod theme;
pub mod wrap;
pub mod diff;
pub mod entry;
pub mod tool_call;
pub mod transcript;
