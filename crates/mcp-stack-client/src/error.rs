//! Client errors.

use serde_json::Value;

/// Everything that can go wrong for a client call.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The transport failed: connection refused, process exited, stream broke...
    #[error("transport error: {0}")]
    Transport(#[from] TransportError),
    /// The server answered with a JSON-RPC error.
    #[error("server error {code}: {message}")]
    Server {
        /// JSON-RPC error code.
        code: i64,
        /// Message.
        message: String,
        /// Optional `error.data`.
        data: Option<Value>,
    },
    /// The resource does not exist (`-32602` with a URI, or legacy `-32002`).
    #[error("resource not found: {uri}")]
    ResourceNotFound {
        /// The URI asked for.
        uri: String,
    },
    /// No protocol version is supported by both sides.
    #[error("no mutually supported protocol version (server supports {server:?})")]
    NoCommonVersion {
        /// Versions the server advertised.
        server: Vec<String>,
    },
    /// The server's answer is not valid for the protocol (bad `resultType`, malformed result...).
    #[error("invalid response from server: {message}")]
    InvalidResponse {
        /// What is wrong, naming the method (and field) read, e.g. `tools/list: tools[2]: ...`.
        message: String,
        /// The parse error underneath, if any.
        #[source]
        source: Option<ErrorSource>,
    },
    /// The server asked for input the client has no handler for.
    #[error("server asked for {request}, which this client does not support")]
    Unsupported {
        /// What was asked for (`sampling`, `url elicitation`, a method name...).
        request: String,
    },
    /// An input handler (elicitation, sampling, roots) failed or the user refused.
    #[error("{message}")]
    Handler {
        /// What failed, in words.
        message: String,
        /// The error underneath, if any.
        #[source]
        source: Option<ErrorSource>,
    },
    /// The MRTR exchange needed more rounds than allowed.
    #[error("server still needs input after {0} rounds")]
    TooManyRounds(usize),
    /// The request timed out (and was cancelled).
    #[error("request timed out after {0:?}")]
    Timeout(std::time::Duration),
    /// A tool definition is invalid for this transport (e.g. bad `x-mcp-header`).
    #[error("invalid tool {tool:?}: {reason}")]
    InvalidTool {
        /// Tool name.
        tool: String,
        /// Why.
        reason: String,
    },
    /// A paginated list passed the client's bound ([`crate::ClientBuilder::max_list`]); no
    /// further page was asked for.
    #[error("{method}: the server's list is larger than this client's bound of {bound}; not read further")]
    ListTooLarge {
        /// The list method.
        method: String,
        /// The bound passed, in words (`16777216 bytes`, `100000 items`).
        bound: String,
    },
    /// The task was cancelled before it finished (by this client, another, or the server).
    #[error("task {task_id} was cancelled")]
    TaskCancelled {
        /// The task's id.
        task_id: String,
    },
    /// Skill content did not match its listing (size, digest, frontmatter, unlisted file) and
    /// was not used.
    #[error("skill refused: {message}")]
    SkillVerification {
        /// What did not match.
        message: String,
        /// The verification error underneath, if any.
        #[source]
        source: Option<ErrorSource>,
    },
    /// The server needs authorization.
    #[error("authorization required (HTTP {status}){}", www_authenticate.as_deref().map(|w| format!(": {w}")).unwrap_or_default())]
    AuthRequired {
        /// 401 or 403.
        status: u16,
        /// The `WWW-Authenticate` challenge.
        www_authenticate: Option<String>,
    },
}

impl ClientError {
    /// Builds the error for a JSON-RPC `error` object.
    pub fn from_error_object(e: &Value) -> Self {
        let code = e.get("code").and_then(Value::as_i64).unwrap_or(0);
        let message = e.get("message").and_then(Value::as_str).unwrap_or("").to_owned();
        let data = e.get("data").cloned();
        if code == mcp_protocol::error::code::LEGACY_RESOURCE_NOT_FOUND
            || (code == mcp_protocol::error::code::INVALID_PARAMS && data.as_ref().and_then(|d| d.get("uri")).is_some())
        {
            let uri = data.as_ref().and_then(|d| d.get("uri")).and_then(Value::as_str).unwrap_or(&message).to_owned();
            return Self::ResourceNotFound { uri };
        }
        Self::Server { code, message, data }
    }

    /// An [`ClientError::InvalidResponse`] without a cause (see [`ClientError::caused_by`]).
    pub fn invalid_response(message: impl Into<String>) -> Self {
        Self::InvalidResponse { message: message.into(), source: None }
    }

    /// A [`ClientError::Handler`] without a cause (see [`ClientError::caused_by`]).
    pub fn handler(message: impl Into<String>) -> Self {
        Self::Handler { message: message.into(), source: None }
    }

    /// A [`ClientError::Unsupported`] for `request`.
    pub fn unsupported(request: impl Into<String>) -> Self {
        Self::Unsupported { request: request.into() }
    }

    /// Keeps `cause` as the [`std::error::Error::source`] of an error that has a place for one
    /// ([`ClientError::InvalidResponse`], [`ClientError::Handler`],
    /// [`ClientError::SkillVerification`]); other errors are returned unchanged.
    pub fn caused_by(mut self, cause: impl std::error::Error + Send + Sync + 'static) -> Self {
        if let Self::InvalidResponse { source, .. }
        | Self::Handler { source, .. }
        | Self::SkillVerification { source, .. } = &mut self
        {
            *source = Some(ErrorSource::new(cause));
        }
        self
    }

    /// The JSON-RPC code if this is a server error.
    pub fn code(&self) -> Option<i64> {
        match self {
            Self::Server { code, .. } => Some(*code),
            Self::ResourceNotFound { .. } => Some(mcp_protocol::error::code::INVALID_PARAMS),
            _ => None,
        }
    }
}

/// The error underneath a failure, kept for callers that inspect it (`Error::source`, or
/// [`ErrorSource::downcast_ref`] to `std::io::Error` (connecting, or the TLS handshake),
/// a TLS error, an OAuth error...).
/// Shared, since one transport failure may be reported to every call waiting on it.
#[derive(Clone)]
pub struct ErrorSource(std::sync::Arc<dyn std::error::Error + Send + Sync + 'static>);

impl ErrorSource {
    /// Keeps `error`.
    pub fn new(error: impl std::error::Error + Send + Sync + 'static) -> Self {
        Self(std::sync::Arc::new(error))
    }

    /// The error kept, as its concrete type if it is one.
    pub fn downcast_ref<T: std::error::Error + 'static>(&self) -> Option<&T> {
        self.0.downcast_ref::<T>()
    }
}

impl std::fmt::Debug for ErrorSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&self.0, f)
    }
}

impl std::fmt::Display for ErrorSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&self.0, f)
    }
}

impl std::error::Error for ErrorSource {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}

/// A transport-level failure. The message says what happened; where another error caused it,
/// that error is kept as the [`std::error::Error::source`].
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum TransportError {
    /// Could not reach the server (connection refused, DNS, spawn failure).
    #[error("cannot connect: {0}")]
    Connect(String, #[source] Option<ErrorSource>),
    /// The connection or process went away before the response.
    #[error("connection closed: {0}")]
    Closed(String),
    /// An HTTP status without a JSON-RPC body.
    #[error("HTTP {status}: {body}")]
    Http {
        /// Status code.
        status: u16,
        /// Body (truncated) for diagnostics.
        body: String,
        /// `WWW-Authenticate`, if any.
        www_authenticate: Option<String>,
    },
    /// The server sent something that is not valid JSON-RPC.
    #[error("malformed message: {0}")]
    Malformed(String),
    /// The operation timed out.
    #[error("timed out")]
    Timeout,
    /// Any other I/O error.
    #[error("I/O error: {0}")]
    Io(String, #[source] Option<ErrorSource>),
    /// The auth provider could not obtain credentials (discovery, registration or token
    /// request failed, or the authorization server was refused).
    #[error("authorization failed: {0}")]
    Auth(String, #[source] Option<ErrorSource>),
}
