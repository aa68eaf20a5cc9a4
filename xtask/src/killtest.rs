//! `cargo xtask killtest [--trials N] [--seed S] [--keep]`: kill -9 the real `tine -p` at a
//! random moment, N times, and check that nothing it writes is ever left broken.
//!
//! One project and one TINE_HOME for all trials, so state builds up as it does for a user: each
//! trial starts `tine -p` (a new session, or `-c` on the last one) against a local `tine-mock`
//! whose script makes the model run Bash and makes the memory extraction fork write a topic file
//! (about 30 KB) and `MEMORY.md`; the run is SIGKILLed at a random moment in a window a bit
//! longer than an uninterrupted run. Then, and again after an uninterrupted `tine -c -p`:
//! - every transcript line is a JSON record, except a torn last line (the reader's contract)
//!   and, after a later append, a former torn last line, which the reader skips and reports;
//! - `tine -c -p` resumes (exit 0, a success result) and its memory extraction does not fail;
//! - `MEMORY.md` holds only whole index lines and each topic file is exactly one of the
//!   contents ever written to it (so its frontmatter is valid): never a torn file;
//! - stray files (an atomic write's temporary file cut short) are counted, and must not show up
//!   in `tine memory list` nor make it fail.

use std::collections::BTreeSet;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use crate::demo::{Mock, build_binaries, start_mock};
use crate::workspace_root;

/// The lock files tine keeps in a memory directory on purpose (tine-memory's
/// `WRITE_LOCK_FILE` and `CONSOLIDATION_LOCK_FILE`): not stray files.
const LOCK_FILES: [&str; 2] = [".write-lock", ".consolidate-lock"];

const FACTS: [&str; 3] = ["alpha", "beta", "gamma"];

/// The extraction fork's topic file for `fact`, with the mock's `${fact}` placeholders.
fn topic_template() -> String {
    let mut body = String::from(
        "---\nname: Fact ${fact}\ndescription: the ${fact} fact of the kill test\ntype: project\n---\n\n",
    );
    for line in 0..600 {
        body.push_str(&format!(
            "Line {line} about ${{fact}}: long enough that writing it takes a moment.\n"
        ));
    }
    body
}

fn topic_content(fact: &str) -> String {
    topic_template().replace("${fact}", fact)
}

fn index_line(fact: &str) -> String {
    format!("- [Fact {fact}](fact_{fact}.md) — the {fact} fact of the kill test")
}

fn scenario() -> Value {
    json!({
        "latency_ms": 3,
        "chunk_delay_ms": 0,
        "rules": [
            {
                "name": "extract",
                "when": {
                    "last_user_any": {"regex": "you may write only inside it\\): (?P<dir>\\S+)"},
                    "first_user_text": {"regex": "fact-(?P<fact>alpha|beta|gamma)"}
                },
                "reply": {"content": [
                    {"type": "text", "text": "Saving the ${fact} fact."},
                    // Write refuses an existing file not read first (a later session's fork).
                    {"type": "tool_use", "name": "Read", "input": {"file_path": "${dir}/fact_${fact}.md"}},
                    {"type": "tool_use", "name": "Read", "input": {"file_path": "${dir}/MEMORY.md"}},
                    {"type": "tool_use", "name": "Write", "input": {
                        "file_path": "${dir}/fact_${fact}.md",
                        "content": topic_template()
                    }},
                    {"type": "tool_use", "name": "Write", "input": {
                        "file_path": "${dir}/MEMORY.md",
                        "content": format!("{}\n", index_line("${fact}"))
                    }}
                ]}
            },
            {
                "name": "recall",
                "when": {"last_user_any": "<memory-recall>"},
                "reply": "{\"selected_memories\": [\"fact_alpha.md\"]}"
            },
            {"name": "after-tools", "when": {"tool_results": true}, "reply": "Done."},
            {
                "name": "work",
                "when": {"last_user_text": "killtest"},
                "reply": {"content": [
                    {"type": "text", "text": "Working on it."},
                    {"type": "tool_use", "name": "Bash", "input": {"command": "echo working; sleep 0.02"}}
                ]}
            }
        ],
        "default": "OK."
    })
}

/// A small xorshift generator: reproducible trials from a printed seed, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

struct Options {
    trials: u64,
    seed: u64,
    keep: bool,
}

fn options(args: &[String]) -> Result<Options> {
    let mut options = Options {
        trials: 1000,
        seed: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64)
            | 1,
        keep: false,
    };
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        let mut number = |name: &str| -> Result<u64> {
            let value = rest
                .next()
                .with_context(|| format!("`{name}` needs a number"))?;
            value
                .parse()
                .with_context(|| format!("`{name} {value}` is not a number"))
        };
        match arg.as_str() {
            "--trials" => options.trials = number("--trials")?,
            "--seed" => options.seed = number("--seed")?.max(1),
            "--keep" => options.keep = true,
            other => bail!(
                "unknown option `{other}`: cargo xtask killtest [--trials N] [--seed S] [--keep]"
            ),
        }
    }
    Ok(options)
}

/// The harness's state across trials.
struct Harness {
    tine: PathBuf,
    project: PathBuf,
    home: PathBuf,
    base_url: String,
    /// Torn last lines seen after a kill, by file: a later append makes them complete but
    /// invalid lines, which the reader skips and reports.
    torn: BTreeSet<(PathBuf, Vec<u8>)>,
    stray: BTreeSet<String>,
}

/// What one check found wrong.
type Problems = Vec<String>;

impl Harness {
    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(&self.tine);
        command
            .args(args)
            .current_dir(&self.project)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("TINE_HOME", &self.home)
            .env("TINE_MANAGED_SETTINGS", self.home.join("no-managed.json"))
            .env("ANTHROPIC_API_KEY", "killtest")
            .env("ANTHROPIC_BASE_URL", &self.base_url)
            .stdin(Stdio::null());
        command
    }

    /// An uninterrupted run; its stream-json lines and how long it took.
    fn run_to_end(&self, args: &[&str]) -> Result<(Vec<Value>, Duration, Problems)> {
        let started = Instant::now();
        let output = self
            .command(args)
            .args(["--output-format", "stream-json"])
            .stderr(Stdio::piped())
            .output()
            .context("running tine")?;
        let elapsed = started.elapsed();
        let lines: Vec<Value> = String::from_utf8_lossy(&output.stdout)
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        let mut problems = Vec::new();
        let result = lines.iter().rev().find(|l| l["type"] == "result");
        if !output.status.success() || result.is_none_or(|r| r["subtype"] != "success") {
            problems.push(format!(
                "`tine {}` failed ({}): {}",
                args.join(" "),
                output.status,
                String::from_utf8_lossy(&output.stderr).trim()
            ));
        }
        for line in &lines {
            if line["type"] == "system" && line["status"] == "failed" {
                problems.push(format!(
                    "background job {} failed: {}",
                    line["job"], line["summary"]
                ));
            }
        }
        Ok((lines, elapsed, problems))
    }

    fn memory_dir(&self) -> Result<PathBuf> {
        let output = self
            .command(&["memory", "path"])
            .output()
            .context("running tine memory path")?;
        let text = String::from_utf8_lossy(&output.stdout);
        let path = text.split('\t').next().unwrap_or_default().trim();
        if !output.status.success() || path.is_empty() {
            bail!("`tine memory path` failed: {text}");
        }
        Ok(PathBuf::from(path))
    }

    fn check(&mut self, after_kill: bool) -> Result<Problems> {
        let mut problems = Vec::new();
        let projects = self.home.join("projects");
        let memory = self.memory_dir()?;
        let mut files = Vec::new();
        walk(&projects, &memory, &mut files);
        for file in files
            .iter()
            .filter(|f| f.extension().is_some_and(|e| e == "jsonl"))
        {
            self.check_transcript(file, after_kill, &mut problems)?;
        }
        self.check_memory(&memory, &mut problems)?;
        Ok(problems)
    }

    fn check_transcript(
        &mut self,
        file: &Path,
        after_kill: bool,
        problems: &mut Problems,
    ) -> Result<()> {
        let bytes = std::fs::read(file).with_context(|| format!("reading {}", file.display()))?;
        let mut lines: Vec<&[u8]> = bytes.split(|b| *b == b'\n').collect();
        // After the last newline: empty, or a torn last line.
        let tail = lines.pop().unwrap_or_default();
        if !tail.is_empty() && serde_json::from_slice::<Value>(tail).is_err() {
            if after_kill {
                self.torn.insert((file.to_path_buf(), tail.to_vec()));
            } else if !self.torn.contains(&(file.to_path_buf(), tail.to_vec())) {
                problems.push(format!(
                    "{}: torn last line after a clean run",
                    file.display()
                ));
            }
        }
        for (number, line) in lines.iter().enumerate() {
            if line.is_empty() || serde_json::from_slice::<Value>(line).is_ok() {
                continue;
            }
            if !self.torn.contains(&(file.to_path_buf(), line.to_vec())) {
                problems.push(format!(
                    "{}:{}: a complete line that is not JSON and was never a torn last line",
                    file.display(),
                    number + 1
                ));
            }
        }
        Ok(())
    }

    fn check_memory(&mut self, memory: &Path, problems: &mut Problems) -> Result<()> {
        let Ok(entries) = std::fs::read_dir(memory) else {
            return Ok(()); // not created yet
        };
        let index_lines: Vec<String> = FACTS.iter().map(|f| index_line(f)).collect();
        for entry in entries.filter_map(Result::ok) {
            let name = entry.file_name().to_string_lossy().into_owned();
            let path = entry.path();
            let known_topic = FACTS.iter().find(|f| name == format!("fact_{f}.md"));
            if LOCK_FILES.contains(&name.as_str()) {
                // tine's own lock files, kept on purpose (never listed as memories).
                continue;
            }
            if name == "MEMORY.md" {
                let text = std::fs::read(&path)?;
                let Ok(text) = String::from_utf8(text) else {
                    problems.push("MEMORY.md is not UTF-8 (torn in a character)".to_owned());
                    continue;
                };
                if !text.is_empty() && !text.ends_with('\n') {
                    problems.push(format!("MEMORY.md is torn (no final newline): {text:?}"));
                }
                for line in text.lines().filter(|l| !l.trim().is_empty()) {
                    if !index_lines.iter().any(|l| l == line) && !line.starts_with("# ") {
                        problems.push(format!("MEMORY.md holds a torn or unknown line: {line:?}"));
                    }
                }
            } else if let Some(fact) = known_topic {
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                if text != topic_content(fact) {
                    problems.push(format!(
                        "{name} is torn: {} bytes of {}, frontmatter {}",
                        text.len(),
                        topic_content(fact).len(),
                        if valid_frontmatter(&text) {
                            "valid"
                        } else {
                            "invalid"
                        }
                    ));
                }
            } else {
                self.stray.insert(name);
            }
        }
        // Stray files must not break the memory commands.
        let output = self.command(&["memory", "list"]).output()?;
        let listing = String::from_utf8_lossy(&output.stdout);
        if !output.status.success() {
            problems.push(format!(
                "`tine memory list` failed: {}",
                String::from_utf8_lossy(&output.stderr)
            ));
        }
        for stray in &self.stray {
            if listing.lines().any(|l| l.starts_with(stray.as_str())) {
                problems.push(format!("stray file {stray} is listed as a memory"));
            }
        }
        Ok(())
    }
}

fn valid_frontmatter(text: &str) -> bool {
    let Some(rest) = text.strip_prefix("---\n") else {
        return false;
    };
    let Some((head, _)) = rest.split_once("\n---\n") else {
        return false;
    };
    ["name:", "description:", "type:"]
        .iter()
        .all(|key| head.lines().any(|l| l.starts_with(key)))
}

/// Every file under `dir`, except the memory directory's.
fn walk(dir: &Path, memory: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path();
        if path == memory {
            continue;
        }
        if path.is_dir() {
            walk(&path, memory, out);
        } else {
            out.push(path);
        }
    }
}

pub(crate) fn run(args: &[String]) -> Result<()> {
    let options = options(args)?;
    let root = workspace_root();
    let target = build_binaries(&root)?;
    let scratch = std::env::temp_dir().join(format!("tine-killtest-{}", std::process::id()));
    let project = scratch.join("project");
    let home = scratch.join("home");
    std::fs::create_dir_all(&project).context("creating the scratch project")?;
    std::fs::create_dir_all(&home).context("creating the scratch TINE_HOME")?;
    // Private copies: the trials go on for a while, and a rebuild meanwhile must not change
    // (or half-write) the binary under test.
    let bin = scratch.join("bin");
    std::fs::create_dir_all(&bin)?;
    for name in ["tine", "tine-mock"] {
        std::fs::copy(target.join(name), bin.join(name))
            .with_context(|| format!("copying {name} into the scratch directory"))?;
    }
    let target = bin;
    let scenario_path = scratch.join("scenario.json");
    std::fs::write(&scenario_path, serde_json::to_vec_pretty(&scenario())?)?;
    let mock: Mock = start_mock(&target, &scenario_path)?;
    let mut harness = Harness {
        tine: target.join("tine"),
        project: std::fs::canonicalize(&project)?,
        home: std::fs::canonicalize(&home)?,
        base_url: mock.base_url.clone(),
        torn: BTreeSet::new(),
        stray: BTreeSet::new(),
    };
    let outcome = trials(&mut harness, &options);
    drop(mock);
    match &outcome {
        Ok(0) if !options.keep => {
            let _ = std::fs::remove_dir_all(&scratch);
        }
        _ => println!("scratch kept for inspection: {}", scratch.display()),
    }
    match outcome? {
        0 => Ok(()),
        failures => bail!("{failures} of {} trial(s) failed", options.trials),
    }
}

/// Runs the trials; returns how many failed.
fn trials(harness: &mut Harness, options: &Options) -> Result<u64> {
    let mut rng = Rng(options.seed);
    println!("killtest: {} trials, seed {}", options.trials, options.seed);
    // One clean session first: it calibrates the kill window and gives `-c` a session.
    let (lines, clean, problems) =
        harness.run_to_end(&["-p", "killtest trial 0: remember fact-alpha"])?;
    if !problems.is_empty() {
        bail!("the calibration run failed: {}", problems.join("; "));
    }
    if !lines.iter().any(|l| l["subtype"] == "memory_saved") {
        bail!("the calibration run saved no memory: the scenario no longer drives extraction");
    }
    let window = (clean.as_millis() as u64 * 13 / 10).max(50);
    println!(
        "clean run: {} ms; kills land in 0..{window} ms",
        clean.as_millis()
    );
    let (mut failures, mut killed_mid_run, mut finished_first, mut memory_saved) = (0, 0, 0, 0);
    let mut resumes_ok = 0;
    let started = Instant::now();
    for trial in 1..=options.trials {
        let fact = FACTS[rng.below(3) as usize];
        let prompt = format!("killtest trial {trial}: remember fact-{fact}");
        let mut args = vec!["-p", prompt.as_str(), "--output-format", "stream-json"];
        let resumed = rng.below(2) == 0;
        if resumed {
            args.insert(0, "-c");
        }
        let delay = Duration::from_millis(rng.below(window));
        let mut child = harness
            .command(&args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .context("starting tine")?;
        std::thread::sleep(delay);
        let finished = child.try_wait()?.is_some();
        if finished {
            finished_first += 1;
        } else {
            killed_mid_run += 1;
            child.kill().context("SIGKILL")?;
        }
        let status = child.wait()?;
        let mut problems = Vec::new();
        if finished && !status.success() {
            let mut stderr = String::new();
            if let Some(mut pipe) = child.stderr.take() {
                let _ = pipe.read_to_string(&mut stderr);
            }
            problems.push(format!(
                "run exited {status} before the kill: {}",
                stderr.trim()
            ));
        }
        problems.extend(harness.check(true)?);
        let resume_prompt = format!("killtest resume {trial}");
        let (lines, _, resume_problems) = harness.run_to_end(&["-c", "-p", &resume_prompt])?;
        if resume_problems.is_empty() {
            resumes_ok += 1;
        }
        problems.extend(resume_problems);
        if lines.iter().any(|l| l["subtype"] == "memory_saved") {
            memory_saved += 1;
        }
        problems.extend(harness.check(false)?);
        let what = format!(
            "{} session, {} at {} ms",
            if resumed { "continued" } else { "new" },
            if finished {
                "finished before the kill"
            } else {
                "killed"
            },
            delay.as_millis()
        );
        if problems.is_empty() {
            if trial % 50 == 0 || trial == options.trials {
                println!(
                    "trial {trial}/{}: ok ({what}); {} failed so far, {:.0} s",
                    options.trials,
                    failures,
                    started.elapsed().as_secs_f64()
                );
            }
        } else {
            failures += 1;
            println!("trial {trial}: FAILED ({what})");
            for problem in &problems {
                println!("  - {problem}");
            }
        }
    }
    println!();
    println!("killtest summary (seed {}):", options.seed);
    let row = |label: &str, value: String| println!("  {label:<24} {value}");
    row("trials", options.trials.to_string());
    row("killed mid-run", killed_mid_run.to_string());
    row("finished before kill", finished_first.to_string());
    row("failed trials", failures.to_string());
    row(
        "resumes that ran clean",
        format!("{resumes_ok} of {}", options.trials),
    );
    row(
        "resumes changing memory",
        format!("{memory_saved} of {}", options.trials),
    );
    row(
        "torn last lines seen",
        format!(
            "{} (tolerated: the reader skips and reports them)",
            harness.torn.len()
        ),
    );
    row(
        "stray files",
        format!(
            "{}{}",
            harness.stray.len(),
            if harness.stray.is_empty() {
                String::new()
            } else {
                format!(
                    " ({}; none listed as a memory)",
                    harness
                        .stray
                        .iter()
                        .take(5)
                        .cloned()
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            }
        ),
    );
    row("time", format!("{:.0} s", started.elapsed().as_secs_f64()));
    Ok(failures)
}
