//! tine's own state on disk, through the binary (issue 10, items 5, 6 and 10): every directory
//! and file under `TINE_HOME` is private; directories whose paths sanitize alike keep their
//! sessions apart, and `--continue` never crosses over, also from a folder an older version
//! shared; sessions saving memories at once lose none.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::json;
use tine_e2e::Project;
use tine_e2e::tine_mock_api::{MockServer, Reply, Rule, Scenario};

use super::{mock, tine};

fn words_scenario() -> Scenario {
    Scenario::new()
        .rule(
            Rule::new()
                .last_user_contains("what was the word")
                .first_user_regex(r"remember the word (?P<word>\w+)")
                .unwrap()
                .reply(Reply::text("The word was ${word}.")),
        )
        .rule(
            Rule::new()
                .last_user_contains("remember the word")
                .reply(Reply::text("Noted.")),
        )
        .default_reply(Reply::text("I do not know."))
}

/// Two directories under the project's scratch root whose paths sanitize to the same name.
fn look_alike_dirs(project: &Project) -> (PathBuf, PathBuf) {
    let dash = project.root().join("my-app");
    let underscore = project.root().join("my_app");
    std::fs::create_dir_all(&dash).unwrap();
    std::fs::create_dir_all(&underscore).unwrap();
    (
        std::fs::canonicalize(dash).unwrap(),
        std::fs::canonicalize(underscore).unwrap(),
    )
}

/// `tine -p PROMPT --output-format json` in `dir`, with `extra` flags first.
async fn run_in(
    project: &Project,
    server: &MockServer,
    dir: &Path,
    extra: &[&str],
    prompt: &str,
) -> tine_e2e::RunOutput {
    let mut args: Vec<String> = vec!["--cwd".into(), dir.display().to_string()];
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    args.extend([
        "-p".into(),
        prompt.into(),
        "--output-format".into(),
        "json".into(),
    ]);
    tine(project, server).args(args).run().await
}

#[tokio::test]
async fn directories_that_sanitize_alike_never_continue_each_others_sessions() {
    let server = mock(words_scenario()).await;
    let project = Project::new();
    let (dash, underscore) = look_alike_dirs(&project);

    let first = run_in(&project, &server, &dash, &[], "remember the word banana").await;
    first.assert_success();
    let dash_id = first.json()["session_id"].as_str().unwrap().to_owned();

    // `-c` in the look-alike directory has nothing to continue.
    let out = run_in(
        &project,
        &server,
        &underscore,
        &["--continue"],
        "what was the word?",
    )
    .await;
    assert_eq!(out.code(), Some(1), "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains("no session to continue"),
        "{}",
        out.stderr
    );

    let second = run_in(
        &project,
        &server,
        &underscore,
        &[],
        "remember the word cherry",
    )
    .await;
    second.assert_success();
    let underscore_id = second.json()["session_id"].as_str().unwrap().to_owned();

    for (dir, id, word) in [
        (&dash, &dash_id, "banana"),
        (&underscore, &underscore_id, "cherry"),
    ] {
        let out = run_in(
            &project,
            &server,
            dir,
            &["--continue"],
            "what was the word?",
        )
        .await;
        out.assert_success();
        let json = out.json();
        assert_eq!(json["session_id"], id.as_str(), "{}", dir.display());
        assert_eq!(json["result"], format!("The word was {word}."));
    }
    // Two folders, each holding its own directory's session only.
    let folders: Vec<PathBuf> = [&dash, &underscore]
        .iter()
        .map(|dir| tine_query_loop_project_dir(&project, dir))
        .collect();
    assert_ne!(folders[0], folders[1]);
    assert!(folders[0].join(format!("{dash_id}.jsonl")).is_file());
    assert!(folders[1].join(format!("{underscore_id}.jsonl")).is_file());
}

fn tine_query_loop_project_dir(project: &Project, dir: &Path) -> PathBuf {
    let folders: Vec<PathBuf> = std::fs::read_dir(project.home().join("projects"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            std::fs::read_dir(p).unwrap().flatten().any(|e| {
                e.path().extension().is_some_and(|x| x == "jsonl")
                    && std::fs::read_to_string(e.path())
                        .unwrap()
                        .contains(&format!("\"cwd\":{}", json!(dir.display().to_string())))
            })
        })
        .collect();
    assert_eq!(folders.len(), 1, "{} is in {folders:?}", dir.display());
    folders.into_iter().next().unwrap()
}

#[tokio::test]
async fn a_folder_an_older_version_shared_is_split_and_continue_stays_home() {
    let server = mock(words_scenario()).await;
    let project = Project::new();
    let (dash, underscore) = look_alike_dirs(&project);
    let a = run_in(&project, &server, &dash, &[], "remember the word banana").await;
    a.assert_success();
    let a = a.json()["session_id"].as_str().unwrap().to_owned();
    let b = run_in(
        &project,
        &server,
        &underscore,
        &[],
        "remember the word cherry",
    )
    .await;
    b.assert_success();
    let b = b.json()["session_id"].as_str().unwrap().to_owned();

    // Lay the two sessions out as an older version did: one folder named after the sanitized
    // path, shared by both directories (the underscore one written last).
    let projects = project.home().join("projects");
    let legacy = projects.join(
        dash.display()
            .to_string()
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect::<String>(),
    );
    std::fs::create_dir_all(&legacy).unwrap();
    for (dir, id) in [(&dash, &a), (&underscore, &b)] {
        let folder = tine_query_loop_project_dir(&project, dir);
        std::fs::rename(
            folder.join(format!("{id}.jsonl")),
            legacy.join(format!("{id}.jsonl")),
        )
        .unwrap();
        std::fs::remove_dir_all(folder).unwrap();
    }

    let out = run_in(
        &project,
        &server,
        &dash,
        &["--continue"],
        "what was the word?",
    )
    .await;
    out.assert_success();
    assert_eq!(out.json()["session_id"], a.as_str());
    assert_eq!(out.json()["result"], "The word was banana.");
    assert!(out.stderr.contains("moved"), "{}", out.stderr);
    assert!(
        legacy.join(format!("{b}.jsonl")).is_file(),
        "the other's session stays"
    );

    let out = run_in(
        &project,
        &server,
        &underscore,
        &["--continue"],
        "what was the word?",
    )
    .await;
    out.assert_success();
    assert_eq!(out.json()["session_id"], b.as_str());
    assert_eq!(out.json()["result"], "The word was cherry.");
    assert!(!legacy.exists(), "the rest was adopted whole");
}

/// A memory-saving scenario: the main thread notes the fact; the extraction fork (recognized
/// by the memory directory its prompt names) writes a topic file and, blind, as a model told
/// there is no index yet would, `MEMORY.md` with its one line.
fn facts_scenario() -> Scenario {
    let topic = "---\nname: ${fact}\ndescription: the user's ${fact}\ntype: project\n---\n\nThe user stated ${fact}.\n";
    let scenario = json!({
        "rules": [
            {
                "name": "extract",
                "when": {
                    "last_user_any": {"regex": "you may write only inside it\\): (?P<dir>\\S+)"},
                    "first_user_text": {"regex": "remember (?P<fact>fact-\\d+)"},
                    "tool_results": false
                },
                "reply": {"content": [
                    {"type": "text", "text": "Saving it."},
                    {"type": "tool_use", "name": "Write",
                     "input": {"file_path": "${dir}/${fact}.md", "content": topic}},
                    {"type": "tool_use", "name": "Write",
                     "input": {"file_path": "${dir}/MEMORY.md",
                               "content": "- [${fact}](${fact}.md) — stated by the user\n"}}
                ]}
            },
            {"name": "after-tools", "when": {"tool_results": true}, "reply": "Saved."}
        ],
        "default": "Noted."
    });
    Scenario::from_json(&scenario.to_string(), "facts").unwrap()
}

#[tokio::test]
async fn sessions_saving_memories_at_once_lose_none() {
    const SESSIONS: usize = 8;
    const ROUNDS: usize = 3;
    let server = mock(facts_scenario()).await;
    let project = Project::new();
    let mut n = 0;
    for _ in 0..ROUNDS {
        let mut runs = Vec::new();
        for _ in 0..SESSIONS {
            n += 1;
            let run = tine(&project, &server)
                .env_remove("TINE_DISABLE_AUTO_MEMORY")
                .args(["-p", &format!("remember fact-{n}")]);
            runs.push(tokio::spawn(run.run()));
        }
        for run in runs {
            run.await.unwrap().assert_success();
        }
    }
    let mem = memory_dir(&project);
    let index = std::fs::read_to_string(mem.join("MEMORY.md")).unwrap();
    let missing: Vec<usize> = (1..=n)
        .filter(|k| {
            index
                .lines()
                .filter(|l| l.starts_with(&format!("- [fact-{k}](fact-{k}.md)")))
                .count()
                != 1
        })
        .collect();
    assert!(
        missing.is_empty(),
        "facts missing from MEMORY.md: {missing:?}\n{index}"
    );
    for k in 1..=n {
        assert!(mem.join(format!("fact-{k}.md")).is_file(), "fact-{k}.md");
    }
}

fn memory_dir(project: &Project) -> PathBuf {
    let found: Vec<PathBuf> = std::fs::read_dir(project.home().join("projects"))
        .unwrap()
        .map(|e| e.unwrap().path().join("memory"))
        .filter(|p| p.is_dir())
        .collect();
    assert_eq!(found.len(), 1, "{found:?}");
    found.into_iter().next().unwrap()
}

#[tokio::test]
async fn everything_tine_creates_under_its_home_is_private() {
    let server = mock(facts_scenario()).await;
    let project = Project::new();
    // A home tine creates itself (the scratch one exists already).
    let home = project.root().join("fresh-home/.tine");
    let out = tine(&project, &server)
        .env_remove("TINE_DISABLE_AUTO_MEMORY")
        .env("TINE_HOME", &home)
        .env("TINE_LOG", "debug")
        .args(["-p", "remember fact-1"])
        .run()
        .await;
    out.assert_success();

    let mut seen = Vec::new();
    walk(&home, &mut seen);
    let kinds = |suffix: &str| seen.iter().filter(|(p, _)| p.ends_with(suffix)).count();
    // What a run with auto memory and logging creates: the log, a transcript, the memory.
    assert_eq!(kinds("logs/tine.log"), 1, "{seen:#?}");
    assert_eq!(kinds(".jsonl"), 1, "{seen:#?}");
    assert_eq!(kinds("memory/MEMORY.md"), 1, "{seen:#?}");
    assert_eq!(kinds("memory/fact-1.md"), 1, "{seen:#?}");
    let loose: Vec<_> = seen
        .iter()
        .filter(|(path, mode)| {
            let want = if Path::new(path).is_dir() {
                0o700
            } else {
                0o600
            };
            // Git keeps its objects read-only: owner-only too.
            let read_only_object = path.contains("/checkpoints/git/objects/") && *mode == 0o400;
            *mode != want && !read_only_object
        })
        .collect();
    assert!(loose.is_empty(), "not private: {loose:#?}");
}

/// Every path at and below `dir`, with its mode.
fn walk(dir: &Path, out: &mut Vec<(String, u32)>) {
    let mode = std::fs::symlink_metadata(dir).unwrap().permissions().mode() & 0o777;
    out.push((dir.display().to_string(), mode));
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if entry.file_type().unwrap().is_dir() {
            walk(&path, out);
        } else {
            let mode = entry.metadata().unwrap().permissions().mode() & 0o777;
            out.push((path.display().to_string(), mode));
        }
    }
}
