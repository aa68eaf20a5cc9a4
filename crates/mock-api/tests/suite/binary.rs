//! The `tine-mock` binary: first stdout line, serving a scenario file, JSONL log.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

#[tokio::test]
async fn binary_prints_its_address_and_serves_the_scenario() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios/demo.json");
    let mut child = Command::new(env!("CARGO_BIN_EXE_tine-mock"))
        .args(["--port", "0", "--scenario", scenario, "--log"])
        .arg(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let line = tokio::task::spawn_blocking(move || {
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).unwrap();
        line
    })
    .await
    .unwrap();
    let url = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("first line: {line:?}"))
        .to_string();
    assert!(url.starts_with("http://127.0.0.1:"));
    let reply: Value = reqwest::Client::new()
        .post(format!("{url}/v1/messages"))
        .header("x-api-key", "secret-key")
        .header("anthropic-version", "2023-06-01")
        .body(json!({"model": "m", "max_tokens": 100, "messages": [{"role": "user", "content": "hi"}]}).to_string())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(reply["content"][0]["text"], "OK.");
    // The log line is written by a background task; poll briefly for it.
    let path = dir.path().join("requests.jsonl");
    let mut text = String::new();
    for _ in 0..100 {
        text = std::fs::read_to_string(&path).unwrap_or_default();
        if !text.is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(text.contains("\"number\":1"), "{text}");
    assert!(!text.contains("secret-key"));
}
