//! Magic Docs against the mock (seed 001 scenario B, in process): Read tracks a Magic Doc,
//! the fork after the next turn reads the parent's cached prefix, may Edit that file and is
//! refused everything else by its sandbox, through the real tools.

use std::sync::Arc;

use serde_json::json;
use tine_fork_runtime::BackgroundJob;
use tine_memory::{MAGIC_DOCS_JOB, MAGIC_DOCS_MARKER, MagicDocs, MagicDocsJob};
use tine_mock_api::{Reply, Rule, Scenario};
use tine_test_support::{api_usage, last_user_has};

use super::harness::{World, server, session};

const DOC: &str = "# MAGIC DOC: System Architecture\n\
                   _Keep this document up to date with key architectural decisions._\n\
                   \n\
                   ## Overview\n\
                   (nothing recorded yet)\n";

fn scenario(world: &World) -> Scenario {
    let other = world.cwd.join("other.md").display().to_string();
    Scenario::new()
        // Turn 1: the model reads the doc.
        .rule(
            Rule::new()
                .last_user_contains("read src/ARCHITECTURE.md")
                .reply(Reply::tool_use("Read", json!({"file_path": "src/ARCHITECTURE.md"}))),
        )
        // The fork after turn 2 (four assistant messages before its prompt): everything it
        // may not do, and the one edit it may.
        .rule(
            Rule::new()
                .marker(MAGIC_DOCS_MARKER)
                .assistant_turns(4)
                .last_user_regex(r#"<magic-doc path="(?P<path>[^"]+)">"#)
                .unwrap()
                .reply(
                    Reply::text("Recording the architecture.")
                        .with_tool_use("Write", json!({"file_path": other, "content": "x"}))
                        .with_tool_use(
                            "Edit",
                            json!({"file_path": other, "old_string": "keep", "new_string": "gone"}),
                        )
                        .with_tool_use("Bash", json!({"command": format!("touch {other}.bash")}))
                        .with_tool_use("Read", json!({"file_path": other}))
                        .with_tool_use(
                            "Edit",
                            json!({
                                "file_path": "${path}",
                                "old_string": "(nothing recorded yet)",
                                "new_string": "Hexagonal architecture: the core domain depends on no framework; adapters connect external systems."
                            }),
                        ),
                ),
        )
        .rule(
            Rule::new()
                .marker(MAGIC_DOCS_MARKER)
                .reply(Reply::text("Nothing to change.")),
        )
        .rule(Rule::new().tool_results(true).reply(Reply::text("Done.")))
        .default_reply(Reply::text("Understood."))
}

#[tokio::test]
async fn a_read_magic_doc_is_kept_true_by_a_cache_sharing_fork_that_may_edit_only_it() {
    let world = World::new();
    std::fs::create_dir_all(world.cwd.join("src")).unwrap();
    let doc = world.cwd.join("src/ARCHITECTURE.md");
    std::fs::write(&doc, DOC).unwrap();
    std::fs::write(world.cwd.join("other.md"), "keep\n").unwrap();
    let server = server(scenario(&world)).await;
    let docs = MagicDocs::new();
    let job = Arc::new(MagicDocsJob::new(docs.clone(), None));
    let mut s = session(&world, &server, None, Some(job as Arc<dyn BackgroundJob>)).await;
    s.parent.tool_context.insert_ext(docs.listener());

    // Nothing tracked yet: a turn costs no fork.
    s.engine.submit("hello", |_| {}).await;
    s.wait_jobs().await;
    assert!(s.events.outcomes(MAGIC_DOCS_JOB).is_empty());
    assert!(docs.is_empty());

    s.engine
        .submit("please read src/ARCHITECTURE.md", |_| {})
        .await;
    s.wait_jobs().await;
    let tracked = docs.tracked();
    assert_eq!(tracked.len(), 1, "{tracked:?}");
    assert_eq!(tracked[0].0, doc);

    s.engine
        .submit(
            "we use hexagonal architecture, the core domain depends on no framework, \
             adapters connect external systems",
            |_| {},
        )
        .await;
    s.wait_jobs().await;

    let outcomes = s.events.outcomes(MAGIC_DOCS_JOB);
    assert_eq!(outcomes.len(), 2, "{outcomes:?}");
    assert_eq!(outcomes[0].data()["status"], "unchanged");
    assert_eq!(outcomes[1].data()["status"], "updated", "{:?}", outcomes[1]);
    let text = std::fs::read_to_string(&doc).unwrap();
    assert!(text.starts_with(
        "# MAGIC DOC: System Architecture\n_Keep this document up to date with key architectural decisions._\n"
    ));
    assert!(text.contains("Hexagonal architecture"), "{text}");
    // Refused: the write, the other edit, the shell command, even a read.
    assert_eq!(
        std::fs::read_to_string(world.cwd.join("other.md")).unwrap(),
        "keep\n"
    );
    assert!(!world.cwd.join("other.md.bash").exists());

    let forks: Vec<_> = server
        .requests()
        .into_iter()
        .filter(|r| last_user_has(r, MAGIC_DOCS_MARKER))
        .collect();
    assert_eq!(forks.len(), 2);
    let prompt = String::from_utf8_lossy(&forks[1].body).to_string();
    assert!(
        prompt.contains(&format!("<magic-doc path=\\\"{}\\\">", doc.display())),
        "{prompt}"
    );
    assert!(prompt.contains("Header line: # MAGIC DOC: System Architecture"));
    assert!(
        prompt.contains(
            "Instruction: Keep this document up to date with key architectural decisions."
        )
    );
    // Each refusal came back to the fork as an error result naming what it may do.
    let after = server
        .requests()
        .into_iter()
        .find(|r| String::from_utf8_lossy(&r.body).contains("is not a tracked Magic Doc"))
        .expect("the fork's second request carries the refusals");
    let body = String::from_utf8_lossy(&after.body);
    assert!(body.contains("may only use Edit on"), "{body}");

    // The fork's first request read the parent's whole cached prefix.
    let parent = server
        .requests()
        .into_iter()
        .rfind(|r| {
            last_user_has(r, "adapters connect external systems")
                && !last_user_has(r, MAGIC_DOCS_MARKER)
        })
        .unwrap();
    let parent = api_usage(&parent);
    let parent_prefix = parent.cache_read_input_tokens + parent.cache_creation_input_tokens;
    let fork = api_usage(&forks[1]);
    assert!(parent_prefix > 0, "{parent:?}");
    assert!(
        fork.cache_read_input_tokens >= parent_prefix,
        "the fork read {} of the parent's {parent_prefix} cached tokens",
        fork.cache_read_input_tokens
    );
    let first = &outcomes[1].data()["runs"][0]["first_request_usage"];
    assert_eq!(
        first["cache_read_input_tokens"],
        fork.cache_read_input_tokens
    );
}
