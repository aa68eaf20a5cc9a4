//! Token usage (with the prompt-cache fields), per-model prices and context windows, and cost.
//!
//! `cache_read_input_tokens + cache_creation_input_tokens + input_tokens` is the whole prompt;
//! `input_tokens` is only what follows the last cache breakpoint.

use std::ops::{Add, AddAssign};

use serde::{Deserialize, Serialize};

/// Cache writes split by lifetime.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct CacheCreation {
    /// Tokens written with the five-minute lifetime.
    #[serde(default)]
    pub ephemeral_5m_input_tokens: u64,
    /// Tokens written with the one-hour lifetime.
    #[serde(default)]
    pub ephemeral_1h_input_tokens: u64,
}

impl Add for CacheCreation {
    type Output = Self;
    fn add(self, rhs: Self) -> Self {
        Self {
            ephemeral_5m_input_tokens: self.ephemeral_5m_input_tokens
                + rhs.ephemeral_5m_input_tokens,
            ephemeral_1h_input_tokens: self.ephemeral_1h_input_tokens
                + rhs.ephemeral_1h_input_tokens,
        }
    }
}

/// Token counts of one response (or, summed with `+`, of many).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens neither read from nor written to the cache.
    #[serde(default)]
    pub input_tokens: u64,
    /// Output tokens.
    #[serde(default)]
    pub output_tokens: u64,
    /// Prompt tokens written to the cache.
    #[serde(default)]
    pub cache_creation_input_tokens: u64,
    /// Prompt tokens read from the cache.
    #[serde(default)]
    pub cache_read_input_tokens: u64,
    /// Cache writes by lifetime.
    #[serde(default)]
    pub cache_creation: CacheCreation,
    /// The figures are tine's estimate, not the server's count: an OpenAI-compatible stream
    /// ended without usage (llama-cpp-python's server sends none even when asked), so the
    /// prompt and the reply were counted at [`ESTIMATE_BYTES_PER_TOKEN`] bytes a token. A sum
    /// is estimated when any part is.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub estimated: bool,
}

/// Bytes of JSON (or text) per token in tine's estimates: compaction's thresholds and a
/// stream that carried no usage. Close enough to real tokenizers to keep margins right.
pub const ESTIMATE_BYTES_PER_TOKEN: u64 = 4;

/// Estimated tokens of `bytes` bytes ([`ESTIMATE_BYTES_PER_TOKEN`] a token, rounded up).
pub fn estimate_tokens(bytes: usize) -> u64 {
    (bytes as u64).div_ceil(ESTIMATE_BYTES_PER_TOKEN)
}

impl Usage {
    /// Every prompt token: uncached input + cache writes + cache reads.
    pub fn total_input_tokens(&self) -> u64 {
        self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens
    }

    /// Prompt plus output: how much of the context window this exchange occupies.
    pub fn total_tokens(&self) -> u64 {
        self.total_input_tokens() + self.output_tokens
    }

    /// Cache writes split by lifetime. When the server did not send the breakdown, all writes
    /// count as 5-minute writes (the default lifetime).
    pub fn cache_writes(&self) -> CacheCreation {
        let split = self.cache_creation;
        if split.ephemeral_5m_input_tokens + split.ephemeral_1h_input_tokens == 0 {
            CacheCreation {
                ephemeral_5m_input_tokens: self.cache_creation_input_tokens,
                ephemeral_1h_input_tokens: 0,
            }
        } else {
            split
        }
    }

    /// Apply a `message_delta`'s cumulative usage: each field it carries replaces ours.
    pub fn apply_delta(&mut self, delta: &UsageDelta) {
        if let Some(v) = delta.input_tokens {
            self.input_tokens = v;
        }
        if let Some(v) = delta.output_tokens {
            self.output_tokens = v;
        }
        if let Some(v) = delta.cache_creation_input_tokens {
            self.cache_creation_input_tokens = v;
        }
        if let Some(v) = delta.cache_read_input_tokens {
            self.cache_read_input_tokens = v;
        }
        if let Some(v) = delta.cache_creation {
            self.cache_creation = v;
        }
        if let Some(v) = delta.estimated {
            self.estimated = v;
        }
    }
}

impl Add for Usage {
    type Output = Self;
    fn add(self, rhs: Self) -> Self {
        Self {
            input_tokens: self.input_tokens + rhs.input_tokens,
            output_tokens: self.output_tokens + rhs.output_tokens,
            cache_creation_input_tokens: self.cache_creation_input_tokens
                + rhs.cache_creation_input_tokens,
            cache_read_input_tokens: self.cache_read_input_tokens + rhs.cache_read_input_tokens,
            cache_creation: self.cache_creation + rhs.cache_creation,
            estimated: self.estimated || rhs.estimated,
        }
    }
}

impl AddAssign for Usage {
    fn add_assign(&mut self, rhs: Self) {
        *self = *self + rhs;
    }
}

impl std::iter::Sum for Usage {
    fn sum<I: Iterator<Item = Usage>>(iter: I) -> Self {
        iter.fold(Usage::default(), Add::add)
    }
}

/// The usage carried by `message_delta`: cumulative counts, each field optional (a field the
/// server omits keeps the value `message_start` gave).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct UsageDelta {
    /// Uncached prompt tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u64>,
    /// Output tokens so far.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
    /// Prompt tokens written to the cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_creation_input_tokens: Option<u64>,
    /// Prompt tokens read from the cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read_input_tokens: Option<u64>,
    /// Cache writes by lifetime.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_creation: Option<CacheCreation>,
    /// tine's: the counts are an estimate ([`Usage::estimated`]); no server sends it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimated: Option<bool>,
}

/// Prices in USD per million tokens, and the model's limits.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ModelInfo {
    /// The id prefix this entry matches (`claude-sonnet-4-5` matches `claude-sonnet-4-5-20250929`).
    pub family: &'static str,
    /// USD per million uncached input tokens.
    pub input_per_mtok: f64,
    /// USD per million output tokens.
    pub output_per_mtok: f64,
    /// What a cache hit costs, as a share of the input price (0.1 for most models; Opus 5.5 and
    /// Sonnet 5.5 read at 0.05, Fable 5.1 at 0.025).
    pub cache_read_multiplier: f64,
    /// The context window, in tokens.
    pub context_window: u64,
    /// The most output tokens a reply may have.
    pub max_output_tokens: u64,
    /// Whether the model thinks adaptively (the Claude 5 generation, Opus and Sonnet 4.6): a
    /// session that turns thinking on asks `{"type": "adaptive"}` rather than a budget, which
    /// these models refuse or ignore.
    pub adaptive_thinking: bool,
    /// Above this many prompt tokens (input, cache reads and writes) every rate of the request
    /// is multiplied by `long_prompt_factor` (Haiku 5.5: above 100k, 5x).
    pub long_prompt_over: Option<u64>,
    /// The multiplier of a long prompt's request (see `long_prompt_over`).
    pub long_prompt_factor: f64,
    /// False for a model the table does not know: it is priced as its family's current model
    /// (a Claude id), or not at all (any other model, [`ModelInfo::note`] says which).
    pub known: bool,
}

impl ModelInfo {
    /// 5-minute cache write: 1.25x input.
    pub fn cache_write_5m_per_mtok(&self) -> f64 {
        self.input_per_mtok * 1.25
    }

    /// 1-hour cache write: 2x input.
    pub fn cache_write_1h_per_mtok(&self) -> f64 {
        self.input_per_mtok * 2.0
    }

    /// Cache read: the model's multiplier of input (0.1x for most).
    pub fn cache_read_per_mtok(&self) -> f64 {
        self.input_per_mtok * self.cache_read_multiplier
    }

    /// The cost of `usage` at these prices.
    pub fn cost_usd(&self, usage: &Usage) -> f64 {
        let writes = usage.cache_writes();
        let micro = usage.input_tokens as f64 * self.input_per_mtok
            + usage.output_tokens as f64 * self.output_per_mtok
            + writes.ephemeral_5m_input_tokens as f64 * self.cache_write_5m_per_mtok()
            + writes.ephemeral_1h_input_tokens as f64 * self.cache_write_1h_per_mtok()
            + usage.cache_read_input_tokens as f64 * self.cache_read_per_mtok();
        let factor = match self.long_prompt_over {
            Some(over) if usage.total_input_tokens() > over => self.long_prompt_factor,
            _ => 1.0,
        };
        micro * factor / 1_000_000.0
    }

    /// For a model priced by assumption, what it is priced as (for `/cost`, `tine doctor` and
    /// the result's `modelUsage`); `None` for a model of the table.
    pub fn note(&self, model: &str) -> Option<String> {
        if self.known {
            return None;
        }
        Some(match self.family {
            "other" => format!(
                "{model} is not a Claude model: tine has no price for it and counts it as $0"
            ),
            family => format!(
                "{model} is not in tine's price table: priced as {family}, its family's current model"
            ),
        })
    }
}

/// The default context window when nothing more specific is known.
pub const DEFAULT_CONTEXT_WINDOW: u64 = 200_000;

/// The context window assumed for a model that is not Claude and not in the table (a local
/// model on an OpenAI-compatible server): what most current open models offer. Set
/// `TINE_CONTEXT_WINDOW` for the model actually loaded.
pub const DEFAULT_OTHER_CONTEXT_WINDOW: u64 = 128_000;

const fn entry(family: &'static str, input: f64, output: f64, max_output: u64) -> ModelInfo {
    ModelInfo {
        family,
        input_per_mtok: input,
        output_per_mtok: output,
        cache_read_multiplier: 0.1,
        context_window: DEFAULT_CONTEXT_WINDOW,
        max_output_tokens: max_output,
        adaptive_thinking: false,
        long_prompt_over: None,
        long_prompt_factor: 1.0,
        known: true,
    }
}

/// A Claude 5 generation model (and Opus/Sonnet 4.6): a million-token window, 128k of output,
/// adaptive thinking, its own cache-read multiplier.
const fn claude5(family: &'static str, input: f64, output: f64, read: f64) -> ModelInfo {
    ModelInfo {
        cache_read_multiplier: read,
        context_window: 1_000_000,
        max_output_tokens: 128_000,
        adaptive_thinking: true,
        ..entry(family, input, output, 128_000)
    }
}

/// Known models, most specific prefix first (matching takes the first hit). Prices from
/// Anthropic's pricing page (platform.claude.com/docs/en/about-claude/pricing, read
/// 2026-12-07): base input, output, and cache hits as a share of input; writes are 1.25x (5
/// minutes) and 2x (1 hour) for every model.
const MODELS: &[ModelInfo] = &[
    claude5("claude-fable-5-2", 8.0, 40.0, 0.025),
    claude5("claude-fable-5-1", 10.0, 50.0, 0.025),
    claude5("claude-fable-5", 10.0, 50.0, 0.1),
    claude5("claude-opus-5-5", 4.0, 20.0, 0.05),
    claude5("claude-opus-5", 5.0, 25.0, 0.1),
    // Sonnet 5.5's cache hits went from 0.1x to 0.05x on 2026-10-07.
    claude5("claude-sonnet-5-5", 2.0, 10.0, 0.05),
    claude5("claude-sonnet-5", 2.0, 10.0, 0.1),
    // Haiku 5.5: a prompt over 100k tokens pays 5x on every token of its request.
    ModelInfo {
        long_prompt_over: Some(100_000),
        long_prompt_factor: 5.0,
        ..claude5("claude-haiku-5-5", 0.1, 0.5, 0.1)
    },
    claude5("claude-opus-4-8", 5.0, 25.0, 0.1),
    claude5("claude-opus-4-7", 5.0, 25.0, 0.1),
    claude5("claude-opus-4-6", 5.0, 25.0, 0.1),
    entry("claude-opus-4-5", 5.0, 25.0, 64_000),
    entry("claude-opus-4-1", 15.0, 75.0, 32_000),
    entry("claude-opus-4", 15.0, 75.0, 32_000),
    ModelInfo {
        max_output_tokens: 64_000,
        ..claude5("claude-sonnet-4-6", 3.0, 15.0, 0.1)
    },
    entry("claude-sonnet-4-5", 3.0, 15.0, 64_000),
    entry("claude-sonnet-4", 3.0, 15.0, 64_000),
    entry("claude-haiku-4-5", 1.0, 5.0, 64_000),
    entry("claude-3-7-sonnet", 3.0, 15.0, 64_000),
    entry("claude-3-5-sonnet", 3.0, 15.0, 8_192),
    entry("claude-3-5-haiku", 0.8, 4.0, 8_192),
    entry("claude-3-opus", 15.0, 75.0, 4_096),
    entry("claude-3-haiku", 0.25, 1.25, 4_096),
];

/// Any other model (`qwen2.5-coder:7b` on Ollama, a model on vLLM): no price is known, so it
/// costs nothing here (a local model does; a hosted one's bill is not ours to guess).
const OTHER: ModelInfo = ModelInfo {
    family: "other",
    input_per_mtok: 0.0,
    output_per_mtok: 0.0,
    cache_read_multiplier: 0.1,
    context_window: DEFAULT_OTHER_CONTEXT_WINDOW,
    max_output_tokens: 32_000,
    adaptive_thinking: false,
    long_prompt_over: None,
    long_prompt_factor: 1.0,
    known: false,
};

/// Prices and limits for `model`. Accepts dated ids (`claude-sonnet-4-5-20250929`), aliases
/// (`claude-sonnet-4-5`), provider prefixes (`anthropic.claude-…`, `us.anthropic.claude-…`) and a
/// `[1m]` suffix selecting the one-million-token context window. A Claude id the table lacks
/// (`claude-opus-6`, `claude-sonnet-5-7-…`) is priced as its family's current model (the alias's),
/// never as free; `known` is false and [`ModelInfo::note`] says so.
pub fn model_info(model: &str) -> ModelInfo {
    let lower = model.to_ascii_lowercase();
    let one_million = lower.ends_with("[1m]");
    let found = MODELS
        .iter()
        .find(|m| names_family(&lower, m.family))
        .copied()
        .unwrap_or_else(|| {
            if !lower.contains("claude") {
                return OTHER;
            }
            // Its family by name; a Claude id naming none is priced as the default model's.
            let family = ["haiku", "sonnet", "opus", "fable"]
                .into_iter()
                .find(|f| lower.contains(f))
                .unwrap_or("opus");
            let current = MODEL_ALIASES
                .iter()
                .find(|(alias, _)| *alias == family)
                .map_or("claude-fable-5-2", |(_, id)| id);
            let priced = MODELS
                .iter()
                .find(|m| m.family == current)
                .copied()
                .unwrap_or(OTHER);
            ModelInfo {
                known: false,
                ..priced
            }
        });
    if one_million {
        ModelInfo {
            context_window: 1_000_000,
            ..found
        }
    } else {
        found
    }
}

/// Whether `model` (lower case) is `family` or one of its dated or provider-wrapped ids: what
/// follows the family is nothing, a date, `-latest`, a provider's `-v1:0` or `@…` suffix, or
/// `[1m]`, never more of a version number (`claude-sonnet-5-7` is not `claude-sonnet-5`).
fn names_family(model: &str, family: &str) -> bool {
    model.match_indices(family).any(|(at, _)| {
        let rest = &model[at + family.len()..];
        match rest.strip_prefix('-') {
            None => rest.is_empty() || rest.starts_with(['[', '@', ':']),
            Some(tail) => {
                let segment = tail.split(['-', '@', ':', '[']).next().unwrap_or_default();
                (segment.len() >= 6 && segment.bytes().all(|b| b.is_ascii_digit()))
                    || segment == "latest"
                    || (segment.starts_with('v')
                        && segment[1..].bytes().all(|b| b.is_ascii_digit()))
            }
        }
    })
}

/// The current model of each alias Claude Code users type (`--model opus`, `/model haiku`,
/// `model: sonnet` in settings or a command's front matter): Claude Code 2.1.332's mapping.
pub(crate) const MODEL_ALIASES: &[(&str, &str)] = &[
    ("opus", "claude-opus-5-5"),
    ("sonnet", "claude-sonnet-5-5"),
    ("haiku", "claude-haiku-5-5"),
];

/// `model` with an alias replaced by its current id (`opus` → `claude-opus-5-5`; a `[1m]`
/// suffix is kept: it selects the one-million-token window). Anything else is returned as is.
pub fn resolve_model_alias(model: &str) -> String {
    let trimmed = model.trim();
    let (name, suffix) = match split_one_million(trimmed) {
        (name, true) => (name, &trimmed[name.len()..]),
        (name, false) => (name, ""),
    };
    MODEL_ALIASES
        .iter()
        .find(|(alias, _)| alias.eq_ignore_ascii_case(name))
        .map(|(_, id)| format!("{id}{suffix}"))
        .unwrap_or_else(|| trimmed.to_owned())
}

/// The `anthropic-beta` flag a `[1m]` model needs: the one-million-token context window.
pub(crate) const CONTEXT_1M_BETA: &str = "context-1m-2025-08-07";

/// `model` without its `[1m]` suffix (the id the API knows), and whether it had one. tine
/// keeps the suffix in the model's name everywhere else: it selects the 1M window for
/// compaction's thresholds and the long-context prices.
pub(crate) fn split_one_million(model: &str) -> (&str, bool) {
    match model.len().checked_sub(4) {
        Some(at) if model.is_char_boundary(at) && model[at..].eq_ignore_ascii_case("[1m]") => {
            (&model[..at], true)
        }
        _ => (model, false),
    }
}

/// The context window of `model` in tokens (200k for Claude models unless known otherwise, 128k
/// for any other model).
pub fn context_window(model: &str) -> u64 {
    model_info(model).context_window
}

/// Above this many prompt tokens a `[1m]` request is billed at the long-context rates.
const LONG_CONTEXT_THRESHOLD: u64 = 200_000;

/// What `usage` cost in USD on `model`. A `[1m]` request of a model whose million-token window
/// is a beta (Sonnet 4 and 4.5) whose prompt passes 200k tokens is billed at the long-context
/// rates: input (and so cache) ×2, output ×1.5. Models with a million-token window of their own
/// have no surcharge.
pub fn cost_usd(model: &str, usage: &Usage) -> f64 {
    let info = model_info(model);
    let prompt =
        usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens;
    let beta_window = info.context_window == 1_000_000 && !info.adaptive_thinking;
    if split_one_million(model.trim()).1 && beta_window && prompt > LONG_CONTEXT_THRESHOLD {
        ModelInfo {
            input_per_mtok: info.input_per_mtok * 2.0,
            output_per_mtok: info.output_per_mtok * 1.5,
            ..info
        }
        .cost_usd(usage)
    } else {
        info.cost_usd(usage)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn approx(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn aliases_resolve_to_current_ids() {
        assert_eq!(resolve_model_alias("opus"), "claude-opus-5-5");
        assert_eq!(resolve_model_alias("Sonnet"), "claude-sonnet-5-5");
        assert_eq!(resolve_model_alias("haiku"), "claude-haiku-5-5");
        assert_eq!(resolve_model_alias("sonnet[1m]"), "claude-sonnet-5-5[1m]");
        assert_eq!(
            context_window(&resolve_model_alias("sonnet[1m]")),
            1_000_000
        );
        assert_eq!(resolve_model_alias("claude-opus-4-1"), "claude-opus-4-1");
        assert_eq!(resolve_model_alias("qwen2.5-coder:7b"), "qwen2.5-coder:7b");
        // Each alias is priced as its model, not as an unknown one.
        for (alias, _) in MODEL_ALIASES {
            assert!(model_info(&resolve_model_alias(alias)).known, "{alias}");
        }
    }

    #[test]
    fn one_million_suffix_splits_off_and_prices_long_prompts_higher() {
        assert_eq!(
            split_one_million("claude-sonnet-4-6[1m]"),
            ("claude-sonnet-4-6", true)
        );
        assert_eq!(
            split_one_million("claude-sonnet-4-6[1M]"),
            ("claude-sonnet-4-6", true)
        );
        assert_eq!(
            split_one_million("claude-sonnet-4-6"),
            ("claude-sonnet-4-6", false)
        );
        let short = Usage {
            input_tokens: 100_000,
            output_tokens: 1_000_000,
            ..Usage::default()
        };
        assert!(approx(
            cost_usd("claude-sonnet-4-6[1m]", &short),
            cost_usd("claude-sonnet-4-6", &short)
        ));
        let long = Usage {
            input_tokens: 1_000_000,
            output_tokens: 1_000_000,
            ..Usage::default()
        };
        assert!(approx(cost_usd("claude-sonnet-4-5", &long), 3.0 + 15.0));
        assert!(approx(cost_usd("claude-sonnet-4-5[1m]", &long), 6.0 + 22.5));
        // A model whose window is a million tokens of its own has no surcharge.
        assert!(approx(cost_usd("claude-sonnet-4-6[1m]", &long), 3.0 + 15.0));
        assert!(approx(cost_usd("claude-opus-5-5[1m]", &long), 4.0 + 20.0));
    }

    #[test]
    fn cost_applies_cache_multipliers() {
        let usage = Usage {
            input_tokens: 1_000_000,
            output_tokens: 1_000_000,
            cache_creation_input_tokens: 3_000_000,
            cache_read_input_tokens: 1_000_000,
            cache_creation: CacheCreation {
                ephemeral_5m_input_tokens: 2_000_000,
                ephemeral_1h_input_tokens: 1_000_000,
            },
            ..Usage::default()
        };
        // sonnet: 3 in + 15 out + 2*3.75 (5m) + 1*6 (1h) + 0.3 read
        assert!(approx(
            cost_usd("claude-sonnet-4-5-20250929", &usage),
            3.0 + 15.0 + 7.5 + 6.0 + 0.3
        ));
    }

    #[test]
    fn cache_writes_without_breakdown_count_as_5m() {
        let usage = Usage {
            cache_creation_input_tokens: 1_000_000,
            ..Usage::default()
        };
        assert!(approx(cost_usd("claude-opus-4-1", &usage), 15.0 * 1.25));
    }

    #[test]
    fn model_lookup_prefers_most_specific() {
        assert_eq!(model_info("claude-opus-4-5-20251101").input_per_mtok, 5.0);
        assert_eq!(model_info("claude-opus-4-20250514").input_per_mtok, 15.0);
        assert_eq!(model_info("claude-haiku-4-5").output_per_mtok, 5.0);
        assert_eq!(model_info("claude-3-5-haiku-latest").input_per_mtok, 0.8);
        assert_eq!(
            model_info("us.anthropic.claude-sonnet-4-20250514-v1:0").family,
            "claude-sonnet-4"
        );
        assert!(model_info("claude-3-7-sonnet-latest").known);
        assert_eq!(
            model_info("claude-opus-5-5-20260922").family,
            "claude-opus-5-5"
        );
        assert_eq!(
            model_info("claude-opus-5-5@20260922").family,
            "claude-opus-5-5"
        );
        assert_eq!(
            model_info("global.anthropic.claude-opus-4-6-v1").family,
            "claude-opus-4-6"
        );
        // More of a version number is another model, not this one.
        assert!(!model_info("claude-sonnet-5-7").known);
        assert!(!model_info("claude-opus-4-9").known);
    }

    #[test]
    fn the_current_models_are_priced_from_the_pricing_page() {
        let million = |input, output, read, write_5m, write_1h| Usage {
            input_tokens: input,
            output_tokens: output,
            cache_read_input_tokens: read,
            cache_creation_input_tokens: write_5m + write_1h,
            cache_creation: CacheCreation {
                ephemeral_5m_input_tokens: write_5m,
                ephemeral_1h_input_tokens: write_1h,
            },
            ..Usage::default()
        };
        let m = 1_000_000;
        // Opus 5.5: $4 in, $20 out, $5 / $8 writes, $0.20 hits.
        let opus = "claude-opus-5-5";
        assert!(approx(cost_usd(opus, &million(m, 0, 0, 0, 0)), 4.0));
        assert!(approx(cost_usd(opus, &million(0, m, 0, 0, 0)), 20.0));
        assert!(approx(cost_usd(opus, &million(0, 0, m, 0, 0)), 0.20));
        assert!(approx(cost_usd(opus, &million(0, 0, 0, m, 0)), 5.0));
        assert!(approx(cost_usd(opus, &million(0, 0, 0, 0, m)), 8.0));
        // Sonnet 5.5: $2 / $10, hits $0.10 since 2026-10-07.
        assert!(approx(
            cost_usd("claude-sonnet-5-5", &million(m, m, m, 0, 0)),
            12.10
        ));
        // Haiku 5.5: $0.10 / $0.50 and $0.01 hits up to 100k of prompt, 5x above.
        let short = Usage {
            input_tokens: 50_000,
            output_tokens: 10_000,
            cache_read_input_tokens: 40_000,
            ..Usage::default()
        };
        let short_cost = (50_000.0 * 0.1 + 10_000.0 * 0.5 + 40_000.0 * 0.01) / 1e6;
        assert!(approx(cost_usd("claude-haiku-5-5", &short), short_cost));
        let long = Usage {
            cache_read_input_tokens: 90_000,
            ..short
        };
        let long_cost = 5.0 * (50_000.0 * 0.1 + 10_000.0 * 0.5 + 90_000.0 * 0.01) / 1e6;
        assert!(approx(cost_usd("claude-haiku-5-5", &long), long_cost));
        for model in ["claude-opus-5-5", "claude-sonnet-5-5", "claude-haiku-5-5"] {
            let info = model_info(model);
            assert!(info.known && info.adaptive_thinking, "{model}");
            assert_eq!(info.context_window, 1_000_000, "{model}");
            assert_eq!(info.max_output_tokens, 128_000, "{model}");
            assert_eq!(info.note(model), None);
        }
    }

    #[test]
    fn a_claude_model_missing_from_the_table_is_priced_as_its_family_with_a_note() {
        let usage = Usage {
            input_tokens: 1_000_000,
            ..Usage::default()
        };
        for (model, as_model) in [
            ("claude-opus-6", "claude-opus-5-5"),
            ("claude-sonnet-5-7-20270101", "claude-sonnet-5-5"),
            ("claude-haiku-6", "claude-haiku-5-5"),
            ("claude-some-future-model", "claude-opus-5-5"),
        ] {
            let info = model_info(model);
            assert!(!info.known, "{model}");
            assert_eq!(info.family, as_model, "{model}");
            assert!(cost_usd(model, &usage) > 0.0, "{model} is never free");
            assert!(approx(cost_usd(model, &usage), cost_usd(as_model, &usage)));
            let note = info.note(model).unwrap();
            assert!(note.contains(model) && note.contains(as_model), "{note}");
        }
    }

    #[test]
    fn other_models_cost_nothing_and_get_a_128k_window() {
        for model in [
            "qwen2.5-coder:7b",
            "gpt-4o",
            "meta-llama/Llama-3.1-8B-Instruct",
        ] {
            let info = model_info(model);
            assert!(!info.known, "{model}");
            assert_eq!(info.context_window, DEFAULT_OTHER_CONTEXT_WINDOW, "{model}");
            let usage = Usage {
                input_tokens: 1_000_000,
                output_tokens: 1_000_000,
                cache_read_input_tokens: 1_000_000,
                ..Usage::default()
            };
            assert_eq!(cost_usd(model, &usage), 0.0, "{model}");
        }
    }

    #[test]
    fn one_million_suffix_widens_window() {
        assert_eq!(context_window("claude-sonnet-4-5[1m]"), 1_000_000);
        assert_eq!(context_window("claude-sonnet-4-5"), 200_000);
    }

    #[test]
    fn usage_adds_and_applies_deltas() {
        let a = Usage {
            input_tokens: 1,
            output_tokens: 2,
            ..Usage::default()
        };
        let b = Usage {
            cache_read_input_tokens: 5,
            output_tokens: 3,
            ..Usage::default()
        };
        let sum: Usage = [a, b].into_iter().sum();
        assert_eq!(sum.output_tokens, 5);
        assert_eq!(sum.total_input_tokens(), 6);

        let mut u = Usage {
            input_tokens: 100,
            output_tokens: 1,
            ..Usage::default()
        };
        u.apply_delta(&UsageDelta {
            output_tokens: Some(42),
            ..UsageDelta::default()
        });
        assert_eq!((u.input_tokens, u.output_tokens), (100, 42));
    }
}
