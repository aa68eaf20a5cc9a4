//! The built-in tools: Read, Write, Edit, Bash (with BashOutput and KillShell for background
//! runs), Glob, Grep, TodoWrite, WebFetch. Each is a unit struct implementing [`crate::Tool`].

pub mod background;
pub mod bash;
pub mod bash_output;
pub mod edit;
pub mod files;
pub mod glob;
pub mod grep;
pub mod read;
pub mod shell;
pub mod todo;
pub mod walk;
pub mod write;
