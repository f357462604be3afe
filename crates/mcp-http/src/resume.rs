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
}

/// A shared handle to one stream's log.
#[derive(Clone)]
pub(crate) struct Stream {
    number: u64,
    log: Arc<Mutex<StreamLog>>,
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
    }
}

/// Every resumable stream of one session.
#[derive(Default)]
pub(crate) struct Streams {
    next: AtomicU64,
    map: Mutex<HashMap<u64, Arc<Mutex<StreamLog>>>>,
}

impl Streams {
    /// Opens a stream: its handle and the receiving end of its first connection, which starts
    /// with the priming event.
    pub(crate) fn open(&self) -> (Stream, mpsc::Receiver<Bytes>) {
        let number = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let (tx, rx) = mpsc::channel(LIVE_BUFFER);
        let priming = format!("id: {number}-0\nretry: {RETRY_MS}\ndata: \n\n");
        let _ = tx.try_send(Bytes::from(priming));
        let log = Arc::new(Mutex::new(StreamLog { live: Some(tx), ..StreamLog::default() }));
        let mut map = self.map.lock().expect("streams lock");
        map.insert(number, log.clone());
        // Forget the oldest finished streams beyond the limit (numbers grow with age).
        if map.len() > KEEP_FINISHED {
            let mut done: Vec<u64> =
                map.iter().filter(|(_, l)| l.lock().expect("stream lock").done).map(|(n, _)| *n).collect();
            done.sort_unstable();
            for n in &done[..done.len().saturating_sub(KEEP_FINISHED)] {
                map.remove(n);
            }
        }
        (Stream { number, log }, rx)
    }

    /// Resumes after `last_event_id` (`STREAM-SEQ`): replays the later events, then follows the
    /// stream live until it finishes. `None` for an unknown stream.
    pub(crate) fn resume(&self, last_event_id: &str) -> Option<mpsc::Receiver<Bytes>> {
        let (number, seq) = last_event_id.split_once('-')?;
        let (number, seq) = (number.parse::<u64>().ok()?, seq.parse::<usize>().ok()?);
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
