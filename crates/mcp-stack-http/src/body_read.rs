//! Reading request bodies under the transport's limits: size, time, and a budget of body bytes
//! held in memory by all requests together.
//!
//! Why each limit exists:
//! - **Size** (`EndpointConfig::max_body_bytes`): one request cannot make the server hold more.
//! - **Memory proportional to bytes received**: every received frame is copied into one growing
//!   buffer and released at once. Keeping the frames themselves (as `collect()` does) pins the
//!   connection's whole read buffer per frame, so a body trickled one byte per write would cost
//!   kilobytes per byte. A body that is whole in its first frame (the usual case) is kept as it
//!   came: the caller parses it at once and lets it go.
//! - **Time** ([`EndpointConfig::body_read_timeout`], [`EndpointConfig::body_idle_timeout`]): a client
//!   that sends headers and then a byte now and then cannot hold a connection (and its buffer)
//!   forever; it gets 408.
//! - **Budget** ([`EndpointConfig::max_body_bytes_in_flight`]): without it the bound on memory is
//!   connections x body limit (gigabytes). It is charged for the bytes received, as they arrive,
//!   not for the declared `Content-Length` (a client declaring 2 MiB and sending 40 bytes would
//!   otherwise hold 2 MiB of it: 32 such sockets made every POST wait). When the bytes received
//!   by all requests reach it, a request waits up to [`EndpointConfig::body_budget_wait`] for room,
//!   then gets 503 with `Retry-After`. The buffer grows to at most twice the bytes received.

use crate::config::{EndpointConfig, RequestBody};
use bytes::Bytes;
use http_body_util::BodyExt;
use mcp_protocol::ProtocolError;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

/// The shared budget of request-body bytes held in memory at once.
#[derive(Debug, Clone)]
pub(crate) struct BodyBudget {
    sem: Arc<Semaphore>,
}

/// Bytes reserved from the budget; they return to it when this is dropped.
#[derive(Debug, Default)]
pub(crate) struct Reserved(Option<OwnedSemaphorePermit>);

impl BodyBudget {
    pub(crate) fn new(bytes: usize) -> Self {
        Self { sem: Arc::new(Semaphore::new(bytes.min(Semaphore::MAX_PERMITS))) }
    }

    /// Grows `held` by `n` bytes, waiting until `until()` for room (the clock is read only when
    /// there is none at once).
    async fn reserve(
        &self,
        held: &mut Reserved,
        n: usize,
        until: impl FnOnce() -> Instant,
    ) -> Result<(), ProtocolError> {
        let n = u32::try_from(n).unwrap_or(u32::MAX);
        let permit = match self.sem.clone().try_acquire_many_owned(n) {
            Ok(p) => p,
            // Boxed: waiting is rare, and its timer would widen every body read's future.
            Err(_) => Box::pin(self.wait_for(n, until())).await?,
        };
        match &mut held.0 {
            Some(p) => p.merge(permit),
            None => held.0 = Some(permit),
        }
        Ok(())
    }

    /// Waits until `until` for `n` bytes of room (503 with `Retry-After` when there is none).
    async fn wait_for(&self, n: u32, until: Instant) -> Result<OwnedSemaphorePermit, ProtocolError> {
        match tokio::time::timeout_at(until, self.sem.clone().acquire_many_owned(n)).await {
            Ok(Ok(p)) => Ok(p),
            _ => Err(ProtocolError::unavailable(
                "request_bodies",
                "the server is receiving too many request bodies; retry shortly",
            )),
        }
    }
}

impl Reserved {
    /// How many bytes are reserved.
    fn len(&self) -> usize {
        self.0.as_ref().map_or(0, |p| p.num_permits())
    }
}

/// The body's declared length as it reports it: hyper's (and axum's) body takes it from
/// `Content-Length`, which hyper has already parsed and checked for framing.
pub(crate) fn declared_length<B: RequestBody>(body: &B) -> Option<usize> {
    http_body::Body::size_hint(body).exact().and_then(|n| usize::try_from(n).ok())
}

/// Reads a whole body within the size, time and budget limits. The returned [`Reserved`] keeps
/// the body's bytes counted against the budget until the caller has parsed them.
pub(crate) async fn read_body<B: RequestBody>(
    body: B,
    declared: Option<usize>,
    config: &EndpointConfig,
    budget: &BodyBudget,
) -> Result<(Bytes, Reserved), ProtocolError> {
    let mut body = Box::pin(body);
    let read = read_pinned(body.as_mut(), declared, config, budget).await;
    if let Err(ProtocolError::PayloadTooLarge { .. }) = &read {
        linger(body, config.linger_bytes, config.linger_time);
    }
    read
}

/// Reads and discards what is left of a refused body in the background, bounded in bytes and
/// time, so a client that writes its whole body before reading gets the 413 instead of a reset
/// (hyper keeps receiving the body only while someone reads it).
fn linger<B: RequestBody>(mut body: Pin<Box<B>>, max_bytes: usize, max_time: Duration) {
    if max_bytes == 0 || max_time.is_zero() {
        return;
    }
    tokio::spawn(async move {
        let drain = async {
            let mut seen = 0usize;
            while let Some(Ok(frame)) = body.frame().await {
                if let Ok(d) = frame.into_data() {
                    seen += bytes::Buf::remaining(&d);
                    if seen > max_bytes {
                        break;
                    }
                }
            }
        };
        let _ = tokio::time::timeout(max_time, drain).await;
    });
}

async fn read_pinned<B: RequestBody>(
    mut body: Pin<&mut B>,
    declared: Option<usize>,
    config: &EndpointConfig,
    budget: &BodyBudget,
) -> Result<(Bytes, Reserved), ProtocolError> {
    let limit = config.max_body_bytes;
    if declared.is_some_and(|len| len > limit) {
        return Err(ProtocolError::PayloadTooLarge { limit });
    }
    // The body's time limit counts from the first frame that is not there at once: a small
    // body that came with its head (the usual case) costs no clock read and no timer. What
    // is read before that is bounded by the size limit, not by time.
    let mut deadline: Option<Instant> = None;
    // Nothing is reserved for the declared length: a client that declares 2 MiB and sends 40
    // bytes holds 40 bytes of the budget (and of memory), not 2 MiB.
    let mut held = Reserved::default();
    let mut buf: Vec<u8> = Vec::new();
    loop {
        // The body's own error type need not be `Send`: it is dropped on the spot, so nothing
        // of it lives across an await.
        let ready = futures::FutureExt::now_or_never(body.as_mut().frame()).map(|f| f.map(|r| r.map_err(drop)));
        let next = match ready {
            Some(f) => f,
            None => {
                let now = Instant::now();
                let end = *deadline.get_or_insert(now + config.body_read_timeout);
                let stall = now + config.body_idle_timeout;
                // Boxed: a body that came with its head never waits here.
                match Box::pin(tokio::time::timeout_at(stall.min(end), body.as_mut().frame())).await {
                    Ok(f) => f.map(|r| r.map_err(drop)),
                    Err(_) => return Err(timeout_error(config, end)),
                }
            }
        };
        let frame = match next {
            Some(Ok(f)) => f,
            None => break,
            Some(Err(_)) => return Err(ProtocolError::InvalidRequest("failed to read request body".into())),
        };
        let Ok(mut data) = frame.into_data() else { continue };
        let need = buf.len() + bytes::Buf::remaining(&data);
        if need > limit {
            return Err(ProtocolError::PayloadTooLarge { limit });
        }
        if need > held.len() {
            let wait_until = || {
                let wait = Instant::now() + config.body_budget_wait;
                deadline.map_or(wait, |d| wait.min(d))
            };
            let more = need - held.len();
            budget.reserve(&mut held, more, wait_until).await?;
        }
        if buf.is_empty() && body.is_end_stream() {
            // The whole body in one frame (the usual case): kept as it came (for hyper's
            // `Bytes`, no copy). The caller parses it at once and then lets it go.
            let len = bytes::Buf::remaining(&data);
            return Ok((bytes::Buf::copy_to_bytes(&mut data, len), held));
        }
        // Room for what arrived, growing at most to twice what arrived (or to the declared
        // length once it is that close), so memory follows the bytes received.
        if need > buf.capacity() {
            let grow = need.max(buf.len() * 2);
            let want = match declared {
                Some(d) if d >= need => grow.min(d),
                _ => grow,
            };
            buf.reserve_exact(want - buf.len());
        }
        // Copied (contiguous or not), so the frame and the read buffer it points into go now.
        bytes::BufMut::put(&mut buf, data);
    }
    Ok((Bytes::from(buf), held))
}

#[cold]
fn timeout_error(config: &EndpointConfig, deadline: Instant) -> ProtocolError {
    if Instant::now() >= deadline {
        ProtocolError::RequestTimeout {
            limit: config.body_read_timeout,
            message: format!("the request body did not arrive within {}", secs(config.body_read_timeout)),
        }
    } else {
        ProtocolError::RequestTimeout {
            limit: config.body_idle_timeout,
            message: format!("the request body stalled for {} between chunks", secs(config.body_idle_timeout)),
        }
    }
}

fn secs(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{}s", d.as_secs())
    } else {
        format!("{}ms", d.as_millis())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::{Full, StreamBody};

    fn config() -> EndpointConfig {
        EndpointConfig { max_body_bytes: 1000, max_body_bytes_in_flight: 3000, ..EndpointConfig::default() }
    }

    #[tokio::test]
    async fn reads_within_limits_and_counts_against_the_budget() {
        let (c, budget) = (config(), BodyBudget::new(3000));
        let (b, held) = read_body(Full::new(Bytes::from(vec![b'x'; 700])), Some(700), &c, &budget).await.unwrap();
        assert_eq!(b.len(), 700);
        assert_eq!(budget.sem.available_permits(), 2300);
        drop(held);
        assert_eq!(budget.sem.available_permits(), 3000);
        let e = read_body(Full::new(Bytes::from(vec![b'x'; 1001])), None, &c, &budget).await.unwrap_err();
        assert_eq!(e, ProtocolError::PayloadTooLarge { limit: 1000 });
        assert_eq!(budget.sem.available_permits(), 3000, "a refused body returns its reservation");
    }

    #[tokio::test(start_paused = true)]
    async fn a_full_budget_waits_then_answers_503() {
        let (c, budget) = (config(), BodyBudget::new(1500));
        let (_b, held) = read_body(Full::new(Bytes::from(vec![b'x'; 1000])), Some(1000), &c, &budget).await.unwrap();
        let t = Instant::now();
        let e = read_body(Full::new(Bytes::from(vec![b'x'; 1000])), Some(1000), &c, &budget).await.unwrap_err();
        assert!(matches!(e, ProtocolError::Unavailable { resource: "request_bodies", .. }), "{e:?}");
        assert_eq!(e.http_status(), 503);
        assert_eq!(t.elapsed(), c.body_budget_wait);
        // Room frees up while the next one waits: it is served.
        let next = tokio::spawn({
            let (c, budget) = (c.clone(), budget.clone());
            async move { read_body(Full::new(Bytes::from(vec![b'y'; 900])), Some(900), &c, &budget).await.map(|r| r.0) }
        });
        tokio::time::sleep(Duration::from_millis(100)).await;
        drop(held);
        assert_eq!(next.await.unwrap().unwrap().len(), 900);
    }

    #[tokio::test(start_paused = true)]
    async fn the_budget_is_charged_for_bytes_received_not_declared() {
        let (c, budget) = (config(), BodyBudget::new(1500));
        // Declares 1000 bytes, sends 40, then nothing (until its body deadline).
        let frames =
            futures::stream::iter(vec![Ok::<_, std::io::Error>(http_body::Frame::data(Bytes::from(vec![b' '; 40])))])
                .chain(futures::stream::pending());
        let slow = tokio::spawn({
            let (c, budget) = (c.clone(), budget.clone());
            async move { read_body(StreamBody::new(frames), Some(1000), &c, &budget).await.map(|r| r.0) }
        });
        tokio::time::sleep(Duration::from_millis(10)).await;
        assert_eq!(budget.sem.available_permits(), 1460, "40 bytes arrived, 40 are held");
        // A whole body of 1000 fits beside it at once.
        let t = Instant::now();
        let (b, held) = read_body(Full::new(Bytes::from(vec![b'x'; 1000])), Some(1000), &c, &budget).await.unwrap();
        assert_eq!((b.len(), t.elapsed()), (1000, Duration::ZERO));
        assert_eq!(budget.sem.available_permits(), 460);
        drop(held);
        assert_eq!(slow.await.unwrap().unwrap_err().http_status(), 408);
        assert_eq!(budget.sem.available_permits(), 1500);
    }

    #[tokio::test(start_paused = true)]
    async fn a_stalled_body_gets_408() {
        let c = EndpointConfig { body_idle_timeout: Duration::from_secs(2), ..config() };
        let budget = BodyBudget::new(3000);
        let frames = futures::stream::iter(vec![Ok::<_, std::io::Error>(http_body::Frame::data(Bytes::from("x")))])
            .chain(futures::stream::pending());
        let t = Instant::now();
        let e = read_body(StreamBody::new(frames), None, &c, &budget).await.unwrap_err();
        assert_eq!(e.http_status(), 408);
        assert_eq!(t.elapsed(), Duration::from_secs(2));
        assert!(e.to_string().contains("stalled for 2s"), "{e}");
        // A trickle that never stalls long enough still ends at the total deadline.
        let c = EndpointConfig {
            body_idle_timeout: Duration::from_secs(2),
            body_read_timeout: Duration::from_secs(7),
            ..c
        };
        let trickle = futures::stream::unfold((), |()| async {
            tokio::time::sleep(Duration::from_secs(1)).await;
            Some((Ok::<_, std::io::Error>(http_body::Frame::data(Bytes::from("x"))), ()))
        });
        let t = Instant::now();
        let e = read_body(StreamBody::new(trickle), None, &c, &budget).await.unwrap_err();
        assert_eq!(t.elapsed(), Duration::from_secs(7));
        assert!(e.to_string().contains("within 7s"), "{e}");
        assert_eq!(budget.sem.available_permits(), 3000);
    }

    use futures::StreamExt as _;
}
