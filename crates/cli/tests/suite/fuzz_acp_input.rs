//! `tine acp`'s standard input, fuzzed through the binary: 10,000 lines made by mutating valid
//! JSON-RPC messages (the mutations of the control protocol's fuzz suite) must not stop tine,
//! which answers a last `initialize` after them; malformed JSON, a bad request and an unknown
//! method get JSON-RPC errors.

use std::time::Duration;

use serde_json::{Value, json};
use tine_e2e::Project;
use tine_e2e::tine_mock_api::{Reply, Scenario};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use super::fuzz_sdk_input::{Rng, cases, mutate, rss_kb};
use super::{mock, tine};

fn seeds() -> Vec<String> {
    [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": true, "writeTextFile": true}}}}),
        // A relative cwd is refused: no session is started by the fuzz.
        json!({"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": "relative", "mcpServers": []}}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "session/load", "params": {"sessionId": "r", "cwd": "relative", "mcpServers": []}}),
        json!({"jsonrpc": "2.0", "id": 4, "method": "session/prompt", "params": {"sessionId": "r", "prompt": [{"type": "text", "text": "hi"}]}}),
        json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "r"}}),
        json!({"jsonrpc": "2.0", "id": 5, "method": "session/set_mode", "params": {"sessionId": "r", "modeId": "plan"}}),
        json!({"jsonrpc": "2.0", "id": 6, "result": {"outcome": {"outcome": "selected", "optionId": "allow_once"}}}),
        json!({"jsonrpc": "2.0", "id": 7, "error": {"code": -32603, "message": "r"}}),
    ]
    .iter()
    .map(|v| v.to_string())
    .collect()
}

/// tine acp, with what it writes collected.
struct Agent {
    child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    answers: tokio::sync::mpsc::UnboundedReceiver<Value>,
}

impl Agent {
    fn start(project: &Project, server: &tine_e2e::tine_mock_api::MockServer) -> Self {
        let mut child = tine(project, server).args(["acp"]).stdin_open().spawn();
        let stdin = child.stdin.take().unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
        let (tx, answers) = tokio::sync::mpsc::unbounded_channel();
        tokio::spawn(async move {
            while let Ok(Some(line)) = stdout.next_line().await {
                let value: Value = serde_json::from_str(&line).expect("tine writes JSON lines");
                let _ = tx.send(value);
            }
        });
        Self {
            child,
            stdin,
            answers,
        }
    }

    async fn send(&mut self, line: &str) {
        self.stdin.write_all(line.as_bytes()).await.unwrap();
        self.stdin.write_all(b"\n").await.unwrap();
        self.stdin.flush().await.unwrap();
    }

    /// The answer to request `id`.
    async fn answer(&mut self, id: &Value) -> Value {
        tokio::time::timeout(Duration::from_secs(120), async {
            loop {
                let message = self.answers.recv().await.expect("tine stopped");
                if &message["id"] == id && message.get("method").is_none() {
                    return message;
                }
            }
        })
        .await
        .expect("tine did not answer")
    }

    /// Closes the input; tine must exit successfully.
    async fn finish(self) {
        let Self {
            mut child, stdin, ..
        } = self;
        drop(stdin);
        let status = tokio::time::timeout(Duration::from_secs(60), child.wait())
            .await
            .expect("tine acp did not end after its input did")
            .unwrap();
        assert!(status.success(), "{status:?}");
    }
}

#[tokio::test]
async fn malformed_input_gets_json_rpc_errors_and_tine_goes_on() {
    let server = mock(Scenario::new().default_reply(Reply::text("ok"))).await;
    let project = Project::new();
    let mut agent = Agent::start(&project, &server);
    agent
        .send(r#"{"jsonrpc":"2.0","id":9,"method":"initialize","params":{"protocolVersion":1}}"#)
        .await;
    agent.answer(&json!(9)).await;
    agent.send("{this is not json").await;
    let parse = agent.answer(&Value::Null).await;
    assert_eq!(parse["error"]["code"], -32700, "{parse}");
    agent
        .send(r#"{"jsonrpc":"2.0","id":10,"method":"session/prompt","params":{"sessionId":5}}"#)
        .await;
    let bad = agent.answer(&json!(10)).await;
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    agent
        .send(r#"{"jsonrpc":"2.0","id":11,"method":"no/such/method","params":{}}"#)
        .await;
    let unknown = agent.answer(&json!(11)).await;
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    agent
        .send(r#"{"jsonrpc":"2.0","id":12,"method":"session/prompt","params":{"sessionId":"gone","prompt":[]}}"#)
        .await;
    let gone = agent.answer(&json!(12)).await;
    assert!(
        gone["error"]["message"].as_str().unwrap().contains("gone"),
        "{gone}"
    );
    agent
        .send(r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"gone"}}"#)
        .await;
    agent
        .send(r#"{"jsonrpc":"2.0","id":13,"method":"initialize","params":{"protocolVersion":1}}"#)
        .await;
    let init = agent.answer(&json!(13)).await;
    assert_eq!(init["result"]["protocolVersion"], 1, "{init}");
    agent.finish().await;
}

#[tokio::test]
async fn ten_thousand_mutated_messages_do_not_stop_tine_acp() {
    let server = mock(Scenario::new().default_reply(Reply::text("ok"))).await;
    let project = Project::new();
    let mut agent = Agent::start(&project, &server);
    let pid = agent.child.id().unwrap();
    let seeds = seeds();
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let mut peak_kb = 0u64;
    for n in 0..cases() {
        let seed = &seeds[rng.below(seeds.len())];
        agent.send(&mutate(&mut rng, seed)).await;
        if n % 500 == 0 {
            peak_kb = peak_kb.max(rss_kb(pid));
        }
    }
    agent
        .send(
            r#"{"jsonrpc":"2.0","id":"last","method":"initialize","params":{"protocolVersion":1}}"#,
        )
        .await;
    let last = agent.answer(&json!("last")).await;
    assert_eq!(
        last["result"]["agentCapabilities"]["loadSession"], true,
        "{last}"
    );
    peak_kb = peak_kb.max(rss_kb(pid));
    assert!(peak_kb < 200 * 1024, "peak RSS {peak_kb} kB");
    agent.finish().await;
}

#[tokio::test]
async fn a_one_gigabyte_line_is_skipped_unread_with_an_error_and_tine_goes_on() {
    let server = mock(Scenario::new().default_reply(Reply::text("ok"))).await;
    let project = Project::new();
    let mut agent = Agent::start(&project, &server);
    let pid = agent.child.id().unwrap();
    agent
        .send(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}"#)
        .await;
    agent.answer(&json!(1)).await;
    // 1 GiB without a newline, in 1 MiB writes, then the newline.
    let chunk = vec![b'a'; 1 << 20];
    let mut peak_kb = 0u64;
    for n in 0..1024 {
        agent.stdin.write_all(&chunk).await.unwrap();
        if n % 128 == 0 {
            peak_kb = peak_kb.max(rss_kb(pid));
        }
    }
    agent.send("").await;
    let refused = agent.answer(&Value::Null).await;
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("skipped unread"),
        "{refused}"
    );
    peak_kb = peak_kb.max(rss_kb(pid));
    assert!(
        peak_kb < 150 * 1024,
        "the line was buffered: peak RSS {peak_kb} kB"
    );
    agent
        .send(r#"{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":1}}"#)
        .await;
    assert_eq!(
        agent.answer(&json!(2)).await["result"]["protocolVersion"],
        1
    );
    agent.finish().await;
}
