//! `cargo xtask bench cost` (issue 11): what long use costs, measured on the real `tine`
//! binary against the in-process mock (whose token estimate is bytes / 4 and whose cache
//! accounting follows the API's), each figure printed beside its target.
//!
//! 1. A 100-turn chat (short questions, short answers, ten facts stated along the way, a few
//!    acknowledgements), one `tine -p --input-format stream-json` session paced like a person
//!    (each prompt once the background work of the previous turn is done), with auto memory
//!    off and on: billed-equivalent input (input + 1.25 x cache writes + 0.1 x cache reads)
//!    of every request, memory on (target <= 130k), the ratio on / off (target <= 1.10x),
//!    beside Claude Code's on the same chat (target <= 0.70x of it: measured when
//!    `TINE_BENCH_CLAUDE` names its binary, else the issue's 185,427), what the first
//!    request's prefix holds tool by tool, and how many of the facts were saved. The same chat
//!    runs at several batch sizes (`autoMemoryExtractEvery`), the measurement behind the
//!    default. The mock's extraction fork writes one memory per fact in its window (it tells
//!    windows apart by the fork's turn and the prompt's message count), so a batch that lost
//!    a fact would show. Then a returning user: the same chat with memories from earlier
//!    sessions in the directory, where recall is what costs (12 short memories: the issue's
//!    case, target <= 1.10x; 40 longer ones, shown for scale).
//! 2. Continue after an edit: `tine -p` edits a tracked file in a git repository, then
//!    `tine -c -p` asks again; the share of that last prompt read from the cache (>= 95%).
//! 3. Transcript bytes per turn after 100 and 400 short turns (<= 600 KB at 400, linear).
//! 4. Peak RSS of resuming the 400-turn session with `tine -c -p` (<= 14 MiB), beside the
//!    live session's. Each is measured by a copy of this bench that runs that one `tine`
//!    and reports `getrusage(RUSAGE_CHILDREN)`, so no other child counts.
//! 5. The 7-request tool task (`cost/tool_task.rs`): tine's billed-equivalent input, request by
//!    request, beside Claude Code's on the same scenario when `TINE_BENCH_CLAUDE` is set
//!    (target <= 0.50x).
//!
//! `TINE_BENCH_ONLY=1,5` runs only those parts.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

#[path = "cost/claude_code.rs"]
mod claude_code;
#[path = "cost/prefix.rs"]
mod prefix;
#[path = "cost/tool_task.rs"]
mod tool_task;

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tine_e2e::Project;
use tine_e2e::tine_mock_api::{MockConfig, MockServer, Reply, RequestRecord, Rule, Scenario};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::Command;

use common::{ANSWER, QUESTIONS, git_commit_all, verdict};

/// The first argument that makes this bench the RSS-measuring wrapper of one `tine` run.
const RSS_CHILD: &str = "--cost-bench-rss-child";
const EXTRACTION_MARKER: &str = "<memory-extraction>";
const RECALL_MARKER: &str = "<memory-recall>";

const CHAT_TURNS: usize = 100;
const TARGET_ON_OFF: f64 = 1.10;
const TARGET_ON: f64 = 130_000.0;
/// Claude Code's figure on this chat as the issue quotes it (measured when
/// `TINE_BENCH_CLAUDE` is set).
const CLAUDE_CODE_BILLED: f64 = 185_427.0;
const TARGET_VS_CLAUDE_CODE: f64 = 0.70;
const SWEEP: &[u32] = &[1, 2, 3, 4, 6, 8];
const TARGET_CACHE_SHARE: f64 = 0.95;
const LONG_TURNS: usize = 400;
const TARGET_TRANSCRIPT_BYTES: f64 = 600.0 * 1024.0;
const TARGET_RESUME_RSS_MIB: f64 = 14.0;

const FACTS: &[(usize, &str, &str)] = &[
    (3, "database", "We use PostgreSQL 16 for the main database."),
    (
        12,
        "frontend",
        "Our frontend is React 18 with TypeScript 5.",
    ),
    (
        21,
        "tests",
        "Tests run with Vitest and CI is GitHub Actions.",
    ),
    (
        30,
        "role",
        "I'm the backend lead, so keep frontend answers brief.",
    ),
    (41, "deploys", "Deploys go out on Tuesdays only."),
    (
        52,
        "staging",
        "The staging API lives at staging.example.internal.",
    ),
    (
        63,
        "tabs",
        "Always use tabs, never spaces, in this repository.",
    ),
    (
        74,
        "tracker",
        "We track bugs in Linear, in the TINE project.",
    ),
    (85, "python", "Our Python services run on Python 3.12."),
    (
        96,
        "redis",
        "Redis is only a cache here; never keep sessions in it.",
    ),
];

const ACKS: &[&str] = &[
    "ok",
    "thanks",
    "got it",
    "yes",
    "cool, thanks",
    "makes sense",
];

/// The 100 prompts: a fact on the turns of [`FACTS`], an acknowledgement every 7th turn, a
/// question otherwise.
fn chat_prompts(turns: usize) -> Vec<String> {
    (1..=turns)
        .map(|t| {
            if let Some((_, _, fact)) = FACTS.iter().find(|(at, ..)| *at == t) {
                (*fact).to_owned()
            } else if t % 7 == 0 {
                ACKS[(t / 7) % ACKS.len()].to_owned()
            } else {
                QUESTIONS[t % QUESTIONS.len()].to_owned()
            }
        })
        .collect()
}

/// The chat's model: short answers; the extraction fork writes one memory per fact in its
/// window (window = turns `(t - w, t]` for a fork after turn `t` whose prompt counts `2w`
/// messages), else saves nothing; recall finds nothing relevant.
fn chat_scenario(memory_dir: &Path) -> Scenario {
    let mem = memory_dir.display().to_string();
    let mut scenario = Scenario::new();
    for t in 1..=CHAT_TURNS {
        for w in 1..=t {
            let in_window: Vec<_> = FACTS
                .iter()
                .filter(|(f, ..)| *f > t - w && *f <= t)
                .collect();
            if in_window.is_empty() {
                continue;
            }
            let mut reply = Reply::text("Saving.");
            for (_, slug, fact) in in_window {
                let content = format!(
                    "---\nname: {slug}\ndescription: {fact}\ntype: project\n---\n\n{fact}\n"
                );
                reply = reply.with_tool_use(
                    "Write",
                    json!({"file_path": format!("{mem}/project_{slug}.md"), "content": content}),
                );
            }
            scenario = scenario.rule(
                Rule::new()
                    .marker(&format!("last ~{} messages", 2 * w))
                    .assistant_turns(t)
                    .reply(reply),
            );
        }
    }
    scenario
        .rule(
            Rule::new()
                .marker(EXTRACTION_MARKER)
                .reply(Reply::text("Nothing to save.")),
        )
        .rule(
            Rule::new()
                .marker(RECALL_MARKER)
                .reply(Reply::text(r#"{"selected_memories": []}"#)),
        )
        .rule(Rule::new().tool_results(true).reply(Reply::text("Saved.")))
        .default_reply(Reply::text(ANSWER))
}

/// A git repository with a little in it, so the context has what a real project's has.
fn git_project() -> Project {
    let project = Project::new();
    common::small_git_project(project.cwd());
    project
}

/// `tine` (or, with `rss`, this bench wrapping it) in `project` with a clean environment.
fn tine(project: &Project, server: &MockServer, rss: bool) -> Command {
    let mut command = Command::from(common::tine_command(
        project,
        &server.base_url(),
        rss.then_some(RSS_CHILD),
    ));
    command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    command
}

fn memory_off(command: &mut Command) {
    command.env("TINE_DISABLE_AUTO_MEMORY", "1");
}

/// Waits until the mock has seen no new request for a while: the background work of the
/// turn is done, as it would be while a person reads the answer.
async fn settle(server: &MockServer) {
    let mut seen = server.requests().len();
    let mut quiet = 0;
    while quiet < 3 {
        tokio::time::sleep(Duration::from_millis(20)).await;
        let now = server.requests().len();
        if now == seen {
            quiet += 1;
        } else {
            seen = now;
            quiet = 0;
        }
    }
}

/// What a stream-json session printed and how big its transcript was along the way.
struct Session {
    /// Transcript bytes after each turn whose number is in `stat_after`.
    transcript_bytes: Vec<(usize, u64)>,
    /// The wrapper's report, when run under it.
    peak_rss_kib: Option<u64>,
}

/// Runs `prompts` as one `--input-format stream-json` session, one prompt per result line,
/// `settle`d between turns when `paced`.
async fn stream_session(
    mut command: Command,
    project: &Project,
    server: &MockServer,
    prompts: &[String],
    paced: bool,
    stat_after: &[usize],
) -> Session {
    command.args(common::STREAM_JSON);
    command.stdin(Stdio::piped());
    let mut child = command.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut transcript_bytes = Vec::new();
    for (i, prompt) in prompts.iter().enumerate() {
        let line = json!({"type": "user", "message": {"role": "user", "content": prompt}});
        stdin
            .write_all(format!("{line}\n").as_bytes())
            .await
            .unwrap();
        loop {
            let line = stdout
                .next_line()
                .await
                .unwrap()
                .expect("tine ended mid-session");
            let value: Value = serde_json::from_str(&line).unwrap();
            if value["type"] == "result" {
                assert_eq!(value["is_error"], false, "{value}");
                break;
            }
        }
        if stat_after.contains(&(i + 1)) {
            transcript_bytes.push((i + 1, transcript_size(project)));
        }
        if paced {
            settle(server).await;
        }
    }
    drop(stdin);
    while stdout.next_line().await.unwrap().is_some() {}
    let output = child.wait_with_output().await.unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "tine failed: {stderr}");
    Session {
        transcript_bytes,
        peak_rss_kib: peak_rss(&stderr),
    }
}

fn transcript_size(project: &Project) -> u64 {
    std::fs::read_dir(project.transcripts_dir())
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "jsonl"))
        .map(|e| e.metadata().unwrap().len())
        .sum()
}

fn peak_rss(stderr: &str) -> Option<u64> {
    stderr
        .lines()
        .find_map(|l| l.strip_prefix("peak_rss_kib="))
        .and_then(|v| v.trim().parse().ok())
}

/// Input + 1.25 x cache writes + 0.1 x cache reads; a refused request bills nothing.
fn billed_equivalent(record: &RequestRecord) -> f64 {
    let Some(u) = record.usage else {
        return 0.0;
    };
    u.input_tokens as f64
        + 1.25 * u.cache_creation_input_tokens as f64
        + 0.1 * u.cache_read_input_tokens as f64
}

#[derive(Default)]
struct Chat {
    total: f64,
    main: f64,
    extraction: f64,
    recall: f64,
    forks: usize,
    fork_requests: usize,
    recall_requests: usize,
    remembered: usize,
    /// The extraction requests' usage: uncached input, cache writes, cache reads.
    fork_usage: [u64; 3],
    /// What the session's first request held.
    first: Option<prefix::Breakdown>,
}

/// Memories a returning user has from earlier sessions.
#[derive(Clone, Copy, PartialEq)]
enum Earlier {
    /// A new user.
    None,
    /// 12 short memories (1.8 KB in all).
    Few,
    /// 40 memories of a few hundred bytes each, with the why and how to apply (22 KB).
    Many,
}

const FEW: &[(&str, &str)] = &[
    ("owner", "Checkout is owned by the payments team"),
    ("style", "Prefer small pure functions"),
    ("oncall", "On-call handover is on Mondays"),
    (
        "release",
        "Releases are cut from the main branch on Thursdays",
    ),
    (
        "metrics",
        "Dashboards live in Grafana under the shop folder",
    ),
    ("review", "Two approvals are needed for migrations"),
    ("logging", "Logs go to Loki; keep them structured"),
    ("flags", "Feature flags are managed in Unleash"),
    ("support", "Customer tickets come through Zendesk"),
    ("naming", "Use snake_case for SQL identifiers"),
    ("budget", "Keep p95 latency under 200 ms for checkout"),
    ("vendor", "Payments go through Adyen"),
];

/// Writes the returning user's memories and their index into `memory_dir`.
fn seed_memories(memory_dir: &Path, earlier: Earlier) {
    let memories: Vec<(String, String, String)> = match earlier {
        Earlier::None => return,
        Earlier::Few => FEW
            .iter()
            .map(|(slug, what)| ((*slug).to_owned(), (*what).to_owned(), format!("{what}.")))
            .collect(),
        Earlier::Many => (0..40)
            .map(|i| {
                let (slug, what) = FEW[i % FEW.len()];
                let slug = format!("{slug}_{i}");
                let what = format!("{what} (area {i} of the shop, agreed in review)");
                let body = format!(
                    "{what}.\n\nWhy: the team decided this after an incident in area {i}; the \
                     postmortem is linked from the team wiki.\n\nHow to apply: check this \
                     before changing code in area {i}, and ask the owning team when a change \
                     would go against it. Mention it in the pull request description."
                );
                (slug, what, body)
            })
            .collect(),
    };
    std::fs::create_dir_all(memory_dir).unwrap();
    let mut index = String::new();
    for (slug, what, body) in memories {
        std::fs::write(
            memory_dir.join(format!("project_{slug}.md")),
            format!("---\nname: {slug}\ndescription: {what}\ntype: project\n---\n\n{body}\n"),
        )
        .unwrap();
        index.push_str(&format!("- [{slug}](project_{slug}.md) — {what}\n"));
    }
    std::fs::write(memory_dir.join("MEMORY.md"), index).unwrap();
}

async fn chat(every: Option<u32>, earlier: Earlier) -> Chat {
    let project = git_project();
    let memory_dir = project.root().join("memory");
    seed_memories(&memory_dir, earlier);
    let server = MockServer::start(MockConfig::new(chat_scenario(&memory_dir)).log_limit(100_000))
        .await
        .unwrap();
    let mut command = tine(&project, &server, false);
    match every {
        None => memory_off(&mut command),
        Some(every) => {
            command.env("TINE_MEMORY_DIR", &memory_dir).args([
                "--settings",
                &json!({"autoMemoryExtractEvery": every}).to_string(),
            ]);
        }
    }
    let prompts = chat_prompts(CHAT_TURNS);
    stream_session(command, &project, &server, &prompts, true, &[]).await;
    let mut out = Chat::default();
    for record in server.requests() {
        if out.first.is_none() {
            out.first = record.json().as_ref().map(prefix::Breakdown::of);
        }
        let cost = billed_equivalent(&record);
        let body = String::from_utf8_lossy(&record.body);
        out.total += cost;
        if body.contains(EXTRACTION_MARKER) {
            out.extraction += cost;
            out.fork_requests += 1;
            let u = record.usage.unwrap();
            out.fork_usage[0] += u.input_tokens;
            out.fork_usage[1] += u.cache_creation_input_tokens;
            out.fork_usage[2] += u.cache_read_input_tokens;
            let last = record.json().unwrap()["messages"]
                .as_array()
                .unwrap()
                .last()
                .unwrap()
                .to_string();
            if last.contains(EXTRACTION_MARKER) {
                out.forks += 1;
            }
        } else if body.contains(RECALL_MARKER) {
            out.recall += cost;
            out.recall_requests += 1;
        } else {
            out.main += cost;
        }
    }
    out.remembered = FACTS
        .iter()
        .filter(|(_, slug, _)| memory_dir.join(format!("project_{slug}.md")).exists())
        .count();
    server.stop().await;
    out
}

/// The shipped batch size.
const SHIPPED_EVERY: u32 = tine_memory::DEFAULT_EXTRACT_EVERY;

fn k(tokens: f64) -> String {
    format!("{:.1}k", tokens / 1000.0)
}

/// The same chat run by Claude Code (as it ships: its own memory settings), when
/// `TINE_BENCH_CLAUDE` names it: its billed-equivalent input.
async fn chat_claude() -> Option<f64> {
    let binary = claude_code::binary()?;
    let project = git_project();
    let memory_dir = project.root().join("memory");
    let server = MockServer::start(MockConfig::new(chat_scenario(&memory_dir)).log_limit(100_000))
        .await
        .unwrap();
    let command = claude_code::command(&binary, &project, &server);
    let prompts = chat_prompts(CHAT_TURNS);
    stream_session(command, &project, &server, &prompts, true, &[]).await;
    let records = server.requests();
    let total: f64 = records.iter().map(billed_equivalent).sum();
    let answered = records.iter().filter(|r| r.usage.is_some()).count();
    println!(
        "   Claude Code ({}): {} in {answered} requests",
        claude_code::CLAUDE_ENV,
        k(total)
    );
    if let Some(first) = records
        .iter()
        .find(|r| r.usage.is_some())
        .and_then(RequestRecord::json)
    {
        prefix::Breakdown::of(&first).print("Claude Code's first request");
    }
    server.stop().await;
    Some(total)
}

async fn chat_part() {
    println!("1. {CHAT_TURNS}-turn chat, billed-equivalent input of every request");
    let off = chat(None, Earlier::None).await;
    println!("   memory off                {:>8}", k(off.total));
    let mut shipped = None;
    for &every in SWEEP {
        let on = chat(Some(every), Earlier::None).await;
        let ratio = on.total / off.total;
        println!(
            "   memory on, every {every} turn{} {:>8} = {ratio:.2}x off{}  extraction {} in {} forks ({} requests), recall {} ({} queries), remembered {}/{} facts",
            if every == 1 { " " } else { "s" },
            k(on.total),
            if every == SHIPPED_EVERY {
                " (default)"
            } else {
                "          "
            },
            k(on.extraction),
            on.forks,
            on.fork_requests,
            k(on.recall),
            on.recall_requests,
            on.remembered,
            FACTS.len(),
        );
        if every == SHIPPED_EVERY {
            shipped = Some(on);
        }
    }
    let on = shipped.expect("the default is in the sweep");
    let per = |i: usize| on.fork_usage[i] as f64 / on.fork_requests.max(1) as f64;
    println!(
        "   default: per extraction fork {:.0} billed-equivalent; per request {:.0} tokens uncached (its prompt), {:.0} written, {:.0} read from the cache; main thread {}",
        on.extraction / on.forks.max(1) as f64,
        per(0),
        per(1),
        per(2),
        k(on.main),
    );
    if let Some(first) = &on.first {
        first.print("the first request (memory on)");
    }
    println!(
        "   default: memory on {}                                target <= {}   {}",
        k(on.total),
        k(TARGET_ON),
        verdict(on.total <= TARGET_ON)
    );
    let ratio = on.total / off.total;
    println!(
        "   default: memory on / off = {ratio:.2}x                    target <= {TARGET_ON_OFF}x   {}",
        verdict(ratio <= TARGET_ON_OFF)
    );
    let (theirs, whose) = match chat_claude().await {
        Some(measured) => (measured, "measured here"),
        None => (CLAUDE_CODE_BILLED, "quoted from the issue"),
    };
    let vs = on.total / theirs;
    println!(
        "   memory on vs Claude Code's {} ({whose}) = {vs:.2}x   target <= {TARGET_VS_CLAUDE_CODE}x (<= {})   {}",
        k(theirs),
        k(theirs * TARGET_VS_CLAUDE_CODE),
        verdict(vs <= TARGET_VS_CLAUDE_CODE),
    );
    println!(
        "   remembered {}/{} facts   target {}/{}   {}",
        on.remembered,
        FACTS.len(),
        FACTS.len(),
        FACTS.len(),
        verdict(on.remembered == FACTS.len())
    );
    for (earlier, what) in [
        (Earlier::Few, "12 short memories"),
        (Earlier::Many, "40 memories of ~550 B"),
    ] {
        let back = chat(Some(SHIPPED_EVERY), earlier).await;
        let ratio = back.total / off.total;
        let target = if earlier == Earlier::Few {
            format!(
                "target <= {TARGET_ON_OFF}x   {}",
                verdict(ratio <= TARGET_ON_OFF)
            )
        } else {
            "(beyond the issue's case)".to_owned()
        };
        println!(
            "   returning user ({what} from earlier sessions): {} = {ratio:.2}x off   {target}; recall {} in {} queries, main thread {}",
            k(back.total),
            k(back.recall),
            back.recall_requests,
            k(back.main),
        );
    }
}

async fn continue_part() {
    let project = git_project();
    let file = project.cwd().join("src/app.py");
    let scenario = Scenario::new()
        .rule(
            Rule::new()
                .last_user_contains("rename")
                .tool_results(false)
                .reply(
                    Reply::text("Reading it first.")
                        .with_tool_use("Read", json!({"file_path": file})),
                ),
        )
        .rule(Rule::new().tool_results(true).assistant_turns(1).reply(
            Reply::text("Renaming.").with_tool_use(
                "Edit",
                json!({"file_path": file, "old_string": "foo", "new_string": "bar"}),
            ),
        ))
        .rule(
            Rule::new()
                .tool_results(true)
                .reply(Reply::text("Renamed.")),
        )
        .default_reply(Reply::text("Nothing else needs changing."));
    let server = MockServer::start(MockConfig::new(scenario)).await.unwrap();
    let run = |args: &[&str]| {
        let mut command = tine(&project, &server, false);
        memory_off(&mut command);
        command.args(args);
        command
    };
    let first = run(&[
        "-p",
        "rename foo to bar in src/app.py",
        "--permission-mode",
        "acceptEdits",
    ])
    .output()
    .await
    .unwrap();
    assert!(first.status.success());
    assert!(std::fs::read_to_string(&file).unwrap().contains("def bar"));
    let second = run(&["-c", "-p", "anything else to change?"])
        .output()
        .await
        .unwrap();
    assert!(second.status.success());
    let log = server.requests();
    let last = log.last().unwrap().usage.unwrap();
    let prompt =
        last.input_tokens + last.cache_creation_input_tokens + last.cache_read_input_tokens;
    let share = last.cache_read_input_tokens as f64 / prompt as f64;
    println!(
        "2. tine -c -p after a session that edited a tracked file: {:.1}% of the last prompt ({} tokens) read from the cache   target >= {:.0}%   {}",
        100.0 * share,
        prompt,
        100.0 * TARGET_CACHE_SHARE,
        verdict(share >= TARGET_CACHE_SHARE)
    );
    server.stop().await;
}

async fn long_session_part() {
    let project = git_project();
    let server = MockServer::start(
        MockConfig::new(Scenario::new().default_reply(Reply::text(ANSWER))).log_limit(100_000),
    )
    .await
    .unwrap();
    let prompts = chat_prompts(CHAT_TURNS);
    let prompts: Vec<String> = (0..LONG_TURNS)
        .map(|i| prompts[i % prompts.len()].clone())
        .collect();
    let mut command = tine(&project, &server, true);
    memory_off(&mut command);
    let live = stream_session(
        command,
        &project,
        &server,
        &prompts,
        false,
        &[CHAT_TURNS, LONG_TURNS],
    )
    .await;
    let [(_, at_100), (_, at_400)] = live.transcript_bytes[..] else {
        panic!("transcript sizes: {:?}", live.transcript_bytes)
    };
    let per_100 = at_100 as f64 / CHAT_TURNS as f64;
    let per_400 = at_400 as f64 / LONG_TURNS as f64;
    println!(
        "3. transcript: {CHAT_TURNS} turns {:.0} KB ({per_100:.0} B/turn), {LONG_TURNS} turns {:.0} KB ({per_400:.0} B/turn, {:.2}x the per-turn size at {CHAT_TURNS})   target <= {:.0} KB at {LONG_TURNS}, linear   {}",
        at_100 as f64 / 1024.0,
        at_400 as f64 / 1024.0,
        per_400 / per_100,
        TARGET_TRANSCRIPT_BYTES / 1024.0,
        verdict(at_400 as f64 <= TARGET_TRANSCRIPT_BYTES && per_400 / per_100 <= 1.1)
    );

    let mut command = tine(&project, &server, true);
    memory_off(&mut command);
    command.args(["-c", "-p", "one more question: what is a monad?"]);
    let output = command.output().await.unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "resume failed: {stderr}");
    let resumed = peak_rss(&stderr).expect("the wrapper's report") as f64 / 1024.0;
    let live_mib = live.peak_rss_kib.expect("the wrapper's report") as f64 / 1024.0;
    println!(
        "4. resuming the {LONG_TURNS}-turn session (tine -c -p): peak RSS {resumed:.1} MiB (the live session: {live_mib:.1} MiB)   target <= {TARGET_RESUME_RSS_MIB} MiB   {}",
        verdict(resumed <= TARGET_RESUME_RSS_MIB)
    );
    server.stop().await;
}

/// The wrapper: runs `tine` with the remaining arguments (stdio inherited), then reports the
/// peak RSS of its only child.
fn main() {
    let mut args = std::env::args().skip(1);
    if args.next().as_deref() == Some(RSS_CHILD) {
        common::rss_child(args.collect());
        return;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    println!(
        "cost (issue 11): the real tine binary against the in-process mock; tokens are the mock's estimate (bytes / 4)"
    );
    // `TINE_BENCH_ONLY=1,5` runs those parts alone (all by default).
    let only = std::env::var("TINE_BENCH_ONLY").unwrap_or_default();
    let runs = |part: &str| only.is_empty() || only.split(',').any(|p| p.trim() == part);
    runtime.block_on(async {
        if runs("1") {
            chat_part().await;
        }
        if runs("2") {
            continue_part().await;
        }
        if runs("3") || runs("4") {
            long_session_part().await;
        }
        if runs("5") {
            tool_task::part().await;
        }
    });
}
