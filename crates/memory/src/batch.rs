//! When extraction is worth a fork. The cursor makes every run cover all messages
//! since the previous one, so the fork need not run after every turn: it runs once `every`
//! *eligible* turns have gathered, and when the host flushes (the session went idle,
//! compaction is about to drop history, `-p` is exiting). Nothing is lost by waiting: a turn
//! that is not eligible is still inside the next run's window.
//!
//! A turn is eligible when it may hold something to learn: the user wrote more than an
//! acknowledgement ("ok", "thanks", "yes do it"), or the main agent called tools (and so
//! learned from their results). A turn in which the main agent wrote into the memory directory
//! itself is already handled (seed 001: no fork when the main agent wrote memory).

use std::path::Path;

use serde_json::Value;
use tine_api_client::{ContentBlock, Message, MessageContent, Role};
use tine_query_loop::prompt_text;

use crate::sandbox::MemoryWrites;

/// Words that make up an acknowledgement. A prompt of at most [`MAX_ACK_WORDS`] words, all of
/// them in this list (after lower-casing and trimming punctuation), teaches nothing. Anything
/// else counts, so a language or phrasing not listed here errs on the side of extracting.
const ACK_WORDS: &[&str] = &[
    "ok",
    "okay",
    "k",
    "kk",
    "yes",
    "y",
    "yep",
    "yeah",
    "yup",
    "no",
    "n",
    "nope",
    "sure",
    "thanks",
    "thank",
    "you",
    "thx",
    "ty",
    "cheers",
    "cool",
    "great",
    "nice",
    "good",
    "fine",
    "perfect",
    "awesome",
    "excellent",
    "lgtm",
    "done",
    "agreed",
    "right",
    "alright",
    "correct",
    "exactly",
    "got",
    "it",
    "that",
    "this",
    "do",
    "go",
    "ahead",
    "please",
    "pls",
    "continue",
    "next",
    "proceed",
    "again",
    "retry",
    "try",
    "now",
    "then",
    "and",
    "so",
    "sounds",
    "looks",
    "makes",
    "sense",
    "works",
    "hi",
    "hello",
    "hey",
    "oh",
    "ah",
    "hmm",
    "wow",
    "well",
    "much",
    "very",
    "a",
    "lot",
    "好",
    "好的",
    "谢谢",
    "行",
    "可以",
    "嗯",
    "是",
    "对",
];

/// The longest prompt that can still be an acknowledgement ("ok thanks, that looks good").
pub(crate) const MAX_ACK_WORDS: usize = 6;

/// Whether `text` is only an acknowledgement (or empty): nothing in it to remember.
pub(crate) fn is_acknowledgement(text: &str) -> bool {
    let mut words = 0;
    for raw in text.split_whitespace() {
        let word = raw
            .trim_matches(|c: char| !c.is_alphanumeric())
            .to_lowercase();
        if word.is_empty() {
            continue;
        }
        words += 1;
        if words > MAX_ACK_WORDS || !ACK_WORDS.contains(&word.as_str()) {
            return false;
        }
    }
    true
}

/// What the messages since the cursor hold, turn by turn.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Batch {
    /// Turns (a user prompt and what followed it).
    pub turns: usize,
    /// Turns with something to learn.
    pub eligible: usize,
    /// Turns in which the main agent wrote memory itself (never eligible).
    pub handled: usize,
}

/// Whether a user message is a prompt (not tool results going back to the model).
fn is_prompt(message: &Message) -> bool {
    message.role == Role::User && !has_tool_results(message)
}

fn has_tool_results(message: &Message) -> bool {
    match &message.content {
        MessageContent::Blocks(blocks) => blocks
            .iter()
            .any(|b| matches!(b, ContentBlock::ToolResult(_))),
        MessageContent::Text(_) => false,
    }
}

/// Splits `messages` into turns and sorts them. Messages before the first prompt (a window
/// starting mid-turn, after compaction) form a turn of their own.
pub(crate) fn assess(messages: &[Message], memory: &MemoryWrites, cwd: &Path) -> Batch {
    let mut batch = Batch::default();
    let mut start = 0;
    while start < messages.len() {
        let end = messages[start + 1..]
            .iter()
            .position(is_prompt)
            .map_or(messages.len(), |i| start + 1 + i);
        let turn = &messages[start..end];
        batch.turns += 1;
        if main_agent_wrote_memory(turn, memory, cwd) {
            batch.handled += 1;
        } else {
            // The user's own words are the prompt's last text block (the user context and
            // recalled memories come before it).
            let said_something = turn
                .first()
                .filter(|m| is_prompt(m))
                .is_some_and(|m| !is_acknowledgement(prompt_text(m)));
            let used_tools = turn.iter().any(has_tool_results);
            if said_something || used_tools {
                batch.eligible += 1;
            }
        }
        start = end;
    }
    batch
}

/// Whether an assistant message among `messages` called Write or Edit on a file inside the
/// memory directory.
pub(crate) fn main_agent_wrote_memory(
    messages: &[Message],
    memory: &MemoryWrites,
    cwd: &Path,
) -> bool {
    messages
        .iter()
        .filter(|m| m.role == Role::Assistant)
        .filter_map(|m| match &m.content {
            MessageContent::Blocks(blocks) => Some(blocks),
            MessageContent::Text(_) => None,
        })
        .flatten()
        .any(|block| match block {
            ContentBlock::ToolUse(call) if matches!(call.name.as_str(), "Write" | "Edit") => call
                .input
                .get("file_path")
                .and_then(Value::as_str)
                .is_some_and(|p| memory.is_inside(p, cwd)),
            _ => false,
        })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::memdir::{DirSource, MemoryDir};

    #[test]
    fn acknowledgements_are_short_and_only_acknowledgements() {
        for ack in [
            "ok",
            "OK.",
            "thanks!",
            "yes do it",
            "ok, thanks — looks good",
            "continue",
            "👍",
            "",
            "好的",
        ] {
            assert!(is_acknowledgement(ack), "{ack:?}");
        }
        for fact in [
            "we use Postgres",
            "no, use tabs",
            "this project uses React 18 and PostgreSQL",
            "I am the on-call engineer this week",
            "what time is it",
            "我们项目用 React 18",
            "ok ok ok ok ok ok ok", // seven words: not an acknowledgement any more
        ] {
            assert!(!is_acknowledgement(fact), "{fact:?}");
        }
    }

    #[test]
    fn turns_are_sorted_into_eligible_trivial_and_handled() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = MemoryDir::new(tmp.path().join("memory"), DirSource::Default);
        let memory = MemoryWrites::new(dir.path()).unwrap();
        let mem = memory.dir().display().to_string();
        let cwd = tmp.path().to_path_buf();
        let user = |t: &str| Message::user(vec![ContentBlock::text(t)]);
        let reply = |t: &str| Message::assistant(vec![ContentBlock::text(t)]);
        let call = |name: &str, path: String| {
            Message::assistant(vec![ContentBlock::tool_use(
                "t1",
                name,
                json!({"file_path": path, "content": "x"}),
            )])
        };
        let result = Message::user(vec![ContentBlock::tool_result("t1", "done", false)]);
        let messages = vec![
            // 1: a fact, with the user context and a recalled memory before it
            Message::user(vec![
                ContentBlock::text("<system-reminder>context</system-reminder>"),
                ContentBlock::text("we deploy on Fridays"),
            ]),
            reply("Noted."),
            // 2: an acknowledgement
            user("thanks"),
            reply("You're welcome."),
            // 3: an acknowledgement, but the agent learned from a tool
            user("yes do it"),
            call("Read", "/src/main.rs".into()),
            result.clone(),
            reply("Done."),
            // 4: the main agent saved memory itself
            user("remember that I prefer tabs"),
            call("Write", format!("{mem}/feedback_tabs.md")),
            result,
            reply("Saved."),
        ];
        assert_eq!(
            assess(&messages, &memory, &cwd),
            Batch {
                turns: 4,
                eligible: 2,
                handled: 1
            }
        );
        assert_eq!(assess(&messages[2..4], &memory, &cwd).eligible, 0);
        // a window that starts mid-turn (after compaction) still counts what it holds
        assert_eq!(assess(&messages[5..8], &memory, &cwd).eligible, 1);
        assert_eq!(assess(&[], &memory, &cwd), Batch::default());
    }

    #[test]
    fn main_agent_memory_writes_are_noticed() {
        let tmp = tempfile::tempdir().unwrap();
        let memory = MemoryWrites::new(&tmp.path().join("memory")).unwrap();
        let dir = memory.dir().to_path_buf();
        let cwd = dir.parent().unwrap().to_path_buf();
        let call = |name: &str, path: String| {
            Message::assistant(vec![ContentBlock::tool_use(
                "t1",
                name,
                json!({"file_path": path, "content": "x"}),
            )])
        };
        let inside = format!("{}/user_role.md", dir.display());
        assert!(main_agent_wrote_memory(
            &[call("Write", inside.clone())],
            &memory,
            &cwd
        ));
        assert!(main_agent_wrote_memory(
            &[call("Edit", "memory/MEMORY.md".into())],
            &memory,
            &cwd
        ));
        assert!(!main_agent_wrote_memory(
            &[call("Write", format!("{}/src/main.rs", cwd.display()))],
            &memory,
            &cwd
        ));
        assert!(!main_agent_wrote_memory(
            &[call("Read", inside.clone())],
            &memory,
            &cwd
        ));
        // a user message quoting a tool call is not the main agent writing
        let quoted = Message::user(vec![ContentBlock::text(inside)]);
        assert!(!main_agent_wrote_memory(&[quoted], &memory, &cwd));
    }
}
