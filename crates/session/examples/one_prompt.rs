//! A session as a front end sees it: start one on the bundled simulator, submit one prompt,
//! print the events that come back (the streamed text, the tool call, the turn's end with its
//! cost by source), then shut down, which lets automatic memory run.
//!
//!     cargo run -p tine-session --example one_prompt

use std::sync::Arc;

use serde_json::json;
use tine_api_client::{ClientConfig, Credentials, HttpClient, ModelClient};
use tine_mock_api::{MockConfig, MockServer, Reply, Rule, Scenario};
use tine_query_loop::QueryEvent;
use tine_session::{Op, Session, SessionEvent, SessionOptions};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let scratch = tempfile::tempdir()?;
    let cwd = scratch.path().join("project");
    std::fs::create_dir_all(&cwd)?;
    std::fs::write(cwd.join("README.md"), "# demo\nA tiny project.\n")?;

    let scenario = Scenario::new()
        .rule(
            Rule::new()
                .last_user_contains("what is this")
                .reply(Reply::tool_use("Read", json!({"file_path": "README.md"}))),
        )
        .rule(
            Rule::new()
                .tool_results(true)
                .reply(Reply::text("It is a tiny demo project with a README.")),
        )
        .default_reply(Reply::text("Nothing to remember."));
    let server = MockServer::start(MockConfig::new(scenario)).await?;
    let client: Arc<dyn ModelClient> = Arc::new(HttpClient::new(ClientConfig::new(
        server.base_url(),
        Credentials::api_key("offline"),
    ))?);

    // Everything under the scratch directory, so the machine's own settings stay out of it.
    let mut options = SessionOptions::new(&cwd);
    options.home = Some(scratch.path().join("tine-home"));
    options.user_home = Some(scratch.path().join("user-home"));
    options.managed_settings = Some(scratch.path().join("no-managed-settings.json"));
    options.client = Some(client);

    let (session, mut events) = Session::start(options).await?;
    session.submit(Op::Prompt("what is this project?".into()))?;
    while let Some(event) = events.recv().await {
        match event.msg {
            SessionEvent::Configured(info) => {
                println!("session {} on {}", info.session_id, info.model)
            }
            SessionEvent::Notice(notice) => println!("notice: {}", notice.text),
            SessionEvent::TurnStarted => println!("turn started"),
            SessionEvent::ToolInput { tool, input, .. } => println!("tool call: {tool} {input}"),
            SessionEvent::Query(QueryEvent::TextDelta { text }) => print!("{text}"),
            SessionEvent::Query(QueryEvent::ToolResult { tool, output, .. }) => {
                println!("tool result ({tool}): {}", output.summary)
            }
            SessionEvent::TurnEnded(end) => {
                println!("\nturn ended: {:?}", end.outcome);
                for (source, usage) in &end.cost.by_source {
                    println!(
                        "  {source}: {} request(s), {} cache read, ${:.6}",
                        usage.requests, usage.usage.cache_read_input_tokens, usage.cost_usd
                    );
                }
                break;
            }
            _ => {}
        }
    }
    let report = session.shutdown().await;
    println!(
        "shutdown: {} background job(s) finished; the session spent ${:.6} in all",
        report.drain.finished,
        report.cost.total().cost_usd
    );
    server.stop().await;
    Ok(())
}
