//! Checks of an MCP entry's `[mcp]` table (`kind = "mcp"`): how its server starts, its
//! environment and headers, and the secrets they name.

use super::{Issue, err, is_secret_name, warn};
use crate::Manifest;
use toolsmith_names as names;

/// Longest argument list, environment or header table of an MCP entry.
const MAX_MCP_ITEMS: usize = 64;

/// An MCP entry: a program (stdio) or a URL (streamable HTTP), never both; plain values.
pub(super) fn check_mcp(m: &Manifest, out: &mut Vec<Issue>) {
    if m.name.contains(super::super::UPSTREAM_SEPARATOR) {
        out.push(err(
            "name",
            format!(
                "an MCP entry's name may not contain `{}`",
                super::super::UPSTREAM_SEPARATOR
            ),
            "its tools are named `<entry>__<tool>`: use single `_` or `-` in the entry's name",
        ));
    }
    let Some(s) = &m.mcp else {
        out.push(err(
            "mcp",
            "a kind = \"mcp\" entry needs an [mcp] table",
            "add [mcp] with `command = \"...\"` and `args = [...]` (a server started over stdio) or `url = \"https://...\"` (streamable HTTP)",
        ));
        return;
    };
    match (&s.command, &s.url) {
        (None, None) => out.push(err(
            "mcp",
            "[mcp] needs `command` (a server started over stdio) or `url` (streamable HTTP)",
            "e.g. command = \"mcp-server-time\" with [dependencies] pip = [\"mcp-server-time==2026.10.19\"]",
        )),
        (Some(_), Some(_)) => out.push(err(
            "mcp",
            "[mcp] sets both `command` and `url`",
            "keep one: `command` runs the server here, `url` reaches a running one",
        )),
        _ => {}
    }
    if let Some(c) = &s.command
        && (c.trim().is_empty() || c.contains('\0') || c.starts_with('-'))
    {
        out.push(err(
            "mcp.command",
            format!("{c:?} is not a command"),
            "name a program: one of the entry's packages' commands, or one on PATH",
        ));
    }
    if let Some(u) = &s.url {
        if !(u.starts_with("https://") || u.starts_with("http://")) {
            out.push(err(
                "mcp.url",
                format!("{u:?} is not an http:// or https:// URL"),
                "give the server's streamable HTTP endpoint, e.g. https://mcp.example.com/mcp",
            ));
        } else if s.url_host().is_none() {
            out.push(err(
                "mcp.url",
                format!("{u:?} has no host (or holds credentials before it)"),
                "write https://HOST[:PORT]/PATH; a token goes in a header from a secret (`headers`)",
            ));
        }
        if !s.args.is_empty() || !s.env.is_empty() {
            out.push(warn(
                "mcp",
                "`args` and `env` are for a server started here (`command`), not a URL",
                "remove them",
            ));
        }
    }
    if s.command.is_some() && !s.headers.is_empty() {
        out.push(warn(
            "mcp.headers",
            "`headers` are for an HTTP server (`url`)",
            "remove them, or use `url`",
        ));
    }
    for (field, n) in [
        ("mcp.args", s.args.len()),
        ("mcp.env", s.env.len()),
        ("mcp.headers", s.headers.len()),
        ("mcp.tools", s.tools.len()),
    ] {
        if n > MAX_MCP_ITEMS {
            out.push(err(
                field,
                format!("{n} entries; at most {MAX_MCP_ITEMS} are allowed"),
                "list fewer",
            ));
        }
    }
    let texts = s
        .args
        .iter()
        .map(|a| ("mcp.args", a))
        .chain(s.env.values().map(|v| ("mcp.env", v)))
        .chain(s.headers.values().map(|v| ("mcp.headers", v)));
    for (field, t) in texts {
        if let Err(e) = names::check_text(field, t) {
            out.push(err(field, e, "use plain visible characters"));
        }
        if t.contains('\0') || t.len() > 4096 {
            out.push(err(
                field,
                "a value holds a NUL character or is longer than 4096 bytes",
                "shorten it",
            ));
        }
    }
    for k in s.env.keys() {
        super::check_env_name(format!("mcp.env.{k}"), k, out);
        if !is_secret_name(k) && !is_env_name(k) {
            out.push(err(
                format!("mcp.env.{k}"),
                format!("{k:?} is not an environment variable name"),
                "use letters, digits and '_', starting with a letter",
            ));
        }
        if m.secrets.contains_key(k) {
            out.push(err(
                format!("mcp.env.{k}"),
                format!("{k} is also a declared secret"),
                "keep it under [secrets] only: its value is set by a person, never written here",
            ));
        }
    }
    for (k, v) in &s.headers {
        let ok = !k.is_empty()
            && k.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_".contains(&b));
        if !ok {
            out.push(err(
                format!("mcp.headers.{k}"),
                format!("{k:?} is not a header name"),
                "use letters, digits and '-'",
            ));
        }
        for name in secret_refs(v) {
            if !m.secrets.contains_key(name) {
                out.push(err(
                    format!("mcp.headers.{k}"),
                    format!("`${{{name}}}` names no declared secret"),
                    format!("declare it: [secrets] {name} = \"what it is for\""),
                ));
            }
        }
    }
    for (i, t) in s.tools.iter().enumerate() {
        if names::validate_upstream(t).is_err() {
            out.push(err(
                format!("mcp.tools.{i}"),
                format!("{t:?} is not an MCP tool name"),
                "list the server's tool names as it lists them (letters, digits, `_`, `-`, `.`)",
            ));
        }
    }
    if s.idle_secs == Some(0) || s.idle_secs.is_some_and(|t| t > 86_400) {
        out.push(err(
            "mcp.idle_secs",
            "idle_secs must be between 1 and 86400 (one day)",
            "the default is 300",
        ));
    }
    if !m.steps.is_empty() || m.run.entry.is_some() || m.run.worker {
        out.push(warn(
            "run",
            "[run] entry, worker and [[steps]] are not used by an MCP entry",
            "remove them; [mcp] says how the server starts",
        ));
    }
}

/// An environment variable name (any case).
fn is_env_name(n: &str) -> bool {
    n.len() <= 128
        && n.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The secret names a header value refers to (`${NAME}`).
pub fn secret_refs(value: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = value;
    while let Some(i) = rest.find("${") {
        let after = &rest[i + 2..];
        let Some(end) = after.find('}') else { break };
        out.push(&after[..end]);
        rest = &after[end + 1..];
    }
    out
}
