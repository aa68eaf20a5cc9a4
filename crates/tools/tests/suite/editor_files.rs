//! Read, Write and Edit through an editor's files (`EditorFs` on the context): an in-memory
//! editor whose buffers differ from the disk, counting its calls.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::json;
use tine_tools::{
    EditTool, EditorFiles, EditorFs, EditorFuture, ReadTool, ToolContext, ToolDisplay, WriteTool,
};

use super::support::{context, run};

/// An editor holding buffers in a map. A path it has no buffer for is an error (as Zed
/// answers), or an empty buffer with `missing_is_empty`.
#[derive(Default)]
struct FakeEditor {
    buffers: Mutex<HashMap<PathBuf, String>>,
    /// Paths whose reads fail although the editor may have them.
    unreadable: Mutex<HashSet<PathBuf>>,
    missing_is_empty: bool,
    refuse_writes: bool,
    reads: AtomicUsize,
    writes: AtomicUsize,
}

impl FakeEditor {
    fn set(&self, path: &Path, text: &str) {
        self.buffers
            .lock()
            .unwrap()
            .insert(path.to_path_buf(), text.to_owned());
    }

    fn get(&self, path: &Path) -> Option<String> {
        self.buffers.lock().unwrap().get(path).cloned()
    }

    fn reads(&self) -> usize {
        self.reads.load(Ordering::SeqCst)
    }

    fn writes(&self) -> usize {
        self.writes.load(Ordering::SeqCst)
    }
}

impl EditorFiles for FakeEditor {
    fn read_text<'a>(&'a self, path: &'a Path) -> EditorFuture<'a, String> {
        Box::pin(async move {
            self.reads.fetch_add(1, Ordering::SeqCst);
            if self.unreadable.lock().unwrap().contains(path) {
                return Err("the editor is busy".to_owned());
            }
            match self.get(path) {
                Some(text) => Ok(text),
                None if self.missing_is_empty => Ok(String::new()),
                None => Err(format!("no such buffer: {}", path.display())),
            }
        })
    }

    fn write_text<'a>(&'a self, path: &'a Path, text: &'a str) -> EditorFuture<'a, ()> {
        Box::pin(async move {
            self.writes.fetch_add(1, Ordering::SeqCst);
            if self.refuse_writes {
                return Err("the buffer is read-only".to_owned());
            }
            self.set(path, text);
            Ok(())
        })
    }
}

/// A project with `a.txt` on disk ("disk one\ndisk two\n") and the context with `editor`.
struct Project {
    _dir: tempfile::TempDir,
    file: PathBuf,
    ctx: ToolContext,
}

fn project(editor: &Arc<FakeEditor>) -> Project {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(dir.path()).with_ext(EditorFs(Arc::clone(editor) as Arc<dyn EditorFiles>));
    let file = ctx.cwd().join("a.txt");
    std::fs::write(&file, "disk one\ndisk two\n").unwrap();
    Project {
        _dir: dir,
        file,
        ctx,
    }
}

fn disk(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap()
}

#[tokio::test]
async fn read_shows_the_editors_buffer_not_the_disk() {
    let editor = Arc::new(FakeEditor::default());
    let p = project(&editor);
    editor.set(&p.file, "buffer one\nbuffer two\nbuffer three");
    let out = run(&ReadTool, json!({"file_path": "a.txt"}), &p.ctx).await;
    assert!(!out.is_error, "{}", out.content);
    assert_eq!(
        out.content,
        "1\tbuffer one\n2\tbuffer two\n3\tbuffer three\n"
    );
    assert_eq!(out.summary, "Read 3 lines");
    assert_eq!(editor.reads(), 1);
    // The window and its numbering apply to the buffer as to a file.
    let out = run(
        &ReadTool,
        json!({"file_path": "a.txt", "offset": 2, "limit": 1}),
        &p.ctx,
    )
    .await;
    assert_eq!(
        out.content,
        "2\tbuffer two\n\n... (1 more lines; continue with offset=3)\n"
    );
    // A fork's context reads the same editor.
    let out = run(&ReadTool, json!({"file_path": "a.txt"}), &p.ctx.fork()).await;
    assert!(out.content.contains("buffer one"), "{}", out.content);
}

#[tokio::test]
async fn read_then_edit_changes_the_buffer_through_the_editor_and_leaves_the_disk() {
    let editor = Arc::new(FakeEditor::default());
    let p = project(&editor);
    editor.set(&p.file, "buffer one\nbuffer two\n");
    run(&ReadTool, json!({"file_path": "a.txt"}), &p.ctx).await;
    let out = run(
        &EditTool,
        json!({"file_path": "a.txt", "old_string": "buffer two", "new_string": "edited"}),
        &p.ctx,
    )
    .await;
    assert!(!out.is_error, "{}", out.content);
    assert_eq!(out.summary, "Added 1 line, removed 1 line");
    let ToolDisplay::Diff { unified, .. } = &out.display else {
        panic!("no diff: {:?}", out.display);
    };
    assert!(unified.contains("-buffer two\n+edited\n"), "{unified}");
    assert_eq!(editor.get(&p.file).unwrap(), "buffer one\nedited\n");
    assert_eq!(editor.writes(), 1);
    assert_eq!(disk(&p.file), "disk one\ndisk two\n");
    // What was written is what the cache holds: a second edit needs no new Read.
    let out = run(
        &EditTool,
        json!({"file_path": "a.txt", "old_string": "edited", "new_string": "again"}),
        &p.ctx,
    )
    .await;
    assert!(!out.is_error, "{}", out.content);
    assert_eq!(editor.get(&p.file).unwrap(), "buffer one\nagain\n");
}

#[tokio::test]
async fn a_buffer_changed_after_the_read_is_caught() {
    let editor = Arc::new(FakeEditor::default());
    let p = project(&editor);
    editor.set(&p.file, "buffer one\n");
    run(&ReadTool, json!({"file_path": "a.txt"}), &p.ctx).await;
    editor.set(&p.file, "buffer one\ntyped by the person\n");
    let out = run(
        &EditTool,
        json!({"file_path": "a.txt", "old_string": "one", "new_string": "1"}),
        &p.ctx,
    )
    .await;
    assert!(out.is_error);
    assert!(
        out.content.contains("modified since read"),
        "{}",
        out.content
    );
    assert_eq!(editor.writes(), 0);
    // Write checks against the editor's text too.
    let out = run(
        &WriteTool,
        json!({"file_path": "a.txt", "content": "x"}),
        &p.ctx,
    )
    .await;
    assert!(
        out.content.contains("modified since read"),
        "{}",
        out.content
    );
    assert_eq!(editor.writes(), 0);
}

#[tokio::test]
async fn write_creates_through_the_editor_and_a_following_edit_works() {
    let editor = Arc::new(FakeEditor::default());
    let p = project(&editor);
    let new = p.ctx.cwd().join("new.txt");
    let out = run(
        &WriteTool,
        json!({"file_path": "new.txt", "content": "fresh\n"}),
        &p.ctx,
    )
    .await;
    assert!(!out.is_error, "{}", out.content);
    assert!(out.content.starts_with("File created successfully"));
    assert_eq!(editor.get(&new).unwrap(), "fresh\n");
    assert!(!new.exists(), "the disk was written");
    let out = run(
        &EditTool,
        json!({"file_path": "new.txt", "old_string": "fresh", "new_string": "edited"}),
        &p.ctx,
    )
    .await;
    assert!(!out.is_error, "{}", out.content);
    assert_eq!(editor.get(&new).unwrap(), "edited\n");
}

#[tokio::test]
async fn write_replaces_a_read_buffer_with_a_diff_against_it() {
    let editor = Arc::new(FakeEditor::default());
    let p = project(&editor);
    editor.set(&p.file, "buffer\n");
    let out = run(
        &WriteTool,
        json!({"file_path": "a.txt", "content": "x\n"}),
        &p.ctx,
    )
    .await;
    assert!(
        out.content.contains("has not been read yet"),
        "{}",
        out.content
    );
    run(&ReadTool, json!({"file_path": "a.txt"}), &p.ctx).await;
    let out = run(
        &WriteTool,
        json!({"file_path": "a.txt", "content": "x\n"}),
        &p.ctx,
    )
    .await;
    assert!(!out.is_error, "{}", out.content);
    let ToolDisplay::Diff { unified, .. } = &out.display else {
        panic!("no diff: {:?}", out.display);
    };
    assert!(unified.contains("-buffer\n+x\n"), "{unified}");
    assert_eq!(editor.get(&p.file).unwrap(), "x\n");
    assert_eq!(disk(&p.file), "disk one\ndisk two\n");
}

#[tokio::test]
async fn an_editor_write_error_is_the_tools_error() {
    let editor = Arc::new(FakeEditor {
        refuse_writes: true,
        ..FakeEditor::default()
    });
    let p = project(&editor);
    let out = run(
        &WriteTool,
        json!({"file_path": "new.txt", "content": "x"}),
        &p.ctx,
    )
    .await;
    assert!(out.is_error);
    assert!(
        out.content.contains("the buffer is read-only"),
        "{}",
        out.content
    );
    // Nothing was recorded in the file-state cache.
    assert!(!p.ctx.file_state().contains(&p.ctx.cwd().join("new.txt")));
}

#[tokio::test]
async fn an_editor_read_error_on_an_existing_file_falls_back_to_the_disk() {
    let editor = Arc::new(FakeEditor::default());
    let p = project(&editor);
    editor.set(&p.file, "buffer\n");
    editor.unreadable.lock().unwrap().insert(p.file.clone());
    let out = run(&ReadTool, json!({"file_path": "a.txt"}), &p.ctx).await;
    assert!(!out.is_error, "{}", out.content);
    assert_eq!(out.content, "1\tdisk one\n2\tdisk two\n");
    // Edit starts from the disk's text too, and writes through the editor.
    let out = run(
        &EditTool,
        json!({"file_path": "a.txt", "old_string": "disk two", "new_string": "two"}),
        &p.ctx,
    )
    .await;
    assert!(!out.is_error, "{}", out.content);
    assert_eq!(editor.get(&p.file).unwrap(), "disk one\ntwo\n");
    assert_eq!(editor.reads(), 2);
}

#[tokio::test]
async fn a_file_missing_on_disk_and_in_the_editor_is_not_found() {
    for missing_is_empty in [false, true] {
        let editor = Arc::new(FakeEditor {
            missing_is_empty,
            ..FakeEditor::default()
        });
        let p = project(&editor);
        let gone = p.ctx.cwd().join("gone.txt");
        let out = run(&ReadTool, json!({"file_path": "gone.txt"}), &p.ctx).await;
        assert!(out.is_error);
        assert_eq!(
            out.content,
            format!("Error: File does not exist: {}", gone.display())
        );
        let out = run(
            &EditTool,
            json!({"file_path": "gone.txt", "old_string": "a", "new_string": "b"}),
            &p.ctx,
        )
        .await;
        assert_eq!(
            out.content,
            format!("Error: File does not exist: {}", gone.display())
        );
        // An empty `old_string` creates it, through the editor.
        let out = run(
            &EditTool,
            json!({"file_path": "gone.txt", "old_string": "", "new_string": "made\n"}),
            &p.ctx,
        )
        .await;
        assert!(!out.is_error, "{}", out.content);
        assert_eq!(editor.get(&gone).unwrap(), "made\n");
        assert!(!gone.exists());
    }
}

#[tokio::test]
async fn an_unsaved_buffer_of_a_file_missing_on_disk_is_read() {
    let editor = Arc::new(FakeEditor::default());
    let p = project(&editor);
    let unsaved = p.ctx.cwd().join("unsaved.txt");
    editor.set(&unsaved, "not saved yet\n");
    let out = run(&ReadTool, json!({"file_path": "unsaved.txt"}), &p.ctx).await;
    assert_eq!(out.content, "1\tnot saved yet\n");
}

#[tokio::test]
async fn binary_text_from_the_editor_is_refused() {
    let editor = Arc::new(FakeEditor::default());
    let p = project(&editor);
    editor.set(&p.file, "a\0b");
    let out = run(&ReadTool, json!({"file_path": "a.txt"}), &p.ctx).await;
    assert!(out.is_error);
    assert!(out.content.contains("binary file"), "{}", out.content);
}

#[tokio::test]
async fn the_outputs_are_the_disks_when_the_buffer_equals_the_file() {
    // Without an editor nothing differs; with one whose buffer equals the file, the model's
    // results are byte for byte the same.
    let editor = Arc::new(FakeEditor::default());
    let with = project(&editor);
    editor.set(&with.file, &disk(&with.file));
    let dir = tempfile::tempdir().unwrap();
    let without = context(dir.path());
    std::fs::write(without.cwd().join("a.txt"), disk(&with.file)).unwrap();
    let calls = [
        (json!({"file_path": "a.txt"}), "read"),
        (
            json!({"file_path": "a.txt", "old_string": "one", "new_string": "1"}),
            "edit",
        ),
        (json!({"file_path": "a.txt", "content": "whole\n"}), "write"),
    ];
    for (input, tool) in calls {
        let tool: &dyn tine_tools::Tool = match tool {
            "read" => &ReadTool,
            "edit" => &EditTool,
            _ => &WriteTool,
        };
        let a = run(tool, input.clone(), &with.ctx).await;
        let mut b = run(tool, input, &without).await;
        assert!(!b.is_error, "{}", b.content);
        // The diff's header names the file, whose directory differs.
        if let (
            ToolDisplay::Diff {
                file_path, unified, ..
            },
            ToolDisplay::Diff {
                file_path: fb,
                unified: ub,
                ..
            },
        ) = (&a.display, &mut b.display)
        {
            *ub = ub.replace(&fb.display().to_string(), &file_path.display().to_string());
            *fb = file_path.clone();
            assert_eq!(unified, ub);
        }
        b.content = b.content.replace(
            &without.cwd().display().to_string(),
            &with.ctx.cwd().display().to_string(),
        );
        assert_eq!(a, b);
    }
    // The disk file of the context without an editor changed; the one with an editor did not.
    assert_eq!(disk(&without.cwd().join("a.txt")), "whole\n");
    assert_eq!(disk(&with.file), "disk one\ndisk two\n");
    assert_eq!(editor.get(&with.file).unwrap(), "whole\n");
}
