//! The words of compaction: the summary instruction the fork gets as its last user message,
//! the reading of its reply (the `<analysis>` scratchpad is stripped), and the message that
//! opens the new history.

use tine_query_loop::CompactTrigger;

/// The start of every summary instruction (tests and scenarios match on it).
pub const SUMMARY_INSTRUCTION_MARKER: &str =
    "Your task is to write a detailed summary of the conversation so far";

/// The start of the message that replaces the summarized history.
pub const CONTINUATION_PREFIX: &str =
    "This session is being continued from an earlier conversation that ran out of context.";

const INSTRUCTION: &str = "\
Your task is to write a detailed summary of the conversation so far, paying close attention to \
the user's explicit requests and to what you did in answer. The summary replaces the \
conversation: whoever continues the work will have only it, so it must hold every technical \
detail, code pattern and decision needed to go on without losing context.

Do not call any tools. Answer with text only.

First think in <analysis> tags: go through the conversation in order and, for each part, note \
the user's requests and intent, your approach, the key decisions, the files, code and function \
signatures involved, the errors met and how they were fixed, and any feedback the user gave, \
especially where they asked you to do something differently. Check that nothing technical is \
missing. The analysis is a scratchpad: it is thrown away.

Then write the summary in <summary> tags, with these sections:

1. Primary request and intent: everything the user asked for, in detail.
2. Key technical concepts: the technologies, frameworks and ideas that came up.
3. Files and code sections: each file read, changed or created, why it matters, and the \
important snippets in full (with a line on what each change did).
4. Errors and fixes: every error met, how it was fixed, and what the user said about it.
5. Problem solving: the problems solved and the troubleshooting still going on.
6. All user messages: every message the user wrote (not tool results), so their feedback and \
changes of mind are not lost.
7. Pending tasks: what you were asked to do and have not done yet.
8. Current work: precisely what was being worked on just before this summary, with file names \
and code.
9. Optional next step: the next step, only if it follows directly from the user's latest \
request and the current work. Quote the latest messages verbatim (the user's and yours) to \
show exactly where the work stopped, so the task is not reinterpreted.";

/// The summary instruction, with what the user (`/compact FOCUS`) and PreCompact hooks asked to
/// keep.
pub(crate) fn summary_instruction(focus: Option<&str>) -> String {
    match focus.map(str::trim).filter(|f| !f.is_empty()) {
        None => INSTRUCTION.to_owned(),
        Some(focus) => format!(
            "{INSTRUCTION}\n\nAdditional instructions for this summary (follow them in what you \
             keep and how much detail you give):\n{focus}"
        ),
    }
}

/// The summary in the fork's reply: the `<analysis>` part removed, the `<summary>` tags'
/// content if they are there, else the rest. `None` when nothing is left.
pub fn format_summary(reply: &str) -> Option<String> {
    let mut text = reply.to_owned();
    while let Some(start) = text.find("<analysis>") {
        match text[start..].find("</analysis>") {
            Some(end) => text.replace_range(start..start + end + "</analysis>".len(), ""),
            None => {
                // An unclosed scratchpad runs up to the summary, or to the end.
                let end = text[start..]
                    .find("<summary>")
                    .map_or(text.len(), |s| start + s);
                text.replace_range(start..end, "");
            }
        }
    }
    if let Some(start) = text.find("<summary>") {
        let inner = &text[start + "<summary>".len()..];
        let inner = inner.find("</summary>").map_or(inner, |end| &inner[..end]);
        text = inner.to_owned();
    }
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

/// What follows the summary in the new history's first message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Follows {
    /// Nothing: the summary is the whole history (`/compact` between turns).
    Nothing,
    /// The current turn, as it was: its prompt, then its rounds so far.
    Turn,
    /// The current prompt alone; the summary covers the turn's work so far.
    Prompt,
}

/// The first text of the new history: the summary, where the full transcript is, and, after an
/// automatic compaction in the middle of a task, the word to go on with it; what follows it.
pub(crate) fn continuation_message(
    summary: &str,
    transcript: &str,
    trigger: CompactTrigger,
    follows: Follows,
) -> String {
    let mut text = format!(
        "{CONTINUATION_PREFIX} The summary below covers the earlier part of the conversation.\n\n\
         {summary}\n\nIf you need details from before this summary (exact code, error \
         messages, what was said), the full transcript is at {transcript}."
    );
    match (follows, trigger) {
        (Follows::Turn, _) => text.push_str(
            "\n\nThe user's latest message follows, as they wrote it, with what was done for it \
             so far.",
        ),
        (Follows::Prompt, _) => text.push_str(
            "\n\nThe user's latest message follows, as they wrote it; the summary's current work \
             says how far it got. Go on from there without asking the user any further \
             questions.",
        ),
        (Follows::Nothing, CompactTrigger::Auto | CompactTrigger::Reactive) => text.push_str(
            "\n\nContinue the conversation from where it left off without asking the user any \
             further questions: go on with the last task you were asked to do.",
        ),
        (Follows::Nothing, CompactTrigger::Manual) => {}
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_instruction_names_the_nine_sections_and_the_focus() {
        let text = summary_instruction(Some("keep the API design"));
        assert!(text.starts_with(SUMMARY_INSTRUCTION_MARKER));
        for n in 1..=9 {
            assert!(text.contains(&format!("\n{n}. ")), "section {n}");
        }
        assert!(text.contains("<analysis>") && text.contains("<summary>"));
        assert!(text.ends_with("keep the API design"));
        assert_eq!(summary_instruction(Some("  ")), summary_instruction(None));
    }

    #[test]
    fn the_analysis_is_stripped() {
        let reply =
            "<analysis>thinking about it</analysis>\n<summary>\n1. The user wants X.\n</summary>";
        assert_eq!(format_summary(reply).unwrap(), "1. The user wants X.");
        assert_eq!(
            format_summary("<analysis>unclosed <summary>kept</summary>").unwrap(),
            "kept"
        );
        assert_eq!(format_summary("plain summary").unwrap(), "plain summary");
        assert_eq!(format_summary("<analysis>only</analysis>  "), None);
    }

    #[test]
    fn only_automatic_compaction_says_to_go_on() {
        let auto = continuation_message("S", "/t.jsonl", CompactTrigger::Auto, Follows::Nothing);
        assert!(auto.starts_with(CONTINUATION_PREFIX));
        assert!(auto.contains("without asking"));
        assert!(auto.contains("/t.jsonl"));
        let manual =
            continuation_message("S", "/t.jsonl", CompactTrigger::Manual, Follows::Nothing);
        assert!(!manual.contains("without asking"));
        // The kept prompt is announced, not paraphrased.
        let turn = continuation_message("S", "/t.jsonl", CompactTrigger::Auto, Follows::Turn);
        assert!(turn.contains("latest message follows") && !turn.contains("last task"));
    }
}
