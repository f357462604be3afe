//! The stdio line framer never panics, never keeps a line over its limit, and frames the same
//! lines however the input is split.

/// Checks one input (panics on a violated property).
pub fn check(data: &[u8]) {
    let Some((&split, data)) = data.split_first() else { return };
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let max = 64;
    let whole = rt.block_on(mcp_stdio::__fuzz::frame(data, data.len().max(1), max)).unwrap();
    let pieces = rt.block_on(mcp_stdio::__fuzz::frame(data, usize::from(split % 13) + 1, max)).unwrap();
    assert_eq!(whole, pieces, "the split changed the framing");
    for l in whole.iter().flatten() {
        assert!(l.len() <= max + 1);
        assert!(!l.ends_with(b"\n"));
    }
}
