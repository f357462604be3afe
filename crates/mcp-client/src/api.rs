//! The typed surface: one method per request of the protocol.

use crate::cache;
use crate::client::{CallOptions, Client, ServerEra};
use crate::error::ClientError;
use crate::result::CallTool;
use crate::transport::TransportKind;
use mcp_protocol::headers::header_params;
use serde_json::{json, Map, Value};

fn obj(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
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

    /// Forgets cached results of `method` (call on a list-changed notification).
    pub fn invalidate_cache(&self, method: &str) {
        self.inner.cache.invalidate(method);
    }

    /// `server/discover` (modern servers; for legacy ones, the `initialize` result).
    pub async fn discover(&self) -> Result<Value, ClientError> {
        match self.era() {
            Some(ServerEra::Legacy { initialize, .. }) => Ok(initialize),
            _ => self.cached("server/discover", Map::new()).await,
        }
    }

    /// Every item of a paginated list, following `nextCursor` (bounded to 1000 pages).
    pub async fn list_all(&self, method: &str, key: &str) -> Result<Vec<Value>, ClientError> {
        self.pages(method, key, Map::new(), true).await
    }

    /// The `key` items of every page of `method` with `params` (plus each page's `cursor`),
    /// from the cache when `cached`; bounded to 1000 pages.
    pub(crate) async fn pages(
        &self,
        method: &str,
        key: &str,
        params: Map<String, Value>,
        cached: bool,
    ) -> Result<Vec<Value>, ClientError> {
        let mut out = Vec::new();
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
            out.extend(page.get(key).and_then(Value::as_array).cloned().unwrap_or_default());
            match page.get("nextCursor") {
                Some(c @ Value::String(_)) => cursor = Some(c.clone()),
                _ => return Ok(out),
            }
        }
        Err(ClientError::InvalidResponse(format!("{method}: too many pages")))
    }

    /// `tools/list`, all pages. Over HTTP, tools with invalid `x-mcp-header` annotations are
    /// left out (with a warning), as the spec requires; the rest have their headers recorded.
    pub async fn list_tools(&self) -> Result<Vec<Value>, ClientError> {
        let tools = self.list_all("tools/list", "tools").await?;
        let http = self.inner.transport.kind() == TransportKind::Http;
        let mut kept = Vec::with_capacity(tools.len());
        let mut headers = self.inner.tool_headers.write().expect("lock");
        for t in tools {
            let name = t.get("name").and_then(Value::as_str).unwrap_or_default().to_owned();
            let schema = t.get("inputSchema").and_then(Value::as_object).cloned().unwrap_or_default();
            match header_params(&schema) {
                Ok(hp) => {
                    headers.insert(name, hp.into());
                    kept.push(t);
                }
                Err(reason) if http => {
                    tracing::warn!(tool = %name, %reason, "ignoring tool with invalid x-mcp-header annotation");
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
        let known = || self.inner.tool_headers.read().expect("lock").contains_key(name);
        if !known() {
            // Boxed: this runs once per tool; inline, its future would make every call's future
            // (boxed by `CallTool`) about 600 bytes larger.
            Box::pin(self.list_tools()).await?;
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
        let mut params = Map::new();
        params.insert("name".into(), json!(name));
        params.insert("arguments".into(), arguments);
        self.request("tools/call", params, opts).await
    }

    /// `resources/list`, all pages.
    pub async fn list_resources(&self) -> Result<Vec<Value>, ClientError> {
        self.list_all("resources/list", "resources").await
    }

    /// `resources/templates/list`, all pages.
    pub async fn list_resource_templates(&self) -> Result<Vec<Value>, ClientError> {
        self.list_all("resources/templates/list", "resourceTemplates").await
    }

    /// `resources/read` (cached per `ttlMs`).
    pub async fn read_resource(&self, uri: &str) -> Result<Value, ClientError> {
        self.cached("resources/read", obj(json!({ "uri": uri }))).await
    }

    /// `prompts/list`, all pages.
    pub async fn list_prompts(&self) -> Result<Vec<Value>, ClientError> {
        self.list_all("prompts/list", "prompts").await
    }

    /// `prompts/get` with string arguments.
    pub async fn get_prompt(&self, name: &str, arguments: Map<String, Value>) -> Result<Value, ClientError> {
        self.request("prompts/get", obj(json!({ "name": name, "arguments": arguments })), &CallOptions::default()).await
    }

    /// `completion/complete`: `reference` is `{type: "ref/prompt", name}` or
    /// `{type: "ref/resource", uri}`.
    pub async fn complete(
        &self,
        reference: Value,
        argument: &str,
        value: &str,
        context: Option<Value>,
    ) -> Result<Value, ClientError> {
        let mut p = obj(json!({ "ref": reference, "argument": { "name": argument, "value": value } }));
        if let Some(c) = context {
            p.insert("context".into(), c);
        }
        self.request("completion/complete", p, &CallOptions::default()).await
    }
}
