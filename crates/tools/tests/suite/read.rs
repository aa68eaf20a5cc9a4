use serde_json::json;
use tine_tools::ReadTool;

use super::support::{context, run};

#[tokio::test]
async fn numbers_lines_and_records_the_read() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(dir.path());
    let path = ctx.resolve_path("a.txt");
    std::fs::write(&path, "one\ntwo\nthree\n").unwrap();
    let out = run(&ReadTool, json!({"file_path": path}), &ctx).await;
    assert!(!out.is_error, "{}", out.content);
    assert_eq!(out.content, "1\tone\n2\ttwo\n3\tthree\n");
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
        out.content.starts_with("4\tline 4\n5\tline 5\n"),
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

/// Runs `tool` with a guard: a read that hangs fails the test instead of hanging it.
async fn run_guarded(
    input: serde_json::Value,
    ctx: &tine_tools::ToolContext,
) -> tine_tools::ToolOutput {
    tokio::time::timeout(
        std::time::Duration::from_secs(60),
        run(&ReadTool, input, ctx),
    )
    .await
    .expect("Read hung")
}

#[tokio::test]
async fn a_window_of_a_3_gb_sparse_file_reads_only_its_start() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(dir.path());
    let path = dir.path().join("huge.log");
    // 12 KB of text, then a hole to 3 GB (NULs past the binary probe at the start).
    let text: String = (1..=1000).map(|i| format!("entry {i:05}\n")).collect();
    std::fs::write(&path, &text).unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(3 * 1024 * 1024 * 1024)
        .unwrap();
    let out = run_guarded(json!({"file_path": path, "offset": 1, "limit": 2}), &ctx).await;
    assert!(!out.is_error, "{}", out.content);
    // Had it read the whole file it would know the line count; it stopped well before.
    assert_eq!(
        out.content,
        "1\tentry 00001\n2\tentry 00002\n\n... (more lines follow; continue with offset=3)\n"
    );
    // Not hashed whole, so not recorded: Edit will ask for a read it can check.
    assert!(!ctx.file_state().contains(&path));

    // Without offset/limit it is refused by its size before any byte is read.
    let out = run_guarded(json!({"file_path": path}), &ctx).await;
    assert!(out.is_error);
    assert!(
        out.content
            .contains("read it in parts with `offset` and `limit`"),
        "{}",
        out.content
    );
}

#[tokio::test]
async fn a_ranged_read_of_an_ordinary_file_records_it_for_edit() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(dir.path());
    let path = ctx.resolve_path("c.txt");
    std::fs::write(&path, "a\nb\nc\n").unwrap();
    let out = run(
        &ReadTool,
        json!({"file_path": path, "offset": 2, "limit": 1}),
        &ctx,
    )
    .await;
    assert_eq!(
        out.content,
        "2\tb\n\n... (1 more lines; continue with offset=3)\n"
    );
    let state = ctx.file_state().get(&path).unwrap();
    assert_eq!(state.content_hash, tine_tools::hash_content(b"a\nb\nc\n"));
}

#[cfg(unix)]
#[tokio::test]
async fn a_fifo_is_refused_without_being_opened() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(dir.path());
    let fifo = dir.path().join("pipe");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|s| s.success()) {
        eprintln!("mkfifo not available; skipping");
        return;
    }
    std::os::unix::fs::symlink(&fifo, dir.path().join("link-to-pipe")).unwrap();
    for name in ["pipe", "link-to-pipe"] {
        let out = run_guarded(json!({"file_path": name}), &ctx).await;
        assert!(out.is_error);
        assert!(
            out.content
                .contains("is a FIFO (named pipe), not a regular file"),
            "{}",
            out.content
        );
    }
    // Write and Edit load the file first: they refuse it the same way instead of hanging.
    let write = tokio::time::timeout(
        std::time::Duration::from_secs(60),
        run(
            &tine_tools::WriteTool,
            json!({"file_path": fifo, "content": "x"}),
            &ctx,
        ),
    )
    .await
    .expect("Write hung");
    assert!(write.is_error);
    assert!(
        write.content.contains("not a regular file"),
        "{}",
        write.content
    );
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_link_to_dev_zero_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(dir.path());
    std::os::unix::fs::symlink("/dev/zero", dir.path().join("zeros")).unwrap();
    for input in [
        json!({"file_path": "zeros"}),
        json!({"file_path": "zeros", "offset": 1, "limit": 1}),
    ] {
        let out = run_guarded(input, &ctx).await;
        assert!(out.is_error);
        assert!(
            out.content
                .contains("is a character device, not a regular file"),
            "{}",
            out.content
        );
    }
}
