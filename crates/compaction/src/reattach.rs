//! What the new history gets back after the summary (seed 003 §九's post-compact context): the
//! files read most recently, still on disk, as they are now; the todo list; the background
//! shells still running. The model keeps working on them without reading everything again.
//!
//! A file comes back whole when it fits [`MAX_FILE_TOKENS`]. One that does not comes back as a
//! one-line reference (as Claude Code's `compact_file_reference`): a head cut from it would be
//! a part the model might take for the whole, and the summary keeps what mattered in it. The
//! last file read is the exception: the work was on it, so it always comes back with content,
//! cut to the limit when it must be.

use std::path::{Path, PathBuf};

use tine_tools::hash_content;
use tine_tools::{BackgroundTasks, TaskStatus, TodoList, TodoStatus, ToolContext};

use crate::estimate::{BYTES_PER_TOKEN, tokens_for_bytes};

/// Files re-attached (or referenced) at most.
pub(crate) const MAX_FILES: usize = 5;
/// Tokens of one file at most (a bigger one is referenced; the last one read is cut).
pub(crate) const MAX_FILE_TOKENS: u64 = 5_000;
/// Tokens of all the files together at most.
pub(crate) const MAX_TOTAL_FILE_TOKENS: u64 = 50_000;
/// Room kept for the todo list, the shells and the files' headers when the files' budget is
/// what a summary freed (a compaction never makes the context bigger).
pub(crate) const BLOCKS_MARGIN_TOKENS: u64 = 300;
/// Below this budget (tokens) a file is not worth its header.
const MIN_FILE_TOKENS: u64 = 200;

/// The context blocks to put after the summary, and which files they hold.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Reattached {
    /// The blocks, in order (files, todo list, running shells).
    pub blocks: Vec<String>,
    /// Files whose content came back.
    pub files: Vec<String>,
    /// Files too big to come back, named by a reference instead.
    pub referenced: Vec<String>,
}

/// Gathers the re-attached context from the session's tool context. Files come from its
/// file-state cache, most recently used first (so the last file read is always among them when
/// it still exists), within `max_tokens` in all (what the summary freed); those whose content
/// comes back are recorded as read again, since the model now sees them.
pub(crate) async fn reattach(tool_context: &ToolContext, max_tokens: u64) -> Reattached {
    let mut out = Reattached::default();
    let candidates = tool_context.file_state().paths();
    let max_total = MAX_TOTAL_FILE_TOKENS.min(max_tokens);
    let mut total = 0;
    for path in candidates {
        if out.files.len() + out.referenced.len() >= MAX_FILES
            || total + MIN_FILE_TOKENS > max_total
        {
            break;
        }
        let budget = MAX_FILE_TOKENS.min(max_total - total);
        // The first file still on disk is the last one read.
        let last_read = out.files.is_empty() && out.referenced.is_empty();
        let Some(file) = read_file(path.clone(), budget, last_read).await else {
            continue;
        };
        match file {
            ReadBack::Whole { text, hash, mtime } => {
                total += tokens_for_bytes(text.len());
                tool_context.file_state().record_hash(&path, hash, mtime);
                out.files.push(path.display().to_string());
                out.blocks.push(text);
            }
            ReadBack::Reference { text } => {
                out.referenced.push(path.display().to_string());
                out.blocks.push(text);
            }
        }
    }
    if let Some(todos) = todo_block(tool_context) {
        out.blocks.push(todos);
    }
    if let Some(tasks) = tasks_block(tool_context) {
        out.blocks.push(tasks);
    }
    out
}

enum ReadBack {
    /// The file's text (cut to the budget only for the last file read).
    Whole {
        text: String,
        hash: [u8; 32],
        mtime: Option<std::time::SystemTime>,
    },
    /// Too big: where it is, and that it was read.
    Reference { text: String },
}

/// A regular text file, numbered as the Read tool numbers lines, if it fits `budget` tokens;
/// else a reference to it, or (`cut`) its first lines up to the budget.
async fn read_file(path: PathBuf, budget: u64, cut: bool) -> Option<ReadBack> {
    tokio::task::spawn_blocking(move || read_file_blocking(&path, budget, cut))
        .await
        .ok()
        .flatten()
}

fn read_file_blocking(path: &Path, budget: u64, cut: bool) -> Option<ReadBack> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() {
        return None;
    }
    let bytes = std::fs::read(path).ok()?;
    if bytes.contains(&0) {
        return None; // binary: nothing to show as text
    }
    let content = String::from_utf8_lossy(&bytes);
    let limit = usize::try_from(budget * BYTES_PER_TOKEN).unwrap_or(usize::MAX);
    let header = format!(
        "Note: {} was read before the conversation was compacted. Its current contents, \
         numbered as the Read tool numbers lines:\n",
        path.display()
    );
    let mut text = header;
    let lines: Vec<&str> = content.lines().collect();
    let mut shown = 0;
    for (i, line) in lines.iter().enumerate() {
        let numbered = format!("{}\t{line}\n", i + 1);
        if text.len() + numbered.len() > limit {
            break;
        }
        text.push_str(&numbered);
        shown += 1;
    }
    if shown < lines.len() {
        if !cut {
            return Some(ReadBack::Reference {
                text: format!(
                    "Note: {} was read before the conversation was compacted; at {} lines \
                     (about {} tokens) it is too large to attach here. Read it again (offset \
                     and limit for the part you need) before relying on its contents.\n",
                    path.display(),
                    lines.len(),
                    tokens_for_bytes(bytes.len())
                ),
            });
        }
        text.push_str(&format!(
            "[Cut here: lines 1-{shown} of {} are shown; read the file for the rest.]\n",
            lines.len()
        ));
    }
    Some(ReadBack::Whole {
        text,
        hash: hash_content(&bytes),
        mtime: meta.modified().ok(),
    })
}

fn todo_block(tool_context: &ToolContext) -> Option<String> {
    let items = tool_context.ext::<TodoList>()?.items();
    if items.is_empty() {
        return None;
    }
    let mut text =
        String::from("The todo list at the time of compaction (keep it current with TodoWrite):\n");
    for item in items {
        let status = match item.status {
            TodoStatus::Pending => "pending",
            TodoStatus::InProgress => "in progress",
            TodoStatus::Completed => "completed",
        };
        text.push_str(&format!("- [{status}] {}\n", item.content));
    }
    Some(text)
}

fn tasks_block(tool_context: &ToolContext) -> Option<String> {
    let running: Vec<(String, String)> = tool_context
        .ext::<BackgroundTasks>()?
        .list()
        .into_iter()
        .filter(|(_, _, status)| *status == TaskStatus::Running)
        .map(|(id, command, _)| (id, command))
        .collect();
    if running.is_empty() {
        return None;
    }
    let mut text = String::from(
        "Background shells still running (read their output with BashOutput, stop them with \
         KillShell):\n",
    );
    for (id, command) in running {
        text.push_str(&format!("- {id}: {command}\n"));
    }
    Some(text)
}

#[cfg(test)]
mod tests {
    use tine_tools::TodoItem;

    use super::*;

    #[tokio::test]
    async fn recent_files_come_back_numbered_and_capped() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = ToolContext::new(dir.path());
        for i in 0..7 {
            let path = dir.path().join(format!("f{i}.txt"));
            std::fs::write(&path, format!("file {i}\nsecond line\n")).unwrap();
            ctx.file_state().record(&path, b"old", None);
        }
        let big = dir.path().join("big.txt");
        std::fs::write(&big, "a line of text\n".repeat(10_000)).unwrap();
        ctx.file_state().record(&big, b"old", None);
        let gone = dir.path().join("gone.txt");
        ctx.file_state().record(&gone, b"x", None);

        let out = reattach(&ctx, u64::MAX).await;
        assert_eq!(out.files.len(), MAX_FILES);
        // the last one read (gone) is not on disk; the one before it (big) leads, cut
        assert_eq!(out.files[0], big.display().to_string());
        assert!(out.blocks[0].contains("1\ta line of text\n"));
        assert!(out.blocks[0].contains("[Cut here: lines 1-"));
        assert!(tokens_for_bytes(out.blocks[0].len()) <= MAX_FILE_TOKENS + 50);
        assert!(out.blocks[1].contains("1\tfile 6\n2\tsecond line\n"));
        // recorded as read: the model may edit what it was shown
        let fresh = std::fs::read(dir.path().join("f6.txt")).unwrap();
        assert!(
            ctx.file_state()
                .check_fresh(&dir.path().join("f6.txt"), &fresh, None)
                .is_ok()
        );
    }

    #[tokio::test]
    async fn an_older_file_too_big_is_referenced_not_cut() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = ToolContext::new(dir.path());
        let older = dir.path().join("older.txt");
        std::fs::write(&older, "an older big file\n".repeat(5_000)).unwrap();
        ctx.file_state().record(&older, b"old", None);
        let small = dir.path().join("small.txt");
        std::fs::write(&small, "small\n").unwrap();
        ctx.file_state().record(&small, b"old", None);
        let last = dir.path().join("last.txt");
        std::fs::write(&last, "the last big file\n".repeat(5_000)).unwrap();
        ctx.file_state().record(&last, b"old", None);

        let out = reattach(&ctx, u64::MAX).await;
        let name = |p: &Path| p.display().to_string();
        assert_eq!(out.files, [name(&last), name(&small)]);
        assert_eq!(out.referenced, [name(&older)]);
        assert!(out.blocks[0].contains("1\tthe last big file\n"));
        assert!(out.blocks[0].contains("[Cut here: lines 1-"));
        let reference = &out.blocks[2];
        assert!(
            reference.contains(&name(&older))
                && reference.contains("5000 lines")
                && reference.contains("too large to attach"),
            "{reference}"
        );
        assert!(!reference.contains("an older big file"));
        assert!(tokens_for_bytes(reference.len()) < 100);
        // Not shown, so not recorded as read again: its old record stands.
        let now = std::fs::read(&older).unwrap();
        assert!(ctx.file_state().check_fresh(&older, &now, None).is_err());
    }

    #[tokio::test]
    async fn todos_come_back() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = ToolContext::new(dir.path());
        assert_eq!(reattach(&ctx, u64::MAX).await, Reattached::default());
        ctx.ext_or_default::<TodoList>().replace(vec![TodoItem {
            content: "Run the tests".into(),
            status: TodoStatus::InProgress,
            active_form: "Running the tests".into(),
        }]);
        let out = reattach(&ctx, u64::MAX).await;
        assert_eq!(out.blocks.len(), 1);
        assert!(out.blocks[0].contains("- [in progress] Run the tests"));
    }
}
