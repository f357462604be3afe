//! URL rules: endpoints must be `https`, or `http` on a loopback host; nothing else
//! (`file:`, `javascript:`, custom schemes) is ever fetched or opened.

use crate::error::OAuthError;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use url::{Host, Url};

/// Whether `url` names a loopback host (`localhost`, `*.localhost`, 127.0.0.0/8, `::1`).
pub fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(Host::Domain(d)) => {
            let d = d.trim_end_matches('.').to_ascii_lowercase();
            d == "localhost" || d.ends_with(".localhost")
        }
        Some(Host::Ipv4(ip)) => ip.is_loopback(),
        Some(Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

/// Parses an endpoint URL (`what` names it in errors) and checks it: `https`, or `http` on a
/// loopback host; a host; no user info; no fragment.
pub fn check_endpoint(raw: &str, what: &str) -> Result<Url, OAuthError> {
    let url = Url::parse(raw.trim())
        .map_err(|e| OAuthError::insecure_url(format!("{what}: not a URL ({e})")).caused_by(e))?;
    check_url(&url, what)?;
    Ok(url)
}

/// Checks an already parsed URL against the endpoint rules.
pub(crate) fn check_url(url: &Url, what: &str) -> Result<(), OAuthError> {
    match url.scheme() {
        "https" => {}
        "http" if is_loopback(url) => {}
        "http" => {
            return Err(OAuthError::insecure_url(format!(
                "{what}: plain http is allowed only on loopback hosts ({})",
                url.host_str().unwrap_or_default()
            )))
        }
        other => return Err(OAuthError::insecure_url(format!("{what}: scheme {other:?} is not allowed"))),
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(OAuthError::insecure_url(format!("{what}: no host")));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(OAuthError::insecure_url(format!("{what}: credentials in the URL")));
    }
    if url.fragment().is_some() {
        return Err(OAuthError::insecure_url(format!("{what}: fragment in the URL")));
    }
    Ok(())
}

/// Whether `ip` is not a public internet address: loopback (127/8, `::1`), unspecified
/// (`0.0.0.0`, `::`, and 0/8), RFC 1918 private (10/8, 172.16/12, 192.168/16), link-local
/// (169.254/16, `fe80::/10`), shared address space (100.64/10), broadcast, IPv6 unique-local
/// (`fc00::/7`) and site-local (`fec0::/10`); IPv4-mapped, IPv4-compatible and NAT64
/// (`64:ff9b::/96`) IPv6 addresses are judged by their IPv4 address.
pub fn is_internal_ip(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_internal_v4(v4),
        IpAddr::V6(v6) => is_internal_v6(v6),
    }
}

fn is_internal_v4(ip: Ipv4Addr) -> bool {
    let o = ip.octets();
    ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_broadcast()
        || o[0] == 0
        || (o[0] == 100 && (o[1] & 0xc0) == 64)
}

fn is_internal_v6(ip: Ipv6Addr) -> bool {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return is_internal_v4(v4);
    }
    let seg = ip.segments();
    // IPv4-compatible (::a.b.c.d, deprecated) and NAT64 (64:ff9b::/96) embed an IPv4 address.
    let embedded = Ipv4Addr::new((seg[6] >> 8) as u8, seg[6] as u8, (seg[7] >> 8) as u8, seg[7] as u8);
    if seg[..6] == [0; 6] && !ip.is_loopback() && !ip.is_unspecified() {
        return is_internal_v4(embedded);
    }
    if seg[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return is_internal_v4(embedded);
    }
    ip.is_loopback()
        || ip.is_unspecified()
        || (seg[0] & 0xfe00) == 0xfc00
        || (seg[0] & 0xffc0) == 0xfe80
        || (seg[0] & 0xffc0) == 0xfec0
}

/// The address rule for authorization-server endpoints: when the MCP server is on a public
/// address (`server_internal` false), every address an endpoint resolves to must be public too;
/// the first internal one is returned as the reason to refuse. An MCP server on a loopback,
/// private or link-local address may use authorization servers on such addresses.
pub(crate) fn internal_target(server_internal: bool, endpoint: &[IpAddr]) -> Option<IpAddr> {
    if server_internal {
        return None;
    }
    endpoint.iter().copied().find(|ip| is_internal_ip(*ip))
}

/// Checks the hosts of authorization-server endpoints against the MCP server's: see
/// [`internal_target`]. The MCP server's host is resolved once, on first use.
#[derive(Debug)]
pub(crate) struct NetGuard {
    server: Url,
    server_internal: tokio::sync::OnceCell<bool>,
}

impl NetGuard {
    pub(crate) fn new(server: Url) -> Self {
        Self { server, server_internal: tokio::sync::OnceCell::new() }
    }

    /// Whether the MCP server is on an internal address (any of its addresses; an unresolvable
    /// server counts as public).
    pub(crate) async fn server_internal(&self) -> bool {
        *self
            .server_internal
            .get_or_init(|| async {
                let port = self.server.port_or_known_default().unwrap_or(443);
                match resolve_host(&self.server, port).await {
                    Ok(addrs) => addrs.iter().any(|ip| is_internal_ip(*ip)),
                    Err(e) => {
                        tracing::debug!(error = %e, "cannot resolve the MCP server host; treating it as public");
                        false
                    }
                }
            })
            .await
    }

    /// Refuses `addrs` (the resolved addresses of an endpoint `host`) by the address rule.
    pub(crate) async fn check_addrs(&self, host: &str, addrs: &[IpAddr], what: &str) -> Result<(), OAuthError> {
        match internal_target(self.server_internal().await, addrs) {
            None => Ok(()),
            Some(ip) => {
                tracing::warn!(
                    host = %host,
                    address = %ip,
                    server = %redact(&self.server),
                    "refused a request to an internal address named by a public MCP server"
                );
                Err(OAuthError::insecure_url(format!(
                    "{what}: {host} is on an internal address ({ip}) but the MCP server {} is not",
                    redact(&self.server)
                )))
            }
        }
    }

    /// Resolves `url`'s host and checks every address (see [`internal_target`]).
    pub(crate) async fn check_url(&self, url: &Url, what: &str) -> Result<(), OAuthError> {
        let port = url.port_or_known_default().unwrap_or(443);
        let addrs = resolve_host(url, port).await.map_err(|e| {
            OAuthError::Http(format!("{what}: cannot resolve {}: {e}", url.host_str().unwrap_or_default()), None)
        })?;
        self.check_addrs(url.host_str().unwrap_or_default(), &addrs, what).await
    }
}

/// The addresses of `url`'s host (IP literals as they are, names through the system resolver).
async fn resolve_host(url: &Url, port: u16) -> std::io::Result<Vec<IpAddr>> {
    match url.host() {
        Some(Host::Ipv4(ip)) => Ok(vec![IpAddr::V4(ip)]),
        Some(Host::Ipv6(ip)) => Ok(vec![IpAddr::V6(ip)]),
        Some(Host::Domain(d)) => Ok(tokio::net::lookup_host((d, port)).await?.map(|a| a.ip()).collect()),
        None => Err(std::io::Error::other("no host")),
    }
}

/// The DNS resolver of the guarded HTTP client: resolves, checks every address by the address
/// rule, and hands exactly the checked addresses to the connector (so a second, different DNS
/// answer cannot slip an internal address in between check and connect).
#[derive(Debug)]
pub(crate) struct GuardedResolver(pub(crate) std::sync::Arc<NetGuard>);

impl reqwest::dns::Resolve for GuardedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let guard = self.0.clone();
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let addrs: Vec<std::net::SocketAddr> = tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let ips: Vec<IpAddr> = addrs.iter().map(|a| a.ip()).collect();
            guard.check_addrs(&host, &ips, "authorization server endpoint").await?;
            let out: reqwest::dns::Addrs = Box::new(addrs.into_iter());
            Ok(out)
        })
    }
}

/// A URL fit for logs: scheme, host, port and path only.
pub(crate) fn redact(url: &Url) -> String {
    format!(
        "{}://{}{}",
        url.scheme(),
        url.host_str().unwrap_or_default(),
        url.port().map(|p| format!(":{p}")).unwrap_or_default()
    ) + url.path()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoint_rules() {
        assert!(check_endpoint("https://as.example.com/token", "t").is_ok());
        assert!(check_endpoint("http://localhost:8080/token", "t").is_ok());
        assert!(check_endpoint("http://127.0.0.7/token", "t").is_ok());
        assert!(check_endpoint("http://[::1]:9/token", "t").is_ok());
        assert!(check_endpoint("http://as.example.com/token", "t").is_err());
        assert!(check_endpoint("http://10.0.0.1/token", "t").is_err());
        assert!(check_endpoint("file:///etc/passwd", "t").is_err());
        assert!(check_endpoint("javascript:alert(1)", "t").is_err());
        assert!(check_endpoint("myapp://callback", "t").is_err());
        assert!(check_endpoint("https://user:pw@as.example.com/", "t").is_err());
        assert!(check_endpoint("https://as.example.com/#frag", "t").is_err());
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn address_classes() {
        for internal in [
            "127.0.0.1",
            "127.9.9.9",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "100.127.255.254",
            "0.0.0.0",
            "0.1.2.3",
            "255.255.255.255",
            "::1",
            "::",
            "fc00::1",
            "fd12:3456::1",
            "fe80::1",
            "febf::1",
            "fec0::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "::ffff:169.254.169.254",
            "::10.0.0.1",
            "64:ff9b::a9fe:a9fe",
        ] {
            assert!(is_internal_ip(ip(internal)), "{internal} is internal");
        }
        for public in
            ["8.8.8.8", "1.1.1.1", "172.32.0.1", "100.128.0.1", "192.169.0.1", "2001:4860::8888", "::ffff:8.8.8.8"]
        {
            assert!(!is_internal_ip(ip(public)), "{public} is public");
        }
    }

    #[test]
    fn internal_endpoints_only_for_internal_servers() {
        let private_as = [ip("93.184.216.34"), ip("169.254.169.254")];
        assert_eq!(internal_target(false, &private_as), Some(ip("169.254.169.254")));
        assert_eq!(internal_target(false, &[ip("10.0.0.5")]), Some(ip("10.0.0.5")));
        assert_eq!(internal_target(false, &[ip("93.184.216.34")]), None);
        assert_eq!(internal_target(true, &private_as), None);
        assert_eq!(internal_target(true, &[ip("127.0.0.1")]), None);
    }

    #[tokio::test]
    async fn guard_refuses_internal_endpoints_of_a_public_server() {
        // IP literals only: nothing is resolved, nothing is sent.
        let public = NetGuard::new(Url::parse("https://203.0.113.7/mcp").unwrap());
        for target in [
            "http://127.0.0.1:9/token",
            "https://169.254.169.254/latest",
            "https://10.0.0.1/t",
            "https://[::ffff:192.168.0.1]/t",
            "https://[fe80::1]/t",
            "https://0.0.0.0/t",
        ] {
            let err = public.check_url(&Url::parse(target).unwrap(), "token_endpoint").await.unwrap_err();
            assert!(
                matches!(err, OAuthError::InsecureUrl { message: ref m, .. } if m.contains("internal address")),
                "{target}: {err}"
            );
        }
        assert!(public.check_url(&Url::parse("https://198.51.100.1/token").unwrap(), "t").await.is_ok());
        let local = NetGuard::new(Url::parse("http://127.0.0.1:3000/mcp").unwrap());
        assert!(local.check_url(&Url::parse("http://127.0.0.1:9/token").unwrap(), "t").await.is_ok());
        assert!(local.check_url(&Url::parse("https://10.0.0.1/token").unwrap(), "t").await.is_ok());
    }

    #[tokio::test]
    async fn guarded_resolver_refuses_internal_answers() {
        use reqwest::dns::Resolve;
        use std::str::FromStr;
        let public = std::sync::Arc::new(NetGuard::new(Url::parse("https://203.0.113.7/mcp").unwrap()));
        // An IP literal as the name: the system resolver answers without any DNS traffic.
        let r = GuardedResolver(public).resolve(reqwest::dns::Name::from_str("127.0.0.1").unwrap()).await;
        assert!(r.is_err());
        let local = std::sync::Arc::new(NetGuard::new(Url::parse("http://127.0.0.1:1/mcp").unwrap()));
        let addrs: Vec<_> =
            GuardedResolver(local).resolve(reqwest::dns::Name::from_str("127.0.0.1").unwrap()).await.unwrap().collect();
        assert_eq!(addrs.len(), 1);
    }
}
