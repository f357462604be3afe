//! Which stages `build()` installed ([`crate::stages`] serves them, in their order), and the
//! state each keeps: the limiter, the cache.

use crate::cache::Cache;
use crate::catalog::Catalog;
use crate::rate_limit::Limiter;
use std::sync::atomic::{AtomicBool, Ordering};

/// A stage `build()` may install (access rules are always on; the task decision is installed
/// with the server's task runtime, `Server::tasks`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stage {
    RateLimits,
    ResultCache,
}

/// The stages of a built server: which are installed, and the state of each.
pub(crate) struct Installed {
    /// Whether the rate limits are installed: the one stage a run-time change can install.
    rate_limits: AtomicBool,
    /// The rate limits.
    pub(crate) limiter: Limiter,
    /// The result cache (empty without `ServerBuilder::result_cache`).
    pub(crate) cache: Cache,
}

impl Installed {
    /// The stages for these limits, this cache and the catalog at build.
    pub(crate) fn new(limiter: Limiter, cache: Cache, catalog: &Catalog) -> Self {
        let rate_limits = AtomicBool::new(limiter.has_server_limits() || catalog.tool_quotas);
        Self { rate_limits, limiter, cache }
    }

    /// Whether `stage` is installed.
    pub(crate) fn has(&self, stage: Stage) -> bool {
        match stage {
            Stage::RateLimits => self.rate_limits.load(Ordering::Relaxed),
            Stage::ResultCache => self.cache.configured(),
        }
    }

    /// Installs the rate limits once a tool with a quota of its own joins the catalog at run
    /// time (`add_tool`, a mounted server's change); they stay installed.
    pub(crate) fn catalog_changed(&self, catalog: &Catalog) {
        if catalog.tool_quotas {
            self.rate_limits.store(true, Ordering::Relaxed);
        }
    }
}
