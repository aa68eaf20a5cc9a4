//! `scenarios/seed001.json`, the scenario the offline demo runs `tine` against: the memory
//! directory comes from the fork's prompt, so it works wherever the demo puts it. Driven here
//! through the library exactly as the CLI drives it.

use tine_memory::AutoMemory;
use tine_mock_api::Scenario;

use super::harness::{Extracted, World, extraction_job, server, session};

fn seed001() -> Scenario {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/seed001.json");
    Scenario::from_file(&path).unwrap()
}

#[tokio::test]
async fn the_demo_scenario_remembers_across_sessions() {
    let world = World::new();
    let server = server(seed001()).await;

    // Without memory, the model does not know.
    let mut s0 = session(&world, &server, None, None).await;
    let turn = s0
        .engine
        .submit("which database does this project use?", |_| {})
        .await;
    assert_eq!(
        turn.result,
        "I don't know which database this project uses yet."
    );

    // Session 1 states the stack; extraction saves it.
    let mut s1 = session(&world, &server, None, Some(extraction_job(&world))).await;
    let turn = s1
        .engine
        .submit("this project uses React 18 and PostgreSQL", |_| {})
        .await;
    assert_eq!(turn.result, "Noted: React 18 and PostgreSQL.");
    let outcomes = s1.drain().await;
    assert_eq!(outcomes[0].summary, "saved 1 memory: project_stack.md");

    // Session 2 starts with the index in its context and answers from memory (wired through
    // `AutoMemory`, as the CLI does).
    let memory = AutoMemory::start(
        world.memory.clone(),
        super::harness::client_for(&server),
        "claude-sonnet-4-5",
        None,
    )
    .unwrap();
    let mut s2 = session(
        &world,
        &server,
        Some(memory.context().to_owned()),
        Some(memory.extraction_job()),
    )
    .await;
    let (prompt, attachment) = memory
        .prompt_with_recall("which database does this project use?")
        .await;
    assert_eq!(attachment.unwrap().files, ["project_stack.md"]);
    let turn = s2.engine.submit(&prompt, |_| {}).await;
    assert_eq!(
        turn.result,
        "From memory: this project uses PostgreSQL (and React 18 on the frontend)."
    );
    // a single word recalls nothing
    let (prompt, attachment) = memory.prompt_with_recall("thanks").await;
    assert_eq!((prompt.as_str(), attachment), ("thanks", None));
    s2.drain().await;
}
