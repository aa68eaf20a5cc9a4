//! Prompt-cache accounting, as the real API documents it.
//!
//! On each request: look for the longest cached prefix that ends at a breakpoint or at most
//! [`LOOKBACK_BLOCKS`]` - 1` blocks before one (that is a read, and refreshes the entry's TTL);
//! then every breakpoint past it whose prefix reaches the model's minimum writes an entry. A
//! written entry is *pending* until [`PromptCache::commit`] is called when the response that
//! wrote it starts, so requests sent at the same moment do not share.
//!
//! Usage: `cache_read` = prefix tokens of the hit; `cache_creation` = tokens from the hit to the
//! last written breakpoint (split by the TTL of the breakpoint closing each span);
//! `input_tokens` = the rest, i.e. what lies after the last breakpoint.

use std::collections::HashMap;
use std::time::Duration;

use serde::Serialize;

use crate::prompt::{CacheTtl, Prompt, Segment};

/// How many block positions, counting the breakpoint's own, are checked for a hit.
pub const LOOKBACK_BLOCKS: usize = 20;

/// How long a pending entry may wait for its response to start before it is forgotten.
const ABANDONED_AFTER: Duration = Duration::from_secs(600);

/// The default minimum cacheable prefix, in tokens.
pub const DEFAULT_MIN_CACHEABLE_TOKENS: u64 = 1024;

#[derive(Debug, Clone)]
struct Entry {
    ttl: CacheTtl,
    expires_at: Duration,
    /// Pending entries are not readable; the writing ticket's id.
    pending: Option<u64>,
}

/// The cache of one simulator: entries keyed by the running hash of a prefix.
#[derive(Debug, Default)]
pub struct PromptCache {
    entries: HashMap<u64, Entry>,
    next_ticket: u64,
    accounts_since_sweep: u32,
}

/// The usage figures of one request, as the API reports them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub cache_creation_input_tokens: u64,
    pub cache_read_input_tokens: u64,
    pub ephemeral_5m_input_tokens: u64,
    pub ephemeral_1h_input_tokens: u64,
    pub output_tokens: u64,
}

impl Usage {
    /// `usage` as the API sends it.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "input_tokens": self.input_tokens,
            "cache_creation_input_tokens": self.cache_creation_input_tokens,
            "cache_read_input_tokens": self.cache_read_input_tokens,
            "cache_creation": {
                "ephemeral_5m_input_tokens": self.ephemeral_5m_input_tokens,
                "ephemeral_1h_input_tokens": self.ephemeral_1h_input_tokens,
            },
            "output_tokens": self.output_tokens,
            "service_tier": "standard",
        })
    }

    /// All prompt tokens: read + creation + input.
    pub fn prompt_tokens(&self) -> u64 {
        self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens
    }
}

/// A breakpoint of a request and what became of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BreakpointReport {
    /// Index into the prompt's blocks.
    pub block: usize,
    pub segment: Segment,
    pub message: Option<usize>,
    pub index: usize,
    pub ttl: CacheTtl,
    pub prefix_tokens: u64,
    /// Whether this breakpoint wrote (or refreshed a pending) entry.
    pub written: bool,
}

/// Where a request's cache read ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CacheHit {
    pub block: usize,
    pub segment: Segment,
    pub message: Option<usize>,
    pub index: usize,
    pub prefix_tokens: u64,
}

/// The cache's account of one request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CacheReport {
    pub prompt_tokens: u64,
    pub min_cacheable_tokens: u64,
    pub breakpoints: Vec<BreakpointReport>,
    pub hit: Option<CacheHit>,
    /// Usage without output tokens.
    pub usage: Usage,
}

/// Entries a request wrote; commit it when its response starts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WriteTicket {
    id: u64,
    keys: Vec<u64>,
}

impl PromptCache {
    pub fn new() -> Self {
        Self::default()
    }

    /// Reads and writes the cache for one prompt at time `now`.
    pub fn account(
        &mut self,
        prompt: &Prompt,
        min_cacheable_tokens: u64,
        now: Duration,
    ) -> (CacheReport, WriteTicket) {
        self.sweep(now);
        let blocks = &prompt.blocks;
        // Longest readable prefix ending at a breakpoint or within the lookback before one.
        let mut hit: Option<usize> = None;
        for bp in prompt.breakpoints() {
            let lowest = bp.saturating_sub(LOOKBACK_BLOCKS - 1);
            for pos in (lowest..=bp).rev() {
                if hit.is_some_and(|h| h >= pos) {
                    break;
                }
                if self.readable(blocks[pos].key, now) {
                    hit = Some(pos);
                    break;
                }
            }
        }
        let read_tokens = hit.map_or(0, |h| blocks[h].prefix_tokens);
        if let Some(h) = hit
            && let Some(entry) = self.entries.get_mut(&blocks[h].key)
        {
            entry.expires_at = now + entry.ttl.duration();
        }

        self.next_ticket += 1;
        let ticket_id = self.next_ticket;
        let mut ticket = WriteTicket {
            id: ticket_id,
            keys: Vec::new(),
        };
        let mut usage = Usage::default();
        let mut covered = read_tokens;
        let mut reports = Vec::new();
        for bp in prompt.breakpoints() {
            let block = &blocks[bp];
            let Some(ttl) = block.breakpoint else {
                continue;
            };
            let past_hit = hit.is_none_or(|h| bp > h);
            let written = past_hit && block.prefix_tokens >= min_cacheable_tokens;
            if written {
                let span = block.prefix_tokens.saturating_sub(covered);
                covered = covered.max(block.prefix_tokens);
                match ttl {
                    CacheTtl::FiveMinutes => usage.ephemeral_5m_input_tokens += span,
                    CacheTtl::OneHour => usage.ephemeral_1h_input_tokens += span,
                }
                let entry = self.entries.entry(block.key).or_insert(Entry {
                    ttl,
                    expires_at: now,
                    pending: Some(ticket_id),
                });
                if entry.pending.is_some() || entry.expires_at <= now {
                    // Not readable yet (or expired): this request (re)writes it.
                    entry.pending = Some(ticket_id);
                    entry.ttl = ttl;
                    // For a pending entry, `expires_at` records when it was written.
                    entry.expires_at = now;
                    ticket.keys.push(block.key);
                }
            }
            reports.push(BreakpointReport {
                block: bp,
                segment: block.segment,
                message: block.message,
                index: block.index,
                ttl,
                prefix_tokens: block.prefix_tokens,
                written,
            });
        }
        usage.cache_read_input_tokens = read_tokens;
        usage.cache_creation_input_tokens =
            usage.ephemeral_5m_input_tokens + usage.ephemeral_1h_input_tokens;
        usage.input_tokens = prompt
            .total_tokens
            .saturating_sub(read_tokens + usage.cache_creation_input_tokens);
        let report = CacheReport {
            prompt_tokens: prompt.total_tokens,
            min_cacheable_tokens,
            breakpoints: reports,
            hit: hit.map(|h| CacheHit {
                block: h,
                segment: blocks[h].segment,
                message: blocks[h].message,
                index: blocks[h].index,
                prefix_tokens: blocks[h].prefix_tokens,
            }),
            usage,
        };
        (report, ticket)
    }

    /// Makes a request's written entries readable: its response has started.
    pub fn commit(&mut self, ticket: &WriteTicket, now: Duration) {
        for key in &ticket.keys {
            if let Some(entry) = self.entries.get_mut(key)
                && entry.pending.is_some()
            {
                entry.pending = None;
                entry.expires_at = now + entry.ttl.duration();
            }
        }
    }

    /// Forgets a request's pending entries (its response never started).
    pub fn abandon(&mut self, ticket: &WriteTicket) {
        for key in &ticket.keys {
            if self
                .entries
                .get(key)
                .is_some_and(|e| e.pending == Some(ticket.id))
            {
                self.entries.remove(key);
            }
        }
    }

    /// Drops every entry.
    pub fn clear(&mut self) {
        self.entries.clear();
    }

    /// Number of readable entries at `now`.
    pub fn readable_entries(&self, now: Duration) -> usize {
        self.entries
            .values()
            .filter(|e| e.pending.is_none() && e.expires_at > now)
            .count()
    }

    fn readable(&self, key: u64, now: Duration) -> bool {
        self.entries
            .get(&key)
            .is_some_and(|e| e.pending.is_none() && e.expires_at > now)
    }

    /// Removes expired entries now and then, so a long run does not grow without bound.
    fn sweep(&mut self, now: Duration) {
        self.accounts_since_sweep += 1;
        if self.accounts_since_sweep < 256 {
            return;
        }
        self.accounts_since_sweep = 0;
        // A pending entry whose response never started (client gone) is dropped after a while.
        self.entries.retain(|_, e| match e.pending {
            Some(_) => e.expires_at + ABANDONED_AFTER > now,
            None => e.expires_at > now,
        });
    }
}

#[cfg(test)]
#[path = "cache_tests.rs"]
mod tests;
