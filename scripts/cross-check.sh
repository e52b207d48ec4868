#!/usr/bin/env bash
# Check that the library and binary build for macOS (aarch64-apple-darwin: the Seatbelt sandbox
# path and everything behind cfg(target_os = "macos") and Windows (x86_64-pc-windows-gnu:
# everything behind cfg(unix) has its other side). Build scripts compile a little C (wasmtime,
# ring), so a C compiler for each target is needed: zig (from PyPI's `ziglang`) through wrappers
# that drop the flags cc-rs adds for other compilers. Uses the main target dir: the checked
# crates go to target/<triple>/, and the host's proc macros and build scripts, already built for
# the tests, are reused (on a fresh clone after the test build: 3.5 min instead of 7.5 with a
# separate dir); the main build stays warm. Usage: ./scripts/cross-check.sh [--prepare]
# (--prepare: only install the targets and zig, the downloads; scripts/test.sh does that while
# the test build runs).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
target=aarch64-apple-darwin
windows=x86_64-pc-windows-gnu
log() { echo "cross-check: $*" >&2; }

for t in "$target" "$windows"; do
  if ! rustup target list --installed | grep -qx "$t"; then
    log "adding the $t target"
    rustup target add "$t" >&2
  fi
done

venv="$root/target/zig-venv"
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import ziglang' 2>/dev/null; then
  log "installing ziglang into $venv"
  python3 -m venv "$venv" >&2
  "$venv/bin/pip" install -q --disable-pip-version-check ziglang >&2
fi

bin="$root/target/zig-bin"
mkdir -p "$bin"
cat > "$bin/cc-aarch64-macos" <<WRAP
#!/usr/bin/env bash
# cc for $target through zig: drop the Apple-clang flags zig does not take.
args=()
skip=0
for a in "\$@"; do
  if [ \$skip = 1 ]; then skip=0; continue; fi
  case "\$a" in
    -arch) skip=1 ;;
    --target=*|-mmacosx-version-min=*) ;;
    *) args+=("\$a") ;;
  esac
done
exec "$venv/bin/python" -m ziglang cc -target aarch64-macos "\${args[@]}"
WRAP
cat > "$bin/cc-x86_64-windows" <<WRAP
#!/usr/bin/env bash
# cc for $windows through zig: zig takes its own -target instead of cc-rs's --target.
args=()
for a in "\$@"; do
  case "\$a" in
    --target=*) ;;
    *) args+=("\$a") ;;
  esac
done
exec "$venv/bin/python" -m ziglang cc -target x86_64-windows-gnu "\${args[@]}"
WRAP
cat > "$bin/ar-zig" <<WRAP
#!/usr/bin/env bash
exec "$venv/bin/python" -m ziglang ar "\$@"
WRAP
chmod +x "$bin/cc-aarch64-macos" "$bin/cc-x86_64-windows" "$bin/ar-zig"
if [ "${1:-}" = --prepare ]; then
  exit 0
fi

log "cargo check --target $target --target $windows (lib + bin)"
# One invocation for both targets: cargo interleaves their crates on the cores.
CC_aarch64_apple_darwin="$bin/cc-aarch64-macos" \
AR_aarch64_apple_darwin="$bin/ar-zig" \
CC_x86_64_pc_windows_gnu="$bin/cc-x86_64-windows" \
AR_x86_64_pc_windows_gnu="$bin/ar-zig" \
CARGO_TARGET_DIR="$root/target" \
  cargo check --manifest-path "$root/Cargo.toml" --target "$target" --target "$windows" --lib --bins
