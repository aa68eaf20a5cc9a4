//! `tine acp` through the binary, with the `agent-client-protocol` crate's client side as the
//! editor: initialize, sessions, streamed updates of every kind, permission asks answered each
//! way, the editor's files, cancel, load in a new process, two sessions in one process, bad
//! input.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    CancelNotification, ClientCapabilities, ContentBlock, EmbeddedResource,
    EmbeddedResourceResource, FileSystemCapabilities, InitializeRequest, LoadSessionRequest,
    NewSessionRequest, PromptRequest, ReadTextFileRequest, ReadTextFileResponse,
    RequestPermissionOutcome, RequestPermissionRequest, RequestPermissionResponse,
    SelectedPermissionOutcome, SessionId, SessionNotification, SetSessionModeRequest, StopReason,
    TextContent, TextResourceContents, WriteTextFileRequest, WriteTextFileResponse,
};
use agent_client_protocol::{Agent, ByteStreams, Client, Error};
use serde_json::{Value, json};
use tine_e2e::tine_mock_api::{MockServer, Reply, Rule, Scenario};
use tine_e2e::{Project, request_bodies};
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

use super::{mock, tine};

/// What the editor saw and how it answers.
#[derive(Default)]
struct Editor {
    /// Every `session/update`, as JSON (`sessionId` and `update`).
    updates: Mutex<Vec<Value>>,
    /// Every `session/request_permission`, as JSON.
    asked: Mutex<Vec<Value>>,
    /// The option each next question picks (`allow_once`, `allow_always`, `reject_once`);
    /// none left: reject.
    choices: Mutex<VecDeque<&'static str>>,
    /// Unsaved buffers by path: `fs/read_text_file` answers with them, else with the disk.
    buffers: Mutex<HashMap<PathBuf, String>>,
    /// Paths read through the editor.
    reads: Mutex<Vec<PathBuf>>,
    /// Reads and writes that came before the editor heard of a call naming their file.
    unannounced: Mutex<Vec<PathBuf>>,
    /// Writes through the editor (the editor saves them to disk).
    writes: Mutex<Vec<(PathBuf, String)>>,
}

impl Editor {
    fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    fn choose(&self, choices: &[&'static str]) {
        self.choices.lock().unwrap().extend(choices);
    }

    /// Notes `path` when no `tool_call` seen so far names it.
    fn check_announced(&self, path: &Path) {
        let announced = self.updates_of("tool_call").iter().any(|call| {
            call["locations"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|l| l["path"] == path.display().to_string())
        });
        if !announced {
            self.unannounced.lock().unwrap().push(path.to_path_buf());
        }
    }

    /// The updates of one kind (`tool_call`, `plan`, ...).
    fn updates_of(&self, kind: &str) -> Vec<Value> {
        self.updates
            .lock()
            .unwrap()
            .iter()
            .filter(|u| u["update"]["sessionUpdate"] == kind)
            .map(|u| u["update"].clone())
            .collect()
    }

    fn text_of(&self, kind: &str) -> String {
        self.updates_of(kind)
            .iter()
            .filter_map(|u| u["content"]["text"].as_str().map(str::to_owned))
            .collect()
    }
}

/// `tine [extra] acp` in `project`, driven by `main` as `editor` (offering fs when `fs`).
async fn with_editor<R>(
    project: &Project,
    server: &MockServer,
    editor: &Arc<Editor>,
    fs: bool,
    main: impl AsyncFnOnce(ConnectionTo<Agent>) -> Result<R, Error>,
) -> (R, std::process::ExitStatus) {
    let mut child = tine(project, server).args(["acp"]).stdin_open().spawn();
    let stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let transport = ByteStreams::new(stdin.compat_write(), stdout.compat());
    let (e1, e2, e3, e4) = (
        Arc::clone(editor),
        Arc::clone(editor),
        Arc::clone(editor),
        Arc::clone(editor),
    );
    let result = Client
        .v1()
        .on_receive_notification(
            async move |notification: SessionNotification, _cx| {
                e1.updates
                    .lock()
                    .unwrap()
                    .push(serde_json::to_value(&notification).unwrap());
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .on_receive_request(
            async move |request: RequestPermissionRequest, responder, _cx| {
                e2.asked
                    .lock()
                    .unwrap()
                    .push(serde_json::to_value(&request).unwrap());
                let choice = e2
                    .choices
                    .lock()
                    .unwrap()
                    .pop_front()
                    .unwrap_or("reject_once");
                responder.respond(RequestPermissionResponse::new(
                    RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(choice)),
                ))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: ReadTextFileRequest, responder, _cx| {
                e3.reads.lock().unwrap().push(request.path.clone());
                e3.check_announced(&request.path);
                let buffer = e3.buffers.lock().unwrap().get(&request.path).cloned();
                match buffer.or_else(|| std::fs::read_to_string(&request.path).ok()) {
                    Some(text) => responder.respond(ReadTextFileResponse::new(text)),
                    None => responder.respond_with_error(Error::new(-32002, "no such file")),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: WriteTextFileRequest, responder, _cx| {
                e4.writes
                    .lock()
                    .unwrap()
                    .push((request.path.clone(), request.content.clone()));
                e4.check_announced(&request.path);
                std::fs::write(&request.path, &request.content).unwrap();
                responder.respond(WriteTextFileResponse::new())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .connect_with(transport, async move |cx: ConnectionTo<Agent>| {
            let capabilities = ClientCapabilities::new().fs(FileSystemCapabilities::new()
                .read_text_file(fs)
                .write_text_file(fs));
            cx.send_request(
                InitializeRequest::new(ProtocolVersion::V1).client_capabilities(capabilities),
            )
            .block_task()
            .await?;
            main(cx).await
        })
        .await;
    let value = result.expect("the editor's side of the connection");
    // The editor closes the connection: tine ends its sessions and exits.
    let status = tokio::time::timeout(Duration::from_secs(30), child.wait())
        .await
        .expect("tine acp exits once the editor is gone")
        .unwrap();
    (value, status)
}

async fn new_session(cx: &ConnectionTo<Agent>, cwd: &Path) -> Result<SessionId, Error> {
    Ok(cx
        .send_request(NewSessionRequest::new(cwd.to_path_buf()))
        .block_task()
        .await?
        .session_id)
}

async fn prompt(
    cx: &ConnectionTo<Agent>,
    session: &SessionId,
    text: &str,
) -> Result<StopReason, Error> {
    prompt_blocks(
        cx,
        session,
        vec![ContentBlock::Text(TextContent::new(text))],
    )
    .await
}

async fn prompt_blocks(
    cx: &ConnectionTo<Agent>,
    session: &SessionId,
    blocks: Vec<ContentBlock>,
) -> Result<StopReason, Error> {
    Ok(cx
        .send_request(PromptRequest::new(session.clone(), blocks))
        .block_task()
        .await?
        .stop_reason)
}

/// The model's `tool_result` texts in the last request it got.
fn last_tool_results(server: &MockServer) -> Vec<String> {
    let bodies = request_bodies(server);
    let last = bodies.last().unwrap();
    let mut texts = Vec::new();
    for message in last["messages"].as_array().unwrap() {
        for block in message["content"].as_array().into_iter().flatten() {
            if block["type"] == "tool_result" {
                texts.push(match &block["content"] {
                    Value::String(text) => text.clone(),
                    other => other.to_string(),
                });
            }
        }
    }
    texts
}

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

/// How many processes run exactly `command` (from /proc).
fn running_processes(command: &str) -> usize {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|entry| std::fs::read(entry.ok()?.path().join("cmdline")).ok())
        .filter(|cmdline| {
            let args: Vec<&[u8]> = cmdline
                .split(|b| *b == 0)
                .filter(|a| !a.is_empty())
                .collect();
            args.join(&b' ') == command.as_bytes()
        })
        .count()
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
