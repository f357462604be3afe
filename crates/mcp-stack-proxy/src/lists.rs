//! Reading an upstream's paginated list, bounded in pages, items and bytes.
//!
//! A list is read page by page into one answer (the proxy serves it as one page), so what an
//! upstream may make the proxy hold is bounded by [`ListLimits`]: the items of every page read
//! so far are counted (in serialized JSON bytes) and the read stops with an error at the first
//! page that passes the bound; the pages after it are never asked for.

use mcp::server::mcp_protocol::ProtocolError;
pub(crate) use mcp_client::list::{json_len, ListLimits, Tally};
use mcp_client::{CallOptions, Client, ClientError};
use serde_json::{json, Map, Value};

/// Most pages read from the upstream for one list.
const MAX_PAGES: usize = 100;

/// The `error.data` key of an answer refused at a list bound (its value names the bound), for
/// the caller's information only: the proxy itself recognises its bounds by type
/// ([`ClientError::ListTooLarge`], which only this side makes), never by what an upstream
/// could write in an error of its own.
const BOUND_KEY: &str = "listBound";

/// The error of a list refused at a bound: `-32603` with `data.listBound` naming the bound
/// (`who` says whose list it was, `bound` which bound).
pub(crate) fn too_large(who: &str, method: &str, bound: &str) -> ProtocolError {
    ProtocolError::Custom {
        code: mcp::server::mcp_protocol::error::code::INTERNAL_ERROR,
        message: format!(
            "{who}: {method} is larger than the proxy's bound of {bound} (--max-list-bytes, --max-list-items); \
             not read further"
        ),
        data: Some(json!({ BOUND_KEY: bound })),
    }
}

/// Why an upstream's list was not read: past one of the proxy's own bounds (only this side
/// makes it: an upstream's error, whatever its code and data, is [`ListError::Failed`]), or
/// any other failure, as the downstream client gets it.
#[derive(Debug)]
pub(crate) enum ListError {
    /// Past a bound (which, in words: `"16777216 bytes"`).
    TooLarge(String),
    /// Anything else.
    Failed(mcp::server::HandlerError),
}

/// Every page of an upstream list, within `limits` (and [`MAX_PAGES`]). At a bound,
/// [`ClientError::ListTooLarge`] naming it (answered downstream as [`too_large`]).
pub(crate) async fn all_pages(
    client: &Client,
    method: &str,
    key: &str,
    limits: &ListLimits,
) -> Result<Vec<Value>, ClientError> {
    let mut out = Vec::new();
    let mut tally = Tally::default();
    let mut cursor: Option<Value> = None;
    for _ in 0..MAX_PAGES {
        let mut params = Map::new();
        if let Some(c) = cursor.take() {
            params.insert("cursor".into(), c);
        }
        let page = client.request(method, params, &CallOptions::default()).await?;
        let Value::Object(mut page) = page else { return Ok(out) };
        if let Some(Value::Array(items)) = page.remove(key) {
            let bytes = items.iter().map(json_len).sum();
            if let Err(bound) = tally.add(items.len(), bytes, limits) {
                return Err(ClientError::ListTooLarge { method: method.to_owned(), bound });
            }
            out.extend(items);
        }
        match page.remove("nextCursor") {
            Some(c @ Value::String(_)) => cursor = Some(c),
            _ => return Ok(out),
        }
    }
    Err(ClientError::invalid_response(format!("{method}: more than {MAX_PAGES} pages")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tally_stops_at_either_bound() {
        let limits = ListLimits { max_bytes: 100, max_items: 3 };
        let mut t = Tally::default();
        assert!(t.add(2, 60, &limits).is_ok());
        assert_eq!(t.add(1, 41, &limits), Err("100 bytes".to_owned()));
        let mut t = Tally::default();
        assert_eq!(t.add(4, 1, &limits), Err("3 items".to_owned()));
        let e = too_large("upstream a", "tools/list", "100 bytes");
        assert_eq!(e.code(), -32603);
        assert!(e.message().contains("upstream a: tools/list") && e.message().contains("100 bytes"), "{}", e.message());
    }
}
