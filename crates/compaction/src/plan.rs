//! What a compaction summarizes and what it keeps (issue 37). Compaction only ever shrinks
//! what came before: the current turn's prompt reaches the model whole.
//!
//! - Between turns (`/compact`) the whole history is summarized.
//! - In a turn, what came before the prompt is summarized and the turn (the prompt and its
//!   rounds so far) is kept as it is, after the summary; when the turn itself has grown past
//!   half the threshold (a long agentic turn), the whole history is summarized instead and the
//!   prompt alone is kept, after the summary.
//! - When there is too little to summarize (a first prompt behind a big fixed prefix on a small
//!   window), nothing is: a summary would be as long as what it replaced. The caller says so
//!   and sends the request as it is, or refuses it when it cannot fit at all.

use tine_api_client::{ContentBlock, Message, MessageContent};
use tine_query_loop::{ContentReplacementState, CurrentPrompt};

use crate::error::CompactionError;
use crate::estimate::messages_tokens;

/// The least a summary must replace (estimated tokens) to be worth its request.
pub(crate) const MIN_TOKENS_TO_SUMMARIZE: u64 = 1_000;

/// What a compaction summarizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Plan {
    /// Between turns: the whole history.
    Whole,
    /// The messages before `start` (the turn's prompt); the turn is kept after the summary.
    BeforeTurn {
        /// Where the turn starts.
        start: usize,
    },
    /// The whole history; the prompt alone is kept after the summary.
    AllButPrompt,
}

impl Plan {
    /// Decides for `messages`, the current turn's `prompt` and the auto-compact level.
    pub(crate) fn choose(
        messages: &[Message],
        prompt: Option<CurrentPrompt<'_>>,
        auto_compact_at: u64,
        decisions: Option<&ContentReplacementState>,
    ) -> Result<Self, CompactionError> {
        let Some(prompt) = prompt else {
            return Ok(Self::Whole);
        };
        let start = prompt.index.min(messages.len());
        let before = messages_tokens(&messages[..start], decisions);
        let turn = messages_tokens(&messages[start..], decisions);
        let rounds = messages.len() > start + 1;
        let enough_before = before >= MIN_TOKENS_TO_SUMMARIZE;
        if enough_before && turn <= auto_compact_at / 2 {
            return Ok(Self::BeforeTurn { start });
        }
        let prompt_tokens = messages_tokens(std::slice::from_ref(prompt.message), decisions);
        if rounds && (before + turn).saturating_sub(prompt_tokens) >= MIN_TOKENS_TO_SUMMARIZE {
            return Ok(Self::AllButPrompt);
        }
        if enough_before {
            return Ok(Self::BeforeTurn { start });
        }
        Err(CompactionError::NothingToSummarize {
            tokens: before + turn,
        })
    }

    /// The part of `messages` the summary fork summarizes.
    pub(crate) fn summarized<'m>(&self, messages: &'m [Message]) -> &'m [Message] {
        match *self {
            Self::BeforeTurn { start } => &messages[..start.min(messages.len())],
            Self::Whole | Self::AllButPrompt => messages,
        }
    }
}

/// The blocks of a prompt message to put after the summary: all but the user context the
/// session put first (the new history starts with it again).
pub(crate) fn prompt_blocks(prompt: &Message, user_context: Option<&str>) -> Vec<ContentBlock> {
    match &prompt.content {
        MessageContent::Text(text) => vec![ContentBlock::text(text.as_str())],
        MessageContent::Blocks(blocks) => blocks
            .iter()
            .filter(|block| match (block, user_context) {
                (ContentBlock::Text(t), Some(context)) => t.text != context,
                _ => true,
            })
            .cloned()
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prompt_at(messages: &[Message], index: usize) -> CurrentPrompt<'_> {
        CurrentPrompt {
            message: &messages[index],
            index,
        }
    }

    fn talk(turns: usize, bytes: usize) -> Vec<Message> {
        let mut m = Vec::new();
        for i in 0..turns {
            m.push(Message::user(format!("question {i} {}", "q".repeat(bytes))));
            m.push(Message::assistant(vec![ContentBlock::text(
                "a".repeat(bytes),
            )]));
        }
        m
    }

    #[test]
    fn a_lone_first_prompt_is_never_summarized() {
        // The first turn: one message, the prompt, behind a 7k prefix.
        let history = vec![Message::user("What does notes.txt say?")];
        let error = Plan::choose(&history, Some(prompt_at(&history, 0)), 5_803, None);
        assert!(
            matches!(error, Err(CompactionError::NothingToSummarize { .. })),
            "{error:?}"
        );
        // Nor a short conversation before it: a summary would be as long.
        let mut short = talk(2, 40);
        short.push(Message::user("next"));
        let at = short.len() - 1;
        assert!(Plan::choose(&short, Some(prompt_at(&short, at)), 5_803, None).is_err());
    }

    #[test]
    fn what_came_before_the_prompt_is_summarized_and_the_turn_kept() {
        let mut history = talk(10, 2_000);
        history.push(Message::user("now fix the bug"));
        let at = history.len() - 1;
        let plan = Plan::choose(&history, Some(prompt_at(&history, at)), 20_000, None).unwrap();
        assert_eq!(plan, Plan::BeforeTurn { start: at });
        assert_eq!(plan.summarized(&history).len(), at);
        // Between turns: everything.
        assert_eq!(
            Plan::choose(&history, None, 20_000, None).unwrap(),
            Plan::Whole
        );
    }

    #[test]
    fn a_long_turn_is_summarized_too_but_its_prompt_is_kept() {
        // The first prompt, then many big rounds in the same turn.
        let mut history = vec![Message::user("refactor everything")];
        history.extend(talk(10, 4_000).into_iter().skip(1));
        let plan = Plan::choose(&history, Some(prompt_at(&history, 0)), 20_000, None).unwrap();
        assert_eq!(plan, Plan::AllButPrompt);
        assert_eq!(plan.summarized(&history).len(), history.len());
    }

    #[test]
    fn the_user_context_block_is_not_kept_twice() {
        let prompt = Message::user(vec![
            ContentBlock::text("<system-reminder>ctx</system-reminder>"),
            ContentBlock::text("Say hello."),
        ]);
        let kept = prompt_blocks(&prompt, Some("<system-reminder>ctx</system-reminder>"));
        assert_eq!(kept, vec![ContentBlock::text("Say hello.")]);
        assert_eq!(prompt_blocks(&prompt, None).len(), 2);
    }
}
