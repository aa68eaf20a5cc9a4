//! The tool calls of one reply: PreToolUse hooks, the permission check, the runs (consecutive
//! concurrency-safe calls in parallel, at most [`MAX_PARALLEL_TOOLS`], the rest one at a time),
//! PostToolUse hooks, and the `tool_result` blocks in call order.
//!
//! A PreToolUse hook runs before the permission check, as in Claude Code: exit 2 or
//! `decision: "block"` or `permissionDecision: "deny"` refuses the call (the model reads the
//! reason as the result); `"ask"` asks a person even where rules allow; `"allow"` skips the
//! question but never a deny rule ([`CanUseTool::check_hook_allowed`]); `updatedInput` is what
//! runs and what the permission check judges.

use std::sync::Arc;
use std::time::Duration;

use futures::stream::{self, StreamExt};
use serde_json::{Value, json};
use tine_api_client::{ContentBlock, Message, ToolUseBlock, referenced_tools};
use tine_tools::{
    ProgressSink, Tool, ToolOutput, ToolProgress, run_tool, unloaded_call_error, validate,
};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::events::{Emitter, QueryEvent};
use crate::hooks::{HookEvent, HookPermission, hook_reminders};
use crate::params::QueryParams;
use crate::plug::PermissionOutcome;
use crate::repair::INTERRUPTED_TOOL_RESULT;
use crate::request::RequestTemplate;
use crate::spawn::{Spawner, TurnInProgress};
use crate::stuck::FailureStreak;

/// Tool calls running at once in a concurrency-safe batch.
pub(crate) const MAX_PARALLEL_TOOLS: usize = 10;

/// What one reply's tool calls produced.
pub(crate) struct ToolRound {
    /// The `tool_result` blocks, in call order.
    pub results: Vec<ContentBlock>,
    /// A hook said `"continue": false` (with its `stopReason`): the loop ends after this round.
    pub stop: Option<Option<String>>,
}

/// Progress of one tool call, forwarded as events (dropped when the channel is full: progress
/// is advisory).
struct ToolProgressForwarder {
    tx: mpsc::Sender<QueryEvent>,
    tool_use_id: String,
}

impl ProgressSink for ToolProgressForwarder {
    fn report(&self, progress: ToolProgress) {
        let _ = self.tx.try_send(QueryEvent::ToolProgress {
            tool_use_id: self.tool_use_id.clone(),
            progress,
        });
    }
}

/// One tool call after its hooks and permission check.
enum Prepared<'a> {
    Run {
        tool: &'a Arc<dyn Tool>,
        input: Value,
    },
    Done(ToolOutput),
}

/// Runs the calls of one reply; `messages` is the history so far (the reply last), which
/// says which deferred tools are loaded.
pub(crate) async fn run_tool_calls(
    params: &QueryParams,
    turn: Option<&TurnInProgress>,
    messages: &[Message],
    uses: &[ToolUseBlock],
    failures: &mut FailureStreak,
    emit: &Emitter,
    cancel: &CancellationToken,
) -> ToolRound {
    let mut round = ToolRound {
        results: Vec::with_capacity(uses.len()),
        stop: None,
    };
    let loaded = referenced_tools(messages);
    // What a result that loads tools says goes beside the results, as Claude Code's does: a
    // result holding references holds nothing else.
    let mut beside = Vec::new();
    let mut index = 0;
    while index < uses.len() {
        // A batch: a run of consecutive concurrency-safe calls, or a single other call.
        let end = if is_concurrency_safe(params, &uses[index]) {
            let mut end = index;
            while end < uses.len() && is_concurrency_safe(params, &uses[end]) {
                end += 1;
            }
            end
        } else {
            index + 1
        };
        let batch = &uses[index..end];
        index = end;

        // Hooks and permission checks one at a time (a person may be asked), then the runs.
        let mut prepared = Vec::with_capacity(batch.len());
        for call in batch {
            let unloaded = params.template.tools.is_deferred(&call.name)
                && !loaded.contains(&call.name.as_str());
            let stop = &mut round.stop;
            prepared.push(prepare_call(params, call, unloaded, emit, cancel, stop).await);
        }
        let mut runs = Vec::with_capacity(batch.len());
        for (call, prepared) in batch.iter().zip(prepared) {
            runs.push(execute_call(params, turn, call, prepared, emit, cancel));
        }
        let outputs: Vec<(ToolOutput, Option<Option<String>>)> = stream::iter(runs)
            .buffered(MAX_PARALLEL_TOOLS)
            .collect()
            .await;
        for (call, (output, stop)) in batch.iter().zip(outputs) {
            if let Some(stop) = stop {
                round.stop.get_or_insert(stop);
            }
            failures.record(&call.name, &call.input, &output);
            emit.send(QueryEvent::ToolResult {
                tool_use_id: call.id.clone(),
                tool: call.name.clone(),
                output: output.clone(),
            })
            .await;
            if !output.references.is_empty() {
                beside.push(ContentBlock::text(output.content.clone()));
            }
            round
                .results
                .push(result_block(&call.id, &call.name, output));
        }
    }
    round.results.extend(beside);
    round
}

/// What the model reads when its call's arguments were not one JSON object.
fn malformed_call_error(tool: &str, schema: &serde_json::Value, arguments: &str) -> String {
    const SHOWN: usize = 300;
    let shown: String = arguments.chars().take(SHOWN).collect();
    let more = if arguments.chars().count() > SHOWN {
        "…"
    } else {
        ""
    };
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|names| names.iter().filter_map(serde_json::Value::as_str).collect())
        .unwrap_or_default();
    let fields = match required.is_empty() {
        true => String::new(),
        false => format!(" (required: {})", required.join(", ")),
    };
    format!(
        "InputValidationError: the arguments of this {tool} call were not a JSON object, so it \
         did not run. They were: {shown}{more}\nCall {tool} again with its arguments as one JSON \
         object holding the fields of its schema{fields}."
    )
}

fn is_concurrency_safe(params: &QueryParams, call: &ToolUseBlock) -> bool {
    params
        .find_tool(&call.name)
        .is_some_and(|t| t.is_concurrency_safe(&call.input))
}

/// `unloaded`: a deferred tool the history has not loaded yet; a call whose input does not
/// fit its schema is answered with Claude Code's advice to load it first, before any hook or
/// permission check (a call that fits runs, as in Claude Code).
async fn prepare_call<'a>(
    params: &'a QueryParams,
    call: &ToolUseBlock,
    unloaded: bool,
    emit: &Emitter,
    cancel: &CancellationToken,
    stop: &mut Option<Option<String>>,
) -> Prepared<'a> {
    if cancel.is_cancelled() {
        return Prepared::Done(ToolOutput::error(INTERRUPTED_TOOL_RESULT));
    }
    let Some(tool) = params.find_tool(&call.name) else {
        // Claude Code's wording, then the names a small model may have meant.
        let names: Vec<&str> = params
            .template
            .tools
            .iter()
            .map(|d| d.name.as_str())
            .collect();
        return Prepared::Done(
            ToolOutput::error(format!(
                "Error: No such tool available: {}. The tools are: {}.",
                call.name,
                names.join(", ")
            ))
            .with_summary(format!("no tool named {}", call.name)),
        );
    };
    // A model's arguments that were not a JSON object (the OpenAI-compatible stream keeps
    // them as text): refused before hooks, permissions or the tool see them.
    if let Some(text) = call.input.as_str() {
        let text = malformed_call_error(&call.name, &tool.input_schema(), text);
        return Prepared::Done(
            ToolOutput::error(text)
                .with_summary(format!("{}'s arguments were not a JSON object", call.name)),
        );
    }
    if unloaded && let Err(violation) = validate(&tool.input_schema(), &call.input) {
        let text = unloaded_call_error(tool.as_ref(), &violation.to_string());
        return Prepared::Done(ToolOutput::error(text).with_summary(violation.to_string()));
    }
    let mut input = call.input.clone();
    let mut hook_answer = None;
    if let Some(hooks) = &params.hooks
        && hooks.has(HookEvent::PreToolUse)
    {
        let outcome = hooks.pre_tool_use(&call.name, &input, &call.id).await;
        if let Some(reason) = outcome.block_reason() {
            return refuse(
                emit,
                call,
                &input,
                format!("blocked by a PreToolUse hook: {reason}"),
            )
            .await;
        }
        if let Some(reason) = &outcome.stop {
            stop.get_or_insert(reason.clone());
            let why = reason.as_deref().unwrap_or("no reason given");
            return refuse(
                emit,
                call,
                &input,
                format!("a PreToolUse hook stopped the session (\"continue\": false): {why}"),
            )
            .await;
        }
        if let Some(updated) = outcome.updated_input {
            input = updated;
        }
        match outcome.permission {
            Some((HookPermission::Deny, reason)) => {
                let why = reason.unwrap_or_else(|| "no reason given".to_owned());
                return refuse(
                    emit,
                    call,
                    &input,
                    format!("denied by a PreToolUse hook: {why}"),
                )
                .await;
            }
            other => hook_answer = other,
        }
    }
    let checker = &params.can_use_tool;
    let ctx = &params
        .tool_context
        .clone()
        .with_call_ext(crate::plug::CheckedCall {
            tool_use_id: call.id.clone(),
        });
    let mut outcome = match hook_answer {
        // The hook skips the question; deny (and ask) rules still apply.
        Some((HookPermission::Allow, _)) => {
            checker.check_hook_allowed(tool.as_ref(), &input, ctx).await
        }
        Some((HookPermission::Ask, reason)) => {
            let reason = reason.unwrap_or_else(|| "a PreToolUse hook asks for approval".to_owned());
            checker
                .check_hook_ask(tool.as_ref(), &input, ctx, &reason)
                .await
        }
        Some((HookPermission::Deny, _)) | None => checker.check(tool.as_ref(), &input, ctx).await,
    };
    if let PermissionOutcome::Ask { reason } = &outcome {
        outcome = match &params.prompter {
            Some(prompter) => match prompter.ask(tool.as_ref(), &input, reason).await {
                PermissionOutcome::Ask { reason } => PermissionOutcome::Deny { reason },
                answer => answer,
            },
            None => PermissionOutcome::Deny {
                reason: format!(
                    "{reason}; approval cannot be asked for here, so the call was not run"
                ),
            },
        };
    }
    match outcome {
        PermissionOutcome::Allow { updated_input } => Prepared::Run {
            tool,
            input: updated_input.unwrap_or(input),
        },
        PermissionOutcome::Deny { reason } | PermissionOutcome::Ask { reason } => {
            let text = format!("Permission to use {} was denied: {reason}", call.name);
            refuse_with(emit, call, &input, reason, text).await
        }
    }
}

/// A call a hook refused: `text` is both the denial's reason and the result the model reads.
async fn refuse<'a>(
    emit: &Emitter,
    call: &ToolUseBlock,
    input: &Value,
    text: String,
) -> Prepared<'a> {
    refuse_with(emit, call, input, text.clone(), text).await
}

/// A refused call: a denial for the session's record, and `text` as the result the model reads.
async fn refuse_with<'a>(
    emit: &Emitter,
    call: &ToolUseBlock,
    input: &Value,
    reason: String,
    text: String,
) -> Prepared<'a> {
    emit.send(QueryEvent::ToolDenied {
        tool_use_id: call.id.clone(),
        tool: call.name.clone(),
        input: input.clone(),
        reason,
    })
    .await;
    Prepared::Done(ToolOutput::error(text).with_summary("denied"))
}

/// Runs a prepared call, then its PostToolUse hooks; returns the output and a hook's stop.
async fn execute_call(
    params: &QueryParams,
    turn: Option<&TurnInProgress>,
    call: &ToolUseBlock,
    prepared: Prepared<'_>,
    emit: &Emitter,
    cancel: &CancellationToken,
) -> (ToolOutput, Option<Option<String>>) {
    let (tool, input) = match prepared {
        Prepared::Done(output) => return (output, None),
        Prepared::Run { tool, input } => (tool, input),
    };
    let mut ctx = params
        .tool_context
        .clone()
        .with_progress(Arc::new(ToolProgressForwarder {
            tx: emit.tx.clone(),
            tool_use_id: call.id.clone(),
        }));
    if let Some(turn) = turn {
        // The cache-safe slot is empty mid-turn: this is how the Agent tool sees the turn.
        ctx = ctx.with_call_ext(TurnInProgress {
            tool_use_id: call.id.clone(),
            ..turn.clone()
        });
    }
    let run = run_tool(tool.as_ref(), input.clone(), &ctx);
    tokio::pin!(run);
    let mut output = tokio::select! {
        biased;
        output = &mut run => output,
        _ = cancel.cancelled() => {
            // The tool sees the same token and kills what it started; give it a moment.
            match tokio::time::timeout(Duration::from_secs(2), &mut run).await {
                Ok(output) => output,
                Err(_) => ToolOutput::error(INTERRUPTED_TOOL_RESULT),
            }
        }
    };
    // Claude Code runs PostToolUse after a call that succeeded.
    let Some(hooks) = params
        .hooks
        .as_ref()
        .filter(|h| h.has(HookEvent::PostToolUse))
    else {
        return (output, None);
    };
    if output.is_error || cancel.is_cancelled() {
        return (output, None);
    }
    let outcome = hooks
        .post_tool_use(&call.name, &input, tool_response(&input, &output), &call.id)
        .await;
    // The call already ran: what the hooks say is feedback the model reads with the result.
    if let Some(reason) = outcome.block_reason() {
        output
            .content
            .push_str(&format!("\n\nPostToolUse hook feedback:\n{reason}"));
    }
    for reminder in hook_reminders(HookEvent::PostToolUse, &outcome.context) {
        output.content.push_str("\n\n");
        output.content.push_str(&reminder);
    }
    (output, outcome.stop)
}

/// What a PostToolUse hook reads as `tool_response`: the result's text and summary, with the
/// `filePath` file tools act on.
fn tool_response(input: &Value, output: &ToolOutput) -> Value {
    let mut response = json!({
        "content": output.content,
        "summary": output.summary,
        "success": !output.is_error,
    });
    if let (Some(path), Some(map)) = (
        input.get("file_path").and_then(Value::as_str),
        response.as_object_mut(),
    ) {
        map.insert("filePath".into(), json!(path));
    }
    response
}

fn result_block(id: &str, name: &str, output: ToolOutput) -> ContentBlock {
    if !output.references.is_empty() {
        // Only the references: the API expands each into the tool's definition.
        let references = output
            .references
            .into_iter()
            .map(ContentBlock::tool_reference)
            .collect();
        return ContentBlock::ToolResult(tine_api_client::ToolResultBlock {
            tool_use_id: id.to_owned(),
            content: Some(tine_api_client::ToolResultContent::Blocks(references)),
            is_error: None,
            cache_control: None,
        });
    }
    let content = if output.content.is_empty() {
        format!("{name} completed with no output")
    } else {
        output.content
    };
    if output.media.is_empty() {
        return ContentBlock::tool_result(id, content, output.is_error);
    }
    // The text, then each image or document, as content blocks of the one result.
    let mut blocks = vec![ContentBlock::text(content)];
    blocks.extend(output.media.into_iter().map(media_block));
    ContentBlock::ToolResult(tine_api_client::ToolResultBlock {
        tool_use_id: id.to_owned(),
        content: Some(tine_api_client::ToolResultContent::Blocks(blocks)),
        is_error: output.is_error.then_some(true),
        cache_control: None,
    })
}

fn media_block(media: tine_tools::ToolMedia) -> ContentBlock {
    match media.kind {
        tine_tools::MediaKind::Image => ContentBlock::Image(tine_api_client::ImageBlock {
            source: tine_api_client::ImageSource::Base64 {
                media_type: media.media_type,
                data: media.data,
            },
            cache_control: None,
        }),
        tine_tools::MediaKind::Document => ContentBlock::Document(tine_api_client::DocumentBlock {
            source: tine_api_client::DocumentSource::Base64 {
                media_type: media.media_type,
                data: media.data,
            },
            title: None,
            context: None,
            citations: None,
            cache_control: None,
        }),
    }
}

/// The turn as its tool calls see it, when the context has a spawner to hand it to (the
/// history is copied once per round of calls, and only then).
pub(crate) fn turn_in_progress(
    params: &QueryParams,
    template: &RequestTemplate,
    messages: &[Message],
) -> Option<TurnInProgress> {
    params.tool_context.ext::<Spawner>()?;
    Some(TurnInProgress {
        template: template.clone(),
        tools: Arc::clone(&params.tools),
        messages: Arc::from(messages),
        query_source: Arc::clone(&params.query_source),
        tool_use_id: String::new(),
    })
}
