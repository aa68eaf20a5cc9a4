//! A server of the Agent SDK app driving the session (`"type": "sdk"` in `--mcp-config`),
//! reached through the [`SdkMcpRelay`] the front end gives: the model calls its tool and reads
//! the answer, the relay carrying the JSON-RPC both ways; `/mcp` reports it as the SDK's
//! `mcp_status` needs. The app's side is answered by hand here, message by message, as an SDK
//! bridge answers: no rmcp on that side.

use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use serde_json::{Value, json};
use tine_mock_api::{Reply, Rule, Scenario};
use tine_query_loop::QueryEvent;
use tine_session::{Op, SdkMcpRelay, SessionEvent, SessionOptions, TurnOutcome};

use super::support::{Running, World, http_client, server};

/// The app's `calc` server, answering each relayed message by hand.
#[derive(Default)]
struct Calc {
    /// Every message relayed, with the server it was for.
    received: Mutex<Vec<(String, Value)>>,
}

impl Calc {
    fn answer(message: &Value) -> Value {
        let id = message["id"].clone();
        let result = match message["method"].as_str().unwrap_or_default() {
            "initialize" => json!({
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "calc", "version": "1.0.0"}
            }),
            "tools/list" => json!({"tools": [{
                "name": "add",
                "description": "Adds a and b.",
                "inputSchema": {"type": "object",
                    "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                    "required": ["a", "b"]}
            }]}),
            "tools/call" => {
                let args = &message["params"]["arguments"];
                let sum = args["a"].as_f64().unwrap() + args["b"].as_f64().unwrap();
                json!({"content": [{"type": "text", "text": format!("the sum is {sum}")}]})
            }
            // A notification: the SDK acknowledges the control request that carried it.
            _ if id.is_null() => return json!({"jsonrpc": "2.0", "result": {}}),
            other => {
                return json!({"jsonrpc": "2.0", "id": id,
                    "error": {"code": -32601, "message": format!("no method {other}")}});
            }
        };
        json!({"jsonrpc": "2.0", "id": id, "result": result})
    }

    fn methods(&self) -> Vec<String> {
        let received = self.received.lock().unwrap();
        received
            .iter()
            .map(|(_, m)| m["method"].as_str().unwrap_or("a response").to_owned())
            .collect()
    }
}

impl SdkMcpRelay for Calc {
    fn send(&self, server: &str, message: Value) -> BoxFuture<'static, Result<Value, String>> {
        self.received
            .lock()
            .unwrap()
            .push((server.to_owned(), message.clone()));
        let answer = Self::answer(&message);
        Box::pin(async move { Ok(answer) })
    }
}

fn scenario() -> Scenario {
    Scenario::new()
        .rule(
            Rule::new()
                .tool_results(false)
                .last_user_contains("add them")
                .reply(
                    Reply::text("Adding.")
                        .with_tool_use("mcp__calc__add", json!({"a": 2, "b": 40})),
                ),
        )
        .rule(Rule::new().tool_results(true).reply(Reply::text("Done.")))
        .default_reply(Reply::text("Ok."))
}

/// Options with the app's `calc` server, as the Python SDK passes it.
fn options(world: &World, server: &tine_mock_api::MockServer, calc: &Arc<Calc>) -> SessionOptions {
    let mut options = world.options(http_client(server));
    options.bare = true;
    options.mcp_configs =
        vec![json!({"mcpServers": {"calc": {"type": "sdk", "name": "calc"}}}).to_string()];
    options.sdk_mcp_relay = Some(calc.clone() as Arc<dyn SdkMcpRelay>);
    options
}

fn tool_result(events: &[SessionEvent]) -> Option<(bool, String)> {
    events.iter().rev().find_map(|e| match e {
        SessionEvent::Query(QueryEvent::ToolResult { output, .. }) => {
            Some((output.is_error, output.content.clone()))
        }
        _ => None,
    })
}

#[tokio::test]
async fn the_model_calls_an_sdk_servers_tool_through_the_relay_and_reads_its_answer() {
    let world = World::new();
    let server = server(scenario()).await;
    let calc = Arc::new(Calc::default());
    let mut options = options(&world, &server, &calc);
    options.allowed_tools = vec!["mcp__calc".into()];
    let mut s = Running::start(options).await;
    assert!(
        s.info.tools.contains(&"mcp__calc__add".to_owned()),
        "{:?}",
        s.info.tools
    );
    s.submit(Op::Prompt("add them".into()));
    let end = s.turn_end().await;
    assert_eq!(end.outcome, TurnOutcome::Completed);
    assert_eq!(
        tool_result(&s.seen),
        Some((false, "the sum is 42".to_owned()))
    );
    // The call went to the app's server `calc` as JSON-RPC, after the handshake.
    assert_eq!(
        calc.methods(),
        [
            "initialize",
            "notifications/initialized",
            "tools/list",
            "tools/call"
        ]
    );
    let received = calc.received.lock().unwrap().clone();
    assert!(received.iter().all(|(name, _)| name == "calc"));
    let call = &received[3].1;
    assert_eq!(call["params"]["name"], "add");
    assert_eq!(call["params"]["arguments"], json!({"a": 2, "b": 40}));
    // The model saw the tool in the first request and read its answer in the second.
    let requests = server.requests();
    let first = String::from_utf8_lossy(&requests[0].body).into_owned();
    assert!(first.contains("\"mcp__calc__add\""), "{first}");
    let second = String::from_utf8_lossy(&requests[1].body).into_owned();
    assert!(second.contains("the sum is 42"), "{second}");

    // `/mcp` reports it with what the SDK's `mcp_status` carries.
    s.submit(Op::Command {
        name: "mcp".into(),
        args: String::new(),
    });
    let output = s
        .until(|e| match e {
            SessionEvent::CommandOutput(output) => Some(output.clone()),
            _ => None,
        })
        .await;
    assert!(
        output
            .text
            .contains("calc (dynamic, --mcp-config (inline JSON)): connected (1 tool)"),
        "{}",
        output.text
    );
    let entry = &output.data["mcp_servers"][0];
    assert_eq!(entry["name"], "calc");
    assert_eq!(entry["state"], "connected");
    assert_eq!(entry["status"], "connected (1 tool)");
    assert_eq!(entry["scope"], "dynamic");
    assert_eq!(entry["config"], json!({"type": "sdk", "name": "calc"}));
    assert_eq!(
        entry["tools"],
        json!([{"name": "add", "description": "Adds a and b."}])
    );
    assert_eq!(
        entry["serverInfo"],
        json!({"name": "calc", "version": "1.0.0"})
    );
    assert!(entry.get("error").is_none(), "{entry}");
    s.shutdown().await;
}

#[tokio::test]
async fn without_a_rule_the_headless_call_is_denied_and_never_reaches_the_app() {
    let world = World::new();
    let server = server(scenario()).await;
    let calc = Arc::new(Calc::default());
    let mut s = Running::start(options(&world, &server, &calc)).await;
    s.submit(Op::Prompt("add them".into()));
    let end = s.turn_end().await;
    assert_eq!(end.denials.len(), 1, "{:?}", end.denials);
    assert_eq!(end.denials[0].tool_name, "mcp__calc__add");
    let (is_error, _) = tool_result(&s.seen).unwrap();
    assert!(is_error);
    assert!(!calc.methods().contains(&"tools/call".to_owned()));
    s.shutdown().await;
}

#[tokio::test]
async fn an_sdk_server_without_a_relay_is_a_start_up_warning_and_a_failed_server() {
    let world = World::new();
    let server = server(scenario()).await;
    let calc = Arc::new(Calc::default());
    let mut options = options(&world, &server, &calc);
    options.sdk_mcp_relay = None;
    let mut s = Running::start(options).await;
    assert!(!s.info.tools.iter().any(|t| t.starts_with("mcp__")));
    s.submit(Op::Command {
        name: "mcp".into(),
        args: String::new(),
    });
    let output = s
        .until(|e| match e {
            SessionEvent::CommandOutput(output) => Some(output.clone()),
            _ => None,
        })
        .await;
    let entry = &output.data["mcp_servers"][0];
    assert_eq!(entry["state"], "failed");
    let error = entry["error"].as_str().unwrap();
    assert!(
        error.contains("need the Agent SDK's control protocol"),
        "{error}"
    );
    assert!(entry.get("tools").is_none(), "{entry}");
    let warned = s.seen.iter().any(|e| {
        matches!(e, SessionEvent::Notice(n) if n.text.contains("MCP server calc") && n.text.contains("Agent SDK"))
    });
    assert!(warned, "{:?}", s.seen);
    s.shutdown().await;
}
