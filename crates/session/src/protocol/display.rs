//! How a tool call reads to people, the same in every front end: `Read(src/main.rs)`,
//! `Bash(cargo test)`. The wording is tine-tools' ([`call_summary`]), since a sub-agent's
//! progress lines are worded below the session, where its calls are seen.

pub use tine_tools::call_summary;
