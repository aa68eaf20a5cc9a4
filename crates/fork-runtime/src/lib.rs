//! tine-fork-runtime: will own `CacheSafeParams` and the per-session slot, the subagent
//! context, `run_forked_agent`, `side_query`, the cache-break detector and the stop-hook
//! pipeline that starts background jobs after each main-thread turn.
