//! Legacy (2025-era) Streamable HTTP sessions on Redis ([`mcp_http::SessionStore`]).
//!
//! - `sess:{id}`: a hash with the record as opened (`rec`, JSON), the log level (`level`) and
//!   `init`; `sess:{id}:subs`: the subscribed URIs. Both expire when the session idles.
//! - `sess:{id}:s:{n}`: resumable response stream `n`, a Redis Stream of SSE events.
//! - `sess-index`: every stored session id, scored by when it expires (ms since the epoch):
//!   the global cap ([`crate::RedisOptions::max_sessions`]) counts it, and a new session at the
//!   cap ends the one that expires first (least recently used).
//!
//! Session ids become key names only if they look like ids (letters and digits, at most 128):
//! any other id is unknown without a command sent. A session not yet initialized lives only
//! the short time it was created with, and is not renewed by use until
//! `notifications/initialized` arrives.
//!
//! A change is one Lua script: it applies the change, renews the expiry and publishes the
//! session's shared fields on the sessions channel, all atomically, so every instance sees the
//! changes of one session in the order they happened.

use crate::backend::RedisBackend;
use crate::pubsub::Delivery;
use mcp_http::{
    SessionChange, SessionEvent, SessionRecord, SessionSink, SessionStore, SessionStoreError, SessionStoreFuture,
};
use mcp_http::{StoredStream, StreamEntry};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::time::Duration;

/// Events kept per resumable stream (as the serving instance keeps: older ones are trimmed).
const STREAM_EVENTS: usize = 1024;
/// Longest stored session record (a new one over it is refused; one read back over it is
/// invalid). `initialize` params are capped at 64 KiB by the session core.
const MAX_RECORD: usize = 256 << 10;

/// Whether `id` may become part of a key name.
fn id_ok(id: &str) -> bool {
    !id.is_empty() && id.len() <= 128 && id.bytes().all(|b| b.is_ascii_alphanumeric())
}

/// Stores a session within the global cap: drops expired ids from the index, pops the one
/// expiring first when full (returned, for the caller to end), then stores the new one.
const CREATE: &str = r#"
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
local evicted = false
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then
  local lru = redis.call('ZPOPMIN', KEYS[1])
  evicted = lru[1]
end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[4])
redis.call('HSET', KEYS[2], 'rec', ARGV[5], 'init', ARGV[6])
redis.call('PEXPIRE', KEYS[2], ARGV[7])
return evicted
"#;

/// Renews an initialized session (record, subscriptions, index entry); `ARGV[3]` non-empty
/// also reads it.
const RENEW: &str = r#"
if redis.call('HGET', KEYS[1], 'init') == '1' then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  redis.call('PEXPIRE', KEYS[2], ARGV[1])
  redis.call('ZADD', KEYS[3], ARGV[2], ARGV[4])
end
if ARGV[3] == '' then return 1 end
return {redis.call('HGETALL', KEYS[1]), redis.call('SMEMBERS', KEYS[2])}
"#;

const CHANGE: &str = r#"
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if ARGV[1] == 'level' then redis.call('HSET', KEYS[1], 'level', ARGV[2])
elseif ARGV[1] == 'init' then redis.call('HSET', KEYS[1], 'init', '1')
elseif ARGV[1] == 'sub' then redis.call('SADD', KEYS[2], ARGV[2])
elseif ARGV[1] == 'unsub' then redis.call('SREM', KEYS[2], ARGV[2]) end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
local parts = {}
for i, u in ipairs(redis.call('SMEMBERS', KEYS[2])) do parts[i] = cjson.encode(u) end
local level = redis.call('HGET', KEYS[1], 'level') or ''
local init = redis.call('HGET', KEYS[1], 'init') or '0'
redis.call('PUBLISH', ARGV[4], '{"t":"changed","id":' .. cjson.encode(ARGV[5]) .. ',"level":' .. cjson.encode(level)
  .. ',"init":' .. cjson.encode(init) .. ',"subs":[' .. table.concat(parts, ',') .. ']}')
return 1
"#;

/// A message on the sessions channel or this instance's channel.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "t", rename_all = "lowercase")]
enum Wire {
    Changed { id: String, level: String, init: String, subs: Vec<String> },
    Ended { id: String },
    Cancel { id: String, req: Value },
    Answer { id: String, msg: Map<String, Value> },
}

impl Wire {
    /// The event, if the message is well-formed (checked like client input).
    fn into_event(self) -> Option<SessionEvent> {
        Some(match self {
            Wire::Changed { id, level, init, subs } => {
                let log_level = match level.as_str() {
                    "" => None,
                    l => Some(l.parse::<u8>().ok().filter(|l| *l <= 7)?),
                };
                if !id_ok(&id) || subs.len() > 10_000 || subs.iter().any(|s| s.len() > 8192) {
                    return None;
                }
                SessionEvent::Changed { id, log_level, initialized: init == "1", subscriptions: subs }
            }
            Wire::Ended { id } if id_ok(&id) => SessionEvent::Ended(id),
            Wire::Cancel { id, req } if id_ok(&id) && (req.is_string() || req.is_i64() || req.is_u64()) => {
                SessionEvent::Cancelled { id, request: req }
            }
            Wire::Answer { id, msg } if id_ok(&id) => SessionEvent::Answer { id, message: msg },
            _ => return None,
        })
    }
}

/// A message from the sessions channel or this instance's channel, if well-formed.
pub(crate) fn decode(payload: &[u8]) -> Option<SessionEvent> {
    serde_json::from_slice::<Wire>(payload).ok().and_then(Wire::into_event)
}

/// The session store of a [`RedisBackend`] (see [`RedisBackend::sessions`]).
#[derive(Debug)]
pub struct RedisSessions {
    backend: RedisBackend,
    change: redis::Script,
    create: redis::Script,
    renew: redis::Script,
}

fn unavailable(e: String) -> SessionStoreError {
    SessionStoreError::Unavailable(e)
}

fn ms(d: Duration) -> u64 {
    (d.as_millis() as u64).max(1)
}

fn epoch_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

impl RedisSessions {
    /// Sessions on `backend`.
    pub fn new(backend: RedisBackend) -> Self {
        Self {
            backend,
            change: redis::Script::new(CHANGE),
            create: redis::Script::new(CREATE),
            renew: redis::Script::new(RENEW),
        }
    }

    fn index_key(&self) -> String {
        self.backend.inner.keys.key(&["sess-index"])
    }

    /// Renews session `id` for `idle` if it is initialized; with `read`, returns it too.
    fn renew_invocation(&self, id: &str, idle: Duration, read: bool) -> redis::ScriptInvocation<'_> {
        let mut inv = self.renew.prepare_invoke();
        inv.key(self.key(id))
            .key(self.subs_key(id))
            .key(self.index_key())
            .arg(ms(idle))
            .arg(epoch_ms() + ms(idle))
            .arg(if read { "1" } else { "" })
            .arg(id);
        inv
    }

    fn key(&self, id: &str) -> String {
        self.backend.inner.keys.key(&["sess", id])
    }

    fn subs_key(&self, id: &str) -> String {
        self.backend.inner.keys.key(&["sess", id, "subs"])
    }

    fn stream_key(&self, id: &str, n: u64) -> String {
        self.backend.inner.keys.key(&["sess", id, "s", &n.to_string()])
    }

    async fn publish(&self, channel: &str, wire: &Wire) -> Result<(), SessionStoreError> {
        let payload = serde_json::to_vec(wire).map_err(|e| unavailable(e.to_string()))?;
        let mut conn = self.backend.conn();
        let _: i64 = self
            .backend
            .run(redis::cmd("PUBLISH").arg(channel).arg(payload).query_async(&mut conn))
            .await
            .map_err(unavailable)?;
        Ok(())
    }
}

/// A stored record with its shared fields, validated like client input.
pub(crate) fn parse(
    id: &str,
    fields: HashMap<String, String>,
    subs: Vec<String>,
) -> Result<Option<SessionRecord>, SessionStoreError> {
    let bad = |why: String| unavailable(format!("the stored session {id} is invalid: {why}"));
    let Some(rec) = fields.get("rec") else { return Ok(None) };
    if rec.len() > MAX_RECORD {
        return Err(bad("too large".into()));
    }
    let mut record: SessionRecord = serde_json::from_str(rec).map_err(|e| bad(e.to_string()))?;
    let level = match fields.get("level").map(String::as_str) {
        None | Some("") => None,
        Some(l) => Some(l.parse::<u8>().map_err(|_| bad("log level".into()))?),
    };
    let init = fields.get("init").is_some_and(|v| v == "1");
    record.state.set_shared(level, init, subs);
    record.state.check().map_err(bad)?;
    Ok(Some(record))
}

impl SessionStore for RedisSessions {
    fn instance(&self) -> &str {
        &self.backend.inner.instance
    }

    fn create<'a>(&'a self, id: &'a str, record: &'a SessionRecord, idle: Duration) -> SessionStoreFuture<'a, ()> {
        Box::pin(async move {
            if !id_ok(id) {
                return Err(unavailable("invalid session id".into()));
            }
            let rec = serde_json::to_string(record).map_err(|e| unavailable(e.to_string()))?;
            if rec.len() > MAX_RECORD {
                return Err(unavailable(format!("the session record is {} bytes (at most {MAX_RECORD})", rec.len())));
            }
            let now = epoch_ms();
            let mut inv = self.create.prepare_invoke();
            inv.key(self.index_key())
                .key(self.key(id))
                .arg(now)
                .arg(now + ms(idle))
                .arg(self.backend.inner.options.max_sessions)
                .arg(id)
                .arg(rec)
                .arg(if record.state.is_initialized() { "1" } else { "0" })
                .arg(ms(idle));
            let mut conn = self.backend.conn();
            let evicted: Option<String> = self.backend.run(inv.invoke_async(&mut conn)).await.map_err(unavailable)?;
            if let Some(old) = evicted.filter(|old| id_ok(old)) {
                tracing::info!(session = %old, "legacy session evicted: the stored session cap was reached");
                self.delete(&old).await?;
            }
            Ok(())
        })
    }

    fn load<'a>(&'a self, id: &'a str, idle: Duration) -> SessionStoreFuture<'a, Option<SessionRecord>> {
        Box::pin(async move {
            if !id_ok(id) {
                return Ok(None);
            }
            let inv = self.renew_invocation(id, idle, true);
            let mut conn = self.backend.conn();
            let (fields, subs): (HashMap<String, String>, Vec<String>) =
                self.backend.run(inv.invoke_async(&mut conn)).await.map_err(unavailable)?;
            parse(id, fields, subs)
        })
    }

    fn change<'a>(&'a self, id: &'a str, change: SessionChange, idle: Duration) -> SessionStoreFuture<'a, bool> {
        Box::pin(async move {
            let (op, arg) = match change {
                SessionChange::LogLevel(l) => ("level", l.to_string()),
                SessionChange::Initialized => ("init", String::new()),
                SessionChange::Subscribe(uri) => ("sub", uri),
                SessionChange::Unsubscribe(uri) => ("unsub", uri),
                _ => return Ok(true),
            };
            if !id_ok(id) {
                return Ok(false);
            }
            let mut inv = self.change.prepare_invoke();
            inv.key(self.key(id))
                .key(self.subs_key(id))
                .arg(op)
                .arg(arg)
                .arg(ms(idle))
                .arg(&self.backend.inner.hub.channels.sessions)
                .arg(id);
            let mut conn = self.backend.conn();
            let done: i64 = self.backend.run(inv.invoke_async(&mut conn)).await.map_err(unavailable)?;
            if done == 1 && op == "init" {
                // Initialized: from now on it lives `idle` from its last use, in the index too.
                let inv = self.renew_invocation(id, idle, false);
                let _: i64 = self.backend.run(inv.invoke_async(&mut conn)).await.map_err(unavailable)?;
            }
            Ok(done == 1)
        })
    }

    fn touch<'a>(&'a self, id: &'a str, idle: Duration) -> SessionStoreFuture<'a, ()> {
        Box::pin(async move {
            if !id_ok(id) {
                return Ok(());
            }
            let inv = self.renew_invocation(id, idle, false);
            let mut conn = self.backend.conn();
            let _: i64 = self.backend.run(inv.invoke_async(&mut conn)).await.map_err(unavailable)?;
            Ok(())
        })
    }

    fn delete<'a>(&'a self, id: &'a str) -> SessionStoreFuture<'a, bool> {
        Box::pin(async move {
            if !id_ok(id) {
                return Ok(false);
            }
            let mut conn = self.backend.conn();
            let mut pipe = redis::pipe();
            pipe.atomic().cmd("DEL").arg(self.key(id)).arg(self.subs_key(id));
            pipe.cmd("ZREM").arg(self.index_key()).arg(id).ignore();
            let (n,): (i64,) = self.backend.run(pipe.query_async(&mut conn)).await.map_err(unavailable)?;
            self.publish(&self.backend.inner.hub.channels.sessions, &Wire::Ended { id: id.to_owned() }).await?;
            Ok(n > 0)
        })
    }

    fn send_to<'a>(&'a self, instance: &'a str, event: SessionEvent) -> SessionStoreFuture<'a, ()> {
        Box::pin(async move {
            let SessionEvent::Answer { id, message } = event else { return Ok(()) };
            let channel = self.backend.inner.hub.channels.instance(instance);
            self.publish(&channel, &Wire::Answer { id, msg: message }).await
        })
    }

    fn broadcast(&self, event: SessionEvent) -> SessionStoreFuture<'_, ()> {
        Box::pin(async move {
            let SessionEvent::Cancelled { id, request } = event else { return Ok(()) };
            self.publish(&self.backend.inner.hub.channels.sessions, &Wire::Cancel { id, req: request }).await
        })
    }

    fn attach(&self, sink: SessionSink) {
        let hub = &self.backend.inner.hub;
        let sink = std::sync::Arc::new(sink);
        for (channel, resync) in [(hub.channels.sessions.clone(), true), (hub.channels.mine.clone(), false)] {
            let sink = sink.clone();
            hub.on(&channel, move |d| match d {
                Delivery::Message(payload) => {
                    if let Some(e) = decode(payload) {
                        sink(e);
                    }
                }
                Delivery::Resync if resync => sink(SessionEvent::Resync),
                Delivery::Resync => {}
            });
        }
    }

    fn append<'a>(
        &'a self,
        id: &'a str,
        stream: u64,
        entry: StreamEntry,
        idle: Duration,
    ) -> SessionStoreFuture<'a, ()> {
        Box::pin(async move {
            if !id_ok(id) {
                return Ok(());
            }
            let key = self.stream_key(id, stream);
            let mut pipe = redis::pipe();
            let add = pipe.cmd("XADD").arg(&key).arg("MAXLEN").arg("~").arg(STREAM_EVENTS).arg("*");
            match &entry {
                StreamEntry::Event(e) => add.arg("e").arg(e.as_ref()),
                StreamEntry::Finished => add.arg("d").arg("1"),
                _ => add.arg("o").arg("1"),
            }
            .ignore();
            pipe.cmd("PEXPIRE").arg(&key).arg(ms(idle)).ignore();
            let mut conn = self.backend.conn();
            let _: () = self.backend.run(pipe.query_async(&mut conn)).await.map_err(unavailable)?;
            Ok(())
        })
    }

    fn replay<'a>(&'a self, id: &'a str, stream: u64) -> SessionStoreFuture<'a, Option<StoredStream>> {
        Box::pin(async move {
            if !id_ok(id) {
                return Ok(None);
            }
            let mut conn = self.backend.conn();
            let reply: redis::streams::StreamRangeReply = self
                .backend
                .run(redis::cmd("XRANGE").arg(self.stream_key(id, stream)).arg("-").arg("+").query_async(&mut conn))
                .await
                .map_err(unavailable)?;
            if reply.ids.is_empty() {
                return Ok(None);
            }
            let mut out = StoredStream::default();
            for entry in reply.ids {
                if let Some(v) = entry.map.get("e") {
                    let bytes: Vec<u8> = redis::from_redis_value(v).map_err(|e| unavailable(e.to_string()))?;
                    // Only well-formed SSE message events are replayed.
                    if !bytes.starts_with(b"id: ") || !bytes.ends_with(b"\n\n") {
                        return Err(unavailable(format!("stream {stream} of session {id} holds an invalid event")));
                    }
                    out.events.push(bytes::Bytes::from(bytes));
                } else if entry.map.contains_key("d") {
                    out.done = true;
                }
            }
            Ok(Some(out))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_messages_are_checked_like_client_input() {
        let ok = br#"{"t":"changed","id":"ab12","level":"3","init":"1","subs":["a://x"]}"#;
        let e = serde_json::from_slice::<Wire>(ok).ok().and_then(Wire::into_event);
        assert_eq!(
            e,
            Some(SessionEvent::Changed {
                id: "ab12".into(),
                log_level: Some(3),
                initialized: true,
                subscriptions: vec!["a://x".into()]
            })
        );
        for bad in [
            &br#"{"t":"changed","id":"ab12","level":"9","init":"1","subs":[]}"#[..],
            br#"{"t":"ended","id":"../x"}"#,
            br#"{"t":"cancel","id":"ab","req":{"x":1}}"#,
            br#"{"t":"nope","id":"ab"}"#,
        ] {
            assert_eq!(serde_json::from_slice::<Wire>(bad).ok().and_then(Wire::into_event), None);
        }
    }
}
