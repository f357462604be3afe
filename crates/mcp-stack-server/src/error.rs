//! Errors a handler can return.

use crate::inputs::InputRequired;
use mcp_protocol::ProtocolError;
use std::any::Any;
use std::fmt;

/// What a tool, resource or prompt handler returns instead of a result.
///
/// `?` converts any [`std::error::Error`] into it: a [`ProtocolError`] stays a protocol error,
/// an [`InputRequired`] stays an input request, and anything else becomes a tool execution error
/// (`isError: true`, with the error's own `Display` as the text the model sees). The error's
/// `source()` chain is kept for logs and is not sent to the client (it often names files, hosts
/// or internals), unless the server opts in with
/// [`crate::ServerBuilder::expose_internal_errors`]. Like
/// `anyhow::Error`, it does not implement `std::error::Error` itself, which is what makes that
/// blanket conversion possible.
#[non_exhaustive]
pub enum HandlerError {
    /// A tool execution failure: reported to the model as a result with `isError: true`
    /// (for resources and prompts it becomes an internal error).
    Tool {
        /// What the model (or user) is told.
        message: String,
        /// The error this one came from, kept for logs and tracing.
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    },
    /// The request needs input from the client (elicitation, sampling, roots): answered with an
    /// `input_required` result, completed when the client retries.
    InputRequired(InputRequired),
    /// A protocol error, sent as a JSON-RPC error.
    Protocol(ProtocolError),
}

impl HandlerError {
    /// A tool execution error with `message` (for prompts and resources: an internal error).
    pub fn tool(message: impl Into<String>) -> Self {
        Self::Tool { message: message.into(), source: None }
    }

    /// An invalid-parameters protocol error (`-32602`).
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::Protocol(ProtocolError::invalid_params(message))
    }

    /// Converts any displayable value: a `HandlerError`, `ProtocolError` or `InputRequired` keeps
    /// its meaning, anything else becomes a tool execution error with its text.
    pub fn from_display<E: fmt::Display + 'static>(e: E) -> Self {
        let mut slot = Some(e);
        let any = &mut slot as &mut dyn Any;
        if let Some(h) = any.downcast_mut::<Option<HandlerError>>() {
            return h.take().expect("just filled");
        }
        if let Some(p) = any.downcast_mut::<Option<ProtocolError>>() {
            return Self::Protocol(p.take().expect("just filled"));
        }
        if let Some(i) = any.downcast_mut::<Option<InputRequired>>() {
            return Self::InputRequired(i.take().expect("just filled"));
        }
        Self::tool(slot.expect("not taken").to_string())
    }
}

impl<E: std::error::Error + Send + Sync + 'static> From<E> for HandlerError {
    fn from(e: E) -> Self {
        let mut slot = Some(e);
        let any = &mut slot as &mut dyn Any;
        if let Some(p) = any.downcast_mut::<Option<ProtocolError>>() {
            return Self::Protocol(p.take().expect("just filled"));
        }
        if let Some(i) = any.downcast_mut::<Option<InputRequired>>() {
            return Self::InputRequired(i.take().expect("just filled"));
        }
        let e = slot.expect("not taken");
        Self::Tool { message: e.to_string(), source: Some(Box::new(e)) }
    }
}

impl HandlerError {
    /// The message with the `source()` chain of the wrapped error appended (`top: cause: ...`),
    /// for logs (and for clients of a server that exposes internal errors).
    pub fn message_with_sources(&self) -> String {
        let Self::Tool { message, source: Some(e) } = self else { return self.to_string() };
        let mut out = message.clone();
        let mut cause = e.source();
        while let Some(c) = cause {
            out.push_str(": ");
            out.push_str(&c.to_string());
            cause = c.source();
        }
        out
    }
}

/// Says what a handler was doing when it failed, in the text the model reads:
/// `std::fs::read_to_string(&path).context(format!("reading {path}"))?` fails the call with
/// `reading config.toml: No such file or directory (os error 2)` where a bare `?` says only
/// `No such file or directory (os error 2)`. The original error stays the source (logged, see
/// [`crate::ServerBuilder::expose_internal_errors`]). On an `Option`, `None` becomes the error.
///
/// Protocol errors and input requests pass through unchanged: their meaning is not a message.
///
/// ```
/// use mcp_server::{HandlerError, ResultExt};
///
/// fn load(path: &str) -> Result<String, HandlerError> {
///     std::fs::read_to_string(path).with_context(|| format!("reading {path}"))
/// }
/// let e = load("/no/such/dir/config.toml").unwrap_err();
/// assert!(e.to_string().starts_with("reading /no/such/dir/config.toml: "), "{e}");
/// let missing: Option<u32> = None;
/// assert_eq!(missing.context("no port configured").unwrap_err().to_string(), "no port configured");
/// ```
pub trait ResultExt<T> {
    /// Prefixes the error's message with `what` (`what: message`).
    fn context(self, what: impl fmt::Display) -> Result<T, HandlerError>;
    /// [`ResultExt::context`] with the text made only on failure.
    fn with_context<D: fmt::Display>(self, what: impl FnOnce() -> D) -> Result<T, HandlerError>;
}

impl<T, E: Into<HandlerError>> ResultExt<T> for Result<T, E> {
    fn context(self, what: impl fmt::Display) -> Result<T, HandlerError> {
        self.map_err(|e| e.into().in_context(&what))
    }

    fn with_context<D: fmt::Display>(self, what: impl FnOnce() -> D) -> Result<T, HandlerError> {
        self.map_err(|e| e.into().in_context(&what()))
    }
}

impl<T> ResultExt<T> for Option<T> {
    fn context(self, what: impl fmt::Display) -> Result<T, HandlerError> {
        self.ok_or_else(|| HandlerError::tool(what.to_string()))
    }

    fn with_context<D: fmt::Display>(self, what: impl FnOnce() -> D) -> Result<T, HandlerError> {
        self.ok_or_else(|| HandlerError::tool(what().to_string()))
    }
}

impl HandlerError {
    /// `what: message` for a tool error; anything else unchanged.
    fn in_context(self, what: &dyn fmt::Display) -> Self {
        match self {
            Self::Tool { message, source } => Self::Tool { message: format!("{what}: {message}"), source },
            other => other,
        }
    }
}

/// A short random reference that ties an opaque error sent to a client to the log line with
/// its details (`3f9a1c07`).
pub fn correlation_id() -> String {
    format!("{:08x}", rand::random::<u32>())
}

/// An internal failure (a store that cannot be reached, say) told to the client as `what` and a
/// correlation id only, with `detail` logged at `error` level under the same id. The text is
/// fixed: nothing of `detail` (addresses, backend errors) reaches the client.
pub fn reported(what: &str, detail: &dyn fmt::Display) -> String {
    let reference = correlation_id();
    tracing::error!(reference = %reference, detail = %detail, "{what}");
    format!("{what} (ref {reference})")
}

/// A handler's failure, told to the client as `message` under a fresh reference that the log
/// line (at `error` level) carries too.
#[cold]
pub(crate) fn handler_failed(message: String) -> ProtocolError {
    let reference = correlation_id();
    tracing::error!(reference = %reference, "handler failed: {message}");
    ProtocolError::HandlerFailed { message, reference }
}

/// A backing store's failure during `operation`: the client reads the operation and a
/// reference; the store's error is logged under it and kept as the error's source.
#[cold]
pub(crate) fn store_failed(
    operation: &'static str,
    e: impl std::error::Error + Send + Sync + 'static,
) -> ProtocolError {
    let reference = correlation_id();
    tracing::error!(reference = %reference, detail = %e, "{operation}");
    ProtocolError::Store { operation, reference, source: mcp_protocol::ErrorSource::new(e) }
}

impl fmt::Display for HandlerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Tool { message, .. } => f.write_str(message),
            Self::InputRequired(_) => f.write_str("input required"),
            Self::Protocol(e) => write!(f, "{e}"),
        }
    }
}

impl fmt::Debug for HandlerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Tool { message, source } => {
                f.debug_struct("Tool").field("message", message).field("source", source).finish()
            }
            Self::InputRequired(i) => f.debug_tuple("InputRequired").field(i).finish(),
            Self::Protocol(e) => f.debug_tuple("Protocol").field(e).finish(),
        }
    }
}

/// What kind of item a [`BuildError`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ItemKind {
    /// A tool.
    Tool,
    /// A static resource.
    Resource,
    /// A resource template.
    ResourceTemplate,
    /// A prompt.
    Prompt,
}

impl fmt::Display for ItemKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Tool => "tool",
            Self::Resource => "resource",
            Self::ResourceTemplate => "resource template",
            Self::Prompt => "prompt",
        })
    }
}

/// Why a server definition was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// A tool's `inputSchema`/`outputSchema` is not a valid schema of its dialect.
    #[error("tool {tool:?}: invalid schema: {reason}")]
    InvalidSchema {
        /// The tool.
        tool: String,
        /// Why.
        reason: String,
    },
    /// A schema declares a `$schema` dialect this server does not support.
    #[error("tool {tool:?}: unsupported JSON Schema dialect {dialect:?} (supported: 2020-12, 2019-09, draft-07, draft-06, draft-04)")]
    UnsupportedDialect {
        /// The tool.
        tool: String,
        /// The `$schema` value.
        dialect: String,
    },
    /// A tool's `x-mcp-header` annotations violate the spec's constraints.
    #[error("tool {tool:?}: invalid x-mcp-header annotation: {reason}")]
    InvalidHeaderAnnotation {
        /// The tool.
        tool: String,
        /// Why.
        reason: String,
    },
    /// Two items share a name (or URI, or URI template).
    #[error("duplicate {kind} {name:?}")]
    Duplicate {
        /// What kind of item.
        kind: ItemKind,
        /// The repeated name or URI.
        name: String,
    },
    /// A resource template's `uriTemplate` is not a valid RFC 6570 template.
    #[error("{0}")]
    InvalidTemplate(String),
    /// A `_meta` key set on a definition breaks the naming rules or uses a reserved prefix.
    #[error("{item}: _meta key {key:?}: {reason}")]
    InvalidMeta {
        /// The item.
        item: String,
        /// The key.
        key: String,
        /// Why.
        reason: &'static str,
    },
    /// A handler asks for application state the builder was never given.
    #[error("{0}")]
    MissingState(String),
    /// A capability given to `ServerBuilder::capability` has the wrong shape for its name.
    #[error("capability {name:?}: {reason}")]
    InvalidCapability {
        /// The capability's name.
        name: String,
        /// Why it does not fit.
        reason: String,
    },
    /// A skill (or skills folder) breaks the skills extension's rules.
    #[error("skills: {0}")]
    Skills(String),
    /// An access rule ([`crate::Access`]) on an item cannot work.
    #[error("{item}: invalid access rule: {reason}")]
    InvalidAccess {
        /// The item (`tool "name"`, `resource "uri"`...).
        item: String,
        /// Why.
        reason: String,
    },
    /// An MCP Apps link or view cannot work (see [`crate::apps`]).
    #[error("{item}: {reason}")]
    InvalidApp {
        /// The item (`tool "name"`, `UI resource "uri"`).
        item: String,
        /// Why.
        reason: String,
    },
    /// A policy given to the builder (a rate limit, a cache) is misconfigured.
    #[error("{policy}: {reason}")]
    InvalidPolicy {
        /// The policy.
        policy: String,
        /// Why.
        reason: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<i64, HandlerError> {
        Ok(s.parse::<i64>()?)
    }

    fn io() -> Result<(), HandlerError> {
        Err(std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"))?;
        Ok(())
    }

    fn protocol() -> Result<(), HandlerError> {
        Err(ProtocolError::invalid_params("bad"))?;
        Ok(())
    }

    #[test]
    fn question_mark_keeps_the_meaning_of_each_error() {
        assert!(
            matches!(parse("x"), Err(HandlerError::Tool { message, source: Some(_) }) if message.contains("invalid digit"))
        );
        assert!(matches!(io(), Err(HandlerError::Tool { message, .. }) if message == "no such file"));
        assert!(matches!(protocol(), Err(HandlerError::Protocol(ProtocolError::InvalidParams { .. }))));
        let ir: Result<(), HandlerError> = Err(InputRequired::default().into());
        assert!(matches!(ir, Err(HandlerError::InputRequired(_))));
    }

    #[test]
    fn from_display_recognises_framework_errors() {
        assert!(
            matches!(HandlerError::from_display("plain text"), HandlerError::Tool { message, .. } if message == "plain text")
        );
        assert!(matches!(HandlerError::from_display(String::from("owned")), HandlerError::Tool { .. }));
        assert!(matches!(
            HandlerError::from_display(HandlerError::invalid_params("x")),
            HandlerError::Protocol(ProtocolError::InvalidParams { .. })
        ));
        assert!(matches!(HandlerError::from_display(ProtocolError::Internal("x".into())), HandlerError::Protocol(_)));
        assert!(matches!(HandlerError::from_display(InputRequired::default()), HandlerError::InputRequired(_)));
    }

    #[test]
    fn source_chains_stay_out_of_the_message() {
        #[derive(Debug)]
        struct Outer(std::io::Error);
        impl fmt::Display for Outer {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("reading the config")
            }
        }
        impl std::error::Error for Outer {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                Some(&self.0)
            }
        }
        let e: HandlerError = Outer(std::io::Error::other("disk on fire")).into();
        assert_eq!(e.to_string(), "reading the config");
        assert_eq!(e.message_with_sources(), "reading the config: disk on fire");
    }
}
