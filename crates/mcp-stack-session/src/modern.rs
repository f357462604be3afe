//! [`Session`]: the modern session core (see the [crate docs](crate)).

use crate::call::Call;
use crate::config::SessionConfig;
use crate::event::{Event, SessionCore, Transmit};
use crate::host::Host;
use crate::routing::{encode, id_in_use, key_of, Seeded};
use mcp_protocol::jsonrpc::{parse_incoming, Incoming, Notification, Rejected, Request};
use mcp_protocol::method::names;
use mcp_protocol::types::RequestId;
use mcp_protocol::version::Era;
use mcp_protocol::{Method, ProtocolError};
use mcp_server::{Reply, Server};
use serde_json::Value;
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Instant;
use tokio_util::sync::CancellationToken;

/// The modern session core: the calls in flight, their cancellation by
/// `notifications/cancelled`, unique ids, and encoding.
///
/// Its method kinds and their order are in the [crate docs](crate).
pub struct Session {
    host: Arc<dyn Host>,
    pub(crate) config: SessionConfig,
    /// Calls in flight, by key, with their JSON-RPC ids and cancellation tokens: listen streams
    /// from the start, other calls once their transport says they did not finish at once.
    calls: HashMap<RequestId, (Value, CancellationToken), Seeded>,
    events: VecDeque<Event>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session").field("calls", &self.calls.len()).finish_non_exhaustive()
    }
}

impl Session {
    /// A session of `server` with no call in flight.
    pub fn new(server: Server, config: SessionConfig) -> Self {
        Self::with_host(Arc::new(server), config)
    }

    pub(crate) fn with_host(host: Arc<dyn Host>, config: SessionConfig) -> Self {
        let calls = HashMap::with_hasher(Seeded::with_seed(config.seed));
        Self { host, config, calls, events: VecDeque::new() }
    }

    #[cfg_attr(not(feature = "legacy"), allow(dead_code))]
    pub(crate) fn host(&self) -> &dyn Host {
        &*self.host
    }

    /// Routes one request of a one-request session (see the type's docs): a call to run
    /// ([`Event::Call`]) or a listen stream to open ([`Event::Listen`]), stopped by `cancel`
    /// (the transport's token).
    pub fn route(request: Request, cancel: CancellationToken) -> Event {
        let key = key_of(&request.id);
        let listen = Method::parse(&request.method) == Some(Method::SubscriptionsListen);
        let call = Call::new(key, request, Era::Modern, None, cancel);
        if listen {
            Event::Listen(call)
        } else {
            Event::Call(call)
        }
    }

    /// The session's limits.
    pub fn config(&self) -> &SessionConfig {
        &self.config
    }

    /// How many calls are tracked in flight.
    pub fn calls_in_flight(&self) -> usize {
        self.calls.len()
    }

    /// Whether the call `key` is tracked in flight.
    #[cfg_attr(not(feature = "legacy"), allow(dead_code))]
    pub(crate) fn is_in_flight(&self, key: &RequestId) -> bool {
        self.calls.contains_key(key)
    }

    /// Takes one message from the client as bytes: a request or a notification. Malformed
    /// input is answered with the JSON-RPC error it deserves.
    pub fn handle_bytes(&mut self, bytes: &[u8], now: Instant) {
        match parse_incoming(bytes, self.config.max_depth) {
            Ok(Incoming::Request(req)) => self.handle_request(req, None, now),
            Ok(Incoming::Notification(n)) => self.handle_notification(n, now),
            Err(rejected) => self.handle_rejected(rejected, now),
        }
    }

    /// Answers input that is not a JSON-RPC request or notification.
    pub(crate) fn handle_rejected(&mut self, rejected: Rejected, _now: Instant) {
        let message = encode(&rejected.error.to_response(rejected.id.as_ref()));
        let error = Some(rejected.error);
        self.push(Event::Transmit(Transmit { call: None, message, error }));
    }

    /// Takes one request from the client. The modern core serves it statelessly: the principal
    /// travels in the transport's environment, so `_principal` is only for the legacy wrapper.
    pub fn handle_request(&mut self, req: Request, _principal: Option<String>, _now: Instant) {
        if self.calls.contains_key(&key_of(&req.id)) {
            return self.transmit_error(&req.id, &id_in_use(&req.id));
        }
        match Self::route(req, CancellationToken::new()) {
            Event::Listen(call) => {
                // Streams are tracked from the start; other calls once pending.
                self.calls.insert(call.key.clone(), (call.id.clone(), call.cancel.clone()));
                self.push(Event::Listen(call));
            }
            event => self.push(event),
        }
    }

    /// Takes one notification from the client: `notifications/cancelled` cancels its call;
    /// others mean nothing to the modern core.
    pub fn handle_notification(&mut self, n: Notification, now: Instant) {
        if n.method == names::CANCELLED {
            if let Some(id) = n.params.get("requestId") {
                self.cancel(id, now);
            }
        }
    }

    /// Cancels the call `id`, if it is in flight: its token fires (its handler stops), nothing
    /// is sent for it.
    pub fn cancel(&mut self, id: &Value, _now: Instant) {
        if let Some((id, cancel)) = self.calls.remove(&key_of(id)) {
            cancel.cancel();
            self.push(Event::Finished(id));
        }
    }

    /// The client can no longer answer (its input ended). Calls still running go on: their
    /// responses may still reach it.
    pub fn handle_peer_gone(&mut self, _now: Instant) {}

    /// The session ends (the client went away, or it was deleted): every call is cancelled.
    pub fn close(&mut self, _now: Instant) {
        let calls: Vec<_> = self.calls.drain().map(|(_, c)| c).collect();
        for (id, cancel) in calls {
            cancel.cancel();
            self.push(Event::Finished(id));
        }
    }

    pub(crate) fn push(&mut self, event: Event) {
        self.events.push_back(event);
    }

    pub(crate) fn transmit_error(&mut self, id: &Value, e: &ProtocolError) {
        let message = encode(&e.to_response(Some(id)));
        self.push(Event::Transmit(Transmit { call: Some(id.clone()), message, error: Some(e.clone()) }));
    }
}

impl SessionCore for Session {
    fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }
    fn poll_timeout(&self) -> Option<Instant> {
        None
    }
    fn handle_timeout(&mut self, _now: Instant) {}

    fn handle_pending(&mut self, call: &Call, _now: Instant) {
        if !self.calls.contains_key(&call.key) {
            self.calls.insert(call.key.clone(), (call.id.clone(), call.cancel.clone()));
        }
    }
    fn handle_outcome(&mut self, id: &Value, result: Result<Reply, ProtocolError>, _now: Instant) {
        if !self.calls.is_empty() {
            self.calls.remove(&key_of(id));
        }
        let message = self.host.encode_response(id, &result);
        self.push(Event::Transmit(Transmit { call: Some(id.clone()), message, error: None }));
        self.push(Event::Finished(id.clone()));
    }
    fn handle_stream_end(&mut self, key: &RequestId, _now: Instant) {
        self.calls.remove(key);
    }
}
