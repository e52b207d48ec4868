#!/usr/bin/env bash
# Install what the test suite needs on a fresh machine, then run the whole suite.
# Usage: ./scripts/test.sh [extra cargo test args]
#
# On a fresh machine setup (packages, venvs, npm, the cross check's targets and zig: mostly
# downloads) runs while the test build compiles. The tests and the macOS/Windows check do not
# overlap: both keep 2 cores busy (run side by side, even at `nice 19`, the tests took 627 s
# instead of 477 and the two together saved 23 s). Each step's failure fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
# Free disk before and after: a full run needs about 15 GB under target/ (CI once ran out, and
# once started on a disk with 607 MB left: setup's npm install failed with nothing said).
df -h . >&2 || true
free_kb="$(df -Pk . 2>/dev/null | awk 'NR==2 {print $4}')"
if [ -n "$free_kb" ] && [ "$free_kb" -lt $((12 * 1024 * 1024)) ]; then
  echo "test.sh: warning: only $((free_kb / 1024)) MB free here; a full run writes about 15 GB under target/," >&2
  echo "  so setup, the build or the tests may fail for want of space (hint: free some, or point" >&2
  echo "  CARGO_TARGET_DIR at a larger disk)" >&2
fi
# A failure (setup, the build, a test) says how full the disk was: npm and pip fail with
# little said when it is (CI's upstream tests once failed with only npm's log path printed).
trap 'echo "test.sh: failed; the disk then:" >&2; df -h . /tmp >&2 || true; du -sh target/debug >&2 || true' ERR
# The background build (below) is stopped when this script ends early; the throwaway personal
# directory (below) is removed.
build=""
kill_tree() {
  local child
  for child in $(pgrep -P "$1" 2>/dev/null); do
    kill_tree "$child"
  done
  kill "$1" 2>/dev/null || true
}
cleanup() {
  if [ -n "$build" ]; then
    kill_tree "$build"
  fi
  if [ -n "${throwaway_data:-}" ]; then
    rm -rf "$throwaway_data"
  fi
}
trap cleanup EXIT
# The toolchain's parts first: the build needs clippy's driver.
source scripts/setup-rust.sh
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
cross="${TOOLSMITH_SKIP_CROSS:-0}"
# The build, in the background while setup downloads.
cargo test --workspace --all-targets --no-run &
build=$!
source scripts/setup.sh
# The cross check's downloads (its targets, zig) while the build still runs.
if [ "$cross" != 1 ]; then
  ./scripts/cross-check.sh --prepare
fi
if ! wait "$build"; then
  echo "test.sh: the test build failed (above)" >&2
  false
fi
build=""
# Approvals, secrets and the audit log of tests that use the default personal directory go to
# a throwaway one, never the person's own.
if [ -z "${TOOLSMITH_DATA:-}" ]; then
  throwaway_data="$(mktemp -d)"
  TOOLSMITH_DATA="$throwaway_data"
  export TOOLSMITH_DATA
fi
# One test more than there are cores (unless RUST_TEST_THREADS says otherwise): a test waits on
# processes, servers and browsers part of the time (about 14 % of the 2 cores idle with two),
# and the component builds keep the cores busy; on 2 cores the integration tests took 395 s with
# three instead of 422 with two. (Under such load a hand edit made the moment a server started
# was once missed; the watcher now reads the tree again once its watch is in place.)
cores="$(nproc 2>/dev/null || echo 2)"
export RUST_TEST_THREADS="${RUST_TEST_THREADS:-$((cores + 1))}"
cargo test --workspace "$@" 2>&1
df -h . >&2 || true
du -sh target/debug >&2 || true
# macOS (Seatbelt) and Windows build check, without clippy's driver; set
# TOOLSMITH_SKIP_CROSS=1 to skip it.
unset RUSTC_WORKSPACE_WRAPPER CLIPPY_ARGS
if [ "$cross" != 1 ] && ! ./scripts/cross-check.sh; then
  echo "test.sh: the macOS/Windows build check failed (above); hint: TOOLSMITH_SKIP_CROSS=1 skips it" >&2
  false
fi
