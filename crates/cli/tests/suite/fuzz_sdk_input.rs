//! Standard input of the control protocol, fuzzed through the binary: 10,000 lines made by
//! mutating valid messages (cut, bytes flipped, fields dropped, types changed, random bytes)
//! go to tine, which must not stop, must answer a last `initialize`-style request after them,
//! and must stay within a memory bound. The lines come from a fixed seed, so a failure is
//! repeatable; `PROPTEST_CASES` (as for the other fuzz suites) scales the count.

use std::time::Duration;

use serde_json::json;
use tine_e2e::Project;
use tine_e2e::tine_mock_api::{Reply, Scenario};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use super::{mock, tine};

/// A small, seeded generator (xorshift): the same lines every run.
pub(super) struct Rng(pub(super) u64);

impl Rng {
    pub(super) fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    pub(super) fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn seeds() -> Vec<String> {
    [
        json!({"type": "control_request", "request_id": "r", "request": {"subtype": "get_context_usage"}}),
        json!({"type": "control_request", "request_id": "r", "request": {"subtype": "set_permission_mode", "mode": "plan"}}),
        json!({"type": "control_request", "request_id": "r", "request": {"subtype": "mcp_toggle", "serverName": "x", "enabled": false}}),
        json!({"type": "control_request", "request_id": "r", "request": {"subtype": "stop_task", "task_id": "a_12345678"}}),
        json!({"type": "control_response", "response": {"subtype": "success", "request_id": "tine_9", "response": {"behavior": "allow"}}}),
        json!({"type": "control_cancel_request", "request_id": "r"}),
        json!({"type": "keep_alive"}),
        json!({"type": "user", "message": {"role": "user", "content": [{"type": "image", "source": {}}]}}),
    ]
    .iter()
    .map(|v| v.to_string())
    .collect()
}

pub(super) fn mutate(rng: &mut Rng, seed: &str) -> String {
    let mut bytes = seed.as_bytes().to_vec();
    match rng.below(6) {
        // Cut short.
        0 => bytes.truncate(rng.below(bytes.len())),
        // Bytes flipped.
        1 => {
            for _ in 0..1 + rng.below(4) {
                let at = rng.below(bytes.len());
                bytes[at] = (rng.next() & 0x7f) as u8;
            }
        }
        // A field's value replaced by something of another type.
        2 => {
            let text = String::from_utf8_lossy(&bytes).replace("\"r\"", "[1,{}]");
            bytes = text.into_bytes();
        }
        // Random bytes (never a newline: one line stays one line).
        3 => {
            bytes = (0..rng.below(300))
                .map(|_| (rng.next() % 255) as u8 + 1)
                .filter(|b| *b != b'\n')
                .collect();
        }
        // Deeply nested.
        4 => {
            let depth = 1 + rng.below(200);
            bytes = format!("{}{}", "[".repeat(depth), "]".repeat(depth)).into_bytes();
        }
        // As it is.
        _ => {}
    }
    String::from_utf8_lossy(&bytes).replace('\n', " ")
}

pub(super) fn cases() -> usize {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse::<usize>().ok())
        .map_or(10_000, |c| c.max(100) * 40)
}

#[tokio::test]
async fn ten_thousand_mutated_lines_neither_stop_tine_nor_grow_it() {
    let server = mock(Scenario::new().default_reply(Reply::text("ok"))).await;
    let project = Project::new();
    let mut child = tine(&project, &server)
        .args([
            "-p",
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
        ])
        .stdin_open()
        .spawn();
    let pid = child.id().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
    // Read everything tine says meanwhile, so it never blocks on a full pipe.
    let (answered_tx, answered) = tokio::sync::oneshot::channel();
    let reader = tokio::spawn(async move {
        let mut answered_tx = Some(answered_tx);
        let mut lines = 0usize;
        while let Ok(Some(line)) = stdout.next_line().await {
            lines += 1;
            if line.contains("\"request_id\":\"last\"")
                && let Some(tx) = answered_tx.take()
            {
                let _ = tx.send(line);
            }
        }
        lines
    });
    let seeds = seeds();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut peak_kb = 0u64;
    for n in 0..cases() {
        let seed = &seeds[rng.below(seeds.len())];
        let line = mutate(&mut rng, seed);
        stdin.write_all(line.as_bytes()).await.unwrap();
        stdin.write_all(b"\n").await.unwrap();
        if n % 500 == 0 {
            peak_kb = peak_kb.max(rss_kb(pid));
        }
    }
    let last = json!({"type": "control_request", "request_id": "last",
                      "request": {"subtype": "get_context_usage"}});
    stdin
        .write_all(format!("{last}\n").as_bytes())
        .await
        .unwrap();
    stdin.flush().await.unwrap();
    let answer = tokio::time::timeout(Duration::from_secs(120), answered)
        .await
        .expect("tine did not answer after the fuzzed lines")
        .unwrap();
    assert!(answer.contains("\"subtype\":\"success\""), "{answer}");
    peak_kb = peak_kb.max(rss_kb(pid));
    drop(stdin);
    let status = tokio::time::timeout(Duration::from_secs(120), child.wait())
        .await
        .expect("tine did not end after its input did")
        .unwrap();
    assert!(status.success(), "tine failed: {status:?}");
    assert!(reader.await.unwrap() > 0);
    // A session is ~20 MiB; the lines must not pile up.
    assert!(peak_kb < 200 * 1024, "peak RSS {peak_kb} kB");
}

/// The resident set of process `pid`, in kB (0 when it cannot be read).
pub(super) fn rss_kb(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

#[tokio::test]
async fn a_one_gigabyte_line_is_refused_unbuffered_and_the_session_goes_on() {
    let server = mock(Scenario::new().default_reply(Reply::text("ok"))).await;
    let project = Project::new();
    let mut child = tine(&project, &server)
        .args([
            "-p",
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
        ])
        .stdin_open()
        .spawn();
    let pid = child.id().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
    let chunk = vec![b'a'; 1 << 20];
    let mut peak_kb = 0u64;
    for n in 0..1024 {
        stdin.write_all(&chunk).await.unwrap();
        if n % 128 == 0 {
            peak_kb = peak_kb.max(rss_kb(pid));
        }
    }
    let last = json!({"type": "control_request", "request_id": "after",
                      "request": {"subtype": "get_context_usage"}});
    stdin
        .write_all(format!("\n{last}\n").as_bytes())
        .await
        .unwrap();
    stdin.flush().await.unwrap();
    let mut refused = None;
    let answer = tokio::time::timeout(Duration::from_secs(120), async {
        while let Ok(Some(line)) = stdout.next_line().await {
            if line.contains("input_error") {
                refused = Some(line.clone());
            }
            if line.contains("\"request_id\":\"after\"") {
                return line;
            }
        }
        String::new()
    })
    .await
    .expect("tine did not answer after the long line");
    assert!(answer.contains("success"), "{answer}");
    let refused = refused.expect("the long line was said to be refused");
    assert!(
        refused.contains("MB") || refused.contains("long"),
        "{refused}"
    );
    peak_kb = peak_kb.max(rss_kb(pid));
    assert!(
        peak_kb < 150 * 1024,
        "the line was buffered: peak RSS {peak_kb} kB"
    );
    drop(stdin);
    let _ = tokio::time::timeout(Duration::from_secs(60), child.wait()).await;
}
