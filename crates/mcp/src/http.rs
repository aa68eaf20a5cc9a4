//! rmcp's streamable HTTP transport over the workspace's reqwest (0.12, rustls on ring).
//!
//! rmcp ships a client for reqwest 0.13, whose TLS default is aws-lc-rs: a second HTTP stack
//! and a C build. Its transport is generic over [`StreamableHttpClient`], so this small
//! implementation of the three requests it makes (POST a message, GET the event stream,
//! DELETE the session) keeps one reqwest in the binary.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use bytes::Bytes;
use futures::stream::BoxStream;
use futures::{Stream, StreamExt, TryStreamExt};
use http::{HeaderName, HeaderValue, StatusCode};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_client::{
    AuthRequiredError, SseError, StreamableHttpClient, StreamableHttpError,
    StreamableHttpPostResponse,
};
use sse_stream::{Sse, SseStream};

const HEADER_SESSION_ID: &str = "Mcp-Session-Id";
const HEADER_LAST_EVENT_ID: &str = "Last-Event-Id";
const EVENT_STREAM: &str = "text/event-stream";
const JSON: &str = "application/json";
/// The largest JSON reply read whole (rmcp's own default).
const MAX_JSON_BODY: usize = 16 * 1024 * 1024;
/// The largest single SSE event (rmcp's own default); an endless event is an error, not OOM.
const MAX_SSE_EVENT: usize = 16 * 1024 * 1024;

/// The reqwest client rmcp's transport drives.
#[derive(Debug, Clone, Default)]
pub(crate) struct ReqwestHttpClient(pub reqwest::Client);

type Error = StreamableHttpError<reqwest::Error>;

fn media_type_is(value: &HeaderValue, expected: &str) -> bool {
    value
        .to_str()
        .ok()
        .and_then(|v| v.split(';').next())
        .is_some_and(|essence| essence.trim().eq_ignore_ascii_case(expected))
}

fn with_headers(
    mut request: reqwest::RequestBuilder,
    session_id: Option<&str>,
    auth_header: Option<String>,
    custom_headers: HashMap<HeaderName, HeaderValue>,
) -> reqwest::RequestBuilder {
    for (name, value) in custom_headers {
        request = request.header(name, value);
    }
    if let Some(token) = auth_header {
        request = request.bearer_auth(token);
    }
    if let Some(session_id) = session_id {
        request = request.header(HEADER_SESSION_ID, session_id);
    }
    request
}

fn auth_error(response: &reqwest::Response) -> Option<Error> {
    if response.status() != StatusCode::UNAUTHORIZED {
        return None;
    }
    let header = response
        .headers()
        .get(http::header::WWW_AUTHENTICATE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    Some(StreamableHttpError::AuthRequired(AuthRequiredError::new(
        header,
    )))
}

async fn bounded_body(response: reqwest::Response, max: usize) -> Result<Vec<u8>, Error> {
    if response
        .content_length()
        .is_some_and(|len| len > max as u64)
    {
        return Err(StreamableHttpError::ResponseBodyTooLarge { max_size: max });
    }
    let mut stream = response.bytes_stream();
    let mut body = Vec::new();
    while let Some(chunk) = stream
        .try_next()
        .await
        .map_err(StreamableHttpError::Client)?
    {
        if chunk.len() > max - body.len() {
            return Err(StreamableHttpError::ResponseBodyTooLarge { max_size: max });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// Fails the byte stream once more than `max` bytes arrive without a blank line (the end of an
/// SSE event). A terminator split across chunks is missed, which only makes the count larger.
fn bounded_events<S>(stream: S, max: usize) -> impl Stream<Item = Result<Bytes, std::io::Error>>
where
    S: Stream<Item = Result<Bytes, reqwest::Error>>,
{
    let mut since_event = 0usize;
    stream.map(move |chunk| {
        let chunk = chunk.map_err(std::io::Error::other)?;
        let tail = memchr_blank_line(&chunk);
        since_event = match tail {
            Some(after) => chunk.len() - after,
            None => since_event + chunk.len(),
        };
        if since_event > max {
            return Err(std::io::Error::other(format!(
                "an SSE event exceeded {max} bytes"
            )));
        }
        Ok(chunk)
    })
}

/// The offset just after the last blank line (`\n\n` or `\r\n\r\n`) in `bytes`.
fn memchr_blank_line(bytes: &[u8]) -> Option<usize> {
    bytes
        .windows(2)
        .rposition(|w| w == b"\n\n")
        .map(|i| i + 2)
        .or_else(|| {
            bytes
                .windows(4)
                .rposition(|w| w == b"\r\n\r\n")
                .map(|i| i + 4)
        })
}

fn sse(response: reqwest::Response) -> BoxStream<'static, Result<Sse, SseError>> {
    SseStream::from_bytes_stream(bounded_events(response.bytes_stream(), MAX_SSE_EVENT)).boxed()
}

impl StreamableHttpClient for ReqwestHttpClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, Error> {
        let request = self
            .0
            .post(uri.as_ref())
            .header(http::header::ACCEPT, format!("{EVENT_STREAM}, {JSON}"));
        let request = with_headers(request, session_id.as_deref(), auth_header, custom_headers);
        let response = request
            .json(&message)
            .send()
            .await
            .map_err(StreamableHttpError::Client)?;
        if let Some(error) = auth_error(&response) {
            return Err(error);
        }
        let status = response.status();
        if matches!(status, StatusCode::ACCEPTED | StatusCode::NO_CONTENT) {
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        if status == StatusCode::NOT_FOUND && session_id.is_some() {
            return Err(StreamableHttpError::SessionExpired);
        }
        let awaits_no_response = !matches!(message, ClientJsonRpcMessage::Request(_));
        let new_session = response
            .headers()
            .get(HEADER_SESSION_ID)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let content_type = response.headers().get(http::header::CONTENT_TYPE).cloned();
        if !status.is_success() {
            let body = bounded_body(response, 64 * 1024).await.unwrap_or_default();
            let body = String::from_utf8_lossy(&body);
            // A JSON-RPC error in the body is the server's answer; keep it for the caller.
            if let Ok(message @ ServerJsonRpcMessage::Error(_)) =
                serde_json::from_str::<ServerJsonRpcMessage>(&body)
            {
                return Ok(StreamableHttpPostResponse::Json(message, new_session));
            }
            return Err(StreamableHttpError::UnexpectedServerResponse(Cow::Owned(
                format!(
                    "HTTP {status}: {}",
                    body.chars().take(500).collect::<String>()
                ),
            )));
        }
        match content_type {
            Some(ct) if media_type_is(&ct, EVENT_STREAM) => {
                Ok(StreamableHttpPostResponse::Sse(sse(response), new_session))
            }
            Some(ct) if media_type_is(&ct, JSON) => {
                let body = bounded_body(response, MAX_JSON_BODY).await?;
                match serde_json::from_slice::<ServerJsonRpcMessage>(&body) {
                    Ok(parsed) => Ok(StreamableHttpPostResponse::Json(parsed, new_session)),
                    Err(_) if awaits_no_response => Ok(StreamableHttpPostResponse::Accepted),
                    Err(error) => Err(StreamableHttpError::Deserialize(error)),
                }
            }
            _ if awaits_no_response => Ok(StreamableHttpPostResponse::Accepted),
            other => {
                Err(StreamableHttpError::UnexpectedContentType(other.map(|v| {
                    String::from_utf8_lossy(v.as_bytes()).into_owned()
                })))
            }
        }
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), Error> {
        let request = with_headers(
            self.0.delete(uri.as_ref()),
            Some(&session_id),
            auth_header,
            custom_headers,
        );
        let response = request.send().await.map_err(StreamableHttpError::Client)?;
        if response.status() == StatusCode::METHOD_NOT_ALLOWED {
            return Ok(());
        }
        response
            .error_for_status()
            .map_err(StreamableHttpError::Client)?;
        Ok(())
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, Error> {
        let mut request = self
            .0
            .get(uri.as_ref())
            .header(http::header::ACCEPT, format!("{EVENT_STREAM}, {JSON}"));
        if let Some(last_event_id) = last_event_id {
            request = request.header(HEADER_LAST_EVENT_ID, last_event_id);
        }
        let request = with_headers(request, session_id.as_deref(), auth_header, custom_headers);
        let response = request.send().await.map_err(StreamableHttpError::Client)?;
        if response.status() == StatusCode::METHOD_NOT_ALLOWED {
            return Err(StreamableHttpError::ServerDoesNotSupportSse);
        }
        if let Some(error) = auth_error(&response) {
            return Err(error);
        }
        let response = response
            .error_for_status()
            .map_err(StreamableHttpError::Client)?;
        match response.headers().get(http::header::CONTENT_TYPE) {
            Some(ct) if media_type_is(ct, EVENT_STREAM) || media_type_is(ct, JSON) => {
                Ok(sse(response))
            }
            other => {
                Err(StreamableHttpError::UnexpectedContentType(other.map(|v| {
                    String::from_utf8_lossy(v.as_bytes()).into_owned()
                })))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blank_lines_end_events() {
        assert_eq!(memchr_blank_line(b"data: a\n\ndata: b"), Some(9));
        assert_eq!(memchr_blank_line(b"data: a\r\n\r\n"), Some(11));
        assert_eq!(memchr_blank_line(b"data: a\n"), None);
    }

    #[test]
    fn media_types_ignore_case_and_parameters() {
        let v = HeaderValue::from_static("Application/JSON; charset=utf-8");
        assert!(media_type_is(&v, JSON));
        assert!(!media_type_is(&v, EVENT_STREAM));
    }
}
