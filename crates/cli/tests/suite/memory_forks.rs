//! The memory forks of the real binary read only inside the project (plus the memory directory
//! and, for a dream, the transcripts), under the session's deny rules: the extraction fork and
//! the auto dream of a `-p` session, and `tine memory dream`, each try a key in `~/.ssh`, a file
//! beside the project and a denied project file, by path and by shell; none of them reaches a
//! request or a file tine writes.

use std::path::Path;
use std::time::{Duration, SystemTime};

use serde_json::{Value, json};
use tine_e2e::Project;
use tine_e2e::tine_mock_api::{MockServer, Reply, Rule, Scenario};
use tine_memory::{Acquire, ConsolidationLock, default_memory_dir};

use super::{mock, plant_ssh_key, text_under, tine};

const KEY: &str = "FORK-SSH-KEY-MATERIAL-61c2";
const OUTSIDE: &str = "FORK-OUTSIDE-SECRET-0b7e";
const DENIED: &str = "FORK-DENIED-PROJECT-TOKEN-93aa";
const REFUSED: &str = "may read only inside";

/// `~/.ssh/id_rsa` (HOME is the project's home), a file beside the project, and a project file
/// a deny rule of the project's settings covers.
fn plant(project: &Project) {
    plant_ssh_key(project, KEY);
    std::fs::write(project.root().join("beside.txt"), OUTSIDE).unwrap();
    project.write("private/token.txt", DENIED);
    project.write(
        ".tine/settings.json",
        &json!({"permissions": {"deny": ["Read(./private/**)"]}}).to_string(),
    );
    // A dream after one past session (project settings cannot tune it).
    std::fs::write(
        project.home().join("settings.json"),
        json!({"autoDreamMinSessions": 1}).to_string(),
    )
    .unwrap();
}

/// The reads every fork tries: 7 refused ones, in this order.
fn attempts(project: &Project, text: &str) -> Reply {
    let home = project.home().display().to_string();
    let root = project.root().display().to_string();
    let cwd = project.cwd().display().to_string();
    Reply::text(text)
        .with_tool_use("Read", json!({"file_path": format!("{home}/.ssh/id_rsa")}))
        .with_tool_use("Bash", json!({"command": "cat ~/.ssh/id_rsa"}))
        .with_tool_use("Read", json!({"file_path": format!("{root}/beside.txt")}))
        .with_tool_use("Bash", json!({"command": "cat ../beside.txt"}))
        .with_tool_use(
            "Read",
            json!({"file_path": format!("{cwd}/private/token.txt")}),
        )
        .with_tool_use("Bash", json!({"command": "cat private/token.txt"}))
        .with_tool_use(
            "Grep",
            json!({"pattern": "KEY", "path": home, "output_mode": "content"}),
        )
}

fn model(project: &Project) -> Scenario {
    let dream = attempts(project, "Dreaming.")
        // The transcripts it reviews are readable.
        .with_tool_use(
            "Grep",
            json!({"pattern": "remember", "path": "${t}", "output_mode": "content", "head_limit": 3}),
        );
    Scenario::new()
        .rule(
            Rule::new()
                .last_user_regex(r"Memory directory \(absolute path; you may write only inside it\): (?P<dir>\S+)")
                .unwrap()
                .reply(attempts(project, "Extracting.")),
        )
        .rule(
            Rule::new()
                .last_user_regex(r"(?s)Consolidate the auto memory in `(?P<dir>[^`]+)`.*transcripts `(?P<t>[^`]+)/<id>\.jsonl`")
                .unwrap()
                .reply(dream),
        )
        .rule(Rule::new().tool_results(true).reply(Reply::text("Nothing to keep.")))
        .default_reply(Reply::text("OK."))
}

/// The tool results of the request that answered the fork whose reply began with `text`.
fn results_after(server: &MockServer, text: &str) -> String {
    let quoted = format!("\"text\":\"{text}\"");
    server
        .requests()
        .iter()
        .filter(|r| String::from_utf8_lossy(&r.body).contains(&quoted))
        .filter_map(|r| r.json())
        .map(|body: Value| {
            body["messages"]
                .as_array()
                .unwrap()
                .last()
                .unwrap()
                .to_string()
        })
        .next()
        .unwrap_or_else(|| panic!("no tool results after {text:?}"))
}

fn assert_nothing_leaked(project: &Project, server: &MockServer) {
    for record in server.requests() {
        let body = String::from_utf8_lossy(&record.body);
        for secret in [KEY, OUTSIDE, DENIED] {
            assert!(!body.contains(secret), "{secret} reached the model");
        }
    }
    let written = text_under(project.home());
    for secret in [KEY, OUTSIDE, DENIED] {
        assert!(
            !written.contains(secret),
            "{secret} is in a file tine wrote"
        );
    }
}

fn consolidated_two_days_ago(mem: &Path) {
    std::fs::create_dir_all(mem).unwrap();
    match ConsolidationLock::try_acquire(mem, |_| true).unwrap() {
        Acquire::Acquired(lock) => lock
            .commit(SystemTime::now() - Duration::from_secs(48 * 3_600))
            .unwrap(),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_sessions_extraction_and_dream_forks_never_read_outside_the_project() {
    let project = Project::new();
    plant(&project);
    let server = mock(model(&project)).await;
    let run = |prompt: &'static str| {
        tine(&project, &server)
            .env_remove("TINE_DISABLE_AUTO_MEMORY")
            .args(["-p", prompt, "--output-format", "stream-json"])
            .run()
    };
    run("remember: we deploy on Fridays").await.assert_success();
    consolidated_two_days_ago(&default_memory_dir(project.home(), project.cwd()));
    let out = run("remember: staging first").await;
    out.assert_success();
    let lines = out.json_lines();
    assert!(
        lines
            .iter()
            .any(|l| l["subtype"] == "dream" && l["status"] == "finished"),
        "the dream ran: {lines:#?}"
    );

    let extraction = results_after(&server, "Extracting.");
    assert_eq!(extraction.matches(REFUSED).count(), 7, "{extraction}");
    let dream = results_after(&server, "Dreaming.");
    assert_eq!(dream.matches(REFUSED).count(), 7, "{dream}");
    assert!(
        dream.contains(".jsonl:1:"),
        "the dream reads the transcripts: {dream}"
    );
    // The deny rule is the session's, carried into the forks.
    assert!(dream.contains("private/token.txt"), "{dream}");
    assert_nothing_leaked(&project, &server);
}

#[tokio::test]
async fn tine_memory_dream_never_reads_outside_the_project() {
    let project = Project::new();
    plant(&project);
    let server = mock(model(&project)).await;
    tine(&project, &server)
        .env_remove("TINE_DISABLE_AUTO_MEMORY")
        .args(["-p", "remember: we deploy on Fridays"])
        .run()
        .await
        .assert_success();
    let out = tine(&project, &server)
        .env_remove("TINE_DISABLE_AUTO_MEMORY")
        .args(["memory", "dream"])
        .run()
        .await;
    out.assert_success();
    let dream = results_after(&server, "Dreaming.");
    assert_eq!(dream.matches(REFUSED).count(), 7, "{dream}");
    assert!(
        dream.contains(".jsonl:1:"),
        "the dream reads the transcripts: {dream}"
    );
    assert_nothing_leaked(&project, &server);
}
