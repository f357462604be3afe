//! The HTTP transport's auth hook: headers on every request, a retry after a handled
//! challenge, bounded retries, and errors from the provider.

use crate::http_support::*;
use futures::future::BoxFuture;
use mcp_client::transport::http::HttpTransport;
use mcp_client::transport::Transport;
use mcp_client::{AuthChallenge, AuthProvider, TransportError};
use serde_json::json;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// Sends `Bearer t<N>`; each handled challenge bumps N. `fail` makes challenges an error.
#[derive(Default)]
struct Fake {
    generation: AtomicUsize,
    challenges: Mutex<Vec<AuthChallenge>>,
    handle: bool,
    fail: bool,
}

impl AuthProvider for Fake {
    fn headers<'a>(
        &'a self,
        method: &'a str,
        _url: &'a str,
    ) -> BoxFuture<'a, Result<Vec<(String, String)>, TransportError>> {
        let g = self.generation.load(Ordering::SeqCst);
        Box::pin(async move {
            Ok(vec![("authorization".into(), format!("Bearer t{g}")), ("x-method".into(), method.into())])
        })
    }

    fn on_challenge(&self, challenge: AuthChallenge) -> BoxFuture<'_, Result<bool, TransportError>> {
        Box::pin(async move {
            self.challenges.lock().unwrap().push(challenge);
            if self.fail {
                return Err(TransportError::Auth("no way".into(), None));
            }
            self.generation.fetch_add(1, Ordering::SeqCst);
            Ok(self.handle)
        })
    }
}

/// A server that accepts only `Bearer t<accept>` and challenges everything else.
async fn server(accept: usize, log: Log) -> String {
    serve(move |req, s| {
        let log = log.clone();
        async move {
            log.lock().unwrap().push(req.clone());
            if req.header("authorization") == Some(&format!("Bearer t{accept}")) {
                respond_json(s, "200 OK", &[], &response(1)).await;
            } else {
                let h = [
                    ("WWW-Authenticate", r#"Bearer error="invalid_token", resource_metadata="http://x/prm""#),
                    ("DPoP-Nonce", "n1"),
                ];
                respond(s, "401 Unauthorized", &h, b"").await;
            }
        }
    })
    .await
}

#[tokio::test]
async fn adds_headers_and_retries_after_a_handled_challenge() {
    bounded(async {
        let log = log();
        let url = server(1, log.clone()).await;
        let fake = Arc::new(Fake { handle: true, ..Fake::default() });
        let t = HttpTransport::builder(&url).auth(fake.clone()).build().unwrap();
        let mut ex = t.request(request(1, "tools/list")).await.unwrap();
        assert_eq!(ex.next().await.unwrap().unwrap(), response(1));
        let reqs = log.lock().unwrap().clone();
        assert_eq!(reqs.len(), 2);
        assert_eq!(reqs[0].header("authorization"), Some("Bearer t0"));
        assert_eq!(reqs[1].header("authorization"), Some("Bearer t1"));
        assert_eq!(reqs[1].header("x-method"), Some("POST"));
        assert_eq!(reqs[0].body, reqs[1].body);
        let ch = fake.challenges.lock().unwrap()[0].clone();
        assert_eq!(ch.status, 401);
        assert_eq!(ch.dpop_nonce.as_deref(), Some("n1"));
        assert_eq!(ch.authorization.as_deref(), Some("Bearer t0"));
        assert!(ch.www_authenticate.as_deref().unwrap().contains("resource_metadata"));
        assert!(!format!("{ch:?}").contains("t0"), "the Debug output hides the credentials");
        // Notifications get the header too.
        t.send(json!({"jsonrpc": "2.0", "method": "notifications/x"}), vec![]).await.unwrap();
        assert_eq!(log.lock().unwrap().last().unwrap().header("authorization"), Some("Bearer t1"));
    })
    .await;
}

#[tokio::test]
async fn retries_are_bounded_and_unhandled_challenges_surface() {
    bounded(async {
        let log = log();
        let url = server(99, log.clone()).await;
        let fake = Arc::new(Fake { handle: true, ..Fake::default() });
        let t = HttpTransport::builder(&url).auth(fake.clone()).build().unwrap();
        let err = t.request(request(1, "tools/list")).await.unwrap_err();
        assert!(matches!(err, TransportError::Http { status: 401, .. }), "{err:?}");
        assert_eq!(log.lock().unwrap().len(), 3, "one request and two retries");

        let log2 = crate::http_support::log();
        let url = server(99, log2.clone()).await;
        let t = HttpTransport::builder(&url).auth(Arc::new(Fake::default())).build().unwrap();
        let err = t.request(request(1, "tools/list")).await.unwrap_err();
        assert!(matches!(err, TransportError::Http { status: 401, www_authenticate: Some(_), .. }), "{err:?}");
        assert_eq!(log2.lock().unwrap().len(), 1, "not handled: no retry");

        let url = server(99, log.clone()).await;
        let t = HttpTransport::builder(&url).auth(Arc::new(Fake { fail: true, ..Fake::default() })).build().unwrap();
        let err = t.request(request(1, "tools/list")).await.unwrap_err();
        assert!(matches!(err, TransportError::Auth(..)), "{err:?}");
    })
    .await;
}
