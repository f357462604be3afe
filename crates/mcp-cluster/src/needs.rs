//! What a test needs from the machine, and what happens when it is not there: the test fails,
//! naming the Debian package and the script that installs every one of them
//! (`scripts/test-deps.sh`), so a missing tool never passes as a silent skip. A developer who
//! cannot install it sets `MCP_TEST_SKIP_MISSING=1`: then such tests say `SKIPPED` on stderr,
//! with the package, and pass.

/// The variable that turns a missing tool from a failure into a loud skip.
pub const SKIP_MISSING: &str = "MCP_TEST_SKIP_MISSING";

/// Whether `program` (from the Debian package `package`) is installed: `true` when it is. When
/// it is not, panics with the package to install, or, under `MCP_TEST_SKIP_MISSING=1` (never
/// under `CI`), prints a `SKIPPED` line and returns `false` (the test returns early).
///
/// ```
/// if !mcp_cluster::needs::program("sh", "dash") {
///     return; // skipped, and said so
/// }
/// ```
pub fn program(program: &str, package: &str) -> bool {
    if crate::find(program).is_some() {
        return true;
    }
    let why = format!(
        "this test needs `{program}` (Debian package {package}): run `bash scripts/test-deps.sh`, which \
         installs everything the tests use, or set {SKIP_MISSING}=1 to skip such tests"
    );
    let skip = std::env::var_os(SKIP_MISSING).is_some_and(|v| v == "1") && std::env::var_os("CI").is_none();
    assert!(skip, "{why}");
    eprintln!("SKIPPED: {why}");
    false
}

/// [`program`] for each `(program, package)` pair; `true` when all are installed.
pub fn programs(list: &[(&str, &str)]) -> bool {
    list.iter().all(|(p, pkg)| program(p, pkg))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_program_fails_the_test_naming_its_package() {
        assert!(program("sh", "dash"));
        let missing = std::panic::catch_unwind(|| program("mcp-no-such-program-3f9a", "some-package"));
        if std::env::var_os(SKIP_MISSING).is_some() && std::env::var_os("CI").is_none() {
            assert!(!missing.expect("skipped, not failed"));
            return;
        }
        let panic = missing.expect_err("a missing program fails the test");
        let text = panic.downcast_ref::<String>().expect("a formatted message");
        assert!(text.contains("Debian package some-package"), "{text}");
        assert!(text.contains("scripts/test-deps.sh"), "{text}");
    }
}
