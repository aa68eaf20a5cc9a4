//! The benchmark registry. Each benchmark is a `harness = false` bench target of the crate it
//! measures; it prints its figure beside its target. `cargo test` never runs them. A name may
//! have several targets (`tui`: the widgets alone, and the wired binary); all of them run.

use std::path::Path;

use anyhow::{Result, bail};

/// (name, package, bench target, what it measures)
pub(crate) const BENCHMARKS: &[(&str, &str, &str, &str)] = &[
    (
        "mock",
        "tine-mock-api",
        "throughput",
        "simulator requests/s with a 50k-token prompt, target >= 500",
    ),
    (
        "search",
        "tine-tools",
        "search",
        "Grep/Glob vs ripgrep over a large tree, target <= 1.2x",
    ),
    (
        "sse",
        "tine-api-client",
        "sse",
        "SSE parse + accumulate throughput, target >= 200 MB/s",
    ),
    (
        "fork",
        "tine-fork-runtime",
        "fork",
        "30-turn session with a fork per turn, on the Messages API and on chat completions: share of prefix read from cache (100%), billed input vs unshared (<= 0.2x)",
    ),
    (
        "agents",
        "tine-fork-runtime",
        "agents",
        "N = 2, 4, 8 fork children over a 50k-token parent: billed input of the fan-out vs N unshared sub-agents (target <= 0.2x)",
    ),
    (
        "startup",
        "tine-cli",
        "startup",
        "tine -p hello vs a local mock: where time and pages go, peak RSS (<= 12 MiB), wall vs Claude Code in alternating runs (>= 40x faster; TINE_BENCH_CLAUDE=PATH), resume of 400 turns peak RSS (<= 14 MiB)",
    ),
    (
        "cost",
        "tine-cli",
        "cost",
        "100-turn chat memory on (<= 130k beq, <= 0.70x Claude Code) and on/off (<= 1.10x), continue-after-edit cache share (>= 95%), transcript at 400 turns (<= 600 KB), resume RSS (<= 14 MiB), the 7-request tool task vs Claude Code (<= 0.50x)",
    ),
    (
        "memory",
        "tine-memory",
        "memory",
        "extraction forks' billed input vs unshared (target <= 0.2x), session cost memory on/off",
    ),
    (
        "compaction",
        "tine-compaction",
        "compaction",
        "150k-token session compacted mid-turn: tokens before/after (<= 20%), summary's read of the parent's cached prefix (100%), its billed input vs unshared (<= 0.2x)",
    ),
    (
        "checkpoints",
        "tine-checkpoints",
        "checkpoints",
        "snapshot of a 10,000-file repository: nothing changed (<= 50 ms, no object copied), 100 files changed (<= 250 ms)",
    ),
    (
        "speculation",
        "tine-session",
        "speculation",
        "scripted typing session, 10 prompts needing a read, 8 drafts matching: hit rate, first-token time on/off, saved per hit (target >= one round trip)",
    ),
    (
        "tui",
        "tine-tui",
        "tui",
        "10k-message transcript at 120x40: frame p50/p99 scrolling, streaming and a long open paragraph through crossterm (p99 <= 2 ms), 50 PageUps' CPU, idle CPU over 10 s (~0)",
    ),
    (
        "tools",
        "tine-cli",
        "tools",
        "5 MCP servers, 120 tools: first request's input tokens with/without deferral (target >= 60% fewer), cache read after a ToolSearch (100% of the prefix), the chat-completions text fallback's cost",
    ),
    // The same name: `bench tui` runs the widgets' bench above and the wired UI's.
    (
        "tui",
        "tine-cli",
        "tui",
        "the wired UI (tine in a tmux pane, on the session): resume of 500 turns to first frame (<= 1 s), idle CPU (~0), 50 PageUps, streaming frame CPU p99 (<= 2 ms) at 10k messages",
    ),
];

pub(crate) fn run(root: &Path, name: Option<&str>) -> Result<()> {
    let Some(name) = name else {
        if BENCHMARKS.is_empty() {
            println!("no benchmarks yet");
        }
        println!("benchmarks (cargo xtask bench NAME | all):");
        for (name, package, _, what) in BENCHMARKS {
            println!("  {name:<12} {package:<20} {what}");
        }
        return Ok(());
    };
    let chosen: Vec<_> = BENCHMARKS
        .iter()
        .filter(|(n, ..)| name == "all" || *n == name)
        .collect();
    if chosen.is_empty() {
        bail!("no benchmark named `{name}`; `cargo xtask bench` lists them");
    }
    for (_, package, target, _) in chosen {
        crate::cargo(root, &["bench", "--package", package, "--bench", target])?;
    }
    Ok(())
}
