//! The built-in tools: Read, Write, Edit, Bash (with BashOutput and KillShell for background
//! runs), Glob, Grep, TodoWrite, WebFetch. Each is a unit struct implementing [`crate::Tool`].

pub mod background;
pub mod files;
pub mod read;
pub mod shell;
pub mod todo;
