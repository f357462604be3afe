//! The event streams of open pages: each page has its own queue, bounded in bytes (not only in
//! events, since one event can be megabytes: a progress message, a task's result). When a page
//! reads slower than events come, the oldest events queued for it are dropped and the page is
//! told how many (a `{"type":"dropped","count":N}` event, at the place of the gap). Events are
//! shared between pages (`Arc<str>`), so a page's bound holds however many pages are open.

use parking_lot::Mutex;
use serde_json::{json, Value};
use std::collections::VecDeque;
use std::sync::{Arc, Weak};
use tokio::sync::Notify;

/// Bytes of events queued per page by default (`mcp inspect --page-backlog-mib`).
pub const DEFAULT_PAGE_BACKLOG: usize = 8 * 1024 * 1024;
/// Pages following the events at once; past it a new one is refused (429).
const MAX_PAGES: usize = 16;

/// Every open page's queue.
#[derive(Debug)]
pub(crate) struct Pages {
    open: Mutex<Vec<Arc<PageQueue>>>,
    /// Bytes queued per page at most.
    bound: usize,
}

/// One page's events, waiting to be sent.
#[derive(Debug, Default)]
pub(crate) struct PageQueue {
    inner: Mutex<Queued>,
    ready: Notify,
}

#[derive(Debug, Default)]
struct Queued {
    events: VecDeque<Arc<str>>,
    bytes: usize,
    /// Events dropped since the page was last told.
    dropped: u64,
    /// Events dropped in all.
    dropped_total: u64,
    /// Most bytes ever queued.
    peak: usize,
}

/// A page's subscription: its queue, taken out of the open pages when dropped (the page's
/// stream closed).
#[derive(Debug)]
pub(crate) struct Subscription {
    queue: Arc<PageQueue>,
    pages: Weak<Pages>,
}

impl Pages {
    /// No page yet; `bound` bytes queued per page at most (at least 1 KiB).
    pub(crate) fn new(bound: usize) -> Arc<Self> {
        Arc::new(Self { open: Mutex::new(Vec::new()), bound: bound.max(1024) })
    }

    /// Queues `event` for every open page.
    pub(crate) fn send(&self, event: &Arc<str>) {
        for page in self.open.lock().iter() {
            page.push(event, self.bound);
        }
    }

    /// A new page, `backlog` queued first (under the same bound); `None` when too many pages
    /// are open.
    pub(crate) fn subscribe(self: &Arc<Self>, backlog: impl IntoIterator<Item = Arc<str>>) -> Option<Subscription> {
        let mut open = self.open.lock();
        if open.len() >= MAX_PAGES {
            return None;
        }
        let queue = Arc::new(PageQueue::default());
        for e in backlog {
            queue.push(&e, self.bound);
        }
        open.push(queue.clone());
        Some(Subscription { queue, pages: Arc::downgrade(self) })
    }

    /// What each open page has queued: `{queuedBytes, peakBytes, dropped}`.
    pub(crate) fn stats(&self) -> Value {
        let pages: Vec<Value> = self
            .open
            .lock()
            .iter()
            .map(|p| {
                let q = p.inner.lock();
                json!({"queuedBytes": q.bytes, "peakBytes": q.peak, "dropped": q.dropped_total})
            })
            .collect();
        json!({"boundBytes": self.bound, "pages": pages})
    }
}

impl PageQueue {
    fn push(&self, event: &Arc<str>, bound: usize) {
        let mut q = self.inner.lock();
        if event.len() > bound {
            // Larger than a whole backlog: only its count reaches the page.
            q.dropped += 1;
            q.dropped_total += 1;
        } else {
            q.bytes += event.len();
            q.events.push_back(event.clone());
            while q.bytes > bound {
                let Some(old) = q.events.pop_front() else { break };
                q.bytes -= old.len();
                q.dropped += 1;
                q.dropped_total += 1;
            }
            q.peak = q.peak.max(q.bytes);
        }
        drop(q);
        self.ready.notify_one();
    }

    /// The next event to send: the count of dropped ones first when there is a gap.
    fn pop(&self) -> Option<Arc<str>> {
        let mut q = self.inner.lock();
        if q.dropped > 0 {
            let n = std::mem::take(&mut q.dropped);
            return Some(Arc::from(json!({"type": "dropped", "count": n}).to_string()));
        }
        let e = q.events.pop_front()?;
        q.bytes -= e.len();
        Some(e)
    }
}

impl Subscription {
    /// The next event, waiting for one; `None` after `idle` without any (for a keep-alive).
    pub(crate) async fn next(&self, idle: std::time::Duration) -> Option<Arc<str>> {
        loop {
            if let Some(e) = self.queue.pop() {
                return Some(e);
            }
            // A notification sent meanwhile is kept as a permit, so none is missed.
            if tokio::time::timeout(idle, self.queue.ready.notified()).await.is_err() {
                return None;
            }
        }
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        if let Some(pages) = self.pages.upgrade() {
            pages.open.lock().retain(|p| !Arc::ptr_eq(p, &self.queue));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn marker(e: &str) -> Value {
        serde_json::from_str(e).unwrap()
    }

    fn event(n: usize, size: usize) -> Arc<str> {
        Arc::from(format!("{n:04}{}", "x".repeat(size - 4)))
    }

    #[tokio::test]
    async fn a_page_that_stops_reading_keeps_at_most_the_bound_and_learns_the_gap() {
        let pages = Pages::new(10_000);
        let sub = pages.subscribe([]).unwrap();
        for n in 0..100 {
            pages.send(&event(n, 1000));
        }
        let stats = pages.stats();
        assert_eq!(stats["pages"][0]["queuedBytes"], 10_000);
        assert_eq!(stats["pages"][0]["peakBytes"], 10_000);
        assert_eq!(stats["pages"][0]["dropped"], 90);
        let first = sub.next(Duration::from_secs(1)).await.unwrap();
        assert_eq!(marker(&first), json!({"type": "dropped", "count": 90}));
        let next = sub.next(Duration::from_secs(1)).await.unwrap();
        assert!(next.starts_with("0090"), "the oldest kept follows the marker");
        for _ in 91..100 {
            sub.next(Duration::from_secs(1)).await.unwrap();
        }
        assert!(sub.next(Duration::from_millis(10)).await.is_none(), "then nothing but keep-alives");
        // An event larger than the whole bound is counted, never queued.
        pages.send(&event(7, 20_000));
        assert_eq!(marker(&sub.next(Duration::from_secs(1)).await.unwrap()), json!({"type": "dropped", "count": 1}));
        drop(sub);
        assert_eq!(pages.stats()["pages"], json!([]), "a closed page is forgotten");
    }

    #[tokio::test]
    async fn pages_are_bounded_in_number_and_the_backlog_counts() {
        let pages = Pages::new(2048);
        let backlog: Vec<Arc<str>> = (0..5).map(|n| event(n, 1000)).collect();
        let sub = pages.subscribe(backlog).unwrap();
        assert_eq!(pages.stats()["pages"][0]["dropped"], 3);
        let subs: Vec<_> = (1..MAX_PAGES).map(|_| pages.subscribe([]).unwrap()).collect();
        assert!(pages.subscribe([]).is_none());
        drop(subs);
        while sub.next(Duration::from_millis(1)).await.is_some() {}
        let waiter = tokio::spawn(async move { sub.next(Duration::from_secs(20)).await });
        pages.send(&event(9, 100));
        assert!(waiter.await.unwrap().is_some());
    }
}
