#!/usr/bin/env bash
# Install what the test suite needs on a fresh machine, then run the whole suite.
# Usage: ./scripts/test.sh [extra cargo test args]
set -euo pipefail
cd "$(dirname "$0")/.."
# Free disk before and after: a full run needs about 15 GB under target/ (CI once ran out).
df -h . >&2 || true
# What compiling needs first (rust targets and components); the packages the tests use (apt,
# PyPI, npm: network-bound) are installed in the background while the code compiles.
TOOLSMITH_SETUP=toolchain
source scripts/setup.sh
setup_log="$(mktemp)"
TOOLSMITH_SETUP=all ./scripts/setup.sh >"$setup_log" 2>&1 &
setup_pid=$!
# Formatting gate: unformatted code fails the suite (fix with `cargo fmt --all`).
cargo fmt --all -- --check
# Lint gate and test build in one compilation: clippy's driver compiles the workspace's own
# crates (every target, benches too) as rustc would and lints them on the way, so the
# dependencies are compiled once, not once for `cargo clippy` and again for the tests.
# Clippy warnings fail the suite (as `cargo clippy --workspace --all-targets -- -D warnings`).
clippy_driver="$(rustup which clippy-driver 2>/dev/null || command -v clippy-driver || true)"
if [ ! -x "$clippy_driver" ]; then
  echo "test.sh: clippy-driver not found; hint: rustup component add clippy" >&2
  exit 1
fi
export RUSTC_WORKSPACE_WRAPPER="$clippy_driver"
export CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"
cargo test --workspace --all-targets --no-run
setup_status=0
wait "$setup_pid" || setup_status=$?
cat "$setup_log" >&2
rm -f "$setup_log"
if [ "$setup_status" != 0 ]; then
  echo "test.sh: scripts/setup.sh failed (exit $setup_status, its output above); hint: run it by hand to retry" >&2
  exit 1
fi
# Everything is installed now: this only checks, and exports the variables the tests read.
TOOLSMITH_SETUP=all
source scripts/setup.sh
# Approvals, secrets and the audit log of tests that use the default personal directory go to
# a throwaway one, never the person's own.
if [ -z "${TOOLSMITH_DATA:-}" ]; then
  TOOLSMITH_DATA="$(mktemp -d)"
  export TOOLSMITH_DATA
  trap 'rm -rf "$TOOLSMITH_DATA"' EXIT
fi
# macOS (Seatbelt) and Windows build check, without clippy's driver (TOOLSMITH_SKIP_CROSS=1
# skips it). It compiles (CPU-bound) while the tests mostly wait on the processes they start:
# at the lowest priority it takes only the processor time the tests leave.
cross_pid=
if [ "${TOOLSMITH_SKIP_CROSS:-0}" != 1 ]; then
  cross_log="$(mktemp)"
  (
    unset RUSTC_WORKSPACE_WRAPPER CLIPPY_ARGS
    exec nice -n 19 ./scripts/cross-check.sh
  ) >"$cross_log" 2>&1 &
  cross_pid=$!
fi
cargo test --workspace "$@" 2>&1
df -h . >&2 || true
du -sh target/debug >&2 || true
if [ -n "$cross_pid" ]; then
  cross_status=0
  wait "$cross_pid" || cross_status=$?
  cat "$cross_log" >&2
  rm -f "$cross_log"
  if [ "$cross_status" != 0 ]; then
    echo "test.sh: scripts/cross-check.sh failed (exit $cross_status, its output above)" >&2
    exit 1
  fi
fi
