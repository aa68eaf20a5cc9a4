//! Who is told about the files Read shows (seed 001 §16.2.4 ③: Magic Docs registers a
//! listener on the file-read tool). One listener on the context, by type, so Read knows nothing
//! of what listens.

use std::fmt;
use std::path::Path;
use std::sync::Arc;

use crate::extensions::ContextExtension;

/// Lines from the top of a file handed to the listener: enough for a header and the line
/// after it (Magic Docs' title and instruction), never the whole file.
pub const HEAD_LINES: usize = 4;

/// Called after each successful Read that showed the file from its first line, with the
/// resolved path and up to [`HEAD_LINES`] of its first lines (joined by `\n`). Runs on the
/// tool's task: it must be quick and never block.
pub type OnFileRead = Arc<dyn Fn(&Path, &str) + Send + Sync>;

/// The listener Read finds on its context (`ctx.with_ext(FileReadListener(..))`). A fork has
/// none: what a background fork reads is not the person's session reading it.
#[derive(Clone)]
pub struct FileReadListener(pub OnFileRead);

impl ContextExtension for FileReadListener {
    fn fork(&self) -> Option<Self> {
        None
    }
}

impl fmt::Debug for FileReadListener {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("FileReadListener")
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::path::PathBuf;
    use std::sync::Mutex;

    use serde_json::json;

    use super::*;
    use crate::{ReadTool, Tool, ToolContext};

    #[tokio::test]
    async fn read_tells_its_listener_the_path_and_the_first_lines_only_from_line_one() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("doc.md");
        std::fs::write(&file, "# MAGIC DOC: T\n_keep it true_\na\nb\nc\nd\n").unwrap();
        let seen: Arc<Mutex<Vec<(PathBuf, String)>>> = Arc::default();
        let sink = Arc::clone(&seen);
        let ctx = ToolContext::new(dir.path()).with_ext(FileReadListener(Arc::new(
            move |path: &Path, head: &str| {
                sink.lock()
                    .unwrap()
                    .push((path.to_path_buf(), head.to_owned()));
            },
        )));
        ReadTool
            .call(json!({"file_path": "doc.md"}), &ctx)
            .await
            .unwrap();
        ReadTool
            .call(json!({"file_path": "doc.md", "offset": 3}), &ctx)
            .await
            .unwrap();
        // A fork's context has no listener.
        ReadTool
            .call(json!({"file_path": "doc.md"}), &ctx.fork())
            .await
            .unwrap();
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 1, "{seen:?}");
        assert_eq!(seen[0].0, file);
        assert_eq!(seen[0].1, "# MAGIC DOC: T\n_keep it true_\na\nb");
    }
}
