//! Resumable response streams of legacy sessions (2025-11-25 Streamable HTTP).
//!
//! A legacy request answered as SSE gets a stream number. Its first event primes the client
//! with an id and a `retry` delay (no data), every later message gets the id `STREAM-SEQ` and
//! is kept in the session's log until the stream has finished and been superseded. When the
//! connection ends early (the client went away, or the handler called
//! `Context::close_stream`), the handler keeps running and its messages keep being logged; a GET
//! with `Last-Event-ID` replays what came after that id and follows the stream live to its end.

use bytes::Bytes;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;

/// Reconnection delay announced in the priming event, in milliseconds.
const RETRY_MS: u64 = 1000;
/// Finished streams kept per session for late resumption.
const KEEP_FINISHED: usize = 32;
/// Buffer of a live connection; a client that falls further behind is cut off and resumes.
const LIVE_BUFFER: usize = 64;

/// One response stream: its logged events and the connection following it, if any.
#[derive(Default)]
pub(crate) struct StreamLog {
    events: Vec<Bytes>,
    live: Option<mpsc::Sender<Bytes>>,
    done: bool,
    /// When it was opened, among the session's streams (older ones are forgotten first).
    order: u64,
    /// The copy kept in a shared store, in order (`None`: finished), for other instances.
    mirror: Option<mpsc::UnboundedSender<Option<Bytes>>>,
}

/// A shared handle to one stream's log.
#[derive(Clone)]
pub(crate) struct Stream {
    number: u64,
    log: Arc<Mutex<StreamLog>>,
}

/// Where a session's streams are mirrored: its shared store.
pub(crate) struct Mirror {
    pub(crate) store: Arc<dyn crate::shared::SessionStore>,
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
        let mut log = self.log.lock().expect("stream lock");
        let seq = log.events.len() + 1;
        let mut event = format!("id: {}-{seq}\nevent: message\ndata: ", self.number).into_bytes();
        event.extend_from_slice(json);
        event.extend_from_slice(b"\n\n");
        let event = Bytes::from(event);
        log.events.push(event.clone());
        if let Some(m) = &log.mirror {
            let _ = m.send(Some(event.clone()));
        }
        if let Some(live) = &log.live {
            if live.try_send(event).is_err() {
                log.live = None; // gone, or too slow: it resumes from its last event id
            }
        }
    }

    /// Ends the current connection (the handler keeps running).
    pub(crate) fn detach(&self) {
        self.log.lock().expect("stream lock").live = None;
    }

    /// Marks the stream finished and ends its connection.
    pub(crate) fn finish(&self) {
        let mut log = self.log.lock().expect("stream lock");
        log.done = true;
        log.live = None;
        if let Some(m) = log.mirror.take() {
            let _ = m.send(None);
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
            let entry = crate::shared::StreamEntry::Opened;
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
        let mut map = self.map.lock().expect("streams lock");
        map.insert(number, log.clone());
        // Forget the oldest finished streams beyond the limit.
        if map.len() > KEEP_FINISHED {
            let mut done: Vec<(u64, u64)> = map
                .iter()
                .filter_map(|(n, l)| {
                    let l = l.lock().expect("stream lock");
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

    /// Whether the stream `last_event_id` names is kept here.
    pub(crate) fn has(&self, last_event_id: &str) -> bool {
        event_id(last_event_id).is_some_and(|(n, _)| self.map.lock().expect("streams lock").contains_key(&n))
    }

    /// Resumes after `last_event_id` (`STREAM-SEQ`): replays the later events, then follows the
    /// stream live until it finishes. `None` for an unknown stream.
    pub(crate) fn resume(&self, last_event_id: &str) -> Option<mpsc::Receiver<Bytes>> {
        let (number, seq) = event_id(last_event_id)?;
        let log = self.map.lock().expect("streams lock").get(&number)?.clone();
        let mut log = log.lock().expect("stream lock");
        let replay = log.events.get(seq.min(log.events.len())..).unwrap_or_default();
        let (tx, rx) = mpsc::channel(replay.len() + LIVE_BUFFER);
        for event in replay {
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

/// Copies a stream's events to the shared store in order, from a task of its own.
fn spawn_mirror(m: &Mirror, number: u64) -> mpsc::UnboundedSender<Option<Bytes>> {
    let (tx, mut rx) = mpsc::unbounded_channel::<Option<Bytes>>();
    let (store, session, idle) = (m.store.clone(), m.session.clone(), m.idle);
    tokio::spawn(async move {
        while let Some(event) = rx.recv().await {
            let last = event.is_none();
            let entry = event.map_or(crate::shared::StreamEntry::Finished, crate::shared::StreamEntry::Event);
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
    store: Arc<dyn crate::shared::SessionStore>,
    session: String,
    last_event_id: &str,
    ended: tokio_util::sync::CancellationToken,
) -> Option<mpsc::Receiver<Bytes>> {
    let (number, seq) = event_id(last_event_id)?;
    let first = store.replay(&session, number).await.ok()??;
    let (tx, rx) = mpsc::channel(LIVE_BUFFER);
    tokio::spawn(async move {
        let mut sent = seq;
        let mut stored = first;
        // Followed at most as long as a session may stay idle, polling the store.
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(3600);
        loop {
            for e in stored.events.iter().skip(sent) {
                if tx.send(e.clone()).await.is_err() {
                    return;
                }
            }
            sent = sent.max(stored.events.len());
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
