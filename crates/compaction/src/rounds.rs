//! API rounds, for a summary request that is itself too long: the oldest whole rounds are left
//! out and the request is tried again. A round is an assistant reply with the user message that
//! answers it (its tool results), so a `tool_use` is never separated from its `tool_result`;
//! what comes before the first reply is round 0.

use tine_api_client::{Message, Role};

use crate::estimate::messages_tokens;

/// Put first when the history starts at a reply after rounds were dropped.
pub const TRUNCATED_MARKER: &str =
    "[The oldest part of this conversation was left out because it was too long to summarize.]";

/// Where each round starts: 0, then every assistant message.
fn round_starts(messages: &[Message]) -> Vec<usize> {
    let mut starts = vec![0];
    starts.extend(
        messages
            .iter()
            .enumerate()
            .skip(1)
            .filter(|(_, m)| m.role == Role::Assistant)
            .map(|(i, _)| i),
    );
    starts
}

/// `messages` without their oldest rounds: enough to free `tokens_to_free` (by the estimate)
/// when it is known, else a fifth of them; at least one, never the last. `None` when fewer than
/// two rounds are left. Returns the kept history and how many rounds went.
pub(crate) fn drop_oldest_rounds(
    messages: &[Message],
    tokens_to_free: Option<u64>,
) -> Option<(Vec<Message>, usize)> {
    let starts = round_starts(messages);
    if starts.len() < 2 {
        return None;
    }
    let droppable = starts.len() - 1;
    let count = match tokens_to_free {
        Some(goal) => {
            // A little more than the gap: the estimate is not the tokenizer.
            let goal = goal + goal / 10 + 1;
            let mut freed = 0;
            let mut count = 0;
            while count < droppable && freed < goal {
                let (from, to) = (starts[count], starts[count + 1]);
                freed += messages_tokens(&messages[from..to], None);
                count += 1;
            }
            count
        }
        None => (starts.len() / 5).clamp(1, droppable),
    };
    let cut = starts[count];
    let mut kept = Vec::with_capacity(messages.len() - cut + 1);
    if messages[cut].role == Role::Assistant {
        kept.push(Message::user(TRUNCATED_MARKER));
    }
    kept.extend_from_slice(&messages[cut..]);
    Some((kept, count))
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use tine_api_client::ContentBlock;
    use tine_query_loop::is_well_paired;

    use super::*;

    fn session(rounds: usize) -> Vec<Message> {
        let mut m = vec![Message::user("start")];
        for i in 0..rounds {
            m.push(Message::assistant(vec![ContentBlock::ToolUse(
                tine_api_client::ToolUseBlock {
                    id: format!("t{i}"),
                    name: "Read".into(),
                    input: json!({"file_path": format!("/f{i}")}),
                    cache_control: None,
                },
            )]));
            m.push(Message::user(vec![ContentBlock::tool_result(
                format!("t{i}"),
                "x".repeat(400),
                false,
            )]));
        }
        m
    }

    #[test]
    fn dropping_keeps_every_tool_use_with_its_result() {
        let history = session(10);
        let (kept, n) = drop_oldest_rounds(&history, None).unwrap();
        assert_eq!(n, 2);
        assert!(is_well_paired(&kept));
        assert_eq!(kept[0], Message::user(TRUNCATED_MARKER));
        // round 0 (the first prompt) and round 1 (a call and its result)
        assert_eq!(kept.len(), 1 + history.len() - 3);
    }

    #[test]
    fn a_known_gap_drops_enough_rounds_to_cover_it() {
        let history = session(10);
        let per_round = messages_tokens(&history[1..3], None);
        let (kept, n) = drop_oldest_rounds(&history, Some(per_round * 3)).unwrap();
        assert!((3..=5).contains(&n), "{n}");
        assert!(is_well_paired(&kept));
        // never everything
        let (kept, n) = drop_oldest_rounds(&history, Some(u64::MAX / 4)).unwrap();
        assert_eq!(n, 10);
        assert!(kept.len() >= 3);
        assert!(drop_oldest_rounds(&[Message::user("only")], None).is_none());
    }
}
