//! Magic Docs end to end (seed 001 scenario B) through the `tine` binary: read
//! `src/ARCHITECTURE.md` (a Magic Doc), state the architecture, and the fork updates the file;
//! in one process (stream-json input) and across `-c`. Off by a setting: no fork, no bytes.

use serde_json::{Value, json};
use tine_e2e::Project;
use tine_e2e::tine_mock_api::{MockServer, Reply, Rule, Scenario};

use super::{mock, tine};

const DOC: &str = "# MAGIC DOC: System Architecture\n\
                   _Keep this document up to date with key architectural decisions._\n\
                   \n\
                   ## Overview\n\
                   (nothing recorded yet)\n";
const MARKER: &str = "<magic-docs-update>";
const READ: &str = "please read src/ARCHITECTURE.md";
const STATE: &str = "we use hexagonal architecture, the core domain depends on no framework, \
                     adapters connect external systems";

fn scenario() -> Scenario {
    Scenario::new()
        .rule(
            Rule::new()
                .last_user_contains(READ)
                .reply(Reply::tool_use("Read", json!({"file_path": "src/ARCHITECTURE.md"}))),
        )
        // The fork after the second turn (read: two assistant messages; statement: one more).
        .rule(
            Rule::new()
                .marker(MARKER)
                .assistant_turns(3)
                .last_user_regex(r#"<magic-doc path="(?P<path>[^"]+)">"#)
                .unwrap()
                .reply(Reply::text("Recording it.").with_tool_use(
                    "Edit",
                    json!({
                        "file_path": "${path}",
                        "old_string": "(nothing recorded yet)",
                        "new_string": "Hexagonal architecture: the core domain depends on no framework; adapters connect external systems."
                    }),
                )),
        )
        .rule(Rule::new().marker(MARKER).reply(Reply::text("Nothing to change.")))
        .rule(Rule::new().tool_results(true).reply(Reply::text("It is a Magic Doc about the architecture.")))
        .default_reply(Reply::text("Understood."))
}

fn project() -> Project {
    let project = Project::new();
    project.write("src/ARCHITECTURE.md", DOC);
    project
}

fn user_line(text: &str) -> String {
    json!({"type": "user", "message": {"role": "user", "content": text}}).to_string()
}

fn fork_requests(server: &MockServer) -> Vec<Value> {
    server
        .requests()
        .iter()
        .filter_map(|r| r.json())
        .filter(|b| {
            b["messages"]
                .as_array()
                .and_then(|m| m.last())
                .is_some_and(|m| m.to_string().contains(MARKER))
        })
        .collect()
}

fn assert_updated(project: &Project) {
    let text = project.read("src/ARCHITECTURE.md");
    assert!(
        text.starts_with("# MAGIC DOC: System Architecture\n_Keep this document up to date"),
        "{text}"
    );
    assert!(text.contains("Hexagonal architecture"), "{text}");
    assert!(!text.contains("(nothing recorded yet)"), "{text}");
}

#[tokio::test]
async fn scenario_b_in_one_process_with_stream_json_input() {
    let server = mock(scenario()).await;
    let project = project();
    let out = tine(&project, &server)
        .args([
            "-p",
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
        ])
        .stdin(format!("{}\n{}\n", user_line(READ), user_line(STATE)))
        .run()
        .await;
    out.assert_success();
    assert_updated(&project);
    let lines = out.json_lines();
    let updated = lines
        .iter()
        .find(|l| l["job"] == "magic_docs" && l["data"]["status"] == "updated")
        .unwrap_or_else(|| panic!("no magic_docs update line in {lines:#?}"));
    assert!(
        updated["summary"]
            .as_str()
            .unwrap()
            .contains("ARCHITECTURE.md"),
        "{updated}"
    );
    let forks = fork_requests(&server);
    let prompt = forks.last().unwrap()["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .to_string();
    let path = project.cwd().join("src/ARCHITECTURE.md");
    assert!(prompt.contains(&path.display().to_string()), "{prompt}");
    assert!(prompt.contains("# MAGIC DOC: System Architecture"));
    assert!(prompt.contains("Keep this document up to date with key architectural decisions."));
}

#[tokio::test]
async fn scenario_b_across_continue_tracks_from_the_transcript() {
    let server = mock(scenario()).await;
    let project = project();
    tine(&project, &server)
        .args(["-p", READ])
        .run()
        .await
        .assert_success();
    assert_eq!(
        fork_requests(&server).len(),
        1,
        "a fork after the reading turn"
    );
    assert!(
        project
            .read("src/ARCHITECTURE.md")
            .contains("(nothing recorded yet)")
    );

    tine(&project, &server)
        .args(["-c", "-p", STATE])
        .run()
        .await
        .assert_success();
    assert_eq!(fork_requests(&server).len(), 2);
    assert_updated(&project);
}

#[tokio::test]
async fn off_by_a_setting_no_fork_and_no_bytes() {
    let server = mock(scenario()).await;
    let project = project();
    project.write(".tine/settings.json", r#"{"magicDocsEnabled": false}"#);
    let out = tine(&project, &server)
        .args(["-p", "--input-format", "stream-json"])
        .stdin(format!("{}\n{}\n", user_line(READ), user_line(STATE)))
        .run()
        .await;
    out.assert_success();
    assert!(fork_requests(&server).is_empty());
    assert!(
        server
            .requests()
            .iter()
            .all(|r| !String::from_utf8_lossy(&r.body).contains("magic-doc")),
        "no Magic Docs bytes in any request"
    );
    assert_eq!(project.read("src/ARCHITECTURE.md"), DOC);
    // Exactly the main thread's requests: read, its follow-up, the statement.
    assert_eq!(server.requests().len(), 3);
}
