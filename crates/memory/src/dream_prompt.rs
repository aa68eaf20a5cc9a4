//! The dream fork's prompt (seed 003 §十, the four phases). It follows the parent's whole
//! conversation and is the one part of the first request not read from the cache, so every
//! byte is billed uncached: it says where things are and the four phases in a few lines.

use std::fmt::Write as _;
use std::path::Path;

use crate::memdir::{INDEX_FILE, MAX_INDEX_BYTES, MAX_INDEX_LINE_CHARS, MAX_INDEX_LINES};

/// The prompt's first line (the mock's rules and the tests find the dream's requests by it).
pub const DREAM_MARKER: &str = "# Dream: memory consolidation";
/// Session ids named in the prompt; the rest are counted.
pub(crate) const DREAM_PROMPT_SESSIONS: usize = 20;
/// Changed memories named in the prompt; the rest are counted.
const CHANGED_LISTED: usize = 20;
/// What the prompt costs without its lists and paths (a test holds it to this).
#[cfg(test)]
pub(crate) const DREAM_PROMPT_BUDGET: usize = 1_500;

/// What the prompt names.
#[derive(Debug, Clone)]
pub(crate) struct DreamPromptInput<'a> {
    /// The memory directory, absolute.
    pub dir: &'a Path,
    /// The project's transcripts directory (`<id>.jsonl` per session).
    pub transcripts: &'a Path,
    /// The sessions to review, newest first.
    pub sessions: &'a [String],
    /// Memory files changed since the last consolidation, newest first.
    pub changed: &'a [String],
    /// `2025-01-31`, for turning relative dates into absolute ones.
    pub today: &'a str,
    /// The fork's turn limit, as the prompt states it.
    pub max_turns: u32,
}

/// The dream prompt.
pub(crate) fn build_dream_prompt(input: &DreamPromptInput<'_>) -> String {
    let dir = input.dir.display();
    let transcripts = input.transcripts.display();
    let mut p = String::with_capacity(2_048);
    let _ = writeln!(p, "{DREAM_MARKER}\n");
    let _ = writeln!(
        p,
        "Consolidate the auto memory in `{dir}` (you may write only inside it): merge \
         duplicates, fix or delete what is contradicted or stale, keep the index short. Today \
         is {}. At most {} turns; read in parallel, then write in parallel.\n",
        input.today, input.max_turns
    );
    let _ = write!(
        p,
        "Sessions since the last consolidation ({}), transcripts `{transcripts}/<id>.jsonl`: ",
        input.sessions.len()
    );
    push_list(&mut p, input.sessions, DREAM_PROMPT_SESSIONS);
    p.push_str("\nMemories changed since then: ");
    push_list(&mut p, input.changed, CHANGED_LISTED);
    let _ = write!(
        p,
        "\n\n1. Orient: list `{dir}`, read {INDEX_FILE}, skim the topic files.\n\
         2. Gather recent signal: the changed memories first, then narrow Grep searches of \
         those transcripts for what they touch (a pattern, `path` one file, `head_limit`); \
         never Read a whole JSONL file.\n\
         3. Consolidate: merge into the existing topic files instead of adding near-duplicates; \
         write relative dates (\"yesterday\", \"last week\") as absolute ones (YYYY-MM-DD); \
         delete facts that newer ones contradict. To delete a whole memory, Write it with \
         empty content (tine removes emptied files).\n\
         4. Prune and index: rewrite {INDEX_FILE} as one line per memory, `- [Title](file.md) \
         — hook`, each under {MAX_INDEX_LINE_CHARS} characters, no duplicates, no line for a \
         merged or deleted memory, under {MAX_INDEX_LINES} lines and {} KB.\n\n\
         Tools: Read, Grep, Glob, read-only Bash, Write/Edit inside `{dir}`. End with one line \
         saying what you changed.\n",
        MAX_INDEX_BYTES / 1_000
    );
    p
}

fn push_list(p: &mut String, items: &[String], limit: usize) {
    if items.is_empty() {
        p.push_str("none");
        return;
    }
    p.push_str(&items[..items.len().min(limit)].join(", "));
    if items.len() > limit {
        let _ = write!(p, " (+{} more)", items.len() - limit);
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    #[test]
    fn the_prompt_names_everything_and_stays_compact() {
        let dir = PathBuf::from("/home/u/.tine/projects/p/memory");
        let transcripts = PathBuf::from("/home/u/.tine/projects/p");
        let sessions: Vec<String> = (0..25).map(|i| format!("session-{i:02}")).collect();
        let changed = vec!["project_stack.md".to_owned()];
        let prompt = build_dream_prompt(&DreamPromptInput {
            dir: &dir,
            transcripts: &transcripts,
            sessions: &sessions,
            changed: &changed,
            today: "2026-04-21",
            max_turns: 30,
        });
        assert!(prompt.starts_with(DREAM_MARKER), "{prompt}");
        assert!(prompt.contains("`/home/u/.tine/projects/p/memory`"));
        assert!(prompt.contains("`/home/u/.tine/projects/p/<id>.jsonl`"));
        assert!(prompt.contains("session-00, session-01"));
        assert!(prompt.contains("session-19 (+5 more)"));
        assert!(!prompt.contains("session-20"));
        assert!(prompt.contains("project_stack.md"));
        assert!(prompt.contains("2026-04-21"));
        for phase in [
            "1. Orient",
            "2. Gather",
            "3. Consolidate",
            "4. Prune and index",
        ] {
            assert!(prompt.contains(phase), "{phase}");
        }
        assert!(prompt.contains("never Read a whole JSONL file"));
        assert!(prompt.contains("under 150 characters") && prompt.contains("200 lines"));
        let fixed = build_dream_prompt(&DreamPromptInput {
            dir: Path::new("/m"),
            transcripts: Path::new("/t"),
            sessions: &[],
            changed: &[],
            today: "2026-04-21",
            max_turns: 30,
        });
        assert!(
            fixed.len() <= DREAM_PROMPT_BUDGET,
            "{} bytes:\n{fixed}",
            fixed.len()
        );
    }
}
