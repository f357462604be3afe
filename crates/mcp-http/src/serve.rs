//! Running the endpoint: the `tower::Service` impl and the hyper accept loop behind [`serve`].

use crate::body::McpBody;
use crate::service::{HttpConfig, McpService, RequestBody};
use http::{Request, Response};
use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::net::TcpListener;

impl<B: RequestBody> tower_service::Service<Request<B>> for McpService {
    type Response = Response<McpBody>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response<McpBody>, Infallible>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        let svc = self.clone();
        Box::pin(async move { Ok(svc.handle(req).await) })
    }
}

/// Accepts connections on `listener` and serves the MCP endpoint until the server shuts down.
pub async fn serve(server: mcp_server::Server, listener: TcpListener, config: HttpConfig) -> std::io::Result<()> {
    let shutdown = server.shutdown_token();
    let limit = Arc::new(tokio::sync::Semaphore::new(config.max_connections));
    let svc = McpService::new(server, config);
    loop {
        let permit = tokio::select! {
            p = limit.clone().acquire_owned() => p.expect("semaphore open"),
            _ = shutdown.cancelled() => return Ok(()),
        };
        let (stream, peer): (_, SocketAddr) = tokio::select! {
            r = listener.accept() => match r {
                Ok(x) => x,
                Err(e) => { tracing::warn!(error = %e, "accept failed"); tokio::time::sleep(Duration::from_millis(10)).await; continue; }
            },
            _ = shutdown.cancelled() => return Ok(()),
        };
        let _ = stream.set_nodelay(true);
        let svc = svc.clone();
        let shutdown = shutdown.clone();
        let header_timeout = svc.config().header_read_timeout;
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req| {
                let svc = svc.clone();
                async move { Ok::<_, Infallible>(svc.handle(req).await) }
            });
            let conn = hyper::server::conn::http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(header_timeout)
                .keep_alive(true)
                .pipeline_flush(true)
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service);
            let mut conn = std::pin::pin!(conn);
            tokio::select! {
                r = conn.as_mut() => if let Err(e) = r { tracing::debug!(%peer, error = %e, "connection ended with error") },
                _ = shutdown.cancelled() => {
                    conn.as_mut().graceful_shutdown();
                    let _ = tokio::time::timeout(Duration::from_secs(5), conn).await;
                }
            }
            drop(permit);
        });
    }
}
