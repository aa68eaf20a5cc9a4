//! Grep (content mode: a literal and a regex) and Glob over a large tree, beside ripgrep
//! (`rg` and `rg --files`) when it is installed. Target: at most 1.2x ripgrep's time.
//!
//! The tree is the Rust toolchain's source under `~/.rustup` when present, else a generated
//! ~200 MB tree kept under the temp dir between runs (`TINE_BENCH_TREE` picks another root).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tine_tools::GlobTool;
use tine_tools::GrepTool;
use tine_tools::{Tool, ToolContext, run_tool};

const TARGET_RATIO: f64 = 1.2;
const RUNS: usize = 7;
const GENERATED_FILES: usize = 20_000;
const GENERATED_FILE_BYTES: usize = 10_000;

fn rustup_source() -> Option<PathBuf> {
    let home = std::env::var_os("HOME")?;
    let toolchains = Path::new(&home).join(".rustup/toolchains");
    std::fs::read_dir(toolchains)
        .ok()?
        .flatten()
        .map(|entry| entry.path().join("lib/rustlib/src/rust"))
        .find(|path| path.is_dir())
}

/// A deterministic tree of source-like files: ~200 MB in 20 000 files over 400 directories.
fn generated_tree() -> PathBuf {
    let root = std::env::temp_dir().join("tine-search-bench-200mb");
    let marker = root.join(".complete");
    if marker.exists() {
        return root;
    }
    let _ = std::fs::remove_dir_all(&root);
    eprintln!(
        "generating ~200 MB under {} (kept for later runs)...",
        root.display()
    );
    const WORDS: &[&str] = &[
        "fn", "let", "mut", "value", "self", "struct", "impl", "match", "return", "Result",
        "Option", "String", "usize", "config", "parse", "error", "handle", "request", "buffer",
        "index", "count", "=", "+", "{", "}", "(", ")", ";", "//", "pub", "use", "crate",
    ];
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let extensions = ["rs", "py", "js", "md", "txt"];
    for file in 0..GENERATED_FILES {
        let dir = root.join(format!("d{:02}/s{:02}", file % 20, (file / 20) % 20));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!(
            "f{file:05}.{}",
            extensions[file % extensions.len()]
        ));
        let mut text = String::with_capacity(GENERATED_FILE_BYTES + 100);
        let mut line_len = 0;
        while text.len() < GENERATED_FILE_BYTES {
            let roll = next();
            let word = if roll % 50_000 == 0 {
                "needle_literal_marker"
            } else if roll % 20_011 == 1 {
                "ERROR_CODE_4242"
            } else {
                WORDS[(roll >> 8) as usize % WORDS.len()]
            };
            text.push_str(word);
            line_len += word.len() + 1;
            if line_len > 70 {
                text.push('\n');
                line_len = 0;
            } else {
                text.push(' ');
            }
        }
        std::fs::File::create(&path)
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
    }
    std::fs::write(&marker, "").unwrap();
    root
}

fn tree_size(root: &Path) -> (usize, u64) {
    let mut files = 0;
    let mut bytes = 0;
    for entry in ignore::WalkBuilder::new(root)
        .hidden(false)
        .build()
        .flatten()
    {
        if entry.file_type().is_some_and(|kind| kind.is_file()) {
            files += 1;
            bytes += entry.metadata().map(|m| m.len()).unwrap_or(0);
        }
    }
    (files, bytes)
}

/// The best run: on a shared machine the noise only ever adds time.
fn best(times: Vec<Duration>) -> Duration {
    times.into_iter().min().unwrap_or_default()
}

fn time_tool(
    runtime: &tokio::runtime::Runtime,
    tool: &dyn Tool,
    input: &Value,
    ctx: &ToolContext,
) -> (Duration, String) {
    let started = Instant::now();
    let out = runtime.block_on(run_tool(tool, input.clone(), ctx));
    let elapsed = started.elapsed();
    assert!(!out.is_error, "{}", out.content);
    (elapsed, out.summary)
}

fn rg_installed() -> bool {
    Command::new("rg")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

fn time_rg(args: &[&str], root: &Path) -> Duration {
    let started = Instant::now();
    let output = Command::new("rg")
        .args(args)
        .arg(root)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .output()
        .unwrap();
    let elapsed = started.elapsed();
    drop(output);
    elapsed
}

fn main() {
    let root = std::env::var_os("TINE_BENCH_TREE")
        .map(PathBuf::from)
        .or_else(rustup_source)
        .unwrap_or_else(generated_tree);
    let (files, bytes) = tree_size(&root);
    println!(
        "search: {} ({files} files, {:.0} MB), best time of {RUNS} runs after a warm-up; ratio = median of paired runs",
        root.display(),
        bytes as f64 / 1e6
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let ctx = ToolContext::new(&root);
    let rg = rg_installed();

    let cases: Vec<(&str, &dyn Tool, Value, Vec<&str>)> = vec![
        (
            "Grep literal (content)",
            &GrepTool,
            json!({"pattern": "needle_literal_marker", "output_mode": "content", "head_limit": 0}),
            vec!["--hidden", "-g", "!.git", "-n", "needle_literal_marker"],
        ),
        (
            "Grep regex (content)",
            &GrepTool,
            json!({"pattern": "ERROR_[A-Z]+_\\d{4}", "output_mode": "content", "head_limit": 0}),
            vec!["--hidden", "-g", "!.git", "-n", "ERROR_[A-Z]+_\\d{4}"],
        ),
        (
            "Glob **/*.rs",
            &GlobTool,
            json!({"pattern": "**/*.rs"}),
            vec!["--files", "--hidden", "-g", "!.git", "-g", "*.rs"],
        ),
    ];
    for (name, tool, input, rg_args) in cases {
        // Runs alternate between tine and rg so both see the same load on a shared machine;
        // the first of each is a warm-up (page cache).
        let mut tine_times = Vec::new();
        let mut rg_times = Vec::new();
        let mut summary = String::new();
        for run in 0..=RUNS {
            let (elapsed, said) = time_tool(&runtime, tool, &input, &ctx);
            summary = said;
            let reference = rg.then(|| time_rg(&rg_args, &root));
            if run > 0 {
                tine_times.push(elapsed);
                rg_times.extend(reference);
            }
        }
        let tine = best(tine_times.clone());
        let versus = if rg {
            // The median of paired ratios: each pair ran back to back under the same load, so
            // it is steadier than comparing the two best times on a shared machine.
            let mut ratios: Vec<f64> = tine_times
                .iter()
                .zip(&rg_times)
                .map(|(tine, reference)| tine.as_secs_f64() / reference.as_secs_f64())
                .collect();
            ratios.sort_by(f64::total_cmp);
            let ratio = ratios[ratios.len() / 2];
            let verdict = if ratio <= TARGET_RATIO {
                "ok"
            } else {
                "MISSED"
            };
            format!(
                "rg {:>8.3} s  ratio {ratio:.2}x  {verdict}",
                best(rg_times).as_secs_f64()
            )
        } else {
            "rg not installed; ratio n/a".to_owned()
        };
        println!(
            "  {name:<24} tine {:>8.3} s  {versus}  (target <= {TARGET_RATIO}x)  [{summary}]",
            tine.as_secs_f64()
        );
    }
}
