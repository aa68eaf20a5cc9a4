use std::path::Path;
use std::time::{Duration, SystemTime};

use serde_json::json;
use tine_tools::GlobTool;
use tine_tools::GrepTool;

use super::support::{context, run};

fn write(root: &Path, relative: &str, content: &str) {
    let path = root.join(relative);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, content).unwrap();
}

fn set_mtime(root: &Path, relative: &str, seconds_ago: u64) {
    let file = std::fs::File::options()
        .write(true)
        .open(root.join(relative))
        .unwrap();
    file.set_modified(SystemTime::now() - Duration::from_secs(seconds_ago))
        .unwrap();
}

/// A small project: sources, a gitignored build dir, a hidden dir and a .git dir.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, ".gitignore", "target/\n*.log\n");
    write(
        root,
        "src/main.rs",
        "fn main() {\n    let value = 1;\n    println!(\"{value}\");\n}\n",
    );
    write(root, "src/lib.rs", "pub fn Value() {}\n// TODO: value\n");
    write(root, "src/deep/mod.rs", "const VALUE: u8 = 2;\n");
    write(root, "README.md", "the value of things\n");
    write(root, "target/debug/out.rs", "fn value() {}\n");
    write(root, "debug.log", "value\n");
    write(root, ".github/ci.yml", "value: true\n");
    write(root, ".git/config", "value\n");
    set_mtime(root, "src/main.rs", 300);
    set_mtime(root, "src/lib.rs", 200);
    set_mtime(root, "src/deep/mod.rs", 100);
    set_mtime(root, ".github/ci.yml", 20);
    set_mtime(root, "README.md", 10);
    dir
}

#[tokio::test]
async fn glob_matches_respects_gitignore_and_sorts_newest_first() {
    let dir = project();
    let ctx = context(dir.path());
    let out = run(&GlobTool, json!({"pattern": "**/*.rs"}), &ctx).await;
    assert!(!out.is_error, "{}", out.content);
    assert_eq!(out.content, "src/deep/mod.rs\nsrc/lib.rs\nsrc/main.rs");
    assert_eq!(out.summary, "Found 3 files");
}

#[tokio::test]
async fn glob_star_does_not_cross_directories_and_path_narrows() {
    let dir = project();
    let ctx = context(dir.path());
    let out = run(&GlobTool, json!({"pattern": "*.rs"}), &ctx).await;
    assert_eq!(out.content, "No files found");
    let out = run(&GlobTool, json!({"pattern": "*.rs", "path": "src"}), &ctx).await;
    assert_eq!(out.content, "src/lib.rs\nsrc/main.rs");
    let out = run(&GlobTool, json!({"pattern": "src/deep/*.rs"}), &ctx).await;
    assert_eq!(out.content, "src/deep/mod.rs");
    let absolute = format!("{}/src/**/mod.rs", ctx.cwd().display());
    let out = run(&GlobTool, json!({"pattern": absolute}), &ctx).await;
    assert_eq!(out.content, "src/deep/mod.rs");
}

#[tokio::test]
async fn glob_includes_hidden_files_but_never_vcs_dirs() {
    let dir = project();
    let ctx = context(dir.path());
    let out = run(&GlobTool, json!({"pattern": "**/*"}), &ctx).await;
    assert!(out.content.contains(".github/ci.yml"), "{}", out.content);
    assert!(!out.content.contains(".git/config"), "{}", out.content);
    assert!(!out.content.contains("target/"), "{}", out.content);
    assert!(!out.content.contains("debug.log"), "{}", out.content);
}

#[tokio::test]
async fn glob_is_capped_at_100() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..120 {
        write(dir.path(), &format!("f{i:03}.txt"), "");
    }
    let ctx = context(dir.path());
    let out = run(&GlobTool, json!({"pattern": "*.txt"}), &ctx).await;
    assert_eq!(out.content.lines().count(), 101);
    assert!(
        out.content.contains("Results are truncated"),
        "{}",
        out.content
    );
}

#[tokio::test]
async fn glob_errors() {
    let dir = project();
    let ctx = context(dir.path());
    let out = run(&GlobTool, json!({"pattern": "*", "path": "nowhere"}), &ctx).await;
    assert!(out.is_error);
    assert!(out.content.contains("does not exist"), "{}", out.content);
    let out = run(&GlobTool, json!({"pattern": "a[", "path": "src"}), &ctx).await;
    assert!(out.is_error);
    assert!(
        out.content.contains("`pattern` is not a valid glob"),
        "{}",
        out.content
    );
    let out = run(&GlobTool, json!({"pattern": "/no/such/dir/**/*.rs"}), &ctx).await;
    assert!(out.is_error);
    assert!(out.content.contains("no directory of"), "{}", out.content);
}

#[tokio::test]
async fn grep_files_with_matches_is_the_default_and_respects_gitignore() {
    let dir = project();
    let ctx = context(dir.path());
    let out = run(&GrepTool, json!({"pattern": "value"}), &ctx).await;
    assert!(!out.is_error, "{}", out.content);
    // Newest first; the gitignored, .git and case-different files are absent.
    assert_eq!(
        out.content,
        "Found 4 files\nREADME.md\n.github/ci.yml\nsrc/lib.rs\nsrc/main.rs"
    );
}

#[tokio::test]
async fn grep_content_with_line_numbers_case_and_type() {
    let dir = project();
    let ctx = context(dir.path());
    let out = run(
        &GrepTool,
        json!({"pattern": "value", "output_mode": "content", "-i": true, "type": "rust"}),
        &ctx,
    )
    .await;
    assert_eq!(
        out.content,
        "src/deep/mod.rs:1:const VALUE: u8 = 2;\n\
         src/lib.rs:1:pub fn Value() {}\n\
         src/lib.rs:2:// TODO: value\n\
         src/main.rs:2:    let value = 1;\n\
         src/main.rs:3:    println!(\"{value}\");"
    );
    let out = run(
        &GrepTool,
        json!({"pattern": "TODO", "output_mode": "content", "-n": false, "glob": "*.rs"}),
        &ctx,
    )
    .await;
    assert_eq!(out.content, "src/lib.rs:// TODO: value");
}

#[tokio::test]
async fn grep_context_lines_and_separators() {
    let dir = tempfile::tempdir().unwrap();
    let text: String = (1..=12)
        .map(|i| {
            if i == 3 || i == 10 {
                "hit\n".to_owned()
            } else {
                format!("l{i}\n")
            }
        })
        .collect();
    write(dir.path(), "a.txt", &text);
    let ctx = context(dir.path());
    let out = run(
        &GrepTool,
        json!({"pattern": "hit", "output_mode": "content", "-C": 1}),
        &ctx,
    )
    .await;
    assert_eq!(
        out.content,
        "a.txt-2-l2\na.txt:3:hit\na.txt-4-l4\n--\na.txt-9-l9\na.txt:10:hit\na.txt-11-l11"
    );
    let out = run(
        &GrepTool,
        json!({"pattern": "hit", "output_mode": "content", "-A": 2, "-B": 0}),
        &ctx,
    )
    .await;
    assert!(
        out.content
            .starts_with("a.txt:3:hit\na.txt-4-l4\na.txt-5-l5\n--\n"),
        "{}",
        out.content
    );
}

#[tokio::test]
async fn grep_count_mode_and_multiline() {
    let dir = project();
    let ctx = context(dir.path());
    let out = run(
        &GrepTool,
        json!({"pattern": "value", "output_mode": "count", "path": "src"}),
        &ctx,
    )
    .await;
    assert_eq!(
        out.content,
        "src/lib.rs:1\nsrc/main.rs:2\n\nFound 3 total occurrences across 2 files."
    );
    let out = run(
        &GrepTool,
        json!({"pattern": "main\\(\\) \\{.*let", "multiline": true, "output_mode": "content"}),
        &ctx,
    )
    .await;
    assert_eq!(
        out.content,
        "src/main.rs:1:fn main() {\nsrc/main.rs:2:    let value = 1;"
    );
    let out = run(&GrepTool, json!({"pattern": "main\\(\\) \\{.*let"}), &ctx).await;
    assert_eq!(out.content, "No files found");
}

#[tokio::test]
async fn grep_head_limit_and_offset_paginate() {
    let dir = tempfile::tempdir().unwrap();
    let text: String = (1..=300).map(|i| format!("match {i}\n")).collect();
    write(dir.path(), "many.txt", &text);
    let ctx = context(dir.path());
    let out = run(
        &GrepTool,
        json!({"pattern": "match", "output_mode": "content"}),
        &ctx,
    )
    .await;
    assert_eq!(
        out.content
            .lines()
            .filter(|l| l.starts_with("many.txt:"))
            .count(),
        250
    );
    assert!(
        out.content
            .contains("pagination = limit: 250, offset: 0; 300 in all"),
        "{}",
        out.content
    );
    let out = run(
        &GrepTool,
        json!({"pattern": "match", "output_mode": "content", "head_limit": 2, "offset": 10}),
        &ctx,
    )
    .await;
    assert!(
        out.content
            .starts_with("many.txt:11:match 11\nmany.txt:12:match 12\n\n[Showing"),
        "{}",
        out.content
    );
    let out = run(
        &GrepTool,
        json!({"pattern": "match", "output_mode": "content", "head_limit": 0}),
        &ctx,
    )
    .await;
    assert_eq!(out.content.lines().count(), 300);
}

#[tokio::test]
async fn grep_skips_binary_files_and_reports_bad_input() {
    let dir = project();
    std::fs::write(dir.path().join("blob.bin"), b"value\0\x01\x02").unwrap();
    let ctx = context(dir.path());
    let out = run(
        &GrepTool,
        json!({"pattern": "value", "path": "blob.bin"}),
        &ctx,
    )
    .await;
    assert_eq!(out.content, "No files found");
    let out = run(&GrepTool, json!({"pattern": "("}), &ctx).await;
    assert!(out.is_error);
    assert!(
        out.content.contains("`pattern` is not a valid regex"),
        "{}",
        out.content
    );
    let out = run(
        &GrepTool,
        json!({"pattern": "x", "type": "nosuchtype"}),
        &ctx,
    )
    .await;
    assert!(out.is_error);
    assert!(out.content.contains("`type`"), "{}", out.content);
    let out = run(
        &GrepTool,
        json!({"pattern": "x", "output_mode": "lines"}),
        &ctx,
    )
    .await;
    assert!(out.is_error);
    assert!(
        out.content.contains("`output_mode` must be one of"),
        "{}",
        out.content
    );
}
