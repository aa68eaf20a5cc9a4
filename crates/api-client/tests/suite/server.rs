//! A minimal HTTP/1.1 server on 127.0.0.1 that answers each request with the next scripted
//! reply and records what it received. Just enough HTTP for reqwest: one request per
//! connection, `connection: close`, SSE bodies chunked so a reply can be cut mid-body.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

#[derive(Debug, Clone)]
pub(super) struct Recorded {
    pub method: String,
    pub path: String,
    pub headers: HashMap<String, String>,
    pub body: Vec<u8>,
}

#[derive(Debug, Clone)]
pub(super) enum Reply {
    /// A JSON body with a status and extra headers.
    Json {
        status: u16,
        headers: Vec<(&'static str, String)>,
        body: String,
    },
    /// An SSE body; with `cut_at`, the connection is closed after that many body bytes,
    /// in the middle of a chunk (the client sees a broken body).
    Sse { body: String, cut_at: Option<usize> },
}

impl Reply {
    pub(super) fn json(status: u16, body: &str) -> Self {
        Reply::Json {
            status,
            headers: Vec::new(),
            body: body.to_owned(),
        }
    }

    pub(super) fn error(status: u16, error_type: &str, message: &str) -> Self {
        let body =
            serde_json::json!({"type": "error", "error": {"type": error_type, "message": message}})
                .to_string();
        Reply::Json {
            status,
            headers: Vec::new(),
            body,
        }
    }

    pub(super) fn with_header(self, name: &'static str, value: &str) -> Self {
        match self {
            Reply::Json {
                status,
                mut headers,
                body,
            } => {
                headers.push((name, value.to_owned()));
                Reply::Json {
                    status,
                    headers,
                    body,
                }
            }
            other => other,
        }
    }

    pub(super) fn sse(body: String) -> Self {
        Reply::Sse { body, cut_at: None }
    }
}

pub(super) struct TestServer {
    pub base_url: String,
    requests: Arc<Mutex<Vec<Recorded>>>,
}

impl TestServer {
    pub(super) async fn start(replies: Vec<Reply>) -> TestServer {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base_url = format!("http://{}", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let recorded = Arc::clone(&requests);
        tokio::spawn(async move {
            let mut replies = replies.into_iter();
            let mut n = 0;
            loop {
                let Ok((socket, _)) = listener.accept().await else {
                    return;
                };
                n += 1;
                let reply = replies.next().unwrap_or_else(|| {
                    Reply::error(404, "not_found_error", "no scripted reply left")
                });
                let recorded = Arc::clone(&recorded);
                // Serve inline: the tests send one request at a time.
                if let Some(request) = serve(socket, reply, n).await {
                    recorded.lock().unwrap().push(request);
                }
            }
        });
        TestServer { base_url, requests }
    }

    pub(super) fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }
}

async fn read_request(socket: &mut TcpStream) -> Option<Recorded> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let header_end = loop {
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(pos) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break pos;
        }
    };
    let head = String::from_utf8_lossy(&buf[..header_end]).to_string();
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let method = first.next()?.to_owned();
    let path = first.next()?.to_owned();
    let headers: HashMap<String, String> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let length: usize = headers
        .get("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut body = buf[header_end + 4..].to_vec();
    while body.len() < length {
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    Some(Recorded {
        method,
        path,
        headers,
        body,
    })
}

async fn serve(mut socket: TcpStream, reply: Reply, n: usize) -> Option<Recorded> {
    let request = read_request(&mut socket).await?;
    match reply {
        Reply::Json {
            status,
            headers,
            body,
        } => {
            let mut head = format!(
                "HTTP/1.1 {status} Status\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\nrequest-id: req_{n}\r\n",
                body.len()
            );
            for (name, value) in headers {
                head.push_str(&format!("{name}: {value}\r\n"));
            }
            head.push_str("\r\n");
            let _ = socket.write_all(head.as_bytes()).await;
            let _ = socket.write_all(body.as_bytes()).await;
        }
        Reply::Sse { body, cut_at } => {
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\nconnection: close\r\nrequest-id: req_{n}\r\n\r\n"
            );
            let _ = socket.write_all(head.as_bytes()).await;
            let bytes = body.as_bytes();
            let limit = cut_at.unwrap_or(bytes.len()).min(bytes.len());
            // Chunks of 64 bytes: events straddle chunk boundaries as they do on the wire.
            let mut sent = 0;
            for piece in bytes.chunks(64) {
                let _ = socket
                    .write_all(format!("{:x}\r\n", piece.len()).as_bytes())
                    .await;
                let take = piece.len().min(limit - sent);
                let _ = socket.write_all(&piece[..take]).await;
                sent += take;
                if take < piece.len() {
                    let _ = socket.flush().await;
                    return Some(request); // drop mid-chunk
                }
                let _ = socket.write_all(b"\r\n").await;
            }
            if cut_at.is_some() {
                return Some(request); // cut exactly at a chunk boundary: no terminal chunk
            }
            let _ = socket.write_all(b"0\r\n\r\n").await;
        }
    }
    let _ = socket.flush().await;
    let _ = socket.shutdown().await;
    Some(request)
}
