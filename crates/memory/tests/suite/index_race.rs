//! Many sessions saving memories at once (issue 10, item 6): every index line ends up in
//! `MEMORY.md` exactly once and no topic file is torn, with writers in one process (each with
//! its own file-state cache, as forks have) and in separate processes (this test binary run
//! again as writer processes). The writers use the real Read, Write and Edit tools, wrapped by
//! `guard_memory_writes` as the CLI wires them, and save the way models do: read the index,
//! think, write it back whole or append with Edit, or write it blind believing it is new.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tine_memory::{INDEX_FILE, guard_memory_writes};
use tine_tools::builtin_tools;
use tine_tools::{Tool, ToolContext, ToolOutput, run_tool};

const WRITERS: usize = 16;
const ROUNDS: usize = 20;

const CHILD_MEM: &str = "TINE_INDEX_RACE_MEM";
const CHILD_PROJECT: &str = "TINE_INDEX_RACE_PROJECT";
const CHILD_WRITER: &str = "TINE_INDEX_RACE_WRITER";

fn entry(writer: usize, round: usize) -> String {
    format!(
        "- [w{writer}r{round}](w{writer}_r{round}.md) — saved by writer {writer} in round {round}"
    )
}

fn topic_body(writer: usize, round: usize) -> String {
    // Big enough that a torn write would show.
    format!(
        "---\nname: w{writer}r{round}\ndescription: writer {writer}, round {round}\ntype: project\n---\n\n{}\n",
        format!("fact {writer}/{round}. ").repeat(200)
    )
}

struct Writer {
    tools: Vec<Arc<dyn Tool>>,
    project: PathBuf,
    mem: PathBuf,
}

/// What the writers saw go wrong.
#[derive(Debug, Default)]
struct Failures(Vec<String>);

impl Writer {
    fn new(tools: Vec<Arc<dyn Tool>>, project: &Path, mem: &Path) -> Self {
        Self {
            tools,
            project: project.to_path_buf(),
            mem: mem.to_path_buf(),
        }
    }

    async fn call(&self, ctx: &ToolContext, name: &str, input: Value) -> ToolOutput {
        let tool = self.tools.iter().find(|t| t.name() == name).unwrap();
        run_tool(tool.as_ref(), input, ctx).await
    }

    /// The index as the model sees it through Read (`None` when there is none).
    async fn read_index(&self, ctx: &ToolContext) -> Option<String> {
        let out = self
            .call(ctx, "Read", json!({"file_path": self.index()}))
            .await;
        if out.is_error {
            return None;
        }
        let lines: Vec<&str> = out
            .content
            .lines()
            .filter_map(|l| l.split_once('\t'))
            .filter(|(n, _)| n.trim().chars().all(|c| c.is_ascii_digit()))
            .map(|(_, text)| text)
            .collect();
        Some(lines.join("\n"))
    }

    fn index(&self) -> String {
        self.mem.join(INDEX_FILE).display().to_string()
    }

    /// One memory saved by a fresh fork (its own file-state cache).
    async fn save(&self, writer: usize, round: usize, failures: &mut Failures) {
        let ctx = ToolContext::new(&self.project);
        let line = entry(writer, round);
        let topic = self.mem.join(format!("w{writer}_r{round}.md"));
        let mut check = |what: &str, out: ToolOutput| {
            if out.is_error {
                failures
                    .0
                    .push(format!("{what} w{writer}r{round}: {}", out.content));
            }
        };
        let out = self
            .call(
                &ctx,
                "Write",
                json!({"file_path": topic.display().to_string(), "content": topic_body(writer, round)}),
            )
            .await;
        check("topic", out);
        let pause = Duration::from_micros(((writer * 7 + round * 13) % 5) as u64 * 400);
        let out = match (writer + round) % 3 {
            0 => {
                // Read, think, write back all it read plus its line.
                let seen = self.read_index(&ctx).await.unwrap_or_default();
                tokio::time::sleep(pause).await;
                let content = if seen.trim().is_empty() {
                    format!("{line}\n")
                } else {
                    format!("{seen}\n{line}\n")
                };
                self.call(
                    &ctx,
                    "Write",
                    json!({"file_path": self.index(), "content": content}),
                )
                .await
            }
            1 => {
                // Read, think, append after the last line it saw.
                let seen = self.read_index(&ctx).await.unwrap_or_default();
                tokio::time::sleep(pause).await;
                match seen.lines().rev().find(|l| !l.trim().is_empty()) {
                    Some(last) => {
                        self.call(
                            &ctx,
                            "Edit",
                            json!({
                                "file_path": self.index(),
                                "old_string": last,
                                "new_string": format!("{last}\n{line}"),
                            }),
                        )
                        .await
                    }
                    None => {
                        self.call(
                            &ctx,
                            "Write",
                            json!({"file_path": self.index(), "content": format!("{line}\n")}),
                        )
                        .await
                    }
                }
            }
            _ => {
                // Never read: it believes there is no index yet.
                tokio::time::sleep(pause).await;
                self.call(
                    &ctx,
                    "Write",
                    json!({"file_path": self.index(), "content": format!("{line}\n")}),
                )
                .await
            }
        };
        check("index", out);
    }
}

struct Scratch {
    _root: tempfile::TempDir,
    project: PathBuf,
    mem: PathBuf,
}

fn scratch() -> Scratch {
    let root = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(root.path()).unwrap();
    let project = base.join("project");
    let mem = base.join("home/projects/p/memory");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::create_dir_all(&mem).unwrap();
    Scratch {
        _root: root,
        project,
        mem,
    }
}

/// Index lines missing (or duplicated), and topic files missing or not whole.
fn audit(mem: &Path) -> Vec<String> {
    let index = std::fs::read_to_string(mem.join(INDEX_FILE)).unwrap_or_default();
    let mut problems = Vec::new();
    for writer in 0..WRITERS {
        for round in 0..ROUNDS {
            let line = entry(writer, round);
            let count = index.lines().filter(|l| *l == line).count();
            if count != 1 {
                problems.push(format!("index line w{writer}r{round} found {count} times"));
            }
            let topic = mem.join(format!("w{writer}_r{round}.md"));
            match std::fs::read_to_string(&topic) {
                Ok(text) if text == topic_body(writer, round) => {}
                Ok(_) => problems.push(format!("topic w{writer}r{round} is not whole")),
                Err(e) => problems.push(format!("topic w{writer}r{round}: {e}")),
            }
        }
    }
    let extra = index.lines().count().saturating_sub(WRITERS * ROUNDS);
    if extra > 0 {
        problems.push(format!("{extra} unexpected index lines"));
    }
    problems
}

async fn race_in_process(tools: Vec<Arc<dyn Tool>>, s: &Scratch) -> Failures {
    let writer = Arc::new(Writer::new(tools, &s.project, &s.mem));
    let mut tasks = Vec::new();
    for id in 0..WRITERS {
        let writer = Arc::clone(&writer);
        tasks.push(tokio::spawn(async move {
            let mut failures = Failures::default();
            for round in 0..ROUNDS {
                writer.save(id, round, &mut failures).await;
            }
            failures
        }));
    }
    let mut all = Failures::default();
    for task in tasks {
        all.0.extend(task.await.unwrap().0);
    }
    all
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_writers_in_one_process_lose_no_memory() {
    let s = scratch();
    let tools = guard_memory_writes(&builtin_tools(), &s.mem).unwrap();
    let failures = race_in_process(tools, &s).await;
    assert!(failures.0.is_empty(), "refused calls: {:#?}", failures.0);
    let problems = audit(&s.mem);
    assert!(problems.is_empty(), "{problems:#?}");
}

/// The same race with the bare tools, to show what the guard prevents. Ignored: whether a race
/// materializes depends on the machine. Run with `--ignored --nocapture` for the figure.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "a measurement of the unguarded tools, not a property of tine"]
async fn unguarded_tools_lose_memories_in_the_same_race() {
    let s = scratch();
    let failures = race_in_process(builtin_tools(), &s).await;
    let problems = audit(&s.mem);
    let lost = problems
        .iter()
        .filter(|p| p.contains("found 0 times"))
        .count();
    println!(
        "unguarded: {lost} of {} index lines lost, {} calls refused",
        WRITERS * ROUNDS,
        failures.0.len()
    );
    assert!(lost > 0);
}

#[tokio::test]
async fn concurrent_writer_processes_lose_no_memory() {
    let s = scratch();
    let exe = std::env::current_exe().unwrap();
    let mut children = Vec::new();
    for writer in 0..WRITERS {
        children.push(
            tokio::process::Command::new(&exe)
                .args([
                    "--exact",
                    "suite::index_race::writer_process",
                    "--ignored",
                    "--test-threads=1",
                    "--nocapture",
                ])
                .env(CHILD_MEM, &s.mem)
                .env(CHILD_PROJECT, &s.project)
                .env(CHILD_WRITER, writer.to_string())
                .kill_on_drop(true)
                .output(),
        );
    }
    for (writer, child) in children.into_iter().enumerate() {
        let out = tokio::time::timeout(Duration::from_secs(60), child)
            .await
            .expect("a writer process hung")
            .unwrap();
        assert!(
            out.status.success(),
            "writer {writer} failed:\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout.contains("1 passed"),
            "writer {writer} did not run:\n{stdout}"
        );
    }
    let problems = audit(&s.mem);
    assert!(problems.is_empty(), "{problems:#?}");
}

/// The child half of `concurrent_writer_processes_lose_no_memory`: one writer process.
#[tokio::test]
#[ignore = "run as a child process by concurrent_writer_processes_lose_no_memory"]
async fn writer_process() {
    let var = |key: &str| std::env::var_os(key).unwrap_or_else(|| panic!("{key} is not set"));
    let mem = PathBuf::from(var(CHILD_MEM));
    let project = PathBuf::from(var(CHILD_PROJECT));
    let writer: usize = var(CHILD_WRITER).to_str().unwrap().parse().unwrap();
    let tools = guard_memory_writes(&builtin_tools(), &mem).unwrap();
    let w = Writer::new(tools, &project, &mem);
    let mut failures = Failures::default();
    for round in 0..ROUNDS {
        w.save(writer, round, &mut failures).await;
    }
    assert!(failures.0.is_empty(), "{:#?}", failures.0);
}
