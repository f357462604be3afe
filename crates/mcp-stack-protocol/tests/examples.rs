//! Round-trips every example of the 2026-07-28 schema through its Rust type,
//! and checks that malformed messages are rejected.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use mcp_protocol::types as t;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};

fn schema_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../test-data/schema/2026-07-28")
}

fn examples_dir() -> PathBuf {
    schema_dir().join("examples")
}

/// Parses `text` as `T` (through the streaming deserializer, as on the wire)
/// and serializes it back to a JSON value.
fn round_trip<T: DeserializeOwned + Serialize>(text: &str) -> Result<Value, String> {
    let parsed: T = serde_json::from_str(text).map_err(|e| format!("parse failed: {e}"))?;
    serde_json::to_value(&parsed).map_err(|e| format!("serialize failed: {e}"))
}

type RoundTrip = fn(&str) -> Result<Value, String>;

/// Maps each schema definition name to its Rust type.
macro_rules! type_table {
    ($($name:literal => $ty:ty),* $(,)?) => {
        fn round_trip_for(definition: &str) -> Option<RoundTrip> {
            match definition {
                $($name => Some(round_trip::<$ty> as RoundTrip),)*
                _ => None,
            }
        }

        const DEFINITIONS: &[&str] = &[$($name),*];
    };
}

type_table! {
    "Annotations" => t::Annotations,
    "AudioContent" => t::AudioContent,
    "BaseMetadata" => t::BaseMetadata,
    "BlobResourceContents" => t::BlobResourceContents,
    "BooleanSchema" => t::BooleanSchema,
    "CacheableResult" => t::CacheableResult,
    "CallToolRequest" => t::CallToolRequest,
    "CallToolRequestParams" => t::CallToolRequestParams,
    "CallToolResult" => t::CallToolResult,
    "CallToolResultResponse" => t::CallToolResultResponse,
    "CancelledNotification" => t::CancelledNotification,
    "CancelledNotificationParams" => t::CancelledNotificationParams,
    "ClientCapabilities" => t::ClientCapabilities,
    "ClientNotification" => t::ClientNotification,
    "ClientRequest" => t::ClientRequest,
    "ClientResult" => t::ClientResult,
    "CompleteRequest" => t::CompleteRequest,
    "CompleteRequestParams" => t::CompleteRequestParams,
    "CompleteResult" => t::CompleteResult,
    "CompleteResultResponse" => t::CompleteResultResponse,
    "ContentBlock" => t::ContentBlock,
    "CreateMessageRequest" => t::CreateMessageRequest,
    "CreateMessageRequestParams" => t::CreateMessageRequestParams,
    "CreateMessageResult" => t::CreateMessageResult,
    "Cursor" => t::Cursor,
    "DiscoverRequest" => t::DiscoverRequest,
    "DiscoverResult" => t::DiscoverResult,
    "DiscoverResultResponse" => t::DiscoverResultResponse,
    "ElicitRequest" => t::ElicitRequest,
    "ElicitRequestFormParams" => t::ElicitRequestFormParams,
    "ElicitRequestParams" => t::ElicitRequestParams,
    "ElicitRequestURLParams" => t::ElicitRequestUrlParams,
    "ElicitResult" => t::ElicitResult,
    "EmbeddedResource" => t::EmbeddedResource,
    "EmptyResult" => t::EmptyResult,
    "EnumSchema" => t::EnumSchema,
    "Error" => t::Error,
    "GetPromptRequest" => t::GetPromptRequest,
    "GetPromptRequestParams" => t::GetPromptRequestParams,
    "GetPromptResult" => t::GetPromptResult,
    "GetPromptResultResponse" => t::GetPromptResultResponse,
    "HeaderMismatchError" => t::HeaderMismatchError,
    "Icon" => t::Icon,
    "Icons" => t::Icons,
    "ImageContent" => t::ImageContent,
    "Implementation" => t::Implementation,
    "InputRequest" => t::InputRequest,
    "InputRequests" => t::InputRequests,
    "InputRequiredResult" => t::InputRequiredResult,
    "InputResponse" => t::InputResponse,
    "InputResponseRequestParams" => t::InputResponseRequestParams,
    "InputResponses" => t::InputResponses,
    "InternalError" => t::InternalError,
    "InvalidParamsError" => t::InvalidParamsError,
    "InvalidRequestError" => t::InvalidRequestError,
    "JSONArray" => t::JsonArray,
    "JSONObject" => t::JsonObject,
    "JSONRPCErrorResponse" => t::JsonRpcErrorResponse,
    "JSONRPCMessage" => t::JsonRpcMessage,
    "JSONRPCNotification" => t::JsonRpcNotification,
    "JSONRPCRequest" => t::JsonRpcRequest,
    "JSONRPCResponse" => t::JsonRpcResponse,
    "JSONRPCResultResponse" => t::JsonRpcResultResponse,
    "JSONValue" => t::JsonValue,
    "LegacyTitledEnumSchema" => t::LegacyTitledEnumSchema,
    "ListPromptsRequest" => t::ListPromptsRequest,
    "ListPromptsResult" => t::ListPromptsResult,
    "ListPromptsResultResponse" => t::ListPromptsResultResponse,
    "ListResourceTemplatesRequest" => t::ListResourceTemplatesRequest,
    "ListResourceTemplatesResult" => t::ListResourceTemplatesResult,
    "ListResourceTemplatesResultResponse" => t::ListResourceTemplatesResultResponse,
    "ListResourcesRequest" => t::ListResourcesRequest,
    "ListResourcesResult" => t::ListResourcesResult,
    "ListResourcesResultResponse" => t::ListResourcesResultResponse,
    "ListRootsRequest" => t::ListRootsRequest,
    "ListRootsResult" => t::ListRootsResult,
    "ListToolsRequest" => t::ListToolsRequest,
    "ListToolsResult" => t::ListToolsResult,
    "ListToolsResultResponse" => t::ListToolsResultResponse,
    "LoggingLevel" => t::LoggingLevel,
    "LoggingMessageNotification" => t::LoggingMessageNotification,
    "LoggingMessageNotificationParams" => t::LoggingMessageNotificationParams,
    "MetaObject" => t::MetaObject,
    "MethodNotFoundError" => t::MethodNotFoundError,
    "MissingRequiredClientCapabilityError" => t::MissingRequiredClientCapabilityError,
    "ModelHint" => t::ModelHint,
    "ModelPreferences" => t::ModelPreferences,
    "MultiSelectEnumSchema" => t::MultiSelectEnumSchema,
    "Notification" => t::BaseNotification,
    "NotificationMetaObject" => t::NotificationMetaObject,
    "NotificationParams" => t::NotificationParams,
    "NumberSchema" => t::NumberSchema,
    "PaginatedRequest" => t::PaginatedRequest,
    "PaginatedRequestParams" => t::PaginatedRequestParams,
    "PaginatedResult" => t::PaginatedResult,
    "ParseError" => t::ParseError,
    "PrimitiveSchemaDefinition" => t::PrimitiveSchemaDefinition,
    "ProgressNotification" => t::ProgressNotification,
    "ProgressNotificationParams" => t::ProgressNotificationParams,
    "ProgressToken" => t::ProgressToken,
    "Prompt" => t::Prompt,
    "PromptArgument" => t::PromptArgument,
    "PromptListChangedNotification" => t::PromptListChangedNotification,
    "PromptMessage" => t::PromptMessage,
    "PromptReference" => t::PromptReference,
    "ReadResourceRequest" => t::ReadResourceRequest,
    "ReadResourceRequestParams" => t::ReadResourceRequestParams,
    "ReadResourceResult" => t::ReadResourceResult,
    "ReadResourceResultResponse" => t::ReadResourceResultResponse,
    "Request" => t::BaseRequest,
    "RequestId" => t::RequestId,
    "RequestMetaObject" => t::RequestMetaObject,
    "RequestParams" => t::RequestParams,
    "Resource" => t::Resource,
    "ResourceContents" => t::ResourceContents,
    "ResourceLink" => t::ResourceLink,
    "ResourceListChangedNotification" => t::ResourceListChangedNotification,
    "ResourceRequestParams" => t::ResourceRequestParams,
    "ResourceTemplate" => t::ResourceTemplate,
    "ResourceTemplateReference" => t::ResourceTemplateReference,
    "ResourceUpdatedNotification" => t::ResourceUpdatedNotification,
    "ResourceUpdatedNotificationParams" => t::ResourceUpdatedNotificationParams,
    "Result" => t::BaseResult,
    "ResultMetaObject" => t::ResultMetaObject,
    "ResultType" => t::ResultType,
    "Role" => t::Role,
    "Root" => t::Root,
    "SamplingMessage" => t::SamplingMessage,
    "SamplingMessageContentBlock" => t::SamplingMessageContentBlock,
    "ServerCapabilities" => t::ServerCapabilities,
    "ServerNotification" => t::ServerNotification,
    "ServerResult" => t::ServerResult,
    "SingleSelectEnumSchema" => t::SingleSelectEnumSchema,
    "StringSchema" => t::StringSchema,
    "SubscriptionFilter" => t::SubscriptionFilter,
    "SubscriptionsAcknowledgedNotification" => t::SubscriptionsAcknowledgedNotification,
    "SubscriptionsAcknowledgedNotificationParams" => t::SubscriptionsAcknowledgedNotificationParams,
    "SubscriptionsListenRequest" => t::SubscriptionsListenRequest,
    "SubscriptionsListenRequestParams" => t::SubscriptionsListenRequestParams,
    "SubscriptionsListenResult" => t::SubscriptionsListenResult,
    "SubscriptionsListenResultMetaObject" => t::SubscriptionsListenResultMetaObject,
    "SubscriptionsListenResultResponse" => t::SubscriptionsListenResultResponse,
    "TextContent" => t::TextContent,
    "TextResourceContents" => t::TextResourceContents,
    "TitledMultiSelectEnumSchema" => t::TitledMultiSelectEnumSchema,
    "TitledSingleSelectEnumSchema" => t::TitledSingleSelectEnumSchema,
    "Tool" => t::Tool,
    "ToolAnnotations" => t::ToolAnnotations,
    "ToolChoice" => t::ToolChoice,
    "ToolListChangedNotification" => t::ToolListChangedNotification,
    "ToolResultContent" => t::ToolResultContent,
    "ToolUseContent" => t::ToolUseContent,
    "UnsupportedProtocolVersionError" => t::UnsupportedProtocolVersionError,
    "UntitledMultiSelectEnumSchema" => t::UntitledMultiSelectEnumSchema,
    "UntitledSingleSelectEnumSchema" => t::UntitledSingleSelectEnumSchema,
}

/// Lists the differences between two JSON values, one line per path.
fn diff(path: &str, expected: &Value, actual: &Value, out: &mut String) {
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => {
            let keys: BTreeSet<&String> = e.keys().chain(a.keys()).collect();
            for key in keys {
                let sub = format!("{path}/{key}");
                match (e.get(key), a.get(key)) {
                    (Some(ev), Some(av)) => diff(&sub, ev, av, out),
                    (Some(ev), None) => {
                        let _ = writeln!(out, "    {sub}: missing after round trip (was {ev})");
                    }
                    (None, Some(av)) => {
                        let _ = writeln!(out, "    {sub}: added by round trip ({av})");
                    }
                    (None, None) => {}
                }
            }
        }
        (Value::Array(e), Value::Array(a)) if e.len() == a.len() => {
            for (i, (ev, av)) in e.iter().zip(a).enumerate() {
                diff(&format!("{path}/{i}"), ev, av, out);
            }
        }
        _ if expected != actual => {
            let shown = if path.is_empty() { "/" } else { path };
            let _ = writeln!(out, "    {shown}: expected {expected}, got {actual}");
        }
        _ => {}
    }
}

fn example_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|entry| entry.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|ext| ext == "json"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_example_round_trips_through_its_type() {
    let root = examples_dir();
    let mut dirs: Vec<PathBuf> = fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("cannot read examples at {}: {e}", root.display()))
        .map(|entry| entry.expect("directory entry").path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    assert!(!dirs.is_empty(), "no example directories under {}", root.display());

    let mut failures = String::new();
    let mut passed = 0usize;
    for dir in &dirs {
        let name = dir.file_name().and_then(|n| n.to_str()).expect("utf-8 directory name");
        let Some(round_trip) = round_trip_for(name) else {
            let _ = writeln!(failures, "{name}/: no Rust type mapped to this example directory");
            continue;
        };
        let files = example_files(dir);
        if files.is_empty() {
            let _ = writeln!(failures, "{name}/: no .json example files");
        }
        for file in files {
            let label = format!("{name}/{}", file.file_name().unwrap().to_string_lossy());
            let text = fs::read_to_string(&file).expect("readable example");
            let original: Value = match serde_json::from_str(&text) {
                Ok(v) => v,
                Err(e) => {
                    let _ = writeln!(failures, "{label}: not valid JSON: {e}");
                    continue;
                }
            };
            match round_trip(&text) {
                Ok(back) if back == original => passed += 1,
                Ok(back) => {
                    let _ = writeln!(failures, "{label}: round trip differs:");
                    diff("", &original, &back, &mut failures);
                }
                Err(e) => {
                    let _ = writeln!(failures, "{label}: {e}");
                }
            }
        }
    }
    println!("{passed} example files round-tripped");
    assert!(failures.is_empty(), "example round-trip failures:\n{failures}");
}

/// Every example that is a whole JSON-RPC message also round-trips through
/// the generic [`t::JsonRpcMessage`].
#[test]
fn jsonrpc_examples_round_trip_as_messages() {
    let mut failures = String::new();
    let mut seen = 0usize;
    for entry in fs::read_dir(examples_dir()).expect("examples dir") {
        let dir = entry.expect("entry").path();
        if !dir.is_dir() {
            continue;
        }
        for file in example_files(&dir) {
            let text = fs::read_to_string(&file).expect("readable example");
            let original: Value = serde_json::from_str(&text).expect("valid JSON");
            if original.get("jsonrpc").is_none() {
                continue;
            }
            seen += 1;
            match round_trip::<t::JsonRpcMessage>(&text) {
                Ok(back) if back == original => {}
                Ok(back) => {
                    let _ = writeln!(failures, "{}: differs:", file.display());
                    diff("", &original, &back, &mut failures);
                }
                Err(e) => {
                    let _ = writeln!(failures, "{}: {e}", file.display());
                }
            }
        }
    }
    assert!(seen > 0, "no JSON-RPC examples found");
    assert!(failures.is_empty(), "JsonRpcMessage round-trip failures:\n{failures}");
}

#[test]
fn every_schema_definition_has_a_type() {
    let text = fs::read_to_string(schema_dir().join("schema.json")).expect("schema.json");
    let schema: Value = serde_json::from_str(&text).expect("schema.json is JSON");
    let defs =
        schema.get("$defs").or_else(|| schema.get("definitions")).and_then(Value::as_object).expect("schema has $defs");
    let mapped: BTreeSet<&str> = DEFINITIONS.iter().copied().collect();
    let missing: Vec<&String> = defs.keys().filter(|k| !mapped.contains(k.as_str())).collect();
    assert!(missing.is_empty(), "schema definitions without a Rust type: {missing:?}");
    let extra: Vec<&&str> = DEFINITIONS.iter().filter(|d| !defs.contains_key(**d)).collect();
    assert!(extra.is_empty(), "table names not in the schema: {extra:?}");
}

// ---------------------------------------------------------------------------
// Negative tests: malformed messages must not parse.

fn call_tool_request() -> Value {
    json!({
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}
            },
            "name": "echo",
            "arguments": {"text": "hi"}
        }
    })
}

#[test]
fn call_tool_request_baseline_parses() {
    let req: t::CallToolRequest = serde_json::from_value(call_tool_request()).expect("valid request");
    assert_eq!(req.id, t::RequestId::Integer(7));
    assert_eq!(req.params.name, "echo");
    let any: t::ClientRequest = serde_json::from_value(call_tool_request()).expect("client request");
    assert!(matches!(any, t::ClientRequest::CallTool(_)));
    assert_eq!(any.method(), "tools/call");
}

#[test]
fn wrong_jsonrpc_version_is_rejected() {
    for version in [json!("1.0"), json!("2"), json!(2.0), Value::Null] {
        let mut msg = call_tool_request();
        msg["jsonrpc"] = version.clone();
        assert!(serde_json::from_value::<t::CallToolRequest>(msg.clone()).is_err(), "jsonrpc {version}");
        assert!(serde_json::from_value::<t::JsonRpcRequest>(msg.clone()).is_err(), "jsonrpc {version}");
        assert!(serde_json::from_value::<t::JsonRpcMessage>(msg).is_err(), "jsonrpc {version}");
    }
    let mut missing = call_tool_request();
    missing.as_object_mut().unwrap().remove("jsonrpc");
    assert!(serde_json::from_value::<t::CallToolRequest>(missing).is_err());
}

#[test]
fn wrong_method_is_rejected() {
    let mut msg = call_tool_request();
    msg["method"] = json!("tools/list");
    assert!(serde_json::from_value::<t::CallToolRequest>(msg.clone()).is_err());
    msg["method"] = json!("tools/unknown");
    assert!(serde_json::from_value::<t::ClientRequest>(msg).is_err());
    let note = json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"});
    assert!(serde_json::from_value::<t::PromptListChangedNotification>(note.clone()).is_err());
    assert!(serde_json::from_value::<t::ToolListChangedNotification>(note).is_ok());
}

#[test]
fn unknown_result_type_is_rejected() {
    let result = json!({"resultType": "partial", "content": []});
    assert!(serde_json::from_value::<t::CallToolResult>(result.clone()).is_err());
    assert!(serde_json::from_value::<t::BaseResult>(result.clone()).is_err());
    assert!(serde_json::from_value::<t::ServerResult>(result.clone()).is_err());
    assert!(serde_json::from_value::<t::ResultType>(json!("partial")).is_err());
    let response = json!({"jsonrpc": "2.0", "id": 1, "result": result});
    assert!(serde_json::from_value::<t::CallToolResultResponse>(response).is_err());
}

#[test]
fn other_constants_are_checked() {
    assert!(serde_json::from_value::<t::ContentBlock>(json!({"type": "video", "data": ""})).is_err());
    assert!(serde_json::from_value::<t::TextContent>(json!({"type": "image", "text": "x"})).is_err());
    assert!(serde_json::from_value::<t::ParseError>(json!({"code": -32600, "message": "x"})).is_err());
    assert!(serde_json::from_value::<t::ParseError>(json!({"code": -32700, "message": "x"})).is_ok());
    let bad_header = json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32021, "message": "x"}});
    assert!(serde_json::from_value::<t::HeaderMismatchError>(bad_header).is_err());
    let bad_mode = json!({"mode": "telepathy", "message": "x"});
    assert!(serde_json::from_value::<t::ElicitRequestParams>(bad_mode).is_err());
}

// ---------------------------------------------------------------------------
// Positive behaviour of unions and helpers.

#[test]
fn result_type_defaults_to_complete_when_absent() {
    let result: t::CallToolResult = serde_json::from_value(json!({"content": []})).expect("old-style result");
    assert_eq!(result.result_type, t::ResultType::Complete);
    assert_eq!(serde_json::to_value(&result).unwrap(), json!({"resultType": "complete", "content": []}));
}

#[test]
fn input_required_results_are_told_apart() {
    let response = json!({
        "jsonrpc": "2.0",
        "id": "a",
        "result": {"resultType": "input_required", "requestState": "abc"}
    });
    let parsed: t::CallToolResultResponse = serde_json::from_value(response).unwrap();
    assert!(matches!(parsed.result, t::ResultOrInputRequired::InputRequired(_)));

    let server: t::ServerResult =
        serde_json::from_value(json!({"resultType": "input_required", "requestState": "abc"})).unwrap();
    assert!(matches!(server, t::ServerResult::InputRequired(_)));
    let server: t::ServerResult = serde_json::from_value(json!({"resultType": "complete", "content": []})).unwrap();
    assert!(matches!(server, t::ServerResult::CallTool(_)));
    let server: t::ServerResult = serde_json::from_value(json!({"resultType": "complete", "x": 1})).unwrap();
    assert!(matches!(server, t::ServerResult::Empty(_)));
    assert_eq!(serde_json::to_value(&server).unwrap(), json!({"resultType": "complete", "x": 1}));
}

#[test]
fn jsonrpc_message_dispatch() {
    let cases = [
        (json!({"jsonrpc": "2.0", "id": 1, "method": "x"}), "Request"),
        (json!({"jsonrpc": "2.0", "method": "x"}), "Notification"),
        (json!({"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete"}}), "ResultResponse"),
        (json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "nope"}}), "ErrorResponse"),
    ];
    for (value, expected) in cases {
        let msg: t::JsonRpcMessage = serde_json::from_value(value.clone()).unwrap();
        let kind = match msg {
            t::JsonRpcMessage::Request(_) => "Request",
            t::JsonRpcMessage::Notification(_) => "Notification",
            t::JsonRpcMessage::ResultResponse(_) => "ResultResponse",
            t::JsonRpcMessage::ErrorResponse(_) => "ErrorResponse",
        };
        assert_eq!(kind, expected, "{value}");
        assert_eq!(serde_json::to_value(&msg).unwrap(), value);
    }
    assert!(serde_json::from_value::<t::JsonRpcMessage>(json!({"jsonrpc": "2.0", "id": 1})).is_err());
}

#[test]
fn helpers_build_the_expected_json() {
    assert_eq!(
        serde_json::to_value(t::CallToolResult::text("hi")).unwrap(),
        json!({"resultType": "complete", "content": [{"type": "text", "text": "hi"}]})
    );
    assert_eq!(
        serde_json::to_value(t::CallToolResult::error("boom")).unwrap(),
        json!({"resultType": "complete", "content": [{"type": "text", "text": "boom"}], "isError": true})
    );
    assert_eq!(
        serde_json::to_value(t::Implementation::new("srv", "1.0")).unwrap(),
        json!({"name": "srv", "version": "1.0"})
    );
    let tool = t::Tool::new("noop", t::Tool::empty_input_schema());
    assert_eq!(serde_json::to_value(&tool).unwrap(), json!({"name": "noop", "inputSchema": {"type": "object"}}));
    let response = t::CallToolResultResponse::new(3, t::ResultOrInputRequired::Complete(t::CallToolResult::text("ok")));
    assert_eq!(
        serde_json::to_value(&response).unwrap(),
        json!({"jsonrpc": "2.0", "id": 3, "result": {"resultType": "complete", "content": [{"type": "text", "text": "ok"}]}})
    );
    let err: t::JsonRpcErrorResponse = t::UnsupportedProtocolVersionError::new(
        Some(1.into()),
        "Unsupported protocol version",
        "1900-01-01",
        vec!["2026-07-28".into()],
    )
    .into();
    assert_eq!(err.error.code, t::Error::UNSUPPORTED_PROTOCOL_VERSION);
    assert_eq!(err.error.data, Some(json!({"requested": "1900-01-01", "supported": ["2026-07-28"]})));
}

#[test]
fn numbers_keep_their_json_form() {
    let params: t::ProgressNotificationParams =
        serde_json::from_value(json!({"progressToken": 1, "progress": 50, "total": 100.5})).unwrap();
    assert_eq!(serde_json::to_value(&params).unwrap(), json!({"progressToken": 1, "progress": 50, "total": 100.5}));
}

#[test]
fn logging_levels_are_ordered_by_severity() {
    assert!(t::LoggingLevel::Debug < t::LoggingLevel::Info);
    assert!(t::LoggingLevel::Warning < t::LoggingLevel::Error);
    assert!(t::LoggingLevel::Alert < t::LoggingLevel::Emergency);
}

/// Keys the schema does not name (extensions such as tasks, newer fields)
/// survive a round trip through every result and definition type.
#[test]
fn unknown_keys_land_in_extension_slots() {
    fn keeps<T: DeserializeOwned + Serialize>(value: Value) -> T {
        let parsed: T = serde_json::from_value(value.clone()).unwrap();
        assert_eq!(serde_json::to_value(&parsed).unwrap(), value);
        parsed
    }
    let tool: t::Tool =
        keeps(json!({"name": "t", "inputSchema": {"type": "object"}, "execution": {"taskSupport": "optional"}}));
    assert_eq!(tool.extra["execution"], json!({"taskSupport": "optional"}));
    let list: t::ListToolsResult =
        keeps(json!({"resultType": "complete", "tools": [], "ttlMs": 0, "cacheScope": "public", "x-page": 1}));
    assert_eq!(list.extra["x-page"], json!(1));
    let caps: t::ServerCapabilities =
        keeps(json!({"tools": {"listChanged": true}, "extensions": {"io.example/skills": {}}, "tasks": {"list": {}}}));
    assert!(caps.extra.contains_key("tasks"));
    keeps::<t::DiscoverResult>(json!({
        "resultType": "complete", "supportedVersions": ["2026-07-28"], "capabilities": {}, "ttlMs": 0,
        "cacheScope": "public", "task": {"taskId": "1"}
    }));
    keeps::<t::ReadResourceResult>(json!({"resultType": "complete", "contents": [], "x": true}));
    keeps::<t::GetPromptResult>(json!({"resultType": "complete", "messages": [], "x": true}));
    keeps::<t::CompleteResult>(json!({"resultType": "complete", "completion": {"values": []}, "x": true}));
    keeps::<t::InputRequiredResult>(json!({"resultType": "input_required", "requestState": "s", "x": true}));
    keeps::<t::ElicitResult>(json!({"action": "decline", "x": true}));
    keeps::<t::ElicitRequestParams>(json!({"mode": "url", "message": "m", "url": "https://a", "elicitationId": "e"}));
    keeps::<t::CreateMessageResult>(
        json!({"role": "assistant", "content": {"type": "text", "text": "t"}, "model": "m", "x": 1}),
    );
    keeps::<t::CreateMessageRequestParams>(json!({"messages": [], "maxTokens": 1, "task": {"ttl": 5}}));
}
