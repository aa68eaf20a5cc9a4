use std::path::{Path, PathBuf};
use std::time::Duration;

use tine_query_loop::{BASE_SYSTEM_PROMPT, GatherOptions, InstructionSource, SessionContext};
use tine_query_loop::{MAX_INSTRUCTION_FILE_BYTES, discover_instruction_files};

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// home/AGENTS.md, repo/{.git, AGENTS.md, CLAUDE.md}, repo/a/CLAUDE.local.md,
/// repo/a/b/{AGENTS.md, CLAUDE.md}, plus files above the repo that must be ignored.
fn layout() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let home = root.join("home");
    let repo = root.join("outer/repo");
    write(&home.join("AGENTS.md"), "user rules");
    write(&root.join("outer/AGENTS.md"), "above the repo: ignored");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    write(&repo.join("AGENTS.md"), "root agents");
    write(&repo.join("CLAUDE.md"), "root claude");
    write(&repo.join("a/CLAUDE.local.md"), "a local");
    write(&repo.join("a/b/AGENTS.md"), "b agents");
    write(&repo.join("a/b/CLAUDE.md"), "   \n");
    (tmp, home, repo)
}

#[test]
fn discovery_goes_user_then_root_down_to_cwd() {
    let (_tmp, home, repo) = layout();
    let cwd = repo.join("a/b");
    let files = discover_instruction_files(&home, &cwd);
    let got: Vec<(PathBuf, InstructionSource, &str)> = files
        .iter()
        .map(|f| (f.path.clone(), f.source, f.content.as_str()))
        .collect();
    assert_eq!(
        got,
        vec![
            (
                home.join("AGENTS.md"),
                InstructionSource::User,
                "user rules"
            ),
            (
                repo.join("AGENTS.md"),
                InstructionSource::Project,
                "root agents"
            ),
            (
                repo.join("CLAUDE.md"),
                InstructionSource::Project,
                "root claude"
            ),
            (
                repo.join("a/CLAUDE.local.md"),
                InstructionSource::Local,
                "a local"
            ),
            (
                repo.join("a/b/AGENTS.md"),
                InstructionSource::Project,
                "b agents"
            ),
        ]
    );
}

#[test]
fn outside_a_repository_only_cwd_is_searched() {
    let (_tmp, home, repo) = layout();
    let outer = repo.parent().unwrap();
    let files = discover_instruction_files(&home, &outer.join("x"));
    assert_eq!(files.len(), 1, "only the user file: {files:?}");
    let files = discover_instruction_files(&home, outer);
    assert_eq!(files[1].content, "above the repo: ignored");
}

#[cfg(unix)]
#[test]
fn a_symlinked_claude_md_is_included_once() {
    let (_tmp, home, repo) = layout();
    std::fs::remove_file(repo.join("CLAUDE.md")).unwrap();
    std::os::unix::fs::symlink("AGENTS.md", repo.join("CLAUDE.md")).unwrap();
    let files = discover_instruction_files(&home, &repo);
    let contents: Vec<&str> = files.iter().map(|f| f.content.as_str()).collect();
    assert_eq!(contents, ["user rules", "root agents"]);
}

#[test]
fn big_files_are_cut_with_a_note() {
    let (_tmp, home, repo) = layout();
    // A multi-byte character straddles the cut.
    let big = format!(
        "{}é{}",
        "x".repeat(MAX_INSTRUCTION_FILE_BYTES - 1),
        "y".repeat(100)
    );
    write(&repo.join("AGENTS.md"), &big);
    let files = discover_instruction_files(&home, &repo);
    let agents = files
        .iter()
        .find(|f| f.path == repo.join("AGENTS.md"))
        .unwrap();
    assert!(agents.truncated);
    assert_eq!(agents.content, "x".repeat(MAX_INSTRUCTION_FILE_BYTES - 1));
    let ctx = SessionContext {
        environment: tine_query_loop::EnvironmentFacts {
            cwd: repo.clone(),
            is_git_repo: true,
            platform: "linux".into(),
            os_version: None,
            date: "2025-01-01".into(),
            model: "m".into(),
            additional_directories: Vec::new(),
        },
        git: None,
        instructions: files,
    };
    assert!(
        ctx.user_context()
            .contains("[truncated: the file is longer than 40 KB")
    );
}

fn git_available() -> bool {
    std::process::Command::new("git")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn git(dir: &Path, args: &[&str]) {
    let status = std::process::Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .output()
        .unwrap();
    assert!(status.status.success(), "git {args:?}: {status:?}");
}

fn options(home: &Path, cwd: &Path) -> GatherOptions {
    let mut options = GatherOptions::new(home.to_path_buf(), cwd.to_path_buf(), "claude-test");
    options.date = Some("2025-05-06".into());
    options.git_timeout = Duration::from_secs(20);
    options
}

#[tokio::test]
async fn gather_in_a_real_repository_is_byte_stable() {
    if !git_available() {
        eprintln!("git not installed; skipping");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let repo = root.join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    write(&repo.join("AGENTS.md"), "use make");
    git(&repo, &["add", "AGENTS.md"]);
    git(&repo, &["commit", "-q", "-m", "first commit"]);
    write(&repo.join("dirty.txt"), "x");

    let opts = options(&root.join("home"), &repo);
    let first = SessionContext::gather(&opts).await;
    let second = SessionContext::gather(&opts).await;
    assert_eq!(first, second);
    let a = first.render(BASE_SYSTEM_PROMPT, Some("extra"));
    let b = second.render(BASE_SYSTEM_PROMPT, Some("extra"));
    assert_eq!(a, b);

    assert!(first.environment.is_git_repo);
    assert_eq!(first.environment.date, "2025-05-06");
    let snapshot = first.git.as_ref().expect("a git snapshot");
    assert_eq!(snapshot.branch.as_deref(), Some("main"));
    assert_eq!(snapshot.main_branch.as_deref(), Some("main"));
    assert_eq!(snapshot.status, "?? dirty.txt");
    assert_eq!(snapshot.recent_commits.len(), 1);
    assert!(snapshot.recent_commits[0].ends_with(" first commit"));
    let context = &a.user_context;
    assert!(context.contains("Working directory: "));
    assert!(context.contains("Status:\n?? dirty.txt\n\nRecent commits:\n"));
    assert!(context.contains("use make"));
    assert!(a.system_prompt.ends_with("\n\nextra"));
    assert!(!a.system_prompt.contains("dirty.txt"));

    // An edit changes the git status, so the user context, never the system prompt.
    write(&repo.join("dirty.txt"), "edited");
    write(&repo.join("AGENTS.md"), "use make, edited");
    let after = SessionContext::gather(&opts).await;
    let c = after.render(BASE_SYSTEM_PROMPT, Some("extra"));
    assert_ne!(c.user_context, a.user_context);
    assert_eq!(c.system_prompt.as_bytes(), a.system_prompt.as_bytes());
}

#[tokio::test]
async fn gather_outside_a_repository_has_no_git_snapshot() {
    let tmp = tempfile::tempdir().unwrap();
    let cwd = tmp.path().canonicalize().unwrap();
    let ctx = SessionContext::gather(&options(&cwd.join("home"), &cwd)).await;
    assert!(!ctx.environment.is_git_repo);
    assert_eq!(ctx.git, None);
    assert!(ctx.instructions.is_empty());
    let context = ctx.user_context();
    assert!(!context.contains("# Instructions"));
    assert!(context.contains("Is directory a git repo: No"));
    assert!(!context.contains("gitStatus"));
}
