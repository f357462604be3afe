//! The inspector's connection to its target and what the page follows: the client (connected
//! again on demand), the event bus (traffic, listen notifications, questions, status), the
//! recent traffic, and the questions (elicitation, sampling) waiting for the page's answer.
//! Every table is bounded.

use super::pages::Pages;
use crate::client::{Options, Resolved};
use mcp_client::{Client, ClientBuilder, ClientError, Direction};
use parking_lot::Mutex;
use serde_json::{json, Value};
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::oneshot;

/// Traffic entries kept for a page that opens late.
const TRAFFIC_KEPT: usize = 500;
/// Longest message text kept or sent in a traffic event (the rest is cut, marked).
const TRAFFIC_TEXT: usize = 64 * 1024;
/// Questions waiting for an answer at once; past it the server's question is declined.
const MAX_QUESTIONS: usize = 32;
/// How long a question waits for the page.
const QUESTION_TIMEOUT: Duration = Duration::from_secs(600);

/// What `mcp inspect` serves: shared by every request of the page.
pub(crate) struct Inspector {
    pub(crate) opts: Options,
    pub(crate) target: Resolved,
    /// Where MCP Apps views are framed (`http://[::1]:PORT`, or `http://127.0.0.1:PORT` without
    /// IPv6 loopback: the sandbox's own address and port).
    pub(crate) sandbox_origin: String,
    client: tokio::sync::Mutex<Option<Client>>,
    /// The open pages' event queues (bounded in bytes each).
    pub(crate) pages: Arc<Pages>,
    traffic: Mutex<VecDeque<Arc<str>>>,
    questions: Mutex<HashMap<u64, oneshot::Sender<Result<Value, String>>>>,
    next_question: AtomicU64,
    started: Instant,
    /// The open `subscriptions/listen` pump, if any.
    pub(crate) listen: Mutex<Option<tokio::task::JoinHandle<()>>>,
    /// A browser login is under way.
    pub(crate) logging_in: std::sync::atomic::AtomicBool,
    /// Connections made so far (the page shows it; `mcp dev` restarts bump it).
    pub(crate) generation: AtomicU64,
}

impl Inspector {
    /// The inspector of `target`, its views framed from `sandbox_origin`, each page's events
    /// bounded to `page_backlog` bytes.
    pub(crate) fn new(opts: Options, target: Resolved, sandbox_origin: String, page_backlog: usize) -> Arc<Self> {
        Arc::new(Self {
            opts,
            target,
            sandbox_origin,
            client: tokio::sync::Mutex::new(None),
            pages: Pages::new(page_backlog),
            traffic: Mutex::new(VecDeque::with_capacity(TRAFFIC_KEPT)),
            questions: Mutex::new(HashMap::new()),
            next_question: AtomicU64::new(1),
            started: Instant::now(),
            listen: Mutex::new(None),
            generation: AtomicU64::new(0),
            logging_in: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// Milliseconds since the inspector started (the page's clock for traffic timings).
    fn now_ms(&self) -> f64 {
        self.started.elapsed().as_secs_f64() * 1000.0
    }

    /// Sends `event` to every open page.
    pub(crate) fn publish(&self, event: &Value) {
        self.pages.send(&Arc::from(event.to_string()));
    }

    fn record(&self, direction: Direction, message: &Value) {
        let mut text = message.to_string();
        let size = text.len();
        if size > TRAFFIC_TEXT {
            let mut cut = TRAFFIC_TEXT;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            text.truncate(cut);
        }
        let dir = if direction == Direction::Sent { "sent" } else { "received" };
        let event = json!({"type": "traffic", "dir": dir, "at": self.now_ms(), "size": size, "text": text});
        let line: Arc<str> = Arc::from(event.to_string());
        {
            let mut kept = self.traffic.lock();
            if kept.len() == TRAFFIC_KEPT {
                kept.pop_front();
            }
            kept.push_back(line.clone());
        }
        self.pages.send(&line);
    }

    /// The traffic kept so far, oldest first (as event JSON texts).
    pub(crate) fn traffic(&self) -> Vec<Arc<str>> {
        self.traffic.lock().iter().cloned().collect()
    }

    /// Asks the page `method` with `params`; its answer (a result object) or why there is none.
    async fn ask(self: Arc<Self>, method: &'static str, params: Value) -> Result<Value, ClientError> {
        let (tx, rx) = oneshot::channel();
        let id = self.next_question.fetch_add(1, Ordering::Relaxed);
        {
            let mut q = self.questions.lock();
            if q.len() >= MAX_QUESTIONS {
                return Err(ClientError::handler("too many questions are waiting for the inspector page"));
            }
            q.insert(id, tx);
        }
        self.publish(&json!({"type": "question", "id": id, "method": method, "params": params}));
        let answer = tokio::time::timeout(QUESTION_TIMEOUT, rx).await;
        self.questions.lock().remove(&id);
        match answer {
            Ok(Ok(Ok(result))) => Ok(result),
            Ok(Ok(Err(why))) => Err(ClientError::handler(why)),
            Ok(Err(_)) | Err(_) => Err(ClientError::handler("the inspector page did not answer")),
        }
    }

    /// The page's answer to question `id`; false when no such question waits.
    pub(crate) fn answer(&self, id: u64, answer: Result<Value, String>) -> bool {
        match self.questions.lock().remove(&id) {
            Some(tx) => tx.send(answer).is_ok(),
            None => false,
        }
    }

    /// The client, connecting first when there is none (or `fresh` asks for a new one).
    pub(crate) async fn client(self: &Arc<Self>, fresh: bool) -> Result<Client, String> {
        let mut slot = self.client.lock().await;
        if let (Some(c), false) = (slot.as_ref(), fresh) {
            return Ok(c.clone());
        }
        *slot = None;
        if let Some(pump) = self.listen.lock().take() {
            pump.abort();
        }
        let me = Arc::downgrade(self);
        let tap = move |d: Direction, m: &Value| {
            if let Some(me) = me.upgrade() {
                me.record(d, m);
            }
        };
        let b = ClientBuilder::new("mcp-inspector", env!("CARGO_PKG_VERSION"))
            .tasks(true)
            .apps(true)
            .on_traffic(tap)
            .on_elicitation_raw(
                mcp_client::ElicitationModes::FORM_AND_URL,
                asker(Arc::downgrade(self), "elicitation/create"),
            )
            .on_sampling_raw(mcp_client::Sampling::Text, asker(Arc::downgrade(self), "sampling/createMessage"));
        let generation = self.generation.fetch_add(1, Ordering::Relaxed) + 1;
        match self.target.connect(&self.opts, b).await {
            Ok(c) => {
                *slot = Some(c.clone());
                self.publish(&json!({"type": "status", "connected": true, "generation": generation}));
                Ok(c)
            }
            Err(e) => {
                self.publish(&json!({"type": "status", "connected": false, "error": e, "generation": generation}));
                Err(e)
            }
        }
    }

    /// Drops the connection (the next request connects again).
    pub(crate) async fn disconnect(&self) {
        *self.client.lock().await = None;
        if let Some(pump) = self.listen.lock().take() {
            pump.abort();
        }
    }
}

/// A raw input handler asking the page `method` while the inspector lives.
fn asker(
    me: std::sync::Weak<Inspector>,
    method: &'static str,
) -> impl Fn(Value) -> futures::future::BoxFuture<'static, Result<Value, ClientError>> + Send + Sync + 'static {
    move |params| {
        let me = me.upgrade();
        Box::pin(async move { me.ok_or(ClientError::handler("closing"))?.ask(method, params).await })
    }
}
