//! Stream a reply from the bundled simulator and print its text as it arrives, then the usage
//! and the cost; a second request with the same long, cache-marked system prompt reads it from
//! the prompt cache.
//!
//!     cargo run -p tine-api-client --example stream_reply

use futures::StreamExt;
use tine_api_client::{
    CacheControl, ClientConfig, ClientEvent, ContentDelta, Credentials, HttpClient, Message,
    MessageAccumulator, MessagesRequest, ModelClient, StreamEvent, SystemPrompt, TextBlock,
    cost_usd,
};
use tine_mock_api::{MockConfig, MockServer, Reply, Rule, Scenario};

const MODEL: &str = "claude-sonnet-4-5";

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The simulator, in-process on 127.0.0.1 (port 0): it answers as the Messages API does,
    // and counts prompt-cache reads and writes as the real one would.
    let scenario = Scenario::new()
        .rule(Rule::new().last_user_contains("haiku").reply(Reply::text(
            "Borrow checker hums,\nlifetimes fold like paper cranes,\nthe build is green now.",
        )))
        .default_reply(Reply::text("Hello from the simulator."));
    let server = MockServer::start(MockConfig::new(scenario)).await?;

    // Any key works offline; against the real API use `ClientConfig::from_env()`.
    let client = HttpClient::new(ClientConfig::new(
        server.base_url(),
        Credentials::api_key("offline"),
    ))?;

    // A system prompt past the minimum cacheable length, with a cache breakpoint on it.
    let guidelines: String = (0..200)
        .map(|i| format!("Guideline {i}: answer briefly and precisely.\n"))
        .collect();
    let system = SystemPrompt::Blocks(vec![
        TextBlock::new(guidelines).with_cache_control(CacheControl::ephemeral()),
    ]);

    for prompt in ["Write a haiku about Rust.", "And say hello."] {
        let mut request = MessagesRequest::new(MODEL, 1024, vec![Message::user(prompt)]);
        request.system = Some(system.clone());
        println!("> {prompt}");

        let mut stream = client.stream(request);
        let mut reply = MessageAccumulator::new();
        while let Some(event) = stream.next().await {
            match event? {
                ClientEvent::Stream(event) => {
                    if let StreamEvent::ContentBlockDelta {
                        delta: ContentDelta::TextDelta { text },
                        ..
                    } = &event
                    {
                        print!("{text}");
                    }
                    reply.push(&event)?;
                }
                // A retried attempt starts over: drop what it streamed.
                ClientEvent::Retry(_) => reply.reset(),
            }
        }
        let message = reply.finish()?;
        let usage = message.usage;
        println!();
        println!(
            "  stop: {:?}; input {} (cache write {}, cache read {}), output {}; ${:.6}",
            message.stop_reason,
            usage.input_tokens,
            usage.cache_creation_input_tokens,
            usage.cache_read_input_tokens,
            usage.output_tokens,
            cost_usd(MODEL, &usage),
        );
    }
    server.stop().await;
    Ok(())
}
