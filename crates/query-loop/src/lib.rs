//! tine-query-loop: will own `query()` (the agent loop as a stream of events ending in a
//! terminal reason), the `QueryEngine` session, transcripts and resume, hooks, and context
//! assembly (AGENTS.md / CLAUDE.md, environment, git status).
