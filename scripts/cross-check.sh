#!/usr/bin/env bash
# Check that the library and binary build for macOS (aarch64-apple-darwin): the Seatbelt sandbox
# path and everything behind cfg(target_os = "macos"). wasmtime's build script compiles a little
# C, so a C compiler for the target is needed: zig (from PyPI's `ziglang`) through a wrapper that
# drops the flags cc-rs adds for Apple's clang. Uses its own target dir (target/cross) so the
# main one stays warm. Usage: ./scripts/cross-check.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
target=aarch64-apple-darwin
log() { echo "cross-check: $*" >&2; }

if ! rustup target list --installed | grep -qx "$target"; then
  log "adding the $target target"
  rustup target add "$target" >&2
fi

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
cat > "$bin/ar-zig" <<WRAP
#!/usr/bin/env bash
exec "$venv/bin/python" -m ziglang ar "\$@"
WRAP
chmod +x "$bin/cc-aarch64-macos" "$bin/ar-zig"

log "cargo check --target $target (lib + bin)"
CC_aarch64_apple_darwin="$bin/cc-aarch64-macos" \
AR_aarch64_apple_darwin="$bin/ar-zig" \
CARGO_TARGET_DIR="$root/target/cross" \
  cargo check --manifest-path "$root/Cargo.toml" --target "$target" --lib --bins
