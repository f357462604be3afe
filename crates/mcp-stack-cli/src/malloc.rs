//! Memory goes back after bursts (`mcp serve`, `mcp proxy`; Linux with glibc, elsewhere
//! [`tune_allocator`] does nothing).
//!
//! glibc keeps freed memory for reuse, and after the first large block is freed it raises its
//! mmap threshold, so later request-sized blocks (a 2 MiB body, a large reply) come from the
//! heap and stay resident after the burst that needed them. Two settings and a trimmer fix that
//! without another allocator:
//! - a fixed mmap threshold (256 KiB): large blocks are always mapped and unmapped on free;
//! - a trim threshold of 1 MiB: free memory at the top of the heap is returned promptly;
//! - a thread that calls `malloc_trim(0)` once a second while resident memory is above
//!   [`TRIM_ABOVE_KIB`], returning what is left in the middle of heaps and in thread arenas.
//!
//! `MCP_MALLOC_TRIM=0` turns all of it off (`scripts/bench-extras.sh` compares both after a burst).
#![allow(unsafe_code)]

/// Resident memory (KiB) above which the trimmer trims.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const TRIM_ABOVE_KIB: u64 = 12 << 10;

/// Applies the allocator settings and starts the trimmer (no-op off Linux/glibc, or when
/// `MCP_MALLOC_TRIM=0`). Called first thing in `main`, before other threads start.
pub(crate) fn tune_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        if std::env::var("MCP_MALLOC_TRIM").is_ok_and(|v| v == "0") {
            return;
        }
        // SAFETY: mallopt only changes allocator parameters; called before other threads start.
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, 256 * 1024);
            libc::mallopt(libc::M_TRIM_THRESHOLD, 1 << 20);
        }
        let every = std::time::Duration::from_secs(1);
        let _ = std::thread::Builder::new().name("mcp-trim".into()).stack_size(64 * 1024).spawn(move || loop {
            std::thread::sleep(every);
            if resident_kib().is_some_and(|kib| kib > TRIM_ABOVE_KIB) {
                // SAFETY: malloc_trim is thread-safe and has no preconditions.
                unsafe {
                    libc::malloc_trim(0);
                }
            }
        });
    }
}

/// This process's resident memory in KiB (`VmRSS` of `/proc/self/status`).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn resident_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(all(test, target_os = "linux", target_env = "gnu"))]
mod tests {
    #[test]
    fn resident_memory_is_read_from_proc() {
        let kib = super::resident_kib().expect("VmRSS in /proc/self/status");
        // A running test binary has at least its own code resident, and less than it has mapped.
        assert!(kib > 0);
        let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
        let size_pages: u64 = statm.split_whitespace().next().unwrap().parse().unwrap();
        assert!(kib <= size_pages * 64, "resident {kib} KiB is past the mapped size");
    }
}
