//! `/context`: the context window by part, as a coloured grid with tokens and percentages:
//! the system prompt, the tools (built-in and MCP), the memory and instruction files (the
//! context tine puts before the first prompt), the messages, the auto-compact buffer and what
//! is free. The parts are measured on the next request's bytes and scaled to the last
//! request's real token count when there is one (about 4 bytes a token otherwise).

use std::fmt::Write as _;

use tine_api_client::{ContentBlock, MessageContent};

use crate::conversation::Conversation;

/// One square of the grid stands for a hundredth of the window.
const SQUARES: usize = 100;

/// The parts, in the grid's order, with their colour.
const PARTS: [(&str, &str); 7] = [
    ("System prompt", "🟦"),
    ("Tools", "🟪"),
    ("MCP tools", "🟫"),
    ("Memory and instruction files", "🟨"),
    ("Messages", "🟩"),
    ("Auto-compact buffer", "🟥"),
    ("Free space", "⬜"),
];

fn bytes<T: serde::Serialize + ?Sized>(value: &T) -> u64 {
    serde_json::to_vec(value).map_or(0, |b| b.len() as u64)
}

/// The grid and the table.
pub(crate) fn view(conv: &Conversation) -> String {
    let template = conv.engine.request_template();
    let messages = conv.engine.messages();
    let system = bytes(&*template.system);
    let (mut tools, mut mcp) = (0u64, 0u64);
    for tool in template.tools.definitions() {
        let size = bytes(tool);
        if tool.name.starts_with("mcp__") {
            mcp += size;
        } else {
            tools += size;
        }
    }
    // The context tine put before the first prompt (instruction files, memory's index).
    let mut memory = 0u64;
    if let Some(first) = messages.first()
        && let MessageContent::Blocks(blocks) = &first.content
        && let Some(ContentBlock::Text(block)) = blocks.first()
        && block.text.starts_with("<system-reminder>")
    {
        memory = block.text.len() as u64;
    }
    let message_bytes = messages
        .iter()
        .map(bytes)
        .sum::<u64>()
        .saturating_sub(memory);
    let estimated = [system, tools, mcp, memory, message_bytes];
    let total_bytes: u64 = estimated.iter().sum();
    let report = conv.usage_report();
    let window = report.context_window.max(1);
    // Real tokens when a request was made, else about 4 bytes a token.
    let total_tokens = if report.context_tokens > 0 {
        report.context_tokens
    } else {
        total_bytes / 4
    };
    let scale = |b: u64| {
        if total_bytes == 0 {
            0
        } else {
            (b as f64 * total_tokens as f64 / total_bytes as f64).round() as u64
        }
    };
    let used: Vec<u64> = estimated.iter().map(|b| scale(*b)).collect();
    let used_total: u64 = used.iter().sum();
    let buffer = window
        .saturating_sub(conv.auto_compact_at())
        .min(window.saturating_sub(used_total));
    let free = window.saturating_sub(used_total + buffer);
    let tokens: Vec<u64> = used.into_iter().chain([buffer, free]).collect();
    // The grid: each part's share of the hundred squares (at least one when it has tokens).
    let mut counts: Vec<usize> = tokens
        .iter()
        .map(|t| {
            let share = (*t as f64 * SQUARES as f64 / window as f64).round() as usize;
            if *t > 0 { share.max(1) } else { 0 }
        })
        .collect();
    let over = counts.iter().sum::<usize>().saturating_sub(SQUARES);
    if let Some(free) = counts.last_mut() {
        *free = free.saturating_sub(over);
    }
    let mut squares = Vec::with_capacity(SQUARES);
    for ((_, colour), count) in PARTS.iter().zip(&counts) {
        squares.extend(std::iter::repeat_n(*colour, *count));
    }
    squares.resize(SQUARES, "⬜");
    let mut out = format!(
        "Context: {} of {} tokens ({:.0}%), {}\n\n",
        used_total,
        window,
        used_total as f64 * 100.0 / window as f64,
        report.model
    );
    // Markdown front ends (the UI, editors) join single newlines: each row ends in a hard break
    // (two spaces, invisible in plain text).
    for row in squares.chunks(10) {
        let _ = writeln!(out, "{}  ", row.concat());
    }
    out.push('\n');
    for ((name, colour), t) in PARTS.iter().zip(&tokens) {
        let _ = writeln!(
            out,
            "{colour} {name}: {t} tokens ({:.1}%)  ",
            *t as f64 * 100.0 / window as f64
        );
    }
    out.trim_end().to_owned()
}
