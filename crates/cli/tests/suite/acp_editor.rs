//! `tine acp` with an editor's own files, terminal and MCP servers, through the binary: Read
//! of an unsaved buffer, Write through `fs/write_text_file` once allowed, "always allow"
//! saving the rule, Bash in the editor's terminal, the editor's MCP servers.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use agent_client_protocol::v1::schema::{
    CancelNotification, ContentBlock, NewSessionRequest, PromptRequest, StopReason, TextContent,
};
use serde_json::json;
use tine_e2e::tine_mock_api::{Reply, Rule, Scenario};
use tine_e2e::{Project, request_bodies};

use super::acp_client::{
    Editor, last_tool_results, new_session, prompt, running_processes, with_editor,
};
use super::mock;

#[tokio::test]
async fn read_sees_the_unsaved_buffer_and_a_write_goes_through_the_editor_once_allowed() {
    let project = Project::new();
    let notes = project.write("notes.txt", "on disk\n");
    let out = project.cwd().join("out.txt");
    let server = mock(
        Scenario::new()
            .rule(
                Rule::new().last_user_contains("write out.txt again").reply(
                    Reply::text("Writing again.")
                        .with_tool_use("Write", json!({"file_path": out, "content": "written\n"})),
                ),
            )
            .rule(
                Rule::new().assistant_turns(0).reply(
                    Reply::text("Reading.").with_tool_use("Read", json!({"file_path": notes})),
                ),
            )
            .rule(
                Rule::new().assistant_turns(1).reply(
                    Reply::text("Writing.")
                        .with_tool_use("Write", json!({"file_path": out, "content": "written\n"})),
                ),
            )
            .rule(Rule::new().tool_results(true).reply(Reply::text("Done."))),
    )
    .await;
    let editor = Editor::new();
    editor
        .buffers
        .lock()
        .unwrap()
        .insert(notes.clone(), "UNSAVED BUFFER\n".into());
    // The first Write is rejected, the second allowed.
    editor.choose(&["reject_once", "allow_once"]);
    let cwd = project.cwd().to_path_buf();
    let (stops, _) = with_editor(&project, &server, &editor, true, async |cx| {
        let session = new_session(&cx, &cwd).await?;
        let first = prompt(&cx, &session, "read the notes then write out.txt").await?;
        let rejected_results = last_tool_results(&server);
        let second = prompt(&cx, &session, "write out.txt again").await?;
        Ok((first, second, rejected_results))
    })
    .await;
    let (first, second, rejected_results) = stops;
    assert_eq!((first, second), (StopReason::EndTurn, StopReason::EndTurn));
    // Read served from the editor's buffer, not the disk.
    assert!(editor.reads.lock().unwrap().contains(&notes));
    // The editor heard of each call before it read or wrote a file.
    assert_eq!(*editor.unannounced.lock().unwrap(), Vec::<PathBuf>::new());
    assert!(
        rejected_results
            .iter()
            .any(|r| r.contains("UNSAVED BUFFER")),
        "{rejected_results:?}"
    );
    assert!(!rejected_results.iter().any(|r| r.contains("on disk")));
    // The rejection reached the model, and nothing was written.
    assert!(
        rejected_results
            .iter()
            .any(|r| r.to_lowercase().contains("reject")
                || r.contains("denied")
                || r.contains("doesn't want")),
        "{rejected_results:?}"
    );
    let asked = editor.asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 2, "{asked:?}");
    let kinds: Vec<&str> = asked[0]["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["allow_once", "allow_always", "reject_once"]);
    assert_eq!(asked[0]["toolCall"]["kind"], "edit");
    // Allowed: written through fs/write_text_file (the editor saved it).
    let writes = editor.writes.lock().unwrap().clone();
    assert_eq!(writes, [(out.clone(), "written\n".to_owned())]);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "written\n");
    let diff = editor
        .updates_of("tool_call_update")
        .into_iter()
        .find(|u| u["status"] == "completed" && u["content"][0]["type"] == "diff");
    assert!(
        diff.is_some(),
        "{:?}",
        editor.updates_of("tool_call_update")
    );
}

#[tokio::test]
async fn allow_always_saves_the_rule_the_tui_saves() {
    let project = Project::new();
    let server = mock(
        Scenario::new()
            .rule(
                Rule::new().assistant_turns(0).reply(
                    Reply::text("Running.")
                        .with_tool_use("Bash", json!({"command": "touch made && echo hi-there"})),
                ),
            )
            .rule(Rule::new().tool_results(true).reply(Reply::text("Done."))),
    )
    .await;
    let editor = Editor::new();
    editor.choose(&["allow_always"]);
    let cwd = project.cwd().to_path_buf();
    let (stop, _) = with_editor(&project, &server, &editor, false, async |cx| {
        let session = new_session(&cx, &cwd).await?;
        prompt(&cx, &session, "say hi").await
    })
    .await;
    assert_eq!(stop, StopReason::EndTurn);
    let saved = project.read(".tine/settings.local.json");
    assert!(saved.contains("Bash(touch"), "{saved}");
    assert!(project.cwd().join("made").exists());
    let output = editor
        .updates_of("tool_call_update")
        .into_iter()
        .find(|u| u["status"] == "completed")
        .unwrap();
    assert!(
        output["content"][0]["content"]["text"]
            .as_str()
            .unwrap()
            .contains("hi-there")
    );
    assert_eq!(editor.updates_of("tool_call")[0]["kind"], "execute");
}

#[tokio::test]
async fn the_editors_mcp_servers_join_without_a_trust_prompt() {
    let project = Project::new();
    let server = mock(
        Scenario::new()
            .rule(
                Rule::new()
                    .assistant_turns(0)
                    .reply(Reply::text("Echoing.").with_tool_use(
                        "mcp__ed__echo",
                        json!({"text": "hello from the editor's server"}),
                    )),
            )
            .rule(Rule::new().tool_results(true).reply(Reply::text("Done."))),
    )
    .await;
    let editor = Editor::new();
    editor.choose(&["allow_once"]);
    let cwd = project.cwd().to_path_buf();
    let binary = super::mcp_session::server_binary().to_path_buf();
    let (stop, _) = with_editor(&project, &server, &editor, false, async |cx| {
        let stdio = agent_client_protocol::v1::schema::McpServerStdio::new("ed", binary)
            .args(vec!["--no-resources".to_owned()]);
        let session = cx
            .send_request(NewSessionRequest::new(cwd.clone()).mcp_servers(vec![
                agent_client_protocol::v1::schema::McpServer::Stdio(stdio),
            ]))
            .block_task()
            .await?
            .session_id;
        prompt(&cx, &session, "echo it").await
    })
    .await;
    assert_eq!(stop, StopReason::EndTurn);
    let results = last_tool_results(&server);
    assert!(
        results
            .iter()
            .any(|r| r.contains("hello from the editor's server")),
        "{results:?}"
    );
    let first = request_bodies(&server)[0].clone();
    assert!(
        first["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "mcp__ed__echo"),
        "the editor's server's tools are offered"
    );
}

#[tokio::test]
async fn bash_runs_in_the_editors_terminal_when_it_offers_one() {
    let project = Project::new();
    std::fs::create_dir(project.cwd().join("sub")).unwrap();
    let server = mock(
        Scenario::new()
            .rule(
                Rule::new()
                    .assistant_turns(0)
                    .reply(Reply::text("Running.").with_tool_use(
                        "Bash",
                        json!({"command": "cd sub && echo from-the-terminal && (exit 3)"}),
                    )),
            )
            .rule(
                Rule::new()
                    .assistant_turns(1)
                    .reply(Reply::text("Where?").with_tool_use("Bash", json!({"command": "pwd"}))),
            )
            .rule(Rule::new().tool_results(true).reply(Reply::text("Done."))),
    )
    .await;
    let editor = Editor::new();
    editor
        .offers_terminal
        .store(true, std::sync::atomic::Ordering::SeqCst);
    editor.choose(&["allow_once", "allow_once"]);
    let cwd = project.cwd().to_path_buf();
    let (stop, _) = with_editor(&project, &server, &editor, false, async |cx| {
        let session = new_session(&cx, &cwd).await?;
        prompt(&cx, &session, "run it").await
    })
    .await;
    assert_eq!(stop, StopReason::EndTurn);
    let created = editor.created.lock().unwrap().clone();
    assert_eq!(
        created.len(),
        2,
        "both commands ran in the editor's terminal: {created:?}"
    );
    assert_eq!(created[0]["command"], "bash");
    assert!(
        created[0]["args"][1]
            .as_str()
            .unwrap()
            .contains("echo from-the-terminal")
    );
    assert_eq!(created[0]["cwd"], cwd.display().to_string());
    // The model reads the output and the exit code as from a local shell.
    let bodies = request_bodies(&server);
    let second = bodies[1].to_string();
    assert!(second.contains("from-the-terminal"), "{second}");
    assert!(second.contains("Exit code 3"), "{second}");
    // The call shows the terminal.
    let shown = editor.updates_of("tool_call_update").into_iter().any(|u| {
        u["content"][0]["type"] == "terminal" && u["content"][0]["terminalId"] == "term-1"
    });
    assert!(shown, "{:?}", editor.updates_of("tool_call_update"));
    // The next command starts where `cd` left the first.
    let sub = PathBuf::from(&cwd).join("sub").display().to_string();
    assert_eq!(created[1]["cwd"], sub);
    let last = bodies.last().unwrap().to_string();
    assert!(last.contains(&sub), "{last}");
}

#[tokio::test]
async fn a_cancel_kills_the_command_in_the_editors_terminal() {
    let project = Project::new();
    let server = mock(
        Scenario::new()
            .rule(Rule::new().assistant_turns(0).reply(
                Reply::text("Waiting.").with_tool_use("Bash", json!({"command": "sleep 24.5"})),
            ))
            .rule(Rule::new().tool_results(true).reply(Reply::text("Done."))),
    )
    .await;
    let editor = Editor::new();
    editor
        .offers_terminal
        .store(true, std::sync::atomic::Ordering::SeqCst);
    editor.choose(&["allow_once"]);
    let cwd = project.cwd().to_path_buf();
    let (took, _) = with_editor(&project, &server, &editor, false, async |cx| {
        let session = new_session(&cx, &cwd).await?;
        let running = cx.send_request(PromptRequest::new(
            session.clone(),
            vec![ContentBlock::Text(TextContent::new("wait"))],
        ));
        for _ in 0..400 {
            if running_processes("sleep 24.5") > 0 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        assert!(
            !editor.created.lock().unwrap().is_empty(),
            "it runs in the editor's terminal"
        );
        let sent = Instant::now();
        cx.send_notification(CancelNotification::new(session.clone()))?;
        let stop = running.block_task().await?.stop_reason;
        assert_eq!(stop, StopReason::Cancelled);
        let took = sent.elapsed();
        for _ in 0..100 {
            if running_processes("sleep 24.5") == 0 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(
            running_processes("sleep 24.5"),
            0,
            "terminal/kill stopped it"
        );
        Ok(took)
    })
    .await;
    assert!(took < Duration::from_secs(1), "cancelled in {took:?}");
}
