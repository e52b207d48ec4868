#!/usr/bin/env bash
# Install what the test suite needs on a fresh machine, then run the whole suite.
# Usage: ./scripts/test.sh [extra cargo test args]
#
# On a fresh machine the steps overlap where one waits on the network and the other on the
# processor: setup (packages, venvs, npm: downloads) runs while the test build compiles, and
# the macOS/Windows build check runs at the lowest priority while the tests run (they leave
# cores idle while they wait on processes). Each step's failure still fails the run.
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
# What runs in the background is stopped when this script ends early; the throwaway personal
# directory (below) is removed.
background=()
kill_tree() {
  local child
  for child in $(pgrep -P "$1" 2>/dev/null); do
    kill_tree "$child"
  done
  kill "$1" 2>/dev/null || true
}
cleanup() {
  local pid
  if [ -n "${cross_dir:-}" ] && [ -e "$cross_dir/pid" ]; then
    background+=("$(cat "$cross_dir/pid")")
  fi
  for pid in "${background[@]}"; do
    kill_tree "$pid"
  done
  if [ -n "${cross_dir:-}" ]; then
    rm -rf "$cross_dir"
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
cross="${TOOLSMITH_SKIP_CROSS:-0}"
# The build, in the background while setup downloads.
(
  export RUSTC_WORKSPACE_WRAPPER="$clippy_driver"
  export CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"
  exec cargo test --workspace --all-targets --no-run
) &
build=$!
background+=("$build")
source scripts/setup.sh
# The cross check's downloads (its targets, zig) while the build still runs.
if [ "$cross" != 1 ]; then
  ./scripts/cross-check.sh --prepare
fi
if ! wait "$build"; then
  echo "test.sh: the test build failed (above)" >&2
  false
fi
background=()
export RUSTC_WORKSPACE_WRAPPER="$clippy_driver"
export CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"
# Approvals, secrets and the audit log of tests that use the default personal directory go to
# a throwaway one, never the person's own.
if [ -z "${TOOLSMITH_DATA:-}" ]; then
  throwaway_data="$(mktemp -d)"
  TOOLSMITH_DATA="$throwaway_data"
  export TOOLSMITH_DATA
fi
# The macOS (Seatbelt) and Windows build check (without clippy's driver), at the lowest
# priority, once the tests run: cargo holds the build directory's lock until then, and the
# check would take it for its whole length. Its output goes to a file, shown at the end.
cross_dir="$(mktemp -d)"
background_cross() {
  (
    unset RUSTC_WORKSPACE_WRAPPER CLIPPY_ARGS
    status=0
    nice -n 19 ./scripts/cross-check.sh >"$cross_dir/log" 2>&1 || status=$?
    echo "$status" >"$cross_dir/status"
  ) &
  echo $! >"$cross_dir/pid"
}
# One test per core (cargo's default; RUST_TEST_THREADS=4 ran the integration tests in 197-250 s
# instead of 260-346 s on 2 cores, but under that load a hand edit made the moment a server
# started was once missed: its watch is set up in the background).
cargo test --workspace "$@" 2>&1 | while IFS= read -r line; do
  printf '%s\n' "$line"
  if [ "$cross" != 1 ] && [ ! -e "$cross_dir/pid" ] && [[ "$line" == *"Running "* ]]; then
    background_cross
  fi
done
df -h . >&2 || true
du -sh target/debug >&2 || true
if [ "$cross" != 1 ]; then
  if [ ! -e "$cross_dir/pid" ]; then
    # No test binary ran (a filter matched none): the check runs now.
    background_cross
  fi
  while [ ! -e "$cross_dir/status" ]; do
    sleep 1
  done
  rm -f "$cross_dir/pid"
  if [ "$(cat "$cross_dir/status")" != 0 ]; then
    cat "$cross_dir/log" >&2
    echo "test.sh: the macOS/Windows build check failed (above); set TOOLSMITH_SKIP_CROSS=1 to skip it" >&2
    false
  fi
  tail -n 2 "$cross_dir/log" >&2
fi
