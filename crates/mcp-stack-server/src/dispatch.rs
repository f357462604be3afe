//! Per-method request handling: one exhaustive `match` over the method's params.

use crate::access::Caller;
use crate::catalog::{ListKind, ToolEntry};
use crate::context::{Context, ContextInner, RequestEnv};
use crate::error::HandlerError;
use crate::inputs::InputRequired;
use crate::layers::{Answer, Chain, ListenStream, Next, Operation};
use crate::reply::Reply;
use crate::round::Preset;
use crate::round::RoundState;
use crate::server::{method_not_found, Server};
use crate::stage_set::Stage;
use crate::stages::Ran;
use mcp_protocol::meta::RequestMeta;
use mcp_protocol::state::{request_digest, Expectation, StateClaims};
use mcp_protocol::types::{self, CallToolResult};
use mcp_protocol::{Method, Params, ProtocolError, Request};
use serde_json::{Map, Value};
use std::sync::Arc;

fn now_secs() -> u64 {
    use std::time::{SystemTime, UNIX_EPOCH};
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// Whether `method` is a request method of revision 2026-07-28 that this server implements.
pub fn is_known_method(method: &str) -> bool {
    Method::parse(method).is_some()
}

/// Whether `method` may answer with `input_required` (and so accept `requestState`).
pub(crate) fn supports_mrtr(method: &str) -> bool {
    Method::parse(method).is_some_and(Method::accepts_input_responses)
}

/// The tool error a model reads when its arguments fail the tool's input schema. Out of line
/// and cold: the call path's stack frame stays small for the calls that pass.
#[cold]
#[inline(never)]
fn invalid_arguments(name: &str, input: &jsonschema::Validator, args: &Value) -> CallToolResult {
    let errors: Vec<String> = input.iter_errors(args).map(|e| format!("{} at '{}'", e, e.instance_path())).collect();
    CallToolResult::error(format!("Invalid arguments for tool {name}: {}", errors.join("; ")))
}

/// A handler's outcome, settled: its result, or the reply that stands for it (an
/// `input_required` result, a tool error the model reads).
pub(crate) enum Settled<R> {
    Done(R),
    Reply(Reply),
}

impl Server {
    /// Counts a caught panic and returns the error to answer with: `Internal error: the handler failed (ref ID)`,
    /// the id being the one in the log line (the panic message is not sent to the client unless
    /// [`ServerBuilder::expose_internal_errors`] is on). Logged here only when the one-line hook
    /// is not installed (otherwise the hook has written its line, with `ref=ID`, already).
    pub(crate) fn caught_panic(&self, panic: &(dyn std::any::Any + Send), task: Option<&str>) -> ProtocolError {
        self.inner.panics.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let msg = crate::panic::panic_message(panic);
        let reference = crate::panic::take_reference();
        let reference = match reference {
            Some(r) => r,
            None => {
                let r = crate::error::correlation_id();
                tracing::error!(panic = %msg, task, reference = %r, "handler panicked");
                r
            }
        };
        let message = match self.inner.config.expose_internal_errors {
            true => format!("handler panicked: {msg}"),
            false => "the handler failed".to_owned(),
        };
        ProtocolError::HandlerFailed { message, reference }
    }

    /// Handles one request (every method except `subscriptions/listen`, see [`Server::listen`])
    /// and returns its `result` as the wire carries it (`resultType` and `serverInfo`
    /// included), or the protocol error. Handler panics become `-32603`. For tests and
    /// embedding; a transport uses [`Server::handle_reply`].
    pub async fn handle(&self, req: Request, env: RequestEnv) -> Result<Value, ProtocolError> {
        self.process_with(req, env, None).await.map(|r| self.finish_result(r.into_value()))
    }

    /// [`Server::handle`] for a transport: the result stays typed (or pre-serialised: list
    /// pages are shared between requests) until [`Server::encode_response`] writes it, once,
    /// adding `resultType` where absent and `serverInfo` to `_meta`.
    pub async fn handle_reply(&self, req: Request, env: RequestEnv) -> Result<Reply, ProtocolError> {
        self.process_with(req, env, None).await
    }

    /// [`Server::handle_reply`] with the per-request fields (and MRTR state) given by a legacy
    /// session instead of read from `_meta` (and `requestState`). Not an `async fn`, which would
    /// hold the arguments beside the future they are moved into.
    pub(crate) fn process_with(
        &self,
        req: Request,
        env: RequestEnv,
        preset: Option<Box<Preset>>,
    ) -> impl std::future::Future<Output = Result<Reply, ProtocolError>> + Send + 'static {
        // The one place requests are traced (with `process_boxed`). Untraced, this is one
        // disabled-span check; traced, the call is boxed, so the request future keeps its size
        // (an async block awaiting `serve` would hold it twice).
        use futures::future::Either;
        let call = crate::telemetry::ServerCall::start(&req, &env, preset.as_deref());
        let serve = self.clone().serve_request(req, env, preset);
        match call {
            Some(call) => Either::Right(Box::pin(call.observe(serve))),
            None => Either::Left(serve),
        }
    }

    /// [`Server::process_with`] boxed, for a transport, on a server the future keeps: each way
    /// (traced or not) is boxed as its own type, so no adapter is polled on the way in. The
    /// untraced future is kept small: a larger one costs more per request to allocate and
    /// free.
    pub(crate) fn process_boxed(
        self,
        req: Request,
        env: RequestEnv,
        preset: Option<Box<Preset>>,
    ) -> crate::catalog::BoxFuture<Result<Reply, ProtocolError>> {
        match crate::telemetry::ServerCall::start(&req, &env, preset.as_deref()) {
            None => Box::pin(self.serve_request(req, env, preset)),
            Some(call) => Box::pin(call.observe(self.serve_request(req, env, preset))),
        }
    }

    /// [`Server::process_with`] without tracing: dispatch under the panic scope and timeout.
    pub(crate) fn serve_request(
        self,
        req: Request,
        env: RequestEnv,
        preset: Option<Box<Preset>>,
    ) -> impl std::future::Future<Output = Result<Reply, ProtocolError>> + Send + 'static {
        // Described only if it panics, from its context (`prepare` hands it over); operation
        // layers run before there is one, so a layered request is described by its method and
        // id until then.
        let info = match self.inner.config.stages.layers.is_empty() {
            true => crate::panic::Describe::Pending,
            false => crate::panic::Describe::early(&req.method, &req.id),
        };
        let limit = self.inner.config.request_timeout;
        let start = move |server: &Server| layered(server, req, env, preset);
        crate::deadline::Guarded::new(start, info, self, limit)
    }

    /// Validates the method and `_meta` and builds the handler context.
    pub(crate) fn prepare(
        &self,
        req: Request,
        env: RequestEnv,
        preset: Option<Box<Preset>>,
    ) -> Result<Context, ProtocolError> {
        if !is_known_method(&req.method) {
            return Err(method_not_found(&req.method));
        }
        let legacy = preset.is_some();
        let (meta, round) = match preset.map(|p| *p) {
            Some(Preset { meta, state: Some(state) }) => (meta, state),
            Some(Preset { meta, state: None }) => (meta, self.open_state(&req, &env)?),
            None => (RequestMeta::from_params(&req.params)?, self.open_state(&req, &env)?),
        };
        let mut params = req.params;
        if supports_mrtr(&req.method) {
            crate::inputs::bind_answers(&mut params, &round.keys);
        }
        let inner = ContextInner::new(self.clone(), req.id, req.method, meta, params, env, round.app);
        let inner = ContextInner { legacy, ..inner };
        let ctx = Context { inner: Arc::new(inner) };
        // From here on, a panic in this request is described from its context.
        crate::panic::describe_with(&ctx);
        Ok(ctx)
    }

    fn open_state(&self, req: &Request, env: &RequestEnv) -> Result<RoundState, ProtocolError> {
        self.open_state_at(req, env, None)
    }

    /// Opens `requestState` as of `now` (seconds since the epoch; `Some(0)` ignores expiry, for
    /// state that never left the server; `None`: the clock, read only when there is state).
    pub(crate) fn open_state_at(
        &self,
        req: &Request,
        env: &RequestEnv,
        now: Option<u64>,
    ) -> Result<RoundState, ProtocolError> {
        match req.params.get("inputResponses") {
            None | Some(Value::Object(_)) => {}
            Some(_) => return Err(ProtocolError::invalid_params("inputResponses must be an object")),
        }
        let sealed = match req.params.get("requestState") {
            None => return Ok(RoundState::default()),
            Some(Value::String(s)) => s,
            Some(_) => return Err(ProtocolError::invalid_params("requestState must be a string")),
        };
        if !supports_mrtr(&req.method) {
            return Err(ProtocolError::invalid_params(format!("{} does not accept requestState", req.method)));
        }
        let digest = request_digest(&req.method, &req.params);
        let expect = Expectation {
            audience: &self.inner.config.rounds.state_audience,
            principal: env.principal.as_deref(),
            method: &req.method,
            digest: &digest,
        };
        self.inner
            .config
            .rounds
            .keys
            .open(sealed, &expect, now.unwrap_or_else(now_secs))
            .map(|c| RoundState { app: c.app, keys: c.keys })
            .map_err(|e| ProtocolError::invalid_params(format!("Invalid requestState: {e}")))
    }

    /// How long the state sealed for `ir` lives: the short lifetime when no person answers the
    /// round (only `roots/list`, or no input request), the long one otherwise.
    fn state_ttl(&self, ir: &InputRequired) -> u64 {
        let c = &self.inner.config.rounds;
        let automatic = ir.requests.values().all(|r| r.get("method").and_then(Value::as_str) == Some("roots/list"));
        if automatic {
            c.automatic_state_ttl_secs.min(c.state_ttl_secs)
        } else {
            c.state_ttl_secs
        }
    }

    /// Turns a handler's `InputRequired` into an `input_required` result with sealed state.
    pub(crate) fn input_required(&self, ctx: &Context, ir: InputRequired) -> Reply {
        let claims = StateClaims {
            sub: ctx.principal().map(str::to_owned),
            aud: self.inner.config.rounds.state_audience.clone(),
            exp: now_secs() + self.state_ttl(&ir),
            method: ctx.method().to_owned(),
            digest: request_digest(ctx.method(), ctx.params()),
            app: ir.state,
            keys: ir.requests.keys().cloned().collect(),
        };
        let state = Some(self.inner.config.rounds.keys.seal(&claims));
        match serde_json::from_value::<types::InputRequests>(Value::Object(ir.requests.clone())) {
            Ok(requests) => types::InputRequiredResult::new(Some(requests), state).into(),
            // Requests the schema types do not describe (an extension's method): sent as given.
            Err(_) => {
                let mut out = Map::new();
                out.insert("resultType".into(), types::ResultType::InputRequired.as_str().into());
                out.insert("inputRequests".into(), Value::Object(ir.requests));
                out.insert("requestState".into(), state.into());
                Value::Object(out).into()
            }
        }
    }

    /// Checks a tool's result: the text fallback of a view-linked tool, and `structuredContent`
    /// against the tool's `outputSchema` (when it declares one).
    pub(crate) fn check_tool_output(&self, tool: &ToolEntry, result: &CallToolResult) -> Result<(), ProtocolError> {
        let name = &tool.name;
        if tool.ui_linked && crate::apps::lacks_fallback(result) {
            return Err(ProtocolError::InvalidResult {
                message: format!(
                    "tool {name} shows a view (_meta.ui.resourceUri) and must return text content too, \
                     for hosts that do not render apps"
                ),
            });
        }
        let Some(out) = &tool.output else { return Ok(()) };
        let out = out.get().map_err(|e| ProtocolError::Misconfigured {
            message: format!("tool {name} has an invalid outputSchema: {e}"),
        })?;
        if result.is_error != Some(true) {
            let Some(sc) = &result.structured_content else {
                let message = format!("tool {name} declares an outputSchema but returned no structuredContent");
                return Err(ProtocolError::InvalidResult { message });
            };
            if let Some(e) = out.iter_errors(sc).next() {
                let message = format!("tool {name} returned structuredContent that violates its outputSchema: {e}");
                return Err(ProtocolError::InvalidResult { message });
            }
        }
        Ok(())
    }

    /// A page of list `kind` as `ctx`'s caller may see it.
    fn catalog_page(&self, kind: ListKind, cursor: Option<&str>, ctx: &Context) -> Result<Reply, ProtocolError> {
        self.inner.config.lists.catalog_page(&self.catalog(), kind, cursor, &ctx.caller())
    }

    /// Serves one request: its context is prepared now, then the call runs. Not an `async fn`:
    /// one would keep the request, environment and preset for the whole call beside the context
    /// they were moved into (the request future is moved whole per request, so its size costs
    /// time). Called at the request future's first poll, in its panic scope
    /// ([`crate::deadline::Guarded`]).
    pub(crate) fn dispatch(
        &self,
        req: Request,
        env: RequestEnv,
        preset: Option<Box<Preset>>,
    ) -> impl std::future::Future<Output = Result<Reply, ProtocolError>> + Send + 'static {
        use futures::future::Either;
        match self.begin(req, env, preset) {
            Ok((ctx, method, continuation)) => Either::Right(Self::serve_call(ctx, method, continuation)),
            Err(e) => Either::Left(std::future::ready(Err(e))),
        }
    }

    /// The request's context, its method, and whether it is a later round of a multi
    /// round-trip request.
    fn begin(
        &self,
        req: Request,
        env: RequestEnv,
        preset: Option<Box<Preset>>,
    ) -> Result<(Context, Method, bool), ProtocolError> {
        let method = Method::parse(&req.method).ok_or_else(|| method_not_found(&req.method))?;
        if method == Method::SubscriptionsListen {
            return Err(ProtocolError::InvalidRequest("subscriptions/listen must be served as a stream".into()));
        }
        // The later rounds of a multi round-trip request spend nothing (`prepare` checks that
        // their state is genuine).
        let continuation =
            req.params.get("requestState").is_some() || preset.as_ref().is_some_and(|p| p.state.is_some());
        Ok((self.prepare(req, env, preset)?, method, continuation))
    }

    /// Serves a prepared call. It owns the context and borrows the server from it, so its
    /// future borrows nothing: the boxed request future is this one under its guard, with no
    /// block around it to keep a server alive (one more poll function and stack frame on
    /// every request's path).
    async fn serve_call(ctx: Context, method: Method, continuation: bool) -> Result<Reply, ProtocolError> {
        let this = ctx.serving();
        if !continuation && this.inner.stages.has(Stage::RateLimits) {
            crate::stages::spend(this, &ctx, method).await?;
        }
        if method.is_task_method() {
            return Box::pin(crate::tasks::wire::serve_method(this, &ctx, method)).await;
        }
        // Boxed, and only with a fallback: most servers have none, and its code would sit in
        // every request's path.
        if this.inner.config.extensions.fallback.is_some() {
            if let Some(served) = Box::pin(this.serve_fallback(&ctx, method)).await {
                return served;
            }
        }
        // Parsed once, borrowed from the request (the context owns it for the whole call).
        match method.params(ctx.params())? {
            Params::Discover => Ok(this.discover()),
            Params::ToolsList { cursor } => this.catalog_page(ListKind::Tools, cursor, &ctx),
            Params::ResourcesList { cursor } => this.catalog_page(ListKind::Resources, cursor, &ctx),
            Params::ResourceTemplatesList { cursor } => this.catalog_page(ListKind::Templates, cursor, &ctx),
            Params::PromptsList { cursor } => this.catalog_page(ListKind::Prompts, cursor, &ctx),
            Params::ToolsCall { name, arguments } => this.call_tool(&ctx, name, arguments).await,
            Params::ResourcesRead { uri } => this.read_resource(&ctx, uri).await,
            Params::PromptsGet { name, arguments } => this.get_prompt(&ctx, name, arguments).await,
            Params::Complete { reference, argument, value, argument_object, context } => {
                let (reference, argument_object) = (Value::Object(reference.clone()), argument_object.clone());
                let (argument, value, context) = (argument.to_owned(), value.to_owned(), context.cloned());
                let server = this.clone();
                Box::pin(server.complete(ctx, reference, argument_object, &argument, &value, context)).await
            }
            Params::SkillsList { cursor } => crate::skills::list(this, cursor).map(Reply::from),
            Params::SkillsGet { uri } => crate::skills::get(this, uri).map(Reply::from),
            Params::DirectoryRead { uri, cursor } => crate::skills::directory_read(this, uri, cursor).map(Reply::from),
            // Served above, before the params are read.
            Params::Listen { .. }
            | Params::TasksGet { .. }
            | Params::TasksCancel { .. }
            | Params::TaskUpdate { .. } => Err(method_not_found(method.as_str())),
        }
    }

    /// Settles a handler's outcome: input requests become an `input_required` result; a tool
    /// error a result the model reads (for tools) or `-32603` (otherwise).
    pub(crate) fn settle<R>(
        &self,
        ctx: &Context,
        r: Result<R, HandlerError>,
        tool: bool,
    ) -> Result<Settled<R>, ProtocolError> {
        match r {
            Ok(v) => Ok(Settled::Done(v)),
            Err(HandlerError::InputRequired(ir)) => Ok(Settled::Reply(self.input_required(ctx, ir))),
            Err(e @ HandlerError::Tool { .. }) if tool => {
                Ok(Settled::Reply(CallToolResult::error(self.error_text(&e)).into()))
            }
            Err(e @ HandlerError::Tool { .. }) => Err(crate::error::handler_failed(self.error_text(&e))),
            Err(HandlerError::Protocol(e)) => Err(e),
        }
    }

    /// [`Server::settle`] for JSON results (a fallback's): they must be objects.
    pub(crate) fn outcome(
        &self,
        ctx: &Context,
        r: Result<Value, HandlerError>,
        tool: bool,
    ) -> Result<Reply, ProtocolError> {
        match self.settle(ctx, r, tool)? {
            Settled::Done(v) if v.is_object() => Ok(v.into()),
            Settled::Done(_) => {
                Err(ProtocolError::InvalidResult { message: "handler result is not a JSON object".into() })
            }
            Settled::Reply(r) => Ok(r),
        }
    }

    /// `tools/call`: lookup (access rules) -> validate -> handler (through the installed
    /// stages: result cache, task decision) -> settle.
    async fn call_tool(
        &self,
        ctx: &Context,
        name: &str,
        arguments: Option<&Map<String, Value>>,
    ) -> Result<Reply, ProtocolError> {
        let tool = crate::stages::tool(self, ctx, name)?;
        let input = tool.input.get().map_err(|e| ProtocolError::Misconfigured {
            message: format!("tool {name} has an invalid inputSchema: {e}"),
        })?;
        let empty = Value::Object(Map::new());
        let args = ctx.params().get("arguments").filter(|_| arguments.is_some()).unwrap_or(&empty);
        if !input.is_valid(args) {
            return Ok(invalid_arguments(name, input, args).into());
        }
        let (r, slot) = match crate::stages::run_tool(self, ctx, &tool, args).await? {
            Ran::Answered(reply) => return Ok(reply),
            Ran::Done(r, slot) => (r, slot),
        };
        let result = match self.settle(ctx, r, true)? {
            Settled::Done(result) => result,
            Settled::Reply(reply) => return Ok(reply),
        };
        self.check_tool_output(&tool, &result)?;
        match slot.filter(|_| result.is_error != Some(true)) {
            Some(slot) => Box::pin(slot.store(self, result)).await,
            None => Ok(result.into()),
        }
    }

    /// The fallback's outcome for `ctx`'s request, when the server has a fallback that serves it.
    pub(crate) async fn serve_fallback(&self, ctx: &Context, method: Method) -> Option<Result<Reply, ProtocolError>> {
        let offered = crate::fallback::FALLBACK_METHODS.contains(&method)
            && (!method.is_task_method() || self.fallback_serves_tasks());
        let fallback = self.inner.config.extensions.fallback.as_ref().filter(|_| offered)?;
        let mut served = fallback.serve(ctx.clone())?.await;
        // Results the schema makes cacheable get this server's hints where the fallback gave
        // none (a proxied legacy server has no such fields).
        if let Ok(result) = &mut served {
            match method {
                Method::ResourcesRead => self.inner.config.lists.missing_hints(result, true),
                Method::ToolsList | Method::ResourcesList | Method::ResourceTemplatesList | Method::PromptsList => {
                    self.inner.config.lists.missing_hints(result, false)
                }
                _ => {}
            }
        }
        Some(self.outcome(ctx, served, method == Method::ToolsCall))
    }

    async fn read_resource(&self, ctx: &Context, uri: &str) -> Result<Reply, ProtocolError> {
        let catalog = self.catalog();
        let Some(found) = catalog.resource_for(uri, &ctx.caller()) else {
            return Err(ProtocolError::resource_not_found(uri));
        };
        let cached = crate::stages::caches_reads(self, ctx);
        if cached {
            // Boxed, as every path most requests do not take: the request future stays small.
            if let Some(hit) = Box::pin(crate::stages::cached_read(self, ctx, uri)).await {
                return Ok(hit);
            }
        }
        let r = (found.handler)(ctx.clone(), uri.to_owned(), found.vars).await;
        // Settled outside a `match` whose arms await: the matched temporary would keep its
        // room in this future.
        let mut result = match self.settle(ctx, r, false)? {
            Settled::Done(result) => result,
            Settled::Reply(reply) => return Ok(reply),
        };
        self.inner.config.lists.read_hints(&mut result);
        if cached {
            return Box::pin(crate::stages::store_read(self, ctx, uri, result)).await;
        }
        Ok(result.into())
    }

    async fn get_prompt(
        &self,
        ctx: &Context,
        name: &str,
        arguments: Option<&Map<String, Value>>,
    ) -> Result<Reply, ProtocolError> {
        let catalog = self.catalog();
        let prompt = catalog
            .prompt_for(name, &ctx.caller())
            .ok_or_else(|| ProtocolError::invalid_params(format!("Unknown prompt: {name}")))?;
        let given = |a: &String| arguments.is_some_and(|args| args.contains_key(a));
        if let Some(missing) = prompt.required_args.iter().find(|a| !given(a)) {
            return Err(ProtocolError::invalid_params(format!(
                "Missing required argument {missing:?} for prompt {name}"
            )));
        }
        let r = (prompt.handler)(ctx.clone()).await;
        match self.settle(ctx, r, false)? {
            Settled::Done(result) => Ok(result.into()),
            Settled::Reply(reply) => Ok(reply),
        }
    }

    async fn complete(
        &self,
        ctx: Context,
        reference: Value,
        argument_object: Value,
        argument: &str,
        value: &str,
        context: Option<Value>,
    ) -> Result<Reply, ProtocolError> {
        let mut completion = match self.argument_completer(&reference, argument, &ctx.caller()) {
            Some(complete) => {
                let values = complete(value);
                let total = Some(values.len() as u64);
                types::Completion { values, total, has_more: Some(false) }
            }
            // A prompt or template the caller may not see has no completions (the handler never
            // hears of it).
            None if self.hidden_reference(&reference, &ctx.caller()) && self.inner.completion.is_some() => {
                types::Completion { values: Vec::new(), total: Some(0), has_more: Some(false) }
            }
            None => {
                let Some(handler) = self.inner.completion.clone() else {
                    return Err(ProtocolError::MethodNotFound {
                        method: "completion/complete".into(),
                        detail: Some("completion/complete (no completions capability)".into()),
                    });
                };
                let completion =
                    handler(ctx.clone(), reference, argument_object, context).await.map_err(|e| match e {
                        HandlerError::Protocol(p) => p,
                        other => crate::error::handler_failed(other.to_string()),
                    })?;
                serde_json::from_value(completion).map_err(|e| ProtocolError::InvalidResult {
                    message: format!("the completion handler's result is not a completion: {e}"),
                })?
            }
        };
        completion.values.truncate(100);
        Ok(types::CompleteResult { completion, ..Default::default() }.into())
    }

    /// The completer a prompt registered for this argument, if the reference names one.
    fn argument_completer(
        &self,
        reference: &Value,
        arg: &str,
        caller: &Caller<'_>,
    ) -> Option<crate::catalog::ArgCompleter> {
        if reference.get("type").and_then(Value::as_str) != Some("ref/prompt") {
            return None;
        }
        let name = reference.get("name").and_then(Value::as_str)?;
        let catalog = self.catalog();
        let prompt = catalog.prompt_for(name, caller)?;
        prompt.completers.iter().find(|(a, _)| a == arg).map(|(_, c)| c.clone())
    }

    /// Whether a completion reference names a prompt or resource template `caller` may not see.
    fn hidden_reference(&self, reference: &Value, caller: &Caller<'_>) -> bool {
        let catalog = self.catalog();
        let field = |k: &str| reference.get(k).and_then(Value::as_str);
        match field("type") {
            Some("ref/prompt") => field("name").is_some_and(|name| {
                catalog.prompt_index.contains_key(name) && catalog.prompt_for(name, caller).is_none()
            }),
            Some("ref/resource") => field("uri").is_some_and(|uri| {
                catalog
                    .templates
                    .iter()
                    .any(|t| t.template.as_str() == uri && !crate::access::visible(t.access.as_ref(), caller))
            }),
            _ => false,
        }
    }
}

impl Chain for crate::server::ServerInner {
    fn layers(&self) -> &[Arc<dyn crate::layers::OperationLayer>] {
        &self.config.stages.layers
    }

    fn serve(self: Arc<Self>, op: Operation) -> crate::fallback::BoxFuture<Result<Reply, ProtocolError>> {
        let server = Server { inner: self };
        match op.answer {
            Answer::Reply(preset) => Box::pin(server.dispatch(op.request, op.env, preset)),
            // Opened now, as the innermost layer passes the request on; the layers get the
            // empty result that stands for the stream, or its refusal.
            Answer::Stream(to) => {
                let opened = crate::listen::open(&server, op.request, op.env).map(|stream| {
                    let _ = to.send(Box::pin(stream));
                    Reply::from(Value::Object(Map::new()))
                });
                Box::pin(std::future::ready(opened))
            }
        }
    }
}

/// Serves a request through the layers (straight to `dispatch` when there are none). Not an
/// `async fn`: one would hold the arguments beside the future they are moved into.
pub(crate) fn layered(
    server: &Server,
    request: Request,
    env: RequestEnv,
    preset: Option<Box<Preset>>,
) -> impl std::future::Future<Output = Result<Reply, ProtocolError>> + Send + 'static {
    use futures::future::Either;
    let Some(first) = server.inner.config.stages.layers.first() else {
        return Either::Left(server.dispatch(request, env, preset));
    };
    // The first layer's own (boxed) future: the chain adds nothing to the request future.
    let next = Next::new(server.inner.clone(), 1);
    Either::Right(first.call(Operation::call(request, env, preset), next))
}

/// Serves a `subscriptions/listen` request through the layers (in the panic scope): the
/// stream the end of the chain opened, or the refusal.
pub(crate) async fn listen_layered(
    server: &Server,
    request: Request,
    env: RequestEnv,
) -> Result<ListenStream, ProtocolError> {
    use futures::FutureExt;
    let (to, mut opened) = tokio::sync::oneshot::channel();
    let next = Next::new(server.inner.clone(), 0);
    let info = crate::panic::Describe::info(&request.method, &request.id, &request.params);
    let op = Operation { request, env, answer: Answer::Stream(to) };
    // Started at the first poll, in the panic scope: `run` calls the first layer at once,
    // and a layer's own code may panic before it returns its future.
    let chain = std::panic::AssertUnwindSafe(async move { next.run(op).await }).catch_unwind();
    match crate::panic::scoped(info, chain).await {
        Ok(r) => r?,
        Err(panic) => return Err(server.caught_panic(&*panic, None)),
    };
    // The end of the chain hands the stream over as it is reached: a chain that returned
    // without it was answered by a layer.
    opened
        .try_recv()
        .map_err(|_| ProtocolError::InvalidRequest("subscriptions/listen was answered in place of its stream".into()))
}
