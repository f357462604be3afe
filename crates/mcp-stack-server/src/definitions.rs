//! Typed definitions with their handlers: [`Tool`], [`Prompt`], [`Resource`].
//!
//! Each wraps the wire type of `mcp_protocol::types` (so a misspelled field does not compile)
//! and a handler. The `#[tool]`, `#[prompt]` and `#[resource]` attributes of the `mcp` crate
//! produce these same values from annotated functions.
//!
//! ```
//! use mcp_server::{Args, Server, Tool};
//! # #[derive(serde::Deserialize, schemars::JsonSchema)] struct Echo { text: String }
//! let echo = Tool::new("echo")
//!     .description("Echoes the text")
//!     .read_only_hint(true)
//!     .handler(|Args(a): Args<Echo>| async move { a.text });
//! let server = Server::builder("demo", "1.0.0").tool(echo).build().unwrap();
//! ```

use crate::access::Access;
use crate::catalog::{ArgCompleter, PromptFn, ResourceFn, TaskSupport, ToolFn};
use crate::error::BuildError;
use crate::handler::{Handler, HandlerKind, RequestParts, StateMap};
use crate::handler_result::{IntoPromptResult, IntoReadResult, IntoToolResult, ReadTarget};
use mcp_protocol::types::{self, Annotations, Icon, PromptArgument, ToolAnnotations};
use serde_json::{Map, Value};
use std::sync::Arc;

pub(crate) type CheckFn = fn(&StateMap) -> Result<(), String>;

/// The first error a definition's builder recorded.
pub(crate) fn first_error(errors: &[BuildError]) -> Result<(), BuildError> {
    errors.first().map_or(Ok(()), |e| Err(e.clone()))
}

/// Whether a definition may be registered: the first error its builder recorded, else whether
/// the server has the state its handler asks for.
pub(crate) fn admit(errors: &[BuildError], check: CheckFn, state: &StateMap) -> Result<(), BuildError> {
    if let Some(e) = errors.first() {
        return Err(e.clone());
    }
    check(state).map_err(BuildError::MissingState)
}

/// The type-erased form of a tool or prompt handler: extract, call, convert.
#[allow(clippy::type_complexity)]
fn erased<H, M, R>(
    handler: H,
    kind: HandlerKind,
    convert: fn(H::Output) -> Result<R, crate::error::HandlerError>,
) -> Arc<
    dyn Fn(crate::context::Context) -> crate::catalog::BoxFuture<Result<R, crate::error::HandlerError>> + Send + Sync,
>
where
    H: Handler<M>,
    R: Send + 'static,
{
    let handler = Arc::new(handler);
    Arc::new(move |ctx| {
        let mut parts = RequestParts::of_request(ctx, kind);
        match handler.call(&mut parts) {
            Ok(fut) => Box::pin(async move { convert(fut.await) }),
            Err(e) => Box::pin(std::future::ready(Err(e))),
        }
    })
}

/// Records a `_meta` entry after checking its key against the naming rules and reserved prefixes.
fn put_meta(meta: &mut Option<Map<String, Value>>, errors: &mut Vec<BuildError>, what: &str, key: &str, v: Value) {
    if !mcp_protocol::meta::is_valid_meta_key(key) {
        errors.push(BuildError::InvalidMeta {
            item: what.to_owned(),
            key: key.to_owned(),
            reason: "not a valid _meta key",
        });
    } else if mcp_protocol::meta::is_reserved_meta_key(key) {
        errors.push(BuildError::InvalidMeta {
            item: what.to_owned(),
            key: key.to_owned(),
            reason: "the prefix is reserved for the protocol",
        });
    } else {
        meta.get_or_insert_with(Map::new).insert(key.to_owned(), v);
    }
}

fn object(schema: Value, what: &str, errors: &mut Vec<BuildError>) -> Option<Map<String, Value>> {
    match schema {
        Value::Object(o) => Some(o),
        _ => {
            errors.push(BuildError::InvalidSchema { tool: what.to_owned(), reason: "schema must be an object".into() });
            None
        }
    }
}

/// The state of a [`Tool`], [`Prompt`] or [`Resource`] that has no handler yet (what `new`
/// gives): only `.handler(..)` turns it into one a server registers, so a definition without
/// a handler does not compile where a server takes it.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoHandler;

/// The handler of a [`Tool`], type-erased (the state after `.handler(..)`).
#[derive(Clone)]
pub struct ToolHandler(pub(crate) ToolFn);

/// The handler of a [`Prompt`], type-erased (the state after `.handler(..)`).
#[derive(Clone)]
pub struct PromptHandler(pub(crate) PromptFn);

/// The handler of a [`Resource`], type-erased (the state after `.handler(..)`).
#[derive(Clone)]
pub struct ResourceHandler(pub(crate) ResourceFn);

macro_rules! opaque_debug {
    ($($t:ident),*) => {$(
        impl std::fmt::Debug for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(stringify!($t))
            }
        }
    )*};
}
opaque_debug!(ToolHandler, PromptHandler, ResourceHandler);

/// `access` and `scopes` setters for a definition builder; `$what` names the item in errors.
macro_rules! access_setters {
    ($ty:ident, |$s:ident| $what:expr) => {
        impl<H> $ty<H> {
            /// Serves the item only to callers `access` allows; for anyone else it does not
            /// exist (see [`Access`](crate::Access)). A rule that cannot work fails at `build()`.
            pub fn access(mut self, access: Access) -> Self {
                if let Some(reason) = access.problem() {
                    let $s = &self;
                    let item = $what;
                    self.errors.push(BuildError::InvalidAccess { item, reason });
                }
                self.access = Some(access);
                self
            }

            /// Serves the item only to callers whose token grants every one of `scopes`
            /// (shorthand for [`Access::scopes`]).
            pub fn scopes<I, S>(self, scopes: I) -> Self
            where
                I: IntoIterator<Item = S>,
                S: Into<String>,
            {
                self.access(Access::scopes(scopes))
            }
        }
    };
}
access_setters!(Tool, |t| format!("tool {:?}", t.def.name));
access_setters!(Prompt, |p| format!("prompt {:?}", p.def.name));
access_setters!(Resource, |r| match &r.def {
    ResourceDef::Static(d) => format!("resource {:?}", d.uri),
    ResourceDef::Template(d) => format!("resource template {:?}", d.uri_template),
});

/// The descriptive fields every definition has: one view of them, so that the setters of
/// [`Tool`], [`Prompt`] and [`Resource`] are written once (`described_setters!`).
struct Described<'a> {
    title: &'a mut Option<String>,
    description: &'a mut Option<String>,
    icons: &'a mut Option<Vec<Icon>>,
    meta: &'a mut Option<Map<String, Value>>,
    /// The item, as build errors name it (`tool "echo"`).
    what: String,
    /// Where a setter's mistake waits for `build()`.
    errors: &'a mut Vec<BuildError>,
}

/// A definition with [`Described`] fields.
trait Describe {
    fn described(&mut self) -> Described<'_>;
}

/// `Described` from a wire definition with `title`, `description`, `icons` and `_meta`.
macro_rules! described {
    ($def:expr, $errors:expr, $what:expr) => {{
        let d = $def;
        Described {
            what: format!(concat!($what, " {:?}"), d.name),
            title: &mut d.title,
            description: &mut d.description,
            icons: &mut d.icons,
            meta: &mut d.meta,
            errors: $errors,
        }
    }};
}

/// The `title`, `description`, `icon` and `meta` setters of a [`Describe`] definition.
macro_rules! described_setters {
    ($($ty:ident: $what:literal),*) => {$(
        impl<H> $ty<H> {
            /// Human-readable display name.
            pub fn title(mut self, title: impl Into<String>) -> Self {
                *self.described().title = Some(title.into());
                self
            }

            #[doc = concat!("What the ", $what, " is or does (for a tool, what the model reads to decide when to call it).")]
            pub fn description(mut self, description: impl Into<String>) -> Self {
                *self.described().description = Some(description.into());
                self
            }

            /// Adds an icon.
            pub fn icon(mut self, icon: Icon) -> Self {
                self.described().icons.get_or_insert_with(Vec::new).push(icon);
                self
            }

            /// Adds a `_meta` entry; keys are checked against the naming rules and the reserved
            /// `modelcontextprotocol`/`mcp` prefixes when the server is built.
            pub fn meta(mut self, key: &str, value: Value) -> Self {
                let d = self.described();
                put_meta(d.meta, d.errors, &d.what, key, value);
                self
            }
        }
    )*};
}
described_setters!(Tool: "tool", Prompt: "prompt", Resource: "resource");

impl<H> Describe for Tool<H> {
    fn described(&mut self) -> Described<'_> {
        described!(&mut self.def, &mut self.errors, "tool")
    }
}

impl<H> Describe for Prompt<H> {
    fn described(&mut self) -> Described<'_> {
        described!(&mut self.def, &mut self.errors, "prompt")
    }
}

impl<H> Describe for Resource<H> {
    fn described(&mut self) -> Described<'_> {
        match &mut self.def {
            ResourceDef::Static(d) => described!(d, &mut self.errors, "resource"),
            ResourceDef::Template(d) => described!(d, &mut self.errors, "resource"),
        }
    }
}

/// A tool: its definition (`tools/list`) and its handler (`tools/call`). [`Tool::new`] gives a
/// `Tool<NoHandler>`; [`Tool::handler`] makes it a `Tool`, which is what servers take.
pub struct Tool<H = ToolHandler> {
    pub(crate) def: types::Tool,
    input_set: bool,
    output_set: bool,
    pub(crate) handler: H,
    pub(crate) check: CheckFn,
    pub(crate) task_support: TaskSupport,
    pub(crate) task_start: crate::catalog::TaskStart,
    pub(crate) access: Option<Access>,
    pub(crate) rate_limit: Option<crate::rate_limit::Quota>,
    pub(crate) errors: Vec<BuildError>,
}

impl<H> std::fmt::Debug for Tool<H> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tool").field("def", &self.def).field("task_support", &self.task_support).finish()
    }
}

fn no_check(_: &StateMap) -> Result<(), String> {
    Ok(())
}

impl Tool<NoHandler> {
    /// A tool named `name`, without parameters until a handler or schema says otherwise.
    pub fn new(name: impl Into<String>) -> Self {
        let mut input = types::Tool::empty_input_schema();
        input.insert("properties".into(), Value::Object(Map::new()));
        Self {
            def: types::Tool::new(name, input),
            input_set: false,
            output_set: false,
            handler: NoHandler,
            check: no_check,
            task_support: TaskSupport::Forbidden,
            task_start: crate::catalog::TaskStart::Immediate,
            access: None,
            rate_limit: None,
            errors: Vec::new(),
        }
    }

    /// The handler: an async function of extractors returning anything [`IntoToolResult`].
    /// Its [`crate::Args`] type gives `inputSchema`, its return type `outputSchema` (unless set).
    pub fn handler<F, M>(mut self, handler: F) -> Tool
    where
        F: Handler<M>,
        F::Output: IntoToolResult,
    {
        if !self.input_set {
            if let Some(s) = F::arguments_schema() {
                let name = self.def.name.clone();
                if let Some(o) = object(s, &name, &mut self.errors) {
                    self.def.input_schema = o;
                }
            }
        }
        if !self.output_set {
            if let Some(s) = <F::Output as IntoToolResult>::output_schema() {
                self.def.output_schema = object(s, &self.def.name.clone(), &mut self.errors);
            }
        }
        let handler = ToolHandler(erased(handler, HandlerKind::Tool, IntoToolResult::into_tool_result));
        Tool {
            def: self.def,
            input_set: self.input_set,
            output_set: self.output_set,
            handler,
            check: F::check,
            task_support: self.task_support,
            task_start: self.task_start,
            access: self.access,
            rate_limit: self.rate_limit,
            errors: self.errors,
        }
    }
}

impl<H> Tool<H> {
    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.def.name
    }

    /// The wire definition as `tools/list` shows it.
    pub fn definition(&self) -> &types::Tool {
        &self.def
    }

    /// Behaviour hints.
    pub fn annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.def.annotations = Some(annotations);
        self
    }

    fn hints(&mut self) -> &mut ToolAnnotations {
        self.def.annotations.get_or_insert_with(ToolAnnotations::default)
    }

    /// `readOnlyHint`: the tool does not modify its environment.
    pub fn read_only_hint(mut self, on: bool) -> Self {
        self.hints().read_only_hint = Some(on);
        self
    }

    /// `destructiveHint`: the tool may perform destructive updates.
    pub fn destructive_hint(mut self, on: bool) -> Self {
        self.hints().destructive_hint = Some(on);
        self
    }

    /// `idempotentHint`: repeating a call with the same arguments has no further effect.
    pub fn idempotent_hint(mut self, on: bool) -> Self {
        self.hints().idempotent_hint = Some(on);
        self
    }

    /// `openWorldHint`: the tool interacts with an open world of external entities.
    pub fn open_world_hint(mut self, on: bool) -> Self {
        self.hints().open_world_hint = Some(on);
        self
    }

    /// Sets `inputSchema` explicitly (a handler's [`crate::Args`] type no longer decides it).
    pub fn input_schema(mut self, schema: Value) -> Self {
        let name = self.def.name.clone();
        if let Some(o) = object(schema, &name, &mut self.errors) {
            self.def.input_schema = o;
            self.input_set = true;
        }
        self
    }

    /// Sets `outputSchema` explicitly (a handler returning [`crate::Json<T>`] sets it from `T`).
    pub fn output_schema(mut self, schema: Value) -> Self {
        let name = self.def.name.clone();
        if let Some(o) = object(schema, &name, &mut self.errors) {
            self.def.output_schema = Some(o);
            self.output_set = true;
        }
        self
    }

    /// At most `quota` calls of this tool per caller (see [`crate::rate_limit`]); a quota that
    /// cannot work fails `build()`.
    pub fn rate_limit(mut self, quota: crate::rate_limit::Quota) -> Self {
        self.rate_limit = Some(quota);
        self
    }

    /// [`Tool::rate_limit`] from a quota written `COUNT/PERIOD` (what `#[tool(rate_limit =
    /// "5/10s")]` calls); one that does not parse fails `build()`.
    #[doc(hidden)]
    pub fn rate_limit_str(mut self, quota: &str) -> Self {
        match quota.parse() {
            Ok(q) => self.rate_limit(q),
            Err(reason) => {
                let policy = format!("rate limit of tool {:?}", self.def.name);
                self.errors.push(BuildError::InvalidPolicy { policy, reason });
                self
            }
        }
    }

    /// Whether the tool may run as a task (default [`TaskSupport::Forbidden`]).
    pub fn task_support(mut self, support: TaskSupport) -> Self {
        self.task_support = support;
        self
    }

    /// When the task is created (default [`crate::catalog::TaskStart::Immediate`]: before the
    /// handler runs). With [`crate::catalog::TaskStart::Handler`] the handler asks its MRTR
    /// questions synchronously and calls [`crate::Context::start_task`] for the rest.
    pub fn task_start(mut self, start: crate::catalog::TaskStart) -> Self {
        self.task_start = start;
        self
    }
}

/// A prompt: its definition (`prompts/list`) and its handler (`prompts/get`); like [`Tool`],
/// a `Prompt<NoHandler>` until [`Prompt::handler`].
pub struct Prompt<H = PromptHandler> {
    pub(crate) def: types::Prompt,
    args_set: bool,
    pub(crate) completers: Vec<(String, ArgCompleter)>,
    pub(crate) handler: H,
    pub(crate) check: CheckFn,
    pub(crate) access: Option<Access>,
    pub(crate) errors: Vec<BuildError>,
}

impl<H> std::fmt::Debug for Prompt<H> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prompt").field("def", &self.def).finish()
    }
}

/// The prompt arguments a JSON Schema object describes (properties, `required`, descriptions).
fn prompt_arguments(schema: &Value) -> Vec<PromptArgument> {
    let required: Vec<&str> =
        schema["required"].as_array().map(|r| r.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
    let Some(props) = schema["properties"].as_object() else { return Vec::new() };
    props
        .iter()
        .map(|(name, p)| PromptArgument {
            name: name.clone(),
            title: p["title"].as_str().map(str::to_owned),
            description: p["description"].as_str().map(str::to_owned),
            required: Some(required.contains(&name.as_str())),
        })
        .collect()
}

impl Prompt<NoHandler> {
    /// A prompt named `name`, without arguments until a handler or [`Prompt::argument`] adds some.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            def: types::Prompt::new(name),
            args_set: false,
            completers: Vec::new(),
            handler: NoHandler,
            check: no_check,
            access: None,
            errors: Vec::new(),
        }
    }

    /// The handler: an async function of extractors returning anything [`IntoPromptResult`].
    /// Its [`crate::Args`] type gives the prompt's `arguments` (unless set).
    pub fn handler<F, M>(mut self, handler: F) -> Prompt
    where
        F: Handler<M>,
        F::Output: IntoPromptResult,
    {
        if !self.args_set {
            if let Some(s) = F::arguments_schema() {
                self.def.arguments = Some(prompt_arguments(&s));
            }
        }
        Prompt {
            def: self.def,
            args_set: self.args_set,
            completers: self.completers,
            handler: PromptHandler(erased(handler, HandlerKind::Prompt, IntoPromptResult::into_prompt_result)),
            check: F::check,
            access: self.access,
            errors: self.errors,
        }
    }
}

impl<H> Prompt<H> {
    /// The wire definition as `prompts/list` shows it.
    pub fn definition(&self) -> &types::Prompt {
        &self.def
    }

    /// Adds an argument (then the handler's [`crate::Args`] type no longer decides them).
    pub fn argument(mut self, name: impl Into<String>, description: Option<&str>, required: bool) -> Self {
        let arg = PromptArgument {
            name: name.into(),
            description: description.map(str::to_owned),
            required: Some(required),
            ..PromptArgument::default()
        };
        self.def.arguments.get_or_insert_with(Vec::new).push(arg);
        self.args_set = true;
        self
    }

    /// Completes the argument `name` for `completion/complete`: `complete` gets the value typed
    /// so far and returns candidates (at most 100 are sent). Declares the `completions`
    /// capability.
    pub fn complete<F, I>(mut self, name: &str, complete: F) -> Self
    where
        F: Fn(&str) -> I + Send + Sync + 'static,
        I: IntoIterator,
        I::Item: Into<String>,
    {
        self.completers.push((name.to_owned(), Arc::new(move |v| complete(v).into_iter().map(Into::into).collect())));
        self
    }
}

/// Whether a [`Resource`] is one URI or an RFC 6570 template of many.
#[derive(Debug, Clone)]
pub(crate) enum ResourceDef {
    Static(types::Resource),
    Template(types::ResourceTemplate),
}

/// A resource (one URI) or resource template (RFC 6570, whose variables the handler receives as
/// [`crate::Args`]): its definition (`resources/list` or `resources/templates/list`) and its
/// handler (`resources/read`); like [`Tool`], a `Resource<NoHandler>` until [`Resource::handler`].
pub struct Resource<H = ResourceHandler> {
    pub(crate) def: ResourceDef,
    pub(crate) handler: H,
    pub(crate) check: CheckFn,
    pub(crate) access: Option<Access>,
    pub(crate) errors: Vec<BuildError>,
}

impl<H> std::fmt::Debug for Resource<H> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Resource").field("def", &self.def).finish()
    }
}

macro_rules! both {
    ($self:ident, $d:ident => $e:expr) => {
        match &mut $self.def {
            ResourceDef::Static($d) => $e,
            ResourceDef::Template($d) => $e,
        }
    };
}

impl Resource<NoHandler> {
    fn with(def: ResourceDef) -> Self {
        Self { def, handler: NoHandler, check: no_check, access: None, errors: Vec::new() }
    }

    /// The resource at `uri`, listed under `name`.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Self::with(ResourceDef::Static(types::Resource::new(uri, name)))
    }

    /// The resources matching the RFC 6570 template `uri_template`, listed under `name`.
    pub fn template(uri_template: impl Into<String>, name: impl Into<String>) -> Self {
        Self::with(ResourceDef::Template(types::ResourceTemplate {
            uri_template: uri_template.into(),
            name: name.into(),
            ..types::ResourceTemplate::default()
        }))
    }

    /// The handler: an async function of extractors returning anything [`IntoReadResult`]. For a
    /// template, [`crate::Args`] holds the matched variables (as strings).
    pub fn handler<F, M>(self, handler: F) -> Resource
    where
        F: Handler<M>,
        F::Output: IntoReadResult,
    {
        let handler = Arc::new(handler);
        let mime = self.mime();
        let erased: ResourceFn = Arc::new(move |ctx, uri, vars| {
            let args: Map<String, Value> = vars.into_iter().map(|(k, v)| (k, Value::String(v))).collect();
            let mut parts = RequestParts::new(ctx, args, HandlerKind::Resource);
            let mime = mime.clone();
            match handler.call(&mut parts) {
                Ok(fut) => Box::pin(async move {
                    let target = ReadTarget { uri: &uri, mime_type: mime.as_deref() };
                    fut.await.into_read_result(target)
                }),
                Err(e) => Box::pin(std::future::ready(Err(e))),
            }
        });
        Resource {
            def: self.def,
            handler: ResourceHandler(erased),
            check: F::check,
            access: self.access,
            errors: self.errors,
        }
    }
}

impl<H> Resource<H> {
    /// The MIME type (also used for text or bytes the handler returns).
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        both!(self, d => d.mime_type = Some(mime_type.into()));
        self
    }

    /// Annotations for the client (audience, priority, last modified).
    pub fn annotations(mut self, annotations: Annotations) -> Self {
        both!(self, d => d.annotations = Some(annotations));
        self
    }

    /// The size of the raw content in bytes (static resources only).
    pub fn size(mut self, bytes: u64) -> Self {
        if let ResourceDef::Static(d) = &mut self.def {
            d.size = Some(bytes);
        }
        self
    }

    fn mime(&self) -> Option<Arc<str>> {
        match &self.def {
            ResourceDef::Static(d) => d.mime_type.as_deref().map(Arc::from),
            ResourceDef::Template(d) => d.mime_type.as_deref().map(Arc::from),
        }
    }
}
