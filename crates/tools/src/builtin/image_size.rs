//! An image's size in pixels, read from its header (no decoding): the API refuses an image
//! over [`MAX_IMAGE_SIDE`] pixels a side, and such a request fails whole, so Read refuses it
//! first with what to do.

/// The API's limit on either side of one image, in pixels.
pub(crate) const MAX_IMAGE_SIDE: u32 = 8000;

fn be16(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from(u16::from_be_bytes([
        *b.get(at)?,
        *b.get(at + 1)?,
    ])))
}

fn le16(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from(u16::from_le_bytes([
        *b.get(at)?,
        *b.get(at + 1)?,
    ])))
}

fn le24(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes([
        *b.get(at)?,
        *b.get(at + 1)?,
        *b.get(at + 2)?,
        0,
    ]))
}

/// (width, height) of a PNG, JPEG, GIF or WebP image; `None` when the header cannot say.
pub(crate) fn image_size(bytes: &[u8]) -> Option<(u32, u32)> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        // IHDR comes first: width and height as big-endian u32 at 16 and 20.
        let w = u32::from_be_bytes(bytes.get(16..20)?.try_into().ok()?);
        let h = u32::from_be_bytes(bytes.get(20..24)?.try_into().ok()?);
        return Some((w, h));
    }
    if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        return Some((le16(bytes, 6)?, le16(bytes, 8)?));
    }
    if bytes.len() >= 30 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        return match &bytes[12..16] {
            b"VP8 " => Some((le16(bytes, 26)? & 0x3fff, le16(bytes, 28)? & 0x3fff)),
            b"VP8L" => {
                let b = bytes.get(21..25)?;
                let w = 1 + (u32::from(b[0]) | (u32::from(b[1] & 0x3f) << 8));
                let h = 1
                    + ((u32::from(b[1]) >> 6)
                        | (u32::from(b[2]) << 2)
                        | (u32::from(b[3] & 0x0f) << 10));
                Some((w, h))
            }
            b"VP8X" => Some((1 + le24(bytes, 24)?, 1 + le24(bytes, 27)?)),
            _ => None,
        };
    }
    if bytes.starts_with(&[0xff, 0xd8]) {
        return jpeg_size(bytes);
    }
    None
}

/// A JPEG's size from its first start-of-frame segment.
fn jpeg_size(bytes: &[u8]) -> Option<(u32, u32)> {
    let mut at = 2;
    loop {
        // Fill bytes (0xFF) may come before a marker.
        while *bytes.get(at)? == 0xff && *bytes.get(at + 1)? == 0xff {
            at += 1;
        }
        if *bytes.get(at)? != 0xff {
            return None;
        }
        let marker = *bytes.get(at + 1)?;
        match marker {
            // Markers without a length.
            0x01 | 0xd0..=0xd8 => at += 2,
            // Start of frame (not DHT, JPG, DAC): precision, height, width.
            0xc0..=0xcf if !matches!(marker, 0xc4 | 0xc8 | 0xcc) => {
                return Some((be16(bytes, at + 7)?, be16(bytes, at + 5)?));
            }
            // End of image or start of scan before any frame: no size here.
            0xd9 | 0xda => return None,
            _ => at += 2 + usize::try_from(be16(bytes, at + 2)?).ok()?,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_read_from_each_header() {
        let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
        png.extend(9000u32.to_be_bytes());
        png.extend(20u32.to_be_bytes());
        assert_eq!(image_size(&png), Some((9000, 20)));

        let gif = b"GIF89a\x40\x1f\x10\x00rest";
        assert_eq!(image_size(gif), Some((8000, 16)));

        // SOI, an APP0 segment of 16 bytes, then SOF0: length, precision, height, width.
        let mut jpeg = vec![0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10];
        jpeg.extend([0u8; 14]);
        jpeg.extend([0xff, 0xc0, 0x00, 0x11, 0x08, 0x01, 0x2c, 0x23, 0x28]);
        assert_eq!(image_size(&jpeg), Some((9000, 300)));

        let mut vp8x = b"RIFF\0\0\0\0WEBPVP8X\x0a\0\0\0\0\0\0\0".to_vec();
        vp8x.extend([0x27, 0x23, 0x00, 0x63, 0x00, 0x00]); // 9000 - 1, 100 - 1
        vp8x.extend([0u8; 4]);
        assert_eq!(image_size(&vp8x), Some((9000, 100)));

        assert_eq!(image_size(b"\xff\xd8\xff\xd9"), None);
        assert_eq!(image_size(b"nothing"), None);
    }
}
