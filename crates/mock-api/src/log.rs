//! The request log: every request the simulator saw, with what it computed, in memory for
//! tests and as JSONL (`requests.jsonl`) for the binary's `--log DIR`.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};

use bytes::Bytes;
use serde::Serialize;
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio::sync::mpsc;

use crate::cache::{CacheReport, Usage};
use crate::error::MockError;

/// One request as the simulator saw it.
#[derive(Debug, Clone, Serialize)]
pub struct RequestRecord {
    /// 1-based number among model requests (`/v1/messages` and `/v1/chat/completions`; 0 for
    /// other paths).
    pub number: u64,
    pub path: String,
    pub request_id: String,
    /// Headers in arrival order. Kept verbatim in memory; redacted in the JSONL log.
    pub headers: Vec<(String, String)>,
    /// The raw request body.
    #[serde(skip)]
    pub body: Bytes,
    pub status: u16,
    pub stream: bool,
    /// Usage as reported (with output tokens), for answered `/v1/messages` requests.
    pub usage: Option<Usage>,
    /// Breakpoints, hit and usage as the cache computed them.
    pub cache: Option<CacheReport>,
    /// The rule that answered (`name`, `rules[i]` or `default`).
    pub rule: Option<String>,
    /// A short description of an injected fault.
    pub fault: Option<String>,
    /// The error message, when the answer was an error.
    pub error: Option<String>,
    /// For `/v1/chat/completions`: the request converted to the Messages form the scenario ran
    /// on (see `chat::convert`).
    pub normalized: Option<Value>,
}

impl RequestRecord {
    /// The body parsed as JSON.
    pub fn json(&self) -> Option<Value> {
        serde_json::from_slice(&self.body).ok()
    }

    /// The request in Messages form whichever route it came by: the body of a `/v1/messages`
    /// request, the conversion of a `/v1/chat/completions` one.
    pub fn messages_form(&self) -> Option<Value> {
        match &self.normalized {
            Some(value) => Some(value.clone()),
            None => self.json(),
        }
    }

    /// A header's value (case-insensitive name).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The JSONL form: secrets redacted, body as JSON when it parses.
    pub fn to_jsonl(&self) -> String {
        let headers: Vec<(String, String)> = self
            .headers
            .iter()
            .map(|(n, v)| {
                let secret =
                    n.eq_ignore_ascii_case("x-api-key") || n.eq_ignore_ascii_case("authorization");
                (
                    n.clone(),
                    if secret {
                        "<redacted>".to_string()
                    } else {
                        v.clone()
                    },
                )
            })
            .collect();
        let body = self
            .json()
            .unwrap_or_else(|| Value::String(String::from_utf8_lossy(&self.body).into_owned()));
        let mut value = serde_json::to_value(self).unwrap_or(Value::Null);
        if let Value::Object(map) = &mut value {
            map.insert("headers".into(), json!(headers));
            map.insert("body".into(), body);
        }
        value.to_string()
    }
}

/// The in-memory log, keeping the most recent `limit` records.
#[derive(Debug)]
pub struct RequestLog {
    records: VecDeque<RequestRecord>,
    limit: usize,
    jsonl: Option<mpsc::UnboundedSender<String>>,
}

impl RequestLog {
    pub fn new(limit: usize, jsonl: Option<mpsc::UnboundedSender<String>>) -> Self {
        Self {
            records: VecDeque::new(),
            limit,
            jsonl,
        }
    }

    pub fn push(&mut self, record: RequestRecord) {
        if let Some(tx) = &self.jsonl {
            // The writer task only stops with the server.
            let _ = tx.send(record.to_jsonl());
        }
        if self.limit == 0 {
            return;
        }
        if self.records.len() >= self.limit {
            self.records.pop_front();
        }
        self.records.push_back(record);
    }

    pub fn snapshot(&self) -> Vec<RequestRecord> {
        self.records.iter().cloned().collect()
    }

    pub fn clear(&mut self) {
        self.records.clear();
    }
}

/// Opens `DIR/requests.jsonl` for appending and spawns the task that writes lines to it.
pub async fn spawn_jsonl_writer(
    dir: &Path,
) -> Result<
    (
        mpsc::UnboundedSender<String>,
        tokio::task::JoinHandle<()>,
        PathBuf,
    ),
    MockError,
> {
    let log_err = |source| MockError::Log {
        dir: dir.to_path_buf(),
        source,
    };
    tokio::fs::create_dir_all(dir).await.map_err(log_err)?;
    let path = dir.join("requests.jsonl");
    let mut file = tokio::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .await
        .map_err(log_err)?;
    let (tx, mut rx) = mpsc::unbounded_channel::<String>();
    let handle = tokio::spawn(async move {
        while let Some(mut line) = rx.recv().await {
            line.push('\n');
            if let Err(err) = file.write_all(line.as_bytes()).await {
                tracing::warn!(%err, "could not write the request log");
            }
            let _ = file.flush().await;
        }
    });
    Ok((tx, handle, path))
}
