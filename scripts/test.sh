#!/usr/bin/env bash
# Install what the test suite needs on a fresh machine, then run the whole suite.
# Usage: ./scripts/test.sh [extra cargo test args]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
cargo test --workspace "$@" 2>&1
