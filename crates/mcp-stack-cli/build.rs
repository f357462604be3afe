//! Link options for the `mcp` binary only (see scripts/link-order.sh).
//!
//! On x86_64 Linux with rustc's default linker (rust-lld, rustc >= 1.90), the functions the server
//! runs at start-up are placed together at the start of `.text` (`--symbol-ordering-file`), and
//! relative relocations are packed (`-z pack-relative-relocs`). Both change layout only; idle RSS
//! of `mcp serve everything` drops because the kernel maps file pages 64 KiB around each fault.
use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=MCP_LINK_ORDER");
    let target = std::env::var("TARGET").unwrap_or_default();
    let flags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    if target != "x86_64-unknown-linux-gnu" || flags.contains("link") || !rustc_uses_lld() {
        return;
    }
    let order = match std::env::var_os("MCP_LINK_ORDER") {
        Some(path) => PathBuf::from(path),
        None => PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default()).join("link-order.txt"),
    };
    println!("cargo:rerun-if-changed={}", order.display());
    if order.is_file() {
        println!("cargo:rustc-link-arg-bin=mcp=-Wl,--symbol-ordering-file={}", order.display());
        println!("cargo:rustc-link-arg-bin=mcp=-Wl,--no-warn-symbol-ordering");
    }
    println!("cargo:rustc-link-arg-bin=mcp=-Wl,-z,pack-relative-relocs");
}

/// rustc 1.90 made the bundled rust-lld the default linker for x86_64-unknown-linux-gnu.
fn rustc_uses_lld() -> bool {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let Ok(out) = Command::new(rustc).arg("-V").output() else { return false };
    let version = String::from_utf8_lossy(&out.stdout);
    let minor = version.split_whitespace().nth(1).and_then(|v| v.split('.').nth(1)).and_then(|m| m.parse::<u32>().ok());
    minor.is_some_and(|m| m >= 90)
}
