//! The authorization steps of `mcp doctor`: the stored token (`mcp auth login`), and on a
//! `401` the discovery chain a client walks (MCP authorization, 2026-07-28): the
//! `WWW-Authenticate` challenge, protected-resource metadata (RFC 9728), authorization-server
//! metadata (RFC 8414 / OpenID Connect discovery), the registration methods it offers, and PKCE.
//! The parsers, URL orders and checks are `mcp-oauth`'s, so the report matches what
//! `mcp auth login` and the other commands do.

use crate::probe::{Answer, Prober};
use crate::{Report, Status, Step};
use mcp_client::AuthProvider;
use mcp_oauth::{
    check_endpoint, resource_matches, resource_metadata_urls, server_metadata_urls, BearerChallenge, FileStore,
    OAuthProvider, ProtectedResourceMetadata, ServerMetadata, TokenStore,
};
use serde_json::Value;
use std::sync::Arc;
use url::Url;

fn now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

/// The credentials the probes carry: a stored token (through the CLI's OAuth provider, which
/// refreshes it) or an `Authorization` header given with `--header`.
#[derive(Debug)]
pub(crate) struct Token {
    provider: Option<Arc<OAuthProvider>>,
    /// The `token` step (its state; the verdict is added once the server answered).
    pub(crate) step: Step,
    /// Whether requests carry credentials.
    pub(crate) sent: bool,
}

impl Token {
    /// The stored authorization of `raw` (the URL as given; `url` parsed).
    pub(crate) async fn load(raw: &str, url: &Url, headers: &[(String, String)], opts: &crate::Options) -> Self {
        if headers.iter().any(|(k, _)| k == "authorization") {
            let step = Step::new("token", Status::Pass, "using the Authorization header given with --header");
            return Self { provider: None, step, sent: true };
        }
        let login = format!("log in: mcp auth login {raw}");
        let Some(path) = opts.token_store.clone() else {
            return Self {
                provider: None,
                step: Step::new("token", Status::Skip, "no token store given: stored tokens not checked"),
                sent: false,
            };
        };
        let data = match FileStore::new(&path).load() {
            Ok(d) => d,
            Err(e) => {
                let mut step = Step::new("token", Status::Warn, format!("cannot read {}: {e}", path.display()));
                step.hint("fix or remove the file, then log in again");
                return Self { provider: None, step, sent: false };
            }
        };
        let Some(session) = data.session(raw).or_else(|| data.session(url.as_str())) else {
            let step = Step::new("token", Status::Skip, format!("not logged in (no token stored for {raw})"));
            return Self { provider: None, step, sent: false };
        };
        let t = &session.tokens;
        let expired = t.expires_at.is_some_and(|e| e <= now());
        let expiry = match t.expires_at {
            None => "no expiry given".to_owned(),
            Some(_) if expired => "expired".to_owned(),
            Some(e) => format!("expires in {} min", (e - now()).div_ceil(60)),
        };
        let refresh = if t.refresh_token.is_some() { "refreshable" } else { "not refreshable" };
        let mut detail = format!("{} token from {}, {expiry}, {refresh}", t.token_type, session.issuer);
        if !t.scopes.is_empty() {
            detail.push_str(&format!(", scopes {}", t.scopes.join(" ")));
        }
        if expired && t.refresh_token.is_none() {
            let mut step = Step::new("token", Status::Fail, detail);
            step.hint(format!("the token expired and cannot be refreshed: {login}"));
            return Self { provider: None, step, sent: false };
        }
        if t.dpop_jkt.is_some() {
            let mut step = Step::new("token", Status::Warn, format!("{detail}; bound to a DPoP key (not checked)"));
            step.hint("the client commands do not hold that key: the token is not used by them");
            return Self { provider: None, step, sent: false };
        }
        let Some(provider) = opts.auth.clone() else {
            let mut step = Step::new("token", Status::Warn, format!("{detail}; the stored authorization is unusable"));
            step.hint(login);
            return Self { provider: None, step, sent: false };
        };
        // Asking for the headers refreshes an expired (or nearly expired) token.
        match provider.headers("POST", url.as_str()).await {
            Ok(h) if !h.is_empty() => {
                if expired {
                    detail.push_str("; refreshed");
                }
                Self { provider: Some(provider), step: Step::new("token", Status::Pass, detail), sent: true }
            }
            Ok(_) => {
                let mut step = Step::new("token", Status::Warn, format!("{detail}; nothing to send"));
                step.hint(login);
                Self { provider: None, step, sent: false }
            }
            Err(e) => {
                let mut step = Step::new("token", Status::Fail, format!("{detail}; refreshing it failed: {e}"));
                step.hint(login);
                Self { provider: None, step, sent: false }
            }
        }
    }

    /// The headers a request to `url` carries (the provider's; `--header` ones are the
    /// prober's own).
    pub(crate) async fn headers(&self, method: &str, url: &Url) -> Vec<(String, String)> {
        match &self.provider {
            Some(p) => p.headers(method, url.as_str()).await.unwrap_or_default(),
            None => Vec::new(),
        }
    }
}

/// GETs a metadata document: the JSON, or why not (one line).
async fn fetch(prober: &Prober, url: &Url) -> Result<Value, String> {
    match prober.get_json(url).await {
        Ok((200..=299, Some(v), _)) if v.is_object() => Ok(v),
        Ok((status @ 200..=299, _, summary)) => Err(format!("{url}: not a JSON object ({summary}, HTTP {status})")),
        Ok((status, _, _)) => Err(format!("{url}: HTTP {status}")),
        Err(e) => Err(format!("{url}: {}", e.line())),
    }
}

/// Walks the discovery chain after a `401` (or a `403` challenge) and ends with the
/// `authorization` verdict.
pub(crate) async fn walk(
    report: &mut Report,
    prober: &Prober,
    answer: &Answer,
    token: &Token,
    raw: &str,
    store: Option<&std::path::Path>,
) {
    let www = answer.header("www-authenticate");
    let info = BearerChallenge::from_header(www.as_deref());
    challenge_step(report, answer.status, www.as_deref(), &info);
    let prm = resource_metadata(report, prober, &info).await;
    let meta = match &prm {
        Some(p) => server_metadata(report, prober, p).await,
        None => None,
    };
    match &meta {
        Some((issuer, m)) => {
            registration(report, issuer, m, store);
            pkce(report, m);
        }
        None => {
            let why = if prm.is_some() { "no authorization server metadata" } else { "no protected resource metadata" };
            report.skip_rest(&["auth server", "registration", "pkce"], why);
        }
    }
    let scope = info.scope.as_ref().map(|s| s.join(" "));
    let err = info.error.clone().unwrap_or_default();
    let said = match (&info.error, &info.error_description) {
        (Some(e), Some(d)) => format!(" ({e}: {d})"),
        (Some(e), None) => format!(" ({e})"),
        _ => String::new(),
    };
    if answer.status == 403 && err == "insufficient_scope" {
        let step = report.fail("authorization", format!("HTTP 403: the token lacks a scope the server needs{said}"));
        step.hint(match &scope {
            Some(s) => format!("log in again with it: mcp auth login {raw} --scope {}", s.replace(' ', " --scope ")),
            None => format!("log in again with the scopes the server needs: mcp auth login {raw} --scope SCOPE"),
        });
    } else if token.sent {
        report
            .fail("authorization", format!("HTTP {}: the server rejected the token{said}", answer.status))
            .hint(format!("log in again: mcp auth login {raw}"))
            .hint("or check that the token was issued for this server (its audience / resource)");
    } else {
        let step = report
            .fail("authorization", format!("HTTP {}: the server requires authorization; not logged in", answer.status));
        step.hint(format!("log in: mcp auth login {raw}"));
        step.hint("or send a token you already have: --header 'Authorization: Bearer TOKEN'");
        if let Some(s) = scope {
            step.hint(format!("the server asks for the scope {s}"));
        }
    }
    if let Some(s) = report.steps.iter_mut().find(|s| s.name == "token" && s.status == Status::Pass && token.sent) {
        s.status = Status::Fail;
        s.detail.push_str("; rejected by the server");
    }
}

fn challenge_step(report: &mut Report, status: u16, www: Option<&str>, info: &BearerChallenge) {
    let Some(_) = www else {
        report
            .warn("challenge", format!("HTTP {status} without a WWW-Authenticate header"))
            .hint("the server should name its resource metadata there (RFC 9728); looking at the well-known URLs");
        return;
    };
    let mut parts = vec![info.scheme.clone().unwrap_or_else(|| "no scheme".into())];
    if let Some(r) = &info.resource_metadata {
        parts.push(format!("resource_metadata={r}"));
    }
    if let Some(s) = &info.scope {
        parts.push(format!("scope=\"{}\"", s.join(" ")));
    }
    if let Some(e) = &info.error {
        parts.push(format!("error={e}"));
    }
    let step = report.pass("challenge", format!("HTTP {status}: {}", parts.join(", ")));
    if info.resource_metadata.is_none() {
        step.status = Status::Warn;
        step.hint("no resource_metadata parameter: the client falls back to the well-known URLs");
    }
}

/// The `resource metadata` step: from the challenge's URL, else the well-known URLs.
async fn resource_metadata(
    report: &mut Report,
    prober: &Prober,
    info: &BearerChallenge,
) -> Option<ProtectedResourceMetadata> {
    let server = &prober.url;
    let mut tried = Vec::new();
    let mut candidates = Vec::new();
    if let Some(h) = &info.resource_metadata {
        match check_endpoint(h, "resource_metadata") {
            // Like the client: a hint on another origin is not fetched.
            Ok(u) if u.origin() != server.origin() => {
                tried.push(format!("{h}: on another origin than the server, so clients ignore it"))
            }
            Ok(u) => candidates.push(u),
            Err(e) => tried.push(format!("{h}: {e}")),
        }
    }
    let hinted = candidates.first().cloned();
    for u in resource_metadata_urls(server) {
        if !candidates.contains(&u) {
            candidates.push(u);
        }
    }
    for url in candidates {
        let doc = match fetch(prober, &url).await {
            Ok(d) => d,
            Err(e) => {
                tried.push(e);
                continue;
            }
        };
        let prm: ProtectedResourceMetadata = match serde_json::from_value(doc) {
            Ok(p) => p,
            Err(e) => {
                report
                    .fail("resource metadata", format!("{url}: invalid protected resource metadata: {e}"))
                    .hint("RFC 9728 needs `resource` and `authorization_servers`");
                return None;
            }
        };
        if !resource_matches(&prm.resource, server) {
            report
                .fail("resource metadata", format!("{url} names the resource {:?}, which is not {server}", prm.resource))
                .hint("the resource must be this URL (same scheme, host and port; its path a prefix of the URL's): fix it on the server (`mcp serve --auth-audience`)");
            return None;
        }
        if prm.authorization_servers.is_empty() {
            report.fail("resource metadata", format!("{url} lists no authorization server"));
            return None;
        }
        let scopes = prm.scopes_supported.as_ref().map(|s| format!("; scopes {}", s.join(" "))).unwrap_or_default();
        let detail = format!(
            "{url}: resource {}, authorization server {}{scopes}",
            prm.resource,
            prm.authorization_servers.join(", ")
        );
        let step = report.pass("resource metadata", detail);
        if hinted.as_ref().is_some_and(|h| *h != url) || (info.resource_metadata.is_some() && hinted.is_none()) {
            step.status = Status::Warn;
            step.hint(format!(
                "the challenge's resource_metadata URL failed ({}): fix the URL the server announces",
                tried.first().cloned().unwrap_or_default()
            ));
        }
        return Some(prm);
    }
    report
        .fail("resource metadata", "no protected resource metadata found")
        .hint(format!("tried: {}", tried.join("; ")))
        .hint("the server must serve RFC 9728 metadata at the URL its WWW-Authenticate names, or at /.well-known/oauth-protected-resource");
    None
}

/// The `auth server` step: the metadata of the first authorization server.
async fn server_metadata(
    report: &mut Report,
    prober: &Prober,
    prm: &ProtectedResourceMetadata,
) -> Option<(String, ServerMetadata)> {
    let issuer = prm.authorization_servers[0].clone();
    let issuer_url = match check_endpoint(&issuer, "authorization server issuer") {
        Ok(u) => u,
        Err(e) => {
            report.fail("auth server", e.to_string()).hint("issuers must be https (http only on loopback hosts)");
            return None;
        }
    };
    if let (Some(server), Some(issuer_ip)) = (literal_ip(&prober.url), literal_ip(&issuer_url)) {
        if !mcp_oauth::is_internal_ip(server) && mcp_oauth::is_internal_ip(issuer_ip) {
            report
                .fail("auth server", format!("{issuer} is on an internal address and the server is not"))
                .hint("clients refuse authorization servers on loopback, private or link-local addresses named by a public server");
            return None;
        }
    }
    let mut tried = Vec::new();
    for url in server_metadata_urls(&issuer_url) {
        let doc = match fetch(prober, &url).await {
            Ok(d) => d,
            Err(e) => {
                tried.push(e);
                continue;
            }
        };
        let meta: ServerMetadata = match serde_json::from_value(doc) {
            Ok(m) => m,
            Err(e) => {
                report.fail("auth server", format!("{url}: invalid authorization server metadata: {e}"));
                return None;
            }
        };
        if meta.issuer != issuer {
            report
                .fail("auth server", format!("{url} names the issuer {:?}, not {issuer:?}", meta.issuer))
                .hint("the metadata's issuer must equal the issuer in the resource metadata, character for character");
            return None;
        }
        for which in ["authorization_endpoint", "token_endpoint"] {
            if let Err(e) = meta.endpoint(which) {
                report
                    .fail("auth server", format!("{url}: {e}"))
                    .hint("endpoints must be https (http only on loopback hosts)");
                return None;
            }
        }
        let kind = if url.path().contains("openid-configuration") { "OpenID Connect discovery" } else { "RFC 8414" };
        let step = report.pass("auth server", format!("{issuer} ({kind}, {url})"));
        if !tried.is_empty() {
            step.detail.push_str(&format!(" after {} other URL(s)", tried.len()));
        }
        return Some((issuer, meta));
    }
    report
        .fail("auth server", format!("no authorization server metadata for {issuer}"))
        .hint(format!("tried: {}", tried.join("; ")))
        .hint("the authorization server must serve RFC 8414 or OpenID Connect discovery metadata");
    None
}

/// The `registration` step: which ways of getting a client id the server offers.
fn registration(report: &mut Report, issuer: &str, m: &ServerMetadata, store: Option<&std::path::Path>) {
    let cimd = m.client_id_metadata_document_supported == Some(true);
    let dcr = m.registration_endpoint.is_some();
    let stored = store
        .and_then(|p| FileStore::new(p).load().ok())
        .and_then(|d| d.clients.get(issuer).map(|c| c.client_id.clone()));
    let mut offers = Vec::new();
    if cimd {
        offers.push("client ID metadata documents");
    }
    if dcr {
        offers.push("dynamic client registration");
    }
    let offered = if offers.is_empty() { "no registration method".to_owned() } else { offers.join(" and ") };
    match (stored, dcr) {
        (Some(id), _) => {
            report.pass("registration", format!("offers {offered}; a client is already registered here ({id})"));
        }
        (None, true) => {
            report.pass("registration", format!("offers {offered}; `mcp auth login` registers dynamically"));
        }
        (None, false) if cimd => {
            report
                .warn("registration", format!("offers {offered} only"))
                .hint("`mcp auth login` has no client metadata document URL: pre-register a client and pass --client-id ID (or MCP_OAUTH_CLIENT_ID)");
        }
        (None, false) => {
            report
                .warn("registration", "offers no registration (no registration_endpoint, no client ID metadata documents): a pre-registered client is needed")
                .hint("get a client id from the authorization server's administrator: mcp auth login URL --client-id ID");
        }
    }
}

/// The `pkce` step: S256 must be advertised.
fn pkce(report: &mut Report, m: &ServerMetadata) {
    match &m.code_challenge_methods_supported {
        _ if m.supports_s256() => {
            report.pass("pkce", "S256 supported");
        }
        None => {
            report
                .fail("pkce", "code_challenge_methods_supported is absent: the authorization server does not advertise PKCE, and MCP clients must refuse to proceed")
                .hint("the authorization server's metadata must list S256 in code_challenge_methods_supported");
        }
        Some(list) => {
            report
                .fail("pkce", format!("S256 is not offered (code_challenge_methods_supported: {})", list.join(", ")))
                .hint("MCP clients use the S256 code challenge method: the authorization server must support it");
        }
    }
}

/// The host of `url` when it is an IP literal.
fn literal_ip(url: &Url) -> Option<std::net::IpAddr> {
    match url.host()? {
        url::Host::Ipv4(ip) => Some(ip.into()),
        url::Host::Ipv6(ip) => Some(ip.into()),
        url::Host::Domain(_) => None,
    }
}
