//! `mcp inspect [TARGET]`: a web inspector for any MCP server the CLI can reach, served on the
//! loopback interface only.
//!
//! Two listeners, two sites: the page at `http://127.0.0.1:PORT/` and the MCP Apps sandbox at
//! `http://[::1]:PORT2/sandbox` (another IP literal, so another site: a view can reach nothing
//! of the page, not even its cookies). Where IPv6 loopback cannot be bound the sandbox is at
//! `http://127.0.0.1:PORT2/sandbox` (another origin but the same site; a warning says so; each
//! asks for an origin-keyed agent cluster). Both are named by the IP literal bound, never by
//! `localhost`, which may resolve to an address another local process listens on, which would
//! then be framed as the sandbox. The page's URL carries a random token in its fragment (never
//! sent to a server, never in a `Referer`); the page sends it in a header with every API
//! request. The URL a browser is opened with carries a one-time code instead, which the page
//! exchanges for the token (so the token is never on a command line). Requests naming another
//! `Host`, or coming from another origin, are refused; no CORS header is ever sent. Static
//! assets are compiled into the binary.

mod api;
pub mod dev;
mod guard;
mod pages;
mod state;
mod views;

pub use pages::DEFAULT_PAGE_BACKLOG;

use crate::client::{Options, Resolved, TargetArgs};
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::response::Response;
use guard::{url_host, Guard, OneTimeCode, Refusal, LOOPBACK, LOOPBACK_V6};
use http::{HeaderValue, Method, StatusCode};
use mcp::protocol::apps::{Csp, ResourceUi};
use serde_json::{Map, Value};
use state::Inspector;
use std::sync::Arc;

const INDEX_HTML: &str = include_str!("../../assets/inspector/index.html");
const APP_JS: &str = include_str!("../../assets/inspector/app.js");
const APP_CSS: &str = include_str!("../../assets/inspector/app.css");
const FORMS_JS: &str = include_str!("../../assets/inspector/forms.js");
const APPS_JS: &str = include_str!("../../assets/inspector/apps.js");
const TABS_JS: &str = include_str!("../../assets/inspector/tabs.js");
const SANDBOX_HTML: &str = include_str!("../../assets/inspector/sandbox.html");

/// Largest API request body.
const MAX_BODY: usize = 4 * 1024 * 1024;

/// How `mcp inspect` runs.
#[derive(Debug, Clone)]
pub struct InspectOptions {
    /// Port of the page (0: any free one).
    pub port: u16,
    /// Port of the sandbox (0: any free one).
    pub sandbox_port: u16,
    /// Open the page in the default browser.
    pub open: bool,
    /// Bytes of events queued for a page that reads slowly, at most (the oldest are dropped
    /// past it, and the page is told how many).
    pub page_backlog: usize,
}

impl Default for InspectOptions {
    fn default() -> Self {
        Self { port: 0, sandbox_port: 0, open: false, page_backlog: DEFAULT_PAGE_BACKLOG }
    }
}

struct App {
    inspector: Arc<Inspector>,
    page: Guard,
    sandbox: Guard,
    /// What the page's CSP allows it to frame (the sandbox's origin, or as near as CSP can say).
    frame_src: String,
    /// The code in the URL a browser was opened with, exchanged once for the token.
    code: OneTimeCode,
    token: String,
}

/// Runs the inspector until Ctrl-C (or SIGTERM): prints the URL (with its token) on stderr.
pub async fn run(opts: Options, target: TargetArgs, how: InspectOptions) -> Result<(), String> {
    let target = Resolved::new(&opts, target)?;
    serve(opts, target, how, "mcp inspect", |_| {}).await
}

/// Serves the inspector for `target` until a stop signal; `started` gets the inspector once it
/// listens (`mcp dev` starts its watcher there).
pub(crate) async fn serve(
    opts: Options,
    target: Resolved,
    how: InspectOptions,
    label: &str,
    started: impl FnOnce(Arc<Inspector>),
) -> Result<(), String> {
    let page = tokio::net::TcpListener::bind((LOOPBACK, how.port)).await.map_err(|e| format!("bind: {e}"))?;
    let (sandbox, sandbox_host) = bind_sandbox(how.sandbox_port, label).await?;
    let (page_port, sandbox_port) = (port_of(&page)?, port_of(&sandbox)?);
    let token = guard::token();
    // The literal address bound: a name could lead the browser to an address we do not hold.
    let sandbox_origin = format!("http://{sandbox_host}:{sandbox_port}");
    let inspector = Inspector::new(opts, target, sandbox_origin, how.page_backlog);
    let app = Arc::new(App {
        inspector: inspector.clone(),
        page: Guard::new(LOOPBACK, page_port, &token),
        sandbox: Guard::new(&sandbox_host, sandbox_port, &token),
        frame_src: frame_source(&sandbox_host, sandbox_port),
        code: OneTimeCode::default(),
        token: token.clone(),
    });
    let origin = format!("http://{LOOPBACK}:{page_port}");
    eprintln!("{label}: {} at {origin}/#token={token}", inspector.target.describe());
    eprintln!("{label}: the URL carries this run's token; anyone with it can use the server as you");
    if how.open {
        // A browser's command line is readable by other local users: it gets a one-time code.
        let url = format!("{origin}/#code={}", app.code.issue());
        if let Err(e) = webbrowser::open(&url) {
            eprintln!("{label}: could not open a browser ({e}); open the URL above");
        }
    }
    // Connect now, so the first page load finds the server (a failure shows in the page).
    let first = inspector.clone();
    let who = label.to_owned();
    tokio::spawn(async move {
        if let Err(e) = first.client(false).await {
            eprintln!("{who}: {e}");
        }
    });
    started(inspector.clone());
    let page_router = axum::Router::new().fallback(serve_page).with_state(app.clone());
    let sandbox_router = axum::Router::new().fallback(serve_sandbox).with_state(app.clone());
    let stop = || async {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            match signal(SignalKind::terminate()) {
                Ok(mut term) => {
                    tokio::select! {
                        _ = tokio::signal::ctrl_c() => {}
                        _ = term.recv() => {}
                    }
                }
                Err(_) => {
                    let _ = tokio::signal::ctrl_c().await;
                }
            }
        }
        #[cfg(not(unix))]
        let _ = tokio::signal::ctrl_c().await;
    };
    let a = axum::serve(page, page_router).with_graceful_shutdown(stop());
    let b = axum::serve(sandbox, sandbox_router).with_graceful_shutdown(stop());
    let (a, b) = tokio::join!(a, b);
    inspector.disconnect().await;
    a.and(b).map_err(|e| e.to_string())
}

/// Binds the sandbox's listener: on `[::1]` (another site than the page's `127.0.0.1`) when
/// IPv6 loopback can be bound, else on `127.0.0.1` with a warning on stderr. A port taken on
/// `[::1]` is an error, not a reason to fall back: the sandbox's origin must be an address this
/// process holds. Returns the listener and its address as a URL host.
async fn bind_sandbox(port: u16, label: &str) -> Result<(tokio::net::TcpListener, String), String> {
    match tokio::net::TcpListener::bind((LOOPBACK_V6, port)).await {
        Ok(l) => Ok((l, url_host(LOOPBACK_V6.into()))),
        Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => {
            Err(format!("bind [::1]:{port} for the Apps sandbox: {e} (another process holds it)"))
        }
        Err(e) => {
            eprintln!(
                "{label}: warning: IPv6 loopback [::1] cannot be bound ({e}): the Apps sandbox is served on \
                 {LOOPBACK}, another origin than the page but the same site"
            );
            let l = tokio::net::TcpListener::bind((LOOPBACK, port)).await.map_err(|e| format!("bind: {e}"))?;
            Ok((l, LOOPBACK.to_owned()))
        }
    }
}

/// The page's `frame-src` for the sandbox at `host:port`. CSP cannot name an IPv6 literal
/// (browsers drop `http://[::1]:PORT` as an invalid source), so `[::1]` is allowed as
/// `http://*:PORT`: plain HTTP on the sandbox's port only. The page frames nothing but the
/// sandbox's origin it is told (its scripts are its own files only).
fn frame_source(host: &str, port: u16) -> String {
    if host.starts_with('[') {
        format!("http://*:{port}")
    } else {
        format!("http://{host}:{port}")
    }
}

fn port_of(l: &tokio::net::TcpListener) -> Result<u16, String> {
    l.local_addr().map(|a| a.port()).map_err(|e| e.to_string())
}

fn respond(status: u16, content_type: &'static str, body: impl Into<Body>) -> Response {
    let mut r = Response::new(body.into());
    *r.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    r.headers_mut().insert(http::header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    guard::hardening(r.headers_mut());
    r
}

/// A short plain-text answer (refusals, errors).
fn plain(status: u16, text: impl Into<Body>) -> Response {
    respond(status, "text/plain; charset=utf-8", text)
}

fn refused(Refusal(status, why): Refusal) -> Response {
    plain(status, why)
}

/// The page's own policy: scripts and styles only from the page's files, nothing inline, no
/// network but the API, frames only from the sandbox, and nobody may frame the page.
fn page_csp(frame_src: &str) -> String {
    format!(
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; \
         media-src 'self' data: blob:; connect-src 'self'; frame-src {frame_src}; base-uri 'none'; \
         form-action 'none'; frame-ancestors 'none'"
    )
}

async fn serve_page(State(app): State<Arc<App>>, req: Request) -> Response {
    let (parts, body) = req.into_parts();
    if let Err(r) = app.page.check_site(&parts.method, &parts.headers) {
        return refused(r);
    }
    let path = parts.uri.path();
    if parts.method == Method::GET {
        let (ctype, body) = match path {
            "/" | "/index.html" => ("text/html; charset=utf-8", INDEX_HTML),
            "/app.js" => ("text/javascript; charset=utf-8", APP_JS),
            "/app.css" => ("text/css; charset=utf-8", APP_CSS),
            "/forms.js" => ("text/javascript; charset=utf-8", FORMS_JS),
            "/apps.js" => ("text/javascript; charset=utf-8", APPS_JS),
            "/tabs.js" => ("text/javascript; charset=utf-8", TABS_JS),
            "/api/events" => return events(&app, &parts.headers),
            _ => return plain(404, "not found"),
        };
        let mut r = respond(200, ctype, body);
        if ctype.starts_with("text/html") {
            let csp = HeaderValue::from_str(&page_csp(&app.frame_src)).expect("ASCII policy");
            r.headers_mut().insert("content-security-policy", csp);
            r.headers_mut().insert("x-frame-options", HeaderValue::from_static("DENY"));
        }
        return r;
    }
    let Some(name) = path.strip_prefix("/api/").filter(|_| parts.method == Method::POST) else {
        return plain(405, "method not allowed");
    };
    // The one call without the token: the page trading the opened URL's code for it.
    if name != "exchange" {
        if let Err(r) = app.page.check_token(&parts.headers) {
            return refused(r);
        }
    }
    let json_body = parts.headers.get(http::header::CONTENT_TYPE).is_some_and(|v| v.as_bytes() == b"application/json");
    if !json_body {
        return plain(415, "send application/json");
    }
    let bytes = match axum::body::to_bytes(body, MAX_BODY).await {
        Ok(b) => b,
        Err(_) => return plain(413, "request too large"),
    };
    let body: Map<String, Value> = match serde_json::from_slice(&bytes) {
        Ok(b) => b,
        Err(e) => return plain(400, format!("not a JSON object: {e}")),
    };
    if name == "exchange" {
        let code = body.get("code").and_then(Value::as_str).unwrap_or_default();
        if !app.code.redeem(code) {
            return plain(403, "the one-time code is wrong, used or expired: open the URL `mcp inspect` printed");
        }
        return respond(200, "application/json", serde_json::json!({"token": app.token}).to_string());
    }
    let mut answer = api::call(&app.inspector, name, body).await;
    if name == "status" && answer.get("result").is_some() {
        answer["result"]["events"] = app.inspector.pages.stats();
    }
    respond(200, "application/json", answer.to_string())
}

/// `GET /api/events` (with the token header): server-sent events, the kept traffic first.
fn events(app: &Arc<App>, headers: &http::HeaderMap) -> Response {
    if let Err(r) = app.page.check_token(headers) {
        return refused(r);
    }
    let Some(sub) = app.inspector.pages.subscribe(app.inspector.traffic()) else {
        return plain(429, "too many pages follow this inspector");
    };
    let mut r = respond(200, "text/event-stream", Body::from_stream(sse(sub)));
    r.headers_mut().insert("x-accel-buffering", HeaderValue::from_static("no"));
    r
}

/// The page's queue (the kept traffic first) as SSE `data:` frames, a keep-alive comment every
/// 15 s so a quiet stream is not closed. A page too slow to keep up gets a `dropped` event
/// where events were dropped (see [`pages`]).
fn sse(sub: pages::Subscription) -> impl futures::Stream<Item = Result<Bytes, std::convert::Infallible>> + Send {
    futures::stream::unfold(sub, |sub| async move {
        let item = match sub.next(std::time::Duration::from_secs(15)).await {
            Some(e) => Bytes::from(format!("data: {e}\n\n")),
            None => Bytes::from_static(b": keep-alive\n\n"),
        };
        Some((Ok(item), sub))
    })
}

/// The sandbox: `GET /sandbox?host=ORIGIN&csp=JSON`, served with the view's CSP (the default
/// when none is given) and framable only by the page.
async fn serve_sandbox(State(app): State<Arc<App>>, req: Request) -> Response {
    let (parts, _) = req.into_parts();
    if let Err(r) = app.sandbox.check_site(&parts.method, &parts.headers) {
        return refused(r);
    }
    if parts.method != Method::GET || parts.uri.path() != "/sandbox" {
        return plain(404, "not found");
    }
    let query: Vec<(String, String)> =
        url::form_urlencoded::parse(parts.uri.query().unwrap_or_default().as_bytes()).into_owned().collect();
    let param = |k: &str| query.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    // Only our page may use the sandbox.
    if !param("host").is_some_and(|h| app.page.origins().iter().any(|o| o == h)) {
        return plain(403, "the sandbox serves the inspector page only");
    }
    let csp: Option<Csp> = param("csp").and_then(|c| serde_json::from_str(c).ok());
    let policy = ResourceUi { csp, ..ResourceUi::default() }.content_security_policy();
    let ancestors = app.page.origins().join(" ");
    let mut r = respond(200, "text/html; charset=utf-8", SANDBOX_HTML);
    let header = format!("{policy}; frame-ancestors {ancestors}");
    match HeaderValue::from_str(&header) {
        Ok(v) => {
            r.headers_mut().insert("content-security-policy", v);
        }
        Err(_) => return plain(400, "bad policy"),
    }
    r
}
