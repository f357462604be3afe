//! Which stages `build()` installed ([`crate::stages`] serves them, in their order), and the
//! state each keeps: the limiter, the cache.

use crate::cache::Cache;
use crate::catalog::Catalog;
use crate::rate_limit::Limiter;
use std::sync::atomic::{AtomicU8, Ordering};

/// A stage `build()` may install (access rules are always on).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Stage {
    RateLimits = 1,
    ResultCache = 2,
    Tasks = 4,
}

/// The stages of a built server: which are installed, and the state of each.
pub(crate) struct Installed {
    set: AtomicU8,
    /// The rate limits.
    pub(crate) limiter: Limiter,
    /// The result cache (empty without `ServerBuilder::result_cache`).
    pub(crate) cache: Cache,
}

impl Installed {
    /// The stages for these limits, this cache and the catalog at build (`tasks`: whether the
    /// server has a task runtime).
    pub(crate) fn new(limiter: Limiter, cache: Cache, tasks: bool, catalog: &Catalog) -> Self {
        let mut set = 0;
        if limiter.has_server_limits() || catalog.tool_quotas {
            set |= Stage::RateLimits as u8;
        }
        if cache.configured() {
            set |= Stage::ResultCache as u8;
        }
        if tasks {
            set |= Stage::Tasks as u8;
        }
        Self { set: AtomicU8::new(set), limiter, cache }
    }

    /// Whether `stage` is installed.
    pub(crate) fn has(&self, stage: Stage) -> bool {
        self.set.load(Ordering::Relaxed) & stage as u8 != 0
    }

    /// Installs the rate limits once a tool with a quota of its own joins the catalog at run
    /// time (`add_tool`, a mounted server's change); they stay installed.
    pub(crate) fn catalog_changed(&self, catalog: &Catalog) {
        if catalog.tool_quotas {
            self.set.fetch_or(Stage::RateLimits as u8, Ordering::Relaxed);
        }
    }
}
