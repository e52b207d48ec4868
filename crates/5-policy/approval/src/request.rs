//! What a manifest asks for beyond the defaults, and the manifest a call runs with.
//!
//! The default grant, which needs nobody's approval: no network, no environment beyond the
//! runner's base set, the tool directory read-only, its own scratch directory, the default
//! limits, the sandbox. Everything else in `tool.toml` is a *request*.

use crate::manifest::{Capabilities, Limits, Manifest, SandboxMode};
use serde::Serialize;

/// One capability beyond the defaults.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Item {
    /// Any host (`domains` None), or only the listed domains.
    Network {
        /// The domains (None: any host).
        #[serde(skip_serializing_if = "Option::is_none")]
        domains: Option<Vec<String>>,
    },
    /// An environment variable passed through.
    Env {
        /// Its name.
        name: String,
    },
    /// Reading a path.
    Read {
        /// The path as declared.
        path: String,
    },
    /// Writing a path.
    Write {
        /// The path as declared.
        path: String,
    },
    /// A secret's value in its environment.
    Secret {
        /// The secret's name.
        name: String,
    },
    /// Running without an OS sandbox.
    Unsandboxed,
    /// A limit above its default.
    Limit {
        /// The `[limits]` field.
        field: String,
        /// The value asked for.
        value: u64,
        /// The default.
        default: u64,
    },
}

impl Item {
    /// The kind of grant, as the personal setting `[approvals] elicitation` names it
    /// (`personal::ELICITATION_KINDS`).
    pub fn kind(&self) -> &'static str {
        match self {
            Item::Network { .. } => "network",
            Item::Env { .. } => "env",
            Item::Read { .. } => "read",
            Item::Write { .. } => "write",
            Item::Secret { .. } => "secrets",
            Item::Unsandboxed => "unsandboxed",
            Item::Limit { .. } => "limits",
        }
    }
}

impl std::fmt::Display for Item {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Item::Network { domains: None } => write!(f, "network access to any host"),
            Item::Network { domains: Some(d) } => {
                write!(f, "network access to {} only", d.join(", "))
            }
            Item::Env { name } => write!(f, "the environment variable {name}"),
            Item::Read { path } => write!(f, "read access to {path}"),
            Item::Write { path } => write!(f, "write access to {path}"),
            Item::Secret { name } => write!(f, "the secret {name}"),
            Item::Unsandboxed => write!(f, "running without a sandbox (run.sandbox = \"none\")"),
            Item::Limit {
                field,
                value,
                default,
            } => write!(f, "limits.{field} = {value} (default {default})"),
        }
    }
}

/// Everything `m` asks for beyond the defaults, in a stable order. Empty for a tool that runs
/// on the defaults (and for pipelines, whose steps are gated one by one).
pub fn requested(m: &Manifest) -> Vec<Item> {
    let mut out = Vec::new();
    if m.kind == crate::manifest::Kind::Pipeline {
        return out;
    }
    let c = &m.capabilities;
    // A remote MCP server (`[mcp] url`) is reached by toolsmith: network to its host.
    let remote = (m.kind == crate::manifest::Kind::Mcp)
        .then(|| m.mcp.as_ref().and_then(|s| s.url_host()))
        .flatten();
    if c.network.is_any() {
        out.push(Item::Network { domains: None });
    } else if let Some(d) = c.network.domains() {
        let mut d = d.to_vec();
        if let Some(h) = remote.filter(|h| crate::manifest::domain::allowing(&d, h).is_none()) {
            d.push(h);
        }
        out.push(Item::Network { domains: Some(d) });
    } else if let Some(h) = remote {
        out.push(Item::Network {
            domains: Some(vec![h]),
        });
    }
    out.extend(c.env.iter().map(|n| Item::Env { name: n.clone() }));
    out.extend(c.read.iter().map(|p| Item::Read { path: p.clone() }));
    out.extend(c.write.iter().map(|p| Item::Write { path: p.clone() }));
    out.extend(m.secrets.keys().map(|n| Item::Secret { name: n.clone() }));
    if m.run.sandbox == Some(SandboxMode::None) {
        out.push(Item::Unsandboxed);
    }
    let limits = [
        (
            "timeout_ms",
            m.limits.timeout_ms,
            Limits::DEFAULT_TIMEOUT_MS,
        ),
        ("memory_mb", m.limits.memory_mb, Limits::DEFAULT_MEMORY_MB),
        (
            "output_bytes",
            m.limits.output_bytes,
            Limits::DEFAULT_OUTPUT_BYTES,
        ),
    ];
    for (field, value, default) in limits {
        if let Some(v) = value
            && v > default
        {
            out.push(Item::Limit {
                field: field.into(),
                value: v,
                default,
            });
        }
    }
    out
}

/// The manifest with every request taken away: what a call runs with when nothing is
/// approved (limits below the defaults stay: asking for less needs no approval).
pub fn defaults_only(m: &Manifest) -> Manifest {
    let mut d = m.clone();
    d.capabilities = Capabilities::default();
    d.secrets.clear();
    if d.run.sandbox == Some(SandboxMode::None) {
        d.run.sandbox = Some(SandboxMode::Auto);
    }
    let clamp = |v: Option<u64>, max: u64| v.map(|v| v.min(max));
    d.limits.timeout_ms = clamp(d.limits.timeout_ms, Limits::DEFAULT_TIMEOUT_MS);
    d.limits.memory_mb = clamp(d.limits.memory_mb, Limits::DEFAULT_MEMORY_MB);
    d.limits.output_bytes = clamp(d.limits.output_bytes, Limits::DEFAULT_OUTPUT_BYTES);
    d
}

/// What a registration tells the AI about a tool that asks for more than the defaults.
pub fn notice(m: &Manifest) -> Option<String> {
    let items = requested(m);
    (!items.is_empty()).then(|| {
        format!(
            "{} wait(s) for the person's approval on their machine, outside the MCP client (`toolsmith console` or `toolsmith approve {}` in their terminal); examples run with the default grants until then",
            lines(&items).join("; "),
            m.name
        )
    })
}

/// The items as one line each (for messages, the CLI and the elicitation form).
pub fn lines(items: &[Item]) -> Vec<String> {
    items.iter().map(ToString::to_string).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(extra: &str) -> Manifest {
        let text = format!(
            "name = \"t\"\ndescription = \"d\"\nkind = \"script\"\n[run]\nlanguage = \"python\"\nentry = \"main.py\"\n{extra}"
        );
        crate::manifest::parse(std::path::Path::new("tool.toml"), None, &text)
            .expect("parses")
            .manifest
    }

    #[test]
    fn defaults_ask_for_nothing_and_everything_else_is_a_request() {
        assert!(requested(&manifest("[limits]\ntimeout_ms = 500\n")).is_empty());
        let m = manifest(
            "sandbox = \"none\"\n[capabilities]\nnetwork = true\nenv = [\"HOME2\"]\n[limits]\nmemory_mb = 1024\n[secrets]\nAPI_KEY = \"the key\"\n",
        );
        let r = requested(&m);
        assert_eq!(r.len(), 5, "{r:?}");
        assert!(r.contains(&Item::Unsandboxed) && r.contains(&Item::Network { domains: None }));
        let d = defaults_only(&m);
        assert!(requested(&d).is_empty(), "{:?}", requested(&d));
        assert_eq!(d.limits.memory_mb, Some(Limits::DEFAULT_MEMORY_MB));
    }
}
