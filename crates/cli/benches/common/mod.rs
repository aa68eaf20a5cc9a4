//! What the benches share: the binary, the verdict beside a target, the chat the cost and
//! start-up benches both hold, and a small git project. Each bench uses a part of it.

#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

/// The binary under measure, built by cargo for the bench.
pub(crate) const TINE: &str = env!("CARGO_BIN_EXE_tine");

/// What a figure beside its target says: `ok`, or `MISSED`.
pub(crate) fn verdict(ok: bool) -> &'static str {
    if ok { "ok" } else { "MISSED" }
}

/// A duration in milliseconds.
pub(crate) fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// The chat's short questions.
pub(crate) const QUESTIONS: &[&str] = &[
    "How do I reverse a list in Python?",
    "What does git rebase -i do?",
    "Is Vec::with_capacity worth it for small vectors?",
    "What's the difference between a mutex and a semaphore?",
    "How do I undo the last commit but keep the changes?",
    "What does the HTTP 409 status mean?",
    "How do I find which process holds a port on Linux?",
    "When should I use an index on a boolean column?",
    "What is the difference between let and const in TypeScript?",
    "How do I pretty-print JSON with jq?",
    "What does EXPLAIN ANALYZE show in PostgreSQL?",
    "How do I run one test with cargo?",
    "What is a good timeout for an HTTP client?",
    "How do I squash the last three commits?",
    "What does the Rust ? operator do?",
    "How do I list open files of a process?",
    "What's a reasonable connection pool size?",
    "How do I read an environment variable in Node?",
    "What does idempotent mean for an API?",
    "How do I check disk usage of a directory?",
];

/// The chat's short answer.
pub(crate) const ANSWER: &str = "Short answer: yes, that works. Use the standard tool for it, check \
                          the result once, and keep the change small. Say if you want an \
                          example.";

/// A README and a small source file in `dir` (a project's root), committed with `git`, so the
/// context holds what a real project's does.
pub(crate) fn small_git_project(dir: &Path) {
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("README.md"), "# shop\n\nA small web shop.\n").unwrap();
    std::fs::write(dir.join("src/app.py"), "def foo():\n    return 1\n").unwrap();
    git_commit_all(dir);
}

/// `git init` in `dir` and one commit of everything in it.
pub(crate) fn git_commit_all(dir: &Path) {
    for args in [
        &["init", "-q"][..],
        &["add", "-A"],
        &["commit", "-qm", "init"],
    ] {
        let status = Command::new("git")
            .args([
                "-c",
                "user.name=bench",
                "-c",
                "user.email=bench@example.com",
            ])
            .args(args)
            .current_dir(dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .unwrap();
        assert!(status.success(), "git {args:?}");
    }
}
