//! The client that the official MCP conformance suite drives:
//! `conformance client --command mcp-conformance-client --scenario NAME --spec-version V`.
//!
//! The suite passes the server URL as the last argument and the scenario in
//! `MCP_CONFORMANCE_SCENARIO` (plus `MCP_CONFORMANCE_PROTOCOL_VERSION` and, for some scenarios,
//! `MCP_CONFORMANCE_CONTEXT`). Nothing tells a client *what* to call, so each scenario has a
//! fixed recipe below, written with the public `mcp-client` API as an application would.

use mcp_client::transport::http::HttpTransport;
use mcp_client::types::{
    CreateMessageResult, ElicitRequestParams, ElicitResult, Role, SamplingMessageContent, SamplingMessageContentBlock,
    TextContent,
};
use mcp_client::{Client, ClientBuilder, ClientError, ElicitationModes, Sampling, TransportError};
use mcp_oauth::{EnterpriseGrant, Grant, HeadlessRedirect, OAuthProvider, SigningKey, StaticClient};
use serde_json::{json, Map, Value};
use std::process::ExitCode;
use std::sync::Arc;

/// The Client ID Metadata Document URL the suite expects (`auth/basic-cimd`).
const CIMD_URL: &str = "https://conformance-test.local/client-metadata.json";
/// Where the mock authorization servers redirect to; nothing listens there: the headless user
/// agent reads the `Location` header instead.
const REDIRECT_URI: &str = "http://localhost:3000/callback";

/// `MCP_CONFORMANCE_CONTEXT`, parsed (null when absent).
fn context() -> Value {
    std::env::var("MCP_CONFORMANCE_CONTEXT").ok().and_then(|c| serde_json::from_str(&c).ok()).unwrap_or_default()
}

/// The OAuth client for an `auth/*` scenario, configured from the scenario's context.
fn oauth(scenario: &str, url: &str) -> Result<OAuthProvider, ClientError> {
    let ctx = context();
    let s = |k: &str| ctx.get(k).and_then(Value::as_str).map(str::to_owned);
    let err = |e: mcp_oauth::OAuthError| ClientError::Transport(TransportError::from(e));
    let ua = Arc::new(HeadlessRedirect::new(REDIRECT_URI).map_err(err)?);
    let mut b = OAuthProvider::builder(url)
        .client_name("mcp-rs-conformance-client")
        .client_metadata_url(CIMD_URL)
        .dpop(true)
        .user_agent(ua);
    let id = s("client_id").unwrap_or_default();
    b = match scenario {
        "auth/pre-registration" => {
            let mut c = StaticClient::new(&id, s("client_secret").as_deref());
            if let Some(issuer) = s("issuer") {
                c = c.issuer(&issuer);
            }
            b.static_client(c)
        }
        "auth/client-credentials-basic" => {
            b.grant(Grant::ClientCredentials).static_client(StaticClient::new(&id, s("client_secret").as_deref()))
        }
        "auth/client-credentials-jwt" => {
            let key = SigningKey::from_pem(&s("private_key_pem").unwrap_or_default()).map_err(err)?;
            b.grant(Grant::ClientCredentials).static_client(StaticClient::new(&id, None).private_key(key))
        }
        "auth/enterprise-managed-authorization" => b
            .grant(Grant::Enterprise(EnterpriseGrant {
                idp_token_endpoint: s("idp_token_endpoint").unwrap_or_default(),
                id_token: s("idp_id_token").unwrap_or_default(),
                idp_client_id: s("idp_client_id"),
                idp_client_secret: None,
            }))
            .static_client(StaticClient::new(&id, s("client_secret").as_deref())),
        "auth/wif-jwt-bearer" => b
            .grant(Grant::JwtBearer { assertion: s("valid_jwt").unwrap_or_default() })
            .static_client(StaticClient::new(&id, None)),
        _ => b,
    };
    b.build().map_err(err)
}

/// Answers an elicitation like a cooperative user: every requested field gets its default or a
/// plausible value of its type (the library fills remaining defaults and validates).
async fn elicit(params: ElicitRequestParams) -> Result<ElicitResult, ClientError> {
    let bad = |e: serde_json::Error| ClientError::handler(e.to_string());
    let params = serde_json::to_value(params).map_err(bad)?;
    let mut content = Map::new();
    if let Some(props) = params.pointer("/requestedSchema/properties").and_then(Value::as_object) {
        for (name, schema) in props {
            if schema.get("default").is_some() {
                continue; // left for the library's default filling
            }
            let v = match schema.get("type").and_then(Value::as_str) {
                Some("boolean") => json!(true),
                Some("integer") => json!(1),
                Some("number") => json!(1.5),
                _ => match schema.get("enum").and_then(Value::as_array).and_then(|e| e.first()) {
                    Some(first) => first.clone(),
                    None => json!("conformance"),
                },
            };
            content.insert(name.clone(), v);
        }
    }
    serde_json::from_value(json!({ "action": "accept", "content": content })).map_err(bad)
}

fn builder(protocol: &str) -> ClientBuilder {
    let b = ClientBuilder::new("mcp-rs-conformance-client", env!("CARGO_PKG_VERSION"))
        .on_elicitation(ElicitationModes::FORM, elicit)
        .on_sampling(Sampling::Text, |_p| async move {
            let text = SamplingMessageContentBlock::Text(TextContent::new("ok"));
            Ok(CreateMessageResult {
                meta: None,
                role: Role::Assistant,
                content: SamplingMessageContent::Single(text),
                model: "none".into(),
                stop_reason: Some("endTurn".into()),
                extra: Map::new(),
            })
        })
        .roots(Vec::new());
    if protocol.starts_with("2025") || protocol.starts_with("2024") {
        b.force_legacy(protocol)
    } else {
        b
    }
}

async fn run(scenario: &str, url: &str, protocol: &str) -> Result<(), ClientError> {
    let mut transport = HttpTransport::builder(url);
    if scenario.starts_with("auth/") {
        transport = transport.auth(Arc::new(oauth(scenario, url)?));
    }
    let transport = transport.build()?;
    let client: Client = builder(protocol).connect(transport).await?;
    match scenario {
        "initialize" => {
            client.list_tools().await?;
        }
        "tools_call" => {
            for t in client.list_tools().await? {
                if t.name == "add_numbers" {
                    let r = client.call_tool("add_numbers", json!({"a": 2, "b": 3})).await?;
                    println!("{}", r.text());
                }
            }
        }
        "request-metadata" => {
            client.discover().await?;
            client.list_tools().await?;
        }
        "sep-2322-client-request-state" => {
            client.list_tools().await?;
            for name in
                ["test_mrtr_echo_state", "test_mrtr_unrelated", "test_mrtr_no_state", "test_mrtr_no_result_type"]
            {
                let r = client.call_tool(name, json!({})).await?;
                println!("{name}: {}", r.text());
            }
        }
        "http-standard-headers" => {
            for t in client.list_tools().await? {
                client.call_tool(&t.name, json!({})).await?;
            }
            for r in client.list_resources().await? {
                client.read_resource(&r.uri).await?;
            }
            for p in client.list_prompts().await? {
                client.get_prompt(&p.name, Map::new()).await?;
            }
        }
        "http-custom-headers" => {
            client.list_tools().await?;
            let ctx = context();
            for call in ctx["toolCalls"].as_array().cloned().unwrap_or_default() {
                let name = call["name"].as_str().unwrap_or_default();
                client.call_tool(name, call["arguments"].clone()).await?;
            }
        }
        "http-invalid-tool-headers" => {
            // The library drops tools with invalid x-mcp-header annotations; call what remains.
            for t in client.list_tools().await? {
                client.call_tool(&t.name, json!({"region": "us-west1"})).await?;
            }
        }
        "json-schema-ref-no-deref" => {
            client.list_tools().await?;
        }
        "json-schema-2020-12-preservation" => {
            let tools = client.list_tools().await?;
            let schema = tools
                .iter()
                .find(|t| t.name == "json_schema_2020_12_tool")
                .map(|t| t.raw()["inputSchema"].clone())
                .ok_or_else(|| ClientError::invalid_response("json_schema_2020_12_tool not offered"))?;
            client.call_tool("json_schema_echo", json!({ "schema": schema })).await?;
        }
        "elicitation-sep1034-client-defaults" => {
            client.list_tools().await?;
            let r = client.call_tool("test_client_elicitation_defaults", json!({})).await?;
            println!("{}", r.text());
        }
        "sse-retry" => {
            client.list_tools().await?;
            let r = client.call_tool("test_reconnection", json!({})).await?;
            println!("{}", r.text());
        }
        "sep-2640-client-no-prefetch" => {
            // A host lists skills and reads nothing until one is needed.
            for s in client.list_skills().await? {
                println!("skill {} ({}): {}", s.name(), s.uri, s.description());
            }
        }
        verify if verify.starts_with("sep-2640-client-verify-") => {
            // Load the skill (SKILL.md, verified); only then, and only if it verified, its files.
            for entry in client.list_skills().await? {
                match client.load_skill(&entry).await {
                    Ok(skill) => {
                        println!("loaded {} ({} bytes)", entry.name(), skill.skill_md().len());
                        if let mcp_client::SkillResources::Files(files) = &entry.resources {
                            for f in files.iter().filter(|f| f.uri != entry.uri) {
                                skill.read(&f.uri).await?;
                            }
                        }
                    }
                    Err(e) => eprintln!("refused {}: {e}", entry.uri),
                }
            }
        }
        auth if auth.starts_with("auth/") => {
            // The OAuth flow ran on the first request's 401; then two authenticated requests
            // (step-up and authorization-server migration need the second).
            client.list_tools().await?;
            let r = client.call_tool("test-tool", json!({})).await?;
            println!("{}", r.text());
        }
        other => {
            // Unknown scenario: exercise the basics so the run still does something useful.
            eprintln!("mcp-conformance-client: no recipe for scenario {other:?}; listing tools");
            client.list_tools().await?;
        }
    }
    client.close().await;
    Ok(())
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_env("MCP_LOG").unwrap_or_else(|_| "warn".into()))
        .init();
    let Some(url) = std::env::args().next_back().filter(|a| a.starts_with("http")) else {
        eprintln!("usage: mcp-conformance-client URL (with MCP_CONFORMANCE_SCENARIO set)");
        return ExitCode::from(2);
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let protocol = std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION").unwrap_or_else(|_| "2026-07-28".into());
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("tokio runtime");
    match rt.block_on(run(&scenario, &url, &protocol)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mcp-conformance-client: {scenario}: {e}");
            ExitCode::FAILURE
        }
    }
}
