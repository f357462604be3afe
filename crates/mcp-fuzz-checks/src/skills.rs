//! SKILL.md frontmatter parsing and skill-entry verification never panic, whatever the bytes:
//! a document either parses to an object with string `name` and `description`, or is refused.
use mcp_skills::{parse_frontmatter, SkillEntry};

/// Checks one input (panics on a violated property).
pub fn check(data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(fm) = parse_frontmatter(text) {
            assert!(fm["name"].is_string() && fm["description"].is_string());
        }
    }
    if let Ok(entry) = serde_json::from_slice::<SkillEntry>(data) {
        let _ = entry.check();
        let _ = entry.verify(&entry.uri, data);
        let _ = entry.resolve("a/b.md");
    }
}
