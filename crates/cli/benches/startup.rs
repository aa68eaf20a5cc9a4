//! Start-up benchmark: `tine -p "hello"` as a whole process against a local mock (in-process
//! here, so the only children measured are tine runs): wall time (median of 20 runs, after a
//! warm-up) and peak RSS (the largest `ru_maxrss` of the waited-for children), printed beside the
//! targets (<= 20 ms, <= 16 MiB). For scale: Claude Code's `-p` takes about 340 ms and 203 MiB
//! for the same exchange on this machine.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use nix::sys::resource::{UsageWho, getrusage};
use tine_e2e::Project;
use tine_e2e::tine_mock_api::{MockConfig, MockServer, Reply, Scenario};

const TINE: &str = env!("CARGO_BIN_EXE_tine");
const RUNS: usize = 20;
const TARGET_WALL_MS: f64 = 20.0;
const TARGET_RSS_MIB: f64 = 16.0;

fn tine(project: &Project, base_url: &str) -> Command {
    let mut command = Command::new(TINE);
    command
        .args(["-p", "hello"])
        .current_dir(project.cwd())
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", project.home())
        .env("TINE_HOME", project.home())
        .env("ANTHROPIC_API_KEY", "bench")
        .env("ANTHROPIC_BASE_URL", base_url)
        .stdin(Stdio::null());
    command
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let server = runtime
        .block_on(MockServer::start(MockConfig::new(
            Scenario::new().default_reply(Reply::text("Hello! How can I help?")),
        )))
        .unwrap();
    let base_url = server.base_url();
    let project = Project::new();

    // Warm-up (page cache, the mock's first connection), and the phases once.
    let profiled = tine(&project, &base_url)
        .env("TINE_PROFILE_STARTUP", "1")
        .output()
        .unwrap();
    assert!(
        profiled.status.success(),
        "tine failed: {}",
        String::from_utf8_lossy(&profiled.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&profiled.stdout),
        "Hello! How can I help?\n"
    );

    let mut walls = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let started = Instant::now();
        let output = tine(&project, &base_url)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        walls.push(started.elapsed());
        assert!(
            output.status.success(),
            "tine failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    // Linux reports ru_maxrss in KiB: the largest of all waited-for children (tine runs only).
    let peak_kib = getrusage(UsageWho::RUSAGE_CHILDREN).unwrap().max_rss();
    walls.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let median = ms(walls[RUNS / 2]);
    let peak_mib = peak_kib as f64 / 1024.0;
    let verdict = |ok: bool| if ok { "ok" } else { "OVER TARGET" };

    println!("startup: tine -p \"hello\" against a local mock, {RUNS} runs (whole process)");
    println!("  phases of one run (TINE_PROFILE_STARTUP=1):");
    for line in String::from_utf8_lossy(&profiled.stderr).lines() {
        println!("    {line}");
    }
    println!(
        "  wall time  median {median:6.2} ms (min {:.2}, max {:.2})   target <= {TARGET_WALL_MS} ms   {}",
        ms(walls[0]),
        ms(walls[RUNS - 1]),
        verdict(median <= TARGET_WALL_MS)
    );
    println!(
        "  peak RSS   {peak_mib:6.2} MiB (largest of all runs)        target <= {TARGET_RSS_MIB} MiB  {}",
        verdict(peak_mib <= TARGET_RSS_MIB)
    );
    println!("  reference: Claude Code -p, about 340 ms and 203 MiB on this machine");
    runtime.block_on(server.stop());
}
