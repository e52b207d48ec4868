"""What every MCP client test script here uses: fail with a message, expect a condition, the
text of a tool result."""
import sys


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def expect(cond, msg):
    if not cond:
        fail(msg)


def text_of(r):
    return "".join(getattr(c, "text", "") for c in r.content)
