//! One log line per handler panic, and a count of them.
//!
//! Rust's default panic hook prints a multi-line report for every panic, with a full backtrace
//! under `RUST_BACKTRACE=1` (about 23 KB each): a client that can make a handler panic can fill
//! the logs and slow every other request. [`install_hook`] replaces it, for panics on the
//! request path only (while the framework polls a request's future: the dispatch, the handler,
//! a task's rounds), by a single line:
//!
//! ```text
//! mcp: handler panicked: method=tools/call tool="boom" id=7 message="index out of bounds" at src/tools.rs:12:5 ref=3f9a1c07
//! ```
//!
//! The client gets `-32603` with `Internal error: the handler failed (ref 3f9a1c07)`: the same reference, and none
//! of the panic message (unless the server opts in with
//! [`crate::ServerBuilder::expose_internal_errors`]).
//!
//! The name is `tool=`, `prompt=` or `resource=` (the URI) when the method has one; names and
//! the message are quoted and escaped, and cut to a bounded length, so one panic is one line of
//! bounded size whatever the request carried. `MCP_PANIC_BACKTRACE=1` (read when the hook is
//! installed) adds the backtrace after the line. Panics anywhere else go to the hook that was
//! installed before. The panicking request still gets its `-32603` error and the server keeps
//! serving.
//!
//! The library never installs the hook itself (the panic hook is process-wide): call
//! [`install_hook`] early in `main`.

use parking_lot::Mutex;
use serde_json::Value;
use std::cell::Cell;
use std::future::Future;
use std::io::Write;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::task::{Context as TaskContext, Poll};

/// The longest message kept in a panic line (in characters).
const MAX_MESSAGE: usize = 512;
/// The longest tool, prompt or resource name kept in a panic line (in characters).
const MAX_NAME: usize = 256;

static PANICS: AtomicU64 = AtomicU64::new(0);
static INSTALLED: AtomicBool = AtomicBool::new(false);

/// What the hook says about the request a panic happened in.
#[derive(Debug, Clone)]
pub(crate) struct RequestInfo {
    method: std::borrow::Cow<'static, str>,
    /// `tool`, `prompt` or `resource`, and the name or URI.
    name: Option<(&'static str, String)>,
    id: Value,
}

/// The request a future being polled serves, as the hook will describe it. Most requests are
/// described only if they panic: their future starts `Pending`, and [`describe_with`] puts the
/// request's context in once it has one, which the hook reads (nothing is copied per request).
#[derive(Debug)]
pub(crate) enum Describe {
    /// The request has no context yet (it is being prepared).
    Pending,
    /// Described up front by its method and id alone, until it has a context: a request that
    /// runs operation layers first (a panic in a layer's own code names no tool).
    Early { method: std::borrow::Cow<'static, str>, id: Value },
    /// Described up front, for the whole request.
    Info(Box<RequestInfo>),
    /// Described from its context when it panics.
    Context(crate::context::Context),
}

impl Describe {
    /// A request described by its method and id until it has a context (no allocation for a
    /// known method and a numeric id).
    pub(crate) fn early(method: &str, id: &Value) -> Self {
        Self::Early { method: method_name(method, mcp_protocol::Method::parse(method)), id: id.clone() }
    }

    /// A request described up front.
    pub(crate) fn info(method: &str, id: &Value, params: &serde_json::Map<String, Value>) -> Self {
        Self::Info(RequestInfo::new(method, id, params))
    }

    /// What the hook writes for this request.
    fn request_info(&self) -> std::borrow::Cow<'_, RequestInfo> {
        use std::borrow::Cow;
        match self {
            Self::Pending => {
                Cow::Owned(RequestInfo { method: Cow::Borrowed("(being prepared)"), name: None, id: Value::Null })
            }
            Self::Early { method, id } => {
                Cow::Owned(RequestInfo { method: method.clone(), name: None, id: id.clone() })
            }
            Self::Info(info) => Cow::Borrowed(info),
            Self::Context(ctx) => Cow::Owned(*RequestInfo::new(ctx.method(), ctx.request_id(), ctx.params())),
        }
    }
}

/// Hands `ctx` to the scope being polled on this thread, if that scope's request is not
/// described yet: what the hook reads from then on, for the rest of the request.
pub(crate) fn describe_with(ctx: &crate::context::Context) {
    CURRENT.with(|c| {
        let current = c.take();
        c.set(match current {
            Some(Describe::Pending | Describe::Early { .. }) => Some(Describe::Context(ctx.clone())),
            other => other,
        });
    });
}

impl RequestInfo {
    /// The description of a request: its method, id and (from `params`) what it names.
    pub(crate) fn new(method: &str, id: &Value, params: &serde_json::Map<String, Value>) -> Box<Self> {
        use mcp_protocol::Method;
        // The method is read once, and a known one costs no allocation.
        let known = Method::parse(method);
        let field = match known {
            Some(Method::ToolsCall) => Some(("tool", "name")),
            Some(Method::PromptsGet) => Some(("prompt", "name")),
            Some(Method::ResourcesRead) => Some(("resource", "uri")),
            _ => None,
        };
        let name = field.and_then(|(kind, key)| Some((kind, cut(params.get(key)?.as_str()?, MAX_NAME).to_owned())));
        Box::new(Self { method: method_name(method, known), name, id: id.clone() })
    }
}

/// How a description names `method` (`known`, when it is one): a known method by its static
/// name, no allocation; another cut to [`MAX_NAME`] characters.
fn method_name(method: &str, known: Option<mcp_protocol::Method>) -> std::borrow::Cow<'static, str> {
    match known {
        Some(m) => std::borrow::Cow::Borrowed(m.as_str()),
        None => std::borrow::Cow::Owned(cut(method, MAX_NAME).to_owned()),
    }
}

/// `s` cut to at most `max` characters.
fn cut(s: &str, max: usize) -> &str {
    // At most `max` bytes is at most `max` characters: no need to count them.
    if s.len() <= max {
        return s;
    }
    s.char_indices().nth(max).map_or(s, |(i, _)| &s[..i])
}

thread_local! {
    /// The request whose future this thread is polling right now (moved in and out per poll).
    static CURRENT: Cell<Option<Describe>> = const { Cell::new(None) };
    /// The reference of the last panic line this thread wrote, for the error the client gets
    /// (the panic is caught on the thread it happened on).
    static LAST_REFERENCE: Cell<Option<String>> = const { Cell::new(None) };
}

/// Takes the reference (`ref=...`) of the panic line the hook just wrote on this thread, if any.
pub(crate) fn take_reference() -> Option<String> {
    LAST_REFERENCE.with(Cell::take)
}

/// Puts a request's description in [`CURRENT`] for one poll and takes it back after (also when
/// the poll unwinds), restoring what was there before (scopes nest).
pub(crate) struct Enter<'a> {
    slot: &'a mut Option<Describe>,
    prev: Option<Describe>,
}

impl<'a> Enter<'a> {
    pub(crate) fn new(slot: &'a mut Option<Describe>) -> Self {
        let prev = CURRENT.with(|c| c.replace(slot.take()));
        Self { slot, prev }
    }
}

impl Drop for Enter<'_> {
    fn drop(&mut self) {
        let prev = self.prev.take();
        *self.slot = CURRENT.with(|c| c.replace(prev));
    }
}

pin_project_lite::pin_project! {
    /// A request's future, polled with its description in the thread-local the hook reads.
    pub(crate) struct Scoped<F> {
        info: Option<Describe>,
        #[pin]
        fut: F,
    }
}

impl<F> std::fmt::Debug for Scoped<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scoped").field("info", &self.info).finish()
    }
}

/// Polls `fut` as the request `info` describes.
pub(crate) fn scoped<F: Future>(info: Describe, fut: F) -> Scoped<F> {
    Scoped { info: Some(info), fut }
}

impl<F: Future> Future for Scoped<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<F::Output> {
        let this = self.project();
        let _enter = Enter::new(this.info);
        this.fut.poll(cx)
    }
}

/// How many panics on the request path the installed hook has seen (0 without the hook; see
/// [`crate::Server::panic_count`] for the panics one server caught, hook or not).
pub fn count() -> u64 {
    PANICS.load(Ordering::Relaxed)
}

/// Whether [`install_hook`] (or [`install_hook_with_writer`]) was called.
pub fn is_installed() -> bool {
    INSTALLED.load(Ordering::Relaxed)
}

/// Installs the one-line panic hook, writing to stderr (see the module docs). Call it once,
/// early in `main`; panics outside the request path go to the hook installed before.
pub fn install_hook() {
    install_hook_with_writer(std::io::stderr());
}

/// Like [`install_hook`], writing the lines (and backtraces, when asked for) to `writer`.
pub fn install_hook_with_writer(writer: impl Write + Send + 'static) {
    let backtrace = std::env::var("MCP_PANIC_BACKTRACE").is_ok_and(|v| v == "1" || v == "full");
    let writer = Mutex::new(Box::new(writer) as Box<dyn Write + Send>);
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let Some(line) = CURRENT.with(|c| {
            let current = c.take();
            let line = current.as_ref().map(|r| panic_line(&r.request_info(), info));
            c.set(current);
            line
        }) else {
            return previous(info);
        };
        PANICS.fetch_add(1, Ordering::Relaxed);
        let reference = crate::error::correlation_id();
        let mut out = format!("{line} ref={reference}").into_bytes();
        LAST_REFERENCE.with(|r| r.set(Some(reference)));
        out.push(b'\n');
        if backtrace {
            out.extend_from_slice(std::backtrace::Backtrace::force_capture().to_string().as_bytes());
        }
        let mut w = writer.lock();
        // Nothing sensible to do when the log cannot be written.
        let _ = w.write_all(&out).and_then(|()| w.flush());
    }));
    INSTALLED.store(true, Ordering::Relaxed);
}

/// The line for a panic in request `r`.
fn panic_line(r: &RequestInfo, info: &std::panic::PanicHookInfo<'_>) -> String {
    use std::fmt::Write as _;
    let payload = info.payload();
    let message =
        payload.downcast_ref::<&str>().copied().or_else(|| payload.downcast_ref::<String>().map(String::as_str));
    let message = cut(message.unwrap_or("(no message)"), MAX_MESSAGE);
    let mut line = format!("mcp: handler panicked: method={}", r.method.escape_debug());
    if let Some((kind, name)) = &r.name {
        let _ = write!(line, " {kind}={name:?}");
    }
    let _ = write!(line, " id={} message={message:?}", r.id);
    if let Some(l) = info.location() {
        let _ = write!(line, " at {}:{}:{}", l.file().escape_debug(), l.line(), l.column());
    }
    line
}

/// What a caught handler panic says (its `&str` or `String` payload).
pub(crate) fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "handler panicked".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn scopes_nest_and_are_restored_after_a_poll() {
        let outer = RequestInfo::new("tools/call", &json!(1), json!({"name": "a"}).as_object().unwrap());
        let inner = RequestInfo::new("prompts/get", &json!("x"), json!({"name": "p"}).as_object().unwrap());
        let method = || {
            CURRENT.with(|c| {
                let cur = c.take();
                let m = cur.as_ref().map(|r| r.request_info().method.to_string());
                c.set(cur);
                m
            })
        };
        let fut = scoped(Describe::Info(outer), async move {
            assert_eq!(method().as_deref(), Some("tools/call"));
            scoped(Describe::Info(inner), async { assert_eq!(method().as_deref(), Some("prompts/get")) }).await;
            assert_eq!(method().as_deref(), Some("tools/call"));
        });
        futures::executor::block_on(fut);
        assert_eq!(method(), None, "nothing is left behind after the request");
    }

    #[test]
    fn a_pending_request_is_described_by_the_context_it_is_handed() {
        let described = || {
            CURRENT.with(|c| {
                let cur = c.take();
                let r = cur.as_ref().map(|d| d.request_info().into_owned());
                c.set(cur);
                r.map(|r| (r.method.to_string(), r.name.map(|(k, n)| format!("{k}={n}")), r.id))
            })
        };
        let ctx = crate::context::Context::for_test().method("tools/call").params(json!({"name": "echo"})).build();
        futures::executor::block_on(scoped(Describe::Pending, async {
            assert_eq!(described().map(|d| d.0), Some("(being prepared)".to_owned()));
            describe_with(&ctx);
            let (method, name, _) = described().expect("described");
            assert_eq!((method.as_str(), name.as_deref()), ("tools/call", Some("tool=echo")));
        }));
        // A request described up front keeps its description.
        let up_front = Describe::info("prompts/get", &json!(3), json!({"name": "p"}).as_object().unwrap());
        futures::executor::block_on(scoped(up_front, async {
            describe_with(&ctx);
            assert_eq!(described(), Some(("prompts/get".to_owned(), Some("prompt=p".to_owned()), json!(3))));
        }));
        // One described early (a layered request) is described by its context once it has one.
        futures::executor::block_on(scoped(Describe::early("tools/call", &json!(5)), async {
            assert_eq!(described(), Some(("tools/call".to_owned(), None, json!(5))));
            describe_with(&ctx);
            assert_eq!(described().and_then(|d| d.1), Some("tool=echo".to_owned()));
        }));
        // Outside any scope, handing a context over leaves nothing behind.
        describe_with(&ctx);
        assert_eq!(described(), None);
    }

    #[test]
    fn names_are_bounded_and_only_read_for_methods_that_have_one() {
        let long = "u".repeat(10_000);
        let r = RequestInfo::new("resources/read", &json!(1), json!({"uri": long}).as_object().unwrap());
        assert_eq!(r.name.as_ref().map(|(k, n)| (*k, n.len())), Some(("resource", MAX_NAME)));
        let r = RequestInfo::new("tools/list", &json!(1), json!({"name": "x"}).as_object().unwrap());
        assert!(r.name.is_none());
    }
}
