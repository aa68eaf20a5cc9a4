//! The files as the editor a front end speaks for has them (ACP's `fs/read_text_file` and
//! `fs/write_text_file`). With [`EditorFs`] on the context, Read, Write and Edit read the
//! editor's text (an unsaved buffer included) and write through it, so the editor applies and
//! tracks the change; without one they use the disk. Images, PDFs and notebooks always come
//! from the disk.
//!
//! What a missing file is stays the disk's word: an editor that cannot read a file that
//! exists is bypassed (the disk is read, with a warning), and a file missing on disk that the
//! editor shows as empty is missing (editors open an unknown path as an empty buffer).

use std::fmt;
use std::path::Path;
use std::sync::Arc;

use crate::context::ToolContext;
use crate::extensions::ContextExtension;

/// Boxed future of the editor's file methods.
pub type EditorFuture<'a, T> =
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<T, String>> + Send + 'a>>;

/// The files as the editor a front end speaks for has them (ACP's `fs/read_text_file`,
/// `fs/write_text_file`): Read, Write and Edit go through it when the tool context holds one.
pub trait EditorFiles: Send + Sync + 'static {
    /// The whole text of `path` (absolute) as the editor has it, an unsaved buffer included.
    fn read_text<'a>(&'a self, path: &'a Path) -> EditorFuture<'a, String>;
    /// Makes `text` the whole content of `path` (absolute), created when missing.
    fn write_text<'a>(&'a self, path: &'a Path, text: &'a str) -> EditorFuture<'a, ()>;
}

/// The editor Read, Write and Edit find on their context
/// (`ctx.with_ext(EditorFs(Arc::new(editor)))`). A fork and a sub-agent keep it: their files
/// are the same editor's.
#[derive(Clone)]
pub struct EditorFs(pub Arc<dyn EditorFiles>);

impl ContextExtension for EditorFs {
    fn fork(&self) -> Option<Self> {
        Some(self.clone())
    }
}

impl fmt::Debug for EditorFs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("EditorFs")
    }
}

/// What the editor says `path` holds: its text, or `None` when the tools must go by the disk
/// (the editor could not read it, or shows a file missing on disk as an empty buffer).
/// `on_disk` says whether the disk has the file.
pub(crate) async fn editor_text(editor: &EditorFs, path: &Path, on_disk: bool) -> Option<String> {
    match editor.0.read_text(path).await {
        Ok(text) if on_disk || !text.is_empty() => Some(text),
        Ok(_) => None,
        Err(message) => {
            if on_disk {
                tracing::warn!(
                    path = %path.display(),
                    %message,
                    "the editor could not read the file; reading it from disk"
                );
            }
            None
        }
    }
}

/// The editor on `ctx`, if any.
pub(crate) fn editor_of(ctx: &ToolContext) -> Option<Arc<EditorFs>> {
    ctx.ext::<EditorFs>()
}
