//! The transport over `https://`: a real TLS server (rustls, a certificate `openssl` made for
//! `localhost`) in front of the everything server, a certificate the client does not trust, a
//! plain-HTTP port asked for TLS, and an HTTP proxy's `CONNECT` tunnel.

use mcp_client::transport::http::HttpTransport;
use mcp_client::{ClientBuilder, ClientError, TransportError};
use serde_json::json;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::rustls;

const T: Duration = Duration::from_secs(20);

/// The everything server over TLS on 127.0.0.1 (port 0); its port and certificate (PEM).
async fn tls_everything() -> Option<(u16, Vec<u8>)> {
    use rustls_pki_types::pem::PemObject;
    let (cert_pem, key_pem) = mcp_test_support::tls::self_signed_localhost()?;
    let certs = rustls_pki_types::CertificateDer::pem_slice_iter(&cert_pem).collect::<Result<Vec<_>, _>>().unwrap();
    let key = rustls_pki_types::PrivateKeyDer::from_pem_slice(&key_pem).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let config = mcp::http::EndpointConfig::default().allow_host("localhost");
    let service = mcp::http::McpService::new(mcp_everything::server(), config);
    tokio::spawn(async move {
        for _ in 0..64 {
            let Ok((tcp, _)) = listener.accept().await else { return };
            let (acceptor, service) = (acceptor.clone(), service.clone());
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(tcp).await else { return };
                let handler = hyper::service::service_fn(move |req| {
                    let service = service.clone();
                    async move { Ok::<_, std::convert::Infallible>(service.handle(req).await) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(tls), handler)
                    .await;
            });
        }
    });
    Some((port, cert_pem))
}

pub(crate) async fn a_modern_server_over_https() {
    let Some((port, cert)) = tls_everything().await else { return };
    let url = format!("https://localhost:{port}/mcp");
    let transport = HttpTransport::builder(&url).add_root_certificate_pem(&cert).build().unwrap();
    let client = tokio::time::timeout(T, ClientBuilder::new("t", "1").connect(transport)).await.unwrap().unwrap();
    let r = client.call_tool("echo", json!({"text": "over TLS"})).await.unwrap();
    assert_eq!(r.text(), "over TLS");
    let tools = client.list_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "echo"));
    client.close().await;
}

pub(crate) async fn an_untrusted_certificate_is_refused_before_any_request() {
    let Some((port, _cert)) = tls_everything().await else { return };
    let url = format!("https://localhost:{port}/mcp");
    let transport = HttpTransport::new(&url).unwrap();
    let e = tokio::time::timeout(T, ClientBuilder::new("t", "1").connect(transport)).await.unwrap().unwrap_err();
    let ClientError::Transport(TransportError::Connect(msg, Some(_))) = &e else { panic!("{e:?}") };
    assert!(msg.contains("TLS handshake failed") && msg.contains("certificate"), "{msg}");
}

pub(crate) async fn https_to_a_plain_http_port_says_so() {
    let server = mcp_test_support::child::HttpChild::start();
    let url = server.url.replace("http://", "https://");
    let transport = HttpTransport::new(&url).unwrap();
    let e = tokio::time::timeout(T, ClientBuilder::new("t", "1").connect(transport)).await.unwrap().unwrap_err();
    assert!(e.to_string().contains("did not answer with TLS") && e.to_string().contains("plain http://"), "{e}");
}

/// A minimal HTTP proxy on 127.0.0.1 that only tunnels (`CONNECT`), counting the tunnels and
/// checking the credentials it is given.
async fn connect_proxy(expect_auth: &'static str) -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let tunnels = Arc::new(AtomicUsize::new(0));
    let count = tunnels.clone();
    tokio::spawn(async move {
        for _ in 0..16 {
            let Ok((mut client, _)) = listener.accept().await else { return };
            let count = count.clone();
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") && head.len() < 8192 {
                    if client.read_exact(&mut byte).await.is_err() {
                        return;
                    }
                    head.push(byte[0]);
                }
                let head = String::from_utf8_lossy(&head).into_owned();
                let authority = head.strip_prefix("CONNECT ").and_then(|r| r.split(' ').next()).unwrap_or_default();
                let authorized =
                    head.lines().any(|l| l.eq_ignore_ascii_case(&format!("proxy-authorization: {expect_auth}")));
                if authority.is_empty() || !authorized {
                    let _ = client.write_all(b"HTTP/1.1 407 Proxy Authentication Required\r\n\r\n").await;
                    return;
                }
                let target = authority.replace("localhost", "127.0.0.1");
                let Ok(mut upstream) = TcpStream::connect(target).await else { return };
                count.fetch_add(1, Ordering::SeqCst);
                let _ = client.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n").await;
                let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
            });
        }
    });
    (port, tunnels)
}

pub(crate) async fn https_goes_through_the_proxy_in_the_environment() {
    let Some((port, cert)) = tls_everything().await else { return };
    // user:pa ss (percent-encoded in the URL) -> Basic dXNlcjpwYSBzcw==
    let (proxy_port, tunnels) = connect_proxy("Basic dXNlcjpwYSBzcw==").await;
    // The environment is read when the transport is built; no other test runs meanwhile.
    std::env::set_var("https_proxy", format!("http://user:pa%20ss@127.0.0.1:{proxy_port}"));
    let built =
        HttpTransport::builder(&format!("https://localhost:{port}/mcp")).add_root_certificate_pem(&cert).build();
    std::env::remove_var("https_proxy");
    let client = tokio::time::timeout(T, ClientBuilder::new("t", "1").connect(built.unwrap())).await.unwrap().unwrap();
    let r = client.call_tool("echo", json!({"text": "tunnelled"})).await.unwrap();
    assert_eq!(r.text(), "tunnelled");
    assert!(tunnels.load(Ordering::SeqCst) >= 1, "the connection went through the proxy");
    client.close().await;

    // A proxy that refuses the tunnel is named in the error.
    let (proxy_port, _) = connect_proxy("Basic other").await;
    std::env::set_var("https_proxy", format!("http://127.0.0.1:{proxy_port}"));
    let built =
        HttpTransport::builder(&format!("https://localhost:{port}/mcp")).add_root_certificate_pem(&cert).build();
    std::env::remove_var("https_proxy");
    let e = tokio::time::timeout(T, ClientBuilder::new("t", "1").connect(built.unwrap())).await.unwrap().unwrap_err();
    assert!(e.to_string().contains("the proxy refused the tunnel: HTTP/1.1 407"), "{e}");
}
