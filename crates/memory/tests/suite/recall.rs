//! Recall against the mock: the side query sees the manifest, picks by name, and the right
//! file is attached.

use std::sync::Arc;

use tine_memory::{MemoryType, NewMemory, RECALL_MARKER, Recall, SideQuerySelector, save_memory};
use tine_mock_api::{Reply, Rule, Scenario};

use super::harness::{World, client_for, last_user_has, server};

#[tokio::test]
async fn recall_attaches_the_file_the_model_picked() {
    let world = World::new();
    for (file, name, desc, kind) in [
        (
            "project_stack.md",
            "Project stack",
            "React 18, PostgreSQL",
            MemoryType::Project,
        ),
        (
            "user_role.md",
            "User role",
            "backend engineer, new to React",
            MemoryType::User,
        ),
        (
            "reference_ci.md",
            "CI dashboard",
            "where CI runs live",
            MemoryType::Reference,
        ),
    ] {
        save_memory(
            &world.memory,
            &NewMemory {
                file_name: file,
                name,
                description: desc,
                kind,
                body: &format!("{name}: {desc}."),
            },
        )
        .unwrap();
    }
    let scenario = Scenario::new()
        .rule(
            Rule::new()
                .marker(RECALL_MARKER)
                .last_user_contains("frontend")
                .reply(Reply::text(
                    "Here you go:\n```json\n{\"selected_memories\": [\"user_role.md\", \"project_stack.md\"]}\n```",
                )),
        )
        .rule(
            Rule::new()
                .marker(RECALL_MARKER)
                .reply(Reply::text(r#"{"selected_memories": []}"#)),
        );
    let server = server(scenario).await;
    let recall = Recall::new(
        world.mem(),
        Arc::new(SideQuerySelector::new(
            client_for(&server),
            "claude-sonnet-4-5",
        )),
    )
    // The selection query itself is under test, not the inline shortcut.
    .with_inline_bytes(0);
    let a = recall
        .attachment_for("how should I structure the frontend state?")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(a.files, ["user_role.md", "project_stack.md"]);
    assert!(a.text.contains("backend engineer, new to React"));
    assert!(!a.text.contains("CI dashboard"));
    let log = server.requests();
    assert_eq!(log.len(), 1);
    assert!(last_user_has(
        &log[0],
        "reference_ci.md [reference] CI dashboard"
    ));
    assert!(!last_user_has(&log[0], "MEMORY.md"));

    // nothing relevant: no attachment; single words: no query at all
    assert!(
        recall
            .attachment_for("unrelated question here")
            .await
            .unwrap()
            .is_none()
    );
    assert!(recall.attachment_for("continue").await.unwrap().is_none());
    assert_eq!(server.requests().len(), 2);
}

/// With a manifest long enough to be cached, the second turn's selection query reads the
/// system prompt and the manifest from the cache and pays only for the new prompt.
#[tokio::test]
async fn the_selection_query_reads_its_manifest_from_the_cache_on_later_turns() {
    let world = World::new();
    for i in 0..60 {
        let desc = format!(
            "decision {i}: the service boundary between billing and checkout, and why it moved"
        );
        save_memory(
            &world.memory,
            &NewMemory {
                file_name: &format!("project_decision{i:02}.md"),
                name: &format!("Decision {i}"),
                description: &desc,
                kind: MemoryType::Project,
                body: &format!("{desc}. How to apply: keep billing calls behind the gateway."),
            },
        )
        .unwrap();
    }
    let scenario = Scenario::new().rule(
        Rule::new()
            .marker(RECALL_MARKER)
            .reply(Reply::text(r#"{"selected_memories": []}"#)),
    );
    let server = server(scenario).await;
    let recall = Recall::new(
        world.mem(),
        Arc::new(SideQuerySelector::new(
            client_for(&server),
            "claude-sonnet-4-5",
        )),
    );
    for prompt in [
        "how do I reverse a list in python?",
        "what does git rebase -i do?",
        "what is a good timeout for an HTTP client?",
    ] {
        assert!(recall.attachment_for(prompt).await.unwrap().is_none());
    }
    let log = server.requests();
    assert_eq!(log.len(), 3, "one selection query a turn");
    let first = log[0].usage.unwrap();
    assert!(
        first.cache_creation_input_tokens >= 1024,
        "the manifest is written to the cache: {first:?}"
    );
    for later in &log[1..] {
        let usage = later.usage.unwrap();
        assert_eq!(
            usage.cache_read_input_tokens, first.cache_creation_input_tokens,
            "{usage:?}"
        );
        assert!(
            usage.input_tokens < 40,
            "only the prompt is uncached: {usage:?}"
        );
    }
}
