//! The tests' stdio MCP server (see `tine_mcp::test_server`). Flags:
//! `--marker FILE` writes FILE first (proof that it ran), `--delay-ms N` waits before serving,
//! `--hang` never answers (not even `initialize`), `--no-resources`, `--permission-prompt`
//! (the `approve` tool), `--fail-first FILE` exits at once unless FILE exists, which it creates
//! (so the first start fails and a restart works), `--tools N` offers N generated tools besides
//! (`tool_000`, ...), `--tools-file FILE` reads N from FILE at each start (so a restart can
//! offer others).

use std::time::Duration;

use rmcp::ServiceExt;
use tine_mcp::test_server::TestServer;

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    if let Some(marker) = value("--marker") {
        std::fs::write(&marker, std::process::id().to_string())?;
    }
    if let Some(flag) = value("--fail-first")
        && std::fs::metadata(&flag).is_err()
    {
        std::fs::write(&flag, "failed once")?;
        anyhow::bail!("failing the first start, as asked (--fail-first)");
    }
    if let Some(ms) = value("--delay-ms").and_then(|v| v.parse::<u64>().ok()) {
        tokio::time::sleep(Duration::from_millis(ms)).await;
    }
    eprintln!("tine-mcp-test-server starting");
    if args.iter().any(|a| a == "--hang") {
        // Read and ignore everything: an `initialize` that is never answered.
        let mut sink = tokio::io::sink();
        tokio::io::copy(&mut tokio::io::stdin(), &mut sink).await?;
        std::future::pending::<()>().await;
    }
    let server = TestServer {
        exit_on_crash: true,
        resources: !args.iter().any(|a| a == "--no-resources"),
        permission_prompt: args.iter().any(|a| a == "--permission-prompt"),
        extra_tools: value("--tools")
            .or_else(|| value("--tools-file").and_then(|f| std::fs::read_to_string(f).ok()))
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or(0),
    };
    server
        .serve(rmcp::transport::stdio())
        .await?
        .waiting()
        .await?;
    Ok(())
}
