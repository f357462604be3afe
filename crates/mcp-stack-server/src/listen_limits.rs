//! [`ListenLimits`]: the caps on `subscriptions/listen` filters, set on the builder and read by
//! the listen extension.

/// Caps on one `subscriptions/listen` filter (see [`crate::ServerBuilder::listen_limits`]), set
/// with the methods below from [`ListenLimits::default`]. A listen request over any of them is
/// refused with `-32602` (invalid params) naming the cap; nothing of it is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ListenLimits {
    /// Most `resourceSubscriptions` URIs per stream.
    pub(crate) max_resource_subscriptions: usize,
    /// Most `taskIds` per stream.
    pub(crate) max_task_ids: usize,
    /// Longest URI or task id, in bytes.
    pub(crate) max_entry_bytes: usize,
    /// Most bytes of URIs and task ids together per stream.
    pub(crate) max_filter_bytes: usize,
    /// Most bytes of URIs and task ids held by every open stream of the server together.
    pub(crate) max_total_filter_bytes: usize,
}

impl Default for ListenLimits {
    fn default() -> Self {
        Self {
            max_resource_subscriptions: 1024,
            max_task_ids: 1024,
            max_entry_bytes: 2048,
            max_filter_bytes: 256 << 10,
            max_total_filter_bytes: 64 << 20,
        }
    }
}

impl ListenLimits {
    /// Sets the most `resourceSubscriptions` URIs per stream (default 1,024).
    pub fn max_resource_subscriptions(mut self, n: usize) -> Self {
        self.max_resource_subscriptions = n;
        self
    }

    /// Sets the most `taskIds` per stream (default 1,024).
    pub fn max_task_ids(mut self, n: usize) -> Self {
        self.max_task_ids = n;
        self
    }

    /// Sets the longest URI or task id, in bytes (default 2 KiB).
    pub fn max_entry_bytes(mut self, n: usize) -> Self {
        self.max_entry_bytes = n;
        self
    }

    /// Sets the most bytes of URIs and task ids together per stream (default 256 KiB).
    pub fn max_filter_bytes(mut self, n: usize) -> Self {
        self.max_filter_bytes = n;
        self
    }

    /// Sets the most bytes of URIs and task ids held by every open stream of the server together
    /// (default 64 MiB). A listen request that would go past it is refused with `-32603` (HTTP
    /// 503: try again later) and logged at `warn`.
    pub fn max_total_filter_bytes(mut self, n: usize) -> Self {
        self.max_total_filter_bytes = n;
        self
    }
}
