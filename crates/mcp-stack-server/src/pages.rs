//! Lists and their cache hints: the pages of `tools/list` and its kin (served once per catalog
//! version and shared), pages of lists kept as JSON (skills), and the `ttlMs`/`cacheScope`
//! hints of list, discover and read results.

use crate::access::{visible, Caller};
use crate::catalog::{Catalog, ListKind};
use crate::reply::Reply;
use mcp_protocol::types;
use mcp_protocol::ProtocolError;
use serde_json::{Map, Value};

/// How lists are paged and what cache hints results carry ([`crate::ServerBuilder::page_size`],
/// [`crate::ServerBuilder::list_cache`], [`crate::ServerBuilder::read_cache`]).
pub(crate) struct Lists {
    pub(crate) page_size: usize,
    pub(crate) list_ttl_ms: u64,
    pub(crate) list_public: bool,
    pub(crate) read_ttl_ms: u64,
    pub(crate) read_public: bool,
}

impl Default for Lists {
    fn default() -> Self {
        Self { page_size: 100, list_ttl_ms: 60_000, list_public: true, read_ttl_ms: 0, read_public: false }
    }
}

impl Lists {
    /// Where the page a cursor names starts (`None`: the first), among `total` items.
    fn page_start(cursor: Option<&str>, total: usize) -> Result<usize, ProtocolError> {
        match cursor {
            None => Ok(0),
            Some(c) => {
                decode_cursor(c).filter(|s| *s <= total).ok_or_else(|| ProtocolError::invalid_params("Invalid cursor"))
            }
        }
    }

    /// The `ttlMs` and `cacheScope` of list and discover results.
    pub(crate) fn list_cache(&self) -> (u64, types::CacheScope) {
        (self.list_ttl_ms, if self.list_public { types::CacheScope::Public } else { types::CacheScope::Private })
    }

    /// A page of one of the catalog's lists, serialised once per catalog version and shared;
    /// per request, for `caller`, when an item of the list has an access rule.
    pub(crate) fn catalog_page(
        &self,
        c: &Catalog,
        kind: ListKind,
        cursor: Option<&str>,
        caller: &Caller<'_>,
    ) -> Result<Reply, ProtocolError> {
        if c.restricted[kind as usize] {
            return Ok(Reply::shared(self.page_bytes(c, kind, cursor, Some(caller))?.into()));
        }
        let total = match kind {
            ListKind::Tools => c.tools.len(),
            ListKind::Resources => c.resources.len(),
            ListKind::Templates => c.templates.len(),
            ListKind::Prompts => c.prompts.len(),
        };
        let start = Self::page_start(cursor, total)?;
        let page = c.pages[kind as usize].get(start, self.page_size, total, || {
            self.page_bytes(c, kind, cursor, None).expect("the cursor was checked above")
        });
        Ok(Reply::shared(page))
    }

    /// One page of list `kind` as its result: of every item (`caller` `None`: shared, with the
    /// configured cache hints), or of the items `caller` may see (a list that depends on the
    /// request's authorization, so `cacheScope: "private"` whoever the caller is).
    fn page_bytes(
        &self,
        c: &Catalog,
        kind: ListKind,
        cursor: Option<&str>,
        caller: Option<&Caller<'_>>,
    ) -> Result<Vec<u8>, ProtocolError> {
        let size = self.page_size;
        let (ttl_ms, cache_scope) = match caller {
            None => self.list_cache(),
            Some(_) => (self.list_ttl_ms, types::CacheScope::Private),
        };
        let (meta, result_type, extra) = (None, types::ResultType::Complete, Map::new());
        // One page of the visible entries of `$items` as the list result `$ty` (under `$field`).
        macro_rules! page {
            ($ty:ident, $field:ident, $items:expr) => {{
                let all: Vec<_> =
                    $items.iter().filter(|e| caller.is_none_or(|who| visible(e.access.as_ref(), who))).collect();
                let start = Self::page_start(cursor, all.len())?;
                let end = (start + size).min(all.len());
                serde_json::to_vec(&types::$ty {
                    $field: all[start..end].iter().map(|e| e.def.clone()).collect(),
                    meta,
                    result_type,
                    next_cursor: (end < all.len()).then(|| encode_cursor(end)),
                    ttl_ms,
                    cache_scope,
                    extra,
                })
            }};
        }
        let bytes = match kind {
            ListKind::Tools => page!(ListToolsResult, tools, c.tools),
            ListKind::Resources => page!(ListResourcesResult, resources, c.resources),
            ListKind::Templates => page!(ListResourceTemplatesResult, resource_templates, c.templates),
            ListKind::Prompts => page!(ListPromptsResult, prompts, c.prompts),
        };
        Ok(bytes.expect("definitions serialize"))
    }

    /// A page of a list kept as JSON (skills, directory entries) under `key`.
    pub(crate) fn list_page(
        &self,
        items: impl ExactSizeIterator<Item = Value>,
        key: &str,
        cursor: Option<&str>,
    ) -> Result<Value, ProtocolError> {
        let total = items.len();
        let start = Self::page_start(cursor, total)?;
        let size = self.page_size;
        let page: Vec<Value> = items.skip(start).take(size).collect();
        let mut out = Map::new();
        out.insert(key.into(), Value::Array(page));
        if start + size < total {
            out.insert("nextCursor".into(), encode_cursor(start + size).into());
        }
        self.cache_hints(&mut out);
        Ok(Value::Object(out))
    }

    /// The list cache hints (`ttlMs`, `cacheScope`), set on `result`.
    pub(crate) fn cache_hints(&self, result: &mut Map<String, Value>) {
        let (ttl, scope) = self.list_cache();
        result.insert("ttlMs".into(), ttl.into());
        result.insert("cacheScope".into(), scope_str(scope).into());
    }

    /// The `resources/read` cache hints (`ttlMs`, `cacheScope`) a complete result lacks.
    pub(crate) fn read_hints(&self, result: &mut types::ReadResourceResult) {
        result.ttl_ms.get_or_insert(self.read_ttl_ms);
        result.cache_scope.get_or_insert(if self.read_public {
            types::CacheScope::Public
        } else {
            types::CacheScope::Private
        });
    }

    /// The cache hints a complete JSON result (of a fallback) lacks: read hints or list hints.
    pub(crate) fn missing_hints(&self, result: &mut Value, read: bool) {
        let (ttl, public) =
            if read { (self.read_ttl_ms, self.read_public) } else { (self.list_ttl_ms, self.list_public) };
        if let Value::Object(o) = result {
            if o.get("resultType").and_then(Value::as_str).unwrap_or("complete") == "complete" {
                o.entry("ttlMs").or_insert_with(|| ttl.into());
                o.entry("cacheScope").or_insert_with(|| if public { "public" } else { "private" }.into());
            }
        }
    }
}

fn scope_str(scope: types::CacheScope) -> &'static str {
    match scope {
        types::CacheScope::Public => "public",
        types::CacheScope::Private => "private",
    }
}

fn encode_cursor(offset: usize) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("o:{offset}"))
}

fn decode_cursor(c: &str) -> Option<usize> {
    use base64::Engine as _;
    let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(c).ok()?;
    std::str::from_utf8(&raw).ok()?.strip_prefix("o:")?.parse().ok()
}
