//! Fetching and validating icons (`Tool.icons`, `Implementation.icons`...) by the rules of the
//! specification's icon section (`basic/index.mdx`, "icons").
//!
//! Icon metadata and icon bytes come from the server and are untrusted. [`IconFetcher`]
//! applies every rule before handing bytes to a renderer:
//!
//! - **Schemes**: only `https:` and `data:` URIs. `javascript:`, `file:`, `ftp:`, `ws:`,
//!   `http:` and any other scheme are refused. The one exception is an explicit opt-in,
//!   [`IconFetcherBuilder::allow_loopback_http`], for tests and local development: `http:`
//!   to a loopback IP literal (`127.0.0.0/8`, `[::1]`) is then accepted.
//! - **Origin**: an `https:` icon must have the same origin (scheme, host, port) as the
//!   server's URL. A stdio server has no origin, so only `data:` icons are accepted for it. A
//!   relative `src` is resolved against the server's URL (it is same-origin by construction).
//! - **Redirects**: followed by the fetcher itself, at most
//!   [`max_redirects`](IconFetcherBuilder::max_redirects) (3 by default, 0 for none), and only
//!   to the same origin: a redirect that changes the scheme or leaves the origin is refused
//!   before any request is sent to its target.
//! - **No credentials**: a fresh HTTP client with no cookie store, sending only `Accept` and
//!   `User-Agent`; never the MCP client's `Authorization` or custom headers. A `src` with
//!   user information (`https://user:pass@host/`) is refused.
//! - **Limits**: a byte limit enforced while the body streams in (a larger `Content-Length`
//!   is refused before the body is read, and reading stops as soon as the limit is passed),
//!   width/height and animation frame limits read from the image header, and an overall
//!   timeout.
//! - **Type**: decided by the magic bytes against a strict allowlist: PNG (including APNG),
//!   JPEG and WebP. SVG is refused (no sanitizer is available, so scripts and external
//!   references cannot be ruled out); GIF and other formats are refused. A declared type (the
//!   icon's `mimeType`, the response's `Content-Type` or a `data:` URI's media type) that
//!   disagrees with the magic bytes is refused; a missing or generic one
//!   (`application/octet-stream`) is ignored.
//!
//! Proxies from the environment are used for `https:` as by the rest of the client; with the
//! loopback opt-in, no proxy is used.
//!
//! ```no_run
//! # async fn run() -> Result<(), mcp_client::icons::IconError> {
//! use mcp_client::icons::{Icon, IconFetcher};
//!
//! let fetcher = IconFetcher::builder().max_bytes(256 * 1024).max_dimensions(512, 512).build();
//! let icon = Icon::new("https://mcp.example.com/icons/search.png");
//! let fetched = fetcher.fetch(&icon, Some("https://mcp.example.com/mcp")).await?;
//! println!("{} {}x{}, {} bytes", fetched.mime, fetched.width, fetched.height, fetched.bytes.len());
//! # Ok(()) }
//! ```

mod data;
mod image;

use std::fmt;
use std::net::IpAddr;
use std::sync::OnceLock;
use std::time::Duration;

use bytes::Bytes;
use reqwest::Url;

pub use image::ImageInfo;
/// The icon metadata type (`src`, `mimeType`, `sizes`, `theme`), re-exported.
pub use mcp_protocol::types::Icon;

const AGENT: &str = concat!("mcp-client/", env!("CARGO_PKG_VERSION"), " (icon fetcher)");
const ACCEPT: &str = "image/png, image/jpeg, image/webp";

/// An allowlisted icon type, as detected from the magic bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum IconMime {
    /// `image/png` (APNG included).
    Png,
    /// `image/jpeg`.
    Jpeg,
    /// `image/webp`.
    Webp,
}

impl IconMime {
    /// The MIME type: `image/png`, `image/jpeg` or `image/webp`.
    pub fn as_str(self) -> &'static str {
        match self {
            IconMime::Png => "image/png",
            IconMime::Jpeg => "image/jpeg",
            IconMime::Webp => "image/webp",
        }
    }

    /// The usual file extension, without the dot: `png`, `jpg` or `webp`.
    pub fn extension(self) -> &'static str {
        match self {
            IconMime::Png => "png",
            IconMime::Jpeg => "jpg",
            IconMime::Webp => "webp",
        }
    }
}

impl fmt::Display for IconMime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a fetched icon's bytes came from.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum IconSource {
    /// An inline `data:` URI.
    Data,
    /// An `https:` (or opted-in loopback `http:`) URL: the one the bytes were read from, after
    /// any same-origin redirects.
    Url(String),
}

/// An icon that passed every check.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct FetchedIcon {
    /// The type, from the magic bytes.
    pub mime: IconMime,
    /// The image bytes, exactly as received (no more than the byte limit).
    pub bytes: Bytes,
    /// Width in pixels (the canvas width for animations).
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Animation frames (1 for a still image).
    pub frames: u32,
    /// Where the bytes came from.
    pub source: IconSource,
}

/// Why an icon was refused. Each reason's `Display` is a sentence fit for a user.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum IconError {
    /// `src` is not a URI.
    #[error("icon URI {uri:?} is not valid: {reason}")]
    InvalidUri {
        /// The `src`.
        uri: String,
        /// What is wrong.
        reason: String,
    },
    /// A scheme other than `https:` and `data:`.
    #[error("icon URI scheme `{scheme}:` is refused: only https: and data: icons are fetched")]
    UnsafeScheme {
        /// The scheme, lower-case.
        scheme: String,
    },
    /// A plain `http:` URL (without the loopback opt-in, or to a non-loopback host).
    #[error("icon URL {url} is plain http: only https: and data: icons are fetched")]
    InsecureHttp {
        /// The URL.
        url: String,
    },
    /// The URL carries a user name or password.
    #[error("icon URL carries credentials (user information); icons are fetched without credentials")]
    CredentialsInUri,
    /// A URL icon for a server without an origin (a stdio server), or an unusable server URL.
    #[error("icon URL {url} cannot be checked against the server's origin: {reason}")]
    NoServerOrigin {
        /// The icon URL.
        url: String,
        /// Why there is no origin to compare with.
        reason: String,
    },
    /// The icon's origin is not the server's.
    #[error("icon URL {url} is not on the server's origin {server_origin}")]
    CrossOrigin {
        /// The icon URL.
        url: String,
        /// The server's origin.
        server_origin: String,
    },
    /// A redirect to another scheme.
    #[error("icon redirect from {from}: to {to}: refused: a redirect may not change the scheme")]
    SchemeChange {
        /// The scheme redirected from.
        from: String,
        /// The scheme redirected to.
        to: String,
    },
    /// A redirect to another origin.
    #[error("icon redirect to {location} refused: it leaves the server's origin {origin}")]
    CrossOriginRedirect {
        /// The redirect target.
        location: String,
        /// The origin it should have stayed on.
        origin: String,
    },
    /// More redirects than allowed.
    #[error("icon fetch refused after {max} redirects (the limit)")]
    TooManyRedirects {
        /// The limit.
        max: u32,
    },
    /// A redirect without a usable `Location`.
    #[error("icon redirect is invalid: {reason}")]
    InvalidRedirect {
        /// What is wrong.
        reason: String,
    },
    /// A non-success HTTP status.
    #[error("icon server answered HTTP {status}")]
    HttpStatus {
        /// The status code.
        status: u16,
    },
    /// The connection or the request failed.
    #[error("icon fetch failed: {reason}")]
    Network {
        /// What failed.
        reason: String,
    },
    /// The fetch took longer than the timeout.
    #[error("icon fetch timed out after {}s", .after.as_secs_f32())]
    Timeout {
        /// The timeout.
        after: Duration,
    },
    /// More bytes than the limit.
    #[error("icon is larger than the limit of {limit} bytes{}", declared.map(|d| format!(" ({d} bytes)")).unwrap_or_default())]
    TooLarge {
        /// The limit.
        limit: usize,
        /// The size, when known (`Content-Length`, decoded `data:` size).
        declared: Option<u64>,
    },
    /// No bytes.
    #[error("icon is empty")]
    Empty,
    /// A malformed `data:` URI.
    #[error("icon data: URI is invalid: {reason}")]
    InvalidDataUri {
        /// What is wrong.
        reason: String,
    },
    /// The content is SVG (or XML that may be).
    #[error("SVG refused: scripts and external references cannot be ruled out")]
    SvgRefused,
    /// A recognized image type outside the allowlist.
    #[error("{detected} icons are refused: only PNG, JPEG and WebP are allowed")]
    TypeNotAllowed {
        /// The detected type (`GIF`, `BMP`, ...).
        detected: String,
    },
    /// The magic bytes match no known image type.
    #[error("icon content is not a PNG, JPEG or WebP image (unrecognized magic bytes)")]
    UnknownType,
    /// A declared type disagrees with the magic bytes.
    #[error("icon {declared_by} says {declared:?} but the content is {detected}")]
    MimeMismatch {
        /// Who declared it: `mimeType`, `Content-Type` or `data: media type`.
        declared_by: &'static str,
        /// The declared type.
        declared: String,
        /// The type detected from the magic bytes.
        detected: IconMime,
    },
    /// The image header cannot be parsed.
    #[error("icon is a malformed {mime} image: {reason}")]
    Malformed {
        /// The type from the magic bytes.
        mime: IconMime,
        /// What is wrong.
        reason: String,
    },
    /// Width or height over the limit.
    #[error("icon is {width}x{height} pixels, over the limit of {max_width}x{max_height}")]
    TooManyPixels {
        /// Width.
        width: u32,
        /// Height.
        height: u32,
        /// The width limit.
        max_width: u32,
        /// The height limit.
        max_height: u32,
    },
    /// More animation frames than the limit.
    #[error("icon has {frames} animation frames, over the limit of {max}")]
    TooManyFrames {
        /// Frames in the image.
        frames: u32,
        /// The limit.
        max: u32,
    },
}

/// Builds an [`IconFetcher`]; see the [module documentation](self) for the rules.
#[derive(Debug, Clone)]
pub struct IconFetcherBuilder {
    max_bytes: usize,
    max_width: u32,
    max_height: u32,
    max_frames: u32,
    timeout: Duration,
    max_redirects: u32,
    loopback_http: bool,
    roots: Vec<Vec<u8>>,
}

impl Default for IconFetcherBuilder {
    fn default() -> Self {
        Self {
            max_bytes: 1024 * 1024,
            max_width: 4096,
            max_height: 4096,
            max_frames: 256,
            timeout: Duration::from_secs(10),
            max_redirects: 3,
            loopback_http: false,
            roots: Vec::new(),
        }
    }
}

impl IconFetcherBuilder {
    /// The most bytes an icon may have (default 1 MiB), counted while the body streams in.
    pub fn max_bytes(mut self, n: usize) -> Self {
        self.max_bytes = n;
        self
    }

    /// The largest width and height in pixels (default 4096 x 4096).
    pub fn max_dimensions(mut self, width: u32, height: u32) -> Self {
        self.max_width = width;
        self.max_height = height;
        self
    }

    /// The most animation frames (APNG, animated WebP); default 256.
    pub fn max_frames(mut self, n: u32) -> Self {
        self.max_frames = n;
        self
    }

    /// The time a whole fetch (connection, redirects, body) may take; default 10 s.
    pub fn timeout(mut self, t: Duration) -> Self {
        self.timeout = t;
        self
    }

    /// Same-origin redirects followed (default 3; 0 refuses every redirect).
    pub fn max_redirects(mut self, n: u32) -> Self {
        self.max_redirects = n;
        self
    }

    /// Accepts plain `http:` icons on a loopback IP literal (`127.0.0.0/8`, `[::1]`), still
    /// same-origin with the server. Off by default; for tests and local development only:
    /// the specification allows only `https:` and `data:`.
    pub fn allow_loopback_http(mut self, allow: bool) -> Self {
        self.loopback_http = allow;
        self
    }

    /// Trusts one more root certificate (PEM) for `https:`, besides the built-in roots: for a
    /// private CA or a test certificate.
    pub fn add_root_certificate_pem(mut self, pem: &[u8]) -> Self {
        self.roots.push(pem.to_vec());
        self
    }

    /// The fetcher. The HTTP client is built on the first URL fetch.
    pub fn build(self) -> IconFetcher {
        IconFetcher { cfg: self, client: OnceLock::new() }
    }
}

/// Fetches and validates icons; cheap to share (`&self` methods), one HTTP client reused.
#[derive(Debug)]
pub struct IconFetcher {
    cfg: IconFetcherBuilder,
    client: OnceLock<Result<reqwest::Client, String>>,
}

impl Default for IconFetcher {
    fn default() -> Self {
        Self::builder().build()
    }
}

impl IconFetcher {
    /// A builder with the default limits.
    pub fn builder() -> IconFetcherBuilder {
        IconFetcherBuilder::default()
    }

    /// Fetches and validates `icon` for a server at `server_url` (`None` for a stdio server:
    /// only `data:` icons are accepted then).
    pub async fn fetch(&self, icon: &Icon, server_url: Option<&str>) -> Result<FetchedIcon, IconError> {
        let src = icon.src.trim();
        if src.len() >= 5 && src[..5].eq_ignore_ascii_case("data:") {
            let d = data::decode(src, self.cfg.max_bytes)?;
            let declared = [("mimeType", icon.mime_type.as_deref()), ("data: media type", d.media_type.as_deref())];
            let info = self.validate(&d.bytes, &declared)?;
            return Ok(fetched(info, d.bytes.into(), IconSource::Data));
        }
        let server = server_url.map(|s| Url::parse(s).map_err(|e| (s, e.to_string())));
        let url = match (Url::parse(src), &server) {
            (Ok(u), _) => u,
            (Err(url::ParseError::RelativeUrlWithoutBase), Some(Ok(base))) => {
                base.join(src).map_err(|e| IconError::InvalidUri { uri: src.into(), reason: e.to_string() })?
            }
            (Err(e), _) => return Err(IconError::InvalidUri { uri: src.into(), reason: e.to_string() }),
        };
        self.check_url(&url)?;
        let server = match server {
            None => {
                let reason = "the server has no URL (stdio); only data: icons are accepted".to_string();
                return Err(IconError::NoServerOrigin { url: url.to_string(), reason });
            }
            Some(Err((s, e))) => {
                return Err(IconError::NoServerOrigin {
                    url: url.to_string(),
                    reason: format!("server URL {s:?}: {e}"),
                })
            }
            Some(Ok(s)) => s,
        };
        if !same_origin(&url, &server) {
            return Err(IconError::CrossOrigin {
                url: url.to_string(),
                server_origin: server.origin().ascii_serialization(),
            });
        }
        let after = self.cfg.timeout;
        let (bytes, final_url, content_type) =
            tokio::time::timeout(after, self.get(url)).await.map_err(|_| IconError::Timeout { after })??;
        let declared = [("mimeType", icon.mime_type.as_deref()), ("Content-Type", content_type.as_deref())];
        let info = self.validate(&bytes, &declared)?;
        Ok(fetched(info, bytes.into(), IconSource::Url(final_url.to_string())))
    }

    /// Validates bytes obtained elsewhere: magic bytes against the allowlist, `declared_mime`
    /// (if any) against them, and the dimension and frame limits (not the byte limit).
    pub fn validate_bytes(&self, bytes: &[u8], declared_mime: Option<&str>) -> Result<ImageInfo, IconError> {
        self.validate(bytes, &[("mimeType", declared_mime)])
    }

    fn validate(&self, bytes: &[u8], declared: &[(&'static str, Option<&str>)]) -> Result<ImageInfo, IconError> {
        if bytes.is_empty() {
            return Err(IconError::Empty);
        }
        let declared: Vec<(&'static str, &str, String)> =
            declared.iter().filter_map(|&(by, d)| Some((by, d?, normalize_mime(d?)?))).collect();
        let mime = match image::sniff(bytes) {
            image::Sniffed::Allowed(m) => m,
            image::Sniffed::Svg => return Err(IconError::SvgRefused),
            image::Sniffed::Other(name) => return Err(IconError::TypeNotAllowed { detected: name.into() }),
            image::Sniffed::Unknown if declared.iter().any(|(_, _, m)| m == "image/svg+xml") => {
                return Err(IconError::SvgRefused)
            }
            image::Sniffed::Unknown => return Err(IconError::UnknownType),
        };
        if let Some((by, raw, _)) = declared.iter().find(|(_, _, m)| m != mime.as_str()) {
            return Err(IconError::MimeMismatch { declared_by: by, declared: raw.trim().to_string(), detected: mime });
        }
        let info = image::inspect(mime, bytes)?;
        let c = &self.cfg;
        if info.width > c.max_width || info.height > c.max_height {
            return Err(IconError::TooManyPixels {
                width: info.width,
                height: info.height,
                max_width: c.max_width,
                max_height: c.max_height,
            });
        }
        if info.frames > c.max_frames {
            return Err(IconError::TooManyFrames { frames: info.frames, max: c.max_frames });
        }
        Ok(info)
    }

    /// The scheme and user-information rules for a URL to be requested.
    fn check_url(&self, url: &Url) -> Result<(), IconError> {
        match url.scheme() {
            "https" => {}
            "http" if self.cfg.loopback_http && is_loopback(url) => {}
            "http" => return Err(IconError::InsecureHttp { url: url.to_string() }),
            other => return Err(IconError::UnsafeScheme { scheme: other.to_string() }),
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(IconError::CredentialsInUri);
        }
        Ok(())
    }

    fn net(&self, e: &reqwest::Error) -> IconError {
        if e.is_timeout() {
            IconError::Timeout { after: self.cfg.timeout }
        } else {
            IconError::Network { reason: error_chain(e) }
        }
    }

    fn client(&self) -> Result<&reqwest::Client, IconError> {
        let built = self.client.get_or_init(|| {
            // No cookie store, no default headers, redirects handled in `get`.
            let mut b = reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .user_agent(AGENT)
                .connect_timeout(self.cfg.timeout)
                .timeout(self.cfg.timeout);
            if self.cfg.loopback_http {
                b = b.no_proxy();
            }
            for pem in &self.cfg.roots {
                let cert = reqwest::Certificate::from_pem(pem).map_err(|e| format!("bad root certificate: {e}"))?;
                b = b.add_root_certificate(cert);
            }
            b.build().map_err(|e| error_chain(&e))
        });
        built.as_ref().map_err(|reason| IconError::Network { reason: reason.clone() })
    }

    /// GETs `url`, following same-origin redirects: the body (within the byte limit), the URL
    /// it came from and its `Content-Type`.
    async fn get(&self, mut url: Url) -> Result<(Vec<u8>, Url, Option<String>), IconError> {
        let client = self.client()?;
        let limit = self.cfg.max_bytes;
        let mut hops = 0;
        loop {
            let mut resp = client
                .get(url.clone())
                .header(reqwest::header::ACCEPT, ACCEPT)
                .send()
                .await
                .map_err(|e| self.net(&e))?;
            let status = resp.status();
            if status.is_redirection() && status != reqwest::StatusCode::NOT_MODIFIED {
                if hops >= self.cfg.max_redirects {
                    return Err(IconError::TooManyRedirects { max: self.cfg.max_redirects });
                }
                hops += 1;
                let loc =
                    resp.headers().get(reqwest::header::LOCATION).and_then(|v| v.to_str().ok()).ok_or_else(|| {
                        IconError::InvalidRedirect { reason: format!("HTTP {status} without a Location") }
                    })?;
                let next = url
                    .join(loc)
                    .map_err(|e| IconError::InvalidRedirect { reason: format!("Location {loc:?}: {e}") })?;
                if next.scheme() != url.scheme() {
                    return Err(IconError::SchemeChange { from: url.scheme().into(), to: next.scheme().into() });
                }
                if !same_origin(&next, &url) {
                    let origin = url.origin().ascii_serialization();
                    return Err(IconError::CrossOriginRedirect { location: next.to_string(), origin });
                }
                self.check_url(&next)?;
                url = next;
                continue;
            }
            if !status.is_success() {
                return Err(IconError::HttpStatus { status: status.as_u16() });
            }
            if let Some(len) = resp.content_length().filter(|&n| n > limit as u64) {
                return Err(IconError::TooLarge { limit, declared: Some(len) });
            }
            let content_type = resp
                .headers()
                .get(reqwest::header::CONTENT_TYPE)
                .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
            let capacity = resp.content_length().map_or(8 * 1024, |n| n as usize).min(limit);
            let mut body = Vec::with_capacity(capacity);
            while let Some(chunk) = resp.chunk().await.map_err(|e| self.net(&e))? {
                if chunk.len() > limit - body.len() {
                    // Dropping the response closes the connection: nothing more is read.
                    return Err(IconError::TooLarge { limit, declared: resp.content_length() });
                }
                body.extend_from_slice(&chunk);
            }
            return Ok((body, url, content_type));
        }
    }
}

fn fetched(info: ImageInfo, bytes: Bytes, source: IconSource) -> FetchedIcon {
    FetchedIcon { mime: info.mime, bytes, width: info.width, height: info.height, frames: info.frames, source }
}

/// A declared MIME type, lower-cased without parameters, with `image/jpg` and `image/pjpeg`
/// as `image/jpeg`; `None` for a missing or generic one.
fn normalize_mime(declared: &str) -> Option<String> {
    let m = declared.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    match m.as_str() {
        "" | "application/octet-stream" | "binary/octet-stream" | "application/unknown" | "*/*" => None,
        "image/jpg" | "image/pjpeg" => Some("image/jpeg".into()),
        _ => Some(m),
    }
}

fn same_origin(a: &Url, b: &Url) -> bool {
    a.scheme() == b.scheme() && a.host() == b.host() && a.port_or_known_default() == b.port_or_known_default()
}

fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Ipv4(ip)) => IpAddr::V4(ip).is_loopback(),
        Some(url::Host::Ipv6(ip)) => IpAddr::V6(ip).is_loopback(),
        _ => false,
    }
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut src = e.source();
    let mut depth = 0;
    while let (Some(inner), true) = (src, depth < 8) {
        let text = inner.to_string();
        if !s.contains(&text) {
            s.push_str(": ");
            s.push_str(&text);
        }
        src = inner.source();
        depth += 1;
    }
    s
}

/// The header parsers and the `data:` decoder, for the fuzz target.
pub(crate) mod fuzz {
    use super::*;

    /// Sniffs and inspects `bytes`: the info when allowlisted and well-formed.
    pub(crate) fn image(bytes: &[u8]) -> Result<ImageInfo, IconError> {
        IconFetcher::default().validate(bytes, &[])
    }

    /// Decodes a `data:` URI (limit 64 KiB) and validates it.
    pub(crate) fn data_uri(uri: &str) -> Result<ImageInfo, IconError> {
        let d = data::decode(uri, 64 * 1024)?;
        assert!(d.bytes.len() <= 64 * 1024);
        IconFetcher::default().validate(&d.bytes, &[("data: media type", d.media_type.as_deref())])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mime_normalization() {
        assert_eq!(normalize_mime("Image/JPG; q=1").as_deref(), Some("image/jpeg"));
        assert_eq!(normalize_mime("application/octet-stream"), None);
        assert_eq!(normalize_mime(" image/png ").as_deref(), Some("image/png"));
    }

    #[test]
    fn origins_and_schemes() {
        let f = IconFetcher::builder().allow_loopback_http(true).build();
        let u = |s: &str| Url::parse(s).unwrap();
        assert!(same_origin(&u("https://a.example/x"), &u("https://A.example:443/y")));
        assert!(!same_origin(&u("https://a.example/x"), &u("https://a.example:8443/x")));
        assert!(!same_origin(&u("https://a.example/x"), &u("http://a.example/x")));
        assert!(f.check_url(&u("http://127.0.0.1:9/x")).is_ok());
        assert!(matches!(f.check_url(&u("http://localhost:9/x")), Err(IconError::InsecureHttp { .. })));
        assert!(matches!(f.check_url(&u("ftp://a.example/x")), Err(IconError::UnsafeScheme { .. })));
        assert_eq!(f.check_url(&u("https://u:p@a.example/x")), Err(IconError::CredentialsInUri));
        let strict = IconFetcher::default();
        assert!(matches!(strict.check_url(&u("http://127.0.0.1:9/x")), Err(IconError::InsecureHttp { .. })));
    }

    #[test]
    fn svg_declared_over_unknown_bytes() {
        let f = IconFetcher::default();
        assert_eq!(f.validate_bytes(b"garbage", Some("image/svg+xml")), Err(IconError::SvgRefused));
        assert_eq!(f.validate_bytes(b"garbage", None), Err(IconError::UnknownType));
        assert_eq!(
            IconError::SvgRefused.to_string(),
            "SVG refused: scripts and external references cannot be ruled out"
        );
    }
}
