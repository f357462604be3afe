//! Legacy (initialize-based) clients on the same endpoint: Streamable HTTP sessions.
//!
//! A POST of `initialize` without modern `_meta` opens a session and answers with its
//! `Mcp-Session-Id`. Requests carrying that header are served in the session (see
//! [`mcp_session::LegacySession`], one per session); a handler's server-to-client
//! requests (elicitation, sampling, roots) go out on the request's SSE stream and the client
//! POSTs the answers back (202). GET with the header opens the session's stream of list-change
//! and subscribed resource-update notifications; DELETE ends the session. Unknown or ended
//! sessions get 404.
//!
//! `sessions.rs` keeps the sessions (bounds, expiry, the shared store's events), `call.rs`
//! serves their requests, `resume.rs` their resumable streams, `store.rs` is the
//! [`SessionStore`] several instances share.

mod call;
mod resume;
mod sessions;
mod store;

pub(crate) use call::Legacy;
pub(crate) use sessions::{has_modern_version_header, is_legacy_initialize, session_header, SessionLimits, Sessions};
pub use store::{
    SessionChange, SessionEvent, SessionRecord, SessionSink, SessionStore, SessionStoreError, SessionStoreFuture,
    StoredStream, StreamEntry,
};
