//! SKILL.md frontmatter parsing and skill-entry verification never panic, whatever the bytes:
//! a document either parses to an object with string `name` and `description`, or is refused.
#![no_main]
use libfuzzer_sys::fuzz_target;
use mcp_skills::{parse_frontmatter, SkillEntry};

fuzz_target!(|data: &[u8]| {
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
});
