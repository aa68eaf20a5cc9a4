//! An Agent call as Claude Code shows it: while its sub-agent runs, the sub-agent's latest
//! calls under it and how many more it made ("+4 more tool uses"); when it is done, "Done (7
//! tool uses · 12.3k tokens · 8.1s)". The lines are worded once, when the session's progress
//! report arrives ([`AgentLines::of`]), so a frame only lays out a few short strings.

use std::path::Path;

use ratatui::text::{Line, Span};
use tine_session::{SubagentActivity, SubagentCall, SubagentTotals};

use crate::layout::{result_line, result_more};
use crate::shown::{is_file_tool, shown_path};
use crate::theme;
use crate::wrap::{IndentedLine, sanitize};

/// A running sub-agent's latest calls, as shown under its Agent call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AgentLines {
    /// "Read(src/config.rs)", oldest first.
    pub(crate) lines: Vec<String>,
    /// Calls it made that `lines` does not show.
    pub(crate) more: u32,
}

impl AgentLines {
    /// The lines of `activity`, files inside `cwd` relative to it.
    pub(crate) fn of(activity: &SubagentActivity, cwd: Option<&Path>) -> Self {
        let lines = activity
            .recent
            .iter()
            .map(|call| call_line(call, cwd))
            .collect();
        Self {
            lines,
            more: activity.more(),
        }
    }

    /// Its rows under the call line.
    pub(crate) fn layout(&self, out: &mut Vec<IndentedLine>) {
        for (i, line) in self.lines.iter().enumerate() {
            let body = Line::from(Span::raw(line.clone()));
            out.push(if i == 0 {
                result_line(body)
            } else {
                result_more(body)
            });
        }
        if self.more > 0 {
            let unit = if self.more == 1 {
                "tool use"
            } else {
                "tool uses"
            };
            let body = Line::from(Span::styled(
                format!("+{} more {unit}", self.more),
                theme::dim(),
            ));
            out.push(if self.lines.is_empty() {
                result_line(body)
            } else {
                result_more(body)
            });
        }
    }
}

/// `Read(src/config.rs)`: a sub-agent's call as one line, a file inside `cwd` relative to it.
pub(crate) fn call_line(call: &SubagentCall, cwd: Option<&Path>) -> String {
    let args = match cwd {
        Some(cwd) if is_file_tool(&call.tool) => shown_path(&call.summary, cwd),
        _ => call.summary.clone(),
    };
    let line = if args.is_empty() {
        call.tool.clone()
    } else {
        format!("{}({args})", call.tool)
    };
    sanitize(&line).replace('\n', " ")
}

/// "3 tool uses".
pub(crate) fn tool_uses(n: u32) -> String {
    let unit = if n == 1 { "tool use" } else { "tool uses" };
    format!("{n} {unit}")
}

/// "Done (7 tool uses · 12.3k tokens · 8.1s)".
pub(crate) fn done_line(totals: &SubagentTotals) -> String {
    format!(
        "Done ({} · {} tokens · {:.1}s)",
        tool_uses(totals.tool_uses),
        short_count(totals.total_tokens),
        totals.duration.as_secs_f64()
    )
}

/// 850 → "850", 12_345 → "12.3k", 2_400_000 → "2.4m".
fn short_count(n: u64) -> String {
    match n {
        0..1_000 => n.to_string(),
        1_000..1_000_000 => format!("{:.1}k", n as f64 / 1_000.0),
        _ => format!("{:.1}m", n as f64 / 1_000_000.0),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn call(tool: &str, summary: &str) -> SubagentCall {
        SubagentCall {
            tool: tool.into(),
            summary: summary.into(),
        }
    }

    #[test]
    fn the_latest_calls_read_as_call_lines_the_rest_are_counted() {
        let activity = SubagentActivity {
            totals: SubagentTotals {
                tool_uses: 6,
                ..SubagentTotals::default()
            },
            recent: vec![
                call("Read", "/p/src/config.rs"),
                call("Grep", "load_settings"),
                call("Bash", "cat /p/x\necho"),
            ],
        };
        let shown = AgentLines::of(&activity, Some(Path::new("/p")));
        assert_eq!(
            shown.lines,
            [
                "Read(src/config.rs)",
                "Grep(load_settings)",
                "Bash(cat /p/x echo)"
            ]
        );
        assert_eq!(shown.more, 3);
        let mut rows = Vec::new();
        shown.layout(&mut rows);
        let text: Vec<String> = rows
            .iter()
            .map(|row| {
                row.first
                    .iter()
                    .chain(&row.body.spans)
                    .map(|s| s.content.as_ref())
                    .collect()
            })
            .collect();
        assert_eq!(
            text,
            [
                "  ⎿  Read(src/config.rs)",
                "     Grep(load_settings)",
                "     Bash(cat /p/x echo)",
                "     +3 more tool uses"
            ]
        );
    }

    #[test]
    fn the_done_line_counts_tools_tokens_and_time() {
        let totals = SubagentTotals {
            tool_uses: 7,
            total_tokens: 12_345,
            duration: Duration::from_millis(8_120),
        };
        assert_eq!(
            done_line(&totals),
            "Done (7 tool uses · 12.3k tokens · 8.1s)"
        );
        let one = SubagentTotals {
            tool_uses: 1,
            total_tokens: 850,
            duration: Duration::from_millis(400),
        };
        assert_eq!(done_line(&one), "Done (1 tool use · 850 tokens · 0.4s)");
        assert_eq!(short_count(2_400_000), "2.4m");
    }
}
