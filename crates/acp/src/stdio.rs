//! Standard input and output as the connection's lines, with the session's cap
//! ([`tine_session::read_capped_line`]): a line longer than 32 MiB is never buffered whole; it is skipped as it is read and answered with
//! a JSON-RPC error saying why, and the connection goes on. (The crate's own `Stdio` reads a
//! line whole, however long.)

use std::io;

use futures::{SinkExt, Stream};
use tine_session::{LineError, MAX_LINE_BYTES, read_capped_line};
use tokio::io::AsyncWriteExt;
use tokio::sync::mpsc;

/// What a skipped line is answered with.
fn too_long() -> String {
    serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {
            "code": -32600,
            "message": format!(
                "a message longer than {} MiB was skipped unread; send smaller messages \
                 (large files through fs/read_text_file, images under the API's limit)",
                MAX_LINE_BYTES >> 20
            ),
        }
    })
    .to_string()
}

/// The connection's lines on standard input and output, and the task writing standard output
/// (await it after the connection ends, so every answer is out).
pub(crate) fn capped() -> (
    agent_client_protocol::Lines<
        impl futures::Sink<String, Error = io::Error> + Send + 'static,
        impl Stream<Item = io::Result<String>> + Send + 'static,
    >,
    tokio::task::JoinHandle<()>,
) {
    let (tx, mut rx) = mpsc::unbounded_channel::<String>();
    let writer = tokio::spawn(async move {
        let mut stdout = tokio::io::stdout();
        while let Some(line) = rx.recv().await {
            let mut bytes = line.into_bytes();
            bytes.push(b'\n');
            if stdout.write_all(&bytes).await.is_err() || stdout.flush().await.is_err() {
                break;
            }
        }
    });
    let errors = tx.clone();
    let outgoing = futures::sink::unfold(tx, |tx, line: String| async move {
        tx.send(line)
            .map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "standard output closed"))?;
        Ok::<_, io::Error>(tx)
    });
    let input = tokio::io::BufReader::with_capacity(1 << 16, tokio::io::stdin());
    let incoming = futures::stream::unfold((input, errors), |(mut input, errors)| async move {
        loop {
            match read_capped_line(&mut input, MAX_LINE_BYTES).await {
                Ok(None) => return None,
                Ok(Some(Ok(line))) => return Some((Ok(line), (input, errors))),
                // Not UTF-8: the crate answers it as the parse error it is.
                Ok(Some(Err(LineError::NotUtf8))) => {
                    return Some((Ok(String::from("\u{fffd}")), (input, errors)));
                }
                Ok(Some(Err(LineError::TooLong))) => {
                    tracing::warn!("a message over {MAX_LINE_BYTES} bytes was skipped");
                    let _ = errors.send(too_long());
                }
                Err(error) => return Some((Err(error), (input, errors))),
            }
        }
    });
    let outgoing = Box::pin(outgoing.sink_map_err(|error: io::Error| error));
    (
        agent_client_protocol::Lines::new(outgoing, Box::pin(incoming)),
        writer,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_skipped_line_is_answered_with_a_request_error() {
        let answer: serde_json::Value = serde_json::from_str(&too_long()).unwrap();
        assert_eq!(answer["error"]["code"], -32600);
        assert!(
            answer["error"]["message"]
                .as_str()
                .unwrap()
                .contains("skipped unread")
        );
    }
}
