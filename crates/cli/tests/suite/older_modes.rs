//! State an older tine left group and world readable (0755 directories, 0644 files) is made
//! private at the next start, through the binary (issue 10, item 5): TINE_HOME, `projects/`,
//! this project's folder, `memory/` and `logs/` become 0700; the log, the resumed transcript
//! and the memory files 0600. What is not tine's own, or not this run's, keeps its mode.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::json;
use tine_e2e::Project;
use tine_e2e::tine_mock_api::Scenario;

use super::{mock, tine};

fn scenario() -> Scenario {
    let scenario = json!({
        "rules": [
            {
                "name": "extract",
                "when": {
                    "last_user_any": {"regex": "you may write only inside it\\): (?P<dir>\\S+)"},
                    "tool_results": false
                },
                "reply": {"content": [
                    {"type": "text", "text": "Saving it."},
                    {"type": "tool_use", "name": "Write",
                     "input": {"file_path": "${dir}/fact.md",
                               "content": "---\nname: fact\ndescription: a fact\ntype: project\n---\nA fact.\n"}}
                ]}
            },
            {"name": "after-tools", "when": {"tool_results": true}, "reply": "Saved."}
        ],
        "default": "Noted."
    });
    Scenario::from_json(&scenario.to_string(), "modes").unwrap()
}

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path)
        .unwrap()
        .permissions()
        .mode()
        & 0o777
}

fn set_mode(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Every path at and below `dir` (links not followed).
fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    out.push(dir.to_path_buf());
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        if entry.file_type().unwrap().is_dir() {
            walk(&entry.path(), out);
        } else {
            out.push(entry.path());
        }
    }
}

#[tokio::test]
async fn state_an_older_tine_left_readable_is_made_private_at_start() {
    let server = mock(scenario()).await;
    let project = Project::new();
    let home = project.home().to_path_buf();
    let run = |extra: &[&str]| {
        let mut args = extra.to_vec();
        args.extend([
            "-p",
            "the deploy target is staging",
            "--output-format",
            "json",
        ]);
        tine(&project, &server)
            .env_remove("TINE_DISABLE_AUTO_MEMORY")
            .env("TINE_LOG", "debug")
            .args(args)
            .run()
    };
    let first = run(&[]).await;
    first.assert_success();
    let session = first.json()["session_id"].as_str().unwrap().to_owned();

    // What an older tine left behind: everything under TINE_HOME 0755 / 0644, an older
    // memory file among them, beside a project file and state this run does not use.
    let memory: Vec<PathBuf> = std::fs::read_dir(home.join("projects"))
        .unwrap()
        .map(|e| e.unwrap().path().join("memory"))
        .filter(|p| p.is_dir())
        .collect();
    let [memory] = memory.as_slice() else {
        panic!("one memory directory expected: {memory:?}");
    };
    std::fs::write(memory.join("old_note.md"), "from an older tine").unwrap();
    let mut tine_state = Vec::new();
    walk(&home, &mut tine_state);
    for path in &tine_state {
        set_mode(path, if path.is_dir() { 0o755 } else { 0o644 });
    }
    let other_project = home.join("projects/-somewhere-else-0123456789ab");
    std::fs::create_dir_all(&other_project).unwrap();
    set_mode(&other_project, 0o755);
    std::fs::write(other_project.join("s.jsonl"), "{}\n").unwrap();
    set_mode(&other_project.join("s.jsonl"), 0o644);
    let project_file = project.write("src/main.rs", "fn main() {}\n");
    set_mode(&project_file, 0o644);
    set_mode(project_file.parent().unwrap(), 0o755);
    set_mode(project.cwd(), 0o755);

    let second = run(&["--resume", &session]).await;
    second.assert_success();

    let loose: Vec<(String, u32)> = tine_state
        .iter()
        .filter(|p| {
            let want = if p.is_dir() { 0o700 } else { 0o600 };
            mode(p) != want
        })
        .map(|p| (p.display().to_string(), mode(p)))
        .collect();
    assert!(loose.is_empty(), "still readable by others: {loose:#?}");
    let names = |suffix: &str| tine_state.iter().filter(|p| p.ends_with(suffix)).count();
    // The paths named in the issue are among them.
    assert_eq!(names("logs/tine.log"), 1, "{tine_state:#?}");
    assert_eq!(names(format!("{session}.jsonl").as_str()), 1);
    assert_eq!(names("memory/old_note.md"), 1);
    assert_eq!(names("memory/fact.md"), 1);
    assert!(tine_state.contains(&home.join("projects")));
    // Not tine's own, or not this run's: untouched.
    assert_eq!(mode(&project_file), 0o644);
    assert_eq!(mode(project_file.parent().unwrap()), 0o755);
    assert_eq!(mode(project.cwd()), 0o755);
    assert_eq!(mode(&other_project), 0o755);
    assert_eq!(mode(&other_project.join("s.jsonl")), 0o644);
}
