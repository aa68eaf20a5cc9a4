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
pub struct ExtractPromptInput<'a> {
    /// The memory directory, absolute.
    pub dir: &'a Path,
    /// How many messages at the end of the conversation are new since the last extraction.
    pub new_messages: usize,
    /// The current memories, one line each ([`crate::Scan::manifest`]); empty when none.
    pub manifest: &'a str,
    pub max_turns: u32,
    /// Today, `YYYY-MM-DD`, so relative dates become absolute.
    pub today: &'a str,
}

/// The user message the extraction fork is given after the parent's conversation.
pub fn build_extract_prompt(input: &ExtractPromptInput<'_>) -> String {
    let dir = input.dir.display();
    let n = input.new_messages;
    let turns = input.max_turns;
    let today = input.today;
    let manifest = if input.manifest.trim().is_empty() {
        "(none yet: the directory holds no memories)".to_owned()
    } else {
        input.manifest.to_owned()
    };
    format!(
        "{EXTRACTION_MARKER}
You are now the memory extraction agent, running in the background while the user carries on. \
Look at the last ~{n} messages of the conversation above (the ones since the previous \
extraction; older messages were already handled) and save to persistent memory what will still \
help in future conversations with this user about this project. Nobody reads your reply: only \
the files you write matter.

Memory directory (absolute path; you may write only inside it): {dir}
Index: {dir}/{INDEX_FILE}

## How to work (at most {turns} turns)
- Work only from the conversation above. Do not explore or verify the source code, run builds \
or tests, or read files unrelated to memory.
- Turn 1: issue ALL the Read calls you need at once, in parallel: every existing memory file you \
may update, and {INDEX_FILE} if it exists and you will add or change a line.
- Turn 2: issue ALL the Write and Edit calls at once, in parallel. Then end with a one-line \
summary and no tool call.
- A file that exists must be Read before you Write or Edit it.
- If nothing is worth saving, call no tool at all and answer `Nothing to save.`
- Prefer updating an existing memory to creating a near-duplicate. When a new fact contradicts a \
memory, correct the memory.

## The four types of memory
- user: who the user is: role, expertise, responsibilities, how they like to work.
- feedback: guidance the user gave about how you should work (corrections, \"always\", \"never\"), \
with the reason when they gave one.
- project: facts about the project that the code does not show: the stack and versions as the \
user stated them, decisions and why, constraints, deadlines, who owns what.
- reference: where things live outside the repository: dashboards, issue trackers, documents, \
channels.

## What NOT to save
- Code structure, file layout, APIs or conventions that can be read from the code itself.
- Git history or recent changes: `git log` is the source of truth.
- Anything already in AGENTS.md or CLAUDE.md: those are loaded in every session anyway.
- The state of the current task: what is being done right now, plans, todos, debugging steps, \
anything that will be stale tomorrow.
- Secrets (keys, passwords, tokens) and guesses: save what the user said or what was confirmed.

## How to save a memory
A memory is two things:
1. A topic file `{dir}/<type>_<topic>.md` (ASCII letters, digits, `_`, `-`), for example \
`{dir}/project_stack.md`:

   ---
   name: <short title>
   description: <one line saying what the memory holds, specific enough to judge relevance>
   type: <user | feedback | project | reference>
   ---

   <the memory itself; for feedback, the reason too. Write dates as absolute dates (today is {today}).>

2. One line for it in `{dir}/{INDEX_FILE}`: `- [Title](file.md) — one-line hook`, under \
{MAX_INDEX_LINE_CHARS} characters. {INDEX_FILE} is only an index: never put memory content in it, \
keep exactly one line per topic file, and update the line when you change the file.

## Current memories (file, [type], name: description)
{manifest}
</memory-extraction>"
    )
}
