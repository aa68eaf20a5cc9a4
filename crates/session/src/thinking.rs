//! Extended thinking for the session: what `--thinking` / `--max-thinking-tokens`,
//! `MAX_THINKING_TOKENS` and the `alwaysThinkingEnabled` setting ask for at start, and `/thinking [on|off]` (the TUI's Tab)
//! changing it from the next request on. The loop makes the budget valid against the model
//! and `max_tokens` ([`tine_query_loop::thinking`]).

use serde_json::{Value, json};
use tine_api_client::ThinkingConfig;
use tine_config::settings::LoadedSettings;
use tine_query_loop::{DEFAULT_THINKING_BUDGET, budget_from_env};

/// The session's thinking at start: the flags' (`--thinking`, `--max-thinking-tokens`;
/// `Disabled` is off) win, then `MAX_THINKING_TOKENS` (a budget, or 0 for off), then
/// `alwaysThinkingEnabled` (on with Claude Code's default budget), else off.
pub(crate) fn session_thinking(
    flag: Option<ThinkingConfig>,
    max_thinking_tokens: Option<&str>,
    loaded: &LoadedSettings,
) -> Option<ThinkingConfig> {
    match flag {
        Some(ThinkingConfig::Disabled) => return None,
        Some(config) => return Some(config),
        None => {}
    }
    if let Some(budget) = budget_from_env(max_thinking_tokens) {
        return budget.map(|budget_tokens| ThinkingConfig::Enabled { budget_tokens });
    }
    match loaded.get("alwaysThinkingEnabled") {
        Some((Value::Bool(true), _)) => Some(ThinkingConfig::Enabled {
            budget_tokens: DEFAULT_THINKING_BUDGET,
        }),
        _ => None,
    }
}

/// On, at `MAX_THINKING_TOKENS` when it names a budget, else Claude Code's default.
fn enabled_default() -> ThinkingConfig {
    let budget_tokens = budget_from_env(std::env::var("MAX_THINKING_TOKENS").ok().as_deref())
        .flatten()
        .unwrap_or(DEFAULT_THINKING_BUDGET);
    ThinkingConfig::Enabled { budget_tokens }
}

/// `/thinking`: `on`, `off`, or nothing / `toggle` to flip it. Returns the new config and what
/// to tell the person (text, and the data of `-p --output-format json`).
pub(crate) fn command(
    current: Option<ThinkingConfig>,
    args: &str,
) -> Result<(Option<ThinkingConfig>, String, Value), String> {
    let on = is_on(current);
    let want = match args.trim() {
        "" | "toggle" => !on,
        "on" => true,
        "off" => false,
        other => {
            return Err(format!(
                "/thinking takes `on`, `off` or nothing (to toggle), not `{other}`"
            ));
        }
    };
    let next = match (want, current) {
        (true, Some(config)) if on => Some(config),
        (true, _) => Some(enabled_default()),
        (false, _) => None,
    };
    let text = describe(next);
    let data = json!({ "thinking": next });
    Ok((next, text, data))
}

fn is_on(config: Option<ThinkingConfig>) -> bool {
    matches!(
        config,
        Some(ThinkingConfig::Enabled { .. } | ThinkingConfig::Adaptive)
    )
}

/// "Thinking on (budget 31999 tokens)" / "Thinking off".
pub(crate) fn describe(config: Option<ThinkingConfig>) -> String {
    match config {
        Some(ThinkingConfig::Enabled { budget_tokens }) => {
            format!("Thinking on (budget {budget_tokens} tokens)")
        }
        Some(ThinkingConfig::Adaptive) => "Thinking on (adaptive)".to_owned(),
        Some(ThinkingConfig::Disabled) | None => "Thinking off".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flags_win_over_the_environment_and_settings() {
        let loaded = LoadedSettings::default();
        let on = Some(ThinkingConfig::Enabled {
            budget_tokens: 2_048,
        });
        assert_eq!(session_thinking(on, Some("0"), &loaded), on);
        assert_eq!(
            session_thinking(Some(ThinkingConfig::Disabled), Some("9000"), &loaded),
            None
        );
        assert_eq!(
            session_thinking(Some(ThinkingConfig::Adaptive), None, &loaded),
            Some(ThinkingConfig::Adaptive)
        );
        assert_eq!(
            session_thinking(None, Some("9000"), &loaded),
            Some(ThinkingConfig::Enabled {
                budget_tokens: 9_000
            })
        );
    }

    #[test]
    fn the_command_toggles_and_names_the_state() {
        let (on, text, data) = command(None, "").unwrap();
        assert!(matches!(on, Some(ThinkingConfig::Enabled { .. })));
        assert!(text.starts_with("Thinking on (budget "), "{text}");
        assert_eq!(data["thinking"]["type"], "enabled");
        let kept = Some(ThinkingConfig::Enabled {
            budget_tokens: 5_000,
        });
        assert_eq!(command(kept, "on").unwrap().0, kept);
        let (off, text, _) = command(kept, "toggle").unwrap();
        assert_eq!(off, None);
        assert_eq!(text, "Thinking off");
        assert!(command(None, "maybe").is_err());
    }
}
