use serde_json::json;
use tine_tools::builtin::read::ReadTool;
use tine_tools::builtin::todo::{TodoStatus, TodoWriteTool};
use tine_tools::{Tool, ToolDisplay};

use super::support::{context, run};

#[tokio::test]
async fn todo_write_replaces_the_list() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(dir.path());
    let todos = json!({"todos": [
        {"content": "Run tests", "status": "in_progress", "activeForm": "Running tests"},
        {"content": "Fix bug", "status": "completed", "activeForm": "Fixing bug"}
    ]});
    let out = run(&TodoWriteTool, todos, &ctx).await;
    assert!(!out.is_error, "{}", out.content);
    assert_eq!(out.summary, "1 of 2 todos completed");
    let items = ctx.todos().items();
    assert_eq!(items.len(), 2);
    assert_eq!(items[0].status, TodoStatus::InProgress);
    assert!(matches!(out.display, ToolDisplay::Todos(ref shown) if shown == &items));

    let bad = json!({"todos": [{"content": "x", "status": "done", "activeForm": "x"}]});
    let out = run(&TodoWriteTool, bad, &ctx).await;
    assert!(out.is_error);
    assert!(
        out.content.contains("`todos[0].status` must be one of"),
        "{}",
        out.content
    );
    assert_eq!(ctx.todos().items().len(), 2);
}

#[tokio::test]
async fn a_fork_gets_copies_and_a_child_token() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "a").unwrap();
    let parent = context(dir.path());
    run(&ReadTool, json!({"file_path": "a.txt"}), &parent).await;
    let fork = parent.fork();
    assert!(fork.file_state().contains(&parent.resolve_path("a.txt")));

    std::fs::write(dir.path().join("b.txt"), "b").unwrap();
    run(&ReadTool, json!({"file_path": "b.txt"}), &fork).await;
    assert!(!parent.file_state().contains(&parent.resolve_path("b.txt")));

    fork.set_cwd("/");
    assert_ne!(parent.cwd(), fork.cwd());

    fork.cancellation().cancel();
    assert!(!parent.cancellation().is_cancelled());
    let other = parent.fork();
    parent.cancellation().cancel();
    assert!(other.cancellation().is_cancelled());
    // A cancelled context refuses new calls.
    let out = run(&ReadTool, json!({"file_path": "a.txt"}), &other).await;
    assert!(out.is_error);
    assert!(out.content.contains("cancelled"), "{}", out.content);
}

#[test]
fn paths_resolve_against_the_cwd() {
    let ctx = tine_tools::ToolContext::new("/work/project");
    assert_eq!(
        ctx.resolve_path("src/../lib.rs"),
        std::path::Path::new("/work/project/lib.rs")
    );
    assert_eq!(
        ctx.resolve_path("/../etc/./x"),
        std::path::Path::new("/etc/x")
    );
    assert_eq!(
        ReadTool.permission_target(&json!({"file_path": "a/b"}), &ctx),
        tine_permissions::PermissionTarget::FileRead {
            path: "/work/project/a/b".into()
        }
    );
}
