//! The `result` object: what the run's requests used and cost, by query source, in Claude
//! Code's shape with the SDK's subtypes.

use serde_json::{Value, json};
use tine_api_client::Usage;
use tine_fork_runtime::SourceUsage;
use tine_query_loop::{PermissionDenial, Terminal, TurnResult};
use tine_session::{SessionCost, SessionInfo, TurnEnd, TurnOutcome};

/// What the run's requests used and cost, by query source (the session's [`SessionCost`]).
pub(crate) type RunCost = SessionCost;

/// Everything the `result` object reports.
pub(crate) struct ResultSummary<'a> {
    pub turn: &'a TurnResult,
    /// Every request of the run so far, by source.
    pub cost: RunCost,
    pub denials: &'a [PermissionDenial],
    /// `--json-schema`: the structured answer (`structured_output`).
    pub structured_output: Option<&'a Value>,
    /// `--json-schema`: why the turn failed though the loop ended well (no structured answer
    /// after the reminders).
    pub structured_failure: Option<&'a str>,
}

impl<'a> ResultSummary<'a> {
    /// The result of `turn`, the loop's part of `end`.
    pub(crate) fn of(
        end: &'a TurnEnd,
        turn: &'a TurnResult,
        cost: RunCost,
        denials: &'a [PermissionDenial],
    ) -> Self {
        let structured_failure = match &end.outcome {
            TurnOutcome::Failed { message } if turn.terminal.is_success() => Some(message.as_str()),
            TurnOutcome::Failed { .. } | TurnOutcome::Completed | TurnOutcome::Interrupted => None,
        };
        Self {
            turn,
            cost,
            denials,
            structured_output: end.structured_output.as_ref(),
            structured_failure,
        }
    }

    /// Whether the run failed.
    pub(crate) fn is_error(&self) -> bool {
        !self.turn.terminal.is_success() || self.structured_failure.is_some()
    }
}

/// Claude Code's `result` object, plus `usage_by_source`. Its `subtype` is one the Agent
/// SDKs know (`success`, `error_max_turns`, `error_max_budget_usd`,
/// `error_max_structured_output_retries`, else `error_during_execution`); why tine stopped is
/// in `terminal` (its `type`) and `errors`.
pub(super) fn result_value(
    info: &SessionInfo,
    summary: &ResultSummary<'_>,
    stop_reason: &Value,
) -> Value {
    let turn = summary.turn;
    let is_error = summary.is_error();
    let subtype = match summary.structured_failure {
        Some(_) => "error_max_structured_output_retries",
        None => sdk_subtype(&turn.terminal),
    };
    let total = summary.cost.total();
    let by_source: serde_json::Map<String, Value> = summary
        .cost
        .by_source
        .iter()
        .map(|(source, s)| (source.clone(), source_value(s)))
        .collect();
    let mut value = json!({
        "type": "result",
        "subtype": subtype,
        "is_error": is_error,
        "duration_ms": turn.duration.as_millis() as u64,
        "duration_api_ms": turn.api_duration.as_millis() as u64,
        "num_turns": turn.num_turns,
        "result": turn.result,
        "stop_reason": stop_reason,
        "session_id": info.session_id.to_string(),
        "total_cost_usd": total.cost_usd,
        "usage": usage_value(&total.usage),
        "usage_by_source": by_source,
        "modelUsage": model_usage_value(&summary.cost),
        "uuid": tine_config::SessionId::new_random().to_string(),
        "permission_denials": summary.denials.iter().map(|d| json!({
            "tool_name": d.tool_name,
            "tool_use_id": d.tool_use_id,
            "tool_input": d.tool_input,
        })).collect::<Vec<_>>(),
    });
    let Some(object) = value.as_object_mut() else {
        return value;
    };
    if let Some(structured) = summary.structured_output {
        object.insert("structured_output".to_owned(), structured.clone());
    }
    let error = match summary.structured_failure {
        Some(failure) => Some(failure.to_owned()),
        None if is_error => Some(turn.terminal.describe()),
        None => None,
    };
    if let Some(error) = error {
        object.insert("errors".to_owned(), json!([error]));
        object.insert("error".to_owned(), json!(error));
        if let Ok(terminal) = serde_json::to_value(&turn.terminal) {
            object.insert("terminal".to_owned(), terminal);
        }
    }
    value
}

/// The result subtype an Agent SDK knows for `terminal`.
fn sdk_subtype(terminal: &Terminal) -> &'static str {
    match terminal.subtype() {
        known @ ("success" | "error_max_turns" | "error_max_budget_usd") => known,
        _ => "error_during_execution",
    }
}

pub(super) fn usage_value(usage: &Usage) -> Value {
    let writes = usage.cache_writes();
    let mut value = json!({
        "input_tokens": usage.input_tokens,
        "cache_creation_input_tokens": usage.cache_creation_input_tokens,
        "cache_read_input_tokens": usage.cache_read_input_tokens,
        "output_tokens": usage.output_tokens,
        "cache_creation": {
            "ephemeral_5m_input_tokens": writes.ephemeral_5m_input_tokens,
            "ephemeral_1h_input_tokens": writes.ephemeral_1h_input_tokens,
        },
    });
    // tine's own field: the server counted nothing, these are estimates (a local model).
    if usage.estimated
        && let Some(object) = value.as_object_mut()
    {
        object.insert("estimated".to_owned(), Value::Bool(true));
    }
    value
}

/// Claude Code's `modelUsage`: each model that answered, with its tokens, cost and window
/// (after a `--fallback-model` switch, the fallback is there beside what the main model did).
fn model_usage_value(cost: &RunCost) -> Value {
    cost.by_model
        .iter()
        .map(|(model, s)| {
            let u = &s.usage;
            let value = json!({
                "inputTokens": u.input_tokens,
                "outputTokens": u.output_tokens,
                "cacheReadInputTokens": u.cache_read_input_tokens,
                "cacheCreationInputTokens": u.cache_creation_input_tokens,
                "costUSD": s.cost_usd,
                "estimated": u.estimated,
                "contextWindow": cost
                    .context_windows
                    .get(model)
                    .copied()
                    .unwrap_or_else(|| tine_api_client::context_window(model)),
            });
            (model.clone(), value)
        })
        .collect::<serde_json::Map<String, Value>>()
        .into()
}

/// One source of `usage_by_source`: its requests, tokens and cost.
fn source_value(source: &SourceUsage) -> Value {
    let u = &source.usage;
    json!({
        "requests": source.requests,
        "input_tokens": u.input_tokens,
        "cache_creation_input_tokens": u.cache_creation_input_tokens,
        "cache_read_input_tokens": u.cache_read_input_tokens,
        "output_tokens": u.output_tokens,
        "cost_usd": source.cost_usd,
    })
}
