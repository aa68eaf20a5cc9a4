//! `cargo xtask bench checkpoints`: the cost of a checkpoint on a generated 10,000-file
//! repository. A snapshot when nothing changed (target <= 50 ms, and no object written), and
//! after 100 files changed (target <= 250 ms). Also the plan and the rewind of those 100 files,
//! for information.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use tine_checkpoints::{CheckpointConfig, Checkpoints, TurnSnapshots};

const FILES: usize = 10_000;
const CHANGED: usize = 100;
const RUNS: usize = 15;

fn file(i: usize) -> String {
    format!("src/m{:02}/n{:02}/file{i:05}.txt", i % 40, (i / 40) % 25)
}

fn objects(store: &Path, project: &Path) -> u64 {
    let out = Command::new("git")
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("GIT_DIR", store.join("git"))
        .env("GIT_WORK_TREE", project)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .args(["count-objects", "-v"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(": ")?;
            matches!(k, "count" | "in-pack").then(|| v.parse::<u64>().ok())?
        })
        .sum()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn median(mut v: Vec<Duration>) -> (Duration, Duration) {
    v.sort();
    (v[v.len() / 2], v[v.len() - 1])
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    let store = dir.path().join("store");
    for i in 0..FILES {
        let path = project.join(file(i));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, format!("line one of {i}\nline two\n")).unwrap();
    }
    std::fs::write(project.join(".gitignore"), "target/\n").unwrap();
    let cp = Checkpoints::open(&store, &project, CheckpointConfig::default()).unwrap();
    let start = Instant::now();
    let first = cp.snapshot().unwrap();
    let first_took = start.elapsed();
    // Past the racy-timestamp window of the files just written, as a real project is.
    std::thread::sleep(Duration::from_millis(1100));
    cp.snapshot().unwrap();

    let objects_before = objects(&store, &project);
    let mut idle = Vec::new();
    for _ in 0..RUNS {
        let start = Instant::now();
        let s = cp.snapshot().unwrap();
        idle.push(start.elapsed());
        assert_eq!(s.id, first.id, "nothing changed: the same snapshot");
    }
    let objects_after = objects(&store, &project);

    let mut busy = Vec::new();
    let mut last = first.clone();
    for run in 0..RUNS {
        for k in 0..CHANGED {
            let i = (run * CHANGED + k * 97) % FILES;
            std::fs::write(project.join(file(i)), format!("changed in run {run}\n")).unwrap();
        }
        let start = Instant::now();
        let s = cp.snapshot().unwrap();
        busy.push(start.elapsed());
        assert_ne!(s.id, last.id);
        last = s;
    }
    let changed = cp.changed(&first, &last).unwrap().len();

    let start = Instant::now();
    let plan = cp
        .plan_rewind(
            &[TurnSnapshots {
                before: first.clone(),
                after: last.clone(),
            }],
            0,
        )
        .unwrap();
    let plan_took = start.elapsed();
    let start = Instant::now();
    let report = cp.apply(&plan, false).unwrap();
    let apply_took = start.elapsed();
    let back = cp.snapshot().unwrap();
    assert_eq!(
        cp.changed(&first, &back).unwrap(),
        Vec::<std::path::PathBuf>::new(),
        "the rewind is exact"
    );

    let (idle_p50, idle_max) = median(idle);
    let (busy_p50, busy_max) = median(busy);
    println!(
        "checkpoints bench: {FILES} files, first snapshot {:.0} ms, {RUNS} runs each",
        ms(first_took)
    );
    println!(
        "(a) snapshot, nothing changed: p50 {:.1} ms, max {:.1} ms (target <= 50 ms)",
        ms(idle_p50),
        ms(idle_max)
    );
    println!(
        "    objects in the store before {objects_before}, after {objects_after} (target: the same, nothing copied)"
    );
    println!(
        "(b) snapshot after {CHANGED} files changed: p50 {:.1} ms, max {:.1} ms (target <= 250 ms)",
        ms(busy_p50),
        ms(busy_max)
    );
    println!(
        "    rewind of {changed} changed files: plan {:.1} ms, apply {:.1} ms ({} restored)",
        ms(plan_took),
        ms(apply_took),
        report.restored.len()
    );
    assert_eq!(
        objects_before, objects_after,
        "a snapshot of nothing new copied objects"
    );
}
