//! tine-tools: what the model acts through. Will own the `Tool` trait, the built-in tools
//! (Read, Write, Edit, Bash, Glob, Grep, TodoWrite, WebFetch), the file-state cache, the bash
//! command analysis, the permission engine and the tool pool.

pub mod verdict;

// Bash command analysis and the permission engine (settings, rules, modes, decisions).
pub mod bash;
pub mod permissions;
