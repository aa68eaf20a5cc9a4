//! The extraction fork cannot read outside the project and the memory directory, whatever the
//! tool: a key in the user's home stays out of every request and every memory file, read by
//! path, by a shell command, or through a link in the project. The dream fork likewise, and it
//! may read the transcripts it reviews but not write them.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use serde_json::json;
use tine_fork_runtime::BackgroundJob;
use tine_memory::{
    DREAM_MARKER, DreamIo, DreamJob, DreamOptions, DreamStatus, EXTRACTION_MARKER, ExtractionJob,
    ExtractionOptions, ScanThrottle,
};
use tine_mock_api::{MockServer, Reply, Rule, Scenario};
use tine_permissions::{PermissionContext, PermissionMode};

use super::dream_support::{Probe, consolidated_at, past_sessions, transcripts};
use super::harness::{Extracted, World, last_user_has, server, session, session_with};

const SECRET: &str = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA-planted-7f3a";
const NOTE: &str = "project note 4417: deploys go through the staging cluster";

/// The user's home with a planted key, a link to it inside the project, and a note in the
/// project a fork may read.
struct Planted {
    home: PathBuf,
    key: PathBuf,
}

fn plant(world: &World) -> Planted {
    let home = world.root().join("user-home");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    let key = home.join(".ssh/id_rsa");
    std::fs::write(&key, SECRET).unwrap();
    std::os::unix::fs::symlink(home.join(".ssh"), world.cwd.join("keys")).unwrap();
    std::fs::write(world.cwd.join("notes.txt"), NOTE).unwrap();
    Planted { home, key }
}

/// `reply` with the seven ways of reading the key from outside the project: by path, by
/// shell, through the link, by search.
fn outside_reads(reply: Reply, planted: &Planted, world: &World) -> Reply {
    let key = planted.key.display().to_string();
    let cwd = world.cwd.display().to_string();
    reply
        .with_tool_use("Read", json!({"file_path": key}))
        .with_tool_use("Bash", json!({"command": "cat ~/.ssh/id_rsa"}))
        .with_tool_use("Bash", json!({"command": format!("cat {key}")}))
        .with_tool_use("Read", json!({"file_path": format!("{cwd}/keys/id_rsa")}))
        .with_tool_use("Bash", json!({"command": "cat keys/id_rsa"}))
        .with_tool_use(
            "Grep",
            json!({"pattern": "PRIVATE", "path": "keys", "output_mode": "content"}),
        )
        .with_tool_use("Bash", json!({"command": "grep -r PRIVATE ~"}))
}

/// The bodies of every request the mock saw; none holds any line of the key.
fn bodies_without_the_key(server: &MockServer) -> Vec<String> {
    let bodies: Vec<String> = server
        .requests()
        .iter()
        .map(|r| String::from_utf8_lossy(&r.body).into_owned())
        .collect();
    for body in &bodies {
        assert!(!body.contains("planted-7f3a"), "the key reached the model");
        assert!(!body.contains("BEGIN OPENSSH"), "the key reached the model");
    }
    bodies
}

/// No memory file holds the key, and the key itself is untouched.
fn key_kept_out_of_memory(world: &World, planted: &Planted) {
    for file in World::files_under(world.mem()) {
        let text = std::fs::read(world.mem().join(&file)).unwrap();
        assert!(
            !String::from_utf8_lossy(&text).contains("planted-7f3a"),
            "{file} holds the key"
        );
    }
    assert_eq!(std::fs::read_to_string(&planted.key).unwrap(), SECRET);
}

#[tokio::test]
async fn the_extraction_fork_never_reads_a_key_outside_the_project() {
    let world = World::new();
    let planted = plant(&world);
    let cwd = world.cwd.display().to_string();
    let mem = world.mem().display().to_string();
    let attempts = outside_reads(Reply::text("Looking around first."), &planted, &world)
        // An allowed read, so that the mock seeing no secret means something.
        .with_tool_use("Read", json!({"file_path": format!("{cwd}/notes.txt")}));
    let scenario = Scenario::new()
        .rule(Rule::new().marker(EXTRACTION_MARKER).reply(attempts))
        .rule(
            Rule::new().marker("project note 4417").tool_results(true).reply(
                Reply::text("Saving.").with_tool_use(
                    "Write",
                    json!({
                        "file_path": format!("{mem}/project_deploys.md"),
                        "content": "---\nname: Deploys\ndescription: via staging\ntype: project\n---\nDeploys go through staging.\n"
                    }),
                ),
            ),
        )
        .rule(Rule::new().tool_results(true).reply(Reply::text("Done.")))
        .default_reply(Reply::text("OK."));
    let server = server(scenario).await;

    let permissions =
        PermissionContext::new(PermissionMode::Default, &world.cwd).with_home(&planted.home);
    let job = ExtractionJob::for_project(
        world.memory.clone(),
        ExtractionOptions::default(),
        &permissions,
    )
    .unwrap();
    let mut s = session(&world, &server, None, Some(std::sync::Arc::new(job))).await;
    s.engine
        .submit("we deploy through the staging cluster", |_| {})
        .await;
    let outcomes = s.drain().await;
    assert_eq!(
        outcomes[0].summary,
        "saved 1 memory: project_deploys.md",
        "{:?}",
        outcomes[0].data()
    );

    assert!(
        server
            .requests()
            .iter()
            .any(|r| last_user_has(r, EXTRACTION_MARKER))
    );
    // The key, in any of its lines, never reached the mock; the allowed read did.
    let bodies = bodies_without_the_key(&server);
    assert!(bodies.iter().any(|b| b.contains("project note 4417")));
    let results = bodies
        .iter()
        .find(|b| b.contains("Looking around first.") && b.contains("tool_result"))
        .unwrap();
    assert_eq!(
        results.matches("may read only inside").count(),
        7,
        "every outside read refused with its reason: {results}"
    );
    key_kept_out_of_memory(&world, &planted);
}

#[tokio::test]
async fn the_dream_fork_never_reads_a_key_outside_the_project() {
    let world = World::new();
    let planted = plant(&world);
    let start = SystemTime::now();
    consolidated_at(world.mem(), start - Duration::from_secs(72 * 3_600));
    past_sessions(&world, 5, start);

    let cwd = world.cwd.display().to_string();
    let mem = world.mem().display().to_string();
    let sessions = transcripts(&world).display().to_string();
    let attempts = outside_reads(Reply::text("Orienting."), &planted, &world)
        .with_tool_use("Bash", json!({"command": "printenv"}))
        // The transcripts may be read, never written.
        .with_tool_use(
            "Write",
            json!({"file_path": format!("{sessions}/planted.md"), "content": "x"}),
        )
        // Allowed reads: the project and the transcripts the dream reviews.
        .with_tool_use("Read", json!({"file_path": format!("{cwd}/notes.txt")}))
        .with_tool_use(
            "Grep",
            json!({"pattern": "Vitest", "path": sessions, "output_mode": "content", "head_limit": 2}),
        );
    let scenario = Scenario::new()
        .rule(Rule::new().last_user_contains(DREAM_MARKER).reply(attempts))
        .rule(
            Rule::new()
                .tool_results(true)
                .marker("switched from Jest to Vitest")
                .reply(
                    Reply::text("Consolidating.").with_tool_use(
                        "Write",
                        json!({
                            "file_path": format!("{mem}/project_tests.md"),
                            "content": "---\nname: Tests\ndescription: Vitest\ntype: project\n---\nTests run with Vitest.\n"
                        }),
                    ),
                ),
        )
        .rule(
            Rule::new()
                .tool_results(true)
                .marker("has been")
                .reply(Reply::text("Recorded the test runner.")),
        )
        .default_reply(Reply::text("OK."));
    let server = server(scenario).await;

    let permissions =
        PermissionContext::new(PermissionMode::Default, &world.cwd).with_home(&planted.home);
    let job = Arc::new(
        DreamJob::for_project_with_io(
            world.memory.clone(),
            DreamOptions::default(),
            &permissions,
            Probe::at(start) as Arc<dyn DreamIo>,
            ScanThrottle::new(),
        )
        .unwrap(),
    );
    let jobs: Vec<Arc<dyn BackgroundJob>> = vec![job.clone()];
    let mut s = session_with(&world, &server, None, jobs, true).await;
    s.engine.submit("what do we test with?", |_| {}).await;
    s.wait().await;
    let state = job.task().expect("the dream ran").state();
    assert!(
        matches!(state.status, DreamStatus::Completed { .. }),
        "{state:#?}"
    );
    assert_eq!(state.files_touched, ["project_tests.md"]);

    assert!(
        server
            .requests()
            .iter()
            .any(|r| last_user_has(r, DREAM_MARKER))
    );
    let bodies = bodies_without_the_key(&server);
    assert!(bodies.iter().any(|b| b.contains("project note 4417")));
    assert!(
        bodies
            .iter()
            .any(|b| b.contains("we switched from Jest to Vitest")),
        "the transcripts stay readable to the dream"
    );
    let results = bodies
        .iter()
        .find(|b| b.contains("Orienting.") && b.contains("tool_result"))
        .unwrap();
    let results = &results[results.find("tool_result").unwrap()..];
    let results = &results[..results.find("\"tools\"").unwrap_or(results.len())];
    assert_eq!(
        results.matches("may read only inside").count(),
        7,
        "every outside read refused with its reason: {results}"
    );
    assert!(results.contains("`printenv` is not read-only"), "{results}");
    assert!(results.contains("the memory directory and the transcripts"));
    assert_eq!(
        results.matches("outside the memory directory").count(),
        1,
        "the transcripts are not writable: {results}"
    );
    assert!(!transcripts(&world).join("planted.md").exists());
    key_kept_out_of_memory(&world, &planted);
}
