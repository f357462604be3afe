//! What a server offers: tools, resources, resource templates, prompts, and their handlers.

use crate::context::Context;
use crate::error::{BuildError, HandlerError};
use crate::template::UriTemplate;
use mcp_protocol::headers::HeaderParam;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// A boxed, sendable future.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// Type-erased tool handler: arguments in, serialized `CallToolResult` out.
pub(crate) type ToolFn =
    Arc<dyn Fn(Context, Map<String, Value>) -> BoxFuture<Result<Value, HandlerError>> + Send + Sync>;
/// Type-erased resource handler: URI and matched template variables in, serialized
/// `ReadResourceResult` out.
pub(crate) type ResourceFn =
    Arc<dyn Fn(Context, String, BTreeMap<String, String>) -> BoxFuture<Result<Value, HandlerError>> + Send + Sync>;
/// Type-erased prompt handler: string arguments in, serialized `GetPromptResult` out.
pub(crate) type PromptFn =
    Arc<dyn Fn(Context, Map<String, Value>) -> BoxFuture<Result<Value, HandlerError>> + Send + Sync>;
/// Completion handler: `(ref, argument, context)` of `completion/complete` in, `completion` object out.
pub(crate) type CompletionFn =
    Arc<dyn Fn(Context, Value, Value, Option<Value>) -> BoxFuture<Result<Value, HandlerError>> + Send + Sync>;

/// Completes one prompt argument: the value typed so far in, candidates out.
pub(crate) type ArgCompleter = Arc<dyn Fn(&str) -> Vec<String> + Send + Sync>;

/// A registered tool.
pub struct ToolEntry {
    pub(crate) name: String,
    pub(crate) def: Value,
    pub(crate) input: SchemaValidator,
    pub(crate) output: Option<SchemaValidator>,
    pub(crate) header_params: Arc<[HeaderParam]>,
    pub(crate) task_support: crate::defs::TaskSupport,
    pub(crate) task_start: crate::tasks::TaskStart,
    pub(crate) handler: ToolFn,
}

impl ToolEntry {
    /// The tool's `x-mcp-header` parameters (used by the HTTP transport to check headers).
    pub fn header_params(&self) -> &[HeaderParam] {
        &self.header_params
    }

    /// Whether the tool may run as a task.
    pub fn task_support(&self) -> crate::defs::TaskSupport {
        self.task_support
    }
}

impl std::fmt::Debug for ToolEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolEntry").field("name", &self.name).finish_non_exhaustive()
    }
}

/// A registered static resource.
#[derive(Clone)]
pub(crate) struct ResourceEntry {
    pub(crate) uri: String,
    pub(crate) def: Value,
    pub(crate) handler: ResourceFn,
}

/// A registered resource template.
#[derive(Clone)]
pub(crate) struct TemplateEntry {
    pub(crate) template: UriTemplate,
    pub(crate) def: Value,
    pub(crate) handler: ResourceFn,
}

/// A registered prompt.
#[derive(Clone)]
pub(crate) struct PromptEntry {
    pub(crate) name: String,
    pub(crate) def: Value,
    pub(crate) required_args: Vec<String>,
    pub(crate) completers: Vec<(String, ArgCompleter)>,
    pub(crate) handler: PromptFn,
}

/// An immutable snapshot of everything the server offers; replaced whole on change.
#[derive(Clone, Default)]
pub(crate) struct Catalog {
    pub(crate) tools: Vec<Arc<ToolEntry>>,
    pub(crate) tool_index: HashMap<String, usize>,
    pub(crate) resources: Vec<ResourceEntry>,
    pub(crate) resource_index: HashMap<String, usize>,
    pub(crate) templates: Vec<TemplateEntry>,
    pub(crate) prompts: Vec<PromptEntry>,
    pub(crate) prompt_index: HashMap<String, usize>,
}

impl Catalog {
    pub(crate) fn reindex(&mut self) {
        self.tool_index = self.tools.iter().enumerate().map(|(i, t)| (t.name.clone(), i)).collect();
        self.resource_index = self.resources.iter().enumerate().map(|(i, r)| (r.uri.clone(), i)).collect();
        self.prompt_index = self.prompts.iter().enumerate().map(|(i, p)| (p.name.clone(), i)).collect();
    }

    pub(crate) fn tool(&self, name: &str) -> Option<&Arc<ToolEntry>> {
        self.tool_index.get(name).map(|i| &self.tools[*i])
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
