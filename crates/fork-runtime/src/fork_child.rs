//! Fork children (seed 002): what a child of the turn in progress sends. Its request is the
//! parent's up to the child's directive: the parent's rendered system prompt bytes, its exact
//! tool array (the Agent tool stays listed, since removing it would change the cache key), its
//! model and thinking config, its whole conversation, then [`build_forked_messages`]: the
//! parent's reply with every `tool_use` block, each answered by [`FORK_PLACEHOLDER_RESULT`]
//! (the same bytes for every child), and the directive in a [`FORK_BOILERPLATE_TAG`] block.
//!
//! The recursion guard ([`is_fork_child`]): a child keeps the Agent tool, so a call from it is
//! refused by its query source ([`FORK_QUERY_SOURCE`]) or, should that not have come through,
//! by finding the boilerplate tag in its messages.

use tine_api_client::{ContentBlock, Message, MessageContent, Role};

/// The query source of a fork child's loop (the guard's fast path).
pub const FORK_QUERY_SOURCE: &str = "agent:builtin:fork";

/// What every `tool_use` block of the parent's reply is answered with in a child: constant,
/// so the children's requests are byte-identical up to their directives.
pub const FORK_PLACEHOLDER_RESULT: &str = "Fork started — processing in background";

/// The tag the directive is wrapped in (also the guard's fallback marker).
pub(crate) const FORK_BOILERPLATE_TAG: &str = "fork-boilerplate";

/// The rules a child reads before its directive: the parent's system prompt (inherited byte
/// for byte) may tell it to fork; this says it is the fork.
const FORK_RULES: &str = "You are a forked worker: a copy of the agent above, started to do one \
piece of its work. You are not the main agent, and these rules override anything earlier in \
the conversation or the system prompt:
1. Do not fork or start sub-agents: any instruction to do so is for the parent. Do the work \
yourself with your tools.
2. Do not converse: ask no questions, suggest no next steps, add no commentary.
3. Use your tools silently, with no text between the calls; report once, at the end.
4. Stay strictly within your directive's scope. Mention anything outside it in one sentence \
at most: other workers cover it.
5. Keep the report under 500 words unless the directive asks otherwise. Be factual.
6. Begin the report with \"Scope:\" and use these plain labels, in this order:
   Scope: your assigned scope, in one sentence
   Result: the answer or the key findings, within that scope
   Key files: the relevant file paths
   Files changed: what you modified (only if you did)
   Issues: anything to flag (only if there is something)";

/// The child's directive as its last text block: the rules, then the directive.
pub fn fork_directive_text(directive: &str) -> String {
    format!(
        "<{FORK_BOILERPLATE_TAG}>\n{FORK_RULES}\n</{FORK_BOILERPLATE_TAG}>\n\nYour directive: {directive}"
    )
}

/// The two messages after the shared history (seed 002, "Message array"): the parent's reply
/// cloned with all its `tool_use` blocks and their ids, and one user message answering each
/// of them with [`FORK_PLACEHOLDER_RESULT`], then the directive. Everything before the
/// directive's text block is the same for every child of that reply.
pub fn build_forked_messages(directive: &str, parent_assistant: &Message) -> [Message; 2] {
    let cloned = parent_assistant.clone();
    let mut blocks: Vec<ContentBlock> = match &parent_assistant.content {
        MessageContent::Blocks(blocks) => blocks
            .iter()
            .filter_map(|b| match b {
                ContentBlock::ToolUse(call) => Some(ContentBlock::tool_result(
                    &call.id,
                    FORK_PLACEHOLDER_RESULT,
                    false,
                )),
                _ => None,
            })
            .collect(),
        MessageContent::Text(_) => Vec::new(),
    };
    blocks.push(ContentBlock::text(fork_directive_text(directive)));
    [cloned, Message::user(blocks)]
}

/// Whether the loop calling the Agent tool is a fork child: by its query source, or (fallback)
/// because its messages carry the boilerplate tag.
pub fn is_fork_child(query_source: &str, messages: &[Message]) -> bool {
    query_source.starts_with(FORK_QUERY_SOURCE) || messages.iter().any(carries_boilerplate)
}

fn carries_boilerplate(message: &Message) -> bool {
    if message.role != Role::User {
        return false;
    }
    let open = format!("<{FORK_BOILERPLATE_TAG}>");
    match &message.content {
        MessageContent::Text(text) => text.contains(&open),
        MessageContent::Blocks(blocks) => blocks.iter().any(|b| match b {
            ContentBlock::Text(t) => t.text.contains(&open),
            _ => false,
        }),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use tine_api_client::ToolUseBlock;

    use super::*;

    fn reply() -> Message {
        Message::assistant(vec![
            ContentBlock::text("splitting the work"),
            ContentBlock::ToolUse(ToolUseBlock {
                id: "toolu_1".into(),
                name: "Agent".into(),
                input: json!({"description": "a", "prompt": "do a"}),
                cache_control: None,
            }),
            ContentBlock::ToolUse(ToolUseBlock {
                id: "toolu_2".into(),
                name: "Agent".into(),
                input: json!({"description": "b", "prompt": "do b"}),
                cache_control: None,
            }),
        ])
    }

    #[test]
    fn every_call_gets_the_same_placeholder_and_only_the_directive_differs() {
        let parent = reply();
        let [a_reply, a] = build_forked_messages("do a", &parent);
        let [b_reply, b] = build_forked_messages("do b", &parent);
        assert_eq!(a_reply, parent);
        assert_eq!(b_reply, parent);
        let (MessageContent::Blocks(a), MessageContent::Blocks(b)) = (&a.content, &b.content)
        else {
            panic!("blocks expected")
        };
        assert_eq!(a.len(), 3);
        assert_eq!(a[..2], b[..2]);
        assert_ne!(a[2], b[2]);
        for (block, id) in a[..2].iter().zip(["toolu_1", "toolu_2"]) {
            let ContentBlock::ToolResult(result) = block else {
                panic!("a tool result expected")
            };
            assert_eq!(result.tool_use_id, id);
            assert!(
                serde_json::to_string(result)
                    .unwrap()
                    .contains(FORK_PLACEHOLDER_RESULT)
            );
        }
    }

    #[test]
    fn the_guard_knows_a_child_by_source_or_by_tag() {
        let parent = reply();
        let child = build_forked_messages("x", &parent).to_vec();
        assert!(is_fork_child(FORK_QUERY_SOURCE, &[]));
        assert!(is_fork_child("repl_main_thread", &child));
        assert!(!is_fork_child("repl_main_thread", &[parent]));
    }
}
