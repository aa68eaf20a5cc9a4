//! WebFetch: fetches a URL, turns HTML into text, caps the size, and lets the injected
//! summarizer (a small model call owned by the layer above) answer the model's prompt about it.

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;

use reqwest::redirect::Policy;
use reqwest::{StatusCode, Url};
use serde::Deserialize;
use serde_json::{Value, json};

use super::html::html_to_text;
use super::input::render_by;
use crate::context::ToolContext;
use crate::extensions::ContextExtension;
use crate::tool::{Tool, ToolError, ToolFuture, ToolOutput, parse_input};
use tine_permissions::PermissionTarget;

/// The error a [`WebSummarizer`] returns (its own layer's error, boxed).
pub type SummarizerError = Box<dyn std::error::Error + Send + Sync>;

/// The fetched page WebFetch hands to the summarizer.
#[derive(Debug, Clone, Copy)]
pub struct WebSummaryRequest<'a> {
    /// The page's URL.
    pub url: &'a str,
    /// The model's question about the page.
    pub prompt: &'a str,
    /// The page as text (already converted from HTML and size-capped).
    pub content: &'a str,
}

/// Answers WebFetch's `prompt` about a page with a small, fast model. Implemented by the layer
/// that owns model calls; without one, WebFetch returns the page text itself.
pub trait WebSummarizer: Send + Sync {
    /// The answer to `request.prompt` about `request.content`.
    fn summarize<'a>(
        &'a self,
        request: WebSummaryRequest<'a>,
    ) -> BoxFuture<'a, Result<String, SummarizerError>>;
}

/// The summarizer WebFetch finds on its context (`ctx.with_ext(WebFetchSummarizer(..))`).
#[derive(Clone)]
pub struct WebFetchSummarizer(pub Arc<dyn WebSummarizer>);

/// A fork asks the same small model.
impl ContextExtension for WebFetchSummarizer {
    fn fork(&self) -> Option<Self> {
        Some(self.clone())
    }
}

/// Bytes of a response body read at most; the rest is dropped.
pub(crate) const MAX_FETCH_BYTES: usize = 10 * 1024 * 1024;
/// Characters of page text handed on (to the summarizer or the model).
pub const MAX_CONTENT_CHARS: usize = 100_000;
/// How long one fetch may take.
pub(crate) const FETCH_TIMEOUT: Duration = Duration::from_secs(60);
const MAX_REDIRECTS: usize = 10;

#[derive(Deserialize)]
struct WebFetchInput {
    url: String,
    prompt: String,
}

/// The WebFetch tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct WebFetchTool;

const DESCRIPTION: &str = "\
Fetches a URL (http or https, fully formed), converts its HTML to text and answers `prompt` \
(what to extract from the page) about it with a small, fast model; large content may be \
summarised. Read-only. When the URL redirects to another host, the result gives the new URL: \
fetch that with a new call.";

impl Tool for WebFetchTool {
    fn name(&self) -> &str {
        "WebFetch"
    }

    fn description(&self) -> String {
        DESCRIPTION.to_owned()
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "url": {
                    "type": "string",
                    "format": "uri",
                    "description": "The URL to fetch"
                },
                "prompt": {
                    "type": "string",
                    "description": "What to extract from the page"
                }
            },
            "required": ["url", "prompt"],
            "additionalProperties": false
        })
    }

    fn call<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let input: WebFetchInput = parse_input(input)?;
            let url = Url::parse(&input.url).map_err(|error| {
                ToolError::InvalidInput(format!("`url` is not a valid URL: {error}"))
            })?;
            if !matches!(url.scheme(), "http" | "https") {
                return Err(ToolError::InvalidInput(format!(
                    "`url` must be http or https, not {}",
                    url.scheme()
                )));
            }
            let fetched = tokio::select! {
                fetched = fetch(url.clone()) => fetched?,
                () = ctx.cancellation().cancelled() => return Err(ToolError::Cancelled),
            };
            let page = match fetched {
                Fetched::Page(page) => page,
                Fetched::Redirect { status, location } => {
                    return Ok(ToolOutput::text(format!(
                        "REDIRECT DETECTED: The URL redirects to a different host.\n\n\
                         Original URL: {url}\nRedirect URL: {location}\nStatus: {status}\n\n\
                         To fetch the content, make a new WebFetch request with the redirect \
                         URL."
                    ))
                    .with_summary(format!("Redirected to {location}")));
                }
            };
            let summary = format!("Received {} ({})", human_size(page.bytes), page.status);
            let Some(summarizer) = ctx.ext::<WebFetchSummarizer>() else {
                return Ok(ToolOutput::text(format!(
                    "Content of {url}{}:\n\n{}",
                    if page.truncated { " (truncated)" } else { "" },
                    page.text
                ))
                .with_summary(summary));
            };
            let request = WebSummaryRequest {
                url: url.as_str(),
                prompt: &input.prompt,
                content: &page.text,
            };
            let answer = tokio::select! {
                answer = summarizer.0.summarize(request) => answer.map_err(|error| {
                    ToolError::Failed(format!("summarizing {url} failed: {error}"))
                })?,
                () = ctx.cancellation().cancelled() => return Err(ToolError::Cancelled),
            };
            Ok(ToolOutput::text(answer).with_summary(summary))
        })
    }

    fn permission_target(&self, input: &Value, _ctx: &ToolContext) -> PermissionTarget {
        PermissionTarget::Url {
            url: input
                .get("url")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
        }
    }

    fn is_read_only(&self, _input: &Value) -> bool {
        true
    }

    fn render_call(&self, input: &Value) -> String {
        render_by("WebFetch", input, "url")
    }
}

struct Page {
    status: StatusCode,
    text: String,
    bytes: usize,
    truncated: bool,
}

enum Fetched {
    Page(Page),
    Redirect {
        status: StatusCode,
        location: String,
    },
}

fn host_of(url: &Url) -> String {
    let host = url.host_str().unwrap_or_default();
    host.strip_prefix("www.")
        .unwrap_or(host)
        .to_ascii_lowercase()
}

/// Redirects are followed within a host (with or without `www.`), never to another: the model
/// is told instead, so a permission rule for one domain cannot be walked around.
fn redirect_policy() -> Policy {
    Policy::custom(|attempt| {
        if attempt.previous().len() > MAX_REDIRECTS {
            return attempt.error("too many redirects");
        }
        let same_host = attempt
            .previous()
            .last()
            .is_some_and(|previous| host_of(previous) == host_of(attempt.url()));
        if same_host {
            attempt.follow()
        } else {
            attempt.stop()
        }
    })
}

async fn fetch(url: Url) -> Result<Fetched, ToolError> {
    let client = reqwest::Client::builder()
        .redirect(redirect_policy())
        .timeout(FETCH_TIMEOUT)
        .user_agent(concat!("tine/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|error| ToolError::Failed(format!("cannot build an HTTP client: {error}")))?;
    let failed =
        |error: reqwest::Error| ToolError::Failed(format!("fetching {url} failed: {error}"));
    let mut response = client.get(url.clone()).send().await.map_err(failed)?;
    let status = response.status();
    if status.is_redirection() {
        let location = response
            .headers()
            .get(reqwest::header::LOCATION)
            .and_then(|value| value.to_str().ok())
            .and_then(|location| response.url().join(location).ok());
        if let Some(location) = location {
            return Ok(Fetched::Redirect {
                status,
                location: location.to_string(),
            });
        }
    }
    if !status.is_success() {
        return Err(ToolError::Failed(format!(
            "fetching {url} failed: HTTP {status}"
        )));
    }
    let content_type = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default()
        .to_ascii_lowercase();
    let mut body = Vec::new();
    let mut truncated = false;
    while let Some(chunk) = response.chunk().await.map_err(failed)? {
        let room = MAX_FETCH_BYTES - body.len();
        if chunk.len() > room {
            body.extend_from_slice(&chunk[..room]);
            truncated = true;
            break;
        }
        body.extend_from_slice(&chunk);
    }
    let bytes = body.len();
    let is_text = content_type.is_empty()
        || content_type.starts_with("text/")
        || ["json", "xml", "javascript", "yaml", "toml"]
            .iter()
            .any(|kind| content_type.contains(kind));
    if !is_text || body.iter().take(8192).any(|&b| b == 0) {
        return Err(ToolError::Failed(format!(
            "{url} is not a text page (content type `{content_type}`); WebFetch reads HTML and \
             text only"
        )));
    }
    let raw = String::from_utf8_lossy(&body);
    let looks_html = content_type.contains("html")
        || (content_type.is_empty() && raw.trim_start().starts_with('<'));
    let mut text = if looks_html {
        html_to_text(&raw)
    } else {
        raw.into_owned()
    };
    if let Some((cut, _)) = text.char_indices().nth(MAX_CONTENT_CHARS) {
        text.truncate(cut);
        text.push_str("\n\n[Content truncated]");
        truncated = true;
    }
    Ok(Fetched::Page(Page {
        status,
        text,
        bytes,
        truncated,
    }))
}

fn human_size(bytes: usize) -> String {
    if bytes < 1024 {
        format!("{bytes} B")
    } else if bytes < 1024 * 1024 {
        format!("{:.1} KB", bytes as f64 / 1024.0)
    } else {
        format!("{:.1} MB", bytes as f64 / (1024.0 * 1024.0))
    }
}
