//! Issue 18's tools through the real binary, checked on the wire: Read of an image sends an
//! `image` block (base64, its media type told by its bytes) inside the `tool_result`, a PDF a
//! `document` block; NotebookEdit writes inside the project and is refused outside it
//! headless, as Edit is; WebSearch is the API's server tool, offered when a rule allows it,
//! its blocks kept in the history; ExitPlanMode headless in plan mode is refused and nothing
//! is written.

use serde_json::{Value, json};
use tine_e2e::tine_mock_api::{Reply, Rule, Scenario};
use tine_e2e::{Project, request_bodies};

use super::{mock, model_calling, tine, tool_results};

const PNG: &[u8] =
    b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0\x1f\x15\xc4\x89";

fn b64(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

#[tokio::test]
async fn read_sends_images_and_pdfs_as_content_blocks() {
    let project = Project::new();
    std::fs::write(project.cwd().join("shot.png"), PNG).unwrap();
    let pdf = b"%PDF-1.4\n1 0 obj << /Type /Page >>\n%%EOF\n";
    std::fs::write(project.cwd().join("spec.pdf"), pdf).unwrap();
    let server = model_calling(&[
        ("Read", json!({"file_path": "shot.png"})),
        ("Read", json!({"file_path": "spec.pdf"})),
    ])
    .await;
    let out = tine(&project, &server).args(["-p", "look"]).run().await;
    out.assert_success();
    let results = tool_results(&server);
    let image = &results[0]["content"];
    assert_eq!(image[0]["type"], "text");
    assert_eq!(
        image[1],
        json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": b64(PNG)}})
    );
    let document = &results[1]["content"];
    assert_eq!(
        document[1],
        json!({"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": b64(pdf)}})
    );
    assert!(results.iter().all(|r| r.get("is_error").is_none()));
}

fn notebook() -> String {
    json!({"cells": [{"cell_type": "code", "id": "a1", "metadata": {}, "source": "1 + 1",
                      "execution_count": null, "outputs": []}],
           "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    .to_string()
}

#[tokio::test]
async fn notebook_edit_writes_inside_the_project_and_is_refused_outside_it() {
    let project = Project::new();
    project.write("nb.ipynb", &notebook());
    let outside = tempfile::tempdir().unwrap();
    let outside_nb = outside.path().join("other.ipynb");
    std::fs::write(&outside_nb, notebook()).unwrap();
    let server = mock(
        Scenario::new()
            .rule(Rule::new().assistant_turns(0).reply(
                Reply::text("Reading.")
                    .with_tool_use("Read", json!({"file_path": "nb.ipynb"}))
                    .with_tool_use("Read", json!({"file_path": outside_nb})),
            ))
            .rule(Rule::new().assistant_turns(1).reply(
                Reply::text("Editing.")
                    .with_tool_use(
                        "NotebookEdit",
                        json!({"notebook_path": "nb.ipynb", "cell_id": "a1", "new_source": "2 + 2"}),
                    )
                    .with_tool_use(
                        "NotebookEdit",
                        json!({"notebook_path": outside_nb, "cell_id": "a1", "new_source": "3 + 3"}),
                    ),
            ))
            .default_reply(Reply::text("Done.")),
    )
    .await;
    let out = tine(&project, &server)
        .args(["-p", "edit", "--permission-mode", "acceptEdits"])
        .run()
        .await;
    out.assert_success();
    let bodies = request_bodies(&server);
    let read = &bodies[1]["messages"].as_array().unwrap().last().unwrap()["content"];
    assert!(
        read[0]["content"]
            .as_str()
            .unwrap()
            .contains("<cell id=\"a1\"><cell_type>code</cell_type>1 + 1"),
        "{read}"
    );
    let edits = &bodies[2]["messages"].as_array().unwrap().last().unwrap()["content"];
    assert!(edits[0].get("is_error").is_none(), "{edits}");
    assert_eq!(edits[1]["is_error"], true, "{edits}");
    let nb: Value = serde_json::from_str(&project.read("nb.ipynb")).unwrap();
    assert_eq!(nb["cells"][0]["source"], "2 + 2");
    let other: Value =
        serde_json::from_str(&std::fs::read_to_string(&outside_nb).unwrap()).unwrap();
    assert_eq!(
        other["cells"][0]["source"], "1 + 1",
        "the notebook outside was changed"
    );
}

fn searching() -> Scenario {
    Scenario::new()
        .rule(
            Rule::new().assistant_turns(0).reply(
                Reply::new()
                    .with_web_search("tine rust agent", &[("https://example.com/tine", "Tine")])
                    .with_text("Found one page."),
            ),
        )
        .default_reply(Reply::text("Thanks."))
}

#[tokio::test]
async fn web_search_is_offered_when_allowed_and_its_blocks_stay_in_the_history() {
    let server = mock(searching()).await;
    let project = Project::new();
    project.write(
        ".tine/settings.json",
        r#"{"permissions": {"allow": ["WebSearch"]}}"#,
    );
    let out = tine(&project, &server)
        .args(["-p", "search the web", "--output-format", "json"])
        .run()
        .await;
    out.assert_success();
    assert_eq!(out.json()["result"], "Found one page.");
    let body = &request_bodies(&server)[0];
    let tools = body["tools"].as_array().unwrap();
    assert_eq!(
        tools.last().unwrap(),
        &json!({"type": "web_search_20250305", "name": "web_search", "max_uses": 8})
    );
    // The transcript keeps the server blocks as the API sent them (a resumed or continued
    // conversation sends them back).
    let transcript = std::fs::read_dir(project.transcripts_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect::<String>();
    assert!(transcript.contains("\"server_tool_use\""), "{transcript}");
    assert!(
        transcript.contains("\"web_search_tool_result\""),
        "{transcript}"
    );
    assert!(
        transcript.contains("enc:https://example.com/tine"),
        "{transcript}"
    );

    // Not allowed: not offered, and the model's search does not happen.
    let server = mock(searching()).await;
    let project = Project::new();
    let out = tine(&project, &server)
        .args(["-p", "search the web"])
        .run()
        .await;
    out.assert_success();
    let body = &request_bodies(&server)[0];
    assert!(
        !body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "web_search"),
        "offered without a rule"
    );
    assert!(out.stdout.contains("not offered"), "{}", out.stdout);
}

#[tokio::test]
async fn exit_plan_mode_headless_is_refused_and_nothing_is_written() {
    let server = mock(
        Scenario::new()
            .rule(
                Rule::new().assistant_turns(0).reply(
                    Reply::text("Plan ready.")
                        .with_tool_use("ExitPlanMode", json!({"plan": "1. write x.txt"})),
                ),
            )
            .rule(
                Rule::new().assistant_turns(1).reply(
                    Reply::text("Writing anyway.")
                        .with_tool_use("Write", json!({"file_path": "x.txt", "content": "x\n"})),
                ),
            )
            .default_reply(Reply::text("Here is the plan: 1. write x.txt")),
    )
    .await;
    let project = Project::new();
    let out = tine(&project, &server)
        .args([
            "-p",
            "plan it",
            "--permission-mode",
            "plan",
            "--output-format",
            "json",
        ])
        .run()
        .await;
    out.assert_success();
    let results = tool_results(&server);
    assert_eq!(results[0]["is_error"], true);
    assert!(
        results[0]["content"]
            .as_str()
            .unwrap()
            .contains("non-interactive mode"),
        "{results:?}"
    );
    assert!(
        !project.cwd().join("x.txt").exists(),
        "plan mode wrote a file"
    );
    let denials = out.json()["permission_denials"].clone();
    assert!(
        denials
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["tool_name"] == "ExitPlanMode"),
        "{denials}"
    );
}

/// A search reply the API paused (`pause_turn`): the next request continues it.
fn paused_search() -> Reply {
    Reply::new()
        .with_web_search("tine", &[("https://example.com/tine", "Tine")])
        .stop_reason("pause_turn")
}

#[tokio::test]
async fn pause_turn_is_continued_and_capped_with_a_clear_error() {
    let project = Project::new();
    project.write(
        ".tine/settings.json",
        r#"{"permissions": {"allow": ["WebSearch"]}}"#,
    );
    // Paused twice, then the answer: the turn goes on to it.
    let server = mock(
        Scenario::new()
            .rule(Rule::new().assistant_turns(0).reply(paused_search()))
            .rule(Rule::new().assistant_turns(1).reply(paused_search()))
            .default_reply(Reply::text("Found it.")),
    )
    .await;
    let out = tine(&project, &server)
        .args(["-p", "search", "--output-format", "json"])
        .run()
        .await;
    out.assert_success();
    assert_eq!(out.json()["result"], "Found it.");
    assert_eq!(server.requests().len(), 3);

    // Paused every time: 5 continuations, then the turn ends with an error saying why.
    let server = mock(Scenario::new().default_reply(paused_search())).await;
    let out = tine(&project, &server)
        .args(["-p", "search", "--output-format", "json"])
        .run()
        .await;
    assert!(!out.status.success());
    assert_eq!(
        server.requests().len(),
        6,
        "one request and 5 continuations"
    );
    let result = out.json();
    assert_eq!(result["is_error"], true, "{result}");
    let error = result["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("pause_turn") && error.contains("5 continuations"),
        "{error}"
    );
}

/// An image over the API's 8000 pixels a side (told by its header) is refused with the limit
/// and what to do (tine does not resize), so no request carries it; PDF pages without poppler's
/// `pdftoppm` say what to install.
#[tokio::test]
async fn oversized_images_and_missing_pdftoppm_are_clear_errors() {
    let project = Project::new();
    let mut wide = PNG[..16].to_vec();
    wide.extend(9000u32.to_be_bytes());
    wide.extend(20u32.to_be_bytes());
    std::fs::write(project.cwd().join("wide.png"), &wide).unwrap();
    std::fs::write(
        project.cwd().join("spec.pdf"),
        b"%PDF-1.4\n1 0 obj << /Type /Page >>\n%%EOF\n",
    )
    .unwrap();
    let server = model_calling(&[
        ("Read", json!({"file_path": "wide.png"})),
        ("Read", json!({"file_path": "spec.pdf", "pages": "1-2"})),
    ])
    .await;
    // No pdftoppm on this PATH (tine itself needs none).
    let empty = tempfile::tempdir().unwrap();
    let out = tine(&project, &server)
        .env("PATH", empty.path())
        .args(["-p", "look"])
        .run()
        .await;
    out.assert_success();
    let results = tool_results(&server);
    assert_eq!(results[0]["is_error"], true, "{results:#?}");
    let image = results[0]["content"].to_string();
    assert!(
        image.contains("9000x20 pixels") && image.contains("limit of 8000 pixels a side"),
        "{image}"
    );
    assert!(!request_bodies(&server)[1].to_string().contains("\"image\""));
    assert_eq!(results[1]["is_error"], true, "{results:#?}");
    let pdf = results[1]["content"].to_string();
    assert!(
        pdf.contains("pdftoppm") && pdf.contains("poppler-utils"),
        "{pdf}"
    );
}
