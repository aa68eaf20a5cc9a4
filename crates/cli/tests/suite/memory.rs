//! Auto memory end to end (seed 001's acceptance scenario): a first session states the stack,
//! the extraction fork saves it on the parent's prompt cache, a second session knows it.

use serde_json::Value;
use tine_e2e::Project;
use tine_e2e::tine_mock_api::Scenario;

use super::{mock, tine};

fn seed001() -> Scenario {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../memory/scenarios/seed001.json");
    Scenario::from_file(&path).unwrap()
}

#[tokio::test]
async fn one_session_states_the_stack_and_the_next_remembers_it() {
    let server = mock(seed001()).await;
    let project = Project::new();

    // Session 1: the user states the stack; the extraction fork writes a topic file + index line.
    let out = tine(&project, &server)
        .env_remove("TINE_DISABLE_AUTO_MEMORY")
        .args([
            "-p",
            "this project uses React 18 and PostgreSQL",
            "--output-format",
            "stream-json",
        ])
        .run()
        .await;
    out.assert_success();
    let lines = out.json_lines();
    let saved = lines
        .iter()
        .find(|l| l["type"] == "system" && l["subtype"] == "memory_saved")
        .unwrap_or_else(|| panic!("no memory_saved line in {lines:#?}"));
    assert!(
        saved["summary"]
            .as_str()
            .unwrap()
            .contains("project_stack.md"),
        "{saved}"
    );
    assert_eq!(lines.last().unwrap()["type"], "result");

    // The fork's first request read the parent's whole cached prefix from the cache.
    let log = server.requests();
    let parent = log[0].usage.unwrap();
    let fork = log
        .iter()
        .find(|r| String::from_utf8_lossy(&r.body).contains("<memory-extraction>"))
        .expect("an extraction request");
    let fork_usage = fork.usage.unwrap();
    let parent_cached = parent.cache_read_input_tokens + parent.cache_creation_input_tokens;
    assert!(parent_cached > 0, "{parent:?}");
    assert!(
        fork_usage.cache_read_input_tokens >= parent_cached,
        "fork read {} of the parent's {parent_cached} cached tokens",
        fork_usage.cache_read_input_tokens
    );

    // `tine memory list` shows it; `show` prints it.
    let list = tine(&project, &server)
        .env_remove("TINE_DISABLE_AUTO_MEMORY")
        .args(["memory", "list"])
        .run()
        .await;
    list.assert_success();
    assert!(list.stdout.contains("project_stack.md"), "{}", list.stdout);
    let shown = tine(&project, &server)
        .env_remove("TINE_DISABLE_AUTO_MEMORY")
        .args(["memory", "show", "project_stack"])
        .run()
        .await;
    shown.assert_success();
    assert!(shown.stdout.contains("PostgreSQL"), "{}", shown.stdout);

    // Session 2: the index is in the context, recall attaches the file, the model knows.
    let before = server.requests().len();
    let out = tine(&project, &server)
        .env_remove("TINE_DISABLE_AUTO_MEMORY")
        .args([
            "-p",
            "which database does this project use?",
            "--output-format",
            "json",
        ])
        .run()
        .await;
    out.assert_success();
    let result = out.json();
    assert!(
        result["result"]
            .as_str()
            .unwrap()
            .contains("From memory: this project uses PostgreSQL"),
        "{result}"
    );
    let bodies: Vec<Value> = server.requests()[before..]
        .iter()
        .filter_map(|r| r.json())
        .collect();
    let main = bodies
        .iter()
        .find(|b| {
            let text = b.to_string();
            text.contains("which database") && !text.contains("<memory-recall>")
        })
        .expect("the main request");
    let first_user = main["messages"][0].to_string();
    assert!(
        first_user.contains("[Project stack](project_stack.md)"),
        "index in context"
    );
    assert!(
        first_user.contains("React 18 for the frontend"),
        "recalled file attached"
    );
}

#[tokio::test]
async fn memory_is_off_with_bare_and_with_the_env_switch() {
    let server = mock(seed001()).await;
    let project = Project::new();
    for args in [vec!["--bare"], vec![]] {
        let mut run = tine(&project, &server);
        if !args.is_empty() {
            run = run.env_remove("TINE_DISABLE_AUTO_MEMORY");
        }
        let mut all = vec!["-p", "this project uses React 18 and PostgreSQL"];
        all.extend(args);
        run.args(all).run().await.assert_success();
    }
    let bodies: Vec<String> = server
        .requests()
        .iter()
        .map(|r| String::from_utf8_lossy(&r.body).into_owned())
        .collect();
    assert_eq!(bodies.len(), 2, "no extraction fork ran");
    assert!(bodies.iter().all(|b| !b.contains("<memory-extraction>")));
    let path = tine(&project, &server).args(["memory", "path"]).run().await;
    assert!(
        path.stdout.contains("auto memory is off"),
        "{}",
        path.stdout
    );
}
