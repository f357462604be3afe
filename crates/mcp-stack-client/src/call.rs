//! One logical call: rounds of request/response with MRTR input gathering, progress, timeouts.

use crate::client::{CallOptions, Client};
use crate::error::{ClientError, TransportError};
use crate::protocol::{RoundStep, Rounds};
use crate::transport::{ClientMeta, OutgoingRequest, Parts};
use mcp_protocol::headers as h;
use mcp_protocol::{InputFailure, ProtocolError};
use serde_json::{Map, Value};
use std::future::Future;
use tokio::time::Instant;

impl Client {
    /// Sends `method` with `params` and returns the final result, answering `input_required`
    /// rounds with the registered handlers (modern) or server-to-client requests (legacy).
    pub fn request<'a>(
        &'a self,
        method: &'a str,
        params: Map<String, Value>,
        opts: &'a CallOptions,
    ) -> impl Future<Output = Result<Value, ClientError>> + Send + 'a {
        // The one place requests are traced. Untraced, this is one disabled-span check; traced,
        // the call is boxed, so the request future keeps its size (an async fn awaiting the
        // rounds would hold the arguments twice).
        use futures::future::Either;
        match crate::telemetry::ClientCall::start(self, method, &params) {
            Some(call) => Either::Right(Box::pin(call.observe(self.rounds(method, params, opts, true)))),
            None => Either::Left(self.rounds(method, params, opts, false)),
        }
    }

    /// [`Client::request`]'s rounds; `traced`: inside the call's span.
    async fn rounds(
        &self,
        method: &str,
        params: Map<String, Value>,
        opts: &CallOptions,
        traced: bool,
    ) -> Result<Value, ClientError> {
        let mut rounds = Rounds::new(params, self.inner.config.max_rounds);
        loop {
            let result = self.round(method, rounds.params(), opts, traced).await?;
            let questions = match rounds.handle_result(result)? {
                RoundStep::Done(result) => return Ok(result),
                RoundStep::Ask(questions) => questions,
            };
            let mut responses = Map::new();
            for q in questions {
                // Boxed (as below): the rare paths stay out of every call's future.
                responses.insert(q.key, Box::pin(self.inner.config.handlers.answer(&q.method, q.params)).await?);
            }
            rounds.handle_answers(responses);
        }
    }

    /// One request/response round. Returns the `result` object.
    async fn round(
        &self,
        method: &str,
        params: &Map<String, Value>,
        opts: &CallOptions,
        traced: bool,
    ) -> Result<Value, ClientError> {
        let id = self.next_id();
        let progress = opts.on_progress.as_ref().map(|_| id);
        let negotiated = self.negotiated();
        // Trace context, when traced (an empty map allocates nothing).
        let mut trace = Map::new();
        if traced {
            crate::telemetry::round(id, &mut trace);
        }
        let extra = (!trace.is_empty()).then_some(&trace);
        let (meta, headers) = match &negotiated {
            Some((true, version)) => {
                let mut headers = Vec::new();
                if at_least_2025_06_18(version) {
                    headers.push((h::PROTOCOL_VERSION.to_owned(), version.clone()));
                }
                (ClientMeta { progress, extra, ..ClientMeta::default() }, headers)
            }
            _ => {
                let version = negotiated.as_ref().map_or(mcp_protocol::version::LATEST, |(_, v)| v.as_str());
                let log_level = opts.log_level.or(self.inner.config.log_level);
                let meta = ClientMeta { progress, log_level, extra, ..self.modern_meta(version) };
                (meta, self.modern_headers(version, method, params))
            }
        };
        // A legacy server's log messages name no request: a caller that reads them needs the
        // stream they may arrive on (a modern request asks with its log level).
        let req = OutgoingRequest::from_parts(Parts { id, method, params, meta }, headers)
            .taking_notifications(opts.on_log.is_some());
        let mut response = self.exchange(req, opts).await?;
        if let Some(err) = response.get("error") {
            return Err(ClientError::from_error_object(err));
        }
        response
            .get_mut("result")
            .map(Value::take)
            .ok_or_else(|| ClientError::invalid_response("response has neither result nor error"))
    }

    /// Sends one request and drives its exchange to the response.
    pub(crate) async fn exchange(&self, req: OutgoingRequest<'_>, opts: &CallOptions) -> Result<Value, ClientError> {
        let req = req.taking_unnamed_logs(self.inner.config.log_attribution);
        let id = req.id().clone();
        let tap = self.inner.config.traffic.as_ref();
        if let Some(tap) = tap {
            let mut json = Vec::new();
            if req.write_json(&mut json).is_ok() {
                if let Ok(v) = serde_json::from_slice::<Value>(&json) {
                    tap(crate::Direction::Sent, &v);
                }
            }
        }
        let idle = opts.timeout.unwrap_or(self.inner.config.timeout);
        let hard_deadline = Instant::now() + self.inner.config.max_timeout.max(idle);
        let sent = tokio::time::timeout(idle, self.inner.transport.request(req));
        let mut ex = match sent.await {
            Err(_) => return Err(ClientError::Timeout(idle)),
            Ok(Ok(ex)) => ex,
            Ok(Err(TransportError::Http { status: s @ (401 | 403), www_authenticate, .. })) => {
                return Err(ClientError::AuthRequired { status: s, www_authenticate })
            }
            Ok(Err(e)) => return Err(e.into()),
        };
        let mut deadline = Instant::now() + idle;
        loop {
            let next = tokio::time::timeout_at(deadline.min(hard_deadline), ex.next()).await;
            let m = match next {
                Err(_) => return Err(ClientError::Timeout(idle)), // dropping `ex` cancels
                Ok(None) => {
                    return Err(TransportError::Closed("the server closed the stream before responding".into()).into())
                }
                Ok(Some(m)) => m?,
            };
            if let Some(tap) = tap {
                tap(crate::Direction::Received, &m);
            }
            match (m.get("method").and_then(Value::as_str), m.get("id")) {
                (Some(method), Some(req_id)) => {
                    // A server-to-client request (legacy sessions only).
                    let reply = Box::pin(self.answer_server_request(req_id, method, m.get("params").cloned())).await;
                    if let Some(tap) = tap {
                        tap(crate::Direction::Sent, &reply);
                    }
                    self.inner.transport.send(reply, self.legacy_headers()).await?;
                }
                (Some("notifications/progress"), None) => {
                    if let Some(cb) = &opts.on_progress {
                        cb(&m["params"]);
                    }
                    deadline = Instant::now() + idle;
                }
                (Some("notifications/message"), None) => match &opts.on_log {
                    Some(cb) => cb(&m["params"]),
                    None => self.log_unclaimed(&m["params"]),
                },
                (Some(_), None) => {}
                (None, Some(rid)) if *rid == id => {
                    ex.complete();
                    return Ok(m);
                }
                _ => {}
            }
        }
    }

    /// Answers a legacy server-to-client request with the registered handlers.
    pub(crate) async fn answer_server_request(&self, id: &Value, method: &str, params: Option<Value>) -> Value {
        match self.inner.config.handlers.answer(method, params.unwrap_or_else(|| Value::Object(Map::new()))).await {
            Ok(result) => mcp_protocol::jsonrpc::result_response(id, result),
            Err(ClientError::Unsupported { request: what, .. }) => ProtocolError::MethodNotFound {
                method: what.to_string(),
                detail: Some(format!("the client does not support {what}")),
            }
            .to_response(Some(id)),
            Err(ClientError::InvalidResponse { message: why, .. }) => {
                ProtocolError::invalid_params(why).to_response(Some(id))
            }
            Err(e) => {
                ProtocolError::Input(InputFailure::ClientHandler { message: e.to_string() }).to_response(Some(id))
            }
        }
    }

    pub(crate) fn legacy_headers(&self) -> Vec<(String, String)> {
        match self.negotiated() {
            Some((true, version)) if at_least_2025_06_18(&version) => {
                vec![(h::PROTOCOL_VERSION.to_owned(), version)]
            }
            _ => Vec::new(),
        }
    }
}

/// Whether a legacy server speaks 2025-06-18 or later (structured output, elicitation).
fn at_least_2025_06_18(version: &str) -> bool {
    use mcp_protocol::version::ProtocolVersion;
    ProtocolVersion::parse(version).is_some_and(|v| v >= ProtocolVersion::V2025_06_18)
}
