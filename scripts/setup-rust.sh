#!/usr/bin/env bash
# The Rust toolchain's parts the build and the tests use: the wasm32-wasip1 and wasm32-wasip2
# targets, and rustfmt and clippy (the formatting and lint gates). Idempotent; sourced by
# scripts/setup.sh, and by scripts/test.sh before the build (which needs clippy's driver).
set -euo pipefail
_setup_rust_log() { echo "setup: $*" >&2; }
if command -v rustup >/dev/null 2>&1; then
  for target in wasm32-wasip1 wasm32-wasip2; do
    if ! rustup target list --installed | grep -qx "$target"; then
      _setup_rust_log "adding the $target target"
      rustup target add "$target" >&2
    fi
  done
  for comp in rustfmt clippy; do
    if ! rustup component list --installed 2>/dev/null | grep -q "^$comp"; then
      _setup_rust_log "adding $comp (the formatting and lint gates)"
      rustup component add "$comp" >&2
    fi
  done
fi
