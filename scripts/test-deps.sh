#!/usr/bin/env bash
# Installs the system programs the tests use, on Debian or Ubuntu, when they are missing:
#   openssl       test certificates and keys (TLS, JWT)
#   python3       the proxy tests' legacy upstream server
#   redis-server  the scale-out tests (shared state on a real Redis)
#   nginx-light   the load-balancer tests (round-robin in front of three instances)
#   bsdutils      `script`, a pseudo-terminal for the CLI's terminal tests
#   chromium      a real browser (headless, driven over CDP) for the `mcp inspect` tests
# Then `cargo test --workspace --all-targets` runs every test. A test whose program is missing
# fails naming its package (set MCP_TEST_SKIP_MISSING=1 to skip those instead, loudly).
# Uses apt-get as root, or through sudo. Prints what it installed; installs nothing present.
set -euo pipefail
need=()
have() { command -v "$1" >/dev/null 2>&1 || [ -x "/usr/sbin/$1" ]; }
have openssl || need+=(openssl)
have python3 || need+=(python3)
have redis-server || need+=(redis-server)
have nginx || need+=(nginx-light)
have script || need+=(bsdutils)
have chromium || have chromium-browser || [ -n "${MCP_TEST_CHROMIUM:-}" ] || need+=(chromium)
if [ "${#need[@]}" -eq 0 ]; then
  echo "test-deps: everything the tests use is installed"
  exit 0
fi
echo "test-deps: installing ${need[*]}"
sudo=()
[ "$(id -u)" -eq 0 ] || sudo=(sudo)
"${sudo[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "${need[@]}"
