//! Attribute macros for MCP servers. Use them through the `mcp` crate (`mcp::tool` and so on):
//! the generated code names `::mcp`, so a server's `Cargo.toml` needs only `mcp` and `tokio`.
//!
//! - `#[tool]` on an `async fn`: its name is the tool's name, its doc comment the description,
//!   its plain parameters the arguments (`inputSchema`), extractor parameters (`Context`,
//!   `State<T>`, `Args<T>`, `HttpRequest`) are passed through, and its return type decides the
//!   result (`Json<T>` also gives `outputSchema`). `name::tool()` returns the definition.
//! - `#[prompt]`: the same for prompts (`name::prompt()`); parameters are the prompt's string
//!   arguments, parsed with `FromStr`, `Option<_>` ones optional.
//! - `#[resource("uri")]` / `#[resource("scheme://{var}")]`: a resource or a template whose
//!   variables are the parameters (`name::resource()`).
//! - `#[schema]` on a struct or enum: derives `Serialize`, `Deserialize` and `JsonSchema`
//!   through `mcp`'s re-exports.

mod attrs;
mod expand;
mod params;

use proc_macro::TokenStream;

/// Declares an MCP tool from an `async fn`.
///
/// The function stays as written (call it directly in unit tests). Next to it the macro adds a
/// struct of the same name whose associated function `name::tool()` returns the tool's definition
/// with its handler (a `mcp::server::Tool`), ready for `ServerBuilder::tool`. The struct and
/// `tool()` get the function's visibility.
///
/// Use it as `mcp::tool` or through `use mcp::prelude::*;`. The generated code names `::mcp`, so
/// the crate must depend on `mcp` (package `mcp-stack`) under that name.
///
/// What the definition gets without any option:
///
/// - `name`: the function's name (a raw identifier loses its `r#`);
/// - `description`: the doc comment, each line trimmed, lines joined with newlines (none without a
///   doc comment);
/// - `inputSchema`: an object schema with one property per plain parameter (see below), derived
///   with `schemars` and checked by the server before the handler runs (an object without
///   properties when there are none);
/// - `outputSchema`: the schema of `T` when the function returns `Json<T>` (or a `Result` of it).
///
/// # Options
///
/// Written `#[tool(option, option = value, ...)]`, in any order; all are optional. Anything else
/// is a compile error that lists the accepted names.
///
/// | Option | Value | Sets in the definition |
/// |---|---|---|
/// | `name` | string literal | `name` (instead of the function's name) |
/// | `title` | string literal | `title` (the top-level field, not `annotations.title`) |
/// | `description` | string literal | `description` (instead of the doc comment) |
/// | `icon` | string literal: an image URL or `data:` URI | adds `{"src": ...}` to `icons`; may be repeated, one icon each |
/// | `read_only` | none (means `true`) or `= true` / `= false` | `annotations.readOnlyHint` |
/// | `destructive` | none (means `true`) or `= true` / `= false` | `annotations.destructiveHint` |
/// | `idempotent` | none (means `true`) or `= true` / `= false` | `annotations.idempotentHint` |
/// | `open_world` | none (means `true`) or `= true` / `= false` | `annotations.openWorldHint` |
/// | `task_support` | `"forbidden"`, `"optional"` or `"required"` | how `tools/call` runs the tool (`TaskSupport`), see below |
/// | `scopes` | `["scope", ...]` | not in the definition: only callers whose token grants every scope see and call the tool (`Tool::scopes`, see `mcp_server::Access`) |
/// | `rate_limit` | `"COUNT/PERIOD"` (`"5/10s"`, `"100/m"`) | not in the definition: at most that many calls per caller (`Tool::rate_limit`, see `mcp_server::rate_limit`); a quota that does not parse fails `build()` |
/// | `ui` | `"ui://..."` | `_meta.ui.resourceUri`: the MCP Apps view of the results (`Tool::ui`, see `mcp_server::apps`); the URI must name a resource of the server |
/// | `visibility` | `["model", "app"]` | `_meta.ui.visibility`; `["app"]` makes the tool app-only (`Tool::ui_visibility`) |
///
/// A hint that is not written is left out of `annotations` (clients then assume the protocol's
/// defaults); `read_only = false` writes `readOnlyHint: false`. Without any hint the definition has
/// no `annotations` at all. Values are literals: `name = NAME` or `read_only = cfg!(..)` do not
/// parse. Written twice, an option other than `icon` keeps its last value.
///
/// `task_support` is not a field of the definition that `tools/list` shows: it is what the server
/// does with a call (the same as `Tool::task_support(TaskSupport::...)`). With `"optional"` a call
/// whose client declares the tasks extension (`io.modelcontextprotocol/tasks`) returns a task at
/// once while the handler runs on, and other calls run directly; with `"required"` a call without
/// the extension is refused (`-32021`; invalid params for a legacy session); `"forbidden"`, the
/// default, always runs directly. A server with any tool that is not `"forbidden"` declares the
/// tasks extension in its capabilities.
///
/// # Parameters
///
/// Every parameter is either an extractor or an argument of the tool.
///
/// **Extractors** are recognised by the last segment of their type's path, so write the type by
/// one of these names (`Context`, `mcp::server::Context`, `State<Db>`; a type alias, a reference
/// such as `&Context` or a wrapper such as `Option<Context>` is not recognised):
///
/// | Type | Receives |
/// |---|---|
/// | `Context` | the request context (cancellation, progress and status, `elicit`, `sample`, `roots`, ...) |
/// | `State<T>` | a clone of the value of type `T` given to `ServerBuilder::state`; checked when the server is built |
/// | `HttpRequest` | the HTTP request parts (`Some` over HTTP, `None` over stdio) |
/// | `Args<T>` | all the arguments, deserialized into `T`; `T`'s schema becomes `inputSchema` |
///
/// Extractor parameters may use patterns (`State(db): State<Db>`) and may not carry `#[arg]`.
/// `Context`, `State<T>` and `HttpRequest` may come anywhere, mixed with plain arguments. `Args<T>`
/// reads the arguments, so there is at most one, it is the last parameter, and it does not go with
/// plain arguments; each of these is a compile error. A function takes at most seven `Context`,
/// `State<T>` and `HttpRequest` parameters when it has arguments (eight when it has none).
///
/// **Arguments** are all other parameters. Each becomes a property of `inputSchema` named after the
/// parameter, its schema derived from the type, which must implement `serde::Deserialize` and
/// `schemars::JsonSchema` (own types: `#[schema]`). An argument needs a plain name (no pattern).
/// It is required unless its type is `Option<_>` or it has `#[arg(default)]`.
///
/// | `#[arg(...)]` option | Value | Effect |
/// |---|---|---|
/// | `description` | string literal | `inputSchema.properties.<name>.description` |
/// | `rename` | string literal | the property's name in `inputSchema` and in the call's `arguments` (the Rust name stays) |
/// | `default` | none | optional: when missing the parameter gets `Default::default()` (the type must implement `Default`) |
///
/// Several options go in one `#[arg(...)]`, separated by commas.
///
/// # Return type
///
/// Anything that implements `IntoToolResult`:
///
/// - `String` or `&'static str`: one text content block;
/// - `Json<T>` (`T: Serialize + JsonSchema`, serializing to a JSON object): `structuredContent`
///   (with the JSON text as content too), and `T`'s schema becomes `outputSchema`;
/// - a content block (`ContentBlock`, `TextContent`, `ImageContent`, `AudioContent`,
///   `ResourceLink`, `EmbeddedResource`) or `Vec<ContentBlock>`;
/// - `CallToolResult`, for full control;
/// - `()`: a result without content;
/// - `Result<T, E>` of any of these, where `E: Display`: an `Err` becomes a result with
///   `isError: true` and the error's text, which the model reads. A `HandlerError` keeps its
///   meaning: a protocol error is sent as a JSON-RPC error, a question (`ctx.elicit(..)?`) as an
///   input request. With `Result<_, HandlerError>`, `?` works on any `std::error::Error`.
///
/// The function's future must be `Send` (hold no `Rc` or `std::sync::MutexGuard` across an
/// `.await`).
///
/// # Not accepted
///
/// A function that is not `async`, is generic, is a method (`self`) or is variadic; any option
/// not listed above.
///
/// # Examples
///
/// Options, a described argument, and what the definition says:
///
/// ```
/// use mcp::prelude::*;
///
/// /// Echoes the text back.
/// #[tool(read_only, idempotent, open_world = false)]
/// async fn echo(#[arg(description = "Text to send back")] text: String) -> String {
///     text
/// }
///
/// let tool = echo::tool();
/// let def = tool.definition();
/// assert_eq!(def.name, "echo");
/// assert_eq!(def.description.as_deref(), Some("Echoes the text back."));
/// let hints = def.annotations.clone().expect("hints were given");
/// assert_eq!((hints.read_only_hint, hints.open_world_hint), (Some(true), Some(false)));
/// assert_eq!(def.input_schema["required"], json!(["text"]));
/// ```
///
/// Extractors mixed with arguments, a renamed and a defaulted argument, a structured result, and
/// task support:
///
/// ```
/// use mcp::prelude::*;
/// use std::sync::Arc;
///
/// #[schema]
/// struct Count { lines: usize }
///
/// /// Counts the lines of the document that contain a word.
/// #[tool(name = "count-lines", title = "Count lines", task_support = "optional")]
/// async fn count(
///     State(doc): State<Arc<String>>,
///     word: String,
///     #[arg(rename = "ignoreCase", default, description = "Compare without case")] ignore_case: bool,
///     _ctx: Context,
/// ) -> Result<Json<Count>, HandlerError> {
///     let word = if ignore_case { word.to_lowercase() } else { word };
///     let lines = doc
///         .lines()
///         .filter(|l| if ignore_case { l.to_lowercase().contains(&word) } else { l.contains(&word) })
///         .count();
///     Ok(Json(Count { lines }))
/// }
///
/// let server = Server::builder("demo", "1.0.0")
///     .state(Arc::new(String::from("one\nTwo\ntwo")))
///     .tool(count::tool())
///     .build()
///     .expect("the state is given");
/// let entry = server.tool("count-lines").expect("registered");
/// assert_eq!(entry.task_support(), TaskSupport::Optional);
/// ```
///
/// All arguments as one type with `Args<T>` (last, and the only argument parameter):
///
/// ```
/// use mcp::prelude::*;
///
/// /// What to search for.
/// #[schema]
/// struct Query {
///     /// The words to look for.
///     text: String,
///     /// At most this many results.
///     limit: Option<u32>,
/// }
///
/// /// Searches the notes.
/// #[tool(read_only)]
/// async fn search(ctx: Context, Args(query): Args<Query>) -> String {
///     format!("{}: up to {} notes about {}", ctx.method(), query.limit.unwrap_or(10), query.text)
/// }
///
/// let tool = search::tool();
/// assert_eq!(tool.definition().input_schema["required"], json!(["text"]));
/// ```
#[proc_macro_attribute]
pub fn tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand::item(expand::Kind::Tool, attr.into(), item.into()).unwrap_or_else(syn::Error::into_compile_error).into()
}

/// Declares an MCP prompt from an `async fn`.
///
/// The function stays as written; next to it the macro adds a struct of the same name whose
/// associated function `name::prompt()` returns the prompt's definition with its handler (a
/// `mcp::server::Prompt`), ready for `ServerBuilder::prompt`. The struct and `prompt()` get the
/// function's visibility. Use it as `mcp::prompt` or through `use mcp::prelude::*;`.
///
/// Without options, the prompt's `name` is the function's name (without `r#`), its `description`
/// the doc comment (lines trimmed and joined with newlines), and its `arguments` the plain
/// parameters.
///
/// # Options
///
/// Written `#[prompt(option = value, ...)]`, in any order; all are optional. Anything else (the
/// tool hints, `task_support`, `mime_type`, ...) is a compile error that lists the accepted names.
///
/// | Option | Value | Sets in the definition |
/// |---|---|---|
/// | `name` | string literal | `name` (instead of the function's name) |
/// | `title` | string literal | `title` |
/// | `description` | string literal | `description` (instead of the doc comment) |
/// | `icon` | string literal: an image URL or `data:` URI | adds `{"src": ...}` to `icons`; may be repeated, one icon each |
/// | `scopes` | `["scope", ...]` | not in the definition: only callers granted every scope see and get the prompt |
///
/// Written twice, an option other than `icon` keeps its last value.
///
/// # Parameters
///
/// Extractors work as for `#[tool]`: parameters of the types `Context`, `State<T>` and
/// `HttpRequest` (recognised by the last segment of the type's name) come in any order, mixed with
/// arguments; at most one `Args<T>`, last, and never together with plain arguments. `#[arg]` is
/// refused on an extractor.
///
/// **Arguments** are all other parameters, each one entry of the prompt's `arguments`. Prompt
/// arguments are strings on the wire: the macro reads each as a string and parses it with
/// `FromStr` into the parameter's type (`String`, numbers, `bool`, or any type of yours whose
/// `FromStr::Err` is `Display`). A value that does not parse is refused with an invalid-params
/// error (`-32602`) naming the argument. An argument whose type is written `Option<T>` is optional
/// (`required: false`, `None` when missing, else parsed into `T`); any other is required
/// (`required: true`, and a call without it is refused with `-32602`). An argument needs a plain
/// name (no pattern).
///
/// | `#[arg(...)]` option | Value | Effect |
/// |---|---|---|
/// | `description` | string literal | the argument's `description` |
/// | `rename` | string literal | the argument's `name` (the Rust name stays) |
/// | `complete` | path of a function | answers `completion/complete` for this argument (see below) |
///
/// `complete` names a function `fn(&str) -> I` where `I: IntoIterator` and `I::Item: Into<String>`
/// (a `Vec<String>`, say): it gets the value typed so far and returns the candidates (at most
/// 100 are sent). A prompt with such an argument makes the server declare the `completions`
/// capability. It takes a path (`complete = names`, `complete = crate::names`), not a closure.
/// `#[arg(default)]` is not accepted on prompts: make the parameter an `Option<T>`.
///
/// With `Args<T>` instead, `T` is deserialized from the string arguments and its JSON Schema gives
/// the `arguments` (property names, descriptions from doc comments, `required`), so its fields
/// should be `String` or `Option<String>`.
///
/// # Return type
///
/// Anything that implements `IntoPromptResult`:
///
/// - `String` or `&'static str`: one message from the user with this text;
/// - `PromptMessage` or `Vec<PromptMessage>`: these messages;
/// - `GetPromptResult`, for full control (a description, several messages);
/// - `Result<T, E>` of any of these, where `E: Display`: an `Err` is sent as a JSON-RPC internal
///   error (`-32603`) with the error's text, except a `HandlerError`, which keeps its meaning
///   (`HandlerError::invalid_params(..)` is `-32602`, a question from `ctx.elicit(..)?` an input
///   request).
///
/// The function's future must be `Send`.
///
/// # Not accepted
///
/// A function that is not `async`, is generic, is a method (`self`) or is variadic; any option
/// not listed above.
///
/// # Example
///
/// ```
/// use mcp::prelude::*;
///
/// fn languages(typed: &str) -> Vec<String> {
///     ["go", "python", "rust"].into_iter().filter(|l| l.starts_with(typed)).map(String::from).collect()
/// }
///
/// /// Asks for a code review.
/// #[prompt(title = "Code review")]
/// async fn review(
///     #[arg(description = "The code to review")] code: String,
///     #[arg(complete = languages)] language: Option<String>,
///     #[arg(rename = "maxComments")] max_comments: Option<u32>,
/// ) -> String {
///     let lang = language.as_deref().unwrap_or("this");
///     format!("Review {lang} code in at most {} comments:\n{code}", max_comments.unwrap_or(5))
/// }
///
/// let prompt = review::prompt();
/// let args = prompt.definition().arguments.clone().expect("it has arguments");
/// let arg = |name: &str| args.iter().find(|a| a.name == name).cloned().expect("listed");
/// assert_eq!(arg("code").required, Some(true));
/// assert_eq!(arg("code").description.as_deref(), Some("The code to review"));
/// assert_eq!(arg("maxComments").required, Some(false));
///
/// let server = Server::builder("demo", "1.0.0").prompt(prompt).build().expect("valid");
/// assert!(server.capabilities().completions.is_some());
/// ```
#[proc_macro_attribute]
pub fn prompt(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand::item(expand::Kind::Prompt, attr.into(), item.into()).unwrap_or_else(syn::Error::into_compile_error).into()
}

/// Declares an MCP resource, or a resource template, from an `async fn`.
///
/// The function stays as written; next to it the macro adds a struct of the same name whose
/// associated function `name::resource()` returns the definition with its handler (a
/// `mcp::server::Resource`), ready for `ServerBuilder::resource`. The struct and `resource()` get
/// the function's visibility. Use it as `mcp::resource` or through `use mcp::prelude::*;`.
///
/// The URI comes first and is required: `#[resource("scheme://path", option = value, ...)]`.
///
/// - A URI without `{...}` expressions is one resource: listed by `resources/list` with that
///   `uri`, read when a client asks for exactly that URI. Its function takes no plain arguments.
/// - A URI with expressions is an RFC 6570 URI template (`{id}`, `{+path}`, `{/seg}`, `{.ext}`,
///   `{;p}`, `{?a,b}`, `{&c}`, `{#frag}`): listed by `resources/templates/list` as `uriTemplate`,
///   read for any URI that matches, the matched variables passed to the function.
///
/// Without options, the definition's `name` is the function's name (without `r#`) and its
/// `description` the doc comment (lines trimmed and joined with newlines).
///
/// # Options
///
/// After the URI, separated by commas, in any order; all are optional. Anything else (the tool
/// hints, `task_support`, ...) is a compile error that lists the accepted names.
///
/// | Option | Value | Sets in the definition |
/// |---|---|---|
/// | `name` | string literal | `name` (instead of the function's name) |
/// | `title` | string literal | `title` |
/// | `description` | string literal | `description` (instead of the doc comment) |
/// | `mime_type` | string literal | `mimeType`, and the MIME type of the text or bytes the function returns |
/// | `icon` | string literal: an image URL or `data:` URI | adds `{"src": ...}` to `icons`; may be repeated, one icon each |
/// | `scopes` | `["scope", ...]` | not in the definition: only callers granted every scope see and read the resource |
///
/// The URI is a string literal, not a `uri = ...` option. Written twice, an option other than
/// `icon` keeps its last value.
///
/// # Parameters
///
/// Extractors work as for `#[tool]`: parameters of the types `Context`, `State<T>` and
/// `HttpRequest` (recognised by the last segment of the type's name) come in any order, mixed with
/// arguments. `#[arg]` is refused on an extractor.
///
/// **Arguments** are all other parameters, each reading one template variable: the parameter's
/// name (or its `rename`) must be a variable of the template, which is checked at compile time.
/// Variables without a parameter are allowed (they are matched and ignored). A variable's text is
/// parsed with `FromStr` into the parameter's type (`String`, numbers, or any type of yours whose
/// `FromStr::Err` is `Display`); text that does not parse is refused with an invalid-params error
/// (`-32602`). A parameter whose type is written `Option<T>` gets `None` when the variable is
/// absent (a `{?query}` variable left out, say); any other must be present. An argument needs a
/// plain name (no pattern).
///
/// | `#[arg(...)]` option | Value | Effect |
/// |---|---|---|
/// | `rename` | string literal | the template variable the parameter reads (for a variable that is not the Rust name) |
/// | `description` | string literal | accepted, but shows nowhere: a template's definition does not describe its variables |
///
/// Instead of plain arguments, one `Args<T>` as the last parameter receives all the matched
/// variables, as strings, deserialized into `T` (its fields are not checked against the template).
///
/// # Return type
///
/// Anything that implements `IntoReadResult`:
///
/// - `String` or `&'static str`: text contents for the URI that was read, with the definition's
///   `mime_type`;
/// - `Blob` (bytes): binary contents, sent base64-encoded, with the definition's `mime_type`;
/// - `Json<T>` (`T: Serialize`): the JSON text, with `mimeType` `application/json` unless
///   `mime_type` says otherwise;
/// - `ResourceContents`, `Vec<ResourceContents>` or `ReadResourceResult`, for full control (several
///   contents, other URIs, caching hints);
/// - `Result<T, E>` of any of these, where `E: Display`: an `Err` is sent as a JSON-RPC internal
///   error (`-32603`) with the error's text, except a `HandlerError`, which keeps its meaning
///   (`HandlerError::invalid_params(..)` is `-32602`).
///
/// A result without caching hints of its own gets the server's defaults
/// (`ServerBuilder::read_cache`). The function's future must be `Send`.
///
/// # Not accepted
///
/// A missing or non-literal URI; plain arguments on a static resource, or named after no variable
/// of the template; `#[arg(default)]` and `#[arg(complete = ..)]`; a function that is not `async`,
/// is generic, is a method (`self`) or is variadic.
///
/// # Example
///
/// ```
/// use mcp::prelude::*;
///
/// /// The application's settings.
/// #[resource("config://app", name = "settings", mime_type = "application/json")]
/// async fn settings() -> Json<Value> {
///     Json(json!({ "debug": false }))
/// }
///
/// /// One user's profile.
/// #[resource("users://{id}/profile{?fields}", title = "User profile")]
/// async fn profile(id: u32, #[arg(rename = "fields")] wanted: Option<String>) -> Result<String, HandlerError> {
///     if id == 0 {
///         return Err(HandlerError::invalid_params("user ids start at 1"));
///     }
///     Ok(format!("user {id}: {}", wanted.as_deref().unwrap_or("all fields")))
/// }
///
/// let server = Server::builder("demo", "1.0.0")
///     .resources([settings::resource(), profile::resource()])
///     .build()
///     .expect("valid URIs and templates");
/// # drop(server);
/// ```
#[proc_macro_attribute]
pub fn resource(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand::item(expand::Kind::Resource, attr.into(), item.into()).unwrap_or_else(syn::Error::into_compile_error).into()
}

/// Derives `Serialize`, `Deserialize` and `JsonSchema` for a struct or an enum, through `mcp`'s
/// re-exports.
///
/// `#[schema]` is short for
///
/// ```text
/// #[derive(::mcp::serde::Serialize, ::mcp::serde::Deserialize, ::mcp::schemars::JsonSchema)]
/// #[serde(crate = "::mcp::serde")]
/// #[schemars(crate = "::mcp::schemars")]
/// ```
///
/// so a server needs neither `serde` nor `schemars` in its own `Cargo.toml`. Use it for the types
/// of tool arguments, `Args<T>`, `Json<T>` results and `ctx.elicit::<T>(..)` forms. Doc comments
/// on the type and its fields become `description`s in the schema.
///
/// # Options
///
/// None: `#[schema]` takes no arguments, and goes only on a struct or an enum (anything else is a
/// compile error). Further `#[serde(...)]` and `#[schemars(...)]` attributes work as usual; write
/// them after `#[schema]`. Since the derives come from `#[schema]`, do not also derive
/// `Serialize`, `Deserialize` or `JsonSchema` on the same type.
///
/// # Example
///
/// ```
/// use mcp::prelude::*;
///
/// /// A temperature unit.
/// #[schema]
/// #[serde(rename_all = "lowercase")]
/// enum Unit { Celsius, Fahrenheit }
///
/// /// A converted temperature.
/// #[schema]
/// struct Converted {
///     /// The value in the unit asked for.
///     value: f64,
///     unit: Unit,
/// }
///
/// /// Converts a temperature given in Celsius.
/// #[tool(read_only)]
/// async fn convert(celsius: f64, unit: Unit) -> Json<Converted> {
///     let value = match unit { Unit::Celsius => celsius, Unit::Fahrenheit => celsius * 9.0 / 5.0 + 32.0 };
///     Json(Converted { value, unit })
/// }
///
/// let tool = convert::tool();
/// assert_eq!(tool.definition().input_schema["required"], json!(["celsius", "unit"]));
/// assert!(tool.definition().output_schema.is_some());
/// ```
#[proc_macro_attribute]
pub fn schema(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand::schema(attr.into(), item.into()).unwrap_or_else(syn::Error::into_compile_error).into()
}
