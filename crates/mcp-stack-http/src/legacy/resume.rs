//! Resumable response streams of legacy sessions (2025-11-25 Streamable HTTP).
//!
//! A legacy request answered as SSE gets a stream number. Its first event primes the client
//! with an id and a `retry` delay (no data), every later message gets the id `STREAM-SEQ` and
//! is kept in the session's log (its last [`MAX_LOGGED_EVENTS`] events and at most
//! [`MAX_LOGGED_BYTES`]; older ones are dropped) until the stream has finished and been superseded. When the
//! connection ends early (the client went away, or the handler called
//! `Context::close_stream`), the handler keeps running and its messages keep being logged; a GET
//! with `Last-Event-ID` replays what came after that id and follows the stream live to its end.
//! An id older than what the log still holds is treated like an unknown one (400): the client
//! cannot be given the events it missed.

use bytes::Bytes;
use parking_lot::Mutex;
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use tokio::sync::mpsc;

/// Reconnection delay announced in the priming event, in milliseconds.
const RETRY_MS: u64 = 1000;
/// Finished streams kept per session for late resumption.
const KEEP_FINISHED: usize = 32;
/// Buffer of a live connection; a client that falls further behind is cut off and resumes.
const LIVE_BUFFER: usize = 64;
/// Most events kept in one stream's log (older ones are dropped).
pub(crate) const MAX_LOGGED_EVENTS: usize = 1024;
/// Most bytes of events kept in one stream's log (older ones are dropped; the newest is kept).
pub(crate) const MAX_LOGGED_BYTES: usize = 4 << 20;
/// Events waiting to be copied to the shared store; past it the copy is cut short (the
/// stored stream is marked finished, so resumers elsewhere see it end).
const MIRROR_BUFFER: usize = 256;

/// One response stream: its logged events and the connection following it, if any.
#[derive(Default)]
pub(crate) struct StreamLog {
    /// The latest events (`base + 1` is the sequence number of the first).
    events: VecDeque<Bytes>,
    /// How many events were dropped from the front.
    base: usize,
    /// The bytes in `events`.
    bytes: usize,
    live: Option<mpsc::Sender<Bytes>>,
    done: bool,
    /// When it was opened, among the session's streams (older ones are forgotten first).
    order: u64,
    /// The copy kept in a shared store, in order (`None`: finished), for other instances.
    mirror: Option<mpsc::Sender<Option<Bytes>>>,
}

/// A shared handle to one stream's log.
#[derive(Clone)]
pub(crate) struct Stream {
    number: u64,
    log: Arc<Mutex<StreamLog>>,
}

/// Where a session's streams are mirrored: its shared store.
pub(crate) struct Mirror {
    pub(crate) store: Arc<dyn super::store::SessionStore>,
    pub(crate) session: String,
    pub(crate) idle: std::time::Duration,
}

impl Stream {
    /// [`Stream::push`] of a message not yet serialized (a notification or server request).
    pub(crate) fn push_message(&self, message: &serde_json::Value) {
        self.push(&serde_json::to_vec(message).expect("JSON serializes"));
    }

    /// Logs one serialized JSON-RPC message and sends it to the live connection, if any.
    pub(crate) fn push(&self, json: &[u8]) {
        let mut log = self.log.lock();
        let seq = log.base + log.events.len() + 1;
        let mut event = format!("id: {}-{seq}\nevent: message\ndata: ", self.number).into_bytes();
        event.extend_from_slice(json);
        event.extend_from_slice(b"\n\n");
        let event = Bytes::from(event);
        log.bytes += event.len();
        log.events.push_back(event.clone());
        while log.events.len() > MAX_LOGGED_EVENTS || (log.bytes > MAX_LOGGED_BYTES && log.events.len() > 1) {
            let old = log.events.pop_front().expect("not empty");
            log.bytes -= old.len();
            log.base += 1;
        }
        if let Some(m) = &log.mirror {
            if m.try_send(Some(event.clone())).is_err() {
                tracing::warn!(
                    stream = self.number,
                    "the session store falls behind: a resumable stream's copy there is cut short"
                );
                if let Some(m) = log.mirror.take() {
                    tokio::spawn(async move {
                        let _ = m.send(None).await;
                    });
                }
            }
        }
        if let Some(live) = &log.live {
            if live.try_send(event).is_err() {
                log.live = None; // gone, or too slow: it resumes from its last event id
            }
        }
    }

    /// Ends the current connection (the handler keeps running).
    pub(crate) fn detach(&self) {
        self.log.lock().live = None;
    }

    /// Marks the stream finished and ends its connection.
    pub(crate) fn finish(&self) {
        let mut log = self.log.lock();
        log.done = true;
        log.live = None;
        if let Some(m) = log.mirror.take() {
            if let Err(mpsc::error::TrySendError::Full(end)) = m.try_send(None) {
                tokio::spawn(async move {
                    let _ = m.send(end).await;
                });
            }
        }
    }
}

/// Every resumable stream of one session.
#[derive(Default)]
pub(crate) struct Streams {
    next: AtomicU64,
    map: Mutex<HashMap<u64, Arc<Mutex<StreamLog>>>>,
    /// Set when the session is shared: streams are numbered at random (unique across the
    /// instances) and mirrored to the store.
    mirror: Option<Mirror>,
}

impl Streams {
    /// The streams of a session shared through `mirror`.
    pub(crate) fn mirrored(mirror: Mirror) -> Self {
        Self { mirror: Some(mirror), ..Self::default() }
    }

    /// Opens a stream (see [`Streams::open_local`]); a mirrored one is registered in the
    /// shared store first, so that another instance can resume it as soon as its response starts.
    pub(crate) async fn open(&self) -> (Stream, mpsc::Receiver<Bytes>) {
        let opened = self.open_local();
        if let Some(m) = &self.mirror {
            let entry = super::store::StreamEntry::Opened;
            if let Err(e) = m.store.append(&m.session, opened.0.number, entry, m.idle).await {
                tracing::warn!(error = %e, "a resumable stream was not registered in the session store");
            }
        }
        opened
    }

    /// Opens a stream here: its handle and the receiving end of its first connection, which
    /// starts with the priming event.
    fn open_local(&self) -> (Stream, mpsc::Receiver<Bytes>) {
        let order = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        // Shared: a random number no other instance picks (53 bits: exact in any JSON reader).
        let number = if self.mirror.is_some() { rand::random::<u64>() >> 11 | 1 << 40 } else { order };
        let (tx, rx) = mpsc::channel(LIVE_BUFFER);
        let priming = format!("id: {number}-0\nretry: {RETRY_MS}\ndata: \n\n");
        let _ = tx.try_send(Bytes::from(priming));
        let mirror = self.mirror.as_ref().map(|m| spawn_mirror(m, number));
        let log = Arc::new(Mutex::new(StreamLog { live: Some(tx), order, mirror, ..StreamLog::default() }));
        let mut map = self.map.lock();
        map.insert(number, log.clone());
        // Forget the oldest finished streams beyond the limit.
        if map.len() > KEEP_FINISHED {
            let mut done: Vec<(u64, u64)> = map
                .iter()
                .filter_map(|(n, l)| {
                    let l = l.lock();
                    l.done.then_some((l.order, *n))
                })
                .collect();
            done.sort_unstable();
            for (_, n) in &done[..done.len().saturating_sub(KEEP_FINISHED)] {
                map.remove(n);
            }
        }
        (Stream { number, log }, rx)
    }

    /// Whether the stream `last_event_id` names is kept here (its events may be partly dropped).
    pub(crate) fn has(&self, last_event_id: &str) -> bool {
        event_id(last_event_id).is_some_and(|(n, _)| self.map.lock().contains_key(&n))
    }

    /// Resumes after `last_event_id` (`STREAM-SEQ`): replays the later events, then follows the
    /// stream live until it finishes. `None` for an unknown stream, or an id older than the log
    /// still holds (the events after it are gone).
    pub(crate) fn resume(&self, last_event_id: &str) -> Option<mpsc::Receiver<Bytes>> {
        let (number, seq) = event_id(last_event_id)?;
        let log = self.map.lock().get(&number)?.clone();
        let mut log = log.lock();
        if seq < log.base {
            return None;
        }
        let from = (seq - log.base).min(log.events.len());
        let (tx, rx) = mpsc::channel(log.events.len() - from + LIVE_BUFFER);
        for event in log.events.range(from..) {
            let _ = tx.try_send(event.clone());
        }
        if !log.done {
            log.live = Some(tx); // a newer connection replaces an older one
        }
        Some(rx)
    }
}

/// The stream number and sequence number of an event id (`STREAM-SEQ`).
fn event_id(id: &str) -> Option<(u64, usize)> {
    let (number, seq) = id.split_once('-')?;
    Some((number.parse().ok()?, seq.parse().ok()?))
}

/// The sequence number of a logged event (`id: STREAM-SEQ\n...`).
fn stored_seq(event: &Bytes) -> Option<usize> {
    let line = event.strip_prefix(b"id: ")?.split(|b| *b == b'\n').next()?;
    event_id(std::str::from_utf8(line).ok()?).map(|(_, seq)| seq)
}

/// Copies a stream's events to the shared store in order, from a task of its own.
fn spawn_mirror(m: &Mirror, number: u64) -> mpsc::Sender<Option<Bytes>> {
    let (tx, mut rx) = mpsc::channel::<Option<Bytes>>(MIRROR_BUFFER);
    let (store, session, idle) = (m.store.clone(), m.session.clone(), m.idle);
    tokio::spawn(async move {
        while let Some(event) = rx.recv().await {
            let last = event.is_none();
            let entry = event.map_or(super::store::StreamEntry::Finished, super::store::StreamEntry::Event);
            if let Err(e) = store.append(&session, number, entry, idle).await {
                tracing::warn!(error = %e, "a resumable stream event was not stored");
            }
            if last {
                return;
            }
        }
    });
    tx
}

/// Resumes stream `last_event_id` of session `session` from the shared store (it was served
/// by another instance): replays what came after that id, then follows the store until the
/// stream finishes, the client leaves or `ended` fires. `None` for an unknown stream.
pub(crate) async fn resume_shared(
    store: Arc<dyn super::store::SessionStore>,
    session: String,
    last_event_id: &str,
    ended: tokio_util::sync::CancellationToken,
) -> Option<mpsc::Receiver<Bytes>> {
    let (number, seq) = event_id(last_event_id)?;
    let first = store.replay(&session, number).await.ok()??;
    // The store keeps the latest events only: an id older than them is like an unknown one.
    if first.events.first().and_then(stored_seq).is_some_and(|oldest| oldest > seq + 1) {
        return None;
    }
    let (tx, rx) = mpsc::channel(LIVE_BUFFER);
    tokio::spawn(async move {
        let mut sent = seq;
        let mut stored = first;
        // Followed at most as long as a session may stay idle, polling the store.
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(3600);
        loop {
            // By sequence number, not position: the store trims the oldest events.
            for e in &stored.events {
                let Some(n) = stored_seq(e).filter(|n| *n > sent) else { continue };
                if tx.send(e.clone()).await.is_err() {
                    return;
                }
                sent = n;
            }
            if stored.done || tokio::time::Instant::now() >= deadline {
                return;
            }
            tokio::select! {
                _ = tokio::time::sleep(std::time::Duration::from_millis(50)) => {}
                _ = tx.closed() => return,
                _ = ended.cancelled() => return,
            }
            match store.replay(&session, number).await {
                Ok(Some(s)) => stored = s,
                _ => return,
            }
        }
    });
    Some(rx)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(rx: &mut mpsc::Receiver<Bytes>) -> Vec<String> {
        std::iter::from_fn(|| rx.try_recv().ok()).map(|b| String::from_utf8(b.to_vec()).unwrap()).collect()
    }

    #[tokio::test]
    async fn a_live_stream_keeps_only_its_latest_events() {
        let streams = Streams::default();
        let (stream, live) = streams.open_local();
        drop(live); // the client went away: everything is only logged
        for i in 0..(MAX_LOGGED_EVENTS + 500) {
            stream.push(format!("{{\"n\":{i}}}").as_bytes());
        }
        {
            let log = stream.log.lock();
            assert_eq!((log.events.len(), log.base), (MAX_LOGGED_EVENTS, 500));
        }
        // Resuming inside the log replays what came after; before it is like an unknown id.
        let mut rx = streams.resume("1-1400").expect("in the log");
        let replayed = drain(&mut rx);
        assert_eq!(replayed.len(), MAX_LOGGED_EVENTS + 500 - 1400);
        assert!(replayed[0].starts_with("id: 1-1401\n"), "{}", replayed[0]);
        assert!(streams.resume("1-10").is_none(), "older than the log");
        assert!(streams.resume("1-500").is_some(), "the first event still held comes next");
        assert_eq!(stored_seq(&Bytes::from_static(b"id: 7-42\nevent: message\ndata: {}\n\n")), Some(42));

        // Bytes are bounded too: big events push out the old ones, the newest always stays.
        let (big, _live) = streams.open_local();
        let chunk = vec![b'x'; 1 << 20];
        for _ in 0..10 {
            big.push(&chunk);
        }
        let log = big.log.lock();
        assert!(
            log.bytes <= MAX_LOGGED_BYTES && log.events.len() == 3,
            "{} events, {} bytes",
            log.events.len(),
            log.bytes
        );
    }
}
