//! Giving memory back after bursts (Linux with glibc; elsewhere [`tune_allocator`] does nothing).
//!
//! glibc's allocator keeps freed memory for reuse, and after the first large block is freed it
//! raises its mmap threshold dynamically, so later request-sized blocks (a 2 MiB body, a large
//! reply) come from the heap and stay resident after the burst that needed them. Two settings
//! and a trimmer fix that without another allocator (which would cost idle RSS: the `mcp`
//! binary idles under 5 MiB):
//! - a fixed mmap threshold (256 KiB): large blocks are always mapped and unmapped on free;
//! - a trim threshold of 1 MiB: free memory at the top of the heap is returned promptly;
//! - a trimmer thread that calls `malloc_trim(0)` when resident memory is well above the idle
//!   level, returning what is left in the middle of heaps and in per-thread arenas.
//!
//! A binary linking this crate also gets [`libm`]'s `log` and `pow`, so glibc's libm is not
//! loaded at all (0.6 MiB of idle RSS for two functions).

#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub mod libm;

use std::time::Duration;

/// Resident memory above which the trimmer trims.
const TRIM_ABOVE_BYTES: u64 = 12 << 20;
/// How often the trimmer looks.
const EVERY: Duration = Duration::from_secs(1);

/// Applies the allocator settings and starts the trimmer (no-op off Linux/glibc, or when
/// `MCP_MALLOC_TRIM=0`). Call it first thing in `main`, before other threads start.
pub fn tune_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        if std::env::var("MCP_MALLOC_TRIM").is_ok_and(|v| v == "0") {
            return;
        }
        // SAFETY: mallopt only changes allocator parameters; called before other threads start.
        #[allow(unsafe_code)]
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, 256 * 1024);
            libc::mallopt(libc::M_TRIM_THRESHOLD, 1 << 20);
        }
        let _ = std::thread::Builder::new().name("mcp-trim".into()).stack_size(64 * 1024).spawn(|| loop {
            std::thread::sleep(EVERY);
            if resident_bytes().is_some_and(|b| b > TRIM_ABOVE_BYTES) {
                // SAFETY: malloc_trim is thread-safe and has no preconditions.
                #[allow(unsafe_code)]
                unsafe {
                    libc::malloc_trim(0);
                }
            }
        });
    }
}

/// This process's resident memory, from `/proc/self/statm`.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn resident_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}
