//! `tine acp` through the binary, with the `agent-client-protocol` crate's client side as the
//! editor: initialize, sessions, streamed updates of every kind, permission asks answered each
//! way, the editor's files, cancel, load in a new process, two sessions in one process, bad
//! input.

use std::time::{Duration, Instant};

use agent_client_protocol::Agent;
use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::InitializeRequest;
use agent_client_protocol::v1::schema::{
    CancelNotification, ContentBlock, EmbeddedResource, EmbeddedResourceResource,
    LoadSessionRequest, PromptRequest, SessionId, SetSessionModeRequest, StopReason, TextContent,
    TextResourceContents,
};
use agent_client_protocol::{ByteStreams, Client};
use serde_json::json;
use tine_e2e::tine_mock_api::{Reply, Rule, Scenario};
use tine_e2e::{Project, request_bodies};
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

use super::acp_client::{
    Editor, new_session, prompt, prompt_blocks, running_processes, with_editor,
};
use super::{mock, tine};

#[tokio::test]
async fn initialize_offers_load_images_embedded_context_and_http_mcp() {
    let project = Project::new();
    let server = mock(Scenario::new().default_reply(Reply::text("Hi."))).await;
    let mut child = tine(&project, &server).args(["acp"]).stdin_open().spawn();
    let transport = ByteStreams::new(
        child.stdin.take().unwrap().compat_write(),
        child.stdout.take().unwrap().compat(),
    );
    let reply = Client
        .v1()
        .connect_with(transport, async |cx: ConnectionTo<Agent>| {
            cx.send_request(InitializeRequest::new(ProtocolVersion::V1))
                .block_task()
                .await
        })
        .await
        .unwrap();
    let wire = serde_json::to_value(&reply).unwrap();
    assert_eq!(wire["protocolVersion"], 1);
    assert_eq!(wire["agentCapabilities"]["loadSession"], true);
    assert_eq!(
        wire["agentCapabilities"]["promptCapabilities"]["image"],
        true
    );
    assert_eq!(
        wire["agentCapabilities"]["promptCapabilities"]["embeddedContext"],
        true
    );
    assert_eq!(wire["agentCapabilities"]["mcpCapabilities"]["http"], true);
    assert_eq!(wire["authMethods"], json!([]));
    let status = tokio::time::timeout(Duration::from_secs(30), child.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(status.success(), "{status:?}");
}

#[tokio::test]
async fn a_prompt_streams_text_a_read_call_with_kind_and_location_and_ends_end_turn() {
    let project = Project::new();
    let file = project.write("notes.txt", "on disk\n");
    let server =
        mock(
            Scenario::new()
                .rule(Rule::new().assistant_turns(0).reply(
                    Reply::text("Reading.").with_tool_use("Read", json!({"file_path": file})),
                ))
                .rule(
                    Rule::new()
                        .tool_results(true)
                        .reply(Reply::text("It says on disk.")),
                ),
        )
        .await;
    let editor = Editor::new();
    let cwd = project.cwd().to_path_buf();
    let (stop, status) = with_editor(&project, &server, &editor, false, async |cx| {
        let session = new_session(&cx, &cwd).await?;
        prompt(&cx, &session, "what do the notes say?").await
    })
    .await;
    assert_eq!(stop, StopReason::EndTurn);
    assert!(status.success(), "{status:?}");
    assert!(
        editor
            .text_of("agent_message_chunk")
            .contains("It says on disk.")
    );
    let calls = editor.updates_of("tool_call");
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(calls[0]["kind"], "read");
    assert_eq!(calls[0]["locations"][0]["path"], file.display().to_string());
    assert_eq!(
        calls[0]["rawInput"]["file_path"],
        file.display().to_string()
    );
    let done = editor.updates_of("tool_call_update");
    assert!(
        done.iter()
            .any(|u| u["toolCallId"] == calls[0]["toolCallId"] && u["status"] == "completed"),
        "{done:?}"
    );
    let commands = editor.updates_of("available_commands_update");
    assert!(
        commands[0]["availableCommands"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["name"] == "compact"),
        "{commands:?}"
    );
}

#[tokio::test]
async fn todo_write_is_a_plan_and_a_mode_change_is_announced() {
    let project = Project::new();
    let todos = json!({"todos": [
        {"content": "Read the code", "status": "completed", "activeForm": "Reading"},
        {"content": "Fix it", "status": "in_progress", "activeForm": "Fixing"}
    ]});
    let server = mock(
        Scenario::new()
            .rule(
                Rule::new()
                    .assistant_turns(0)
                    .reply(Reply::text("Planning.").with_tool_use("TodoWrite", todos)),
            )
            .rule(
                Rule::new()
                    .tool_results(true)
                    .reply(Reply::text("Planned.")),
            ),
    )
    .await;
    let editor = Editor::new();
    let cwd = project.cwd().to_path_buf();
    let (stop, _) = with_editor(&project, &server, &editor, false, async |cx| {
        let session = new_session(&cx, &cwd).await?;
        cx.send_request(SetSessionModeRequest::new(session.clone(), "acceptEdits"))
            .block_task()
            .await?;
        let unknown = cx
            .send_request(SetSessionModeRequest::new(session.clone(), "yolo"))
            .block_task()
            .await;
        assert!(unknown.unwrap_err().message.contains("unknown mode yolo"));
        prompt(&cx, &session, "plan it").await
    })
    .await;
    assert_eq!(stop, StopReason::EndTurn);
    let plans = editor.updates_of("plan");
    assert_eq!(plans.len(), 1, "{plans:?}");
    assert_eq!(plans[0]["entries"][0]["content"], "Read the code");
    assert_eq!(plans[0]["entries"][1]["status"], "in_progress");
    assert!(editor.updates_of("tool_call").is_empty());
    let modes = editor.updates_of("current_mode_update");
    assert_eq!(modes[0]["currentModeId"], "acceptEdits");
}

#[tokio::test]
async fn cancel_ends_the_turn_as_cancelled_and_stops_its_command_and_background_jobs() {
    let project = Project::new();
    let marker = project.cwd().join("finished");
    let command = format!("sleep 20 && touch {}", marker.display());
    let server =
        mock(
            Scenario::new()
                .rule(Rule::new().assistant_turns(0).reply(
                    Reply::text("In the background.").with_tool_use(
                        "Bash",
                        json!({"command": "sleep 301", "run_in_background": true}),
                    ),
                ))
                .rule(Rule::new().assistant_turns(1).reply(
                    Reply::text("Waiting.").with_tool_use("Bash", json!({"command": command})),
                ))
                .rule(Rule::new().tool_results(true).reply(Reply::text("Done."))),
        )
        .await;
    let editor = Editor::new();
    editor.choose(&["allow_once", "allow_once"]);
    let cwd = project.cwd().to_path_buf();
    let (took, status) = with_editor(&project, &server, &editor, false, async |cx| {
        let session = new_session(&cx, &cwd).await?;
        let running = cx.send_request(PromptRequest::new(
            session.clone(),
            vec![ContentBlock::Text(TextContent::new("wait"))],
        ));
        // Until the foreground command runs.
        for _ in 0..400 {
            if running_processes("sleep 20") > 0 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        assert!(
            running_processes("sleep 301") > 0,
            "the background job runs"
        );
        let sent = Instant::now();
        cx.send_notification(CancelNotification::new(session.clone()))?;
        let stop = running.block_task().await?.stop_reason;
        let took = sent.elapsed();
        assert_eq!(stop, StopReason::Cancelled);
        // The turn's background job stops with it.
        let mut left = usize::MAX;
        for _ in 0..100 {
            left = running_processes("sleep 301");
            if left == 0 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(left, 0, "the background job was stopped");
        // A cancel after the turn is over is harmless, and the session goes on.
        cx.send_notification(CancelNotification::new(session.clone()))?;
        Ok(took)
    })
    .await;
    assert!(took < Duration::from_secs(1), "cancelled in {took:?}");
    assert!(status.success());
    assert!(!marker.exists(), "the command was stopped");
}

#[tokio::test]
async fn load_in_a_new_process_replays_the_conversation_and_continues_it() {
    let project = Project::new();
    let server = mock(
        Scenario::new()
            .rule(
                Rule::new()
                    .last_user_contains("first question")
                    .reply(Reply::text("First answer.")),
            )
            .rule(
                Rule::new()
                    .last_user_contains("second question")
                    .reply(Reply::text("Second answer.")),
            ),
    )
    .await;
    let cwd = project.cwd().to_path_buf();
    let first = Editor::new();
    let (session, _) = with_editor(&project, &server, &first, false, async |cx| {
        let session = new_session(&cx, &cwd).await?;
        prompt(&cx, &session, "first question").await?;
        Ok(session)
    })
    .await;
    let second = Editor::new();
    let (stop, status) = with_editor(&project, &server, &second, false, async |cx| {
        cx.send_request(LoadSessionRequest::new(session.clone(), cwd.clone()))
            .block_task()
            .await?;
        // Replayed before the answer.
        assert!(
            second
                .text_of("user_message_chunk")
                .contains("first question")
        );
        assert!(
            second
                .text_of("agent_message_chunk")
                .contains("First answer.")
        );
        prompt(&cx, &session, "second question").await
    })
    .await;
    assert_eq!(stop, StopReason::EndTurn);
    assert!(status.success());
    assert!(
        second
            .text_of("agent_message_chunk")
            .contains("Second answer.")
    );
    let bodies = request_bodies(&server);
    let last = bodies.last().unwrap().to_string();
    assert!(
        last.contains("first question") && last.contains("First answer."),
        "{last}"
    );
    // The new process reads the earlier process's prefix from the cache.
    let usage = server.requests().last().unwrap().usage.unwrap();
    let prompt_tokens =
        usage.cache_read_input_tokens + usage.cache_creation_input_tokens + usage.input_tokens;
    let share = usage.cache_read_input_tokens as f64 / prompt_tokens as f64;
    assert!(
        share >= 0.9,
        "read {share:.3} of the prompt from the cache: {usage:?}"
    );
    assert!(
        second
            .updates
            .lock()
            .unwrap()
            .iter()
            .all(|u| u["sessionId"] == json!(session.0.as_ref()))
    );
}

#[tokio::test]
async fn two_sessions_live_in_one_process_each_reading_its_prefix_from_the_cache() {
    let project = Project::new();
    let server = mock(Scenario::new().default_reply(Reply::text("Answer."))).await;
    let cwd = project.cwd().to_path_buf();
    let editor = Editor::new();
    let (ids, _) = with_editor(&project, &server, &editor, false, async |cx| {
        let a = new_session(&cx, &cwd).await?;
        let b = new_session(&cx, &cwd).await?;
        assert_eq!(prompt(&cx, &a, "alpha one").await?, StopReason::EndTurn);
        assert_eq!(prompt(&cx, &b, "beta one").await?, StopReason::EndTurn);
        assert_eq!(prompt(&cx, &a, "alpha two").await?, StopReason::EndTurn);
        Ok((a, b))
    })
    .await;
    assert_ne!(ids.0, ids.1);
    let log = server.requests();
    let last = log.last().unwrap();
    let body = last.json().unwrap().to_string();
    assert!(
        body.contains("alpha one") && !body.contains("beta one"),
        "{body}"
    );
    let usage = last.usage.unwrap();
    let prompt_tokens =
        usage.cache_read_input_tokens + usage.cache_creation_input_tokens + usage.input_tokens;
    let share = usage.cache_read_input_tokens as f64 / prompt_tokens as f64;
    assert!(
        share >= 0.9,
        "read {share:.3} of the prompt from the cache: {usage:?}"
    );
    for id in [&ids.0, &ids.1] {
        assert!(
            project
                .transcripts_dir()
                .join(format!("{}.jsonl", id.0))
                .exists(),
            "a transcript per session"
        );
    }
}

#[tokio::test]
async fn an_embedded_file_is_context_and_bad_requests_get_errors_naming_what_is_wrong() {
    let project = Project::new();
    let server = mock(Scenario::new().default_reply(Reply::text("Seen."))).await;
    let cwd = project.cwd().to_path_buf();
    let editor = Editor::new();
    with_editor(&project, &server, &editor, false, async |cx| {
        let unknown = SessionId::new("no-such-session");
        let error = prompt(&cx, &unknown, "hi").await.unwrap_err();
        assert!(error.message.contains("no-such-session"), "{error:?}");
        let session = new_session(&cx, &cwd).await?;
        let file = ContentBlock::Resource(EmbeddedResource::new(
            EmbeddedResourceResource::TextResourceContents(TextResourceContents::new(
                "fn unsaved() {}",
                format!("file://{}/src/lib.rs", cwd.display()),
            )),
        ));
        let stop = prompt_blocks(
            &cx,
            &session,
            vec![ContentBlock::Text(TextContent::new("look at this")), file],
        )
        .await?;
        assert_eq!(stop, StopReason::EndTurn);
        let empty = prompt_blocks(&cx, &session, Vec::new()).await.unwrap_err();
        assert!(empty.message.contains("empty"), "{empty:?}");
        Ok(())
    })
    .await;
    let last = request_bodies(&server).last().unwrap().to_string();
    assert!(last.contains("1\\tfn unsaved() {}"), "{last}");
    assert!(last.contains("Called the Read tool"), "{last}");
}

#[tokio::test]
async fn the_editor_leaving_mid_turn_ends_it_keeps_the_transcript_and_exits_zero() {
    let project = Project::new();
    let server = mock(
        Scenario::new()
            .rule(Rule::new().assistant_turns(0).reply(
                Reply::text("Waiting.").with_tool_use("Bash", json!({"command": "sleep 30"})),
            ))
            .rule(Rule::new().tool_results(true).reply(Reply::text("Done."))),
    )
    .await;
    let editor = Editor::new();
    editor.choose(&["allow_once"]);
    let cwd = project.cwd().to_path_buf();
    let started = Instant::now();
    let (session, status) = with_editor(&project, &server, &editor, false, async |cx| {
        let session = new_session(&cx, &cwd).await?;
        let _running = cx.send_request(PromptRequest::new(
            session.clone(),
            vec![ContentBlock::Text(TextContent::new(
                "wait for the editor to leave",
            ))],
        ));
        for _ in 0..200 {
            if !editor.asked.lock().unwrap().is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
        // The editor goes away with the turn running.
        Ok(session)
    })
    .await;
    assert!(status.success(), "{status:?}");
    assert!(
        started.elapsed() < Duration::from_secs(25),
        "the sleep was not waited for"
    );
    let records = project.transcript(&session.0);
    let text = serde_json::to_string(&records).unwrap();
    assert!(text.contains("wait for the editor to leave"), "{text}");
    assert!(
        text.contains("sleep 30"),
        "the call is in the transcript: {text}"
    );
}

#[tokio::test]
async fn without_a_key_session_new_says_authentication_is_required_and_how() {
    let project = Project::new();
    let server = mock(Scenario::new().default_reply(Reply::text("Hi."))).await;
    let mut child = tine(&project, &server)
        .env_remove("ANTHROPIC_API_KEY")
        .args(["acp"])
        .stdin_open()
        .spawn();
    let transport = ByteStreams::new(
        child.stdin.take().unwrap().compat_write(),
        child.stdout.take().unwrap().compat(),
    );
    let cwd = project.cwd().to_path_buf();
    let error = Client
        .v1()
        .connect_with(transport, async |cx: ConnectionTo<Agent>| {
            cx.send_request(InitializeRequest::new(ProtocolVersion::V1))
                .block_task()
                .await?;
            Ok(new_session(&cx, &cwd).await.unwrap_err())
        })
        .await
        .unwrap();
    assert_eq!(i32::from(error.code), -32000, "{error:?}");
    assert!(error.message.contains("ANTHROPIC_API_KEY"), "{error:?}");
    let status = child.wait().await.unwrap();
    assert!(status.success());
}
