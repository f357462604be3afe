//! Protocol versions: which are modern (per-request `_meta`) and which are legacy (`initialize`).

/// The revision this crate implements natively.
pub const LATEST: &str = "2026-07-28";

/// Modern (stateless, per-request metadata) versions, newest first.
pub const MODERN: &[&str] = &["2026-07-28"];

/// Legacy (initialize-based) versions, newest first.
pub const LEGACY: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// The era a protocol version belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Era {
    /// Per-request `_meta`, no handshake (2026-07-28 and later).
    Modern,
    /// `initialize` handshake and sessions (2025-11-25 and earlier).
    Legacy,
}

/// The era of a known version, or `None` for an unknown one.
pub fn era_of(version: &str) -> Option<Era> {
    if MODERN.contains(&version) {
        Some(Era::Modern)
    } else if LEGACY.contains(&version) {
        Some(Era::Legacy)
    } else {
        None
    }
}

/// Whether `version` is a modern version this crate can serve statelessly.
pub fn is_supported_modern(version: &str) -> bool {
    MODERN.contains(&version)
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn eras() {
        assert_eq!(era_of("2026-07-28"), Some(Era::Modern));
        assert_eq!(era_of("2025-06-18"), Some(Era::Legacy));
        assert_eq!(era_of("1900-01-01"), None);
    }
}
