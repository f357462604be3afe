//! Requests this side sent to its peer and still waits on: the id space, the table of waiters,
//! matching a peer's response to its request, deadlines and closing. Sans-IO: the caller keeps a
//! token per request (a channel sender, a task handle...) and passes time in; nothing here
//! blocks, spawns or reads a clock.
//!
//! ```
//! use mcp_protocol::outbound::{Outbound, Matched};
//! use serde_json::json;
//! use std::time::{Duration, Instant};
//!
//! let mut table: Outbound<&str> = Outbound::new("s");
//! let now = Instant::now();
//! let (id, message) = table.start("roots/list", json!({}), "waiter", Some(now + Duration::from_secs(5))).unwrap();
//! assert_eq!(message["method"], "roots/list");
//! let answer = json!({"jsonrpc": "2.0", "id": message["id"], "result": {"roots": []}});
//! match table.handle_response(answer.as_object().unwrap()) {
//!     Matched::Answer { token, answer, .. } => assert_eq!((token, answer.unwrap()), ("waiter", json!({"roots": []}))),
//!     other => panic!("{other:?}"),
//! }
//! assert!(table.is_empty() && table.poll_timeout().is_none());
//! # let _ = id;
//! ```

use crate::types::RequestId;
use crate::{InputFailure, ProtocolError};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::time::Instant;

/// The peer's answer to one request: its `result`, or why it refused.
pub type Answer = Result<Value, ProtocolError>;

/// What a message from the peer meant for the table.
#[derive(Debug)]
#[non_exhaustive]
pub enum Matched<T> {
    /// Not a response at all (a request or a notification): handle it elsewhere.
    NotAResponse,
    /// A response to nothing this table waits on (late, duplicate or made up): drop it.
    Unknown,
    /// The response to one of our requests, with the token given when it started.
    Answer {
        /// The request's id.
        id: RequestId,
        /// The token given to [`Outbound::start`].
        token: T,
        /// The result, or the peer's error.
        answer: Answer,
    },
}

#[derive(Debug)]
struct Waiting<T> {
    token: T,
    deadline: Option<Instant>,
}

/// The table of requests sent and not yet answered. `T` is whatever the driver needs to hand an
/// answer to its waiter.
#[derive(Debug)]
pub struct Outbound<T> {
    prefix: std::borrow::Cow<'static, str>,
    next: u64,
    waiting: HashMap<RequestId, Waiting<T>>,
    closed: bool,
}

impl<T> Outbound<T> {
    /// An empty table whose ids are `PREFIX1`, `PREFIX2`, ... (strings, so they never collide
    /// with a peer that numbers its own requests).
    pub fn new(prefix: impl Into<std::borrow::Cow<'static, str>>) -> Self {
        Self { prefix: prefix.into(), next: 0, waiting: HashMap::new(), closed: false }
    }

    /// Starts a request: records `token` (until `deadline`, if any) and returns the id and the
    /// JSON-RPC message to send. After [`Outbound::close`] nothing starts: the token comes back.
    pub fn start(
        &mut self,
        method: &str,
        params: Value,
        token: T,
        deadline: Option<Instant>,
    ) -> Result<(RequestId, Value), T> {
        if self.closed {
            return Err(token);
        }
        self.next += 1;
        let id = RequestId::String(format!("{}{}", self.prefix, self.next));
        let message = crate::jsonrpc::request(&serde_json::to_value(&id).expect("ids serialize"), method, params);
        self.waiting.insert(id.clone(), Waiting { token, deadline });
        Ok((id, message))
    }

    /// Takes a message from the peer: a response to one of our requests releases its token with
    /// the answer (an error response becomes [`InputFailure::Refused`]).
    pub fn handle_response(&mut self, msg: &Map<String, Value>) -> Matched<T> {
        if msg.contains_key("method") || !(msg.contains_key("result") || msg.contains_key("error")) {
            return Matched::NotAResponse;
        }
        let Some(id) = msg.get("id").and_then(|v| serde_json::from_value::<RequestId>(v.clone()).ok()) else {
            return Matched::Unknown;
        };
        let Some(w) = self.waiting.remove(&id) else { return Matched::Unknown };
        let answer = match (msg.get("result"), msg.get("error")) {
            (Some(r), _) => Ok(r.clone()),
            (None, e) => Err(ProtocolError::Input(InputFailure::Refused {
                message: e.and_then(|e| e.get("message")).and_then(Value::as_str).unwrap_or("error").to_owned(),
            })),
        };
        Matched::Answer { id, token: w.token, answer }
    }

    /// Stops waiting on `id` (its waiter gave up); a late answer is then [`Matched::Unknown`].
    pub fn forget(&mut self, id: &RequestId) -> Option<T> {
        self.waiting.remove(id).map(|w| w.token)
    }

    /// The earliest deadline of a waiting request, for the driver's timer.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.waiting.values().filter_map(|w| w.deadline).min()
    }

    /// Removes and returns every request whose deadline is at or before `now`.
    pub fn handle_timeout(&mut self, now: Instant) -> Vec<(RequestId, T)> {
        let expired: Vec<RequestId> = self
            .waiting
            .iter()
            .filter(|(_, w)| w.deadline.is_some_and(|d| d <= now))
            .map(|(id, _)| id.clone())
            .collect();
        expired.into_iter().filter_map(|id| self.waiting.remove(&id).map(|w| (id, w.token))).collect()
    }

    /// The peer can no longer answer: returns every waiting token, and refuses later starts.
    pub fn close(&mut self) -> Vec<T> {
        self.closed = true;
        self.waiting.drain().map(|(_, w)| w.token).collect()
    }

    /// How many requests wait.
    pub fn len(&self) -> usize {
        self.waiting.len()
    }

    /// Whether nothing waits.
    pub fn is_empty(&self) -> bool {
        self.waiting.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::time::Duration;

    fn response(id: &Value, body: Value) -> Map<String, Value> {
        let mut m = body.as_object().cloned().unwrap();
        m.insert("jsonrpc".into(), json!("2.0"));
        m.insert("id".into(), id.clone());
        m
    }

    #[test]
    fn answers_refusals_strangers_and_non_responses() {
        let mut t: Outbound<u32> = Outbound::new("s");
        let (_, a) = t.start("roots/list", json!({}), 1, None).unwrap();
        let (_, b) = t.start("sampling/createMessage", json!({}), 2, None).unwrap();
        assert_ne!(a["id"], b["id"]);
        let m = t.handle_response(&response(&b["id"], json!({"error": {"code": -1, "message": "no"}})));
        assert!(
            matches!(m, Matched::Answer { token: 2, answer: Err(ProtocolError::Input(InputFailure::Refused { ref message })), .. } if message.contains("no"))
        );
        let m = t.handle_response(&response(&a["id"], json!({"result": {"roots": []}})));
        assert!(matches!(m, Matched::Answer { token: 1, answer: Ok(_), .. }));
        assert!(
            matches!(t.handle_response(&response(&a["id"], json!({"result": {}}))), Matched::Unknown),
            "answered once"
        );
        assert!(matches!(t.handle_response(&response(&json!(99), json!({"result": {}}))), Matched::Unknown));
        let request = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
        assert!(matches!(t.handle_response(request.as_object().unwrap()), Matched::NotAResponse));
        assert!(t.is_empty());
    }

    #[test]
    fn deadlines_expire_with_the_time_passed_in() {
        let t0 = Instant::now();
        let mut t: Outbound<&str> = Outbound::new("s");
        t.start("a", json!({}), "late", Some(t0 + Duration::from_secs(10))).unwrap();
        t.start("b", json!({}), "soon", Some(t0 + Duration::from_secs(1))).unwrap();
        t.start("c", json!({}), "never", None).unwrap();
        assert_eq!(t.poll_timeout(), Some(t0 + Duration::from_secs(1)));
        assert!(t.handle_timeout(t0).is_empty());
        let gone: Vec<&str> = t.handle_timeout(t0 + Duration::from_secs(1)).into_iter().map(|(_, k)| k).collect();
        assert_eq!(gone, ["soon"]);
        assert_eq!(t.poll_timeout(), Some(t0 + Duration::from_secs(10)));
        assert_eq!(t.handle_timeout(t0 + Duration::from_secs(60)).len(), 1);
        assert_eq!((t.len(), t.poll_timeout()), (1, None));
    }

    #[test]
    fn forgotten_requests_ignore_late_answers_and_closing_refuses_new_ones() {
        let mut t: Outbound<u8> = Outbound::new("s");
        let (id, msg) = t.start("a", json!({}), 7, None).unwrap();
        assert_eq!(t.forget(&id), Some(7));
        assert!(matches!(t.handle_response(&response(&msg["id"], json!({"result": {}}))), Matched::Unknown));
        t.start("b", json!({}), 8, None).unwrap();
        assert_eq!(t.close(), [8]);
        assert_eq!(t.start("c", json!({}), 9, None).unwrap_err(), 9);
    }
}
