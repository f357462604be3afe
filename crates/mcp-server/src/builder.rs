//! [`ServerBuilder`]: declare what a server offers, then [`ServerBuilder::build`] it once.

use crate::context::Context;
use crate::error::HandlerError;
use crate::registry::*;
use crate::server::{Server, ServerConfig, ServerInner};
use crate::template::UriTemplate;
use mcp_protocol::headers::header_params;
use mcp_protocol::state::KeyRing;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

/// Builds a [`Server`]. Every registration is checked when [`ServerBuilder::build`] runs.
pub struct ServerBuilder {
    pub(crate) config: ServerConfig,
    catalog: Catalog,
    completion: Option<CompletionFn>,
    errors: Vec<BuildError>,
    eager_schemas: bool,
}

pub(crate) fn to_object(def: &impl Serialize) -> Result<Map<String, Value>, BuildError> {
    match serde_json::to_value(def) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(BuildError::InvalidDefinition("definition must serialize to a JSON object".into())),
        Err(e) => Err(BuildError::InvalidDefinition(e.to_string())),
    }
}

fn str_field(def: &Map<String, Value>, field: &str) -> Result<String, BuildError> {
    def.get(field).and_then(Value::as_str).map(str::to_owned).ok_or_else(|| {
        BuildError::InvalidDefinition(format!(
            "definition lacks string field {field:?}: {}",
            Value::Object(def.clone())
        ))
    })
}

/// The JSON Schema of `T`, as a tool `inputSchema`/`outputSchema` object.
pub fn schema_of<T: JsonSchema>() -> Value {
    let mut v = serde_json::to_value(schemars::schema_for!(T)).unwrap_or_else(|_| json!({"type": "object"}));
    if let Some(o) = v.as_object_mut() {
        o.remove("title");
    }
    v
}

impl ServerBuilder {
    pub(crate) fn new(name: &str, version: &str) -> Self {
        Self {
            config: ServerConfig::new(name, version),
            catalog: Catalog::default(),
            completion: None,
            errors: Vec::new(),
            eager_schemas: false,
        }
    }

    /// Sets the human-readable title in `serverInfo`.
    pub fn title(mut self, title: &str) -> Self {
        self.config.server_info["title"] = json!(title);
        self
    }

    /// Sets the icons of `serverInfo` (serialized `Icon` objects).
    pub fn icons(mut self, icons: impl Serialize) -> Self {
        self.config.server_info["icons"] = serde_json::to_value(icons).unwrap_or(Value::Null);
        self
    }

    /// Sets `instructions`, returned by `server/discover`.
    pub fn instructions(mut self, text: &str) -> Self {
        self.config.instructions = Some(text.to_owned());
        self
    }

    /// Page size of list results (default 100).
    pub fn page_size(mut self, n: usize) -> Self {
        self.config.page_size = n.max(1);
        self
    }

    /// `ttlMs` and `cacheScope` for list and discover results (default 60 s, public).
    pub fn list_cache(mut self, ttl_ms: u64, public: bool) -> Self {
        self.config.list_ttl_ms = ttl_ms;
        self.config.list_public = public;
        self
    }

    /// `ttlMs` and `cacheScope` for `resources/read` results (default 0, private).
    pub fn read_cache(mut self, ttl_ms: u64, public: bool) -> Self {
        self.config.read_ttl_ms = ttl_ms;
        self.config.read_public = public;
        self
    }

    /// Key ring that seals MRTR `requestState` (default: one random key per process).
    /// Share secrets across instances behind a load balancer.
    pub fn state_keys(mut self, ring: KeyRing) -> Self {
        self.config.keys = ring;
        self
    }

    /// Lifetime of sealed `requestState` in seconds (default 600).
    pub fn state_ttl_secs(mut self, secs: u64) -> Self {
        self.config.state_ttl_secs = secs;
        self
    }

    /// Longest a request handler may run before it is cancelled with `-32603` (default 5 minutes;
    /// `subscriptions/listen` streams are not limited).
    pub fn request_timeout(mut self, timeout: std::time::Duration) -> Self {
        self.config.request_timeout = timeout;
        self
    }

    /// Whether to put `serverInfo` in every result's `_meta` (default true).
    pub fn server_info_in_results(mut self, on: bool) -> Self {
        self.config.server_info_in_results = on;
        self
    }

    /// Adds a capability entry of the server's own (e.g. `extensions`), merged into `capabilities`.
    pub fn capability(mut self, name: &str, value: Value) -> Self {
        self.config.extra_capabilities.insert(name.to_owned(), value);
        self
    }

    /// Registers a tool with typed arguments. When `def` has no `inputSchema`, it is derived
    /// from `A`. `def` is any serializable `Tool` (e.g. `mcp_protocol::types::Tool` or `json!`).
    pub fn tool<A, F, Fut, R>(mut self, def: impl Serialize, handler: F) -> Self
    where
        A: DeserializeOwned + JsonSchema + Send + 'static,
        F: Fn(Context, A) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, HandlerError>> + Send + 'static,
        R: Serialize + 'static,
    {
        let handler = Arc::new(handler);
        let f: ToolFn = Arc::new(move |ctx, args| {
            let handler = handler.clone();
            Box::pin(async move {
                let a: A = serde_json::from_value(Value::Object(args))
                    .map_err(|e| HandlerError::Tool(format!("Invalid arguments: {e}")))?;
                ser(handler(ctx, a).await?)
            })
        });
        match to_object(&def) {
            Ok(mut d) => {
                d.entry("inputSchema").or_insert_with(schema_of::<A>);
                self.push_tool(d, f);
            }
            Err(e) => self.errors.push(e),
        }
        self
    }

    /// Registers a tool with typed arguments and typed structured output: `outputSchema` is
    /// derived from `O`, and the handler's value becomes `structuredContent` (plus its JSON text
    /// as a text block, for clients that do not read structured content).
    pub fn tool_with_output<A, O, F, Fut>(self, def: impl Serialize, handler: F) -> Self
    where
        A: DeserializeOwned + JsonSchema + Send + 'static,
        O: Serialize + JsonSchema + 'static,
        F: Fn(Context, A) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<O, HandlerError>> + Send + 'static,
    {
        let mut def = match to_object(&def) {
            Ok(d) => d,
            Err(e) => {
                let mut this = self;
                this.errors.push(e);
                return this;
            }
        };
        def.entry("outputSchema").or_insert_with(schema_of::<O>);
        let handler = Arc::new(handler);
        self.tool(Value::Object(def), move |ctx: Context, a: A| {
            let handler = handler.clone();
            async move {
                let out = ser(handler(ctx, a).await?)?;
                Ok(json!({ "content": [{ "type": "text", "text": out.to_string() }], "structuredContent": out }))
            }
        })
    }

    /// Registers a tool whose handler takes the raw `arguments` object (dynamic registration).
    /// `def` must carry an `inputSchema`.
    pub fn tool_raw<F, Fut, R>(mut self, def: impl Serialize, handler: F) -> Self
    where
        F: Fn(Context, Map<String, Value>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, HandlerError>> + Send + 'static,
        R: Serialize + 'static,
    {
        let f = raw_tool_fn(handler);
        match to_object(&def) {
            Ok(d) => self.push_tool(d, f),
            Err(e) => self.errors.push(e),
        }
        self
    }

    fn push_tool(&mut self, def: Map<String, Value>, handler: ToolFn) {
        match build_tool(def, handler) {
            Ok(t) if self.catalog.tools.iter().any(|x| x.name == t.name) => {
                self.errors.push(BuildError::Duplicate { kind: "tool", name: t.name })
            }
            Ok(t) => self.catalog.tools.push(Arc::new(t)),
            Err(e) => self.errors.push(e),
        }
    }

    /// Registers a static resource; `def` is a serializable `Resource` (needs `uri` and `name`).
    pub fn resource<F, Fut, R>(mut self, def: impl Serialize, handler: F) -> Self
    where
        F: Fn(Context, String) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, HandlerError>> + Send + 'static,
        R: Serialize + 'static,
    {
        let handler = Arc::new(handler);
        let f: ResourceFn = Arc::new(move |ctx, uri| {
            let handler = handler.clone();
            Box::pin(async move { ser(handler(ctx, uri).await?) })
        });
        match to_object(&def).and_then(|d| Ok((str_field(&d, "uri")?, str_field(&d, "name")?, d))) {
            Ok((uri, _, _)) if self.catalog.resources.iter().any(|r| r.uri == uri) => {
                self.errors.push(BuildError::Duplicate { kind: "resource", name: uri })
            }
            Ok((uri, _, d)) => self.catalog.resources.push(ResourceEntry { uri, def: Value::Object(d), handler: f }),
            Err(e) => self.errors.push(e),
        }
        self
    }

    /// Registers a resource template; `def` is a serializable `ResourceTemplate` (`uriTemplate`, `name`).
    pub fn resource_template<F, Fut, R>(mut self, def: impl Serialize, handler: F) -> Self
    where
        F: Fn(Context, String, BTreeMap<String, String>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, HandlerError>> + Send + 'static,
        R: Serialize + 'static,
    {
        let handler = Arc::new(handler);
        let f: TemplateFn = Arc::new(move |ctx, uri, vars| {
            let handler = handler.clone();
            Box::pin(async move { ser(handler(ctx, uri, vars).await?) })
        });
        let parsed = to_object(&def).and_then(|d| {
            str_field(&d, "name")?;
            let t = UriTemplate::parse(&str_field(&d, "uriTemplate")?)
                .map_err(|e| BuildError::InvalidTemplate(e.to_string()))?;
            Ok((t, d))
        });
        match parsed {
            Ok((template, d)) => {
                self.catalog.templates.push(TemplateEntry { template, def: Value::Object(d), handler: f })
            }
            Err(e) => self.errors.push(e),
        }
        self
    }

    /// Registers a prompt; `def` is a serializable `Prompt` (`name`, optional `arguments`).
    pub fn prompt<F, Fut, R>(mut self, def: impl Serialize, handler: F) -> Self
    where
        F: Fn(Context, Map<String, Value>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, HandlerError>> + Send + 'static,
        R: Serialize + 'static,
    {
        let f: PromptFn = raw_tool_fn(handler);
        let parsed = to_object(&def).and_then(|d| Ok((str_field(&d, "name")?, d)));
        match parsed {
            Ok((name, _)) if self.catalog.prompts.iter().any(|p| p.name == name) => {
                self.errors.push(BuildError::Duplicate { kind: "prompt", name })
            }
            Ok((name, d)) => {
                let required_args = d
                    .get("arguments")
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .filter(|x| x.get("required").and_then(Value::as_bool) == Some(true))
                            .filter_map(|x| x.get("name").and_then(Value::as_str).map(str::to_owned))
                            .collect()
                    })
                    .unwrap_or_default();
                self.catalog.prompts.push(PromptEntry { name, def: Value::Object(d), required_args, handler: f })
            }
            Err(e) => self.errors.push(e),
        }
        self
    }

    /// Sets the `completion/complete` handler: `(ctx, ref, argument, context)` -> `completion` object
    /// (`{values, total?, hasMore?}`). Declares the `completions` capability.
    pub fn completion<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(Context, Value, Value, Option<Value>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, HandlerError>> + Send + 'static,
    {
        let handler = Arc::new(handler);
        self.completion = Some(Arc::new(move |ctx, r, a, c| {
            let handler = handler.clone();
            Box::pin(async move { handler(ctx, r, a, c).await })
        }));
        self
    }

    /// Compiles every tool's `inputSchema`/`outputSchema` when the server is built, so an
    /// invalid schema is a [`BuildError`] instead of an error on the tool's first call.
    /// Off by default: validators are compiled on first use, which keeps start-up fast and idle
    /// memory small. (Dialects and `x-mcp-header` annotations are always checked at build.)
    pub fn compile_schemas_at_build(mut self, on: bool) -> Self {
        self.eager_schemas = on;
        self
    }

    /// Checks every registration and builds the server.
    pub fn build(mut self) -> Result<Server, BuildError> {
        if let Some(e) = self.errors.into_iter().next() {
            return Err(e);
        }
        if self.eager_schemas {
            for t in &self.catalog.tools {
                t.input.compile_now()?;
                if let Some(o) = &t.output {
                    o.compile_now()?;
                }
            }
        }
        self.catalog.reindex();
        Ok(Server::from_inner(ServerInner::new(self.config, self.catalog, self.completion)))
    }
}

/// Turns a handler's result into JSON; a result that already is a `Value` is moved, not copied.
pub(crate) fn ser<R: Serialize + 'static>(r: R) -> Result<Value, HandlerError> {
    // Downcasting a `&mut Option<R>` needs no allocation (unlike boxing into `dyn Any`).
    let mut slot = Some(r);
    if let Some(v) = (&mut slot as &mut dyn std::any::Any).downcast_mut::<Option<Value>>() {
        return Ok(v.take().expect("just filled"));
    }
    let r = slot.expect("not taken");
    serde_json::to_value(r).map_err(|e| HandlerError::Protocol(mcp_protocol::ProtocolError::Internal(e.to_string())))
}

fn raw_tool_fn<F, Fut, R>(handler: F) -> ToolFn
where
    F: Fn(Context, Map<String, Value>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<R, HandlerError>> + Send + 'static,
    R: Serialize + 'static,
{
    let handler = Arc::new(handler);
    Arc::new(move |ctx, args| {
        let handler = handler.clone();
        Box::pin(async move { ser(handler(ctx, args).await?) })
    })
}

/// Validates a tool definition and compiles its schemas.
pub(crate) fn build_tool(def: Map<String, Value>, handler: ToolFn) -> Result<ToolEntry, BuildError> {
    let name = str_field(&def, "name")?;
    let input_schema = def
        .get("inputSchema")
        .ok_or_else(|| BuildError::InvalidSchema { tool: name.clone(), reason: "missing inputSchema".into() })?;
    let input = SchemaValidator::new(&name, input_schema)?;
    let output = match def.get("outputSchema") {
        Some(s) => Some(SchemaValidator::new(&name, s)?),
        None => None,
    };
    let hp = header_params(input_schema.as_object().expect("checked by SchemaValidator::new"))
        .map_err(|reason| BuildError::InvalidHeaderAnnotation { tool: name.clone(), reason })?;
    Ok(ToolEntry { name, def: Value::Object(def), input, output, header_params: hp.into(), handler })
}
