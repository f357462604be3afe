//! Protocol versions: which are modern (per-request `_meta`) and which are legacy (`initialize`).

/// The revision this crate implements natively.
pub const LATEST: &str = "2026-07-28";

/// Modern (stateless, per-request metadata) versions, newest first.
pub const MODERN: &[&str] = &["2026-07-28"];

/// Legacy (initialize-based) versions, newest first.
pub const LEGACY: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// A protocol version (`YYYY-MM-DD`), ordered by date.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ProtocolVersion {
    year: u16,
    month: u8,
    day: u8,
}

impl ProtocolVersion {
    /// 2025-06-18: structured tool output, elicitation, resource links.
    pub const V2025_06_18: Self = Self { year: 2025, month: 6, day: 18 };

    /// The version `s` names, if it has the `YYYY-MM-DD` form.
    pub fn parse(s: &str) -> Option<Self> {
        let mut parts = s.split('-');
        let (y, m, d) = (parts.next()?, parts.next()?, parts.next()?);
        if parts.next().is_some() || y.len() != 4 || m.len() != 2 || d.len() != 2 {
            return None;
        }
        Some(Self { year: y.parse().ok()?, month: m.parse().ok()?, day: d.parse().ok()? })
    }
}

impl std::fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }
}

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

/// `version`, borrowed from [`MODERN`] or [`LEGACY`] when it is one of them (no allocation for
/// a known version), else owned.
pub fn known_or_owned(version: &str) -> std::borrow::Cow<'static, str> {
    match MODERN.iter().chain(LEGACY).find(|v| **v == version) {
        Some(known) => std::borrow::Cow::Borrowed(*known),
        None => std::borrow::Cow::Owned(version.to_owned()),
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
    fn known_versions_are_borrowed() {
        use std::borrow::Cow;
        assert!(matches!(known_or_owned("2026-07-28"), Cow::Borrowed("2026-07-28")));
        assert!(matches!(known_or_owned("2024-11-05"), Cow::Borrowed("2024-11-05")));
        assert!(matches!(known_or_owned("2099-01-01"), Cow::Owned(v) if v == "2099-01-01"));
    }
    #[test]
    fn versions_order_by_date() {
        let v = |s| ProtocolVersion::parse(s).unwrap();
        assert!(v("2025-11-25") > ProtocolVersion::V2025_06_18);
        assert!(v("2025-03-26") < ProtocolVersion::V2025_06_18);
        assert_eq!(v("2026-07-28").to_string(), "2026-07-28");
        assert_eq!(ProtocolVersion::parse("2025-6-18"), None);
        assert_eq!(ProtocolVersion::parse("latest"), None);
    }

    #[test]
    fn eras() {
        assert_eq!(era_of("2026-07-28"), Some(Era::Modern));
        assert_eq!(era_of("2025-06-18"), Some(Era::Legacy));
        assert_eq!(era_of("1900-01-01"), None);
    }
}
