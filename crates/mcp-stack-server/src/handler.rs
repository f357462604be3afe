//! Handlers and extractors: a handler is any async function whose parameters are extractors.
//! As in axum, the rule is in the types: any number of part extractors ([`FromRequestParts`]:
//! [`Context`], [`State<T>`], [`HttpRequest`]) in any order, then at most one extractor that
//! consumes the arguments ([`FromRequest`]: [`Args<T>`]), last. A second `Args<T>`, or one
//! before another parameter, does not compile.
//!
//! ```
//! use mcp_server::{Args, Context, State};
//! # #[derive(serde::Deserialize, schemars::JsonSchema)] struct Query { q: String }
//! # #[derive(Clone)] struct Db;
//! async fn search(State(db): State<Db>, ctx: Context, Args(query): Args<Query>) -> String {
//!     format!("{} results for {}", ctx.method(), query.q)
//! }
//! # fn register() -> mcp_server::Tool { mcp_server::Tool::new("search").handler(search) }
//! ```
//!
//! ```compile_fail
//! # use mcp_server::{Args, Context};
//! # #[derive(serde::Deserialize, schemars::JsonSchema)] struct Query { q: String }
//! // `Args` must come last: this is a compile error.
//! async fn search(Args(query): Args<Query>, ctx: Context) -> String { query.q }
//! # fn register() -> mcp_server::Tool { mcp_server::Tool::new("search").handler(search) }
//! ```

use crate::context::Context;
use crate::error::HandlerError;
pub(crate) use crate::state_map::StateMap;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use std::future::Future;
use std::sync::Arc;

/// The JSON Schema of `T`, as a tool `inputSchema`/`outputSchema` object.
pub fn schema_of<T: JsonSchema>() -> Value {
    let mut v =
        serde_json::to_value(schemars::schema_for!(T)).unwrap_or_else(|_| serde_json::json!({"type": "object"}));
    if let Some(o) = v.as_object_mut() {
        o.remove("title");
    }
    v
}

/// What kind of request a handler serves (extractors word their errors by it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum HandlerKind {
    /// `tools/call`: the arguments are the tool's `arguments`.
    Tool,
    /// `prompts/get`: the arguments are the prompt's (string) `arguments`.
    Prompt,
    /// `resources/read`: the arguments are the variables of the matched URI template.
    Resource,
}

/// The request as extractors see it: the context and the not-yet-taken arguments.
#[derive(Debug)]
pub struct RequestParts {
    pub(crate) ctx: Context,
    /// The arguments when they are not the request's own `arguments` (a resource template's
    /// variables); `None`: read them from the request, in place.
    pub(crate) args: Option<Value>,
    pub(crate) kind: HandlerKind,
}

fn empty_object() -> &'static Value {
    static EMPTY: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
    EMPTY.get_or_init(|| Value::Object(Map::new()))
}

impl RequestParts {
    /// Parts whose arguments are the request's own `arguments` (tools, prompts): borrowed from
    /// the request, never copied.
    pub(crate) fn of_request(ctx: Context, kind: HandlerKind) -> Self {
        Self { ctx, args: None, kind }
    }

    /// Parts with arguments of their own (a resource template's variables).
    pub(crate) fn new(ctx: Context, args: Map<String, Value>, kind: HandlerKind) -> Self {
        Self { ctx, args: Some(Value::Object(args)), kind }
    }

    /// The request context.
    pub fn context(&self) -> &Context {
        &self.ctx
    }

    /// What the handler serves.
    pub fn kind(&self) -> HandlerKind {
        self.kind
    }

    /// The arguments (an object; empty when the request has none), borrowed.
    pub fn arguments(&self) -> &Value {
        match &self.args {
            Some(a) => a,
            None => self.ctx.params().get("arguments").filter(|a| a.is_object()).unwrap_or_else(|| empty_object()),
        }
    }

    /// The arguments as an owned map (a copy when they are the request's own; prefer
    /// [`RequestParts::arguments`]).
    pub fn take_arguments(&mut self) -> Map<String, Value> {
        match self.args.take() {
            Some(Value::Object(a)) => a,
            _ => self.arguments().as_object().cloned().unwrap_or_default(),
        }
    }
}

/// An extractor that reads the request without consuming its arguments: any number of them,
/// in any position.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a handler parameter here",
    label = "not a part extractor",
    note = "a handler takes part extractors (Context, State<T>, HttpRequest) in any order, then at most one `Args<T>`, last"
)]
pub trait FromRequestParts: Sized + Send + 'static {
    /// Extracts the value, or refuses the request.
    fn from_request_parts(parts: &RequestParts) -> Result<Self, HandlerError>;

    /// Checked when the server is built: whether the server can ever supply it.
    fn check(_state: &StateMap) -> Result<(), String> {
        Ok(())
    }
}

/// Marks the [`FromRequest`] impl every [`FromRequestParts`] extractor has.
#[derive(Debug, Clone, Copy)]
pub enum ViaParts {}

/// Marks the [`FromRequest`] impl of an extractor that consumes the arguments.
#[derive(Debug, Clone, Copy)]
pub enum ViaArguments {}

/// The extractor in a handler's last position: it may consume the arguments (`M` is
/// `ViaArguments`), or be any [`FromRequestParts`] extractor (`M` is `ViaParts`).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a handler parameter",
    note = "a handler takes part extractors (Context, State<T>, HttpRequest) in any order, then at most one `Args<T>`, last"
)]
pub trait FromRequest<M = ViaArguments>: Sized + Send + 'static {
    /// Extracts the value, or refuses the request.
    fn from_request(parts: &mut RequestParts) -> Result<Self, HandlerError>;

    /// The JSON Schema of the arguments this extractor reads (a tool's `inputSchema`, a prompt's
    /// `arguments`), if it reads them.
    fn arguments_schema() -> Option<Value> {
        None
    }

    /// Checked when the server is built: whether the server can ever supply it.
    fn check(_state: &StateMap) -> Result<(), String> {
        Ok(())
    }
}

impl<T: FromRequestParts> FromRequest<ViaParts> for T {
    fn from_request(parts: &mut RequestParts) -> Result<Self, HandlerError> {
        T::from_request_parts(parts)
    }

    fn check(state: &StateMap) -> Result<(), String> {
        <T as FromRequestParts>::check(state)
    }
}

impl FromRequestParts for Context {
    fn from_request_parts(parts: &RequestParts) -> Result<Self, HandlerError> {
        Ok(parts.ctx.clone())
    }
}

/// The request's arguments, deserialized into `T` (after the tool's `inputSchema`, derived from
/// `T`, validated them). It consumes them: at most one per handler, as its last parameter.
#[derive(Debug, Clone, Default)]
pub struct Args<T>(pub T);

impl<T: DeserializeOwned + JsonSchema + Send + 'static> FromRequest for Args<T> {
    fn from_request(parts: &mut RequestParts) -> Result<Self, HandlerError> {
        let kind = parts.kind;
        T::deserialize(parts.arguments()).map(Args).map_err(|e| match kind {
            HandlerKind::Tool => HandlerError::tool(format!("Invalid arguments: {e}")),
            _ => HandlerError::invalid_params(format!("Invalid arguments: {e}")),
        })
    }

    fn arguments_schema() -> Option<Value> {
        Some(schema_of::<T>())
    }
}

/// Application state of type `T`, given once to [`crate::ServerBuilder::state`] and cloned into
/// each handler that asks for it (share mutable state through an `Arc`).
#[derive(Debug, Clone, Copy, Default)]
pub struct State<T>(pub T);

impl<T: Clone + Send + Sync + 'static> FromRequestParts for State<T> {
    fn from_request_parts(parts: &RequestParts) -> Result<Self, HandlerError> {
        parts.ctx.server().state_map().get::<T>().cloned().map(State).ok_or_else(|| {
            let message = format!("no {} state was given", std::any::type_name::<T>());
            mcp_protocol::ProtocolError::Misconfigured { message }.into()
        })
    }

    fn check(state: &StateMap) -> Result<(), String> {
        if state.contains::<T>() {
            Ok(())
        } else {
            Err(format!(
                "the handler asks for State<{0}>, but no {0} was given to ServerBuilder::state",
                std::any::type_name::<T>()
            ))
        }
    }
}

/// The HTTP request a call arrived in (method, URI, headers), when served over HTTP; `None`
/// over stdio.
#[derive(Debug, Clone)]
pub struct HttpRequest(pub Option<Arc<http::request::Parts>>);

impl FromRequestParts for HttpRequest {
    fn from_request_parts(parts: &RequestParts) -> Result<Self, HandlerError> {
        Ok(HttpRequest(parts.ctx.inner.env.http.clone()))
    }
}

/// A handler: an async function of extractors. `M` names the parameter list, so any function
/// of up to seven [`FromRequestParts`] parameters and a last [`FromRequest`] one implements it.
pub trait Handler<M>: Send + Sync + 'static {
    /// What the function returns.
    type Output: Send + 'static;
    /// The function's future.
    type Future: Future<Output = Self::Output> + Send + 'static;

    /// Extracts every parameter and calls the function.
    fn call(&self, parts: &mut RequestParts) -> Result<Self::Future, HandlerError>;

    /// The last parameter's arguments schema, if it reads the arguments.
    fn arguments_schema() -> Option<Value>;

    /// Every parameter's check, run when the server is built.
    fn check(state: &StateMap) -> Result<(), String>;
}

impl<F, Fut> Handler<()> for F
where
    F: Fn() -> Fut + Send + Sync + 'static,
    Fut: Future + Send + 'static,
    Fut::Output: Send + 'static,
{
    type Output = Fut::Output;
    type Future = Fut;

    fn call(&self, _parts: &mut RequestParts) -> Result<Fut, HandlerError> {
        Ok(self())
    }

    fn arguments_schema() -> Option<Value> {
        None
    }

    fn check(_state: &StateMap) -> Result<(), String> {
        Ok(())
    }
}

macro_rules! handler_impl {
    ($($t:ident),*) => {
        impl<F, Fut, M, $($t,)* L> Handler<(M, $($t,)* L)> for F
        where
            F: Fn($($t,)* L) -> Fut + Send + Sync + 'static,
            Fut: Future + Send + 'static,
            Fut::Output: Send + 'static,
            $($t: FromRequestParts,)*
            L: FromRequest<M>,
        {
            type Output = Fut::Output;
            type Future = Fut;

            #[allow(non_snake_case)]
            fn call(&self, parts: &mut RequestParts) -> Result<Fut, HandlerError> {
                $(let $t = $t::from_request_parts(parts)?;)*
                let last = L::from_request(parts)?;
                Ok(self($($t,)* last))
            }

            fn arguments_schema() -> Option<Value> {
                L::arguments_schema()
            }

            fn check(state: &StateMap) -> Result<(), String> {
                $(<$t as FromRequestParts>::check(state)?;)*
                L::check(state)
            }
        }
    };
}

handler_impl!();
handler_impl!(T1);
handler_impl!(T1, T2);
handler_impl!(T1, T2, T3);
handler_impl!(T1, T2, T3, T4);
handler_impl!(T1, T2, T3, T4, T5);
handler_impl!(T1, T2, T3, T4, T5, T6);
handler_impl!(T1, T2, T3, T4, T5, T6, T7);
