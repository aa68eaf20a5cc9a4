//! Standard input of a stream-json run, line by line: each line read with a cap (a line
//! longer than [`MAX_LINE_BYTES`] is skipped whole and reported, so one unterminated line
//! cannot grow without bound), parsed into what it is: a user message, a control request,
//! the answer to one of tine's, a cancellation, or something tine reports as bad input.

use serde_json::Value;
use tine_session::LineError;
use tokio::io::AsyncBufRead;

/// The longest line read (the session's cap for front ends' input).
pub(crate) use tine_session::MAX_LINE_BYTES;

/// One line of standard input.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Line {
    /// A user message: its text, all its blocks when it has images or documents, and the
    /// uuid the app gave it, if any.
    User {
        text: String,
        content: Option<Vec<tine_api_client::ContentBlock>>,
        uuid: Option<String>,
    },
    /// The app asks tine something (`control_request`).
    Request { id: String, request: Value },
    /// The app answers one of tine's requests (`control_response`).
    Response {
        id: String,
        result: Result<Value, String>,
    },
    /// The app withdraws a request of its own (`control_cancel_request`).
    Cancel { id: String },
    /// Nothing to do (a blank line, `keep_alive`).
    Nothing,
    /// Not something tine can take: said on stdout, and the run goes on.
    Bad { error: String },
}

/// Parses one line.
pub(crate) fn parse(line: &str) -> Line {
    if line.trim().is_empty() {
        return Line::Nothing;
    }
    let Ok(value) = serde_json::from_str::<Value>(line) else {
        return Line::Bad {
            error: "not a JSON object".to_owned(),
        };
    };
    let text = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_owned);
    match value.get("type").and_then(Value::as_str) {
        Some("user") => match super::prompt::user_prompt(line) {
            Ok(Some(prompt)) => Line::User {
                text: prompt.text,
                content: prompt.content,
                uuid: text("uuid"),
            },
            Ok(None) => Line::Nothing,
            Err(error) => Line::Bad { error },
        },
        Some("control_request") => {
            let (Some(id), Some(request)) = (text("request_id"), value.get("request")) else {
                return Line::Bad {
                    error: "a control_request needs a request_id and a request".to_owned(),
                };
            };
            Line::Request {
                id,
                request: request.clone(),
            }
        }
        Some("control_response") => {
            let response = value.get("response").cloned().unwrap_or(Value::Null);
            let Some(id) = response.get("request_id").and_then(Value::as_str) else {
                return Line::Bad {
                    error: "a control_response needs response.request_id".to_owned(),
                };
            };
            let result = match response.get("subtype").and_then(Value::as_str) {
                Some("success") => Ok(response.get("response").cloned().unwrap_or(Value::Null)),
                _ => Err(response
                    .get("error")
                    .and_then(Value::as_str)
                    .unwrap_or("the app answered with an error")
                    .to_owned()),
            };
            Line::Response {
                id: id.to_owned(),
                result,
            }
        }
        Some("control_cancel_request") => match text("request_id") {
            Some(id) => Line::Cancel { id },
            None => Line::Bad {
                error: "a control_cancel_request needs a request_id".to_owned(),
            },
        },
        Some("keep_alive") => Line::Nothing,
        Some(other) => Line::Bad {
            error: format!(
                "unknown message type `{other}` (tine reads user, control_request, \
                 control_response and control_cancel_request)"
            ),
        },
        None => Line::Bad {
            error: "a message needs a \"type\"".to_owned(),
        },
    }
}

/// The next line of `input` without its newline, at most [`MAX_LINE_BYTES`] long: `Ok(None)`
/// at the end, `Err` for a longer line (skipped whole) or one that is not UTF-8.
pub(crate) async fn next_line<R: AsyncBufRead + Unpin>(
    input: &mut R,
) -> std::io::Result<Option<Result<String, String>>> {
    let line = tine_session::read_capped_line(input, MAX_LINE_BYTES).await?;
    Ok(line.map(|line| {
        line.map_err(|error| match error {
            LineError::TooLong => format!("a line longer than {MAX_LINE_BYTES} bytes was skipped"),
            LineError::NotUtf8 => "the line is not UTF-8".to_owned(),
        })
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_told_apart() {
        assert!(matches!(
            parse(r#"{"type":"user","message":{"role":"user","content":"hi"},"uuid":"u1"}"#),
            Line::User { text, uuid: Some(u), .. } if text == "hi" && u == "u1"
        ));
        assert!(matches!(
            parse(r#"{"type":"control_request","request_id":"r1","request":{"subtype":"interrupt"}}"#),
            Line::Request { id, .. } if id == "r1"
        ));
        assert_eq!(
            parse(
                r#"{"type":"control_response","response":{"subtype":"error","request_id":"t1","error":"no"}}"#
            ),
            Line::Response {
                id: "t1".into(),
                result: Err("no".into())
            }
        );
        assert!(matches!(parse("not json"), Line::Bad { .. }));
        assert!(
            matches!(parse(r#"{"type":"telepathy"}"#), Line::Bad { error } if error.contains("telepathy"))
        );
        assert_eq!(parse("  "), Line::Nothing);
    }

    #[tokio::test]
    async fn a_line_over_the_cap_is_skipped_whole() {
        let mut text = vec![b'x'; MAX_LINE_BYTES + 10];
        text.extend_from_slice(b"\n{\"type\":\"keep_alive\"}\n");
        let mut input = std::io::Cursor::new(text);
        let mut reader = tokio::io::BufReader::new(&mut input);
        assert!(matches!(next_line(&mut reader).await, Ok(Some(Err(_)))));
        assert_eq!(
            next_line(&mut reader).await.unwrap(),
            Some(Ok("{\"type\":\"keep_alive\"}".to_owned()))
        );
        assert_eq!(next_line(&mut reader).await.unwrap(), None);
    }
}
