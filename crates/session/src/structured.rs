//! `--json-schema`: a structured final answer, as Claude Code gives one. The schema becomes the
//! input schema of a `StructuredOutput` tool (in the tool array from the start, so every
//! request of the session sends the same bytes); the model answers by calling it, the call's
//! input is checked against the schema before it is accepted (a violation is an error result
//! the model reads and corrects), and the accepted value comes back on the turn's end
//! ([`crate::TurnEnd::structured_output`]). A turn that ends without one is told to call the
//! tool, up to [`MAX_STRUCTURED_OUTPUT_RETRIES`] times; then the turn fails.

use std::sync::{Arc, Mutex, PoisonError};

use serde_json::Value;
use tine_permissions::{PermissionTarget, ToolVerdict};
use tine_query_loop::{QueryEngine, QueryEvent, TurnResult};
use tine_tools::{Tool, ToolContext, ToolFuture, ToolOutput};

/// The tool's name (Claude Code's).
pub const STRUCTURED_OUTPUT_TOOL: &str = "StructuredOutput";

/// Reminders a turn gets to call the tool before it fails.
pub const MAX_STRUCTURED_OUTPUT_RETRIES: u32 = 5;

/// What a turn that ended without the structured answer is told.
pub(crate) const REMINDER: &str = "You MUST call the StructuredOutput tool to complete this \
     request. Call this tool now with your final answer.";

/// Said in the system prompt so the model knows from the first request.
pub(crate) const SYSTEM_NOTE: &str = "When you have finished the task, you MUST give your final \
     answer by calling the StructuredOutput tool exactly once, with input that follows its \
     schema. The answer is only received through that call.";

/// The answer the tool accepted last (taken once per turn).
#[derive(Clone, Default)]
pub(crate) struct StructuredSlot(Arc<Mutex<Option<Value>>>);

impl StructuredSlot {
    pub(crate) fn take(&self) -> Option<Value> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).take()
    }

    fn put(&self, value: Value) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Some(value);
    }
}

/// After a turn: the structured answer, reminding the model (each reminder a further turn of
/// the same submission, folded into `turn`) while it has not given one; the message of the
/// failure once [`MAX_STRUCTURED_OUTPUT_RETRIES`] reminders went unheeded. A turn that failed
/// or was interrupted on its own is left as it ended.
pub(crate) async fn finish_turn(
    engine: &mut QueryEngine,
    slot: &StructuredSlot,
    turn: &mut TurnResult,
    mut on_event: impl FnMut(&QueryEvent),
) -> (Option<Value>, Option<String>) {
    let mut reminders = 0;
    loop {
        if let Some(value) = slot.take() {
            return (Some(value), None);
        }
        if !turn.terminal.is_success() {
            return (None, None);
        }
        if reminders == MAX_STRUCTURED_OUTPUT_RETRIES {
            return (
                None,
                Some(format!(
                    "the model gave no structured answer (a {STRUCTURED_OUTPUT_TOOL} call valid \
                     against --json-schema) after {MAX_STRUCTURED_OUTPUT_RETRIES} reminders"
                )),
            );
        }
        reminders += 1;
        let next = engine.submit(REMINDER, &mut on_event).await;
        fold(turn, next);
    }
}

/// `next` (a reminder's turn) added to `turn`: the figures summed, the ending and the text
/// the latest.
fn fold(turn: &mut TurnResult, next: TurnResult) {
    turn.terminal = next.terminal;
    if !next.result.trim().is_empty() {
        turn.result = next.result;
    }
    turn.num_turns += next.num_turns;
    turn.usage += next.usage;
    turn.cost_usd += next.cost_usd;
    turn.duration += next.duration;
    turn.api_duration += next.api_duration;
}

/// Why a `--json-schema` cannot be used.
pub(crate) fn check_schema(schema: &Value) -> Result<(), String> {
    let is_object = schema.get("type").and_then(Value::as_str) == Some("object");
    if !schema.is_object() || !is_object {
        return Err(
            "--json-schema must be a JSON Schema whose top level is an object \
             ({\"type\": \"object\", \"properties\": {...}}): it is the input schema of the \
             StructuredOutput tool"
                .to_owned(),
        );
    }
    Ok(())
}

/// The `StructuredOutput` tool of a session with a `--json-schema`.
pub(crate) struct StructuredOutputTool {
    schema: Value,
    slot: StructuredSlot,
}

impl StructuredOutputTool {
    pub(crate) fn new(schema: Value, slot: StructuredSlot) -> Self {
        Self { schema, slot }
    }
}

impl Tool for StructuredOutputTool {
    fn name(&self) -> &str {
        STRUCTURED_OUTPUT_TOOL
    }

    fn description(&self) -> String {
        "Use this tool to return your final response in the requested structured format. You \
         MUST call this tool exactly once at the end of your response to provide the \
         structured output."
            .to_owned()
    }

    fn input_schema(&self) -> Value {
        self.schema.clone()
    }

    fn call<'a>(&'a self, input: Value, _ctx: &'a ToolContext) -> ToolFuture<'a> {
        // `run_tool` checked `input` against the schema already.
        self.slot.put(input);
        Box::pin(async {
            Ok(ToolOutput::text("Structured output provided successfully")
                .with_summary("structured output"))
        })
    }

    fn permission_target(&self, _input: &Value, _ctx: &ToolContext) -> PermissionTarget {
        PermissionTarget::Other { content: None }
    }

    fn check_permissions(&self, _input: &Value, _ctx: &ToolContext) -> ToolVerdict {
        ToolVerdict::Allow {
            reason: "the structured answer touches nothing".to_owned(),
        }
    }

    fn is_read_only(&self, _input: &Value) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_object_schemas_are_accepted() {
        assert!(check_schema(&json!({"type": "object", "properties": {}})).is_ok());
        assert!(check_schema(&json!({"type": "array"})).is_err());
        assert!(check_schema(&json!("object")).is_err());
    }

    #[tokio::test]
    async fn a_valid_answer_is_kept_and_an_invalid_one_is_an_error_result() {
        let slot = StructuredSlot::default();
        let tool = StructuredOutputTool::new(
            json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}),
            slot.clone(),
        );
        let ctx = ToolContext::new(std::env::temp_dir());
        let bad = tine_tools::run_tool(&tool, json!({"n": "three"}), &ctx).await;
        assert!(bad.is_error, "{bad:?}");
        assert_eq!(slot.take(), None);
        let good = tine_tools::run_tool(&tool, json!({"n": 3}), &ctx).await;
        assert!(!good.is_error, "{good:?}");
        assert_eq!(slot.take(), Some(json!({"n": 3})));
        assert_eq!(slot.take(), None);
    }
}
