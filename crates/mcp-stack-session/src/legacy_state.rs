//! [`LegacyState`]: what a legacy (initialize-based, 2025-11-25 and earlier) session negotiated
//! and what its requests changed (log level, resource subscriptions).

use crate::host::Host;
use mcp_protocol::meta::{log_level_rank, RequestMeta, PROGRESS_TOKEN};
use mcp_protocol::method::names;
use mcp_protocol::{version, Method, ProtocolError, Request};
use mcp_server::internal::method_not_found;
use mcp_server::ChangeEvent;
use serde_json::{json, Map, Value};
use std::collections::HashSet;

/// Most resources one legacy session may be subscribed to (`resources/subscribe` past it: -32602).
const MAX_SUBSCRIPTIONS: usize = 1024;
/// Longest URI a legacy session may subscribe to, in bytes.
const MAX_SUBSCRIBED_URI: usize = 2048;

/// What a legacy session negotiated and remembers. Serializable, so that a shared store can
/// hold it; [`LegacyState::check`] validates one read back.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LegacyState {
    protocol_version: String,
    client_capabilities: Map<String, Value>,
    client_info: Option<Value>,
    log_level: Option<u8>,
    initialized: bool,
    subscriptions: HashSet<String>,
}

impl LegacyState {
    /// Answers `initialize`: negotiates the version (the client's if it is a legacy version we
    /// speak, else our newest legacy version, as the legacy handshake says) and returns the new
    /// state with the `InitializeResult`.
    pub(crate) fn initialize(
        host: &dyn Host,
        params: &Map<String, Value>,
        max_bytes: usize,
    ) -> Result<(Self, Value), ProtocolError> {
        let requested = params
            .get("protocolVersion")
            .and_then(Value::as_str)
            .ok_or_else(|| ProtocolError::invalid_params("initialize requires a string `protocolVersion`"))?;
        let client_capabilities = match params.get("capabilities") {
            Some(Value::Object(c)) => c.clone(),
            None => Map::new(),
            Some(_) => return Err(ProtocolError::invalid_params("`capabilities` must be an object")),
        };
        let client_info = match params.get("clientInfo") {
            None => None,
            Some(v) if mcp_protocol::meta::is_implementation(v) => Some(v.clone()),
            Some(_) => return Err(ProtocolError::invalid_params("`clientInfo` must be an Implementation object")),
        };
        // The session keeps these for its whole life: bounded like any stored client input.
        let kept = serialized_len(&client_capabilities) + client_info.as_ref().map_or(0, serialized_len);
        if kept > max_bytes {
            return Err(ProtocolError::invalid_params(format!(
                "`capabilities` and `clientInfo` are {kept} bytes serialized; this server keeps at most {max_bytes}"
            )));
        }
        let negotiated = if version::LEGACY.contains(&requested) { requested } else { version::LEGACY[0] };
        let mut result = Map::new();
        result.insert("protocolVersion".into(), json!(negotiated));
        result.extend(host.initialize_fields());
        let state = Self {
            protocol_version: negotiated.to_owned(),
            client_capabilities,
            client_info,
            log_level: None,
            initialized: false,
            subscriptions: HashSet::new(),
        };
        Ok((state, Value::Object(result)))
    }

    /// The negotiated protocol version.
    pub fn protocol_version(&self) -> &str {
        &self.protocol_version
    }

    /// The capabilities the client declared in `initialize`.
    pub fn client_capabilities(&self) -> &Map<String, Value> {
        &self.client_capabilities
    }

    /// The client sent `notifications/initialized`.
    pub(crate) fn mark_initialized(&mut self) {
        self.initialized = true;
    }

    /// Whether the client has sent `notifications/initialized`.
    pub fn is_initialized(&self) -> bool {
        self.initialized
    }

    /// The rank of the level set by `logging/setLevel` (see `meta::log_level_rank`), if any.
    pub fn log_level(&self) -> Option<u8> {
        self.log_level
    }

    /// Replaces what the session's requests change (log level, `notifications/initialized`,
    /// resource subscriptions) with the shared store's view.
    pub fn set_shared(&mut self, log_level: Option<u8>, initialized: bool, subscriptions: Vec<String>) {
        self.log_level = log_level;
        self.initialized = initialized;
        self.subscriptions = subscriptions.into_iter().collect();
    }

    /// Checks a state read from outside the process like client input: a legacy version this
    /// server speaks, an `Implementation` as client info, a known log level, bounded sizes.
    pub fn check(&self) -> Result<(), String> {
        if !version::LEGACY.contains(&self.protocol_version.as_str()) {
            return Err(format!("unknown protocol version {:?}", self.protocol_version));
        }
        if self.client_info.as_ref().is_some_and(|i| !mcp_protocol::meta::is_implementation(i)) {
            return Err("clientInfo is not an Implementation".into());
        }
        if self.log_level.is_some_and(|l| l > 7) {
            return Err("unknown log level".into());
        }
        if self.subscriptions.len() > 10_000 || self.subscriptions.iter().any(|s| s.len() > 8192) {
            return Err("too many or too long resource subscriptions".into());
        }
        Ok(())
    }

    /// The resource URIs the session subscribed to.
    pub fn subscribed_uris(&self) -> Vec<String> {
        self.subscriptions.iter().cloned().collect()
    }

    /// The notification a change event means for this session, if any: list changes always,
    /// `notifications/resources/updated` only for subscribed URIs.
    pub(crate) fn notification_for(&self, event: &ChangeEvent) -> Option<Value> {
        match event {
            ChangeEvent::ResourceUpdated(uri) if !self.subscriptions.contains(uri) => return None,
            // Tasks are not part of 2025-era sessions.
            ChangeEvent::TaskStatus(_) => return None,
            _ => {}
        }
        let (method, params) = event.notification()?;
        Some(mcp_protocol::jsonrpc::notification(method, params))
    }

    /// The per-request fields a modern request would carry, from the session; the log level
    /// is `default_log_level` (a rank) until the client sends `logging/setLevel`.
    pub(crate) fn request_meta(&self, params: &Map<String, Value>, default_log_level: Option<u8>) -> RequestMeta {
        let progress_token = params
            .get("_meta")
            .and_then(|m| m.get(PROGRESS_TOKEN))
            .filter(|t| t.is_string() || t.as_i64().is_some() || t.as_u64().is_some())
            .cloned();
        RequestMeta {
            protocol_version: version::known_or_owned(&self.protocol_version),
            client_capabilities: self.client_capabilities.clone(),
            client_info: self.client_info.clone(),
            log_level: self.log_level.or(default_log_level),
            progress_token,
        }
    }

    /// Serves the session-state methods; `None` for a method the handlers serve.
    pub(crate) fn handle_own(&mut self, req: &Request) -> Option<Result<Value, ProtocolError>> {
        let params = &req.params;
        Some(match req.method.as_str() {
            names::PING => Ok(json!({})),
            names::SET_LEVEL => (|| {
                let level = params
                    .get("level")
                    .and_then(Value::as_str)
                    .ok_or_else(|| ProtocolError::invalid_params("logging/setLevel requires a string `level`"))?;
                let rank = log_level_rank(level)
                    .ok_or_else(|| ProtocolError::invalid_params(format!("invalid log level {level:?}")))?;
                self.log_level = Some(rank);
                Ok(json!({}))
            })(),
            names::SUBSCRIBE | names::UNSUBSCRIBE => match params.get("uri").and_then(Value::as_str) {
                None => Err(ProtocolError::invalid_params(format!("{} requires a string `uri`", req.method))),
                Some(uri) if uri.len() > MAX_SUBSCRIBED_URI => Err(ProtocolError::invalid_params(format!(
                    "the URI is {} bytes long; this server accepts at most {MAX_SUBSCRIBED_URI}",
                    uri.len()
                ))),
                Some(_)
                    if req.method == names::SUBSCRIBE
                        && self.subscriptions.len() >= MAX_SUBSCRIPTIONS
                        && !self.subscriptions.contains(params["uri"].as_str().unwrap_or_default()) =>
                {
                    Err(ProtocolError::invalid_params(format!(
                        "this session is subscribed to {MAX_SUBSCRIPTIONS} resources already (the most it may be)"
                    )))
                }
                Some(uri) => {
                    if req.method == names::SUBSCRIBE {
                        self.subscriptions.insert(uri.to_owned());
                    } else {
                        self.subscriptions.remove(uri);
                    }
                    Ok(json!({}))
                }
            },
            // Modern-only methods do not exist in a legacy session.
            m if m == Method::Discover.as_str() || m == Method::SubscriptionsListen.as_str() => {
                Err(method_not_found(&req.method))
            }
            _ => return None,
        })
    }
}

/// The length of `v` serialized as JSON, counted without building the text.
fn serialized_len(v: &(impl serde::Serialize + ?Sized)) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0 += b.len();
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut c = Count(0);
    let _ = serde_json::to_writer(&mut c, v);
    c.0
}
