use std::time::Duration;

use serde_json::{Value, json};

use super::*;
use crate::prompt::analyze;

const MIN: u64 = DEFAULT_MIN_CACHEABLE_TOKENS;

/// A ~2000-token system prompt with a breakpoint, one tool, and the given messages.
fn body(system: &str, messages: Value) -> Value {
    json!({
        "model": "claude-test",
        "max_tokens": 100,
        "tools": [{"name": "Read", "description": "read a file", "input_schema": {"type": "object"}}],
        "system": [{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}],
        "messages": messages,
    })
}

fn big_system() -> String {
    "You are a careful assistant. ".repeat(280)
}

fn user(text: &str) -> Value {
    json!({"role": "user", "content": [{"type": "text", "text": text, "cache_control": {"type": "ephemeral"}}]})
}

fn run(cache: &mut PromptCache, body: &Value, now: Duration) -> CacheReport {
    let prompt = analyze(body).unwrap();
    let (report, ticket) = cache.account(&prompt, MIN, now);
    cache.commit(&ticket, now);
    report
}

fn assert_sums(r: &CacheReport) {
    assert_eq!(r.usage.prompt_tokens(), r.prompt_tokens);
}

#[test]
fn first_request_writes_and_second_reads_everything() {
    let mut cache = PromptCache::new();
    let b = body(&big_system(), json!([user("hello")]));
    let first = run(&mut cache, &b, Duration::ZERO);
    assert_sums(&first);
    assert_eq!(first.usage.cache_read_input_tokens, 0);
    assert_eq!(first.usage.cache_creation_input_tokens, first.prompt_tokens);
    assert_eq!(first.usage.ephemeral_5m_input_tokens, first.prompt_tokens);
    assert_eq!(first.usage.input_tokens, 0);

    let second = run(&mut cache, &b, Duration::from_secs(10));
    assert_sums(&second);
    assert_eq!(second.usage.cache_read_input_tokens, second.prompt_tokens);
    assert_eq!(second.usage.cache_creation_input_tokens, 0);
    assert_eq!(
        second.hit.as_ref().map(|h| h.segment),
        Some(Segment::Messages)
    );
}

#[test]
fn input_tokens_are_what_follows_the_last_breakpoint() {
    let mut cache = PromptCache::new();
    let b = body(
        &big_system(),
        json!([{"role": "user", "content": "no breakpoint on this message"}]),
    );
    let r = run(&mut cache, &b, Duration::ZERO);
    assert_sums(&r);
    let system_prefix = r.breakpoints[0].prefix_tokens;
    assert_eq!(r.usage.cache_creation_input_tokens, system_prefix);
    assert_eq!(r.usage.input_tokens, r.prompt_tokens - system_prefix);
    assert!(r.usage.input_tokens > 0);
}

#[test]
fn one_changed_byte_in_system_misses() {
    let mut cache = PromptCache::new();
    let sys = big_system();
    run(
        &mut cache,
        &body(&sys, json!([user("hello")])),
        Duration::ZERO,
    );
    let mut changed = sys.clone();
    changed.replace_range(100..101, "X");
    let r = run(
        &mut cache,
        &body(&changed, json!([user("hello")])),
        Duration::ZERO,
    );
    assert_sums(&r);
    assert_eq!(r.usage.cache_read_input_tokens, 0);
    assert!(r.hit.is_none());
}

#[test]
fn one_changed_byte_in_tools_misses() {
    let mut cache = PromptCache::new();
    let b = body(&big_system(), json!([user("hello")]));
    run(&mut cache, &b, Duration::ZERO);
    let mut changed = b.clone();
    changed["tools"][0]["description"] = json!("read a filE");
    let r = run(&mut cache, &changed, Duration::ZERO);
    assert_eq!(r.usage.cache_read_input_tokens, 0);
}

#[test]
fn moving_the_breakpoint_does_not_change_the_key() {
    let mut cache = PromptCache::new();
    let b = body(&big_system(), json!([user("hello")]));
    run(&mut cache, &b, Duration::ZERO);
    // Same bytes, but the system block's marker now says 1h: the prefix is still cached.
    let mut moved = b.clone();
    moved["system"][0]["cache_control"] = json!({"type": "ephemeral", "ttl": "1h"});
    let r = run(&mut cache, &moved, Duration::ZERO);
    assert_eq!(r.usage.cache_read_input_tokens, r.prompt_tokens);
}

#[test]
fn lookback_finds_an_entry_before_the_breakpoint() {
    let mut cache = PromptCache::new();
    let first = body(&big_system(), json!([user("turn one")]));
    let r1 = run(&mut cache, &first, Duration::ZERO);
    // Next turn: the breakpoint moves to the new last message; the old one is gone.
    let second = body(
        &big_system(),
        json!([
            {"role": "user", "content": [{"type": "text", "text": "turn one"}]},
            {"role": "assistant", "content": [{"type": "text", "text": "answer one"}]},
            user("turn two"),
        ]),
    );
    let r2 = run(&mut cache, &second, Duration::from_secs(1));
    assert_sums(&r2);
    assert_eq!(r2.usage.cache_read_input_tokens, r1.prompt_tokens);
    assert_eq!(
        r2.usage.cache_creation_input_tokens,
        r2.prompt_tokens - r1.prompt_tokens
    );
    assert_eq!(r2.hit.as_ref().and_then(|h| h.message), Some(0));
}

#[test]
fn lookback_is_limited_to_twenty_blocks() {
    let mut cache = PromptCache::new();
    let first = body(&big_system(), json!([user("start")]));
    run(&mut cache, &first, Duration::ZERO);
    let mut messages =
        vec![json!({"role": "user", "content": [{"type": "text", "text": "start"}]})];
    // 25 more blocks after the cached one, the breakpoint only on the last.
    let mut blocks: Vec<Value> = (0..24)
        .map(|i| json!({"type": "text", "text": format!("block {i}")}))
        .collect();
    blocks.push(json!({"type": "text", "text": "last", "cache_control": {"type": "ephemeral"}}));
    messages.push(json!({"role": "assistant", "content": "ok"}));
    messages.push(json!({"role": "user", "content": blocks}));
    let r = run(
        &mut cache,
        &body(&big_system(), json!(messages)),
        Duration::ZERO,
    );
    assert_sums(&r);
    // Too far back for the messages entry; the system breakpoint's own entry still hits.
    assert_eq!(r.hit.as_ref().map(|h| h.segment), Some(Segment::System));
}

#[test]
fn entries_expire_after_five_minutes_and_reads_refresh_them() {
    let mut cache = PromptCache::new();
    let b = body(&big_system(), json!([user("hello")]));
    run(&mut cache, &b, Duration::ZERO);
    // Read at 4 minutes refreshes the TTL to 9 minutes.
    let r = run(&mut cache, &b, Duration::from_secs(240));
    assert_eq!(r.usage.cache_read_input_tokens, r.prompt_tokens);
    let r = run(&mut cache, &b, Duration::from_secs(480));
    assert_eq!(r.usage.cache_read_input_tokens, r.prompt_tokens);
    // 5 minutes and a second after the last read: gone.
    let r = run(&mut cache, &b, Duration::from_secs(781));
    assert_eq!(r.usage.cache_read_input_tokens, 0);
    assert_eq!(r.usage.cache_creation_input_tokens, r.prompt_tokens);
}

#[test]
fn one_hour_entries_outlive_five_minutes() {
    let mut cache = PromptCache::new();
    let mut b = body(&big_system(), json!([{"role": "user", "content": "hi"}]));
    b["system"][0]["cache_control"] = json!({"type": "ephemeral", "ttl": "1h"});
    let r = run(&mut cache, &b, Duration::ZERO);
    assert_eq!(
        r.usage.ephemeral_1h_input_tokens,
        r.breakpoints[0].prefix_tokens
    );
    assert_eq!(r.usage.ephemeral_5m_input_tokens, 0);
    let r = run(&mut cache, &b, Duration::from_secs(30 * 60));
    assert!(r.usage.cache_read_input_tokens > 0);
    let r = run(&mut cache, &b, Duration::from_secs(30 * 60 + 3601));
    assert_eq!(r.usage.cache_read_input_tokens, 0);
}

#[test]
fn prefixes_below_the_minimum_are_not_cached() {
    let mut cache = PromptCache::new();
    let b = body("short system prompt", json!([user("hello")]));
    let r = run(&mut cache, &b, Duration::ZERO);
    assert!(r.prompt_tokens < MIN);
    assert_eq!(r.usage.cache_creation_input_tokens, 0);
    assert_eq!(r.usage.input_tokens, r.prompt_tokens);
    assert!(r.breakpoints.iter().all(|b| !b.written));
    let r = run(&mut cache, &b, Duration::ZERO);
    assert_eq!(r.usage.cache_read_input_tokens, 0);
    // A higher per-model minimum also prevents the write.
    let mut cache = PromptCache::new();
    let big = body(&big_system(), json!([user("hello")]));
    let prompt = analyze(&big).unwrap();
    let (r, _) = cache.account(&prompt, 100_000, Duration::ZERO);
    assert_eq!(r.usage.cache_creation_input_tokens, 0);
}

#[test]
fn a_thinking_change_invalidates_only_the_messages_part() {
    let mut cache = PromptCache::new();
    let mut b = body(&big_system(), json!([user("hello")]));
    b["max_tokens"] = json!(4000);
    b["thinking"] = json!({"type": "enabled", "budget_tokens": 2000});
    run(&mut cache, &b, Duration::ZERO);
    b["thinking"] = json!({"type": "enabled", "budget_tokens": 3000});
    let r = run(&mut cache, &b, Duration::ZERO);
    assert_sums(&r);
    assert_eq!(r.hit.as_ref().map(|h| h.segment), Some(Segment::System));
    assert_eq!(
        r.usage.cache_read_input_tokens,
        r.breakpoints[0].prefix_tokens
    );
    assert_eq!(
        r.usage.cache_creation_input_tokens,
        r.prompt_tokens - r.breakpoints[0].prefix_tokens
    );
}

#[test]
fn a_model_change_misses_everything() {
    let mut cache = PromptCache::new();
    let mut b = body(&big_system(), json!([user("hello")]));
    run(&mut cache, &b, Duration::ZERO);
    b["model"] = json!("claude-other");
    let r = run(&mut cache, &b, Duration::ZERO);
    assert_eq!(r.usage.cache_read_input_tokens, 0);
}

#[test]
fn concurrent_identical_requests_do_not_share() {
    let mut cache = PromptCache::new();
    let b = body(&big_system(), json!([user("hello")]));
    let prompt = analyze(&b).unwrap();
    let (a, ticket_a) = cache.account(&prompt, MIN, Duration::ZERO);
    let (b2, ticket_b) = cache.account(&prompt, MIN, Duration::ZERO);
    assert_eq!(a.usage.cache_creation_input_tokens, a.prompt_tokens);
    assert_eq!(b2.usage.cache_creation_input_tokens, b2.prompt_tokens);
    assert_eq!(b2.usage.cache_read_input_tokens, 0);
    cache.commit(&ticket_a, Duration::ZERO);
    cache.commit(&ticket_b, Duration::ZERO);
    let (c, _) = cache.account(&prompt, MIN, Duration::ZERO);
    assert_eq!(c.usage.cache_read_input_tokens, c.prompt_tokens);
}

#[test]
fn an_abandoned_write_is_forgotten() {
    let mut cache = PromptCache::new();
    let b = body(&big_system(), json!([user("hello")]));
    let prompt = analyze(&b).unwrap();
    let (_, ticket) = cache.account(&prompt, MIN, Duration::ZERO);
    cache.abandon(&ticket);
    let (r, _) = cache.account(&prompt, MIN, Duration::ZERO);
    assert_eq!(r.usage.cache_read_input_tokens, 0);
    assert_eq!(cache.readable_entries(Duration::ZERO), 0);
}

#[test]
fn string_content_and_one_text_block_are_the_same_prompt() {
    let mut cache = PromptCache::new();
    let mut a = body(&big_system(), json!([{"role": "user", "content": "same"}]));
    a["system"] = json!(big_system());
    let mut b = body(
        &big_system(),
        json!([{"role": "user", "content": [{"type": "text", "text": "same"}]}]),
    );
    b["system"] = json!([{"type": "text", "text": big_system()}]);
    let pa = analyze(&a).unwrap();
    let pb = analyze(&b).unwrap();
    assert_eq!(pa.total_tokens, pb.total_tokens);
    assert_eq!(
        pa.blocks.last().map(|x| x.key),
        pb.blocks.last().map(|x| x.key)
    );
    let _ = &mut cache;
}

#[test]
fn five_breakpoints_are_refused() {
    let mut b = body(&big_system(), json!([user("a")]));
    let marked = json!({"type": "text", "text": "x", "cache_control": {"type": "ephemeral"}});
    b["messages"] = json!([
        {"role": "user", "content": [marked.clone(), marked.clone(), marked.clone(), marked]},
    ]);
    let err = analyze(&b).unwrap_err();
    assert_eq!(err.status, 400);
    assert_eq!(
        err.message,
        "A maximum of 4 blocks with cache_control may be provided. Found 5."
    );
}

/// The tool search conversation: `ToolSearch` and a deferred placeholder, then `loaded`
/// deferred tools appended, and `rounds` of history, the last loading `mcp__s__big`.
fn tool_search_body(loaded: &[&str], placeholder: bool, rounds: usize) -> Value {
    let mut tools = vec![
        json!({"name": "ToolSearch", "description": "finds tools", "input_schema": {"type": "object"}}),
    ];
    if placeholder {
        tools.push(json!({"name": "DeferredToolPlaceholder", "description": "keeps it on", "input_schema": {"type": "object"}, "defer_loading": true}));
    }
    for name in loaded {
        tools.push(json!({"name": name, "description": "x ".repeat(2000), "input_schema": {"type": "object"}, "defer_loading": true}));
    }
    let mut messages =
        vec![json!({"role": "user", "content": [{"type": "text", "text": "find the big tool"}]})];
    if rounds > 0 {
        messages.push(json!({"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "ToolSearch", "input": {"query": "select:mcp__s__big"}}]}));
        messages.push(json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "tool_reference", "tool_name": "mcp__s__big"}]},
            {"type": "text", "text": "Tool loaded."}]}));
    }
    let last = messages.len() - 1;
    let blocks = messages[last]["content"].as_array_mut().unwrap();
    let end = blocks.len() - 1;
    blocks[end]["cache_control"] = json!({"type": "ephemeral"});
    json!({
        "model": "claude-test",
        "max_tokens": 100,
        "tools": tools,
        "system": [{"type": "text", "text": big_system(), "cache_control": {"type": "ephemeral"}}],
        "messages": messages,
    })
}

#[test]
fn a_deferred_tool_is_out_of_the_prefix_until_a_reference_loads_it() {
    let mut cache = PromptCache::new();
    // Request 1: nothing loaded (the big tool not even listed): writes its whole prompt.
    let first = run(&mut cache, &tool_search_body(&[], true, 0), Duration::ZERO);
    assert_sums(&first);
    // Listing a deferred tool adds nothing to the prompt until it is referenced.
    let listed = analyze(&tool_search_body(&["mcp__s__big"], true, 0)).unwrap();
    assert_eq!(listed.total_tokens, first.prompt_tokens);
    // Request 2: the ToolSearch round loads it; the array grew, yet the whole earlier prompt
    // is read, and the definition is counted where the reference stands.
    let second = run(
        &mut cache,
        &tool_search_body(&["mcp__s__big"], true, 1),
        Duration::from_secs(5),
    );
    assert_sums(&second);
    assert_eq!(second.usage.cache_read_input_tokens, first.prompt_tokens);
    assert!(
        second.usage.cache_creation_input_tokens > 1000,
        "the referenced definition is written in the messages: {second:?}"
    );
    let largest_message_block = analyze(&tool_search_body(&["mcp__s__big"], true, 1))
        .unwrap()
        .blocks
        .iter()
        .filter(|b| b.segment == Segment::Messages)
        .map(|b| b.tokens)
        .max();
    assert!(
        largest_message_block > Some(1000),
        "the tool result holds it"
    );
}

#[test]
fn without_a_deferred_placeholder_the_first_load_misses() {
    let mut cache = PromptCache::new();
    let first = run(&mut cache, &tool_search_body(&[], false, 0), Duration::ZERO);
    let second = run(
        &mut cache,
        &tool_search_body(&["mcp__s__big"], false, 1),
        Duration::from_secs(5),
    );
    assert_eq!(first.usage.cache_read_input_tokens, 0);
    assert_eq!(
        second.usage.cache_read_input_tokens, 0,
        "tool search turned on"
    );
}
