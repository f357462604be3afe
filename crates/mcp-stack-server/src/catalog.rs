//! What a server offers: tools, resources, resource templates, prompts, and their handlers.

use crate::access::{visible, Caller};
use crate::context::Context;
use crate::error::{BuildError, HandlerError};
use crate::template::UriTemplate;
use mcp_protocol::headers::HeaderParam;
use mcp_protocol::types::{self, CallToolResult, GetPromptResult, ReadResourceResult};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// A boxed, sendable future.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// Type-erased tool handler: the context (whose params hold the arguments) in, typed
/// `CallToolResult` out.
pub(crate) type ToolFn = Arc<dyn Fn(Context) -> BoxFuture<Result<CallToolResult, HandlerError>> + Send + Sync>;
/// Type-erased resource handler: URI and matched template variables in, typed
/// `ReadResourceResult` out.
pub(crate) type ResourceFn = Arc<
    dyn Fn(Context, String, BTreeMap<String, String>) -> BoxFuture<Result<ReadResourceResult, HandlerError>>
        + Send
        + Sync,
>;
/// Type-erased prompt handler: the context (whose params hold the string arguments) in, typed
/// `GetPromptResult` out.
pub(crate) type PromptFn = Arc<dyn Fn(Context) -> BoxFuture<Result<GetPromptResult, HandlerError>> + Send + Sync>;
/// Completion handler: `(ref, argument, context)` of `completion/complete` in, `completion` object out.
pub(crate) type CompletionFn =
    Arc<dyn Fn(Context, Value, Value, Option<Value>) -> BoxFuture<Result<Value, HandlerError>> + Send + Sync>;

/// Completes one prompt argument: the value typed so far in, candidates out.
pub(crate) type ArgCompleter = Arc<dyn Fn(&str) -> Vec<String> + Send + Sync>;

/// Whether a tool may run as a task (the tasks extension).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum TaskSupport {
    /// Never runs as a task (the default).
    #[default]
    Forbidden,
    /// Runs as a task when the client declares the tasks extension, synchronously otherwise.
    Optional,
    /// Runs only as a task; a client without the tasks extension gets `-32021`.
    Required,
}

/// When a task-capable tool's task is created.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum TaskStart {
    /// Before the handler runs (the default).
    #[default]
    Immediate,
    /// When the handler calls [`Context::start_task`] (MRTR rounds before it are
    /// answered synchronously). A handler that never calls it answers synchronously.
    Handler,
}

/// A registered tool.
pub struct ToolEntry {
    pub(crate) name: String,
    pub(crate) def: types::Tool,
    pub(crate) input: Arc<SchemaValidator>,
    pub(crate) output: Option<Arc<SchemaValidator>>,
    pub(crate) header_params: Arc<[HeaderParam]>,
    pub(crate) task_support: TaskSupport,
    pub(crate) task_start: TaskStart,
    pub(crate) access: Option<crate::access::Access>,
    /// Links a view (`_meta.ui.resourceUri`): its results must carry text content too.
    pub(crate) ui_linked: bool,
    pub(crate) rate_limit: Option<crate::rate_limit::Quota>,
    pub(crate) handler: ToolFn,
    /// Mounted from another server ([`crate::ServerBuilder::mount`]; its handler names it).
    pub(crate) mounted: bool,
}

impl ToolEntry {
    /// The tool's `x-mcp-header` parameters (their `Mcp-Param-*` headers must match the arguments).
    pub fn header_params(&self) -> &[HeaderParam] {
        &self.header_params
    }

    /// Whether the tool may run as a task.
    pub fn task_support(&self) -> TaskSupport {
        self.task_support
    }

    /// Whether the tool is marked read-only (`annotations.readOnlyHint: true`).
    pub fn is_read_only(&self) -> bool {
        self.def.annotations.as_ref().and_then(|a| a.read_only_hint) == Some(true)
    }

    /// Whether `caller` may see and call the tool (its [`crate::Access`] rule allows them).
    pub fn visible_to(&self, caller: &Caller<'_>) -> bool {
        visible(self.access.as_ref(), caller)
    }
}

impl std::fmt::Debug for ToolEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolEntry").field("name", &self.name).finish_non_exhaustive()
    }
}

/// The handler serving a URI and its template variables.
pub(crate) struct ResourceMatch<'a> {
    pub(crate) handler: &'a ResourceFn,
    pub(crate) vars: BTreeMap<String, String>,
}

/// A registered static resource.
pub(crate) struct ResourceEntry {
    pub(crate) uri: String,
    pub(crate) def: types::Resource,
    pub(crate) access: Option<crate::access::Access>,
    pub(crate) handler: ResourceFn,
    /// Mounted from another server.
    pub(crate) mounted: bool,
}

/// A registered resource template.
pub(crate) struct TemplateEntry {
    pub(crate) template: UriTemplate,
    pub(crate) def: types::ResourceTemplate,
    pub(crate) access: Option<crate::access::Access>,
    pub(crate) handler: ResourceFn,
    /// Mounted from another server.
    pub(crate) mounted: bool,
}

/// A registered prompt.
pub(crate) struct PromptEntry {
    pub(crate) name: String,
    pub(crate) def: types::Prompt,
    pub(crate) required_args: Vec<String>,
    pub(crate) completers: Vec<(String, ArgCompleter)>,
    pub(crate) access: Option<crate::access::Access>,
    pub(crate) handler: PromptFn,
    /// Mounted from another server.
    pub(crate) mounted: bool,
}

/// Name (or URI) to position. The keys are the server's own, so a fast hash is safe: a client
/// only looks names up, it cannot add any (SipHash was about 1% of a request's instructions).
pub(crate) type Index = HashMap<String, usize, foldhash::fast::RandomState>;

/// An immutable snapshot of everything the server offers; replaced whole on change. Entries are
/// shared (`Arc`), so a change copies pointers, not definitions; the serialised list pages and
/// `server/discover` result live with the snapshot, so a change drops them.
#[derive(Default)]
pub(crate) struct Catalog {
    pub(crate) tools: Vec<Arc<ToolEntry>>,
    pub(crate) tool_index: Index,
    pub(crate) resources: Vec<Arc<ResourceEntry>>,
    pub(crate) resource_index: Index,
    pub(crate) templates: Vec<Arc<TemplateEntry>>,
    pub(crate) prompts: Vec<Arc<PromptEntry>>,
    pub(crate) prompt_index: Index,
    /// Pages of `tools/list`, `resources/list`, `resources/templates/list`, `prompts/list`.
    pub(crate) pages: [PageCache; 4],
    /// Per list (indexed by [`ListKind`]): whether an entry has an access rule, so the list
    /// depends on the caller (made per request, `cacheScope: "private"`).
    pub(crate) restricted: [bool; 4],
    /// Whether a tool has a rate limit of its own (`Tool::rate_limit`).
    pub(crate) tool_quotas: bool,
    /// Whether a tool has `x-mcp-header` parameters (else HTTP skips their check).
    pub(crate) header_params: bool,
    /// Per list: how many times its entries changed at run time (listeners tell a change of
    /// the catalog from an announcement the application made itself).
    pub(crate) versions: [u64; 4],
    /// The `server/discover` result.
    pub(crate) discover: std::sync::OnceLock<Arc<[u8]>>,
}

/// The list methods whose pages a [`Catalog`] keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ListKind {
    Tools = 0,
    Resources = 1,
    Templates = 2,
    Prompts = 3,
}

/// Serialised pages of one list, each made on first request: one slot per page (the count is
/// fixed by the catalog's size, so the cache is bounded); pages at other offsets (a client's own
/// cursor arithmetic) are made per request.
#[derive(Default)]
pub(crate) struct PageCache(std::sync::OnceLock<Box<[PageSlot]>>);

/// One page's bytes, made once.
type PageSlot = std::sync::OnceLock<Arc<[u8]>>;

impl PageCache {
    /// The page starting at `start` (`size` per page, `total` items), made with `make` once.
    pub(crate) fn get(&self, start: usize, size: usize, total: usize, make: impl FnOnce() -> Vec<u8>) -> Arc<[u8]> {
        let slots = self.0.get_or_init(|| (0..total.div_ceil(size).max(1)).map(|_| Default::default()).collect());
        match slots.get(start / size).filter(|_| start.is_multiple_of(size)) {
            Some(slot) => slot.get_or_init(|| make().into()).clone(),
            None => make().into(),
        }
    }
}

impl Catalog {
    /// A copy for the next version: the entries shared, indexes and caches rebuilt by
    /// [`Catalog::reindex`].
    pub(crate) fn next_version(&self) -> Self {
        Self {
            tools: self.tools.clone(),
            resources: self.resources.clone(),
            templates: self.templates.clone(),
            prompts: self.prompts.clone(),
            versions: self.versions,
            ..Self::default()
        }
    }

    pub(crate) fn reindex(&mut self) {
        self.tool_index = self.tools.iter().enumerate().map(|(i, t)| (t.name.clone(), i)).collect();
        self.resource_index = self.resources.iter().enumerate().map(|(i, r)| (r.uri.clone(), i)).collect();
        self.prompt_index = self.prompts.iter().enumerate().map(|(i, p)| (p.name.clone(), i)).collect();
        self.restricted = [
            self.tools.iter().any(|e| e.access.is_some()),
            self.resources.iter().any(|e| e.access.is_some()),
            self.templates.iter().any(|e| e.access.is_some()),
            self.prompts.iter().any(|e| e.access.is_some()),
        ];
        self.tool_quotas = self.tools.iter().any(|t| t.rate_limit.is_some());
        self.header_params = self.tools.iter().any(|t| !t.header_params.is_empty());
    }

    pub(crate) fn tool(&self, name: &str) -> Option<&Arc<ToolEntry>> {
        self.tool_index.get(name).map(|i| &self.tools[*i])
    }

    /// The tool `name`, if `caller` may see it.
    pub(crate) fn tool_for(&self, name: &str, caller: &Caller<'_>) -> Option<&Arc<ToolEntry>> {
        self.tool(name).filter(|t| t.visible_to(caller))
    }

    /// The prompt `name`, if `caller` may see it.
    pub(crate) fn prompt_for(&self, name: &str, caller: &Caller<'_>) -> Option<&Arc<PromptEntry>> {
        self.prompt_index.get(name).map(|i| &self.prompts[*i]).filter(|p| visible(p.access.as_ref(), caller))
    }

    /// The handler serving `uri` for `caller`: its static resource, else the first template
    /// matching it (with the variables), among the items `caller` may see.
    pub(crate) fn resource_for(&self, uri: &str, caller: &Caller<'_>) -> Option<ResourceMatch<'_>> {
        if let Some(r) = self.resource_index.get(uri).map(|i| &self.resources[*i]) {
            if visible(r.access.as_ref(), caller) {
                return Some(ResourceMatch { handler: &r.handler, vars: BTreeMap::new() });
            }
        }
        self.templates.iter().filter(|t| visible(t.access.as_ref(), caller)).find_map(|t| {
            let vars = t.template.matches(uri)?;
            Some(ResourceMatch { handler: &t.handler, vars })
        })
    }

    /// Whether some resource or template of this catalog serves `uri` (for anyone).
    pub(crate) fn serves(&self, uri: &str) -> bool {
        self.resource_index.contains_key(uri) || self.templates.iter().any(|t| t.template.matches(uri).is_some())
    }

    /// Whether `caller` may read `uri` (what resource update announcements check).
    pub(crate) fn can_read(&self, uri: &str, caller: &Caller<'_>) -> bool {
        !self.restricted[ListKind::Resources as usize] && !self.restricted[ListKind::Templates as usize]
            || self.resource_for(uri, caller).is_some()
            || !self.serves(uri)
    }
}

/// A tool schema, checked for its dialect at build time and compiled into a validator on first
/// use (or at build time with `ServerBuilder::compile_schemas_at_build`). Lazy compilation keeps
/// start-up fast and idle memory small: most servers never see most of their tools called.
pub(crate) struct SchemaValidator {
    tool: String,
    schema: Value,
    draft: jsonschema::Draft,
    compiled: std::sync::OnceLock<Result<jsonschema::Validator, String>>,
}

impl SchemaValidator {
    /// Checks the dialect (default 2020-12; unknown dialects are refused) and the shape.
    pub(crate) fn new(tool: &str, schema: &Value) -> Result<Self, BuildError> {
        use jsonschema::Draft;
        let draft = match schema.get("$schema").and_then(Value::as_str) {
            None => Draft::Draft202012,
            Some(s) => match s.trim_end_matches('#') {
                "https://json-schema.org/draft/2020-12/schema" => Draft::Draft202012,
                "https://json-schema.org/draft/2019-09/schema" => Draft::Draft201909,
                "http://json-schema.org/draft-07/schema" => Draft::Draft7,
                "http://json-schema.org/draft-06/schema" => Draft::Draft6,
                "http://json-schema.org/draft-04/schema" => Draft::Draft4,
                other => {
                    return Err(BuildError::UnsupportedDialect { tool: tool.to_owned(), dialect: other.to_owned() })
                }
            },
        };
        if !schema.is_object() {
            return Err(BuildError::InvalidSchema { tool: tool.to_owned(), reason: "schema must be an object".into() });
        }
        Ok(Self { tool: tool.to_owned(), schema: schema.clone(), draft, compiled: std::sync::OnceLock::new() })
    }

    /// The compiled validator (compiling it on first use), or why the schema is invalid.
    pub(crate) fn get(&self) -> Result<&jsonschema::Validator, String> {
        self.compiled
            .get_or_init(|| {
                // Remote `$ref`s are never fetched: the crate is built without resolvers.
                jsonschema::options()
                    .with_draft(self.draft)
                    .should_validate_formats(true)
                    .build(&self.schema)
                    .map_err(|e| e.to_string())
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Compiles now; the build-time check.
    pub(crate) fn compile_now(&self) -> Result<(), BuildError> {
        self.get().map(|_| ()).map_err(|reason| BuildError::InvalidSchema { tool: self.tool.clone(), reason })
    }
}
