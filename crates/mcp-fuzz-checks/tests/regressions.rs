//! Every input in `fuzz/regressions/TARGET/` (each named after the bug it caught) replayed
//! through the property its fuzz target checks, on every `cargo test`; and every target's
//! property run on a few edge inputs, so a check that cannot be reached is noticed.

use std::path::Path;

fn regressions() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/regressions")
}

#[test]
fn every_regression_input_still_passes() {
    let mut replayed = 0;
    for entry in std::fs::read_dir(regressions()).expect("fuzz/regressions") {
        let dir = entry.unwrap().path();
        let target = dir.file_name().unwrap().to_str().unwrap().to_owned();
        let (_, check) = mcp_fuzz_checks::TARGETS
            .iter()
            .find(|(n, _)| *n == target)
            .unwrap_or_else(|| panic!("fuzz/regressions/{target}: no such fuzz target"));
        for input in std::fs::read_dir(&dir).unwrap() {
            let path = input.unwrap().path();
            let data = std::fs::read(&path).unwrap();
            let outcome = std::panic::catch_unwind(|| check(&data));
            assert!(outcome.is_ok(), "{} fails its target's property again", path.display());
            replayed += 1;
        }
    }
    // Six inputs were committed with the bugs they caught; they must all be found.
    assert!(replayed >= 6, "only {replayed} regression inputs found");
}

#[test]
fn every_target_checks_edge_inputs() {
    let inputs: [&[u8]; 6] =
        [b"", b"\0", b"{}", b"\n\n", b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}", &[0xff; 64]];
    for (name, check) in mcp_fuzz_checks::TARGETS {
        for input in inputs {
            let outcome = std::panic::catch_unwind(|| check(input));
            assert!(outcome.is_ok(), "{name} on {input:?}");
        }
    }
}
