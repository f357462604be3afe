//! The change bus: how the change events of one instance reach the listeners held by the other
//! instances of the same service.
//!
//! Every [`Server`] announces changes to its own listeners through an in-process broadcast.
//! A [`ChangeBus`] given to [`crate::ServerBuilder::bus`] also carries each change to the other
//! instances ([`ChangeBus::publish`]) and hands theirs to this one ([`BusInbox::deliver`]). Cues
//! are at-most-once: a bus that may have lost some (it reconnected) calls [`BusInbox::resync`],
//! after which every listener gets "every list may have changed", an update for each subscribed
//! resource and the current state of each watched task, so nothing is silently missed.
//!
//! [`InMemoryBus`] joins servers of one process (tests, several services in one binary); the
//! `mcp-stack-redis` crate has a Redis pub/sub bus for instances on different machines.

use crate::change_feed::ChangeEvent;
use parking_lot::Mutex;
use std::sync::{Arc, Weak};

/// Carries change events between the instances of one service.
pub trait ChangeBus: Send + Sync + 'static {
    /// Sends a change made on this instance to the other instances. Must not block: a bus under
    /// pressure may drop the cue (listeners then get a catch-up after [`BusInbox::resync`]).
    fn publish(&self, event: &ChangeEvent);

    /// Starts delivering the other instances' changes to `inbox` (called once, by
    /// [`crate::ServerBuilder::build`]).
    fn attach(&self, inbox: BusInbox);
}

/// Where a bus delivers what the other instances announced: this server's own listeners (and
/// nothing is published again).
#[derive(Clone)]
pub struct BusInbox {
    server: Weak<dyn Listeners>,
}

/// The listeners of one server, as its bus delivers to them (implemented by the server).
pub(crate) trait Listeners: Send + Sync {
    /// Announces a change to this instance's listeners only.
    fn notify_local(self: Arc<Self>, event: ChangeEvent);
}

impl std::fmt::Debug for BusInbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BusInbox").field("live", &(self.server.strong_count() > 0)).finish()
    }
}

impl BusInbox {
    pub(crate) fn new(server: Weak<dyn Listeners>) -> Self {
        Self { server }
    }

    /// Hands another instance's change to this server's listeners; false once the server is gone.
    pub fn deliver(&self, event: ChangeEvent) -> bool {
        let Some(server) = self.server.upgrade() else { return false };
        server.notify_local(event);
        true
    }

    /// Cues may have been lost (the bus reconnected): every listener catches up. False once the
    /// server is gone.
    pub fn resync(&self) -> bool {
        self.deliver(ChangeEvent::Resync)
    }
}

#[derive(Default)]
struct Hub {
    members: Mutex<Vec<(usize, BusInbox)>>,
    next: std::sync::atomic::AtomicUsize,
}

/// A bus joining servers of one process: what one publishes, every other one delivers.
#[derive(Clone, Default)]
pub struct InMemoryBus {
    hub: Arc<Hub>,
    me: usize,
}

impl std::fmt::Debug for InMemoryBus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InMemoryBus").field("member", &self.me).finish()
    }
}

impl InMemoryBus {
    /// A new hub, and this first member's handle on it.
    pub fn new() -> Self {
        Self::default()
    }

    /// Another member's handle on the same hub (give one to each server's builder).
    pub fn join(&self) -> Self {
        let me = self.hub.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        Self { hub: self.hub.clone(), me }
    }

    fn members(&self) -> Vec<(usize, BusInbox)> {
        self.hub.members.lock().clone()
    }

    /// Every member catches up, as after a reconnect.
    pub fn resync_all(&self) {
        for (_, inbox) in self.members() {
            inbox.resync();
        }
    }
}

impl ChangeBus for InMemoryBus {
    fn publish(&self, event: &ChangeEvent) {
        for (_, inbox) in self.members().iter().filter(|(m, _)| *m != self.me) {
            inbox.deliver(event.clone());
        }
    }

    fn attach(&self, inbox: BusInbox) {
        let mut hub = self.hub.members.lock();
        hub.retain(|(m, i)| *m != self.me && i.server.strong_count() > 0);
        hub.push((self.me, inbox));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ChangeFeed, Server};
    use std::time::Duration;

    async fn next(feed: &mut ChangeFeed) -> Vec<ChangeEvent> {
        tokio::time::timeout(Duration::from_secs(1), feed.next(|| vec!["a://watched".into()]))
            .await
            .expect("an event within 1 s")
            .expect("the server lives")
    }

    #[tokio::test]
    async fn a_change_on_one_instance_reaches_listeners_of_the_others_once() {
        let bus = InMemoryBus::new();
        let a = Server::builder("svc", "1").bus(Arc::new(bus.clone())).build().unwrap();
        let b = Server::builder("svc", "1").bus(Arc::new(bus.join())).build().unwrap();
        let (mut fa, mut fb) = (a.change_feed(), b.change_feed());
        b.notify(ChangeEvent::ToolsListChanged);
        assert_eq!(next(&mut fa).await, [ChangeEvent::ToolsListChanged]);
        assert_eq!(next(&mut fb).await, [ChangeEvent::ToolsListChanged]);
        a.notify_resource_updated("a://x");
        assert_eq!(next(&mut fb).await, [ChangeEvent::ResourceUpdated("a://x".into())]);
        // A delivered change is not published again: `a` saw its own change once, nothing more.
        assert_eq!(next(&mut fa).await, [ChangeEvent::ResourceUpdated("a://x".into())]);
        assert!(tokio::time::timeout(Duration::from_millis(50), fa.next(Vec::new)).await.is_err());
    }

    #[tokio::test]
    async fn after_a_resync_listeners_catch_up_on_everything() {
        let bus = InMemoryBus::new();
        let a = Server::builder("svc", "1").bus(Arc::new(bus.clone())).build().unwrap();
        let mut feed = a.change_feed();
        bus.resync_all();
        assert_eq!(
            next(&mut feed).await,
            [
                ChangeEvent::ToolsListChanged,
                ChangeEvent::PromptsListChanged,
                ChangeEvent::ResourcesListChanged,
                ChangeEvent::ResourceUpdated("a://watched".into())
            ]
        );
    }
}
