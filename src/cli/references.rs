//! A person's commands for direct references: `toolsmith allow TOOL pip|npm SPEC` and
//! `toolsmith disallow …` (through `approval::references`, as the console's buttons), and
//! the refusals `toolsmith pending` lists. No meta-tool reaches them.

use super::output::{self, UserError};
use crate::app::App;
use crate::approval::references;
use crate::deps::Ecosystem;
use anyhow::Result;
use serde_json::{Value, json};

/// The package manager of a direct reference.
#[derive(Debug, Clone, Copy, clap::ValueEnum, PartialEq, Eq)]
pub enum Eco {
    Pip,
    Npm,
}

impl From<Eco> for Ecosystem {
    fn from(e: Eco) -> Ecosystem {
        match e {
            Eco::Pip => Ecosystem::Pip,
            Eco::Npm => Ecosystem::Npm,
        }
    }
}

/// `toolsmith allow` / `toolsmith disallow`
#[derive(Debug, clap::Args)]
pub struct AllowArgs {
    /// The tool the dependency is for (it need not be registered yet).
    pub tool: String,
    /// Whose entry it is.
    #[arg(value_enum)]
    pub ecosystem: Eco,
    /// The entry exactly as the tool gives it: pip `NAME @ file:///path` or
    /// `NAME @ https://host/NAME-1.0-py3-none-any.whl`; npm `NAME@file:/path.tgz` or
    /// `NAME@https://host/x.tgz`. Quote it for the shell.
    pub spec: String,
}

/// `toolsmith allow TOOL ECOSYSTEM SPEC`
pub fn allow(app: &App, a: &AllowArgs, as_json: bool) -> Result<i32> {
    let gate = app.gate();
    let allowed = references::allow(&gate, &a.tool, a.ecosystem.into(), &a.spec, "cli")
        .map_err(|e| UserError::wrap(&e))?;
    if as_json {
        output::json(&serde_json::to_value(&allowed)?);
        return Ok(0);
    }
    println!(
        "allowed for {} on this machine: {} {}",
        allowed.tool, allowed.ecosystem, allowed.spec
    );
    match &allowed.digest {
        Some(d) if allowed.kind == "path" => println!(
            "  pinned to what the path holds now ({d}): a change to it needs a new allowance"
        ),
        Some(d) => println!("  pinned to {d}"),
        None => println!(
            "  what its first download gets is pinned then: a different file later is refused"
        ),
    }
    println!(
        "  it is installed contained (copied or fetched by toolsmith, built offline in the sandbox); register the tool again to use it"
    );
    Ok(0)
}

/// `toolsmith disallow TOOL ECOSYSTEM SPEC`
pub fn disallow(app: &App, a: &AllowArgs, as_json: bool) -> Result<i32> {
    let removed = references::disallow(&app.gate(), &a.tool, a.ecosystem.into(), &a.spec, "cli")
        .map_err(|e| UserError::wrap(&e))?;
    if as_json {
        output::json(&json!({"tool": a.tool, "spec": a.spec, "removed": removed}));
        return Ok(0);
    }
    if !removed {
        return Err(UserError::new(
            format!(
                "{} {:?} was not allowed for {}",
                Ecosystem::from(a.ecosystem),
                a.spec,
                a.tool
            ),
            "`toolsmith doctor` lists the allowed direct references (give the entry exactly as allowed)",
        ));
    }
    println!(
        "{} {} is no longer allowed for {}: its next install is refused",
        Ecosystem::from(a.ecosystem),
        a.spec,
        a.tool
    );
    Ok(0)
}

/// The refused direct references waiting for the person: JSON entries for `pending --json`.
pub fn pending_json(app: &App) -> Vec<Value> {
    let Ok((_, requests)) = references::listing(&app.gate()) else {
        return Vec::new();
    };
    requests
        .iter()
        .map(|r| {
            json!({
                "name": r.tool,
                "reference": {"ecosystem": r.ecosystem, "spec": r.spec, "kind": r.kind, "reason": r.reason, "at": crate::personal::rfc3339(r.at)},
                "allow": r.command(),
            })
        })
        .collect()
}

/// The same, as text; whether anything was printed.
pub fn print_pending(app: &App) -> bool {
    let requests = match references::listing(&app.gate()) {
        Ok((_, r)) => r,
        Err(e) => {
            eprintln!("cannot read the allowances of direct references: {e}");
            return false;
        }
    };
    for r in &requests {
        println!(
            "{} was refused the {} dependency {} ({}):\n  {}\n  allow: {}\n",
            r.tool,
            r.ecosystem,
            r.spec,
            crate::personal::rfc3339(r.at),
            r.reason,
            r.command()
        );
    }
    !requests.is_empty()
}
