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

/// Declares an MCP tool from an `async fn`. See the crate docs.
#[proc_macro_attribute]
pub fn tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand::item(expand::Kind::Tool, attr.into(), item.into()).unwrap_or_else(syn::Error::into_compile_error).into()
}

/// Declares an MCP prompt from an `async fn`. See the crate docs.
#[proc_macro_attribute]
pub fn prompt(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand::item(expand::Kind::Prompt, attr.into(), item.into()).unwrap_or_else(syn::Error::into_compile_error).into()
}

/// Declares an MCP resource or resource template from an `async fn`. See the crate docs.
#[proc_macro_attribute]
pub fn resource(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand::item(expand::Kind::Resource, attr.into(), item.into()).unwrap_or_else(syn::Error::into_compile_error).into()
}

/// Derives `Serialize`, `Deserialize` and `JsonSchema` through `mcp`'s re-exports.
#[proc_macro_attribute]
pub fn schema(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand::schema(attr.into(), item.into()).unwrap_or_else(syn::Error::into_compile_error).into()
}
