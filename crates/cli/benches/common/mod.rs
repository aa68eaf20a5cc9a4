//! What the benches share: the binary run in a clean environment (or measured by a copy of
//! the bench, for its peak RSS), the verdict beside a target, the chat the cost and start-up
//! benches both hold, and a small git project. Each bench uses a part of it.

#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

/// The binary under measure, built by cargo for the bench.
pub(crate) const TINE: &str = env!("CARGO_BIN_EXE_tine");

/// The flags of a headless session that reads and writes stream-json (Claude Code wants
/// `--verbose` with stream-json output; tine takes it).
pub(crate) const STREAM_JSON: [&str; 6] = [
    "-p",
    "--input-format",
    "stream-json",
    "--output-format",
    "stream-json",
    "--verbose",
];

/// `tine` in `project` against `base_url` with a clean environment: no managed settings, the
/// project's home as `HOME` and `TINE_HOME`. With `rss_flag`, this bench is run with that flag
/// first and runs `tine` itself ([`rss_child`]), so its peak RSS is the only child's.
pub(crate) fn tine_command(
    project: &tine_e2e::Project,
    base_url: &str,
    rss_flag: Option<&str>,
) -> Command {
    let mut command = match rss_flag {
        Some(flag) => {
            let mut c = Command::new(std::env::current_exe().unwrap());
            c.arg(flag);
            c
        }
        None => Command::new(TINE),
    };
    command
        .current_dir(project.cwd())
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", project.home())
        .env("TINE_HOME", project.home())
        .env(
            "TINE_MANAGED_SETTINGS",
            project.root().join("no-managed.json"),
        )
        .env("ANTHROPIC_API_KEY", "bench")
        .env("ANTHROPIC_BASE_URL", base_url)
        .stdin(Stdio::null());
    command
}

/// The bench run as [`tine_command`]'s wrapper: runs `tine ARGS`, reports the peak RSS of its
/// children (`peak_rss_kib=` on stderr) and exits with tine's status.
pub(crate) fn rss_child(args: Vec<String>) {
    let status = Command::new(TINE).args(args).status().unwrap();
    let usage =
        nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN).unwrap();
    // Linux reports ru_maxrss in KiB.
    eprintln!("peak_rss_kib={}", usage.max_rss());
    std::process::exit(status.code().unwrap_or(1));
}

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
