//! Building each request of the loop: the history repaired and normalized, and the prompt-cache
//! breakpoints placed so that request N reads request N−1's whole prompt from the cache.
//!
//! Breakpoints: one on the last system block (it covers tools and system, which come first in
//! the cache prefix) and one on the last message. Nothing that changes every request carries
//! one. With `skip_cache_write` (fire-and-forget forks) the message breakpoint moves to the
//! message before the last, so the fork reads the parent's entry but writes none of its own;
//! a fork that knows where the parent's last request put its breakpoint (the compaction
//! summary, whose history is never sent again) puts its own there, so it writes nothing at all.

use std::sync::Arc;

use tine_api_client::{
    CacheControl, ContentBlock, Effort, Message, MessageContent, MessagesRequest, OutputConfig,
    SystemPrompt, TextBlock, ThinkingConfig, ToolArray, ToolResultContent, referenced_tools,
};
use tine_tools::Tool;

use crate::repair::repair_tool_pairing;
use crate::replacement::{SharedReplacements, lock};

/// The system prompt as sent: one text block carrying the system breakpoint.
pub fn system_prompt_blocks(text: &str) -> SystemPrompt {
    SystemPrompt::Blocks(vec![
        TextBlock::new(text).with_cache_control(CacheControl::ephemeral()),
    ])
}

/// The history as sent: pairing repaired, every content as blocks (so a message serializes the
/// same whether or not it carries the breakpoint), stray breakpoints removed, and one
/// breakpoint on the last message (or the one before it with `skip_cache_write`).
#[cfg(test)]
pub(crate) fn prepare_messages(messages: &[Message], skip_cache_write: bool) -> Vec<Message> {
    prepare_messages_reading(messages, skip_cache_write, None)
}

/// [`prepare_messages`], where with `skip_cache_write` and `parent_cached` (how many leading
/// messages the parent's last request sent: its breakpoint was on the last of them) the
/// breakpoint goes on that same message. The request reads the parent's entry and writes none:
/// neither its own suffix nor the parent's messages after that point, which only the parent's
/// next request would have cached. Ignored when it does not fall inside the history or the
/// pairing had to be repaired (the indices would no longer be the parent's).
pub(crate) fn prepare_messages_reading(
    messages: &[Message],
    skip_cache_write: bool,
    parent_cached: Option<usize>,
) -> Vec<Message> {
    let repaired = repair_tool_pairing(messages);
    let parent_cached = parent_cached
        .filter(|n| repaired.is_none() && (1..messages.len()).contains(n) && skip_cache_write);
    let mut out = repaired.unwrap_or_else(|| messages.to_vec());
    for message in &mut out {
        if let MessageContent::Text(text) = &message.content {
            message.content = MessageContent::Blocks(vec![ContentBlock::text(text.clone())]);
        }
        if let MessageContent::Blocks(blocks) = &mut message.content {
            for block in blocks.iter_mut() {
                if block.cache_control().is_some() {
                    block.set_cache_control(None);
                }
            }
        }
    }
    let target = if let Some(n) = parent_cached {
        Some(n - 1)
    } else if skip_cache_write {
        out.len().checked_sub(2)
    } else {
        out.len().checked_sub(1)
    };
    if let Some(index) = target {
        mark_last_cacheable_block(&mut out[index]);
    }
    out
}

fn mark_last_cacheable_block(message: &mut Message) {
    if let MessageContent::Blocks(blocks) = &mut message.content {
        for block in blocks.iter_mut().rev() {
            // Thinking blocks cannot carry a breakpoint; the one before them can.
            if block.set_cache_control(Some(CacheControl::ephemeral())) {
                return;
            }
        }
    }
}

/// The `tools` array of the requests for `tools`, in their order. Build it once per session:
/// its bytes are part of the cache key.
pub fn tool_definitions(tools: &[Arc<dyn Tool>]) -> ToolArray {
    tools
        .iter()
        .map(|t| tine_tools::definition_of(t.as_ref()))
        .collect()
}

/// What a tool result says instead of loading a tool this session does not have.
pub(crate) fn unavailable_tool_text(name: &str) -> String {
    format!("(the tool {name} is not available in this session)")
}

/// Removes the `tool_reference`s `tools` cannot load (a tool loaded before a resume whose
/// server is gone, or that a deny rule now removes; a sub-agent's narrower catalog): the API
/// refuses a reference to a tool the request does not defer. A result left with none says so.
fn drop_unknown_references(messages: &mut [Message], tools: &ToolArray) {
    for message in messages {
        let MessageContent::Blocks(blocks) = &mut message.content else {
            continue;
        };
        for block in blocks {
            let ContentBlock::ToolResult(result) = block else {
                continue;
            };
            let Some(ToolResultContent::Blocks(inner)) = &mut result.content else {
                continue;
            };
            let unknown: Vec<String> = inner
                .iter()
                .filter_map(|b| match b {
                    ContentBlock::ToolReference(r) if !tools.is_deferred(&r.tool_name) => {
                        Some(r.tool_name.clone())
                    }
                    _ => None,
                })
                .collect();
            if unknown.is_empty() {
                continue;
            }
            inner.retain(
                |b| !matches!(b, ContentBlock::ToolReference(r) if unknown.contains(&r.tool_name)),
            );
            if inner.is_empty() {
                let text = unknown
                    .iter()
                    .map(|name| unavailable_tool_text(name))
                    .collect::<Vec<_>>()
                    .join("\n");
                result.content = Some(ToolResultContent::Text(text));
            }
        }
    }
}

/// Everything of a request that stays fixed for the whole loop.
#[derive(Debug, Clone)]
pub struct RequestTemplate {
    /// The model asked.
    pub model: String,
    /// The system prompt, as sent.
    pub system: Arc<SystemPrompt>,
    /// Serialized once; every request sends these bytes, then the deferred tools its history
    /// loaded ([`ToolArray::loading`]).
    pub tools: ToolArray,
    /// Extended thinking, when on.
    pub thinking: Option<ThinkingConfig>,
    /// No cache breakpoint on the messages (a fork that only reads the parent's entry).
    pub skip_cache_write: bool,
    /// Frozen replacement decisions for oversized tool results (None: results go out whole).
    pub replacements: Option<SharedReplacements>,
    /// `output_config.effort` (`--effort`); a fork cloning the template sends it too.
    pub effort: Option<Effort>,
}

impl RequestTemplate {
    /// The request for `messages` with `max_tokens`.
    pub fn build(&self, messages: &[Message], max_tokens: u32) -> MessagesRequest {
        self.build_reading(messages, max_tokens, None)
    }

    /// [`RequestTemplate::build`] with the breakpoint placed on the parent's last cached message.
    pub fn build_reading(
        &self,
        messages: &[Message],
        max_tokens: u32,
        parent_cached: Option<usize>,
    ) -> MessagesRequest {
        let mut prepared = prepare_messages_reading(messages, self.skip_cache_write, parent_cached);
        if let Some(state) = &self.replacements {
            lock(state).apply(&mut prepared);
        }
        // The deferred tools the history loaded (what is sent, after replacements) join the
        // array after its bytes; a reference to a tool this array cannot load is dropped.
        drop_unknown_references(&mut prepared, &self.tools);
        let tools = self.tools.loading(referenced_tools(&prepared));
        let mut request = MessagesRequest::new(self.model.clone(), max_tokens, prepared);
        // An empty system prompt (`--system-prompt ""`) is left out: the API refuses an
        // empty text block. Any other prompt is sent as it is, so no other request changes.
        request.system = (!self.system.is_blank()).then(|| (*self.system).clone());
        request.tools = tools;
        request.thinking = self.thinking;
        request.output_config = self.effort.map(|effort| OutputConfig {
            effort: Some(effort),
        });
        request
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use tine_api_client::{Role, ToolDefinition};

    use super::*;

    fn marked(m: &Message) -> bool {
        match &m.content {
            MessageContent::Blocks(b) => b.iter().any(|b| b.cache_control().is_some()),
            MessageContent::Text(_) => false,
        }
    }

    #[test]
    fn only_the_last_message_carries_a_breakpoint() {
        let history = vec![
            Message::user("hello"),
            Message::assistant(vec![ContentBlock::text("hi")]),
            Message::user("again"),
        ];
        let sent = prepare_messages(&history, false);
        assert_eq!(
            sent.iter().map(marked).collect::<Vec<_>>(),
            [false, false, true]
        );
        // string content became blocks, so earlier messages serialize the same next time
        assert!(matches!(sent[0].content, MessageContent::Blocks(_)));
    }

    #[test]
    fn skip_cache_write_marks_the_message_before_the_last() {
        let history = vec![
            Message::user("hello"),
            Message::assistant(vec![ContentBlock::text("hi")]),
            Message::user("fork prompt"),
        ];
        let sent = prepare_messages(&history, true);
        assert_eq!(
            sent.iter().map(marked).collect::<Vec<_>>(),
            [false, true, false]
        );
    }

    #[test]
    fn a_fork_reading_the_parents_prefix_marks_where_the_parent_did() {
        // The parent's last request sent the first two messages; a round and the fork's
        // prompt came after.
        let history = vec![
            Message::user("hello"),
            Message::user("again"),
            Message::assistant(vec![ContentBlock::text("reply")]),
            Message::user("summary instruction"),
        ];
        let sent = prepare_messages_reading(&history, true, Some(2));
        assert_eq!(
            sent.iter().map(marked).collect::<Vec<_>>(),
            [false, true, false, false]
        );
        // Out of range, or without skip_cache_write: the usual places.
        for bad in [Some(0), Some(4), None] {
            let sent = prepare_messages_reading(&history, true, bad);
            assert_eq!(
                sent.iter().map(marked).collect::<Vec<_>>(),
                [false, false, true, false],
                "{bad:?}"
            );
        }
        let sent = prepare_messages_reading(&history, false, Some(2));
        assert!(marked(&sent[3]) && !marked(&sent[1]));
    }

    #[test]
    fn a_thinking_block_at_the_end_passes_the_mark_to_the_block_before() {
        let history = vec![Message::assistant(vec![
            ContentBlock::text("a"),
            ContentBlock::Thinking(Default::default()),
        ])];
        let sent = prepare_messages(&history, false);
        let MessageContent::Blocks(b) = &sent[0].content else {
            panic!()
        };
        assert!(b[0].cache_control().is_some());
    }

    #[test]
    fn request_n_plus_one_equals_request_n_up_to_its_marks() {
        let t = RequestTemplate {
            model: "m".into(),
            system: Arc::new(system_prompt_blocks("sys")),
            tools: ToolArray::from(vec![ToolDefinition {
                name: "Read".into(),
                description: "d".into(),
                input_schema: json!({"type": "object"}),
                defer_loading: false,
                cache_control: None,
            }]),
            thinking: None,
            skip_cache_write: false,
            replacements: None,
            effort: None,
        };
        let mut history = vec![Message::user("q")];
        let a = t.build(&history, 100);
        history.push(Message::assistant(vec![ContentBlock::text("r")]));
        history.push(Message::user("q2"));
        let b = t.build(&history, 100);
        // strip marks: then a's messages are a prefix of b's
        let strip = |r: &MessagesRequest| {
            let mut r = r.clone();
            for m in &mut r.messages {
                if let MessageContent::Blocks(bl) = &mut m.content {
                    bl.iter_mut().for_each(|b| {
                        b.set_cache_control(None);
                    });
                }
            }
            r
        };
        let (a, b) = (strip(&a), strip(&b));
        assert_eq!(a.messages[..], b.messages[..1]);
        assert_eq!(a.system, b.system);
        assert_eq!(a.tools, b.tools);
        assert_eq!(b.messages[1].role, Role::Assistant);
    }
}
