//! Magic-byte detection and header parsers for the allowed icon formats (PNG, JPEG, WebP).
//!
//! The parsers read only what is needed to learn the type, the dimensions and the number of
//! animation frames; they never decode pixels. Every loop advances through the input by at
//! least one byte per iteration, so each parser is bounded by the input length.

use super::{IconError, IconMime};

/// What a header parse learned about an image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageInfo {
    /// The type, from the magic bytes.
    pub mime: IconMime,
    /// Width in pixels (for animations, the canvas width).
    pub width: u32,
    /// Height in pixels (for animations, the canvas height).
    pub height: u32,
    /// Number of frames: 1 for a still image.
    pub frames: u32,
}

/// What the magic bytes say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sniffed {
    /// One of the allowlisted types.
    Allowed(IconMime),
    /// SVG (or an XML document that may be one).
    Svg,
    /// A known image type outside the allowlist: its name.
    Other(&'static str),
    /// Nothing recognized.
    Unknown,
}

const PNG_SIG: &[u8] = b"\x89PNG\r\n\x1a\n";

/// Detects the type of `bytes` from their first bytes.
pub(crate) fn sniff(bytes: &[u8]) -> Sniffed {
    if bytes.starts_with(PNG_SIG) {
        return Sniffed::Allowed(IconMime::Png);
    }
    if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        return Sniffed::Allowed(IconMime::Jpeg);
    }
    if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        return Sniffed::Allowed(IconMime::Webp);
    }
    if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        return Sniffed::Other("GIF");
    }
    if bytes.starts_with(b"BM") && bytes.len() >= 14 {
        return Sniffed::Other("BMP");
    }
    if bytes.starts_with(&[0, 0, 1, 0]) || bytes.starts_with(&[0, 0, 2, 0]) {
        return Sniffed::Other("ICO");
    }
    if bytes.len() >= 12 && &bytes[4..8] == b"ftyp" {
        return Sniffed::Other("AVIF/HEIF");
    }
    if bytes.starts_with(b"II*\0") || bytes.starts_with(b"MM\0*") {
        return Sniffed::Other("TIFF");
    }
    if looks_like_svg(bytes) {
        return Sniffed::Svg;
    }
    Sniffed::Unknown
}

/// Whether `bytes` look like SVG or another XML/HTML document (which a renderer might take
/// for SVG): a leading `<` after an optional BOM and whitespace, then `svg`, `?xml` or `!`.
fn looks_like_svg(bytes: &[u8]) -> bool {
    let mut b = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    while let [first, rest @ ..] = b {
        if !first.is_ascii_whitespace() {
            break;
        }
        b = rest;
    }
    let Some(rest) = b.strip_prefix(b"<") else { return false };
    let head: Vec<u8> = rest.iter().take(8).map(u8::to_ascii_lowercase).collect();
    head.starts_with(b"svg")
        || head.starts_with(b"?xml")
        || head.starts_with(b"!doctype svg")
        || head.starts_with(b"!--")
}

/// Parses the header of `bytes`, known (by [`sniff`]) to be of type `mime`.
pub(crate) fn inspect(mime: IconMime, bytes: &[u8]) -> Result<ImageInfo, IconError> {
    let (width, height, frames) = match mime {
        IconMime::Png => png(bytes),
        IconMime::Jpeg => jpeg(bytes),
        IconMime::Webp => webp(bytes),
    }
    .map_err(|reason| IconError::Malformed { mime, reason })?;
    if width == 0 || height == 0 {
        return Err(IconError::Malformed { mime, reason: format!("zero dimension ({width}x{height})") });
    }
    Ok(ImageInfo { mime, width, height, frames: frames.max(1) })
}

fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

fn le24(b: &[u8]) -> u32 {
    u32::from(b[0]) | u32::from(b[1]) << 8 | u32::from(b[2]) << 16
}

fn le32(b: &[u8]) -> u32 {
    u32::from_le_bytes([b[0], b[1], b[2], b[3]])
}

/// PNG: IHDR must be the first chunk; an `acTL` chunk (APNG) gives the frame count, and
/// `fcTL` chunks are counted too (the larger of the two is reported).
fn png(bytes: &[u8]) -> Result<(u32, u32, u32), String> {
    let mut pos = PNG_SIG.len();
    let mut dims = None;
    let (mut actl_frames, mut fctl_count) = (0u32, 0u32);
    while pos + 8 <= bytes.len() {
        let len = be32(&bytes[pos..]) as usize;
        let kind = &bytes[pos + 4..pos + 8];
        let data_start = pos + 8;
        let Some(data_end) = data_start.checked_add(len).filter(|&end| end <= bytes.len()) else {
            return Err(format!("chunk {} runs past the end of the data", String::from_utf8_lossy(kind)));
        };
        let data = &bytes[data_start..data_end];
        match kind {
            b"IHDR" => {
                if dims.is_some() || pos != PNG_SIG.len() {
                    return Err("IHDR is not the first chunk, or appears twice".into());
                }
                if len != 13 {
                    return Err(format!("IHDR has length {len}, not 13"));
                }
                dims = Some((be32(data), be32(&data[4..])));
            }
            _ if dims.is_none() => return Err("the first chunk is not IHDR".into()),
            b"acTL" => {
                if len < 8 {
                    return Err("acTL chunk is too short".into());
                }
                actl_frames = be32(data);
            }
            b"fcTL" => fctl_count = fctl_count.saturating_add(1),
            b"IEND" => break,
            _ => {}
        }
        // Chunk data, then a 4-byte CRC (not checked: a renderer checks it, and a bad CRC
        // cannot make the header parse lie about dimensions).
        pos = data_end + 4;
    }
    let (w, h) = dims.ok_or("no IHDR chunk")?;
    Ok((w, h, actl_frames.max(fctl_count)))
}

/// JPEG: walks the markers up to the first start-of-frame (SOFn) segment.
fn jpeg(bytes: &[u8]) -> Result<(u32, u32, u32), String> {
    let mut pos = 2;
    loop {
        // Fill bytes: any number of 0xFF before the marker code.
        if pos >= bytes.len() || bytes[pos] != 0xFF {
            return Err("no start-of-frame marker before the data ends".into());
        }
        while pos < bytes.len() && bytes[pos] == 0xFF {
            pos += 1;
        }
        let Some(&marker) = bytes.get(pos) else { return Err("truncated marker".into()) };
        pos += 1;
        match marker {
            // Standalone markers: no length field.
            0x01 | 0xD0..=0xD7 => continue,
            0xD8 => return Err("a second start-of-image marker".into()),
            0xD9 => return Err("end of image before any start-of-frame marker".into()),
            0xDA => return Err("scan data before any start-of-frame marker".into()),
            _ => {}
        }
        if pos + 2 > bytes.len() {
            return Err("truncated segment length".into());
        }
        let len = usize::from(u16::from_be_bytes([bytes[pos], bytes[pos + 1]]));
        if len < 2 || pos + len > bytes.len() {
            return Err(format!("segment 0xFF{marker:02X} has a bad length {len}"));
        }
        let is_sof = matches!(marker, 0xC0..=0xCF) && !matches!(marker, 0xC4 | 0xC8 | 0xCC);
        if is_sof {
            if len < 8 {
                return Err("start-of-frame segment is too short".into());
            }
            let seg = &bytes[pos + 2..pos + len];
            let height = u32::from(u16::from_be_bytes([seg[1], seg[2]]));
            let width = u32::from(u16::from_be_bytes([seg[3], seg[4]]));
            return Ok((width, height, 1));
        }
        pos += len;
    }
}

/// WebP: a RIFF container whose first chunk is `VP8 ` (lossy), `VP8L` (lossless) or `VP8X`
/// (extended: canvas size, and for animations `ANMF` chunks, counted).
fn webp(bytes: &[u8]) -> Result<(u32, u32, u32), String> {
    if bytes.len() < 20 {
        return Err("too short for a WebP header".into());
    }
    let riff_len = le32(&bytes[4..]) as usize;
    // The RIFF size covers everything after its own 8 bytes; a smaller file is truncated, a
    // larger size is never read past.
    let end = riff_len.saturating_add(8).min(bytes.len());
    let mut pos = 12;
    let mut first = true;
    let mut canvas = None;
    let mut frames = 0u32;
    while pos + 8 <= end {
        let kind = &bytes[pos..pos + 4];
        let len = le32(&bytes[pos + 4..]) as usize;
        let data_start = pos + 8;
        let Some(data_end) = data_start.checked_add(len).filter(|&e| e <= end) else {
            return Err(format!("chunk {} runs past the end of the data", String::from_utf8_lossy(kind)));
        };
        let data = &bytes[data_start..data_end];
        if first {
            first = false;
            match kind {
                b"VP8 " => {
                    if data.len() < 10 || data[3..6] != [0x9D, 0x01, 0x2A] {
                        return Err("VP8 frame header is missing its start code".into());
                    }
                    let w = u32::from(u16::from_le_bytes([data[6], data[7]]) & 0x3FFF);
                    let h = u32::from(u16::from_le_bytes([data[8], data[9]]) & 0x3FFF);
                    return Ok((w, h, 1));
                }
                b"VP8L" => {
                    if data.len() < 5 || data[0] != 0x2F {
                        return Err("VP8L header is missing its signature".into());
                    }
                    let bits = le32(&data[1..]);
                    return Ok(((bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1, 1));
                }
                b"VP8X" => {
                    if data.len() < 10 {
                        return Err("VP8X chunk is too short".into());
                    }
                    canvas = Some((le24(&data[4..]) + 1, le24(&data[7..]) + 1, data[0] & 0x02 != 0));
                }
                _ => return Err(format!("unknown first chunk {:?}", String::from_utf8_lossy(kind))),
            }
        } else if kind == b"ANMF" {
            frames = frames.saturating_add(1);
        }
        // Chunks are padded to an even size.
        pos = data_end + (len & 1);
    }
    let (w, h, animated) = canvas.ok_or("no image chunk")?;
    if animated && frames == 0 {
        return Err("animation flag set but no ANMF frames".into());
    }
    Ok((w, h, frames))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(kind: &[u8], data: &[u8]) -> Vec<u8> {
        let mut v = (data.len() as u32).to_be_bytes().to_vec();
        v.extend_from_slice(kind);
        v.extend_from_slice(data);
        v.extend_from_slice(&[0; 4]);
        v
    }

    fn png_bytes(w: u32, h: u32, actl: Option<u32>) -> Vec<u8> {
        let mut ihdr = w.to_be_bytes().to_vec();
        ihdr.extend_from_slice(&h.to_be_bytes());
        ihdr.extend_from_slice(&[8, 6, 0, 0, 0]);
        let mut v = PNG_SIG.to_vec();
        v.extend(chunk(b"IHDR", &ihdr));
        if let Some(n) = actl {
            let mut d = n.to_be_bytes().to_vec();
            d.extend_from_slice(&0u32.to_be_bytes());
            v.extend(chunk(b"acTL", &d));
        }
        v.extend(chunk(b"IDAT", &[0x78, 0x9C, 0x63, 0, 0, 0, 1, 0, 1]));
        v.extend(chunk(b"IEND", &[]));
        v
    }

    #[test]
    fn png_dimensions_and_frames() {
        let info = inspect(IconMime::Png, &png_bytes(16, 32, None)).unwrap();
        assert_eq!((info.width, info.height, info.frames), (16, 32, 1));
        let info = inspect(IconMime::Png, &png_bytes(16, 16, Some(500))).unwrap();
        assert_eq!(info.frames, 500);
        let mut bad = png_bytes(1, 1, None);
        bad.truncate(20);
        assert!(matches!(inspect(IconMime::Png, &bad), Err(IconError::Malformed { .. })));
        assert!(inspect(IconMime::Png, &png_bytes(0, 5, None)).is_err());
    }

    #[test]
    fn jpeg_dimensions() {
        let mut v = vec![0xFF, 0xD8, 0xFF, 0xE0, 0, 4, 0, 0];
        v.extend_from_slice(&[0xFF, 0xFF, 0xC2, 0, 11, 8, 0, 48, 0, 64, 1, 1, 0x11, 0]);
        let info = inspect(IconMime::Jpeg, &v).unwrap();
        assert_eq!((info.width, info.height), (64, 48));
        assert!(inspect(IconMime::Jpeg, &[0xFF, 0xD8, 0xFF, 0xDA, 0, 2]).is_err());
        assert!(inspect(IconMime::Jpeg, &[0xFF, 0xD8, 0xFF, 0xE0, 0xFF, 0xFF]).is_err());
    }

    #[test]
    fn webp_variants() {
        let riff = |body: &[u8]| {
            let mut v = b"RIFF".to_vec();
            v.extend_from_slice(&((body.len() + 4) as u32).to_le_bytes());
            v.extend_from_slice(b"WEBP");
            v.extend_from_slice(body);
            v
        };
        let mut lossy = b"VP8 ".to_vec();
        lossy.extend_from_slice(&10u32.to_le_bytes());
        lossy.extend_from_slice(&[0, 0, 0, 0x9D, 0x01, 0x2A, 20, 0, 10, 0]);
        let info = inspect(IconMime::Webp, &riff(&lossy)).unwrap();
        assert_eq!((info.width, info.height, info.frames), (20, 10, 1));

        let mut lossless = b"VP8L".to_vec();
        lossless.extend_from_slice(&5u32.to_le_bytes());
        let bits: u32 = 99 | (49 << 14);
        lossless.push(0x2F);
        lossless.extend_from_slice(&bits.to_le_bytes());
        lossless.push(0); // padding
        let info = inspect(IconMime::Webp, &riff(&lossless)).unwrap();
        assert_eq!((info.width, info.height), (100, 50));

        let mut ext = b"VP8X".to_vec();
        ext.extend_from_slice(&10u32.to_le_bytes());
        ext.extend_from_slice(&[0x02, 0, 0, 0, 31, 0, 0, 15, 0, 0]);
        for _ in 0..3 {
            ext.extend_from_slice(b"ANMF");
            ext.extend_from_slice(&0u32.to_le_bytes());
        }
        let info = inspect(IconMime::Webp, &riff(&ext)).unwrap();
        assert_eq!((info.width, info.height, info.frames), (32, 16, 3));
    }

    #[test]
    fn sniffing() {
        assert_eq!(sniff(b"  <svg xmlns='http://www.w3.org/2000/svg'>"), Sniffed::Svg);
        assert_eq!(sniff(b"\xEF\xBB\xBF<?xml version='1.0'?>"), Sniffed::Svg);
        assert_eq!(sniff(b"GIF89a...."), Sniffed::Other("GIF"));
        assert_eq!(sniff(b"hello"), Sniffed::Unknown);
        assert_eq!(sniff(&png_bytes(1, 1, None)), Sniffed::Allowed(IconMime::Png));
    }
}
