use std::os::unix::fs::PermissionsExt;

use serde_json::json;
use tine_tools::EditTool;
use tine_tools::ReadTool;
use tine_tools::ToolDisplay;
use tine_tools::WriteTool;

use super::support::{context, run};

#[tokio::test]
async fn write_creates_a_new_file_without_a_read() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(dir.path());
    let out = run(
        &WriteTool,
        json!({"file_path": "sub/dir/new.txt", "content": "hi\n"}),
        &ctx,
    )
    .await;
    assert!(!out.is_error, "{}", out.content);
    assert!(out.content.starts_with("File created successfully"));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("sub/dir/new.txt")).unwrap(),
        "hi\n"
    );
}

#[tokio::test]
async fn write_refuses_an_existing_file_never_read() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(dir.path());
    std::fs::write(dir.path().join("a.txt"), "old").unwrap();
    let out = run(
        &WriteTool,
        json!({"file_path": "a.txt", "content": "new"}),
        &ctx,
    )
    .await;
    assert!(out.is_error);
    assert!(
        out.content.contains("has not been read yet"),
        "{}",
        out.content
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "old"
    );
}

#[tokio::test]
async fn write_after_read_replaces_and_keeps_the_mode() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(dir.path());
    let path = dir.path().join("run.sh");
    std::fs::write(&path, "echo old\n").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o750)).unwrap();
    run(&ReadTool, json!({"file_path": path}), &ctx).await;
    let out = run(
        &WriteTool,
        json!({"file_path": path, "content": "echo new\n"}),
        &ctx,
    )
    .await;
    assert!(!out.is_error, "{}", out.content);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "echo new\n");
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o750);
    let ToolDisplay::Diff { unified, .. } = &out.display else {
        panic!("expected a diff, got {:?}", out.display);
    };
    assert!(unified.contains("-echo old\n+echo new"), "{unified}");
    // No temporary files left behind.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    // A second write without re-reading is fine: the cache holds what we wrote.
    let out = run(
        &WriteTool,
        json!({"file_path": path, "content": "again\n"}),
        &ctx,
    )
    .await;
    assert!(!out.is_error, "{}", out.content);
}

#[tokio::test]
async fn write_through_a_symlink_keeps_the_link() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(dir.path());
    let target = dir.path().join("target.txt");
    let link = dir.path().join("link.txt");
    std::fs::write(&target, "t").unwrap();
    std::os::unix::fs::symlink(&target, &link).unwrap();
    run(&ReadTool, json!({"file_path": link}), &ctx).await;
    let out = run(&WriteTool, json!({"file_path": link, "content": "u"}), &ctx).await;
    assert!(!out.is_error, "{}", out.content);
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "u");
}

#[tokio::test]
async fn edit_replaces_once_and_returns_a_diff() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(dir.path());
    let path = dir.path().join("main.rs");
    std::fs::write(&path, "fn main() {\n    println!(\"hi\");\n}\n").unwrap();
    run(&ReadTool, json!({"file_path": path}), &ctx).await;
    let out = run(
        &EditTool,
        json!({"file_path": path, "old_string": "\"hi\"", "new_string": "\"hello\""}),
        &ctx,
    )
    .await;
    assert!(!out.is_error, "{}", out.content);
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "fn main() {\n    println!(\"hello\");\n}\n"
    );
    let ToolDisplay::Diff {
        unified,
        added,
        removed,
        ..
    } = &out.display
    else {
        panic!("expected a diff");
    };
    assert_eq!((*added, *removed), (1, 1));
    assert!(unified.contains("@@"), "{unified}");
    assert!(unified.contains("+    println!(\"hello\");"), "{unified}");
    assert_eq!(out.summary, "Added 1 line, removed 1 line");
}

#[tokio::test]
async fn edit_counts_occurrences_in_its_errors() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(dir.path());
    let path = dir.path().join("x.txt");
    std::fs::write(&path, "a b a c a\n").unwrap();
    run(&ReadTool, json!({"file_path": path}), &ctx).await;

    let out = run(
        &EditTool,
        json!({"file_path": path, "old_string": "zzz", "new_string": "y"}),
        &ctx,
    )
    .await;
    assert!(out.is_error);
    assert!(
        out.content.contains("`old_string` was not found"),
        "{}",
        out.content
    );

    let out = run(
        &EditTool,
        json!({"file_path": path, "old_string": "a", "new_string": "y"}),
        &ctx,
    )
    .await;
    assert!(out.is_error);
    assert!(out.content.contains("appears 3 times"), "{}", out.content);
    assert!(out.content.contains("replace_all"), "{}", out.content);

    let out = run(
        &EditTool,
        json!({"file_path": path, "old_string": "a", "new_string": "y", "replace_all": true}),
        &ctx,
    )
    .await;
    assert!(!out.is_error, "{}", out.content);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "y b y c y\n");

    let out = run(
        &EditTool,
        json!({"file_path": path, "old_string": "b", "new_string": "b"}),
        &ctx,
    )
    .await;
    assert!(out.is_error);
    assert!(out.content.contains("identical"), "{}", out.content);
}

#[tokio::test]
async fn edit_refuses_never_read_and_stale_files() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(dir.path());
    let path = dir.path().join("s.txt");
    std::fs::write(&path, "one\n").unwrap();
    let input = json!({"file_path": path, "old_string": "one", "new_string": "two"});
    let out = run(&EditTool, input.clone(), &ctx).await;
    assert!(out.is_error);
    assert!(
        out.content.contains("has not been read yet"),
        "{}",
        out.content
    );

    run(&ReadTool, json!({"file_path": path}), &ctx).await;
    std::fs::write(&path, "one changed elsewhere\n").unwrap();
    let out = run(&EditTool, input.clone(), &ctx).await;
    assert!(out.is_error);
    assert!(
        out.content.contains("modified since read — read it again"),
        "{}",
        out.content
    );
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "one changed elsewhere\n"
    );

    run(&ReadTool, json!({"file_path": path}), &ctx).await;
    let out = run(&EditTool, input, &ctx).await;
    assert!(!out.is_error, "{}", out.content);
}

#[tokio::test]
async fn edit_with_empty_old_string_creates_a_file_and_errors_on_missing() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(dir.path());
    let out = run(
        &EditTool,
        json!({"file_path": "new.txt", "old_string": "", "new_string": "born\n"}),
        &ctx,
    )
    .await;
    assert!(!out.is_error, "{}", out.content);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("new.txt")).unwrap(),
        "born\n"
    );

    let out = run(
        &EditTool,
        json!({"file_path": "missing.txt", "old_string": "a", "new_string": "b"}),
        &ctx,
    )
    .await;
    assert!(out.is_error);
    assert!(
        out.content.contains("File does not exist"),
        "{}",
        out.content
    );

    let out = run(
        &EditTool,
        json!({"file_path": dir.path(), "old_string": "a", "new_string": "b"}),
        &ctx,
    )
    .await;
    assert!(out.is_error);
    assert!(out.content.contains("is a directory"), "{}", out.content);
}

#[tokio::test]
async fn edit_matches_lf_old_string_in_a_crlf_file() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(dir.path());
    let path = dir.path().join("w.txt");
    std::fs::write(&path, "a\r\nb\r\nc\r\n").unwrap();
    run(&ReadTool, json!({"file_path": path}), &ctx).await;
    let out = run(
        &EditTool,
        json!({"file_path": path, "old_string": "a\nb", "new_string": "x\ny"}),
        &ctx,
    )
    .await;
    assert!(!out.is_error, "{}", out.content);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "x\r\ny\r\nc\r\n");
}
