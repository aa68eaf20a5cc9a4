//! Read of what is not text: images (PNG, JPEG, GIF, WebP) become an `image` block and PDFs a
//! `document` block in the `tool_result`, base64-encoded, as Claude Code's Read sends them.
//! The format is told by the file's first bytes (the API refuses a media type that does not
//! match the data), and files over the API's limits (5 MB of base64, 8000 pixels a side, told
//! by the header) are refused with what to do instead: tine does not resize images (decoding
//! and encoding them would take an image library in the build; Bash's `convert` does it).
//! `pages` reads some pages of a PDF, rendered as PNG images by poppler's `pdftoppm` (the
//! API's document block has no page selection).

use std::path::{Path, PathBuf};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;

use super::files::open_regular;
use crate::tool::{MediaKind, ToolError, ToolMedia, ToolOutput};

/// The API's limit on one image, measured on its base64 text.
pub(crate) const MAX_IMAGE_BASE64_BYTES: usize = 5 * 1024 * 1024;
/// The API's limit on a request is 32 MB; a PDF's base64 text must fit in it with the rest.
pub(crate) const MAX_PDF_BASE64_BYTES: usize = 30 * 1024 * 1024;
/// Pages of a PDF the API reads in one document.
pub(crate) const MAX_PDF_PAGES: usize = 100;
/// Pages one Read with `pages` renders.
pub(crate) const MAX_PAGES_PER_READ: usize = 20;

/// What a path's extension says it is, before looking at its bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MediaFile {
    Image,
    Pdf,
}

impl MediaFile {
    /// By extension: `png`, `jpg`/`jpeg`, `gif`, `webp`, `pdf` (any case).
    pub(crate) fn of(path: &Path) -> Option<Self> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "png" | "jpg" | "jpeg" | "gif" | "webp" => Some(Self::Image),
            "pdf" => Some(Self::Pdf),
            _ => None,
        }
    }
}

/// Read of an image, a PDF or a notebook (`None`: a text file, read as lines); `pages` only
/// for PDFs. The file work runs on a blocking thread.
pub(crate) async fn read_special(
    path: &Path,
    pages: Option<String>,
    ctx: &crate::context::ToolContext,
) -> Option<Result<ToolOutput, ToolError>> {
    let media = MediaFile::of(path);
    let notebook = super::notebook::is_notebook(path);
    if media != Some(MediaFile::Pdf) && pages.is_some() {
        return Some(Err(ToolError::InvalidInput(
            "`pages` only applies to PDF files; use `offset` and `limit` for text".to_owned(),
        )));
    }
    if media.is_none() && !notebook {
        return None;
    }
    let task_path = path.to_path_buf();
    let job = move || match (media, pages) {
        (Some(MediaFile::Image), _) => read_image(&task_path).map(|out| (out, None)),
        (Some(MediaFile::Pdf), None) => read_pdf(&task_path).map(|out| (out, None)),
        (Some(MediaFile::Pdf), Some(pages)) => parse_pages(&pages)
            .and_then(|range| read_pdf_pages(&task_path, range))
            .map(|out| (out, None)),
        (None, _) => super::notebook::read_notebook(&task_path)
            .map(|(out, bytes, mtime)| (out, Some((bytes, mtime)))),
    };
    let result = tokio::task::spawn_blocking(job)
        .await
        .map_err(|error| ToolError::Failed(format!("reading {}: {error}", path.display())))
        .and_then(|r| r);
    if ctx.cancellation().is_cancelled() {
        return Some(Err(ToolError::Cancelled));
    }
    Some(result.map(|(output, seen)| {
        if let Some((bytes, mtime)) = seen {
            ctx.file_state().record(path, &bytes, mtime);
        }
        output
    }))
}

/// The image format of `bytes`, by their signature.
pub(crate) fn image_media_type(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if bytes.starts_with(&[0xff, 0xd8, 0xff]) {
        Some("image/jpeg")
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

fn read_all(path: &Path) -> Result<Vec<u8>, ToolError> {
    use std::io::Read;
    let Some((mut file, metadata)) = open_regular(path)? else {
        return Err(ToolError::NotFound(path.to_path_buf()));
    };
    let mut bytes = Vec::with_capacity(usize::try_from(metadata.len()).unwrap_or(0));
    file.read_to_end(&mut bytes)
        .map_err(|error| ToolError::io("cannot read", path, error))?;
    Ok(bytes)
}

fn base64_len(bytes: usize) -> usize {
    bytes.div_ceil(3) * 4
}

fn megabytes(bytes: usize) -> String {
    format!("{:.1} MB", bytes as f64 / (1024.0 * 1024.0))
}

/// An image file as an image block.
pub(crate) fn read_image(path: &Path) -> Result<ToolOutput, ToolError> {
    let bytes = read_all(path)?;
    let Some(media_type) = image_media_type(&bytes) else {
        return Err(ToolError::Failed(format!(
            "{} is named like an image but is not a PNG, JPEG, GIF or WebP file (its first \
             bytes say otherwise); the API only takes those four",
            path.display()
        )));
    };
    if let Some((width, height)) = super::image_size::image_size(&bytes)
        && width.max(height) > super::image_size::MAX_IMAGE_SIDE
    {
        return Err(ToolError::Failed(format!(
            "{} is {width}x{height} pixels, over the API's limit of {} pixels a side for one \
             image (tine does not resize images); make a smaller copy (e.g. `convert {} \
             -resize 2000x2000 /tmp/smaller.png` through Bash) and read that",
            path.display(),
            super::image_size::MAX_IMAGE_SIDE,
            path.display()
        )));
    }
    let encoded = base64_len(bytes.len());
    if encoded > MAX_IMAGE_BASE64_BYTES {
        return Err(ToolError::Failed(format!(
            "{} is {} ({} as base64), over the API's {} limit for one image; make a smaller \
             copy (e.g. `convert {} -resize 50% /tmp/smaller.png` through Bash) and read that",
            path.display(),
            megabytes(bytes.len()),
            megabytes(encoded),
            megabytes(MAX_IMAGE_BASE64_BYTES),
            path.display()
        )));
    }
    let size = bytes.len();
    Ok(ToolOutput::text(format!(
        "Image {} ({media_type}, {size} bytes)",
        path.display()
    ))
    .with_summary(format!("Read image ({})", megabytes(size)))
    .with_media(ToolMedia {
        kind: MediaKind::Image,
        media_type: media_type.to_owned(),
        data: STANDARD.encode(&bytes),
    }))
}

/// A rough page count: the page objects the file shows in the clear (pages inside compressed
/// object streams are not seen, so this only ever undercounts).
fn visible_pages(bytes: &[u8]) -> usize {
    let needle = b"/Type";
    let mut count = 0;
    let mut i = 0;
    while let Some(at) = bytes[i..].windows(needle.len()).position(|w| w == needle) {
        let mut j = i + at + needle.len();
        while bytes.get(j).is_some_and(u8::is_ascii_whitespace) {
            j += 1;
        }
        if bytes[j..].starts_with(b"/Page") && !bytes[j..].starts_with(b"/Pages") {
            count += 1;
        }
        i = j;
    }
    count
}

/// A whole PDF as a document block.
pub(crate) fn read_pdf(path: &Path) -> Result<ToolOutput, ToolError> {
    let bytes = read_all(path)?;
    if !bytes.starts_with(b"%PDF-") {
        return Err(ToolError::Failed(format!(
            "{} is named like a PDF but does not start with `%PDF-`",
            path.display()
        )));
    }
    let encoded = base64_len(bytes.len());
    if encoded > MAX_PDF_BASE64_BYTES {
        return Err(ToolError::Failed(format!(
            "{} is {}, too large to send whole (the API takes requests up to 32 MB); read some \
             pages with `pages` (e.g. \"1-5\")",
            path.display(),
            megabytes(bytes.len())
        )));
    }
    let pages = visible_pages(&bytes);
    if pages > MAX_PDF_PAGES {
        return Err(ToolError::Failed(format!(
            "{} has {pages} pages, more than the {MAX_PDF_PAGES} the API reads in one document; \
             read some pages with `pages` (e.g. \"1-20\")",
            path.display()
        )));
    }
    Ok(ToolOutput::text(format!(
        "PDF {} ({} bytes{})",
        path.display(),
        bytes.len(),
        if pages > 0 {
            format!(", {pages} pages")
        } else {
            String::new()
        }
    ))
    .with_summary(format!("Read PDF ({})", megabytes(bytes.len())))
    .with_media(ToolMedia {
        kind: MediaKind::Document,
        media_type: "application/pdf".to_owned(),
        data: STANDARD.encode(&bytes),
    }))
}

/// `"3"`, `"1-5"`: the first and last page (1-based, inclusive), at most
/// [`MAX_PAGES_PER_READ`] of them.
pub(crate) fn parse_pages(pages: &str) -> Result<(usize, usize), ToolError> {
    let bad = || {
        ToolError::InvalidInput(format!(
            "`pages` must be a page or a range such as \"3\" or \"1-5\", not \"{pages}\""
        ))
    };
    let (first, last) = match pages.trim().split_once('-') {
        Some((a, b)) => (a.trim(), b.trim()),
        None => (pages.trim(), pages.trim()),
    };
    let first: usize = first.parse().map_err(|_| bad())?;
    let last: usize = last.parse().map_err(|_| bad())?;
    if first == 0 || last < first {
        return Err(bad());
    }
    if last - first + 1 > MAX_PAGES_PER_READ {
        return Err(ToolError::InvalidInput(format!(
            "`pages` \"{pages}\" is {} pages; read at most {MAX_PAGES_PER_READ} at a time",
            last - first + 1
        )));
    }
    Ok((first, last))
}

/// Pages `first..=last` of a PDF, each rendered as a PNG image block by `pdftoppm`.
pub(crate) fn read_pdf_pages(
    path: &Path,
    (first, last): (usize, usize),
) -> Result<ToolOutput, ToolError> {
    if open_regular(path)?.is_none() {
        return Err(ToolError::NotFound(path.to_path_buf()));
    }
    let dir = tempfile::tempdir().map_err(|e| ToolError::io("cannot create", "/tmp", e))?;
    let prefix: PathBuf = dir.path().join("page");
    let status = std::process::Command::new("pdftoppm")
        .args([
            "-png",
            "-r",
            "100",
            "-f",
            &first.to_string(),
            "-l",
            &last.to_string(),
        ])
        .arg(path)
        .arg(&prefix)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .output();
    let output = match status {
        Ok(output) => output,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            return Err(ToolError::Failed(
                "reading PDF pages needs poppler's `pdftoppm`, which is not installed (e.g. \
                 `apt install poppler-utils`); without `pages` the whole PDF is sent"
                    .to_owned(),
            ));
        }
        Err(error) => return Err(ToolError::io("cannot run pdftoppm on", path, error)),
    };
    if !output.status.success() {
        return Err(ToolError::Failed(format!(
            "pdftoppm could not render pages {first}-{last} of {}: {}",
            path.display(),
            String::from_utf8_lossy(&output.stderr).trim()
        )));
    }
    let mut rendered: Vec<PathBuf> = std::fs::read_dir(dir.path())
        .map_err(|e| ToolError::io("cannot list", dir.path(), e))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "png"))
        .collect();
    rendered.sort();
    if rendered.is_empty() {
        return Err(ToolError::Failed(format!(
            "{} has no pages {first}-{last}",
            path.display()
        )));
    }
    let mut out = ToolOutput::text(format!(
        "PDF {} pages {first}-{} as images",
        path.display(),
        first + rendered.len() - 1
    ))
    .with_summary(format!("Read {} PDF pages", rendered.len()));
    for page in &rendered {
        let bytes = read_all(page)?;
        if base64_len(bytes.len()) > MAX_IMAGE_BASE64_BYTES {
            return Err(ToolError::Failed(format!(
                "a rendered page of {} is over the API's image limit; read fewer pages",
                path.display()
            )));
        }
        out = out.with_media(ToolMedia {
            kind: MediaKind::Image,
            media_type: "image/png".to_owned(),
            data: STANDARD.encode(&bytes),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_are_told_by_their_bytes() {
        assert_eq!(
            image_media_type(b"\x89PNG\r\n\x1a\nrest"),
            Some("image/png")
        );
        assert_eq!(
            image_media_type(&[0xff, 0xd8, 0xff, 0xe0]),
            Some("image/jpeg")
        );
        assert_eq!(image_media_type(b"GIF89a.."), Some("image/gif"));
        assert_eq!(
            image_media_type(b"RIFF\0\0\0\0WEBPVP8 "),
            Some("image/webp")
        );
        assert_eq!(image_media_type(b"<svg>"), None);
    }

    #[test]
    fn page_ranges_parse_and_are_bounded() {
        assert_eq!(parse_pages("3").unwrap(), (3, 3));
        assert_eq!(parse_pages(" 1 - 5 ").unwrap(), (1, 5));
        for bad in ["0", "5-1", "a", "1-", "1-21"] {
            assert!(parse_pages(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn visible_pages_are_counted_not_the_page_tree() {
        let pdf = b"%PDF-1.4 1 0 obj << /Type /Pages /Kids [2 0 R 3 0 R] >> 2 0 obj << /Type /Page >> 3 0 obj <</Type/Page>>";
        assert_eq!(visible_pages(pdf), 2);
    }
}
