//! Reading a front end's standard input line by line with a cap ([`read_capped_line`]): a line
//! longer than the cap is skipped as it is read, never held whole, so one unterminated line
//! cannot grow without bound. Headless stream-json and `tine acp` read their input with it.

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// The longest line front ends read (a message with images can be large; the API's request
/// limit is 32 MB).
pub const MAX_LINE_BYTES: usize = 32 << 20;

/// Why a line was not read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineError {
    /// Longer than the cap: skipped whole.
    TooLong,
    /// Not UTF-8.
    NotUtf8,
}

/// The next line of `input` without its newline, at most `max` bytes: `Ok(None)` at the end.
pub async fn read_capped_line<R: AsyncBufRead + Unpin>(
    input: &mut R,
    max: usize,
) -> std::io::Result<Option<Result<String, LineError>>> {
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
            if line.len() + chunk.len() > max {
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
        return Ok(Some(Err(LineError::TooLong)));
    }
    Ok(Some(
        String::from_utf8(line).map_err(|_| LineError::NotUtf8),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_line_over_the_cap_is_skipped_whole_and_the_next_is_read() {
        let mut text = vec![b'x'; 100];
        text.extend_from_slice(b"\nok\n\xff\nlast");
        let mut input = tokio::io::BufReader::new(&text[..]);
        let mut next = async || read_capped_line(&mut input, 50).await.unwrap();
        assert_eq!(next().await, Some(Err(LineError::TooLong)));
        assert_eq!(next().await, Some(Ok("ok".to_owned())));
        assert_eq!(next().await, Some(Err(LineError::NotUtf8)));
        assert_eq!(next().await, Some(Ok("last".to_owned())));
        assert_eq!(next().await, None);
    }
}
