//! When compaction happens: the thresholds of seed 003 §九 with Claude Code's numbers, and the
//! switches (environment, settings) that move or turn them off.

use std::time::Duration;

use tine_api_client::model_info;

/// Room kept below the effective window: auto compaction starts this many tokens before it.
pub const AUTO_COMPACT_BUFFER_TOKENS: u64 = 13_000;
/// The reply room the effective window keeps (at most; less when the model's output is smaller).
pub const MAX_REPLY_RESERVE_TOKENS: u64 = 20_000;
/// The warning level, in percent of the effective window.
pub const WARNING_PERCENT: u64 = 85;
/// Consecutive failures after which auto compaction stays off for the session.
pub const MAX_CONSECUTIVE_FAILURES: u32 = 3;
/// The prompt cache's lifetime: after a longer idle gap the cache is cold, and old tool results
/// are cleared (micro-compaction) since keeping their bytes saves nothing any more.
pub const CACHE_TTL: Duration = Duration::from_secs(5 * 60);
/// Tool results micro-compaction always keeps, the most recent ones.
pub const KEEP_RECENT_TOOL_RESULTS: usize = 5;

/// tine's cap on the window compaction plans for, in tokens.
pub const WINDOW_ENV: &str = "TINE_AUTO_COMPACT_WINDOW";
/// Claude Code's name for the same cap (honoured when tine's is unset).
pub const CLAUDE_WINDOW_ENV: &str = "CLAUDE_CODE_AUTO_COMPACT_WINDOW";
/// Set (to anything but `0`/`false`) turns auto compaction off, as in Claude Code.
pub const DISABLE_ENV: &str = "DISABLE_AUTOCOMPACT";
/// The settings key (`false` turns auto compaction off).
pub const AUTO_COMPACT_SETTING: &str = "autoCompactEnabled";

/// How a session compacts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompactionConfig {
    /// Auto compaction before requests (reactive and manual compaction stay available).
    pub auto_enabled: bool,
    /// Plan for at most this window (tokens), whatever the model's is.
    pub window_cap: Option<u64>,
    /// Clear old tool results after an idle gap this long (None: never).
    pub idle_clear_after: Option<Duration>,
    pub keep_recent_tool_results: usize,
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
        (config, warnings)
    }
}

/// The token levels for one model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Thresholds {
    /// The model's window, capped.
    pub window: u64,
    /// The window minus the reply's room: min(max output, 20k).
    pub effective: u64,
    /// Auto compaction starts here: effective − 13k.
    pub auto_compact: u64,
    /// UIs warn from here (or from the auto threshold, if lower and on).
    pub warning: u64,
}

impl Thresholds {
    pub fn for_model(model: &str, window_cap: Option<u64>) -> Self {
        let info = model_info(model);
        let window = match window_cap {
            Some(cap) => info.context_window.min(cap),
            None => info.context_window,
        };
        let effective = window.saturating_sub(info.max_output_tokens.min(MAX_REPLY_RESERVE_TOKENS));
        let auto_compact = effective.saturating_sub(AUTO_COMPACT_BUFFER_TOKENS);
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
