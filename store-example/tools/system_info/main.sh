#!/usr/bin/env bash
# system_info: report the operating system, kernel release, CPU architecture and CPU count.
#
# toolsmith script tool, protocol = "plain": the JSON arguments arrive on stdin (this tool takes
# none, so they are read and ignored), the JSON result is printed on stdout, errors go to stderr
# with a non-zero exit code. Only POSIX tools are used (uname, nproc or getconf).
set -eu

cat >/dev/null || true   # drain the (unused) arguments

# json_escape VALUE: escape backslashes and double quotes so VALUE fits inside a JSON string.
json_escape() { printf '%s' "$1" | sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' | tr -d '\n\r\t'; }

os=$(uname -s)
kernel=$(uname -r)
arch=$(uname -m)
cpus=$(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null || echo 0)
case "$cpus" in '' | *[!0-9]*) cpus=0 ;; esac

printf '{"os":"%s","kernel":"%s","arch":"%s","cpus":%s}\n' \
  "$(json_escape "$os")" "$(json_escape "$kernel")" "$(json_escape "$arch")" "$cpus"
