//! `tine-mock`: the simulator as a standalone server.
//!
//! `tine-mock --port N --scenario FILE [--log DIR] [--chat-dialect openai|ollama|llama-cpp]` prints
//! `listening on http://127.0.0.1:PORT` as its first line of stdout, then serves until
//! interrupted. OpenAI-compatible clients take `http://127.0.0.1:PORT/v1` as their base URL.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Parser;
use tine_mock_api::{ChatDialect, MockConfig, MockServer, Scenario};

/// A local simulator of the Anthropic Messages API (prompt cache, scripted replies, faults),
/// and of OpenAI-compatible chat completions at /v1/chat/completions.
#[derive(Debug, Parser)]
#[command(name = "tine-mock", version)]
struct Args {
    /// Port on 127.0.0.1 (0 picks a free one).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Scenario file (JSON, see docs/mock-api.md); without it every request gets "OK.".
    #[arg(long)]
    scenario: Option<PathBuf>,
    /// Append every request to DIR/requests.jsonl (API keys redacted).
    #[arg(long)]
    log: Option<PathBuf>,
    /// Whose habits /v1/chat/completions follows: openai (also vLLM), ollama or llama-cpp
    /// (llama-cpp-python's server: no usage in the stream).
    #[arg(long, default_value = "openai")]
    chat_dialect: ChatDialect,
}

#[tokio::main]
async fn main() -> Result<()> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .init();
    let args = Args::parse();
    let scenario = match &args.scenario {
        Some(path) => Scenario::from_file(path)?,
        None => Scenario::new(),
    };
    let mut config = MockConfig::new(scenario)
        .port(args.port)
        .chat_dialect(args.chat_dialect);
    if let Some(dir) = &args.log {
        config = config.log_dir(dir);
    }
    let server = MockServer::start(config).await?;
    {
        let mut out = std::io::stdout().lock();
        writeln!(out, "listening on {}", server.base_url()).context("writing to stdout")?;
        out.flush().context("flushing stdout")?;
    }
    tokio::signal::ctrl_c()
        .await
        .context("waiting for Ctrl-C")?;
    server.stop().await;
    Ok(())
}
