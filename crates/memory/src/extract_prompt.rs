//! The extraction fork's prompt (in the spirit of seed 001's `buildExtractAutoOnlyPrompt`):
//! look only at the new messages, read everything in one turn and write everything in the
//! next, save only what a future session needs and cannot get from the code.

use std::path::Path;

use crate::memdir::{INDEX_FILE, MAX_INDEX_LINE_CHARS};

/// Opens (and, as a closing tag, ends) the extraction prompt: mock scenarios and logs
/// recognize an extraction fork's requests by it.
pub const EXTRACTION_MARKER: &str = "<memory-extraction>";

/// What the prompt is built from.
#[derive(Debug, Clone)]
pub(crate) struct ExtractPromptInput<'a> {
    /// The memory directory, absolute.
    pub dir: &'a Path,
    /// How many messages at the end of the conversation are new since the last extraction.
    pub new_messages: usize,
    /// The current memories, one line each ([`crate::Scan::manifest`]); empty when none.
    /// Those the conversation's `MEMORY.md` index already lists are left out of it (they are
    /// in the cached prefix the fork reads; every manifest line is sent uncached).
    pub manifest: &'a str,
    /// How many memories were left out of `manifest` because the index above lists them.
    pub in_context: usize,
    /// The fork's turn limit, as the prompt states it.
    pub max_turns: u32,
    /// Today, `YYYY-MM-DD`, so relative dates become absolute.
    pub today: &'a str,
}

/// The most bytes the prompt may have apart from the memory directory's path and the manifest
/// (checked by a test). Every byte of it is sent uncached on each extraction request (it
/// follows the parent's cached prefix), so it stays short (1.5 KB; the first form was 4.3 KB).
#[cfg(test)]
pub(crate) const EXTRACT_PROMPT_BUDGET: usize = 1600;

/// The user message the extraction fork is given after the parent's conversation.
pub(crate) fn build_extract_prompt(input: &ExtractPromptInput<'_>) -> String {
    let dir = input.dir.display();
    let n = input.new_messages;
    let turns = input.max_turns;
    let today = input.today;
    let manifest = if input.manifest.trim().is_empty() {
        "(none)"
    } else {
        input.manifest
    };
    let current = match input.in_context {
        0 => "Current memories".to_owned(),
        n => format!("Current memories: the {n} in the {INDEX_FILE} index above, and"),
    };
    format!(
        "{EXTRACTION_MARKER}
You are now the background memory agent: nobody reads your reply, only the files you write. \
From the last ~{n} messages above (older ones are done), save what will help future sessions \
with this user on this project.
Memory directory (absolute path; you may write only inside it): {dir}

At most {turns} turns. Work from the conversation only: do not explore code, run commands or \
read non-memory files. Turn 1: Read in parallel every memory file you will change (a file \
must be Read before Write or Edit). Turn 2: every Write/Edit in parallel, then stop. Nothing \
worth saving: call no tool, answer `Nothing to save.` Update a memory rather than add a \
near-duplicate; correct one that a new fact contradicts.

Save, by type: user (role, expertise, preferences); feedback (how to work, with the reason); \
project (stack and versions as stated, decisions and why, constraints, dates, owners); \
reference (where outside things live). Do not save what the code, git history, AGENTS.md or \
CLAUDE.md show, the current task's state, secrets or guesses.

One file per memory, `<type>_<topic>.md` (ASCII letters, digits, `_`, `-`) in that directory:
---
name: <title>
description: <one specific line>
type: <user|feedback|project|reference>
---
<the memory; absolute dates, today is {today}>
plus its line in {INDEX_FILE} there, an index only: `- [Title](file.md) — hook`, under \
{MAX_INDEX_LINE_CHARS} characters, one per file.

{current} (file [type] name: description):
{manifest}
</memory-extraction>"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prompt_stays_within_its_byte_budget() {
        let dir = Path::new("/m");
        let prompt = build_extract_prompt(&ExtractPromptInput {
            dir,
            new_messages: 12,
            manifest: "",
            in_context: 0,
            max_turns: 5,
            today: "2025-01-31",
        });
        let fixed = prompt.len() - "/m".len() - "(none)".len();
        assert!(
            fixed <= EXTRACT_PROMPT_BUDGET,
            "the extraction prompt grew to {fixed} bytes (budget {EXTRACT_PROMPT_BUDGET}): every \
             byte is billed uncached on each extraction request"
        );
        // What the fork needs is still in it.
        for needed in [
            EXTRACTION_MARKER,
            "last ~12 messages",
            "you may write only inside it): /m",
            "Nothing to save.",
            "feedback",
            "reference",
            "description:",
            INDEX_FILE,
            "2025-01-31",
            "(none)",
        ] {
            assert!(prompt.contains(needed), "missing {needed:?}:\n{prompt}");
        }
        let two_new = ExtractPromptInput {
            dir,
            new_messages: 2,
            manifest: "",
            in_context: 0,
            max_turns: 5,
            today: "2025-01-31",
        };
        let with_manifest = build_extract_prompt(&ExtractPromptInput {
            manifest: "- project_stack.md [project] Stack: React 18",
            ..two_new.clone()
        });
        assert!(with_manifest.contains("- project_stack.md [project] Stack: React 18\n</memory"));
        let some_in_context = build_extract_prompt(&ExtractPromptInput {
            in_context: 12,
            ..two_new
        });
        assert!(
            some_in_context.contains(
                "Current memories: the 12 in the MEMORY.md index above, and (file [type] name: \
                 description):\n(none)"
            ),
            "{some_in_context}"
        );
    }
}
