//! WebFetch against a local HTTP server (never the network).

use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use serde_json::json;
use tine_tools::{SummarizerError, WebFetchSummarizer, WebSummarizer, WebSummaryRequest};
use tine_tools::{WEB_FETCH_MAX_CONTENT_CHARS as MAX_CONTENT_CHARS, WebFetchTool};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use super::support::{context, run};

/// Serves a few fixed routes on 127.0.0.1; returns the base URL.
async fn serve() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        loop {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            tokio::spawn(async move {
                let mut request = Vec::new();
                let mut buf = [0u8; 1024];
                while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                    let Ok(n) = socket.read(&mut buf).await else {
                        return;
                    };
                    if n == 0 {
                        return;
                    }
                    request.extend_from_slice(&buf[..n]);
                }
                let request = String::from_utf8_lossy(&request);
                let path = request.split_whitespace().nth(1).unwrap_or("/").to_owned();
                let (status, headers, body): (&str, String, Vec<u8>) = match path.as_str() {
                    "/page" => (
                        "200 OK",
                        "Content-Type: text/html; charset=utf-8\r\n".into(),
                        b"<html><head><title>Docs</title><script>evil()</script></head>\
                          <body><h2>Install</h2><p>Run <code>cargo add tine</code> &amp; enjoy.</p></body></html>"
                            .to_vec(),
                    ),
                    "/plain" => ("200 OK", "Content-Type: text/plain\r\n".into(), b"just text\n".to_vec()),
                    "/big" => (
                        "200 OK",
                        "Content-Type: text/plain\r\n".into(),
                        "y".repeat(MAX_CONTENT_CHARS + 5000).into_bytes(),
                    ),
                    "/same" => ("302 Found", "Location: /page\r\n".into(), Vec::new()),
                    "/other" => (
                        "301 Moved Permanently",
                        format!("Location: http://localhost:{port}/page\r\n"),
                        Vec::new(),
                    ),
                    "/binary" => (
                        "200 OK",
                        "Content-Type: application/octet-stream\r\n".into(),
                        vec![0, 1, 2, 3],
                    ),
                    _ => ("404 Not Found", "Content-Type: text/plain\r\n".into(), b"no".to_vec()),
                };
                let head = format!(
                    "HTTP/1.1 {status}\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                let _ = socket.write_all(head.as_bytes()).await;
                let _ = socket.write_all(&body).await;
                let _ = socket.shutdown().await;
            });
        }
    });
    format!("http://127.0.0.1:{port}")
}

#[tokio::test]
async fn html_is_converted_to_text_without_a_summarizer() {
    let base = serve().await;
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(dir.path());
    let out = run(
        &WebFetchTool,
        json!({"url": format!("{base}/page"), "prompt": "how to install?"}),
        &ctx,
    )
    .await;
    assert!(!out.is_error, "{}", out.content);
    assert!(out.content.contains("# Docs"), "{}", out.content);
    assert!(
        out.content
            .contains("## Install\n\nRun cargo add tine & enjoy."),
        "{}",
        out.content
    );
    assert!(!out.content.contains("evil"), "{}", out.content);
}

struct Recorder(Mutex<Vec<(String, String, String)>>);

impl WebSummarizer for Recorder {
    fn summarize<'a>(
        &'a self,
        request: WebSummaryRequest<'a>,
    ) -> BoxFuture<'a, Result<String, SummarizerError>> {
        self.0.lock().unwrap().push((
            request.url.to_owned(),
            request.prompt.to_owned(),
            request.content.to_owned(),
        ));
        Box::pin(async { Ok("Use cargo add.".to_owned()) })
    }
}

#[tokio::test]
async fn the_injected_summarizer_answers_the_prompt() {
    let base = serve().await;
    let dir = tempfile::tempdir().unwrap();
    let recorder = Arc::new(Recorder(Mutex::new(Vec::new())));
    let ctx = context(dir.path()).with_ext(WebFetchSummarizer(recorder.clone()));
    let out = run(
        &WebFetchTool,
        json!({"url": format!("{base}/same"), "prompt": "install?"}),
        &ctx,
    )
    .await;
    assert_eq!(out.content, "Use cargo add.");
    let seen = recorder.0.lock().unwrap().clone();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].1, "install?");
    assert!(seen[0].2.contains("Run cargo add tine"), "{}", seen[0].2);
}

#[tokio::test]
async fn cross_host_redirects_are_reported_not_followed() {
    let base = serve().await;
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(dir.path());
    let out = run(
        &WebFetchTool,
        json!({"url": format!("{base}/other"), "prompt": "p"}),
        &ctx,
    )
    .await;
    assert!(!out.is_error, "{}", out.content);
    assert!(
        out.content.starts_with("REDIRECT DETECTED"),
        "{}",
        out.content
    );
    assert!(
        out.content.contains("Redirect URL: http://localhost:"),
        "{}",
        out.content
    );
}

#[tokio::test]
async fn size_cap_errors_and_bad_urls() {
    let base = serve().await;
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(dir.path());
    let out = run(
        &WebFetchTool,
        json!({"url": format!("{base}/big"), "prompt": "p"}),
        &ctx,
    )
    .await;
    assert!(
        out.content.ends_with("[Content truncated]"),
        "tail: {}",
        &out.content[out.content.len() - 40..]
    );
    assert!(out.content.len() < MAX_CONTENT_CHARS + 200);

    let out = run(
        &WebFetchTool,
        json!({"url": format!("{base}/missing"), "prompt": "p"}),
        &ctx,
    )
    .await;
    assert!(out.is_error);
    assert!(out.content.contains("HTTP 404"), "{}", out.content);

    let out = run(
        &WebFetchTool,
        json!({"url": format!("{base}/binary"), "prompt": "p"}),
        &ctx,
    )
    .await;
    assert!(out.is_error);
    assert!(out.content.contains("not a text page"), "{}", out.content);

    let out = run(
        &WebFetchTool,
        json!({"url": "not a url", "prompt": "p"}),
        &ctx,
    )
    .await;
    assert!(out.is_error);
    assert!(
        out.content.contains("`url` is not a valid URL"),
        "{}",
        out.content
    );

    let out = run(
        &WebFetchTool,
        json!({"url": "file:///etc/passwd", "prompt": "p"}),
        &ctx,
    )
    .await;
    assert!(out.is_error);
    assert!(
        out.content.contains("must be http or https"),
        "{}",
        out.content
    );

    let out = run(&WebFetchTool, json!({"url": format!("{base}/plain")}), &ctx).await;
    assert!(
        out.content.contains("`prompt` is required"),
        "{}",
        out.content
    );
}
