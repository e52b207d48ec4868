#!/usr/bin/env bash
# Install what the test suite needs on a fresh machine, then run the whole suite.
# Usage: ./scripts/test.sh [extra cargo test args]
set -euo pipefail
cd "$(dirname "$0")/.."
# Free disk before and after: a full run needs about 15 GB under target/ (CI once ran out).
df -h . >&2 || true
source scripts/setup.sh
# Formatting gate: unformatted code fails the suite (fix with `cargo fmt --all`).
cargo fmt --all -- --check
# Lint gate: clippy warnings fail the suite.
cargo clippy --workspace --all-targets -- -D warnings
# Approvals, secrets and the audit log of tests that use the default personal directory go to
# a throwaway one, never the person's own.
if [ -z "${TOOLSMITH_DATA:-}" ]; then
  TOOLSMITH_DATA="$(mktemp -d)"
  export TOOLSMITH_DATA
  trap 'rm -rf "$TOOLSMITH_DATA"' EXIT
fi
cargo test --workspace "$@" 2>&1
df -h . >&2 || true
du -sh target/debug >&2 || true
# macOS (Seatbelt) build check; set TOOLSMITH_SKIP_CROSS=1 to skip it.
if [ "${TOOLSMITH_SKIP_CROSS:-0}" != 1 ]; then
  ./scripts/cross-check.sh
fi
