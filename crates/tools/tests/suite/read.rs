use serde_json::json;
use tine_tools::builtin::read::ReadTool;

use super::support::{context, run};

#[tokio::test]
async fn numbers_lines_and_records_the_read() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(dir.path());
    let path = ctx.resolve_path("a.txt");
    std::fs::write(&path, "one\ntwo\nthree\n").unwrap();
    let out = run(&ReadTool, json!({"file_path": path}), &ctx).await;
    assert!(!out.is_error, "{}", out.content);
    assert_eq!(out.content, "     1\tone\n     2\ttwo\n     3\tthree\n");
    assert_eq!(out.summary, "Read 3 lines");
    assert!(ctx.file_state().contains(&path));
}

#[tokio::test]
async fn offset_and_limit_select_lines_and_say_what_remains() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(dir.path());
    let text: String = (1..=10).map(|i| format!("line {i}\n")).collect();
    std::fs::write(dir.path().join("b.txt"), text).unwrap();
    let out = run(
        &ReadTool,
        json!({"file_path": "b.txt", "offset": 4, "limit": 2}),
        &ctx,
    )
    .await;
    assert!(
        out.content.starts_with("     4\tline 4\n     5\tline 5\n"),
        "{}",
        out.content
    );
    assert!(out.content.contains("5 more lines; continue with offset=6"));
    assert!(!out.content.contains("line 6"));
}

#[tokio::test]
async fn long_lines_are_cut() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(dir.path());
    std::fs::write(dir.path().join("long.txt"), "x".repeat(5000)).unwrap();
    let out = run(&ReadTool, json!({"file_path": "long.txt"}), &ctx).await;
    assert!(out.content.contains("[line truncated]"));
    assert!(out.content.len() < 2100);
}

#[tokio::test]
async fn errors_for_directory_missing_and_binary_files() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(dir.path());
    let out = run(&ReadTool, json!({"file_path": dir.path()}), &ctx).await;
    assert!(out.is_error);
    assert!(out.content.contains("is a directory"), "{}", out.content);

    let out = run(&ReadTool, json!({"file_path": "nope.txt"}), &ctx).await;
    assert!(out.is_error);
    assert!(
        out.content.contains("File does not exist"),
        "{}",
        out.content
    );

    std::fs::write(dir.path().join("blob.dat"), b"ab\0cd").unwrap();
    let out = run(&ReadTool, json!({"file_path": "blob.dat"}), &ctx).await;
    assert!(out.is_error);
    assert!(out.content.contains("binary file"), "{}", out.content);
    assert!(ctx.file_state().is_empty());
}

#[tokio::test]
async fn empty_file_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(dir.path());
    std::fs::write(dir.path().join("empty"), "").unwrap();
    let out = run(&ReadTool, json!({"file_path": "empty"}), &ctx).await;
    assert!(!out.is_error);
    assert!(out.content.contains("contents are empty"));
}

#[tokio::test]
async fn schema_violations_name_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(dir.path());
    let out = run(&ReadTool, json!({}), &ctx).await;
    assert!(out.is_error);
    assert!(
        out.content.contains("`file_path` is required"),
        "{}",
        out.content
    );
    let out = run(&ReadTool, json!({"file_path": "a", "limit": "ten"}), &ctx).await;
    assert!(
        out.content.contains("`limit` must be an integer"),
        "{}",
        out.content
    );
}
