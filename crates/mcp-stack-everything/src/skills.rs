//! The everything server's demo skills (the skills extension): embedded in the binary, so
//! `mcp serve everything` serves them wherever it runs; `--skills DIR` serves a folder instead.

use mcp::server::SkillSet;

/// The demo skill set (`crates/mcp-stack-everything/skills`).
pub fn demo() -> SkillSet {
    let files: [(&str, &[u8]); 4] = [
        ("pdf-processing/SKILL.md", include_bytes!("../skills/pdf-processing/SKILL.md")),
        ("pdf-processing/references/FORMS.md", include_bytes!("../skills/pdf-processing/references/FORMS.md")),
        ("pdf-processing/templates/cover.md", include_bytes!("../skills/pdf-processing/templates/cover.md")),
        ("release-notes/SKILL.md", include_bytes!("../skills/release-notes/SKILL.md")),
    ];
    SkillSet::from_files(files.map(|(p, b)| (p.to_owned(), b.to_vec()))).expect("the demo skills are valid")
}
