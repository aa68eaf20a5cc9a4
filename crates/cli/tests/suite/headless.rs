//! `-p` end to end: output shapes, tools in parallel and in series, permissions, the cache.
//! The cases run over both wires (`both_wires!`): the Messages API and chat completions.

use serde_json::{Value, json};
use tine_e2e::Project;
use tine_e2e::tine_mock_api::{Reply, Rule, Scenario};

use super::wire::{Wire, both_wires, is_error_result, model_bodies, tine_on};
use super::{TINE, mock};

both_wires!(
    json_output_is_one_result_object,
    stream_json_prints_init_assistant_user_and_result_lines,
    text_output_streams_the_reply_with_a_final_newline,
    the_prompt_can_come_on_stdin_and_as_stream_json_lines,
    parallel_reads_then_a_serial_edit,
    a_call_that_needs_approval_is_denied_with_how_to_allow_it,
    allowed_and_disallowed_tools_flags_become_rules,
    the_second_request_reads_the_whole_first_prompt_from_the_cache,
    max_turns_ends_the_run_as_an_error,
);

async fn json_output_is_one_result_object(wire: Wire) {
    let server = mock(Scenario::new().default_reply(Reply::text("Hello there."))).await;
    let project = Project::new();
    let out = tine_on(wire, &project, &server)
        .args(["-p", "hello", "--output-format", "json"])
        .run()
        .await;
    out.assert_success();
    let result = out.json();
    assert_eq!(result["type"], "result");
    assert_eq!(result["subtype"], "success");
    assert_eq!(result["is_error"], false);
    assert_eq!(result["result"], "Hello there.");
    assert_eq!(result["num_turns"], 1);
    assert!(result["session_id"].as_str().is_some_and(|s| !s.is_empty()));
    assert!(result["duration_ms"].is_u64());
    assert!(result["duration_api_ms"].is_u64());
    let cost = result["total_cost_usd"].as_f64().unwrap();
    match wire {
        Wire::Anthropic => assert!(cost > 0.0),
        // A local model has no price: it costs nothing here.
        Wire::OpenAi => assert_eq!(cost, 0.0),
    }
    for key in [
        "input_tokens",
        "output_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
    ] {
        assert!(
            result["usage"][key].is_u64(),
            "usage.{key} missing: {result}"
        );
    }
    // The usage is what the server billed.
    let billed = server.requests()[0].usage.unwrap();
    assert_eq!(result["usage"]["output_tokens"], billed.output_tokens);
    assert_eq!(
        result["usage"]["cache_creation_input_tokens"],
        billed.cache_creation_input_tokens
    );
    assert_eq!(result["permission_denials"], json!([]));
    server.stop().await;
}

async fn stream_json_prints_init_assistant_user_and_result_lines(wire: Wire) {
    let project = Project::new();
    let file = project.write("notes.txt", "alpha\n");
    let scenario = Scenario::new()
        .rule(
            Rule::new()
                .assistant_turns(0)
                .reply(Reply::text("Reading.").with_tool_use("Read", json!({"file_path": file}))),
        )
        .rule(
            Rule::new()
                .tool_results(true)
                .reply(Reply::text("It says alpha.")),
        );
    let server = mock(scenario).await;
    let out = tine_on(wire, &project, &server)
        .args([
            "-p",
            "what is in notes.txt?",
            "--output-format",
            "stream-json",
        ])
        .run()
        .await;
    out.assert_success();
    let lines = out.json_lines();
    let kinds: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        ["system", "assistant", "user", "assistant", "result"]
    );
    let init = &lines[0];
    assert_eq!(init["subtype"], "init");
    assert_eq!(init["model"], wire.model());
    assert_eq!(init["permissionMode"], "default");
    assert_eq!(init["cwd"], project.cwd().display().to_string());
    assert!(init["tools"].as_array().unwrap().contains(&json!("Read")));
    let session = init["session_id"].as_str().unwrap();
    assert!(lines.iter().all(|l| l["session_id"] == session));
    assert_eq!(lines[1]["message"]["content"][1]["type"], "tool_use");
    let result_block = &lines[2]["message"]["content"][0];
    assert_eq!(result_block["type"], "tool_result");
    assert!(result_block.to_string().contains("alpha"));
    assert_eq!(lines[4]["result"], "It says alpha.");
    assert_eq!(lines[4]["num_turns"], 2);
    server.stop().await;
}

async fn text_output_streams_the_reply_with_a_final_newline(wire: Wire) {
    let server = mock(Scenario::new().default_reply(Reply::text("Plain answer."))).await;
    let project = Project::new();
    let out = tine_on(wire, &project, &server)
        .args(["-p", "hi"])
        .run()
        .await;
    out.assert_success();
    assert_eq!(out.stdout, "Plain answer.\n");
    server.stop().await;
}

async fn the_prompt_can_come_on_stdin_and_as_stream_json_lines(wire: Wire) {
    let server = mock(
        Scenario::new()
            .rule(
                Rule::new()
                    .last_user_contains("first")
                    .reply(Reply::text("one")),
            )
            .rule(
                Rule::new()
                    .last_user_contains("second")
                    .reply(Reply::text("two")),
            ),
    )
    .await;
    let project = Project::new();
    let out = tine_on(wire, &project, &server)
        .args(["-p"])
        .stdin("the first question")
        .run()
        .await;
    out.assert_success();
    assert_eq!(out.stdout, "one\n");

    let input = [
        json!({"type": "user", "message": {"role": "user", "content": "first"}}),
        json!({"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": "second"}]}}),
    ]
    .map(|v| v.to_string())
    .join("\n");
    let out = tine_on(wire, &project, &server)
        .args([
            "-p",
            "--input-format",
            "stream-json",
            "--output-format",
            "json",
        ])
        .stdin(input.clone() + "\n")
        .run()
        .await;
    out.assert_success();
    // `json` stays one object: the last turn's result.
    assert_eq!(out.json()["result"], "two");

    let out = tine_on(wire, &project, &server)
        .args([
            "-p",
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
        ])
        .stdin(input + "\n")
        .run()
        .await;
    out.assert_success();
    let results: Vec<Value> = out
        .json_lines()
        .into_iter()
        .filter(|l| l["type"] == "result")
        .collect();
    assert_eq!(results.len(), 2);
    assert_eq!(results[0]["result"], "one");
    assert_eq!(results[1]["result"], "two");
    // One session: the second turn's request carries the first exchange.
    let bodies = model_bodies(&server);
    let last = bodies.last().unwrap();
    assert_eq!(last["messages"].as_array().unwrap().len(), 3);
    server.stop().await;
}

#[tokio::test]
async fn no_key_is_one_line_naming_the_variable() {
    let project = Project::new();
    let out = tine_e2e::TineRun::new(TINE, &project, "http://127.0.0.1:9")
        .env_remove("ANTHROPIC_API_KEY")
        .args(["-p", "hello"])
        .run()
        .await;
    assert_eq!(out.code(), Some(1));
    assert_eq!(out.stdout, "");
    assert_eq!(out.stderr.lines().count(), 1, "stderr: {}", out.stderr);
    assert!(out.stderr.contains("ANTHROPIC_API_KEY"), "{}", out.stderr);
}

async fn parallel_reads_then_a_serial_edit(wire: Wire) {
    let project = Project::new();
    let a = project.write("a.txt", "apple\n");
    let b = project.write("b.txt", "banana\n");
    let scenario = Scenario::new()
        .rule(
            Rule::new().assistant_turns(0).reply(
                Reply::text("Reading both.")
                    .with_tool_use("Read", json!({"file_path": a}))
                    .with_tool_use("Read", json!({"file_path": b})),
            ),
        )
        .rule(
            Rule::new().assistant_turns(1).reply(
                Reply::text("Editing.")
                    .with_tool_use(
                        "Edit",
                        json!({"file_path": a, "old_string": "apple", "new_string": "apricot"}),
                    )
                    .with_tool_use(
                        "Edit",
                        json!({"file_path": a, "old_string": "apricot", "new_string": "avocado"}),
                    ),
            ),
        )
        .rule(Rule::new().assistant_turns(2).reply(Reply::text("Done.")));
    let server = mock(scenario).await;
    let out = tine_on(wire, &project, &server)
        .args([
            "-p",
            "fix a",
            "--output-format",
            "json",
            "--permission-mode",
            "acceptEdits",
        ])
        .run()
        .await;
    out.assert_success();
    assert_eq!(out.json()["num_turns"], 3);
    // The second edit saw the first one's result: they ran one after the other.
    assert_eq!(project.read("a.txt"), "avocado\n");

    let bodies = model_bodies(&server);
    let reads = &bodies[1]["messages"].as_array().unwrap().last().unwrap()["content"];
    let reads = reads.as_array().unwrap();
    assert_eq!(
        reads.len(),
        2,
        "both read results in one message: {reads:?}"
    );
    // Results keep call order.
    assert!(reads[0]["content"].to_string().contains("apple"));
    assert!(reads[1]["content"].to_string().contains("banana"));
    let edits = &bodies[2]["messages"].as_array().unwrap().last().unwrap()["content"];
    assert!(
        edits
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["type"] == "tool_result" && !is_error_result(wire, r)),
        "{edits}"
    );
    server.stop().await;
}

async fn a_call_that_needs_approval_is_denied_with_how_to_allow_it(wire: Wire) {
    let project = Project::new();
    let victim = project.write("keep.txt", "precious\n");
    let scenario = Scenario::new()
        .rule(Rule::new().assistant_turns(0).reply(Reply::tool_use(
            "Bash",
            json!({"command": format!("rm {}", victim.display())}),
        )))
        .rule(
            Rule::new()
                .tool_results(true)
                .reply(Reply::text("I could not delete it.")),
        );
    let server = mock(scenario).await;
    let out = tine_on(wire, &project, &server)
        .args(["-p", "delete keep.txt", "--output-format", "json"])
        .run()
        .await;
    out.assert_success();
    assert!(victim.exists(), "the denied command must not run");
    let result = out.json();
    let denials = result["permission_denials"].as_array().unwrap();
    assert_eq!(denials.len(), 1);
    assert_eq!(denials[0]["tool_name"], "Bash");
    assert!(
        denials[0]["tool_input"]["command"]
            .as_str()
            .unwrap()
            .starts_with("rm ")
    );
    // The model was told why, and what the user can do.
    let bodies = model_bodies(&server);
    let answer = &bodies[1]["messages"].as_array().unwrap().last().unwrap()["content"][0];
    assert!(is_error_result(wire, answer), "{answer}");
    let text = answer["content"].to_string();
    assert!(text.contains("non-interactive"), "{text}");
    assert!(text.contains("--allowedTools"), "{text}");
    server.stop().await;
}

async fn allowed_and_disallowed_tools_flags_become_rules(wire: Wire) {
    let project = Project::new();
    let scenario = Scenario::new()
        .rule(Rule::new().assistant_turns(0).reply(Reply::tool_use(
            "Bash",
            json!({"command": "touch made-by-bash"}),
        )))
        .rule(Rule::new().tool_results(true).reply(Reply::text("ok")));
    let server = mock(scenario).await;
    let out = tine_on(wire, &project, &server)
        .args([
            "-p",
            "go",
            "--output-format",
            "json",
            "--disallowedTools",
            "WebFetch",
            "--allowedTools",
            "Bash(touch:*)",
        ])
        .run()
        .await;
    out.assert_success();
    assert_eq!(out.json()["permission_denials"], json!([]));
    assert!(project.cwd().join("made-by-bash").exists());
    // A tool-wide deny rule removes the tool from the array the model sees.
    let bodies = model_bodies(&server);
    let names: Vec<&str> = bodies[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(!names.contains(&"WebFetch"), "{names:?}");
    assert!(names.contains(&"Bash"));
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(names, sorted, "the tool array is sorted by name");
    server.stop().await;
}

async fn the_second_request_reads_the_whole_first_prompt_from_the_cache(wire: Wire) {
    let project = Project::new();
    let file = project.write("f.txt", "content\n");
    let scenario = Scenario::new()
        .rule(
            Rule::new()
                .assistant_turns(0)
                .reply(Reply::tool_use("Read", json!({"file_path": file}))),
        )
        .rule(
            Rule::new()
                .tool_results(true)
                .reply(Reply::text("Read it.")),
        );
    let server = mock(scenario).await;
    let out = tine_on(wire, &project, &server)
        .args(["-p", "read f.txt", "--output-format", "json"])
        .run()
        .await;
    out.assert_success();
    let log = server.requests();
    assert_eq!(log.len(), 2);
    let first = log[0].usage.unwrap();
    let second = log[1].usage.unwrap();
    let first_prompt =
        first.input_tokens + first.cache_creation_input_tokens + first.cache_read_input_tokens;
    match wire {
        Wire::Anthropic => assert!(first.cache_creation_input_tokens > 0, "{first:?}"),
        // Automatic prefix caching: nothing is written explicitly, and nothing was there yet.
        Wire::OpenAi => assert_eq!(
            first.cache_read_input_tokens + first.cache_creation_input_tokens,
            0,
            "{first:?}"
        ),
    }
    assert_eq!(
        second.cache_read_input_tokens, first_prompt,
        "request 2 must read request 1's whole prompt: {first:?} then {second:?}"
    );
    // The session's figures include the reads.
    // (over chat completions: `cached_tokens` became the reads, the rest of `prompt_tokens` the
    // input).
    let usage = &out.json()["usage"];
    assert_eq!(
        usage["cache_read_input_tokens"],
        second.cache_read_input_tokens
    );
    assert_eq!(
        usage["input_tokens"],
        first.input_tokens + second.input_tokens,
        "{usage}"
    );
    server.stop().await;
}

async fn max_turns_ends_the_run_as_an_error(wire: Wire) {
    let project = Project::new();
    let file = project.write("f.txt", "x\n");
    let scenario =
        Scenario::new().default_reply(Reply::tool_use("Read", json!({"file_path": file})));
    let server = mock(scenario).await;
    let out = tine_on(wire, &project, &server)
        .args(["-p", "loop", "--output-format", "json", "--max-turns", "2"])
        .run()
        .await;
    assert_eq!(out.code(), Some(1));
    let result = out.json();
    assert_eq!(result["subtype"], "error_max_turns");
    assert_eq!(result["is_error"], true);
    assert_eq!(server.requests().len(), 2);
    server.stop().await;
}

#[tokio::test]
async fn a_stream_json_image_reaches_the_model_beside_the_text() {
    let server = super::mock(Scenario::new().default_reply(Reply::text("A cat."))).await;
    let project = Project::new();
    let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
    let input = json!({"type": "user", "message": {"role": "user", "content": [
        {"type": "text", "text": "what is in this picture?"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png}}
    ]}});
    let out = super::tine(&project, &server)
        .args([
            "-p",
            "--input-format",
            "stream-json",
            "--output-format",
            "json",
        ])
        .stdin(format!("{input}\n"))
        .run()
        .await;
    out.assert_success();
    assert_eq!(out.json()["result"], "A cat.");
    let bodies = tine_e2e::request_bodies(&server);
    let last = bodies.last().unwrap();
    let blocks = last["messages"][0]["content"].as_array().unwrap();
    let image = blocks
        .iter()
        .find(|b| b["type"] == "image")
        .expect("the image was sent");
    assert_eq!(image["source"]["data"], png);
    assert!(
        blocks
            .iter()
            .any(|b| b["text"] == "what is in this picture?")
    );
    // An image the API could not take is bad input, said on stdout; the run goes on.
    let bad = json!({"type": "user", "message": {"role": "user", "content": [
        {"type": "image", "source": {}}
    ]}});
    let out = super::tine(&project, &server)
        .args([
            "-p",
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
            "--verbose",
        ])
        .stdin(format!("{bad}\n"))
        .run()
        .await;
    assert!(out.stdout.contains("base64"), "{}", out.stdout);
}
