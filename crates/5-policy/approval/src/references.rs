//! A person's allowances of direct references (`deps::Allowances`: a local path or an
//! archive URL as one tool's pip or npm dependency), as `toolsmith allow`/`disallow` and the
//! console make them — each recorded in the personal directory and the audit log — and as
//! `toolsmith pending`, the console and `get_tool` show them. Nothing here is reachable from a
//! meta-tool.

use super::Gate;
use crate::audit;
use crate::deps::{self, AllowError, Allowance, Allowances, Ecosystem, Request};
use serde_json::{Value, json};

/// The allowances of the gate's toolbox on this machine.
pub fn store(gate: &Gate<'_>) -> Allowances {
    Allowances::new(gate.personal, gate.toolbox.root())
}

/// The line an audit entry and a listing show for an allowance.
pub fn line(a: &Allowance) -> String {
    format!(
        "{} {} ({}{})",
        a.ecosystem,
        a.spec,
        a.kind,
        a.digest
            .as_deref()
            .map(|d| format!(", {d}"))
            .unwrap_or_else(|| ", pinned at its first fetch".into())
    )
}

/// A person allows `spec` (an `ecosystem` entry) for `tool` on this machine (`via`: `cli`,
/// `console`); a local path is read and pinned now.
pub fn allow(
    gate: &Gate<'_>,
    tool: &str,
    ecosystem: Ecosystem,
    spec: &str,
    via: &str,
) -> Result<Allowance, AllowError> {
    crate::names::validate(tool).map_err(|e| AllowError::Tool(e.to_string()))?;
    let r = deps::parse_reference(ecosystem, spec)?;
    let a = store(gate).allow(tool, &r, via)?;
    audit::Log::new(gate.personal).append(&audit::Entry::decision(
        gate.toolbox.root(),
        tool,
        "reference allowed",
        via,
        vec![line(&a)],
    ));
    Ok(a)
}

/// A person takes an allowance back; whether there was one.
pub fn disallow(
    gate: &Gate<'_>,
    tool: &str,
    ecosystem: Ecosystem,
    spec: &str,
    via: &str,
) -> Result<bool, AllowError> {
    let removed = store(gate).remove(tool, ecosystem, spec.trim())?;
    if removed {
        audit::Log::new(gate.personal).append(&audit::Entry::decision(
            gate.toolbox.root(),
            tool,
            "reference disallowed",
            via,
            vec![format!("{ecosystem} {}", spec.trim())],
        ));
    }
    Ok(removed)
}

/// Every allowance and every refusal waiting for the person.
pub fn listing(gate: &Gate<'_>) -> std::io::Result<(Vec<Allowance>, Vec<Request>)> {
    store(gate).list()
}

/// What `get_tool` shows: the direct references allowed for the tool here, and those refused
/// for it that wait for the person.
pub fn describe(gate: &Gate<'_>, tool: &str) -> Value {
    match listing(gate) {
        Ok((allowed, requests)) => json!({
            "allowed": allowed.iter().filter(|a| a.tool == tool).collect::<Vec<_>>(),
            "waiting": requests.iter().filter(|r| r.tool == tool).map(|r| json!({
                "ecosystem": r.ecosystem, "spec": r.spec, "reason": r.reason,
                "how": format!("only the person allows it, outside the MCP client: `{}` or `toolsmith console`", r.command()),
            })).collect::<Vec<_>>(),
        }),
        Err(e) => json!({"error": e.to_string()}),
    }
}
