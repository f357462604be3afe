//! Unions of the requests and results each side may send.

use super::macros::{has_field, str_field};
use super::{
    BaseResult, CallToolRequest, CallToolResult, CompleteRequest, CompleteResult, DiscoverRequest, DiscoverResult,
    EmptyResult, GetPromptRequest, GetPromptResult, InputRequiredResult, ListPromptsRequest, ListPromptsResult,
    ListResourceTemplatesRequest, ListResourceTemplatesResult, ListResourcesRequest, ListResourcesResult,
    ListToolsRequest, ListToolsResult, ReadResourceRequest, ReadResourceResult, SubscriptionsListenRequest,
    SubscriptionsListenResult,
};

tagged_union! {
    /// Any request a client sends (chosen by `method`).
    pub enum ClientRequest by "method" {
        /// `server/discover`
        Discover(DiscoverRequest) = "server/discover",
        /// `resources/list`
        ListResources(ListResourcesRequest) = "resources/list",
        /// `resources/templates/list`
        ListResourceTemplates(ListResourceTemplatesRequest) = "resources/templates/list",
        /// `resources/read`
        ReadResource(ReadResourceRequest) = "resources/read",
        /// `subscriptions/listen`
        SubscriptionsListen(SubscriptionsListenRequest) = "subscriptions/listen",
        /// `prompts/list`
        ListPrompts(ListPromptsRequest) = "prompts/list",
        /// `prompts/get`
        GetPrompt(GetPromptRequest) = "prompts/get",
        /// `tools/list`
        ListTools(ListToolsRequest) = "tools/list",
        /// `tools/call`
        CallTool(CallToolRequest) = "tools/call",
        /// `completion/complete`
        Complete(CompleteRequest) = "completion/complete",
    }
}

impl ClientRequest {
    /// The method name of the request.
    pub fn method(&self) -> &'static str {
        match self {
            Self::Discover(_) => DiscoverRequest::METHOD,
            Self::ListResources(_) => ListResourcesRequest::METHOD,
            Self::ListResourceTemplates(_) => ListResourceTemplatesRequest::METHOD,
            Self::ReadResource(_) => ReadResourceRequest::METHOD,
            Self::SubscriptionsListen(_) => SubscriptionsListenRequest::METHOD,
            Self::ListPrompts(_) => ListPromptsRequest::METHOD,
            Self::GetPrompt(_) => GetPromptRequest::METHOD,
            Self::ListTools(_) => ListToolsRequest::METHOD,
            Self::CallTool(_) => CallToolRequest::METHOD,
            Self::Complete(_) => CompleteRequest::METHOD,
        }
    }
}

/// Any result a client sends: client results carry no shared shape beyond
/// the common result fields.
pub type ClientResult = BaseResult;

union_enum! {
    /// Any result a server sends. The variant is chosen by `resultType`
    /// (`input_required`) and otherwise by the result's characteristic
    /// required field; a result with none of them is [`ServerResult::Empty`].
    pub enum ServerResult {
        /// Generic result (e.g. an empty result).
        Empty(EmptyResult),
        /// More input is needed.
        InputRequired(InputRequiredResult),
        /// Result of `server/discover`.
        Discover(DiscoverResult),
        /// Result of `resources/list`.
        ListResources(ListResourcesResult),
        /// Result of `resources/templates/list`.
        ListResourceTemplates(ListResourceTemplatesResult),
        /// Result of `resources/read`.
        ReadResource(ReadResourceResult),
        /// Result of `subscriptions/listen`.
        SubscriptionsListen(SubscriptionsListenResult),
        /// Result of `prompts/list`.
        ListPrompts(ListPromptsResult),
        /// Result of `prompts/get`.
        GetPrompt(GetPromptResult),
        /// Result of `tools/list`.
        ListTools(ListToolsResult),
        /// Result of `tools/call`.
        CallTool(CallToolResult),
        /// Result of `completion/complete`.
        Complete(CompleteResult),
    }
    select |v| {
        let subscription_meta = v
            .get("_meta")
            .is_some_and(|m| has_field(m, "io.modelcontextprotocol/subscriptionId"));
        Ok(if str_field(v, "resultType") == Some("input_required") {
            Kind::InputRequired
        } else if has_field(v, "supportedVersions") {
            Kind::Discover
        } else if has_field(v, "resources") {
            Kind::ListResources
        } else if has_field(v, "resourceTemplates") {
            Kind::ListResourceTemplates
        } else if has_field(v, "contents") {
            Kind::ReadResource
        } else if has_field(v, "prompts") {
            Kind::ListPrompts
        } else if has_field(v, "messages") {
            Kind::GetPrompt
        } else if has_field(v, "tools") {
            Kind::ListTools
        } else if has_field(v, "content") {
            Kind::CallTool
        } else if has_field(v, "completion") {
            Kind::Complete
        } else if subscription_meta {
            Kind::SubscriptionsListen
        } else {
            Kind::Empty
        })
    }
}
