//! Upstream calls kept alive across MRTR rounds.
//!
//! A forwarded call runs in its own task on a leased session ([`Flight`]). When the upstream
//! asks something (a legacy server-to-client request, or a modern server's `input_required`
//! round, both of which reach the session's handlers), the downstream handler stops waiting:
//! the flight is parked in [`Flights`] under a fresh number, and the downstream client gets an
//! `input_required` result whose sealed `requestState` carries that number (sealing binds it to
//! the principal, the method and the request's parameters). The retry's `inputResponses` are
//! handed to the waiting upstream questions and the same flight is followed again.
//!
//! What a parked flight holds upstream depends on the era. A legacy upstream is blocked inside
//! the call, waiting for its server-to-client request's answer: the flight keeps its session,
//! which serves nobody else meanwhile. A modern (2026-07-28) upstream has answered its
//! `input_required` round and finished that request (the retry is a new upstream request):
//! its sessions are shared (the questions are routed by the asking task, not by the session),
//! so a parked flight holds no session of its own.
//!
//! Parked flights are bounded: in number (`max_parked`, then "unavailable", `-32603` / HTTP
//! 503), per principal (`max_per_principal`, the same error, checked before a new call starts
//! and again when it would park), and in time (`ttl`; a sweeper drops expired ones, which
//! cancels the upstream call and retires a legacy session). A retry naming a flight that is
//! not parked (expired, answered already, from before a restart) is `-32602` saying so.
//!
//! A flight's channels are bounded too: at most [`MAX_QUESTIONS`] upstream questions wait (more
//! are refused to the upstream), and at most [`MAX_NOTES`] progress and log notifications
//! (progress is coalesced to the latest; log messages past the bound are dropped and counted
//! in the log).

use super::pool::Lease;
use super::upstream::Question;
use mcp::server::mcp_protocol::{Cancellation, InputFailure, ProtocolError};
use mcp::server::{Context, HandlerError, InputRequired};
use mcp_client::{CallOptions, ClientError};
use parking_lot::Mutex;
use serde_json::{json, Map, Value};
use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot, Notify};
use tokio::time::Instant;

/// The key of the round state naming the parked flight.
const STATE_KEY: &str = "proxyCall";

/// Most upstream questions of one call waiting to be asked downstream (an upstream asks one at
/// a time in either era; past this they are refused to the upstream).
pub(crate) const MAX_QUESTIONS: usize = 16;

/// Most upstream notifications of one call waiting to be relayed (they pile up while the call
/// is parked): progress is coalesced to the latest, log messages past this are dropped.
pub(crate) const MAX_NOTES: usize = 64;

/// A call's upstream notifications on their way downstream (bounded, see [`MAX_NOTES`]).
#[derive(Debug, Default)]
pub(crate) struct Notes {
    state: Mutex<NoteQueue>,
    ready: Notify,
}

#[derive(Debug, Default)]
struct NoteQueue {
    queue: VecDeque<Note>,
    /// Log messages dropped at the bound, not yet reported.
    dropped: u64,
}

impl Notes {
    /// Queues `note`: a progress notification replaces one still queued (the latest progress
    /// is all that matters); past [`MAX_NOTES`] a log message is dropped (counted), and a
    /// progress notification takes the place of the oldest log message.
    pub(crate) fn push(&self, note: Note) {
        let mut s = self.state.lock();
        match note {
            Note::Progress(_) => {
                if let Some(queued) = s.queue.iter_mut().find(|n| matches!(n, Note::Progress(_))) {
                    *queued = note;
                } else {
                    if s.queue.len() >= MAX_NOTES {
                        if let Some(i) = s.queue.iter().position(|n| matches!(n, Note::Log(_))) {
                            s.queue.remove(i);
                            s.dropped += 1;
                        }
                    }
                    s.queue.push_back(note);
                }
            }
            Note::Log(_) if s.queue.len() >= MAX_NOTES => {
                s.dropped += 1;
                return;
            }
            Note::Log(_) => s.queue.push_back(note),
        }
        drop(s);
        self.ready.notify_one();
    }

    /// Everything queued now (reporting the log messages dropped since the last time).
    fn take(&self) -> VecDeque<Note> {
        let mut s = self.state.lock();
        if s.dropped > 0 {
            tracing::warn!(
                "{} upstream log message(s) of a proxied call dropped (more than {MAX_NOTES} waiting)",
                s.dropped
            );
            s.dropped = 0;
        }
        std::mem::take(&mut s.queue)
    }

    /// The next notifications (waits for at least one; cancel-safe).
    async fn next(&self) -> VecDeque<Note> {
        loop {
            let batch = self.take();
            if !batch.is_empty() {
                return batch;
            }
            self.ready.notified().await;
        }
    }
}

/// One upstream call in progress.
pub(crate) struct Flight {
    questions: mpsc::Receiver<Question>,
    /// The upstream's progress and log notifications, relayed to the round being served.
    notes: Arc<Notes>,
    done: oneshot::Receiver<Result<Value, ClientError>>,
    task: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for Flight {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Flight").finish_non_exhaustive()
    }
}

impl Drop for Flight {
    fn drop(&mut self) {
        // An abandoned call: the task (holding the lease) retires the session when aborted.
        self.task.abort();
    }
}

/// Retires the leased legacy session unless disarmed: a call dropped half-way leaves the
/// upstream session in an unknown state (it may still wait for an answer). A modern session is
/// shared and stateless between requests: a dropped call leaves nothing behind upstream (a
/// dropped request is cancelled like any other).
struct RetireGuard(Option<Lease>);

impl Drop for RetireGuard {
    fn drop(&mut self) {
        if let Some(lease) = &self.0 {
            if !lease.session().client().is_modern() {
                lease.retire();
            }
        }
    }
}

impl Flight {
    /// Runs `call` on the leased session in a task; its questions (and the progress and log
    /// notifications `relay` asks for) come back through the flight.
    pub(crate) fn start<F, Fut>(lease: Lease, relay: Relay, call: F) -> Self
    where
        F: FnOnce(mcp_client::Client, CallOptions) -> Fut + Send + 'static,
        Fut: Future<Output = Result<Value, ClientError>> + Send + 'static,
    {
        let (ask_tx, questions) = mpsc::channel(MAX_QUESTIONS);
        let notes = Arc::new(Notes::default());
        let (done_tx, done) = oneshot::channel();
        // A legacy session serves this call alone: its server-to-client requests are this
        // call's. A modern session's questions come from inside the call's own task.
        let exclusive = !lease.session().client().is_modern();
        if exclusive {
            lease.session().asker.route(Some(ask_tx.clone()));
        }
        let mut opts = CallOptions::default();
        let to = notes.clone();
        relay.options(&mut opts, move |n| to.push(n));
        // In the request's span: when traced, the upstream request's trace context is that of
        // the proxy's client span, a child of the request's (never the caller's own value).
        use tracing::Instrument;
        let task = tokio::spawn(
            async move {
                let mut guard = RetireGuard(Some(lease));
                let client = guard.0.as_ref().expect("lease").session().client().clone();
                let r = super::upstream::asking(ask_tx, call(client, opts)).await;
                let lease = guard.0.take().expect("lease");
                if exclusive {
                    lease.session().asker.route(None);
                }
                lease.outcome(&r);
                drop(lease);
                let _ = done_tx.send(r);
            }
            .instrument(tracing::Span::current()),
        );
        Self { questions, notes, done, task }
    }
}

/// A flight waiting for the downstream client's answers.
struct Parked {
    flight: Flight,
    asked: Vec<(String, oneshot::Sender<Result<Value, ClientError>>)>,
    expires: Instant,
    /// The downstream principal whose call it is (`None` without downstream auth).
    principal: Option<String>,
}

/// The parked flights (see the module docs).
pub(crate) struct Flights {
    parked: Mutex<HashMap<u64, Parked>>,
    next: AtomicU64,
    max_parked: usize,
    max_per_principal: usize,
    ttl: Duration,
}

impl std::fmt::Debug for Flights {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Flights").field("ttl", &self.ttl).finish_non_exhaustive()
    }
}

impl Flights {
    /// At most `max_parked` flights wait for answers, at most `max_per_principal` of one
    /// principal, each at most `ttl`.
    pub(crate) fn new(max_parked: usize, max_per_principal: usize, ttl: Duration) -> Arc<Self> {
        let max_per_principal = max_per_principal.clamp(1, max_parked.max(1));
        Arc::new(Self { parked: Mutex::default(), next: AtomicU64::new(1), max_parked, max_per_principal, ttl })
    }

    /// How many flights wait for answers (for tests and logs).
    pub(crate) fn len(&self) -> usize {
        self.parked.lock().len()
    }

    /// The refusal of a call of a principal with `max_per_principal` calls waiting already.
    fn too_many_of(&self, principal: Option<&str>) -> ProtocolError {
        let who = principal
            .map_or_else(|| "this caller (no downstream auth: every caller)".to_owned(), |p| format!("caller {p:?}"));
        tracing::warn!("{who} has {} proxied calls waiting for input; another one refused", self.max_per_principal);
        ProtocolError::unavailable(
            "waiting_calls",
            format!(
                "{} proxied calls of this caller are already waiting for input (the most allowed): answer them, \
                 or let them expire after {} s, before starting another",
                self.max_per_principal,
                self.ttl.as_secs()
            ),
        )
    }

    /// Whether `ctx`'s principal may start another call that may be asked (it has fewer than
    /// `max_per_principal` calls waiting); the refusal otherwise.
    pub(crate) fn admit(&self, ctx: &Context) -> Result<(), ProtocolError> {
        self.sweep();
        let principal = ctx.principal();
        let parked = self.parked.lock();
        let waiting = parked.values().filter(|p| p.principal.as_deref() == principal).count();
        drop(parked);
        if waiting >= self.max_per_principal {
            return Err(self.too_many_of(principal));
        }
        Ok(())
    }

    /// Drops expired flights (their upstream calls are cancelled); returns how many.
    pub(crate) fn sweep(&self) -> usize {
        let now = Instant::now();
        let mut parked = self.parked.lock();
        let before = parked.len();
        parked.retain(|_, p| p.expires > now);
        before - parked.len()
    }

    /// The flight a retry resumes, with its answers delivered; `None` for a first round.
    pub(crate) fn resume(&self, ctx: &Context) -> Result<Option<Flight>, ProtocolError> {
        let Some(id) = ctx.round_state().get(STATE_KEY) else {
            return Ok(None);
        };
        self.sweep();
        let parked = id.as_u64().and_then(|id| self.parked.lock().remove(&id));
        let Some(parked) = parked else {
            return Err(ProtocolError::invalid_params(format!(
                "requestState names a proxied call that is no longer waiting for input (answered already, \
                 or expired after {} s): send the request again without requestState",
                self.ttl.as_secs()
            )));
        };
        let answers = ctx.input_responses();
        for (key, reply) in parked.asked {
            let answer = answers.and_then(|a| a.get(&key)).cloned();
            let _ = reply.send(answer.ok_or_else(|| ClientError::handler(format!("no answer to input request {key}"))));
        }
        Ok(Some(parked.flight))
    }

    /// Follows `flight` to its result, or parks it at its next question and returns the
    /// `input_required` outcome.
    pub(crate) async fn follow(&self, ctx: &Context, mut flight: Flight) -> Result<Value, HandlerError> {
        let first = loop {
            tokio::select! {
                r = &mut flight.done => return finish(ctx, &mut flight, r),
                q = flight.questions.recv() => break q,
                notes = flight.notes.next() => notes.into_iter().for_each(|n| n.relay(ctx)),
                () = ctx.cancellation().cancelled() => {
                    return Err(HandlerError::Protocol(ProtocolError::Cancelled { reason: Cancellation::ByClient }))
                }
            }
        };
        let Some(first) = first else {
            // The call task ended without asking: its result is on the way.
            let r = (&mut flight.done).await;
            return finish(ctx, &mut flight, r);
        };
        // Questions asked together travel in one round.
        tokio::task::yield_now().await;
        let mut questions = vec![first];
        while let Ok(q) = flight.questions.try_recv() {
            questions.push(q);
        }
        let mut requests = Map::new();
        let mut asked = Vec::with_capacity(questions.len());
        for (i, q) in questions.into_iter().enumerate() {
            let key = format!("upstream-{}", i + 1);
            requests.insert(key.clone(), json!({ "method": q.method, "params": q.params }));
            asked.push((key, q.reply));
        }
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        self.sweep();
        let principal = ctx.principal().map(str::to_owned);
        {
            // A refused flight is dropped here: its upstream call is cancelled.
            let mut parked = self.parked.lock();
            if parked.len() >= self.max_parked {
                tracing::warn!(
                    "{} proxied calls waiting for input (max_waiting); another one refused",
                    self.max_parked
                );
                return Err(HandlerError::Protocol(ProtocolError::unavailable(
                    "waiting_calls",
                    format!("{} proxied calls are already waiting for input", self.max_parked),
                )));
            }
            let mine = parked.values().filter(|p| p.principal == principal).count();
            if mine >= self.max_per_principal {
                drop(parked);
                return Err(HandlerError::Protocol(self.too_many_of(principal.as_deref())));
            }
            parked.insert(id, Parked { flight, asked, expires: Instant::now() + self.ttl, principal });
        }
        Err(HandlerError::InputRequired(InputRequired { requests, state: json!({ STATE_KEY: id }) }))
    }
}

/// Which of the upstream's notifications about a call the downstream request asked for.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Relay {
    progress: bool,
    log_level: Option<mcp::server::mcp_protocol::types::LoggingLevel>,
}

impl Relay {
    /// What `ctx`'s request asked for: progress (it has a progress token) and log messages (at
    /// its `logLevel`).
    pub(crate) fn of(ctx: &Context) -> Self {
        Self { progress: ctx.wants_progress(), log_level: ctx.log_level() }
    }

    /// Asks the upstream call for those notifications (the same log level) and hands them to
    /// `deliver`.
    pub(crate) fn options(self, opts: &mut CallOptions, deliver: impl Fn(Note) + Send + Sync + 'static) {
        let deliver = Arc::new(deliver);
        if self.progress {
            let d = deliver.clone();
            opts.on_progress = Some(Arc::new(move |p: &Value| d(Note::Progress(p.clone()))));
        }
        if let Some(level) = self.log_level {
            opts.log_level = Some(level);
            opts.on_log = Some(Arc::new(move |p: &Value| deliver(Note::Log(p.clone()))));
        }
    }
}

/// An upstream notification about a call, to be sent as the downstream round's own.
#[derive(Debug)]
pub(crate) enum Note {
    /// `notifications/progress` params.
    Progress(Value),
    /// `notifications/message` params.
    Log(Value),
}

impl Note {
    /// Sends it on `ctx`'s request: progress under the downstream's progress token, a log
    /// message if the downstream's level admits it.
    pub(crate) fn relay(self, ctx: &Context) {
        match self {
            Note::Progress(p) => {
                if let Some(progress) = p.get("progress").and_then(Value::as_f64) {
                    let message = p.get("message").and_then(Value::as_str);
                    ctx.progress(progress, p.get("total").and_then(Value::as_f64), message);
                }
            }
            Note::Log(p) => {
                let Ok(level) = serde_json::from_value(p.get("level").cloned().unwrap_or_default()) else { return };
                let data = p.get("data").cloned().unwrap_or(Value::Null);
                ctx.log(level, p.get("logger").and_then(Value::as_str), data);
            }
        }
    }
}

/// The flight's outcome, after the progress it sent before its result.
fn finish(
    ctx: &Context,
    flight: &mut Flight,
    r: Result<Result<Value, ClientError>, oneshot::error::RecvError>,
) -> Result<Value, HandlerError> {
    for n in flight.notes.take() {
        n.relay(ctx);
    }
    match r {
        Ok(r) => r.map_err(|e| HandlerError::Protocol(upstream_error(e))),
        Err(_) => Err(HandlerError::Protocol(ProtocolError::Cancelled { reason: Cancellation::PeerGone })),
    }
}

/// An upstream failure as the downstream client sees it.
///
/// Errors about the request itself keep their code, message and data, as the variant the
/// front would use for them (so HTTP statuses follow: -32602 and -32021 are 400, -32601 404).
/// Errors about the proxy's own hop (a lost connection or process, a timeout, an invalid
/// answer, -32020 header mismatch, -32022 unsupported version, an upstream asking for
/// authorization) would mislead the downstream client about its request (a -32022 may even
/// send it to the legacy protocol) and may name the upstream (its URL, with a query that can
/// hold a key): they become `-32603` "upstream unavailable (ref ID)", and the details, URLs
/// redacted, go to the log (stderr) under the same correlation id.
pub(crate) fn upstream_error(e: ClientError) -> ProtocolError {
    use mcp::server::mcp_protocol::error::code;
    match e {
        ClientError::Server { code: c, message, .. }
            if c == code::HEADER_MISMATCH || c == code::UNSUPPORTED_PROTOCOL_VERSION =>
        {
            hop_error(&format!("the upstream server refused the proxy's request ({c}): {message}"))
        }
        ClientError::Server { code: c, message, data } => match c {
            code::METHOD_NOT_FOUND => ProtocolError::MethodNotFound { method: String::new(), detail: Some(message) },
            code::INVALID_PARAMS => ProtocolError::InvalidParams { message, data },
            code::MISSING_REQUIRED_CLIENT_CAPABILITY => ProtocolError::MissingRequiredClientCapability {
                required: data.and_then(|d| d.get("requiredCapabilities").cloned()).unwrap_or_default(),
            },
            _ => ProtocolError::Custom { code: c, message, data },
        },
        ClientError::ResourceNotFound { uri, .. } => ProtocolError::resource_not_found(&uri),
        // The upstream does not offer the tool (the client lists an HTTP upstream's tools
        // before a call, to mirror its `x-mcp-header` parameters, and refuses a name it does
        // not find there, or one with invalid annotations): the caller's mistake, answered as
        // the spec answers an unknown tool, not an outage.
        ClientError::InvalidTool { tool, .. } => ProtocolError::invalid_params(format!("Unknown tool: {tool}")),
        // A list the proxy's client read in full (the tool list, to learn a tool's headers)
        // passed the proxy's own bound: the operator's setting, not an outage of the upstream.
        ClientError::ListTooLarge { method, bound } => super::lists::too_large("the upstream", &method, &bound),
        // The proxy's own words about the call (an unanswered question, too many rounds).
        e @ (ClientError::Handler { .. } | ClientError::TooManyRounds(_)) => {
            ProtocolError::Input(InputFailure::Relayed { message: e.to_string() })
        }
        ClientError::AuthRequired { status, .. } => {
            hop_error(&format!("the proxy is not authorized at the upstream server (HTTP {status})"))
        }
        other => hop_error(&other.to_string()),
    }
}

/// A failure of the proxy's upstream hop: logged (URLs redacted) under a fresh correlation id,
/// which is all the downstream client learns.
pub(crate) fn hop_error(detail: &str) -> ProtocolError {
    use rand::RngCore;
    let id = format!("{:016x}", rand::thread_rng().next_u64());
    tracing::warn!("upstream unavailable (ref {id}): {}", super::upstream::loggable(detail));
    ProtocolError::HandlerFailed { message: "upstream unavailable".into(), reference: id }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(code: i64) -> ClientError {
        ClientError::Server { code, message: "m".into(), data: Some(json!({ "k": 1 })) }
    }

    #[test]
    fn upstream_errors_keep_their_meaning_but_not_the_proxys_own_hop() {
        let e = upstream_error(server(-32602));
        assert_eq!((e.code(), e.http_status().as_u16(), e.data()), (-32602, 400, Some(json!({ "k": 1 }))));
        let e = upstream_error(server(-32601));
        assert_eq!((e.code(), e.http_status().as_u16()), (-32601, 404));
        let e = upstream_error(server(-31999));
        assert_eq!((e.code(), e.message()), (-31999, "m".to_owned()));
        for hop in [-32020, -32022] {
            let e = upstream_error(server(hop));
            assert_eq!(e.code(), -32603, "{hop}");
            assert!(e.message().contains("upstream unavailable (ref "), "{}", e.message());
        }
        let unknown = ClientError::InvalidTool { tool: "nope".into(), reason: "not offered".into() };
        let e = upstream_error(unknown);
        assert_eq!((e.code(), e.http_status().as_u16(), e.message()), (-32602, 400, "Unknown tool: nope".to_owned()));
        let big = ClientError::ListTooLarge { method: "tools/list".into(), bound: "10000 bytes".into() };
        let e = upstream_error(big);
        assert_eq!(e.code(), -32603);
        assert!(e.message().contains("tools/list") && e.message().contains("10000 bytes"), "{}", e.message());
        assert!(!e.message().contains("upstream unavailable"), "not an outage: {}", e.message());
        let auth = ClientError::AuthRequired { status: 401, www_authenticate: Some("Bearer secret-detail".into()) };
        let e = upstream_error(auth);
        assert_eq!(e.code(), -32603);
        assert!(!e.message().contains("secret-detail"), "{}", e.message());
        let lost = ClientError::invalid_response("from http://u:pw@h/mcp?api_key=SECRET");
        let (a, b) = (upstream_error(lost).message(), hop_error("x").message());
        assert!(!a.contains("SECRET") && !a.contains("pw") && !a.contains("http"), "{a}");
        assert_ne!(a, b, "each failure has its own ref");
    }

    #[test]
    fn notes_are_bounded_progress_coalesced_logs_dropped() {
        let notes = Notes::default();
        for i in 0..(MAX_NOTES + 10) {
            notes.push(Note::Log(json!({ "i": i })));
            notes.push(Note::Progress(json!({ "progress": i })));
        }
        let q = notes.take();
        assert_eq!(q.len(), MAX_NOTES);
        let progress: Vec<&Note> = q.iter().filter(|n| matches!(n, Note::Progress(_))).collect();
        assert_eq!(progress.len(), 1, "one progress, the latest");
        assert!(matches!(progress[0], Note::Progress(p) if p["progress"] == MAX_NOTES + 9));
        assert!(notes.take().is_empty());
    }
}
