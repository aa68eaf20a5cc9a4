//! Memory extraction's cost, against the in-process mock (its cache accounting is the API's).
//!
//! The same scripted 30-turn session (the prompt prefix growing to ~60k tokens) runs four
//! times: with extraction after every turn (`every: 1`; shipped, extraction batches several
//! turns, which `cargo xtask bench cost` measures) sharing the parent's cache; with the
//! same forks unable to share anything (the simulator's cache is emptied just before each
//! fork, so it writes the whole conversation again, as a background call with a prompt of its
//! own would); with the forks caching their own prompt instead of the parent's tail
//! (`cache_parent_tail: false`, Claude Code's placement); and with auto memory off. Printed:
//! the forks' billed-equivalent input, shared against unshared (target <= 0.2x), and the whole
//! session's cost with memory on and off.
//!
//! The forks follow the extraction prompt: on most turns nothing is worth saving and the fork
//! answers in one request; on every fifth turn the user states a fact and the fork writes a
//! memory (two requests).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::json;
use tine_api_client::{Usage, cost_usd};
use tine_fork_runtime::{BackgroundJob, JobContext, JobError, JobOutcome};
use tine_memory::{
    DirSource, EXTRACTION_MARKER, ExtractionJob, ExtractionOptions, MemoryDir,
    billed_equivalent_input,
};
use tine_mock_api::{MockConfig, MockServer, Reply, Rule, Scenario};
use tine_test_support::{MODEL, ScratchProject, Session, SessionBuilder, api_usage};

const TURNS: usize = 30;
const FACT_EVERY: usize = 5;
const TARGET: f64 = 0.2;

/// ~2,100 tokens of assistant prose per turn.
fn long_reply() -> String {
    let sentence = "I looked at the module, traced the call path through the handlers, and the \
                    change belongs in the request builder; here is the reasoning step by step. ";
    sentence.repeat(48)
}

fn scenario(mem: &str) -> Scenario {
    let mut scenario = Scenario::new();
    for turn in (FACT_EVERY..=TURNS).step_by(FACT_EVERY) {
        let topic = format!(
            "---\nname: Fact {turn}\ndescription: a fact the user stated on turn {turn}\ntype: project\n---\n\nThe user stated fact number {turn}.\n"
        );
        scenario = scenario.rule(
            Rule::new()
                .marker(EXTRACTION_MARKER)
                .assistant_turns(turn)
                .reply(Reply::text("Saving.").with_tool_use(
                    "Write",
                    json!({"file_path": format!("{mem}/project_fact_{turn}.md"), "content": topic}),
                )),
        );
    }
    scenario
        .rule(
            Rule::new()
                .marker(EXTRACTION_MARKER)
                .reply(Reply::text("Nothing to save.")),
        )
        .rule(Rule::new().tool_results(true).reply(Reply::text("Saved.")))
        .default_reply(Reply::text(&long_reply()))
}

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Shipped,
    OwnPrompt,
    Unshared,
    Off,
}

/// The shipped job with nothing in the cache when it starts: the same forks, no sharing.
struct Unshared {
    job: Arc<ExtractionJob>,
    server: Arc<MockServer>,
}

impl BackgroundJob for Unshared {
    fn name(&self) -> &str {
        "extract_memories"
    }

    fn run(&self, ctx: JobContext) -> BoxFuture<'static, Result<JobOutcome, JobError>> {
        self.server.clear_cache();
        self.job.run(ctx)
    }
}

struct Run {
    fork_usage: Usage,
    fork_requests: usize,
    session_cost: f64,
    fork_cost: f64,
    first_prefix: u64,
    last_prefix: u64,
    memories: usize,
}

async fn run(mode: Mode) -> Run {
    let project = ScratchProject::new();
    let memory = MemoryDir::new(project.root().join("memory"), DirSource::Env);
    memory.ensure().unwrap();
    let mem = memory.path().display().to_string();

    let server = Arc::new(
        MockServer::start(MockConfig::new(scenario(&mem)).log_limit(100_000))
            .await
            .unwrap(),
    );
    let options = ExtractionOptions {
        cache_parent_tail: mode != Mode::OwnPrompt,
        every: 1,
        ..ExtractionOptions::default()
    };
    let job = Arc::new(ExtractionJob::with_options(memory.clone(), options).unwrap());
    let builder =
        SessionBuilder::new(project.home(), project.cwd()).configure(|c| c.persist = false);
    let builder = match mode {
        Mode::Shipped | Mode::OwnPrompt => builder.job(job),
        Mode::Unshared => builder.job(Arc::new(Unshared {
            job,
            server: Arc::clone(&server),
        })),
        Mode::Off => builder,
    };
    let Session {
        pipeline,
        mut engine,
        ..
    } = builder.start(&server).await;

    for turn in 1..=TURNS {
        let prompt = if turn % FACT_EVERY == 0 {
            format!("Turn {turn}: remember that our staging database is staging-{turn}.internal.")
        } else {
            format!("Turn {turn}: walk me through how the request builder handles case {turn}.")
        };
        engine.submit(&prompt, |_| {}).await;
        // The user reads the answer while the fork runs; it is done before the next prompt.
        let report = pipeline.drain(Duration::from_secs(60)).await;
        assert_eq!(report.cancelled, 0);
    }

    let log = server.requests();
    let mut fork_usage = Usage::default();
    let mut fork_requests = 0;
    let mut session_cost = 0.0;
    let mut fork_cost = 0.0;
    let mut main_prefixes = Vec::new();
    for record in &log {
        let usage = api_usage(record);
        let cost = cost_usd(MODEL, &usage);
        session_cost += cost;
        if String::from_utf8_lossy(&record.body).contains(EXTRACTION_MARKER) {
            fork_usage += usage;
            fork_cost += cost;
            fork_requests += 1;
        } else {
            main_prefixes.push(usage.total_input_tokens());
        }
    }
    let memories = std::fs::read_dir(memory.path()).unwrap().count();
    drop(pipeline);
    drop(engine);
    if let Ok(server) = Arc::try_unwrap(server) {
        server.stop().await;
    }
    Run {
        fork_usage,
        fork_requests,
        session_cost,
        fork_cost,
        first_prefix: main_prefixes.first().copied().unwrap_or(0),
        last_prefix: main_prefixes.last().copied().unwrap_or(0),
        memories,
    }
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let shipped = run(Mode::Shipped).await;
        let unshared = run(Mode::Unshared).await;
        let own_prompt = run(Mode::OwnPrompt).await;
        let off = run(Mode::Off).await;
        assert_eq!(shipped.fork_requests, unshared.fork_requests);
        assert_eq!(shipped.memories, TURNS / FACT_EVERY);

        let billed = billed_equivalent_input(&shipped.fork_usage);
        let billed_unshared = billed_equivalent_input(&unshared.fork_usage);
        let billed_own = billed_equivalent_input(&own_prompt.fork_usage);
        let ratio = billed / billed_unshared;
        println!(
            "memory: {TURNS}-turn session, prompt prefix {:.1}k -> {:.1}k tokens, extraction after every \
             turn ({} fork requests, {} memories saved)",
            shipped.first_prefix as f64 / 1000.0,
            shipped.last_prefix as f64 / 1000.0,
            shipped.fork_requests,
            shipped.memories,
        );
        println!(
            "  extraction forks' billed-equivalent input: {billed:.0} tokens shared vs {billed_unshared:.0} \
             unshared = {ratio:.3}x (target <= {TARGET}x) {}",
            if ratio <= TARGET { "PASS" } else { "MISS" }
        );
        println!(
            "    shared forks: {} tokens read from the cache, {} written, {} sent uncached; \
             caching their own prompt instead: {billed_own:.0} ({:.3}x)",
            shipped.fork_usage.cache_read_input_tokens,
            shipped.fork_usage.cache_creation_input_tokens,
            shipped.fork_usage.input_tokens,
            billed_own / billed_unshared,
        );
        println!(
            "  session cost: memory on ${:.4} (forks ${:.4}) vs off ${:.4} = {:+.1}% \
             (forks caching their own prompt: ${:.4}, {:+.1}%)",
            shipped.session_cost,
            shipped.fork_cost,
            off.session_cost,
            100.0 * (shipped.session_cost / off.session_cost - 1.0),
            own_prompt.session_cost,
            100.0 * (own_prompt.session_cost / off.session_cost - 1.0),
        );
    });
}
