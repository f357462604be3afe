//! The typed surface: one method per request of the protocol, each returning the schema's type
//! (with the JSON it came as: [`Typed`]).

use crate::cache;
use crate::client::CallTool;
use crate::client::{CallOptions, Client, ServerEra};
use crate::error::ClientError;
use crate::list::{json_len, ListLimits, Tally};
use crate::transport::TransportKind;
use crate::typed::{discover_result, Typed};
use mcp_protocol::headers::header_params;
use mcp_protocol::types::{
    CompleteContext, CompleteReference, CompleteResult, DiscoverResult, GetPromptResult, Prompt, ReadResourceResult,
    Resource, ResourceTemplate, Tool,
};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use std::time::Duration;
use tokio::time::Instant;

/// How often a tool name the client does not know may make it read the tool list again.
const RELIST_INTERVAL: Duration = Duration::from_secs(10);

/// `params` with `key` set to `value`.
fn with(mut params: Map<String, Value>, key: &str, value: impl Into<Value>) -> Map<String, Value> {
    params.insert(key.into(), value.into());
    params
}

/// A value of the schema as JSON (the schema types always serialize).
fn to_json<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).expect("a schema type serializes to JSON")
}

impl Client {
    /// A request whose result may be served from (and stored in) the cache.
    async fn cached(&self, method: &str, params: Map<String, Value>) -> Result<Value, ClientError> {
        let key = cache::key(method, &params);
        if let Some(hit) = self.inner.cache.get(&key) {
            return Ok(hit);
        }
        let result = self.request(method, params, &CallOptions::default()).await?;
        self.inner.cache.put(key, &result);
        Ok(result)
    }

    /// Forgets cached results of `method` (call on a list-changed notification; for
    /// `tools/list`, an unknown tool name may read the list again at once).
    pub fn invalidate_cache(&self, method: &str) {
        self.inner.cache.invalidate(method);
        if method == "tools/list" {
            // Recorded, not written into `tools_relisted`: a read in progress holds that lock,
            // and the change must outlive it (the list it reads may be the old one).
            self.inner.tools_stale.store(true, std::sync::atomic::Ordering::Release);
        }
    }

    /// `server/discover` (cached per its `ttlMs`). For a legacy server, its `initialize`
    /// result read as a `DiscoverResult` (`supportedVersions` is the negotiated version;
    /// `serverInfo` and `protocolVersion` are in `extra`, and [`Typed::raw`] is the result as
    /// it came).
    pub async fn discover(&self) -> Result<Typed<DiscoverResult>, ClientError> {
        match self.era() {
            Some(ServerEra::Legacy { initialize, .. }) => discover_result(initialize, "initialize"),
            _ => discover_result(self.cached("server/discover", Map::new()).await?, "server/discover"),
        }
    }

    /// Every `key` item of the paginated list `method` as a `T` (cached; bounded to 1000
    /// pages and to [`crate::ClientBuilder::max_list`]). An item of another shape is an
    /// [`ClientError::InvalidResponse`] naming it.
    pub(crate) async fn list_all<T: DeserializeOwned>(
        &self,
        method: &str,
        key: &str,
    ) -> Result<Vec<Typed<T>>, ClientError> {
        let items = self.pages(method, key, Map::new(), true).await?;
        items.into_iter().enumerate().map(|(i, v)| Typed::parse(v, &format!("{method}: {key}[{i}]"))).collect()
    }

    /// The `key` items of every page of `method` with `params` (plus each page's `cursor`),
    /// from the cache when `cached`; bounded to 1000 pages and to the client's list bounds
    /// ([`crate::ClientBuilder::max_list`]: the pages are counted as they come, and the read
    /// stops at the first page past a bound).
    pub(crate) async fn pages(
        &self,
        method: &str,
        key: &str,
        params: Map<String, Value>,
        cached: bool,
    ) -> Result<Vec<Value>, ClientError> {
        let limits =
            ListLimits { max_bytes: self.inner.config.max_list_bytes, max_items: self.inner.config.max_list_items };
        let mut out = Vec::new();
        let mut tally = Tally::default();
        let mut cursor: Option<Value> = None;
        for _ in 0..1000 {
            let mut params = params.clone();
            if let Some(c) = cursor.take() {
                params.insert("cursor".into(), c);
            }
            let page = if cached {
                self.cached(method, params).await?
            } else {
                self.request(method, params, &CallOptions::default()).await?
            };
            let Value::Object(mut page) = page else {
                return Err(ClientError::invalid_response(format!("{method}: the result is not an object")));
            };
            match page.remove(key) {
                Some(Value::Array(items)) => {
                    let bytes = items.iter().map(json_len).fold(0, usize::saturating_add);
                    if let Err(bound) = tally.add(items.len(), bytes, &limits) {
                        return Err(ClientError::ListTooLarge { method: method.to_owned(), bound });
                    }
                    out.extend(items);
                }
                None => {}
                Some(_) => return Err(ClientError::invalid_response(format!("{method}: `{key}` is not an array"))),
            }
            match page.remove("nextCursor") {
                Some(c @ Value::String(_)) => cursor = Some(c),
                _ => return Ok(out),
            }
        }
        Err(ClientError::invalid_response(format!("{method}: too many pages")))
    }

    /// `tools/list`, all pages. Over HTTP, tools with invalid `x-mcp-header` annotations are
    /// left out (with a warning), as the spec requires; the rest have their headers recorded.
    pub async fn list_tools(&self) -> Result<Vec<Typed<Tool>>, ClientError> {
        let tools = self.list_all::<Tool>("tools/list", "tools").await?;
        let http = self.inner.transport.kind() == TransportKind::Http;
        let mut kept = Vec::with_capacity(tools.len());
        let mut headers = self.inner.tool_headers.write();
        // The table is the last list's (bounded as the list is), not every name ever listed.
        headers.clear();
        for t in tools {
            match header_params(&t.input_schema) {
                Ok(hp) => {
                    headers.insert(t.name.clone(), hp.into());
                    kept.push(t);
                }
                Err(reason) if http => {
                    tracing::warn!(tool = %t.name, %reason, "ignoring tool with invalid x-mcp-header annotation");
                }
                Err(_) => kept.push(t),
            }
        }
        Ok(kept)
    }

    /// `tools/call`: await the returned [`CallTool`] for a [`crate::ToolResult`], or set
    /// per-call options on it first. Over HTTP the tool's `x-mcp-header` parameters are
    /// mirrored into `Mcp-Param-*` headers (the tool list is fetched first if it is not known).
    pub fn call_tool(&self, name: &str, arguments: Value) -> CallTool<'_> {
        CallTool::new(self, name, arguments)
    }

    /// Makes sure a `tools/call` of `name` sent with [`Client::request`] mirrors the tool's
    /// `x-mcp-header` parameters into `Mcp-Param-*` headers: over HTTP to a modern server, the
    /// tool list is fetched first when `name` is not known yet (elsewhere this does nothing).
    /// Fails with [`ClientError::InvalidTool`] when the server does not offer the tool (or its
    /// annotations are invalid). [`Client::call_tool`] does this itself.
    pub async fn learn_tool_headers(&self, name: &str) -> Result<(), ClientError> {
        if self.inner.transport.kind() != TransportKind::Http || !self.is_modern() {
            return Ok(());
        }
        let known = || self.inner.tool_headers.read().contains_key(name);
        if !known() {
            // An unknown name reads the whole list again at most once per interval (and one
            // read at a time), not once per call: a caller naming tools that do not exist
            // must not make every call a full list.
            let mut relisted = self.inner.tools_relisted.lock().await;
            let stale = &self.inner.tools_stale;
            let fresh = relisted.is_some_and(|at| at.elapsed() < RELIST_INTERVAL)
                && !stale.load(std::sync::atomic::Ordering::Acquire);
            if !known() && !fresh {
                // Stamped before the read, whatever comes of it: a list that fails (or passes
                // the client's bound) is not read again for every unknown name either.
                *relisted = Some(Instant::now());
                stale.store(false, std::sync::atomic::Ordering::Release);
                // Boxed: this runs once per tool; inline, its future would make every call's
                // future (boxed by `CallTool`) about 600 bytes larger.
                Box::pin(self.list_tools()).await?;
            }
            drop(relisted);
            if !known() {
                return Err(ClientError::InvalidTool {
                    tool: name.to_owned(),
                    reason: "not offered by the server (or has invalid x-mcp-header annotations)".into(),
                });
            }
        }
        Ok(())
    }

    /// `tools/call` with explicit options, returning the raw result object.
    pub(crate) async fn call_tool_with(
        &self,
        name: &str,
        arguments: Value,
        opts: &CallOptions,
    ) -> Result<Value, ClientError> {
        self.learn_tool_headers(name).await?;
        let params = with(with(Map::new(), "name", name), "arguments", arguments);
        self.request("tools/call", params, opts).await
    }

    /// `resources/list`, all pages.
    pub async fn list_resources(&self) -> Result<Vec<Typed<Resource>>, ClientError> {
        self.list_all("resources/list", "resources").await
    }

    /// `resources/templates/list`, all pages.
    pub async fn list_resource_templates(&self) -> Result<Vec<Typed<ResourceTemplate>>, ClientError> {
        self.list_all("resources/templates/list", "resourceTemplates").await
    }

    /// `resources/read` (cached per `ttlMs`).
    pub async fn read_resource(&self, uri: &str) -> Result<Typed<ReadResourceResult>, ClientError> {
        Typed::parse(self.cached("resources/read", with(Map::new(), "uri", uri)).await?, "resources/read")
    }

    /// `prompts/list`, all pages.
    pub async fn list_prompts(&self) -> Result<Vec<Typed<Prompt>>, ClientError> {
        self.list_all("prompts/list", "prompts").await
    }

    /// `prompts/get` with string arguments.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: Map<String, Value>,
    ) -> Result<Typed<GetPromptResult>, ClientError> {
        let params = with(with(Map::new(), "name", name), "arguments", arguments);
        Typed::parse(self.request("prompts/get", params, &CallOptions::default()).await?, "prompts/get")
    }

    /// `completion/complete` of `argument` (typed so far: `value`) of a prompt or resource
    /// template, with the arguments resolved already in `context`.
    pub async fn complete(
        &self,
        reference: CompleteReference,
        argument: &str,
        value: &str,
        context: Option<CompleteContext>,
    ) -> Result<Typed<CompleteResult>, ClientError> {
        let arg = with(with(Map::new(), "name", argument), "value", value);
        let mut p = with(with(Map::new(), "ref", to_json(&reference)), "argument", arg);
        if let Some(c) = context {
            p.insert("context".into(), to_json(&c));
        }
        Typed::parse(self.request("completion/complete", p, &CallOptions::default()).await?, "completion/complete")
    }
}
