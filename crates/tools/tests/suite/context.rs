use serde_json::json;
use tine_tools::ReadTool;
use tine_tools::TodoWriteTool;
use tine_tools::{BackgroundTasks, ContextExtension, TodoList, TodoStatus, Tool, ToolDisplay};

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
    let items = ctx.ext::<TodoList>().unwrap().items();
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
    assert_eq!(ctx.ext::<TodoList>().unwrap().items().len(), 2);
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

/// State of a tool that only the tool knows about, the way MCP or an Agent tool would keep it.
#[derive(Debug, Default, PartialEq)]
struct Counter(u32);

impl ContextExtension for Counter {
    fn fork(&self) -> Option<Self> {
        Some(Counter(self.0 + 1))
    }
}

#[tokio::test]
async fn extensions_are_shared_by_clones_and_forked_as_each_one_says() {
    let dir = tempfile::tempdir().unwrap();
    let parent = context(dir.path()).with_ext(Counter(1));
    let todos = json!({"todos": [
        {"content": "Run tests", "status": "pending", "activeForm": "Running tests"}
    ]});
    let clone = parent.clone();
    let out = run(&TodoWriteTool, todos, &clone).await;
    assert!(!out.is_error, "{}", out.content);
    // A clone is the same session: the list written through it is the parent's.
    assert_eq!(parent.ext::<TodoList>().unwrap().items().len(), 1);
    parent.ext_or_default::<BackgroundTasks>();

    let fork = parent.fork();
    assert!(
        fork.ext::<TodoList>().is_none(),
        "a fork keeps its own todo list"
    );
    assert!(
        fork.ext::<BackgroundTasks>().is_none(),
        "and its own shells"
    );
    assert_eq!(fork.ext::<Counter>().as_deref(), Some(&Counter(2)));
    assert_eq!(parent.ext::<Counter>().as_deref(), Some(&Counter(1)));
    fork.insert_ext(Counter(7));
    assert_eq!(parent.ext::<Counter>().as_deref(), Some(&Counter(1)));
    assert!(format!("{parent:?}").contains("Counter"), "{parent:?}");
}
