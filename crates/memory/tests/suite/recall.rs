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
