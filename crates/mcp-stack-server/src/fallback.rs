//! A dynamic backend for the catalog methods: a [`Fallback`] serves `tools/*`, `resources/*`,
//! `prompts/*` and `completion/complete` requests from somewhere other than the registered
//! catalog (a proxy forwarding to another server, a catalog kept in a database).
//!
//! The framework still does everything around the request: `_meta` validation, the
//! `requestState` check and its binding of `inputResponses` to the issued keys, sealing the
//! state of an [`crate::InputRequired`] outcome, panics, timeouts, the legacy session bridge and
//! result encoding. A fallback only sees requests whose method is in [`FALLBACK_METHODS`], and
//! may decline one (return `None`) to let the catalog serve it as usual.
//!
//! A fallback whose [`Fallback::serves_tasks`] is true also offers the tasks extension: the
//! server advertises it, a `tools/call` that declares it reaches the fallback as it is (the
//! fallback may answer with a `CreateTaskResult`, `resultType: "task"`), and `tasks/get`,
//! `tasks/update` and `tasks/cancel` go to the fallback after the framework's gate (a legacy
//! request gets -32601, a request that does not declare the extension -32021, invalid params
//! -32602). A task-method request the fallback declines goes to the server's own tasks.
//!
//! ```
//! use mcp_server::fallback::{BoxFuture, Fallback};
//! use mcp_server::{Context, HandlerError, Server};
//! use serde_json::{json, Value};
//!
//! struct Everything;
//! impl Fallback for Everything {
//!     fn serve(&self, ctx: Context) -> Option<BoxFuture<Result<Value, HandlerError>>> {
//!         (ctx.method() == "tools/list").then(|| {
//!             Box::pin(async { Ok(json!({ "tools": [] })) }) as BoxFuture<_>
//!         })
//!     }
//! }
//! let server = Server::builder("dynamic", "1.0.0").fallback(std::sync::Arc::new(Everything)).build().unwrap();
//! # drop(server);
//! ```

/// The boxed future a [`Fallback`] returns.
pub use crate::catalog::BoxFuture;
use crate::context::Context;
use crate::error::HandlerError;
use mcp_protocol::Method;
use serde_json::Value;

/// The methods a [`Fallback`] is offered (the `tasks/*` ones only when it
/// [serves tasks](Fallback::serves_tasks)).
pub const FALLBACK_METHODS: [Method; 11] = [
    Method::ToolsList,
    Method::ToolsCall,
    Method::ResourcesList,
    Method::ResourceTemplatesList,
    Method::ResourcesRead,
    Method::PromptsList,
    Method::PromptsGet,
    Method::Complete,
    Method::TasksGet,
    Method::TasksUpdate,
    Method::TasksCancel,
];

/// Serves catalog requests dynamically (see the [module docs](self)).
///
/// The returned value is the method's result object (`ListToolsResult`, `CallToolResult`, ...).
/// Errors convert as a handler's do: [`HandlerError::InputRequired`] becomes an
/// `input_required` result with sealed state (read it back with [`Context::round_state`] and
/// the answers with [`Context::input_responses`]), a tool error of `tools/call` becomes an
/// `isError` result, a protocol error is answered as that error.
pub trait Fallback: Send + Sync + 'static {
    /// Serves `ctx`'s request, or returns `None` to let the registered catalog serve it.
    fn serve(&self, ctx: Context) -> Option<BoxFuture<Result<Value, HandlerError>>>;

    /// Whether this fallback serves the tasks extension (see the [module docs](self)); checked
    /// on every request, so it may follow a backend that gains or loses the extension.
    fn serves_tasks(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::RequestEnv;
    use crate::inputs::InputRequired;
    use crate::Server;
    use mcp_protocol::ProtocolError;
    use mcp_protocol::Request;
    use serde_json::json;
    use std::sync::Arc;

    /// Lists one tool, answers `tools/call` of "ask" with an input round then the answer, and
    /// declines everything else.
    struct Dynamic;

    impl Fallback for Dynamic {
        fn serve(&self, ctx: Context) -> Option<BoxFuture<Result<Value, HandlerError>>> {
            let fut: BoxFuture<Result<Value, HandlerError>> = match ctx.method() {
                "tools/list" => Box::pin(async { Ok(json!({ "tools": [{ "name": "ask", "inputSchema": {} }] })) }),
                "tools/call" if ctx.params().get("name") == Some(&json!("fail")) => {
                    Box::pin(async { Err(HandlerError::tool("it failed")) })
                }
                "tools/call" => Box::pin(async move {
                    match ctx.input_responses().and_then(|r| r.get("q")).cloned() {
                        Some(answer) => Ok(json!({ "content": [], "structuredContent": answer })),
                        None => {
                            let mut ir = InputRequired { state: json!({ "round": 1 }), ..Default::default() };
                            ir.requests.insert("q".into(), json!({ "method": "roots/list", "params": {} }));
                            Err(HandlerError::InputRequired(ir))
                        }
                    }
                }),
                _ => return None,
            };
            Some(fut)
        }
    }

    /// Serves tasks: a `tools/call` that declares them creates task "t1", `tasks/*` of "t1"
    /// answer, any other id is declined (left to the server's own tasks).
    struct Tasking;

    impl Fallback for Tasking {
        fn serve(&self, ctx: Context) -> Option<BoxFuture<Result<Value, HandlerError>>> {
            let task = json!({ "taskId": "t1", "status": "working", "createdAt": "2026-01-01T00:00:00Z" });
            let declares = ctx.declares_tasks();
            let fut: BoxFuture<Result<Value, HandlerError>> = match ctx.method() {
                "tools/call" if declares => Box::pin(async move {
                    let mut created = task;
                    created["resultType"] = json!("task");
                    Ok(created)
                }),
                "tools/call" => Box::pin(async { Ok(json!({ "content": [] })) }),
                _ if ctx.params().get("taskId") != Some(&json!("t1")) => return None,
                "tasks/get" => Box::pin(async move { Ok(task) }),
                _ => Box::pin(async { Ok(json!({})) }),
            };
            Some(fut)
        }

        fn serves_tasks(&self) -> bool {
            true
        }
    }

    fn request(method: &str, params: Value) -> Request {
        with_caps(method, params, json!({ "roots": {} }))
    }

    fn with_caps(method: &str, params: Value, caps: Value) -> Request {
        let mut params = params;
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": caps,
            "io.modelcontextprotocol/clientInfo": { "name": "t", "version": "1" },
        });
        let Value::Object(params) = params else { unreachable!() };
        Request { id: json!(1), method: method.into(), params }
    }

    fn server() -> Server {
        Server::builder("t", "1").fallback(Arc::new(Dynamic)).build().unwrap()
    }

    async fn handle(server: &Server, method: &str, params: Value) -> Result<Value, ProtocolError> {
        server.handle(request(method, params), RequestEnv::default()).await
    }

    #[tokio::test]
    async fn lists_and_declines() {
        let s = server();
        let tools = handle(&s, "tools/list", json!({})).await.unwrap();
        assert_eq!(tools["tools"][0]["name"], "ask");
        // The fallback gave no cache hints: the server's defaults fill them (the schema
        // requires them on list and read results).
        assert!(tools["ttlMs"].is_u64() && tools["cacheScope"].is_string(), "{tools}");
        // Declined: the (empty) catalog answers.
        let prompts = handle(&s, "prompts/list", json!({})).await.unwrap();
        assert_eq!(prompts["prompts"], json!([]));
        let err = handle(&s, "prompts/get", json!({ "name": "x" })).await.unwrap_err();
        assert!(err.to_string().contains("Unknown prompt"), "{err}");
    }

    #[tokio::test]
    async fn tool_errors_are_results() {
        let r = handle(&server(), "tools/call", json!({ "name": "fail" })).await.unwrap();
        assert_eq!(r["isError"], true);
    }

    #[tokio::test]
    async fn input_rounds_are_sealed_and_bound() {
        let s = server();
        let first = handle(&s, "tools/call", json!({ "name": "ask" })).await.unwrap();
        assert_eq!(first["resultType"], "input_required");
        let state = first["requestState"].clone();
        let answer = json!({ "roots": [] });
        let params = json!({ "name": "ask", "requestState": state, "inputResponses": { "q": answer } });
        let done = handle(&s, "tools/call", params).await.unwrap();
        assert_eq!(done["structuredContent"], answer);
        // Without the state, the answer is not honoured: the question is asked again.
        let again = handle(&s, "tools/call", json!({ "name": "ask", "inputResponses": { "q": answer } })).await;
        assert_eq!(again.unwrap()["resultType"], "input_required");
        // State sealed for another request is refused.
        let params = json!({ "name": "other", "requestState": first["requestState"], "inputResponses": {} });
        assert!(handle(&s, "tools/call", params).await.is_err());
    }

    async fn tasks_call(server: &Server, method: &str, params: Value) -> Result<Value, ProtocolError> {
        let caps = json!({ "extensions": { mcp_protocol::meta::TASKS_EXTENSION: {} } });
        server.handle(with_caps(method, params, caps), RequestEnv::default()).await
    }

    fn advertises_tasks(server: &Server) -> bool {
        server.capabilities().extensions.is_some_and(|e| e.contains_key(mcp_protocol::meta::TASKS_EXTENSION))
    }

    #[tokio::test]
    async fn a_fallback_that_serves_tasks_gets_them() {
        let s = Server::builder("t", "1").fallback(Arc::new(Tasking)).build().unwrap();
        assert!(advertises_tasks(&s));
        let created = tasks_call(&s, "tools/call", json!({ "name": "slow" })).await.unwrap();
        assert_eq!((created["resultType"].clone(), created["taskId"].clone()), (json!("task"), json!("t1")));
        let task = tasks_call(&s, "tasks/get", json!({ "taskId": "t1" })).await.unwrap();
        assert_eq!(task["status"], "working");
        let params = json!({ "taskId": "t1", "inputResponses": {} });
        assert!(tasks_call(&s, "tasks/update", params).await.is_ok());
        assert!(tasks_call(&s, "tasks/cancel", json!({ "taskId": "t1" })).await.is_ok());
        // Without the declaration the call stays synchronous and tasks/* are refused.
        assert_eq!(handle(&s, "tools/call", json!({ "name": "slow" })).await.unwrap()["content"], json!([]));
        let refused = handle(&s, "tasks/get", json!({ "taskId": "t1" })).await.unwrap_err();
        assert_eq!(refused.code(), -32021, "{refused}");
        // The framework checks the params before the fallback sees them.
        assert_eq!(tasks_call(&s, "tasks/get", json!({})).await.unwrap_err().code(), -32602);
        // A declined id goes to the server's own tasks (none here).
        assert_eq!(tasks_call(&s, "tasks/get", json!({ "taskId": "t2" })).await.unwrap_err().code(), -32601);
    }

    #[tokio::test]
    async fn a_fallback_without_tasks_is_not_offered_them() {
        let s = server();
        assert!(!advertises_tasks(&s));
        let err = tasks_call(&s, "tasks/get", json!({ "taskId": "t1" })).await.unwrap_err();
        assert_eq!(err.code(), -32601, "{err}");
    }
}
