//! Extended thinking as the loop sends it: a budget the API accepts (≥ 1024 and below
//! `max_tokens`) whatever the session asked for, and room for the answer after it.
//!
//! The budget is fixed for a model (it enters the cache key where the messages start, so it
//! must not move with the output limit of one request); `max_tokens` is not part of the key and
//! is raised to fit the budget plus the loop's usual room for the answer.

use tine_api_client::ThinkingConfig;

/// The smallest budget the API accepts.
pub(crate) const MIN_THINKING_BUDGET: u32 = 1024;

/// Claude Code's budget when thinking is on without a number (`alwaysThinkingEnabled`, the
/// TUI's toggle): its largest, "ultrathink" budget.
pub const DEFAULT_THINKING_BUDGET: u32 = 31_999;

/// The session's thinking config made valid for a model whose replies are at most
/// `model_max_output` tokens: the budget raised to the API's minimum and kept below the
/// model's limit. A model too small for the minimum budget gets no thinking. A model that
/// thinks adaptively (the Claude 5 generation) is asked for adaptive thinking instead of a
/// budget, which it refuses.
pub(crate) fn fit_to_model(
    thinking: Option<ThinkingConfig>,
    model_max_output: u32,
    adaptive: bool,
) -> Option<ThinkingConfig> {
    match thinking {
        Some(ThinkingConfig::Enabled { .. }) if adaptive => Some(ThinkingConfig::Adaptive),
        Some(ThinkingConfig::Enabled { budget_tokens }) => {
            let ceiling = model_max_output.saturating_sub(1);
            (ceiling >= MIN_THINKING_BUDGET).then(|| ThinkingConfig::Enabled {
                budget_tokens: budget_tokens.clamp(MIN_THINKING_BUDGET, ceiling),
            })
        }
        other => other,
    }
}

/// The config under a forced output limit (a fork's own `max_output_tokens`): the budget
/// shrinks below it, and thinking is off when the limit leaves no room for the minimum.
pub(crate) fn fit_to_limit(thinking: Option<ThinkingConfig>, limit: u32) -> Option<ThinkingConfig> {
    match thinking {
        Some(ThinkingConfig::Enabled { budget_tokens }) if budget_tokens >= limit => {
            let budget = limit.saturating_sub(1);
            (budget >= MIN_THINKING_BUDGET).then_some(ThinkingConfig::Enabled {
                budget_tokens: budget,
            })
        }
        other => other,
    }
}

/// The `max_tokens` of a request wanting `max_tokens` of answer: with a thinking budget, at
/// least the budget plus `answer_room`, within the model's limit (always above the budget,
/// which [`fit_to_model`] keeps below that limit).
pub(crate) fn max_tokens_with(
    thinking: Option<&ThinkingConfig>,
    max_tokens: u32,
    answer_room: u32,
    model_max_output: u32,
) -> u32 {
    match thinking {
        Some(ThinkingConfig::Enabled { budget_tokens }) if *budget_tokens >= max_tokens => {
            budget_tokens
                .saturating_add(answer_room)
                .min(model_max_output)
                .max(budget_tokens.saturating_add(1))
        }
        _ => max_tokens,
    }
}

/// The budget `MAX_THINKING_TOKENS` asks for: `Some(None)` when it turns thinking off (0),
/// `None` when it is unset or not a number (then the settings decide).
pub fn budget_from_env(value: Option<&str>) -> Option<Option<u32>> {
    let n: u32 = value?.trim().parse().ok()?;
    Some((n > 0).then_some(n))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enabled(budget_tokens: u32) -> Option<ThinkingConfig> {
        Some(ThinkingConfig::Enabled { budget_tokens })
    }

    #[test]
    fn the_budget_is_kept_within_what_the_api_accepts() {
        assert_eq!(fit_to_model(enabled(500), 32_000, false), enabled(1024));
        assert_eq!(
            fit_to_model(enabled(50_000), 32_000, false),
            enabled(31_999)
        );
        assert_eq!(
            fit_to_model(enabled(10_000), 32_000, false),
            enabled(10_000)
        );
        assert_eq!(fit_to_model(enabled(10_000), 1024, false), None);
        assert_eq!(fit_to_model(None, 32_000, false), None);
        assert_eq!(
            fit_to_model(Some(ThinkingConfig::Adaptive), 10, false),
            Some(ThinkingConfig::Adaptive)
        );
        // The Claude 5 generation thinks adaptively: a budget becomes adaptive, off stays off.
        assert_eq!(
            fit_to_model(enabled(31_999), 128_000, true),
            Some(ThinkingConfig::Adaptive)
        );
        assert_eq!(fit_to_model(None, 128_000, true), None);
    }

    #[test]
    fn max_tokens_is_raised_above_the_budget_within_the_model() {
        let t = enabled(31_999);
        assert_eq!(max_tokens_with(t.as_ref(), 8_000, 8_000, 64_000), 39_999);
        assert_eq!(max_tokens_with(t.as_ref(), 8_000, 8_000, 32_000), 32_000);
        assert_eq!(max_tokens_with(t.as_ref(), 64_000, 8_000, 64_000), 64_000);
        let small = enabled(2_000);
        assert_eq!(max_tokens_with(small.as_ref(), 8_000, 8_000, 64_000), 8_000);
        assert_eq!(max_tokens_with(None, 8_000, 8_000, 64_000), 8_000);
    }

    #[test]
    fn a_forced_limit_shrinks_or_drops_the_budget() {
        assert_eq!(fit_to_limit(enabled(31_999), 4_000), enabled(3_999));
        assert_eq!(fit_to_limit(enabled(31_999), 1_000), None);
        assert_eq!(fit_to_limit(enabled(2_000), 4_000), enabled(2_000));
    }

    #[test]
    fn the_environment_turns_thinking_on_off_or_leaves_it() {
        assert_eq!(budget_from_env(Some("12000")), Some(Some(12_000)));
        assert_eq!(budget_from_env(Some("0")), Some(None));
        assert_eq!(budget_from_env(Some("lots")), None);
        assert_eq!(budget_from_env(None), None);
    }
}
