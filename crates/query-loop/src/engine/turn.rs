//! One turn of the session ([`QueryEngine::submit`]) and `/compact`
//! ([`QueryEngine::compact_now`]): the loop's events folded into the session's history,
//! totals, denials and transcript.

use std::sync::Arc;
use std::time::{Instant, SystemTime};

use futures::StreamExt;
use serde_json::Value;
use tine_api_client::{ContentBlock, Message, cost_usd};

use super::{PermissionDenial, QueryEngine, TurnResult};
use crate::events::QueryEvent;
use crate::params::{QueryParams, RequestObserver};
use crate::plug::{CompactContext, CompactError};
use crate::query::{message_text, query};
use crate::totals::LoopTotals;
use crate::transcript::{CompactBoundary, RecordType};

impl QueryEngine {
    /// The user message for `prompt`: on a new session, the user context goes first; then the
    /// turn's attachments (recalled memories, ...); then the prompt.
    fn user_message(&self, prompt: &[ContentBlock], attachments: &[String]) -> Message {
        let mut blocks = Vec::with_capacity(1 + prompt.len() + attachments.len());
        if self.messages.is_empty()
            && let Some(context) = &self.config.user_context
        {
            blocks.push(ContentBlock::text(context.as_ref()));
        }
        blocks.extend(attachments.iter().map(|a| ContentBlock::text(a.as_str())));
        blocks.extend(prompt.iter().cloned());
        Message::user(blocks)
    }

    /// Runs one turn for `prompt`, calling `on_event` with every event as it happens.
    pub async fn submit(&mut self, prompt: &str, on_event: impl FnMut(&QueryEvent)) -> TurnResult {
        self.submit_with_attachments(prompt, &[], on_event).await
    }

    /// Runs one turn for `prompt` with extra context blocks put before it in the same user
    /// message (they become part of the history, so later requests keep the same bytes).
    pub async fn submit_with_attachments(
        &mut self,
        prompt: &str,
        attachments: &[String],
        on_event: impl FnMut(&QueryEvent),
    ) -> TurnResult {
        self.submit_content(&[ContentBlock::text(prompt)], attachments, on_event)
            .await
    }

    /// Runs one turn for a prompt of several content blocks (text, images, documents, in the
    /// order given) with `attachments` before them in the same user message.
    pub async fn submit_content(
        &mut self,
        prompt: &[ContentBlock],
        attachments: &[String],
        mut on_event: impl FnMut(&QueryEvent),
    ) -> TurnResult {
        let started = Instant::now();
        let message = self.user_message(prompt, attachments);
        let parent = self.last_uuid();
        self.persist_message(&message).await;
        self.last_prompt = self.last_uuid().map(|uuid| (uuid, parent));
        self.messages.push(message);

        let params = self.query_params();
        let mut events = query(params, self.messages.clone());
        let mut totals = LoopTotals::new();
        let mut result = String::new();
        while let Some(event) = events.next().await {
            on_event(&event);
            totals.fold(&event, cost_usd);
            if let QueryEvent::AssistantMessage { message, .. } = &event {
                result = message_text(message);
            }
            self.keep_event(&event).await;
        }
        let terminal = totals.finish();
        self.total_usage += totals.usage;
        self.total_cost_usd += totals.cost_usd;
        self.total_api_duration += totals.api_duration;
        TurnResult {
            terminal,
            result,
            num_turns: totals.requests,
            usage: totals.usage,
            cost_usd: totals.cost_usd,
            duration: started.elapsed(),
            api_duration: totals.api_duration,
        }
    }

    /// The loop's parameters for a turn of this session.
    fn query_params(&self) -> QueryParams {
        let mut params = QueryParams::new(
            Arc::clone(&self.config.client),
            self.request_template(),
            Arc::clone(&self.config.tools),
            self.tool_context.clone(),
        );
        params.can_use_tool = Arc::clone(&self.config.can_use_tool);
        params.prompter = self.config.prompter.clone();
        params.max_turns = self.config.max_turns;
        params.stop_hooks = self.config.stop_hooks.clone();
        params.hooks = self.config.hooks.clone();
        params.compactor = self.config.compactor.clone();
        params.post_sampling = self.config.post_sampling.clone();
        params.on_repeated_failure = self.on_repeated_failure.clone();
        params.budget = self
            .spending_limit
            .clone()
            .map(|limit| crate::budget::RunBudget {
                limit,
                spent_before: self.total_cost_usd,
            });
        params.on_request = match (&self.config.on_request, &self.config.monitor) {
            (None, None) => None,
            (observer, monitor) => {
                let (observer, monitor) = (observer.clone(), monitor.clone());
                Some(Arc::new(move |request: &tine_api_client::MessagesRequest| {
                    if let Some(o) = &observer {
                        o(request);
                    }
                    if let Some(m) = &monitor {
                        m.on_request(request);
                    }
                }) as RequestObserver)
            }
        };
        params
    }

    /// What the session keeps of one event of the loop: history, transcript, denials.
    async fn keep_event(&mut self, event: &QueryEvent) {
        match event {
            QueryEvent::Usage { usage, .. } => {
                if let Some(monitor) = self.config.monitor.clone() {
                    for note in monitor.on_usage(usage) {
                        self.persist_other(RecordType::Other(note.kind), note.data)
                            .await;
                    }
                }
            }
            QueryEvent::AssistantMessage { message, uuid, .. }
            | QueryEvent::UserMessage { message, uuid } => {
                self.persist_message_as(message, Some(uuid)).await;
                self.messages.push(message.clone());
            }
            QueryEvent::HistoryReplaced { messages, boundary } => {
                self.replace_history(messages.clone(), boundary).await;
            }
            QueryEvent::ToolResultsCleared { .. } => {
                self.record_replacements().await;
                self.prefix_reset().await;
            }
            QueryEvent::Transition(transition) => {
                self.persist_other(
                    RecordType::Other("transition".to_owned()),
                    serde_json::to_value(transition).unwrap_or(Value::Null),
                )
                .await;
            }
            QueryEvent::ToolDenied {
                tool_use_id,
                tool,
                input,
                reason,
            } => self.denials.push(PermissionDenial {
                tool_name: tool.clone(),
                tool_use_id: tool_use_id.clone(),
                tool_input: input.clone(),
                reason: reason.clone(),
                at: SystemTime::now(),
            }),
            QueryEvent::RequestStart { .. }
            | QueryEvent::Terminal(_)
            | QueryEvent::TextDelta { .. }
            | QueryEvent::ThinkingDelta { .. }
            | QueryEvent::ToolUseStart { .. }
            | QueryEvent::Retry(_)
            | QueryEvent::ToolProgress { .. }
            | QueryEvent::ContextWarning(_)
            | QueryEvent::ToolResult { .. } => {}
        }
    }

    /// `/compact [focus]`: replaces the history with a summary now (between turns), writing
    /// the boundary and the new history to the transcript as an automatic compaction does.
    pub async fn compact_now(
        &mut self,
        focus: Option<&str>,
    ) -> Result<CompactBoundary, CompactError> {
        let Some(compactor) = self.config.compactor.clone() else {
            return Err(CompactError::Unavailable);
        };
        if self.messages.is_empty() {
            return Err(CompactError::Empty);
        }
        let template = self.request_template();
        let compacted = compactor
            .compact_now(
                CompactContext {
                    messages: &self.messages,
                    template: &template,
                    tool_context: &self.tool_context,
                    current_prompt: None,
                },
                focus,
            )
            .await?;
        self.replace_history(compacted.messages, &compacted.boundary)
            .await;
        Ok(compacted.boundary)
    }

    /// The boundary record, then the new history; the monitor forgets its reference.
    async fn replace_history(&mut self, messages: Vec<Message>, boundary: &CompactBoundary) {
        self.persist_other(RecordType::System, boundary.to_data())
            .await;
        for m in &messages {
            self.persist_message(m).await;
        }
        self.messages = messages;
        self.prefix_reset().await;
    }

    /// The prefix changed on purpose: the next request is not a cache break.
    async fn prefix_reset(&mut self) {
        if let Some(monitor) = self.config.monitor.clone() {
            for note in monitor.on_history_replaced() {
                self.persist_other(RecordType::Other(note.kind), note.data)
                    .await;
            }
        }
    }

    /// Writes the replaced results not yet in the transcript, so a resumed session sends them
    /// as this one does (see [`crate::replacement`]).
    async fn record_replacements(&mut self) {
        let data = crate::replacement::lock(&self.replacements)
            .unrecorded(&mut self.recorded_replacements);
        if let Some(data) = data {
            let kind = RecordType::Other(crate::replacement::REPLACEMENTS_KIND.to_owned());
            self.persist_other(kind, data).await;
        }
    }

    async fn persist_message(&mut self, message: &Message) {
        self.persist_message_as(message, None).await;
    }

    /// Persists `message` under `uuid` (the one its event carried), else a new one.
    async fn persist_message_as(&mut self, message: &Message, uuid: Option<&str>) {
        if let Some(writer) = &mut self.transcript
            && let Err(error) = writer.append_message_as(message, uuid).await
        {
            tracing::error!(%error, "could not write the transcript");
        }
    }

    async fn persist_other(&mut self, kind: RecordType, data: Value) {
        if let Some(writer) = &mut self.transcript
            && let Err(error) = writer.append(kind, None, Some(&data)).await
        {
            tracing::error!(%error, "could not write the transcript");
        }
    }
}
