//! A stuck model: the same tool call (same tool, same input) failing the same way (same error
//! text) several times in a row. Left alone it loops until `--max-turns`, paying for every
//! request; the loop counts such a [`FailureStreak`] and, at
//! [`DEFAULT_MAX_REPEATED_FAILURES`], stops the turn with
//! [`crate::Terminal::RepeatedToolFailure`], or asks the host's [`RepeatedFailureHandler`]
//! (the TUI asks the person whether to let it go on).

use futures::future::BoxFuture;
use serde_json::Value;
use tine_tools::ToolOutput;

/// Identical failures in a row that stop the turn.
pub const DEFAULT_MAX_REPEATED_FAILURES: u32 = 3;

/// How much of the error the terminal reason keeps (a failing command's output can be long).
const ERROR_EXCERPT_CHARS: usize = 300;

/// The same call failing the same way `repeats` times in a row.
#[derive(Debug, Clone, PartialEq)]
pub struct RepeatedFailure {
    /// The tool called.
    pub tool: String,
    /// The call's input.
    pub input: Value,
    /// The error result the model got each time.
    pub error: String,
    /// How many times in a row.
    pub repeats: u32,
}

impl RepeatedFailure {
    /// The start of the error's first lines, for a one-line message.
    pub fn error_excerpt(&self) -> String {
        excerpt(&self.error)
    }
}

fn excerpt(text: &str) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= ERROR_EXCERPT_CHARS {
        return flat;
    }
    let mut cut: String = flat.chars().take(ERROR_EXCERPT_CHARS).collect();
    cut.push('…');
    cut
}

/// What the host decided about a stuck model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StuckDecision {
    /// End the turn with [`crate::Terminal::RepeatedToolFailure`].
    Stop,
    /// Let the model go on; the count starts again (`--max-turns` stays the hard cap).
    KeepGoing,
}

/// Asked when the model is stuck. Without one (headless, forks) the turn stops.
pub trait RepeatedFailureHandler: Send + Sync {
    /// Whether the model may go on.
    fn on_repeated_failure<'a>(
        &'a self,
        failure: &'a RepeatedFailure,
    ) -> BoxFuture<'a, StuckDecision>;
}

/// Consecutive identical failures across the tool calls of a turn, in call order. A success or
/// a different failure breaks the streak.
#[derive(Debug, Default, Clone)]
pub struct FailureStreak {
    current: Option<RepeatedFailure>,
}

impl FailureStreak {
    /// Records one call's outcome.
    pub fn record(&mut self, tool: &str, input: &Value, output: &ToolOutput) {
        if !output.is_error {
            self.current = None;
            return;
        }
        match &mut self.current {
            Some(streak)
                if streak.tool == tool
                    && streak.input == *input
                    && streak.error == output.content =>
            {
                streak.repeats += 1;
            }
            _ => {
                self.current = Some(RepeatedFailure {
                    tool: tool.to_owned(),
                    input: input.clone(),
                    error: output.content.clone(),
                    repeats: 1,
                });
            }
        }
    }

    /// The streak, once it is `limit` long (a `limit` of 0 never reports).
    pub fn reached(&self, limit: u32) -> Option<&RepeatedFailure> {
        self.current
            .as_ref()
            .filter(|streak| limit > 0 && streak.repeats >= limit)
    }

    /// Starts counting again (the host let the model go on).
    pub fn reset(&mut self) {
        self.current = None;
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn counts_only_the_same_call_failing_the_same_way_in_a_row() {
        let mut streak = FailureStreak::default();
        let input = json!({"file_path": "a", "old_string": "x"});
        let gone = ToolOutput::error("old_string not found");
        streak.record("Edit", &input, &gone);
        streak.record("Edit", &input, &gone);
        assert_eq!(streak.reached(3), None);
        streak.record("Edit", &input, &gone);
        assert_eq!(streak.reached(3).map(|s| s.repeats), Some(3));

        // A success, another input, another error or another tool breaks it.
        for (tool, other_input, output) in [
            ("Edit", input.clone(), ToolOutput::text("ok")),
            ("Edit", json!({"file_path": "b"}), gone.clone()),
            ("Edit", input.clone(), ToolOutput::error("another error")),
            ("Write", input.clone(), gone.clone()),
        ] {
            let mut streak = FailureStreak::default();
            streak.record("Edit", &input, &gone);
            streak.record("Edit", &input, &gone);
            streak.record(tool, &other_input, &output);
            streak.record("Edit", &input, &gone);
            assert_eq!(streak.reached(3), None, "{tool} {other_input} {output:?}");
        }
        assert_eq!(FailureStreak::default().reached(0), None);
    }

    #[test]
    fn the_excerpt_is_one_bounded_line() {
        let failure = RepeatedFailure {
            tool: "Bash".into(),
            input: json!({}),
            error: format!("line one\nline two {}", "x".repeat(1000)),
            repeats: 3,
        };
        let excerpt = failure.error_excerpt();
        assert!(excerpt.starts_with("line one line two"));
        assert!(!excerpt.contains('\n'));
        assert_eq!(excerpt.chars().count(), ERROR_EXCERPT_CHARS + 1);
    }
}
