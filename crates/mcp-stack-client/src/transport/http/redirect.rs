//! Redirects, followed by the transport itself rather than by the HTTP library: reqwest would
//! carry every header but `Authorization` and cookies to another host. A 307/308 within the
//! server URL's origin keeps every header; one to another origin fails the request, unless the
//! builder allowed it, and then only the protocol's own headers go along.

use super::builder::display_url;
use super::wire::{Req, Resp};
use super::Inner;
use crate::error::TransportError;
use http::header::{HeaderMap, LOCATION};
use url::Url;

/// Most redirects followed in a row for one request.
pub(super) const MAX_REDIRECTS: usize = 5;

/// Whether two URLs share scheme, host and port.
pub(super) fn same_origin(a: &Url, b: &Url) -> bool {
    a.scheme() == b.scheme() && a.host_str() == b.host_str() && a.port_or_known_default() == b.port_or_known_default()
}

/// Whether a header is the protocol's own, not something the user or an auth provider gave.
fn is_protocol_header(name: &str) -> bool {
    matches!(
        name,
        "content-type"
            | "accept"
            | "mcp-protocol-version"
            | "mcp-method"
            | "mcp-name"
            | "mcp-session-id"
            | "last-event-id"
    ) || name.starts_with("mcp-param-")
}

/// Keeps only the protocol's headers.
fn strip_to_protocol(headers: &mut HeaderMap) {
    let names: Vec<_> = headers.keys().filter(|k| !is_protocol_header(k.as_str())).cloned().collect();
    for name in names {
        headers.remove(name);
    }
}

/// Where a 307/308 points (resolved against the URL it answered), if it is an http(s) URL.
fn location(resp: &Resp) -> Option<Url> {
    let raw = resp.headers().get(LOCATION)?.to_str().ok()?;
    let mut url = resp.url().join(raw.trim()).ok()?;
    url.set_fragment(None);
    matches!(url.scheme(), "http" | "https").then_some(url)
}

/// The error for a redirect this transport does not follow.
pub(super) fn refused(target: &Url) -> TransportError {
    TransportError::Connect(
        format!(
            "server redirected to {} (another origin); not following: custom headers and credentials would cross origins",
            display_url(target)
        ),
        None,
    )
}

impl Inner {
    /// Sends the request `make` builds and follows its method-preserving redirects (307/308,
    /// at most [`MAX_REDIRECTS`]), building it again for each (so that the common case copies
    /// nothing). Any other answer, or a redirect without a usable `Location`, is returned as
    /// it is.
    pub(super) async fn send_following<F>(&self, make: F) -> Result<Resp, TransportError>
    where
        F: Fn() -> Result<Req, TransportError>,
    {
        let mut req = make()?;
        let mut hops = 0;
        let mut stripped = false;
        loop {
            let resp = self.wire.send(req, &self.display_url).await?;
            if !matches!(resp.status().as_u16(), 307 | 308) {
                return Ok(resp);
            }
            let Some(target) = location(&resp) else {
                return Ok(resp);
            };
            let mut next = make()?;
            if hops == MAX_REDIRECTS {
                return Err(TransportError::Connect(
                    format!("the server redirected more than {MAX_REDIRECTS} times in a row"),
                    None,
                ));
            }
            hops += 1;
            if !same_origin(&target, &self.url) {
                if !self.cross_origin_redirects {
                    return Err(refused(&target));
                }
                // Once the request has left the server's origin, it stays stripped.
                stripped = true;
            }
            if stripped {
                strip_to_protocol(&mut next.headers);
            }
            tracing::debug!(to = %display_url(&target), status = resp.status().as_u16(), "following a redirect");
            next.url = target;
            req = next;
        }
    }
}
