//! When compaction happens: the thresholds of seed 003 §九 with Claude Code's numbers, and the
//! switches (environment, settings) that move or turn them off.

use std::time::Duration;

use tine_api_client::model_info;

/// Room kept below the effective window: auto compaction starts this many tokens before it.
pub(crate) const AUTO_COMPACT_BUFFER_TOKENS: u64 = 13_000;
/// The reply room the effective window keeps (at most; less when the model's output is smaller).
pub(crate) const MAX_REPLY_RESERVE_TOKENS: u64 = 20_000;
/// The warning level, in percent of the effective window.
pub(crate) const WARNING_PERCENT: u64 = 85;
/// Consecutive failures after which auto compaction stays off for the session.
pub(crate) const MAX_CONSECUTIVE_FAILURES: u32 = 3;
/// The prompt cache's lifetime: after a longer idle gap the cache is cold, and old tool results
/// are cleared (micro-compaction) since keeping their bytes saves nothing any more.
pub const CACHE_TTL: Duration = Duration::from_secs(5 * 60);
/// Tool results micro-compaction always keeps, the most recent ones.
pub(crate) const KEEP_RECENT_TOOL_RESULTS: usize = 5;

/// tine's cap on the window compaction plans for, in tokens.
pub(crate) const WINDOW_ENV: &str = "TINE_AUTO_COMPACT_WINDOW";
/// Claude Code's name for the same cap (honoured when tine's is unset).
pub(crate) const CLAUDE_WINDOW_ENV: &str = "CLAUDE_CODE_AUTO_COMPACT_WINDOW";
/// Set (to anything but `0`/`false`) turns auto compaction off, as in Claude Code.
pub(crate) const DISABLE_ENV: &str = "DISABLE_AUTOCOMPACT";
/// The settings key (`false` turns auto compaction off).
pub const AUTO_COMPACT_SETTING: &str = "autoCompactEnabled";
/// Seconds of idle after which old tool results are cleared (default: the cache's 5-minute
/// lifetime; `0` never clears). For a cache that lives longer (a 1-hour TTL behind a proxy)
/// or shorter than Anthropic's default.
pub const IDLE_CLEAR_ENV: &str = "TINE_MICRO_COMPACT_IDLE_SECS";

/// How a session compacts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompactionConfig {
    /// Auto compaction before requests (reactive and manual compaction stay available).
    pub auto_enabled: bool,
    /// Plan for at most this window (tokens), whatever the model's is.
    pub window_cap: Option<u64>,
    /// Clear old tool results after an idle gap this long (None: never).
    pub idle_clear_after: Option<Duration>,
    /// Tool results kept when old ones are cleared after an idle gap.
    pub keep_recent_tool_results: usize,
    /// Automatic compactions that may fail in a row before they stop being tried.
    pub max_consecutive_failures: u32,
}

impl Default for CompactionConfig {
    fn default() -> Self {
        Self {
            auto_enabled: true,
            window_cap: None,
            idle_clear_after: Some(CACHE_TTL),
            keep_recent_tool_results: KEEP_RECENT_TOOL_RESULTS,
            max_consecutive_failures: MAX_CONSECUTIVE_FAILURES,
        }
    }
}

impl CompactionConfig {
    /// The configuration from the environment (`env` looks a variable up) and the
    /// `autoCompactEnabled` setting; also the warnings to show (a cap that is not a number).
    pub fn from_env(
        env: impl Fn(&str) -> Option<String>,
        auto_compact_setting: Option<bool>,
    ) -> (Self, Vec<String>) {
        let mut config = Self::default();
        let mut warnings = Vec::new();
        for name in [WINDOW_ENV, CLAUDE_WINDOW_ENV] {
            let Some(value) = env(name).filter(|v| !v.trim().is_empty()) else {
                continue;
            };
            match value.trim().parse::<u64>() {
                Ok(tokens) if tokens > 0 => config.window_cap = Some(tokens),
                _ => warnings.push(format!(
                    "{name}={value} is not a number of tokens (like 100000); the model's window is used"
                )),
            }
            break;
        }
        let disabled = env(DISABLE_ENV).is_some_and(|v| {
            let v = v.trim();
            !v.is_empty() && v != "0" && !v.eq_ignore_ascii_case("false")
        });
        config.auto_enabled = !disabled && auto_compact_setting != Some(false);
        if let Some(value) = env(IDLE_CLEAR_ENV).filter(|v| !v.trim().is_empty()) {
            match value.trim().parse::<u64>() {
                Ok(0) => config.idle_clear_after = None,
                Ok(secs) => config.idle_clear_after = Some(Duration::from_secs(secs)),
                Err(_) => warnings.push(format!(
                    "{IDLE_CLEAR_ENV}={value} is not a number of seconds (like 300, or 0 for \
                     never); old tool results are cleared after 300 s idle"
                )),
            }
        }
        (config, warnings)
    }
}

/// For windows smaller than Claude's the reply reserve is at most this fraction of the model's
/// window (1/6: it binds below 120k tokens).
pub(crate) const SMALL_WINDOW_RESERVE_DIVISOR: u64 = 6;
/// For windows smaller than Claude's the auto-compact buffer is at most this fraction of the
/// model's window (1/8: it binds below 104k tokens).
pub(crate) const SMALL_WINDOW_BUFFER_DIVISOR: u64 = 8;

/// The token levels for one model.
///
/// The rule: the reply reserve is min(max output, 20k, window/6) and the auto-compact buffer
/// min(13k, window/8), both taken from the model's own window (the endpoint's real limit:
/// `TINE_CONTEXT_WINDOW` / `openai.contextWindow` for a local model). From 120k tokens up the
/// fractions never bind, so Claude's windows (200k, 1M) and the 128k assumed for other models get
/// Claude Code's numbers exactly; below that the reserve and the buffer shrink with the window so
/// a 32k local model compacts at about 70% of its window instead of at 0 (every request).
/// `TINE_AUTO_COMPACT_WINDOW` then caps the window compaction plans for, as in Claude Code: the
/// cap is an experiment's knob and keeps the model's reserve and buffer, so a cap below them
/// still compacts on every request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Thresholds {
    /// The model's window, capped.
    pub window: u64,
    /// The window minus the reply's room: min(max output, 20k, model window / 6).
    pub effective: u64,
    /// Auto compaction starts here: effective − min(13k, model window / 8).
    pub auto_compact: u64,
    /// UIs warn from here (or from the auto threshold, if lower and on).
    pub warning: u64,
}

impl Thresholds {
    /// The levels for `model` with the price table's window (200k for Claude, 128k for others).
    pub fn for_model(model: &str, window_cap: Option<u64>) -> Self {
        Self::for_window(model, model_info(model).context_window, window_cap)
    }

    /// The levels for `model` on an endpoint whose window is `model_window` tokens (the client's
    /// [`tine_api_client::ModelClient::context_window`]); `window_cap` is
    /// `TINE_AUTO_COMPACT_WINDOW`'s.
    pub fn for_window(model: &str, model_window: u64, window_cap: Option<u64>) -> Self {
        let info = model_info(model);
        let reserve = info
            .max_output_tokens
            .min(MAX_REPLY_RESERVE_TOKENS)
            .min(model_window / SMALL_WINDOW_RESERVE_DIVISOR);
        let buffer = AUTO_COMPACT_BUFFER_TOKENS.min(model_window / SMALL_WINDOW_BUFFER_DIVISOR);
        let window = match window_cap {
            Some(cap) => model_window.min(cap),
            None => model_window,
        };
        let effective = window.saturating_sub(reserve);
        let auto_compact = effective.saturating_sub(buffer);
        let warning = effective * WARNING_PERCENT / 100;
        Self {
            window,
            effective,
            auto_compact,
            warning,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        }
    }

    #[test]
    fn claude_code_numbers_for_a_200k_model() {
        let t = Thresholds::for_model("claude-sonnet-4-5", None);
        assert_eq!(t.window, 200_000);
        assert_eq!(t.effective, 180_000);
        assert_eq!(t.auto_compact, 167_000);
        assert_eq!(t.warning, 153_000);
    }

    fn levels(t: Thresholds) -> (u64, u64, u64, u64) {
        (t.window, t.effective, t.auto_compact, t.warning)
    }

    #[test]
    fn a_32k_local_model_compacts_at_about_70_percent_not_at_zero() {
        // Reserve 32768/6 = 5461, buffer 32768/8 = 4096.
        let t = Thresholds::for_window("qwen2.5-coder:7b", 32_768, None);
        assert_eq!(levels(t), (32_768, 27_307, 23_211, 23_210));
        assert_eq!(t.auto_compact * 100 / t.window, 70);
        // 32,000 exactly: reserve 5333, buffer 4000.
        let t = Thresholds::for_window("llama3.1:8b", 32_000, None);
        assert_eq!(levels(t), (32_000, 26_667, 22_667, 22_666));
    }

    #[test]
    fn windows_from_128k_up_keep_claude_codes_numbers() {
        // 128k (the window assumed for other models): 20k reserve, 13k buffer, as for Claude.
        let t = Thresholds::for_window("qwen2.5-coder:32b", 128_000, None);
        assert_eq!(levels(t), (128_000, 108_000, 95_000, 91_800));
        assert_eq!(
            Thresholds::for_model("qwen2.5-coder:32b", None),
            Thresholds::for_window("qwen2.5-coder:32b", 128_000, None)
        );
        let t = Thresholds::for_window("claude-sonnet-4-5", 200_000, None);
        assert_eq!(levels(t), (200_000, 180_000, 167_000, 153_000));
        let t = Thresholds::for_model("claude-sonnet-4-5[1m]", None);
        assert_eq!(levels(t), (1_000_000, 980_000, 967_000, 833_000));
        // A model whose output is below 20k reserves only that much.
        let t = Thresholds::for_window("claude-3-5-haiku", 200_000, None);
        assert_eq!(levels(t), (200_000, 191_808, 178_808, 163_036));
    }

    #[test]
    fn the_fractions_take_over_below_120k_and_never_leave_zero() {
        // 120k: window/6 = 20k exactly, window/8 = 15k: still Claude's numbers.
        let t = Thresholds::for_window("other", 120_000, None);
        assert_eq!((t.effective, t.auto_compact), (100_000, 87_000));
        // 64k: reserve 10,666, buffer 8k.
        let t = Thresholds::for_window("other", 64_000, None);
        assert_eq!((t.effective, t.auto_compact), (53_334, 45_334));
        // 8k: reserve 1365, buffer 1024.
        let t = Thresholds::for_window("other", 8_192, None);
        assert_eq!((t.effective, t.auto_compact), (6_827, 5_803));
    }

    #[test]
    fn the_cap_keeps_the_models_reserve_and_buffer() {
        // A 32k local model capped at 24k plans for 24k with the 32k model's room.
        let t = Thresholds::for_window("qwen2.5-coder:7b", 32_768, Some(24_000));
        assert_eq!(
            (t.window, t.effective, t.auto_compact),
            (24_000, 18_539, 14_443)
        );
        // A cap above the model's window changes nothing.
        assert_eq!(
            Thresholds::for_window("qwen2.5-coder:7b", 32_768, Some(100_000)),
            Thresholds::for_window("qwen2.5-coder:7b", 32_768, None)
        );
    }

    #[test]
    fn the_window_cap_comes_from_tine_then_claude_code() {
        let (c, w) = CompactionConfig::from_env(env(&[(CLAUDE_WINDOW_ENV, "60000")]), None);
        assert_eq!(c.window_cap, Some(60_000));
        assert!(w.is_empty());
        let (c, _) = CompactionConfig::from_env(
            env(&[(WINDOW_ENV, "50000"), (CLAUDE_WINDOW_ENV, "60000")]),
            None,
        );
        assert_eq!(c.window_cap, Some(50_000));
        let t = Thresholds::for_model("claude-sonnet-4-5", c.window_cap);
        assert_eq!((t.effective, t.auto_compact), (30_000, 17_000));
        let (c, w) = CompactionConfig::from_env(env(&[(WINDOW_ENV, "lots")]), None);
        assert_eq!(c.window_cap, None);
        assert!(w[0].contains("TINE_AUTO_COMPACT_WINDOW"), "{w:?}");
    }

    #[test]
    fn the_idle_gap_before_clearing_can_be_moved_or_turned_off() {
        let (c, w) = CompactionConfig::from_env(env(&[]), None);
        assert_eq!((c.idle_clear_after, w.len()), (Some(CACHE_TTL), 0));
        let (c, _) = CompactionConfig::from_env(env(&[(IDLE_CLEAR_ENV, "3600")]), None);
        assert_eq!(c.idle_clear_after, Some(Duration::from_secs(3_600)));
        let (c, _) = CompactionConfig::from_env(env(&[(IDLE_CLEAR_ENV, "0")]), None);
        assert_eq!(c.idle_clear_after, None);
        let (c, w) = CompactionConfig::from_env(env(&[(IDLE_CLEAR_ENV, "5m")]), None);
        assert_eq!(c.idle_clear_after, Some(CACHE_TTL));
        assert!(w[0].contains(IDLE_CLEAR_ENV), "{w:?}");
    }

    #[test]
    fn auto_compaction_is_turned_off_by_env_or_setting() {
        assert!(CompactionConfig::from_env(env(&[]), None).0.auto_enabled);
        assert!(
            CompactionConfig::from_env(env(&[]), Some(true))
                .0
                .auto_enabled
        );
        assert!(
            !CompactionConfig::from_env(env(&[]), Some(false))
                .0
                .auto_enabled
        );
        assert!(
            !CompactionConfig::from_env(env(&[(DISABLE_ENV, "1")]), None)
                .0
                .auto_enabled
        );
        assert!(
            CompactionConfig::from_env(env(&[(DISABLE_ENV, "0")]), None)
                .0
                .auto_enabled
        );
    }
}
