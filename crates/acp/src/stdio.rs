//! Standard input and output as the connection's lines, with a cap: a line longer than
//! [`MAX_LINE_BYTES`] is never buffered whole; it is skipped as it is read and answered with
//! a JSON-RPC error saying why, and the connection goes on. (The crate's own `Stdio` reads a
//! line whole, however long.)

use std::io;

use futures::{SinkExt, Stream};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWriteExt};
use tokio::sync::mpsc;

/// The longest line read (an image in a prompt can be large; the API takes 32 MB).
pub(crate) const MAX_LINE_BYTES: usize = 32 << 20;

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

/// One line of `input` without its newline: `Ok(None)` at the end, `Ok(Some(Err(())))` for a
/// line over the cap (skipped whole, never held).
async fn next_line<R: AsyncBufRead + Unpin>(
    input: &mut R,
) -> io::Result<Option<Result<String, ()>>> {
    let mut line = Vec::new();
    let mut too_long = false;
    loop {
        let buffer = input.fill_buf().await?;
        if buffer.is_empty() {
            if line.is_empty() && !too_long {
                return Ok(None);
            }
            break;
        }
        let (chunk, done) = match buffer.iter().position(|b| *b == b'\n') {
            Some(end) => (&buffer[..end], Some(end + 1)),
            None => (buffer, None),
        };
        if !too_long {
            if line.len() + chunk.len() > MAX_LINE_BYTES {
                too_long = true;
                line = Vec::new();
            } else {
                line.extend_from_slice(chunk);
            }
        }
        let used = done.unwrap_or(buffer.len());
        input.consume(used);
        if done.is_some() {
            break;
        }
    }
    if too_long {
        return Ok(Some(Err(())));
    }
    Ok(Some(Ok(String::from_utf8_lossy(&line).into_owned())))
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
            match next_line(&mut input).await {
                Ok(None) => return None,
                Ok(Some(Ok(line))) => return Some((Ok(line), (input, errors))),
                Ok(Some(Err(()))) => {
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

    #[tokio::test]
    async fn a_line_over_the_cap_is_skipped_whole_and_the_next_is_read() {
        let mut text = vec![b'x'; MAX_LINE_BYTES + 10];
        text.extend_from_slice(b"\n{\"jsonrpc\":\"2.0\"}\nlast");
        let mut input = tokio::io::BufReader::new(&text[..]);
        assert_eq!(next_line(&mut input).await.unwrap(), Some(Err(())));
        assert_eq!(
            next_line(&mut input).await.unwrap(),
            Some(Ok("{\"jsonrpc\":\"2.0\"}".to_owned()))
        );
        assert_eq!(
            next_line(&mut input).await.unwrap(),
            Some(Ok("last".to_owned()))
        );
        assert_eq!(next_line(&mut input).await.unwrap(), None);
        assert!(too_long().contains("-32600"));
    }
}
