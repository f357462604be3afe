//! The change bus on Redis pub/sub: each change is one small JSON message on the namespace's bus
//! channel, tagged with the publishing instance (which ignores its own messages: it already
//! told its listeners).

use crate::backend::RedisBackend;
use crate::pubsub::Delivery;
use mcp_server::{BusInbox, ChangeBus, ChangeEvent};
use serde::{Deserialize, Serialize};

/// A change event on the wire.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Cue {
    /// The publishing instance.
    o: String,
    /// What changed: `tools`, `prompts`, `resources`, `resource`, `task`.
    k: String,
    /// The URI or task id, for `resource` and `task`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    v: Option<String>,
}

/// Longest URI or task id accepted from another instance.
const MAX_VALUE: usize = 8 * 1024;

impl Cue {
    fn encode(origin: &str, event: &ChangeEvent) -> Option<Vec<u8>> {
        let (k, v) = match event {
            ChangeEvent::ToolsListChanged => ("tools", None),
            ChangeEvent::PromptsListChanged => ("prompts", None),
            ChangeEvent::ResourcesListChanged => ("resources", None),
            ChangeEvent::ResourceUpdated(uri) => ("resource", Some(uri.clone())),
            ChangeEvent::TaskStatus(id) => ("task", Some(id.clone())),
            _ => return None, // `Resync` is local to each instance
        };
        serde_json::to_vec(&Cue { o: origin.to_owned(), k: k.to_owned(), v }).ok()
    }

    /// The event, if the message is a well-formed cue from another instance.
    pub(crate) fn decode(payload: &[u8], me: &str) -> Option<ChangeEvent> {
        let cue: Cue = serde_json::from_slice(payload).ok()?;
        if cue.o == me {
            return None;
        }
        let value = || cue.v.clone().filter(|v| !v.is_empty() && v.len() <= MAX_VALUE);
        Some(match cue.k.as_str() {
            "tools" => ChangeEvent::ToolsListChanged,
            "prompts" => ChangeEvent::PromptsListChanged,
            "resources" => ChangeEvent::ResourcesListChanged,
            "resource" => ChangeEvent::ResourceUpdated(value()?),
            "task" => ChangeEvent::TaskStatus(value()?),
            _ => return None,
        })
    }
}

/// The change bus of a [`RedisBackend`] (see [`RedisBackend::bus`]).
#[derive(Debug, Clone)]
pub struct RedisBus {
    backend: RedisBackend,
}

impl RedisBus {
    /// The bus on `backend`'s pub/sub connection.
    pub fn new(backend: RedisBackend) -> Self {
        Self { backend }
    }
}

impl ChangeBus for RedisBus {
    fn publish(&self, event: &ChangeEvent) {
        let inner = &self.backend.inner;
        if let Some(payload) = Cue::encode(&inner.instance, event) {
            inner.hub.publish(&inner.hub.channels.bus, payload);
        }
    }

    fn attach(&self, inbox: BusInbox) {
        let inner = &self.backend.inner;
        let me = inner.instance.clone();
        inner.hub.on(&inner.hub.channels.bus, move |d| match d {
            Delivery::Message(payload) => {
                if let Some(event) = Cue::decode(payload, &me) {
                    inbox.deliver(event);
                }
            }
            Delivery::Resync => {
                inbox.resync();
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cues_round_trip_and_bad_ones_are_ignored() {
        let e = ChangeEvent::ResourceUpdated("file:///a".into());
        let wire = Cue::encode("a", &e).unwrap();
        assert_eq!(Cue::decode(&wire, "b"), Some(e));
        assert_eq!(Cue::decode(&wire, "a"), None, "own messages are not delivered twice");
        assert_eq!(Cue::encode("a", &ChangeEvent::Resync), None);
        for bad in [
            &br#"{"o":"x","k":"resource"}"#[..],
            br#"{"o":"x","k":"nope"}"#,
            b"not json",
            br#"{"o":"x","k":"task","v":""}"#,
        ] {
            assert_eq!(Cue::decode(bad, "b"), None);
        }
        let long = serde_json::to_vec(&Cue { o: "x".into(), k: "task".into(), v: Some("t".repeat(MAX_VALUE + 1)) });
        assert_eq!(Cue::decode(&long.unwrap(), "b"), None);
    }
}
