//! Seed 001's acceptance scenario at library level: a first session states the stack, the
//! extraction fork (on the parent's cache) writes a topic file and an index line, and a second
//! session has the index in its context and recalls the file.

use std::sync::Arc;

use serde_json::json;
use tine_memory::{EXTRACTION_MARKER, RECALL_MARKER, Recall, SideQuerySelector};
use tine_mock_api::{MockServer, Reply, Rule, Scenario};
use tine_query_loop::Terminal;

use super::harness::{Extracted, World, body_has, extraction_job, last_user_has, server, session};

pub(super) const TOPIC: &str = "---\nname: Project stack\ndescription: React 18 frontend, PostgreSQL database\ntype: project\n---\n\nThe user said this project uses React 18 and PostgreSQL.\n";
pub(super) const INDEX_LINE: &str =
    "- [Project stack](project_stack.md) — React 18 frontend, PostgreSQL database";

/// The model: the extraction fork writes the topic file and the index line in one turn; recall
/// picks the stack file; everything else is small talk.
pub(super) fn scenario(world: &World) -> Scenario {
    let mem = world.mem().display().to_string();
    Scenario::new()
        .rule(
            Rule::new().named("extract").marker(EXTRACTION_MARKER).reply(
                Reply::text("Saving the stack.")
                    .with_tool_use(
                        "Write",
                        json!({"file_path": format!("{mem}/project_stack.md"), "content": TOPIC}),
                    )
                    .with_tool_use(
                        "Write",
                        json!({"file_path": format!("{mem}/MEMORY.md"), "content": format!("{INDEX_LINE}\n")}),
                    ),
            ),
        )
        .rule(
            Rule::new()
                .named("recall")
                .marker(RECALL_MARKER)
                .reply(Reply::text(r#"{"selected_memories": ["project_stack.md"]}"#)),
        )
        .rule(
            Rule::new()
                .named("after-tools")
                .tool_results(true)
                .reply(Reply::text("Saved 1 memory.")),
        )
        .rule(
            Rule::new()
                .named("database")
                .last_user_contains("database")
                .reply(Reply::text("This project uses PostgreSQL.")),
        )
        .default_reply(Reply::text("Noted: React 18 and PostgreSQL."))
}

async fn session_one(world: &World, server: &MockServer) -> tine_fork_runtime::JobOutcome {
    let s = session(world, server, None, Some(extraction_job(world))).await;
    let mut s = s;
    let turn = s
        .engine
        .submit("this project uses React 18 and PostgreSQL", |_| {})
        .await;
    assert_eq!(turn.terminal, Terminal::Completed);
    let outcomes = s.drain().await;
    assert_eq!(outcomes.len(), 1, "{outcomes:?}");
    outcomes.into_iter().next().unwrap()
}

#[tokio::test]
async fn a_stated_stack_is_remembered_in_the_next_session() {
    let world = World::new();
    let server = server(scenario(&world)).await;

    // Session 1: the user states the stack; extraction saves it.
    let outcome = session_one(&world, &server).await;
    assert_eq!(outcome.summary, "saved 1 memory: project_stack.md");
    assert_eq!(outcome.data()["files"], json!(["project_stack.md"]));
    assert_eq!(outcome.data()["index_updated"], json!(true));
    assert_eq!(
        std::fs::read_to_string(world.mem().join("project_stack.md")).unwrap(),
        TOPIC
    );
    assert_eq!(
        std::fs::read_to_string(world.mem().join("MEMORY.md")).unwrap(),
        format!("{INDEX_LINE}\n")
    );

    // The fork's first request read the parent's whole cached prefix.
    let log = server.requests();
    let fork_first = log
        .iter()
        .position(|r| last_user_has(r, EXTRACTION_MARKER))
        .expect("an extraction request");
    assert!(fork_first > 0);
    let parent_last = log[fork_first - 1].usage.unwrap();
    let fork_usage = log[fork_first].usage.unwrap();
    let parent_prefix =
        parent_last.cache_read_input_tokens + parent_last.cache_creation_input_tokens;
    assert!(parent_prefix > 1024, "{parent_last:?}");
    assert!(
        fork_usage.cache_read_input_tokens >= parent_prefix,
        "fork read {} of the parent's {parent_prefix}",
        fork_usage.cache_read_input_tokens
    );
    // ... and the outcome reports it
    let first = &outcome.data()["runs"][0]["first_request_usage"];
    assert_eq!(
        first["read_from_cache"],
        json!(fork_usage.cache_read_input_tokens)
    );
    // the fork's prompt names the directory and the new messages
    let fork_body = String::from_utf8_lossy(&log[fork_first].body).into_owned();
    assert!(fork_body.contains(&world.mem().display().to_string()));
    assert!(fork_body.contains("last ~2 messages"));

    // Session 2: the index is in the context from the first request on.
    let index = world.memory.load_index_for_context();
    let mut s2 = session(
        &world,
        &server,
        Some(index.render()),
        Some(extraction_job(&world)),
    )
    .await;
    let recall = Recall::new(
        world.mem(),
        Arc::new(SideQuerySelector::new(
            Arc::clone(&s2.parent.client),
            "claude-sonnet-4-5",
        )),
    )
    // The selection query itself is under test, not the inline shortcut.
    .with_inline_bytes(0);
    let prompt = "which database does this project use?";
    let attachment = recall.attachment_for(prompt).await.unwrap().unwrap();
    assert_eq!(attachment.files, ["project_stack.md"]);
    assert!(attachment.text.contains("React 18 and PostgreSQL"));
    let before = server.requests().len();
    let turn = s2
        .engine
        .submit(&format!("{}\n\n{prompt}", attachment.text), |_| {})
        .await;
    assert_eq!(turn.result, "This project uses PostgreSQL.");
    let log = server.requests();
    let first_of_session_two = &log[before];
    assert!(body_has(first_of_session_two, INDEX_LINE));
    assert!(body_has(
        first_of_session_two,
        "The user said this project uses React 18"
    ));
    // the recall query itself: schema'd, small, and billed apart
    let recall_request = log
        .iter()
        .find(|r| last_user_has(r, RECALL_MARKER))
        .unwrap();
    let body = recall_request.json().unwrap();
    assert_eq!(body["max_tokens"], 256);
    assert!(body["system"].to_string().contains("selected_memories"));
    s2.drain().await;
}
