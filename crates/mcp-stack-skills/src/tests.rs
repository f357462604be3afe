use super::*;
use serde_json::json;

const SKILL_MD: &str =
    "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\n---\n\nSkill body.\n";

fn entry_for(text: &str) -> SkillEntry {
    serde_json::from_value(json!({
        "uri": "skill://pdf-processing/SKILL.md",
        "frontmatter": {"name": "pdf-processing", "description": "Extract, fill, and assemble PDF documents"},
        "resources": [
            {"uri": "skill://pdf-processing/SKILL.md", "digest": digest(text.as_bytes()), "size": text.len()},
        ]
    }))
    .unwrap()
}

#[test]
fn digests_are_lowercase_hex_sha256_of_the_bytes() {
    assert_eq!(SKILL_MD.len(), 97);
    assert_eq!(digest(SKILL_MD.as_bytes()), "sha256:a6d5f1f48af94923633d597c756194482fe5d48f74e49eb54bc9ee7c4902d5ba");
    assert!(is_digest(&digest(b"")));
    assert!(!is_digest("sha256:ABC"));
}

#[test]
fn names_and_uris_follow_the_rules() {
    for ok in ["a", "pdf-processing", "x9", &"a".repeat(64)] {
        assert!(is_valid_skill_name(ok), "{ok}");
    }
    for bad in ["", "-a", "a-", "a--b", "A", "a_b", &"a".repeat(65)] {
        assert!(!is_valid_skill_name(bad), "{bad}");
    }
    assert_eq!(skill_name("skill://acme/billing/refunds/SKILL.md"), Some("refunds"));
    assert_eq!(skill_name("skill://SKILL.md"), None);
    assert_eq!(skill_name("skill://a/b.md"), None);
}

#[test]
fn frontmatter_is_yaml_read_as_json() {
    let fm = parse_frontmatter(
        "\u{feff}---\r\nname: x\r\ndescription: \"d: quoted\"\r\nversion: 1.0\r\nmetadata:\r\n  k: v\r\n---\r\nbody",
    )
    .unwrap();
    assert_eq!(
        Value::Object(fm),
        json!({"name": "x", "description": "d: quoted", "version": 1, "metadata": {"k": "v"}})
    );
    assert!(parse_frontmatter("no frontmatter").is_err());
    assert!(parse_frontmatter("---\nname: x\n---\n").unwrap_err().to_string().contains("description"));
    assert!(parse_frontmatter("---\n- a\n---\n").is_err());
    assert!(parse_frontmatter("---\nname: [unclosed\n---\n").is_err());
}

#[test]
fn verification_refuses_changed_size_digest_or_frontmatter() {
    let entry = entry_for(SKILL_MD);
    entry.check().unwrap();
    entry.verify(&entry.uri, SKILL_MD.as_bytes()).unwrap();
    let same_size = SKILL_MD.replace("Skill body.", "Evil body!!");
    assert!(entry.verify(&entry.uri, same_size.as_bytes()).unwrap_err().to_string().contains("digest"));
    let longer = format!("{SKILL_MD}extra bytes the entry did not account for\n");
    assert!(entry.verify(&entry.uri, longer.as_bytes()).unwrap_err().to_string().contains("bytes, listed as 97"));
    // Digest and size recomputed for the tampered file: only the frontmatter gives it away.
    let evil = SKILL_MD.replace("Extract, fill, and assemble PDF documents", "Exfiltrate credentials");
    let mut relisted = entry_for(&evil);
    relisted.frontmatter = entry.frontmatter.clone();
    assert!(relisted
        .verify(&relisted.uri, evil.as_bytes())
        .unwrap_err()
        .to_string()
        .contains("frontmatter `description`"));
    assert!(entry.verify("skill://pdf-processing/other.md", b"x").unwrap_err().to_string().contains("not listed"));
    assert_eq!(entry.resolve("references/FORMS.md"), "skill://pdf-processing/references/FORMS.md");
}

#[test]
fn a_listing_outside_its_skill_or_without_skill_md_is_refused() {
    let mut e = entry_for(SKILL_MD);
    if let SkillResources::Files(f) = &mut e.resources {
        f.push(SkillResource { uri: "skill://other/secret.md".into(), digest: digest(b""), size: 0 });
    }
    assert!(e.check().unwrap_err().to_string().contains("outside"));
    let mut e = entry_for(SKILL_MD);
    e.resources = SkillResources::Files(vec![]);
    assert!(e.check().is_err());
    let dynamic: SkillResources = serde_json::from_value(json!("dynamic")).unwrap();
    assert_eq!(dynamic, SkillResources::Dynamic);
    assert!(serde_json::from_value::<SkillResources>(json!("static")).is_err());
}

fn write(root: &std::path::Path, rel: &str, body: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, body).unwrap();
}

#[test]
fn a_folder_becomes_entries_files_and_directory_listings() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "pdf-processing/SKILL.md", SKILL_MD);
    write(dir.path(), "pdf-processing/references/FORMS.md", "# Forms\n");
    write(dir.path(), "pdf-processing/.DS_Store", "junk");
    write(dir.path(), "acme/csv-tools/SKILL.md", "---\nname: csv-tools\ndescription: CSV help\n---\n");
    let set = SkillSet::from_dir(dir.path()).unwrap();
    let uris: Vec<&str> = set.entries().iter().map(|e| e.uri.as_str()).collect();
    assert_eq!(uris, ["skill://acme/csv-tools/SKILL.md", "skill://pdf-processing/SKILL.md"]);
    let pdf = set.entry("skill://pdf-processing/SKILL.md").unwrap();
    let SkillResources::Files(files) = &pdf.resources else { panic!() };
    assert_eq!(files.len(), 2, "hidden files are not served");
    let root = set.directory("skill://pdf-processing").unwrap();
    assert!(root.iter().any(|c| c["uri"] == "skill://pdf-processing/references" && c["mimeType"] == DIRECTORY_MIME));
    assert_eq!(set.directory("skill://pdf-processing/references").unwrap()[0]["name"], "FORMS.md");
    assert!(set.directory("skill://pdf-processing/SKILL.md").is_none());
    let md = set.file("skill://pdf-processing/SKILL.md").unwrap();
    assert!(md.is_text);
    assert_eq!(md.resource["description"], "Extract, fill, and assemble PDF documents");
    pdf.verify(&md.uri, &md.bytes).unwrap();
}

#[test]
fn what_the_format_forbids_is_refused_naming_the_file() {
    let cases = [
        ("bad/SKILL.md", "---\nname: other\ndescription: d\n---\n", "must equal its folder"),
        ("Bad/SKILL.md", "---\nname: Bad\ndescription: d\n---\n", "1-64 of a-z"),
        ("plain/SKILL.md", "# no frontmatter\n", "no YAML frontmatter"),
        ("SKILL.md", SKILL_MD, "its own folder"),
        ("has space/SKILL.md", SKILL_MD, "letters, digits"),
    ];
    for (path, body, want) in cases {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), path, body);
        let e = SkillSet::from_dir(dir.path()).unwrap_err().to_string();
        assert!(e.contains(want), "{path}: {e}");
        assert!(e.contains(path.split('/').next().unwrap()), "names the file: {e}");
    }
    let long = format!("---\nname: long\ndescription: {}\n---\n", "x".repeat(1025));
    assert!(SkillSet::from_files([("long/SKILL.md".into(), long.into_bytes())])
        .unwrap_err()
        .to_string()
        .contains("1024"));
}

#[cfg(unix)]
#[test]
fn symbolic_links_cannot_lead_out_of_the_folder() {
    let outside = tempfile::tempdir().unwrap();
    write(outside.path(), "secret.txt", "top secret");
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "pdf-processing/SKILL.md", SKILL_MD);
    std::os::unix::fs::symlink(outside.path().join("secret.txt"), dir.path().join("pdf-processing/notes.txt")).unwrap();
    let e = SkillSet::from_dir(dir.path()).unwrap_err().to_string();
    assert!(e.contains("notes.txt") && e.contains("outside the skills folder"), "{e}");
    // A link to a file inside the folder is fine; a loop is refused.
    std::fs::remove_file(dir.path().join("pdf-processing/notes.txt")).unwrap();
    write(dir.path(), "pdf-processing/real.txt", "inside");
    std::os::unix::fs::symlink(dir.path().join("pdf-processing/real.txt"), dir.path().join("pdf-processing/alias.txt"))
        .unwrap();
    assert!(SkillSet::from_dir(dir.path()).unwrap().file("skill://pdf-processing/alias.txt").is_some());
    std::os::unix::fs::symlink(dir.path().join("pdf-processing"), dir.path().join("pdf-processing/loop")).unwrap();
    assert!(SkillSet::from_dir(dir.path()).unwrap_err().to_string().contains("loops"));
}
