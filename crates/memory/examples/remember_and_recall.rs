//! Automatic memory over a scripted session on the bundled simulator. Session one: the user
//! states the project's stack; when the turn ends, the extraction fork (on the parent's prompt
//! cache) writes a topic file and the `MEMORY.md` index. Then recall: a side query picks that
//! file for a later question, and its text comes back as an attachment.
//!
//!     cargo run -p tine-memory --example remember_and_recall

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tine_api_client::{ClientConfig, Credentials, HttpClient, ModelClient};
use tine_config::SessionId;
use tine_fork_runtime::{CacheSafeSlot, ParentContext, SessionLocation, StopHookPipeline};
use tine_memory::{
    DirSource, EXTRACTION_MARKER, ExtractionJob, MemoryDir, RECALL_MARKER, Recall,
    SideQuerySelector, default_memory_dir,
};
use tine_mock_api::{MockConfig, MockServer, Reply, Rule, Scenario};
use tine_query_loop::{AllowAll, EngineConfig, QueryEngine};
use tine_tools::{Tool, ToolContext, builtin_tools};

const MODEL: &str = "claude-sonnet-4-5";
const TOPIC: &str = "---\nname: Project stack\ndescription: React 18 frontend, PostgreSQL \
                     database\ntype: project\n---\n\nThe project uses React 18 and PostgreSQL.\n";

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let scratch = tempfile::tempdir()?;
    let home = scratch.path().join("tine-home");
    let cwd = scratch.path().join("project");
    std::fs::create_dir_all(&cwd)?;
    let memory = MemoryDir::new(default_memory_dir(&home, &cwd), DirSource::Default);
    memory.ensure()?;
    let mem = memory.path().display().to_string();

    // The scripted model: the extraction fork writes the topic file and the index; the recall
    // side query picks that file; the main thread just answers.
    let scenario = Scenario::new()
        .rule(Rule::new().marker(EXTRACTION_MARKER).reply(
            Reply::text("Saving the stack.")
                .with_tool_use(
                    "Write",
                    json!({"file_path": format!("{mem}/project_stack.md"), "content": TOPIC}),
                )
                .with_tool_use(
                    "Write",
                    json!({"file_path": format!("{mem}/MEMORY.md"),
                           "content": "- [Project stack](project_stack.md) — React 18, PostgreSQL\n"}),
                ),
        ))
        .rule(
            Rule::new()
                .marker(RECALL_MARKER)
                .reply(Reply::text(r#"{"selected_memories": ["project_stack.md"]}"#)),
        )
        .rule(Rule::new().tool_results(true).reply(Reply::text("Saved.")))
        .default_reply(Reply::text("Noted: React 18 and PostgreSQL."));
    let server = MockServer::start(MockConfig::new(scenario)).await?;
    let client: Arc<dyn ModelClient> = Arc::new(HttpClient::new(ClientConfig::new(
        server.base_url(),
        Credentials::api_key("offline"),
    ))?);

    // Session one, wired as the cli wires it: the engine's stop hooks are the pipeline, whose
    // parent (what forks are made from) shares the engine's tool context.
    let mut tools: Vec<Arc<dyn Tool>> = builtin_tools();
    tools.sort_by(|a, b| a.name().cmp(b.name()));
    let tools: Arc<[Arc<dyn Tool>]> = Arc::from(tools);
    let tool_context = ToolContext::new(&cwd);
    let session_id = SessionId::new_random();
    let parent = Arc::new(ParentContext::new(
        Arc::clone(&client),
        Arc::clone(&tools),
        tool_context.clone(),
        SessionLocation {
            home: home.clone(),
            cwd: cwd.clone(),
            session_id: session_id.clone(),
        },
    ));
    let pipeline = Arc::new(
        StopHookPipeline::new(parent, CacheSafeSlot::new())
            .with_job(Arc::new(ExtractionJob::new(memory.clone())?)),
    );
    let guidelines: String = (0..200)
        .map(|i| format!("Guideline {i}: read before you edit.\n"))
        .collect();
    let mut config = EngineConfig::new(
        Arc::clone(&client),
        MODEL,
        &cwd,
        &home,
        guidelines,
        tools,
        Arc::new(AllowAll),
    );
    config.tool_context = Some(tool_context);
    config.stop_hooks = Some(pipeline.clone());
    let mut engine = QueryEngine::with_session_id(config, session_id).await?;

    let turn = engine
        .submit("this project uses React 18 and PostgreSQL", |_| {})
        .await;
    println!("session one: {}", turn.result);
    // As `tine -p` does at exit: run what was batched and wait for the background jobs.
    pipeline.flush();
    pipeline.drain(Duration::from_secs(30)).await;

    for header in tine_memory::scan_memories(memory.path(), 200).memories {
        println!(
            "saved {}: {}",
            header.file_name,
            header.frontmatter.description.unwrap_or_default()
        );
    }
    let log = server.requests();
    if let Some(at) = log
        .iter()
        .position(|r| String::from_utf8_lossy(&r.body).contains(EXTRACTION_MARKER))
    {
        let (parent_last, fork_first) = (log[at - 1].usage, log[at].usage);
        if let (Some(parent_last), Some(fork_first)) = (parent_last, fork_first) {
            println!(
                "extraction fork: read {} tokens from the cache (the parent's last request had \
                 {} cached)",
                fork_first.cache_read_input_tokens,
                parent_last.cache_read_input_tokens + parent_last.cache_creation_input_tokens
            );
        }
    }

    // Recall in a later session: a small side query picks the files worth attaching.
    let recall = Recall::new(
        memory.path(),
        Arc::new(SideQuerySelector::new(client, MODEL)),
    )
    .with_inline_bytes(0);
    let question = "which database does this project use?";
    if let Some(attachment) = recall.attachment_for(question).await? {
        println!("recall for `{question}`: {:?}", attachment.files);
        println!(
            "{}",
            attachment
                .text
                .lines()
                .take(8)
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
    server.stop().await;
    Ok(())
}
