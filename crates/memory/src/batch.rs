//! When extraction is worth a fork. The cursor makes every run cover all messages
//! since the previous one, so the fork need not run after every turn: it runs once `every`
//! *eligible* turns have gathered, and when the host flushes (the session went idle,
//! compaction is about to drop history, `-p` is exiting). Nothing is lost by waiting: a turn
//! that is not eligible is still inside the next run's window.
//!
//! A turn is eligible when it may hold something worth saving: the user wrote more than an
//! acknowledgement ("ok", "thanks", "yes do it") or a plain question ("how do I squash three
//! commits?": general knowledge, nothing about this user or project), or the main agent called
//! tools (and so learned from their results). A turn in which the main agent wrote into the
//! memory directory itself is already handled (seed 001: no fork when the main agent wrote
//! memory). Turns that are not eligible are still in the next run's window: a question that
//! did say something ("why is our Redis only a cache?") is seen when a run happens.

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

/// The longest prompt that can still be a plain question.
pub(crate) const MAX_QUESTION_WORDS: usize = 30;

/// Words that make a question say something: about the user or their project ("why does our
/// build use Bazel?"), or about how to work ("could you always use tabs?").
const TELLING_WORDS: &[&str] = &[
    "we", "we're", "we've", "we'd", "we'll", "our", "ours", "us", "my", "mine", "me", "i'm",
    "i've", "i'd", "i'll", "please", "always", "never", "prefer", "remember", "don't", "stop",
    "instead",
];

/// First words of a question that asks the agent to do something ("can you ...").
const REQUEST_OPENERS: &[&str] = &["can", "could", "would", "will", "won't", "shall"];

/// Whether `text` is one short question asking for general knowledge ("How do I reverse a
/// list in Python?"): nothing in it about this user, their project or how to work. Anything
/// else (a statement before the question, several sentences, "our", "please", "can you ..."),
/// and any language or phrasing not covered here, counts as saying something.
pub(crate) fn is_plain_question(text: &str) -> bool {
    let text = text.trim();
    let Some(body) = text.strip_suffix('?') else {
        return false;
    };
    if body.contains('\n') || body.split_whitespace().count() > MAX_QUESTION_WORDS {
        return false;
    }
    // One sentence: no sentence end ("word. ", "word! ", "word? ", "word; ") before the last `?`.
    let chars: Vec<char> = body.chars().collect();
    let ends_sentence = chars.windows(3).any(|w| {
        w[0].is_alphanumeric() && matches!(w[1], '.' | '!' | '?' | ';') && w[2].is_whitespace()
    });
    if ends_sentence {
        return false;
    }
    let words: Vec<String> = body
        .split_whitespace()
        .map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'')
                .to_lowercase()
                .replace('’', "'")
        })
        .filter(|w| !w.is_empty())
        .collect();
    let Some(first) = words.first() else {
        return false;
    };
    !REQUEST_OPENERS.contains(&first.as_str())
        && !words.iter().any(|w| TELLING_WORDS.contains(&w.as_str()))
}

/// Whether a prompt has something in it worth saving: not an acknowledgement, not a plain
/// question.
pub(crate) fn says_something(text: &str) -> bool {
    !is_acknowledgement(text) && !is_plain_question(text)
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
                .is_some_and(|m| says_something(prompt_text(m)));
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
    fn plain_questions_are_one_general_question() {
        for question in [
            "How do I reverse a list in Python?",
            "What does the Rust ? operator do?",
            "Is Vec::with_capacity worth it for small vectors?",
            "What's the difference between a mutex and a semaphore?",
            "When should I use an index on a boolean column?",
            "what does EXPLAIN ANALYZE show in PostgreSQL?",
        ] {
            assert!(is_plain_question(question), "{question:?}");
            assert!(!says_something(question), "{question:?}");
        }
        for telling in [
            // a statement, then a question
            "We use PostgreSQL 16. What does EXPLAIN ANALYZE show?",
            "I'm the backend lead, what should I review first?",
            // about this user or project
            "Why does our build use Bazel?",
            "How do I deploy my service?",
            // a request about how to work
            "Can you always use tabs from now on?",
            "could you stop adding comments?",
            "Why don't you run the tests first?",
            "Please use snake_case, ok?",
            // not a question, or more than one line or sentence
            "Always use tabs, never spaces, in this repository.",
            "What is this?\nAnd that?",
            "Deploys go out on Tuesdays only",
            "这个函数是做什么的？",
        ] {
            assert!(says_something(telling), "{telling:?}");
        }
        let long = format!("What {}?", "word ".repeat(MAX_QUESTION_WORDS));
        assert!(!is_plain_question(&long));
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
            // 2: an acknowledgement, then a plain question
            user("thanks"),
            reply("You're welcome."),
            user("How do I squash the last three commits?"),
            reply("git rebase -i HEAD~3."),
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
                turns: 5,
                eligible: 2,
                handled: 1
            }
        );
        assert_eq!(assess(&messages[2..6], &memory, &cwd).eligible, 0);
        // a window that starts mid-turn (after compaction) still counts what it holds
        assert_eq!(assess(&messages[7..10], &memory, &cwd).eligible, 1);
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
