//! Speculation against the mock: a draft's fork reads the parent's cached prefix and runs only
//! Read, Glob and Grep (a write, an edit and a shell command refused, through the real tools);
//! a prompt that matches the draft carries the results, so the main thread answers without a
//! tool call; a miss carries nothing; off (the default), a draft sends nothing.

use tine_mock_api::{Reply, Rule, Scenario};
use tine_session::speculation::{SPECULATION_MARKER, SPECULATION_QUERY_SOURCE};
use tine_session::{Op, TurnOutcome};

use super::support::{Running, World, http_client, server};

const ANSWER: &str = "lib.rs defines the parser (from the speculated read).";

fn scenario(world: &World) -> Scenario {
    let cwd = world.cwd.display().to_string();
    Scenario::new()
        .rule(
            Rule::new()
                .last_user_contains(SPECULATION_MARKER)
                .reply(Reply::text(ANSWER)),
        )
        .rule(
            Rule::new()
                .last_user_contains("explain src/lib.rs")
                .tool_results(false)
                .reply(
                    Reply::tool_use("Read", serde_json::json!({"file_path": "src/lib.rs"}))
                        .with_tool_use(
                            "Write",
                            serde_json::json!({"file_path": format!("{cwd}/src/hacked.rs"), "content": "x"}),
                        )
                        .with_tool_use(
                            "Edit",
                            serde_json::json!({"file_path": format!("{cwd}/src/lib.rs"), "old_string": "parser", "new_string": "gone"}),
                        )
                        .with_tool_use(
                            "Bash",
                            serde_json::json!({"command": format!("touch {cwd}/src/bash.rs")}),
                        )
                        .with_tool_use("Glob", serde_json::json!({"pattern": "src/*.rs"})),
                ),
        )
        .rule(Rule::new().tool_results(true).reply(Reply::text("Looked at it.")))
        .default_reply(Reply::text("Hello."))
}

fn project(world: &World) {
    std::fs::create_dir_all(world.cwd.join("src")).unwrap();
    std::fs::write(
        world.cwd.join("src/lib.rs"),
        "// the parser\npub fn parse() {}\n",
    )
    .unwrap();
}

async fn prompt(s: &mut Running, text: &str) -> tine_session::TurnEnd {
    s.handle.submit(Op::Prompt(text.into())).unwrap();
    let end = s.turn_end().await;
    assert_eq!(end.outcome, TurnOutcome::Completed);
    end
}

#[tokio::test]
async fn a_matching_prompt_carries_the_read_only_results_and_needs_no_tool_call() {
    let world = World::new();
    world.project_settings(r#"{"speculationEnabled": true}"#);
    project(&world);
    let server = server(scenario(&world)).await;
    let mut s = Running::start(world.options(http_client(&server))).await;
    assert!(s.info.speculation);
    prompt(&mut s, "hello").await;
    let before = server.requests().len();

    s.submit(Op::Speculate("explain src/lib.rs".into()));
    let end = prompt(&mut s, "Explain src/lib.rs").await;
    assert_eq!(
        end.result.as_ref().unwrap().num_turns,
        1,
        "answered without a tool call"
    );

    let requests = server.requests();
    let bodies: Vec<String> = requests[before..]
        .iter()
        .map(|r| String::from_utf8_lossy(&r.body).into_owned())
        .collect();
    // The fork: its prompt, then the results of its calls (three refused), then the main turn.
    assert_eq!(bodies.len(), 3, "{bodies:#?}");
    assert!(bodies[1].contains("Speculation runs only Read, Glob, Grep; `Write`"));
    assert!(bodies[1].contains("`Edit` is not available"));
    assert!(bodies[1].contains("`Bash` is not available"));
    assert!(!world.cwd.join("src/hacked.rs").exists());
    assert!(!world.cwd.join("src/bash.rs").exists());
    assert_eq!(
        std::fs::read_to_string(world.cwd.join("src/lib.rs")).unwrap(),
        "// the parser\npub fn parse() {}\n"
    );
    let main = &bodies[2];
    assert!(main.contains(SPECULATION_MARKER), "{main}");
    assert!(
        main.contains("pub fn parse()"),
        "the Read result is attached"
    );
    assert!(main.contains("src/lib.rs"), "the Glob result is attached");
    assert!(!main.contains("hacked"), "refused calls are not attached");

    // The fork's first request read the parent's whole cached prefix.
    let parent = requests[before - 1].usage.unwrap();
    let fork = requests[before].usage.unwrap();
    let prefix = parent.cache_read_input_tokens + parent.cache_creation_input_tokens;
    assert!(prefix > 0);
    assert!(
        fork.cache_read_input_tokens >= prefix,
        "{fork:?} vs {parent:?}"
    );
    // It writes only the parent's last reply (its breakpoint where the parent's next request
    // puts one), which the main turn then reads with the rest.
    let main_usage = requests[before + 2].usage.unwrap();
    assert!(
        main_usage.cache_read_input_tokens >= prefix + fork.cache_creation_input_tokens,
        "{main_usage:?}"
    );
    assert!(end.cost.by_source.contains_key(SPECULATION_QUERY_SOURCE));

    // A miss: the draft's results are dropped, the prompt goes as typed.
    s.submit(Op::Speculate("explain src/lib.rs in detail".into()));
    let before = server.requests().len();
    prompt(&mut s, "what time is it").await;
    let main = server
        .requests()
        .into_iter()
        .rfind(|r| String::from_utf8_lossy(&r.body).contains("what time is it"))
        .unwrap();
    let body = main.json().unwrap();
    let last = body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .to_string();
    assert!(
        last.contains("what time is it") && !last.contains(SPECULATION_MARKER),
        "{last}"
    );
    assert!(server.requests().len() > before);
}

#[tokio::test]
async fn off_by_default_a_draft_sends_nothing() {
    let world = World::new();
    project(&world);
    let server = server(scenario(&world)).await;
    let mut s = Running::start(world.options(http_client(&server))).await;
    assert!(!s.info.speculation);
    prompt(&mut s, "hello").await;
    s.submit(Op::Speculate("explain src/lib.rs".into()));
    prompt(&mut s, "what time is it").await;
    assert_eq!(server.requests().len(), 2);
}
