//! `data:` URIs (RFC 2397): `data:[<mediatype>][;base64],<data>`.

use base64::Engine as _;

use super::IconError;

/// A decoded `data:` URI.
#[derive(Debug)]
pub(crate) struct DataUri {
    /// The media type without parameters, lower-cased; `None` when absent.
    pub(crate) media_type: Option<String>,
    /// The decoded bytes.
    pub(crate) bytes: Vec<u8>,
}

fn invalid(reason: impl Into<String>) -> IconError {
    IconError::InvalidDataUri { reason: reason.into() }
}

/// Decodes `uri` (which starts with `data:`, any case), refusing, before decoding, data that
/// would decode to more than `max_bytes`.
pub(crate) fn decode(uri: &str, max_bytes: usize) -> Result<DataUri, IconError> {
    let rest =
        uri.get(5..).filter(|_| uri[..5].eq_ignore_ascii_case("data:")).ok_or_else(|| invalid("not a data: URI"))?;
    let (header, payload) =
        rest.split_once(',').ok_or_else(|| invalid("no comma between the media type and the data"))?;
    let mut params = header.split(';');
    let media = params.next().unwrap_or("").trim().to_ascii_lowercase();
    let base64 = params.any(|p| p.trim().eq_ignore_ascii_case("base64"));
    let media_type = (!media.is_empty()).then_some(media);

    // No encoding takes more than 3 characters per byte (`%XX`; base64 takes 4 per 3): a
    // longer payload is refused before anything is allocated for it.
    if payload.len() > max_bytes.saturating_mul(3).saturating_add(16) {
        return Err(IconError::TooLarge { limit: max_bytes, declared: None });
    }
    let raw = percent_decode(payload)?;
    let bytes = if base64 {
        let cleaned: Vec<u8> = raw.into_iter().filter(|b| !b.is_ascii_whitespace()).collect();
        base64::engine::general_purpose::STANDARD
            .decode(&cleaned)
            .or_else(|_| base64::engine::general_purpose::STANDARD_NO_PAD.decode(&cleaned))
            .map_err(|e| invalid(format!("bad base64: {e}")))?
    } else {
        raw
    };
    if bytes.len() > max_bytes {
        return Err(IconError::TooLarge { limit: max_bytes, declared: Some(bytes.len() as u64) });
    }
    Ok(DataUri { media_type, bytes })
}

/// Decodes `%XX` escapes; any other byte is kept as is.
fn percent_decode(s: &str) -> Result<Vec<u8>, IconError> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = b.get(i + 1..i + 3).and_then(|h| std::str::from_utf8(h).ok());
            let v = hex.and_then(|h| u8::from_str_radix(h, 16).ok()).ok_or_else(|| invalid("bad percent escape"))?;
            out.push(v);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_and_percent() {
        let d = decode("data:image/PNG;base64,aGVs bG8=", 100).unwrap();
        assert_eq!(d.media_type.as_deref(), Some("image/png"));
        assert_eq!(d.bytes, b"hello");
        let d = decode("data:,%89PNG%0D%0A", 100).unwrap();
        assert_eq!(d.media_type, None);
        assert_eq!(d.bytes, b"\x89PNG\r\n");
        assert!(matches!(decode("data:image/png;base64", 100), Err(IconError::InvalidDataUri { .. })));
        assert!(matches!(decode("data:,%zz", 100), Err(IconError::InvalidDataUri { .. })));
        assert!(matches!(decode("data:;base64,!!!!", 100), Err(IconError::InvalidDataUri { .. })));
        let big = format!("data:;base64,{}", "A".repeat(4000));
        assert!(matches!(decode(&big, 100), Err(IconError::TooLarge { declared: None, .. })));
        let over = format!("data:;base64,{}", "A".repeat(200));
        assert!(matches!(decode(&over, 100), Err(IconError::TooLarge { declared: Some(150), .. })));
        assert!(matches!(decode(&format!("data:,{}", "a".repeat(101)), 100), Err(IconError::TooLarge { .. })));
    }
}
