//! The change-event bus as a listener sees it: one mapping from [`ChangeEvent`] to its
//! notification, and one policy for events a slow listener missed.

use serde_json::{Map, Value};
use tokio::sync::broadcast::{self, error::RecvError};

/// A change the server announces on `subscriptions/listen` streams.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ChangeEvent {
    /// The tool list changed.
    ToolsListChanged,
    /// The prompt list changed.
    PromptsListChanged,
    /// The resource list changed.
    ResourcesListChanged,
    /// The resource with this URI was updated.
    ResourceUpdated(String),
    /// The task with this id changed (status, message, input requests): `notifications/tasks`
    /// on listen streams that asked for it.
    TaskStatus(String),
    /// Anything may have changed: changes may have been missed (the change bus reconnected).
    /// Listeners re-announce every list, each subscribed resource and each watched task.
    Resync,
}

impl ChangeEvent {
    /// The notification method and params this change is announced with (`None` for
    /// [`ChangeEvent::Resync`], which [`ChangeFeed::next`] expands into the changes it stands for).
    pub fn notification(&self) -> Option<(&'static str, Value)> {
        let empty = || Value::Object(Map::new());
        let one = |k: &str, v: &str| Value::Object([(k.to_owned(), Value::from(v))].into_iter().collect());
        Some(match self {
            ChangeEvent::ToolsListChanged => ("notifications/tools/list_changed", empty()),
            ChangeEvent::PromptsListChanged => ("notifications/prompts/list_changed", empty()),
            ChangeEvent::ResourcesListChanged => ("notifications/resources/list_changed", empty()),
            ChangeEvent::ResourceUpdated(uri) => ("notifications/resources/updated", one("uri", uri)),
            // A cue only: listen streams send the full `DetailedTask` (see `Server::listen`).
            ChangeEvent::TaskStatus(id) => ("notifications/tasks", one("taskId", id)),
            ChangeEvent::Resync => return None,
        })
    }
}

/// A listener's subscription to the server's change events (modern listen streams and legacy
/// sessions alike).
#[derive(Debug)]
pub struct ChangeFeed {
    rx: broadcast::Receiver<ChangeEvent>,
}

impl ChangeFeed {
    /// A feed of the events `rx` receives.
    pub(crate) fn new(rx: broadcast::Receiver<ChangeEvent>) -> Self {
        Self { rx }
    }

    /// The next changes to announce, `None` once the server is gone.
    ///
    /// When the listener fell behind and events were dropped, or the change bus may have lost
    /// some ([`ChangeEvent::Resync`]), nothing is silently lost: it gets "every list may have
    /// changed" and an update for each URI in `subscribed` instead.
    pub async fn next(&mut self, subscribed: impl FnOnce() -> Vec<String>) -> Option<Vec<ChangeEvent>> {
        match self.rx.recv().await {
            Ok(ChangeEvent::Resync) | Err(RecvError::Lagged(_)) => {
                let mut all = vec![
                    ChangeEvent::ToolsListChanged,
                    ChangeEvent::PromptsListChanged,
                    ChangeEvent::ResourcesListChanged,
                ];
                all.extend(subscribed().into_iter().map(ChangeEvent::ResourceUpdated));
                Some(all)
            }
            Ok(e) => Some(vec![e]),
            Err(RecvError::Closed) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::Server;

    #[tokio::test]
    async fn a_listener_that_falls_behind_gets_a_catch_up_instead_of_nothing() {
        let server = Server::builder("t", "1").build().unwrap();
        let mut feed = server.change_feed();
        server.notify(ChangeEvent::PromptsListChanged);
        assert_eq!(feed.next(Vec::new).await, Some(vec![ChangeEvent::PromptsListChanged]));
        for _ in 0..2000 {
            server.notify_resource_updated("a://unwatched");
        }
        let caught_up = feed.next(|| vec!["a://watched".into()]).await.unwrap();
        assert_eq!(
            caught_up,
            [
                ChangeEvent::ToolsListChanged,
                ChangeEvent::PromptsListChanged,
                ChangeEvent::ResourcesListChanged,
                ChangeEvent::ResourceUpdated("a://watched".into())
            ]
        );
    }
}
