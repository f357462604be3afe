//! Per-method request handling.

use crate::context::{Context, RequestEnv};
use crate::defs::TaskSupport;
use crate::error::HandlerError;
use crate::server::Server;
use mcp_protocol::{Method, Params, ProtocolError, Request};
use serde_json::{json, Map, Value};

/// Whether `method` is a request method of revision 2026-07-28 that this server implements.
pub fn is_known_method(method: &str) -> bool {
    Method::parse(method).is_some()
}

/// Whether `method` may answer with `input_required` (and so accept `requestState`).
pub fn supports_mrtr(method: &str) -> bool {
    Method::parse(method).is_some_and(Method::accepts_input_responses)
}

pub(crate) fn tool_error(message: String) -> Value {
    json!({ "content": [{ "type": "text", "text": message }], "isError": true })
}

impl Server {
    pub(crate) async fn dispatch(
        &self,
        req: Request,
        env: RequestEnv,
        preset: Option<Box<crate::server::Preset>>,
    ) -> Result<Value, ProtocolError> {
        let method = Method::parse(&req.method).ok_or_else(|| crate::server::method_not_found(&req.method))?;
        if method == Method::SubscriptionsListen {
            return Err(ProtocolError::InvalidRequest("subscriptions/listen must be served as a stream".into()));
        }
        let ctx = self.prepare(req, env, preset)?;
        if method.is_task_method() {
            return self.serve_task_method(&ctx, method).await;
        }
        if let Some(served) = self.serve_fallback(&ctx, method).await {
            return served;
        }
        // Parsed once, borrowed from the request (the context owns it for the whole call).
        match method.params(ctx.params())? {
            Params::Discover => Ok(self.discover()),
            p @ Params::List { .. } if method == Method::SkillsList => self.serve_skills(p),
            Params::List { cursor } => {
                let c = self.catalog();
                match method {
                    Method::ToolsList => self.list_page(c.tools.iter().map(|t| t.def.clone()), "tools", cursor),
                    Method::ResourcesList => {
                        self.list_page(c.resources.iter().map(|r| r.def.clone()), "resources", cursor)
                    }
                    Method::ResourceTemplatesList => {
                        self.list_page(c.templates.iter().map(|r| r.def.clone()), "resourceTemplates", cursor)
                    }
                    _ => self.list_page(c.prompts.iter().map(|r| r.def.clone()), "prompts", cursor),
                }
            }
            Params::ToolsCall { name, arguments } => {
                self.call_tool(&ctx, name, arguments.cloned().unwrap_or_default()).await
            }
            Params::ResourcesRead { uri } => self.read_resource(&ctx, uri).await,
            p @ (Params::SkillsGet { .. } | Params::DirectoryRead { .. }) => self.serve_skills(p),
            Params::PromptsGet { name, arguments } => {
                self.get_prompt(&ctx, name, arguments.cloned().unwrap_or_default()).await
            }
            Params::Complete { reference, argument, value, argument_object, context } => {
                let (reference, argument_object) = (Value::Object(reference.clone()), argument_object.clone());
                let (argument, value, context) = (argument.to_owned(), value.to_owned(), context.cloned());
                self.complete(ctx, reference, argument_object, &argument, &value, context).await
            }
            // Listen is answered above; a method added to the table later is not served yet.
            _ => Err(crate::server::method_not_found(method.as_str())),
        }
    }

    pub(crate) fn outcome(
        &self,
        ctx: &Context,
        r: Result<Value, HandlerError>,
        tool: bool,
    ) -> Result<Value, ProtocolError> {
        match r {
            Ok(v) if v.is_object() => Ok(v),
            Ok(_) => Err(ProtocolError::Internal("handler result is not a JSON object".into())),
            Err(HandlerError::InputRequired(ir)) => Ok(self.input_required(ctx, ir)),
            Err(e @ HandlerError::Tool { .. }) if tool => Ok(tool_error(self.error_text(&e))),
            Err(e @ HandlerError::Tool { .. }) => Err(ProtocolError::Internal(self.error_text(&e))),
            Err(HandlerError::Protocol(e)) => Err(e),
        }
    }

    async fn call_tool(&self, ctx: &Context, name: &str, args: Map<String, Value>) -> Result<Value, ProtocolError> {
        let tool = self
            .catalog()
            .tool(name)
            .cloned()
            .ok_or_else(|| ProtocolError::invalid_params(format!("Unknown tool: {name}")))?;
        let args_value = Value::Object(args);
        let input = tool
            .input
            .get()
            .map_err(|e| ProtocolError::Internal(format!("tool {name} has an invalid inputSchema: {e}")))?;
        if !input.is_valid(&args_value) {
            let errors: Vec<String> =
                input.iter_errors(&args_value).map(|e| format!("{} at '{}'", e, e.instance_path())).collect();
            return Ok(tool_error(format!("Invalid arguments for tool {name}: {}", errors.join("; "))));
        }
        let Value::Object(args) = args_value else { unreachable!() };
        let r = match (tool.task_support, self.tasks()) {
            (TaskSupport::Forbidden, _) | (_, None) => (tool.handler)(ctx.clone(), args).await,
            (support, Some(rt)) if ctx.declares_tasks() => {
                let rt = rt.clone();
                rt.call_tool(self, ctx, tool.clone(), args, support == TaskSupport::Required).await?
            }
            (TaskSupport::Required, Some(_)) if ctx.inner.legacy => {
                return Err(ProtocolError::invalid_params(format!(
                    "tool {name} runs only as a task (the io.modelcontextprotocol/tasks extension of 2026-07-28)"
                )))
            }
            (TaskSupport::Required, Some(_)) => return Err(crate::tasks::extension_required()),
            (_, Some(_)) => (tool.handler)(ctx.clone(), args).await,
        };
        let result = self.outcome(ctx, r, true)?;
        if result.get("resultType").and_then(Value::as_str) == Some("task") {
            return Ok(result);
        }
        self.check_tool_output(&tool, result)
    }

    async fn read_resource(&self, ctx: &Context, uri: &str) -> Result<Value, ProtocolError> {
        let catalog = self.catalog();
        let r = if let Some(i) = catalog.resource_index.get(uri) {
            (catalog.resources[*i].handler)(ctx.clone(), uri.to_owned(), Default::default()).await
        } else if let Some((t, vars)) = catalog.templates.iter().find_map(|t| t.template.matches(uri).map(|v| (t, v))) {
            (t.handler)(ctx.clone(), uri.to_owned(), vars).await
        } else {
            return Err(ProtocolError::resource_not_found(uri));
        };
        let mut result = self.outcome(ctx, r, false)?;
        self.read_hints(&mut result);
        Ok(result)
    }

    async fn get_prompt(&self, ctx: &Context, name: &str, args: Map<String, Value>) -> Result<Value, ProtocolError> {
        let catalog = self.catalog();
        let prompt = catalog
            .prompt_index
            .get(name)
            .map(|i| &catalog.prompts[*i])
            .ok_or_else(|| ProtocolError::invalid_params(format!("Unknown prompt: {name}")))?;
        if let Some(missing) = prompt.required_args.iter().find(|a| !args.contains_key(*a)) {
            return Err(ProtocolError::invalid_params(format!(
                "Missing required argument {missing:?} for prompt {name}"
            )));
        }
        let r = (prompt.handler)(ctx.clone(), args).await;
        self.outcome(ctx, r, false)
    }

    async fn complete(
        &self,
        ctx: Context,
        reference: Value,
        argument_object: Value,
        argument: &str,
        value: &str,
        context: Option<Value>,
    ) -> Result<Value, ProtocolError> {
        let mut completion = match self.argument_completer(&reference, argument) {
            Some(complete) => {
                let values = complete(value);
                json!({ "values": values, "total": values.len(), "hasMore": false })
            }
            None => {
                let Some(handler) = self.inner.completion.clone() else {
                    return Err(ProtocolError::MethodNotFound(
                        "completion/complete (no completions capability)".into(),
                    ));
                };
                handler(ctx.clone(), reference, argument_object, context).await.map_err(|e| match e {
                    HandlerError::Protocol(p) => p,
                    other => ProtocolError::Internal(other.to_string()),
                })?
            }
        };
        if let Some(values) = completion.get_mut("values").and_then(Value::as_array_mut) {
            values.truncate(100);
        }
        Ok(json!({ "completion": completion }))
    }

    /// The completer a prompt registered for this argument, if the reference names one.
    fn argument_completer(&self, reference: &Value, arg: &str) -> Option<crate::registry::ArgCompleter> {
        if reference.get("type").and_then(Value::as_str) != Some("ref/prompt") {
            return None;
        }
        let name = reference.get("name").and_then(Value::as_str)?;
        let catalog = self.catalog();
        let prompt = catalog.prompt_index.get(name).map(|i| &catalog.prompts[*i])?;
        prompt.completers.iter().find(|(a, _)| a == arg).map(|(_, c)| c.clone())
    }
}
