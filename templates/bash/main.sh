#!/usr/bin/env bash
# {{name}}: {{description}}
#
# Calling convention (toolsmith, kind = "script", protocol = "plain"):
# - the arguments arrive as ONE JSON document on stdin (an object matching input_schema),
#   e.g. {"text":"world"};
# - print the result on stdout: valid JSON becomes structured output (it should match
#   output_schema), anything else is returned as text;
# - stderr lines become log messages; exit non-zero to report an error (its message is stderr).
#
# This template needs only POSIX tools (no jq, no python). It pulls the raw, still-escaped
# content of the "text" string out of the JSON with sed and puts it back inside a JSON string,
# so the output stays valid JSON. This is enough for flat string arguments; for anything more
# complex use `jq` (add it to your environment) or write the tool in another language.
set -eu

input=$(cat | tr '\n' ' ')

# json_string KEY: raw (escaped) content of the top-level string field KEY, empty if absent.
json_string() {
  printf '%s' "$input" |
    sed -n -E 's/.*"'"$1"'"[[:space:]]*:[[:space:]]*"(([^"\\]|\\.)*)".*/\1/p'
}

text=$(json_string text)
case "$input" in
  *'"text"'*) ;;
  *) echo "missing string argument \`text\`" >&2; exit 1 ;;
esac

printf '{"message":"Hello, %s!"}\n' "$text"
