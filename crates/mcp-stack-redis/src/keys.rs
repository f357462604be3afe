//! The names of this crate's Redis keys and channels, under the service namespace.

/// Key and channel names under `mcp:{namespace}:`.
#[derive(Debug, Clone)]
pub(crate) struct Keys {
    prefix: String,
}

impl Keys {
    pub(crate) fn new(namespace: &str) -> Self {
        Self { prefix: format!("mcp:{namespace}:") }
    }

    pub(crate) fn key(&self, parts: &[&str]) -> String {
        let mut k = self.prefix.clone();
        k.push_str(&parts.join(":"));
        k
    }
}
