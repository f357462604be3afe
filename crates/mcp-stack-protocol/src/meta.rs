//! `_meta` keys, the per-request protocol fields, and the key naming rules.

use crate::error::ProtocolError;
use crate::version;
use serde_json::{Map, Value};

/// `_meta` key: protocol version of a request.
pub const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key: client name and version.
pub const CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key: client capabilities relevant to a request.
pub const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key: minimum log level for a request.
pub const LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
/// `_meta` key: subscription a notification belongs to.
pub const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";
/// `_meta` key: server name and version (on results).
pub const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// The tasks extension's identifier (capability key under `extensions`).
pub const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";
/// `_meta` key: progress token of a request.
pub const PROGRESS_TOKEN: &str = "progressToken";

/// Log levels in increasing severity (RFC 5424 names).
pub const LOG_LEVELS: &[&str] = &["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"];

/// Severity rank of a log level name (0 = debug), or `None` if unknown.
pub fn log_level_rank(level: &str) -> Option<u8> {
    LOG_LEVELS.iter().position(|l| *l == level).map(|p| p as u8)
}

/// The per-request protocol fields a modern request carries in `params._meta`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RequestMeta {
    /// `io.modelcontextprotocol/protocolVersion` (borrowed from [`version`]'s lists when it is
    /// one of them: no allocation per request).
    pub protocol_version: std::borrow::Cow<'static, str>,
    /// `io.modelcontextprotocol/clientCapabilities` (an object).
    pub client_capabilities: Map<String, Value>,
    /// `io.modelcontextprotocol/clientInfo`, if sent.
    pub client_info: Option<Value>,
    /// `io.modelcontextprotocol/logLevel` rank, if sent.
    pub log_level: Option<u8>,
    /// `progressToken`, if sent (string or integer).
    pub progress_token: Option<Value>,
}

impl RequestMeta {
    /// Extracts and validates the per-request fields from a request's `params`.
    ///
    /// Missing required fields or malformed values give `-32602`; a well-formed but unsupported
    /// version gives `UnsupportedProtocolVersion`.
    pub fn from_params(params: &Map<String, Value>) -> Result<Self, ProtocolError> {
        let meta = match params.get("_meta") {
            Some(Value::Object(m)) => m,
            Some(_) => return Err(ProtocolError::invalid_params("_meta must be an object")),
            None => {
                return Err(ProtocolError::invalid_params(format!(
                    "missing _meta with {PROTOCOL_VERSION} and {CLIENT_CAPABILITIES}"
                )))
            }
        };
        let protocol_version = match meta.get(PROTOCOL_VERSION) {
            Some(Value::String(v)) => version::known_or_owned(v),
            Some(_) => return Err(ProtocolError::invalid_params(format!("{PROTOCOL_VERSION} must be a string"))),
            None => {
                return Err(ProtocolError::invalid_params(format!("missing required _meta field {PROTOCOL_VERSION}")))
            }
        };
        if !version::is_supported_modern(&protocol_version) {
            return Err(ProtocolError::UnsupportedProtocolVersion {
                requested: Some(protocol_version.into_owned()),
                supported: version::MODERN.iter().map(|s| (*s).to_owned()).collect(),
            });
        }
        let client_capabilities = match meta.get(CLIENT_CAPABILITIES) {
            Some(Value::Object(c)) => c.clone(),
            Some(_) => return Err(ProtocolError::invalid_params(format!("{CLIENT_CAPABILITIES} must be an object"))),
            None => {
                return Err(ProtocolError::invalid_params(format!(
                    "missing required _meta field {CLIENT_CAPABILITIES}"
                )))
            }
        };
        let client_info = match meta.get(CLIENT_INFO) {
            None => None,
            Some(v) if is_implementation(v) => Some(v.clone()),
            Some(_) => {
                return Err(ProtocolError::invalid_params(format!("{CLIENT_INFO} must be an Implementation object")))
            }
        };
        let log_level = match meta.get(LOG_LEVEL) {
            None => None,
            Some(Value::String(l)) => Some(
                log_level_rank(l).ok_or_else(|| ProtocolError::invalid_params(format!("invalid log level {l:?}")))?,
            ),
            Some(_) => return Err(ProtocolError::invalid_params(format!("{LOG_LEVEL} must be a string"))),
        };
        let progress_token = match meta.get(PROGRESS_TOKEN) {
            None => None,
            Some(v @ Value::String(_)) => Some(v.clone()),
            Some(Value::Number(n)) if n.is_i64() || n.is_u64() => Some(Value::Number(n.clone())),
            Some(_) => return Err(ProtocolError::invalid_params("progressToken must be a string or integer")),
        };
        Ok(Self { protocol_version, client_capabilities, client_info, log_level, progress_token })
    }

    /// Whether the client declared capability `name` (a top-level key such as `elicitation`).
    pub fn has_capability(&self, name: &str) -> bool {
        self.client_capabilities.get(name).is_some_and(|v| !v.is_null())
    }

    /// Whether the client declared a nested capability, e.g. `("elicitation", "url")`.
    ///
    /// For elicitation, an empty `elicitation: {}` object means form mode only.
    pub fn has_sub_capability(&self, name: &str, sub: &str) -> bool {
        self.client_capabilities
            .get(name)
            .and_then(Value::as_object)
            .is_some_and(|o| o.get(sub).is_some_and(|v| !v.is_null()))
    }
}

/// Whether `v` looks like an `Implementation` (client or server info): an object with a string
/// `name`.
pub fn is_implementation(v: &Value) -> bool {
    v.get("name").is_some_and(Value::is_string)
}

/// Checks a `_meta` key against the naming rules (optional dotted-label prefix + `/`, then a name).
pub fn is_valid_meta_key(key: &str) -> bool {
    let (prefix, name) = match key.rsplit_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, key),
    };
    if let Some(p) = prefix {
        if p.is_empty() || !p.split('.').all(valid_label) {
            return false;
        }
    }
    valid_name(name)
}

/// Whether a `_meta` key's prefix is reserved for MCP (second label `modelcontextprotocol` or `mcp`).
pub fn is_reserved_meta_key(key: &str) -> bool {
    key.rsplit_once('/')
        .and_then(|(p, _)| p.split('.').nth(1))
        .is_some_and(|l| l == "modelcontextprotocol" || l == "mcp")
}

fn valid_label(l: &str) -> bool {
    let b = l.as_bytes();
    !b.is_empty()
        && b[0].is_ascii_alphabetic()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'-')
}

fn valid_name(n: &str) -> bool {
    let b = n.as_bytes();
    if b.is_empty() {
        return true;
    }
    b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter().all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

#[cfg(test)]
mod tests {

    #[test]
    fn logging_levels_rank_in_declaration_order() {
        use crate::types::LoggingLevel as L;
        let all = [L::Debug, L::Info, L::Notice, L::Warning, L::Error, L::Critical, L::Alert, L::Emergency];
        for (rank, level) in all.into_iter().enumerate() {
            assert_eq!(serde_json::to_value(level).unwrap(), LOG_LEVELS[level as usize]);
            assert_eq!(level as usize, rank);
        }
    }

    use super::*;
    use serde_json::json;

    fn params(meta: Value) -> Map<String, Value> {
        json!({ "_meta": meta }).as_object().unwrap().clone()
    }

    #[test]
    fn extracts_fields() {
        let m = RequestMeta::from_params(&params(json!({
            PROTOCOL_VERSION: "2026-07-28", CLIENT_CAPABILITIES: {"elicitation": {"form": {}}},
            LOG_LEVEL: "warning", PROGRESS_TOKEN: "t1"
        })))
        .unwrap();
        assert_eq!(m.log_level, Some(3));
        assert!(m.has_capability("elicitation"));
        assert!(!m.has_capability("sampling"));
        assert!(m.has_sub_capability("elicitation", "form"));
        assert_eq!(m.progress_token, Some(json!("t1")));
    }

    #[test]
    fn missing_or_bad_fields() {
        let e = RequestMeta::from_params(&Map::new()).unwrap_err();
        assert_eq!(e.code(), -32602);
        let e = RequestMeta::from_params(&params(json!({ PROTOCOL_VERSION: "2026-07-28" }))).unwrap_err();
        assert_eq!(e.code(), -32602);
        let e = RequestMeta::from_params(&params(json!({ PROTOCOL_VERSION: "1900-01-01", CLIENT_CAPABILITIES: {} })))
            .unwrap_err();
        assert_eq!(e.code(), -32022);
        let e = RequestMeta::from_params(&params(
            json!({ PROTOCOL_VERSION: "2026-07-28", CLIENT_CAPABILITIES: {}, LOG_LEVEL: "loud" }),
        ))
        .unwrap_err();
        assert_eq!(e.code(), -32602);
    }

    #[test]
    fn key_rules() {
        for ok in ["progressToken", "io.modelcontextprotocol/protocolVersion", "com.example/a-b_c.d", "x/", "a1.b-2/z"]
        {
            assert!(is_valid_meta_key(ok), "{ok}");
        }
        for bad in ["/x", "1a/x", "a./x", "a-/x", "com.example/-x", "com.example/x-", "a b"] {
            assert!(!is_valid_meta_key(bad), "{bad}");
        }
        assert!(is_reserved_meta_key("dev.mcp/x"));
        assert!(is_reserved_meta_key("org.modelcontextprotocol.api/x"));
        assert!(!is_reserved_meta_key("com.example.mcp/x"));
    }
}
