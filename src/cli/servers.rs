//! `toolsmith add-mcp`: another MCP server as an entry of the toolbox (its package pinned,
//! its tools listed), and `toolsmith import` of an editor's MCP configuration file.

use super::output::{self, UserError};
use super::scripts::StderrHost;
use crate::manifest::{Capabilities, Network, SecretsSpec};
use crate::servers::{self, ServerSpec};
use crate::toolbox::Actor;
use anyhow::Result;
use serde_json::json;
use std::path::Path;

/// `toolsmith add-mcp NAME (--npm PKG@VER | --pip REQ | --url URL) [-- COMMAND ARGS...]`
#[derive(Debug, clap::Args)]
pub struct AddMcpArgs {
    /// The entry's name: its tools are NAME__TOOL.
    pub name: String,
    /// The npm package the server comes from, as name@version (pinned in package-lock.json).
    #[arg(long, value_name = "PKG@VERSION", conflicts_with_all = ["pip", "url"])]
    pub npm: Option<String>,
    /// The Python package the server comes from, a pip requirement such as
    /// mcp-server-time==2026.10.19 (pinned in requirements.lock).
    #[arg(long, value_name = "REQUIREMENT", conflicts_with = "url")]
    pub pip: Option<String>,
    /// A remote server's streamable HTTP URL (reaching it is network to its host, approved by
    /// you).
    #[arg(long)]
    pub url: Option<String>,
    /// An environment value the server starts with, NAME=VALUE (repeatable; never a secret).
    #[arg(long, value_name = "NAME=VALUE")]
    pub env: Vec<String>,
    /// An HTTP header, NAME=VALUE; `${SECRET}` stands for a declared secret (repeatable).
    #[arg(long, value_name = "NAME=VALUE")]
    pub header: Vec<String>,
    /// A secret the server needs as an environment variable (repeatable); set its value with
    /// `toolsmith secret set NAME`.
    #[arg(long, value_name = "NAME")]
    pub secret: Vec<String>,
    /// Network access to this domain (repeatable; `*.example.com` for its subdomains).
    #[arg(long, value_name = "DOMAIN")]
    pub allow_domain: Vec<String>,
    /// A path the server may read (repeatable; inside TOOLSMITH_ROOTS).
    #[arg(long, value_name = "PATH")]
    pub read: Vec<String>,
    /// A path the server may write (repeatable; inside TOOLSMITH_ROOTS).
    #[arg(long, value_name = "PATH")]
    pub write: Vec<String>,
    /// What the server is for.
    #[arg(long, short)]
    pub description: Option<String>,
    /// The command and its arguments (default: the package's own command), after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

fn pairs(flag: &str, items: &[String]) -> Result<std::collections::BTreeMap<String, String>> {
    items
        .iter()
        .map(|i| {
            i.split_once('=')
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .ok_or_else(|| {
                    UserError::new(
                        format!("{flag} {i:?} is not NAME=VALUE"),
                        format!("e.g. {flag} LOG_LEVEL=info"),
                    )
                })
        })
        .collect()
}

fn spec_of(a: &AddMcpArgs) -> Result<ServerSpec> {
    let package = match (&a.npm, &a.pip) {
        (Some(n), _) => Some(format!("npm:{n}")),
        (None, Some(p)) => Some(format!("pip:{p}")),
        (None, None) => None,
    };
    let mut caps = Capabilities::default();
    if !a.allow_domain.is_empty() {
        caps.network = Network::Domains(a.allow_domain.clone());
    }
    caps.read = a.read.clone();
    caps.write = a.write.clone();
    Ok(ServerSpec {
        name: a.name.clone(),
        package,
        command: a.command.first().cloned(),
        args: a.command.iter().skip(1).cloned().collect(),
        url: a.url.clone(),
        env: pairs("--env", &a.env)?,
        headers: pairs("--header", &a.header)?,
        secrets: (!a.secret.is_empty()).then(|| SecretsSpec::Names(a.secret.clone())),
        capabilities: Some(caps),
        description: a.description.clone(),
    })
}

fn run(
    app: &crate::app::App,
    specs: &[ServerSpec],
    source: Option<&str>,
) -> Result<servers::Additions> {
    let rt = super::runtime(Some(2))?;
    let progress = |_: f64, _: f64, m: String| eprintln!("{m}");
    let actor = Actor::from(super::CLI_ACTOR);
    let out = rt.block_on(async {
        let out = servers::add(app, specs, &actor, &StderrHost, &progress, source).await;
        app.stop_all();
        out
    });
    out.map_err(|e| UserError::wrap(&e))
}

fn report(o: &servers::Additions, as_json: bool, notes: &[String]) {
    if as_json {
        output::json(&json!({"entries": o.entries, "commit": o.commit, "notes": notes}));
        return;
    }
    for n in notes {
        eprintln!("note: {n}");
    }
    for e in &o.entries {
        for w in &e.warnings {
            eprintln!("warning: {}: {w}", e.name);
        }
        let verb = if e.action == "add" {
            "added"
        } else {
            "updated"
        };
        if e.tools.is_empty() {
            println!(
                "{verb} MCP server {} (its tools are listed once it runs)",
                e.name
            );
        } else {
            println!("{verb} MCP server {}: {}", e.name, e.tools.join(", "));
        }
    }
    match &o.commit {
        Some(c) => println!("commit {}", &c[..c.len().min(12)]),
        None => println!("unchanged"),
    }
}

/// `toolsmith add-mcp ...`
pub fn add_mcp(app: crate::app::App, a: &AddMcpArgs, as_json: bool) -> Result<i32> {
    let spec = spec_of(a)?;
    let o = run(&app, &[spec], None)?;
    report(&o, as_json, &[]);
    Ok(0)
}

/// `toolsmith import FILE` of an editor's MCP configuration: every server in it, one commit.
pub fn import_config(
    app: crate::app::App,
    file: &Path,
    only: Option<&str>,
    as_json: bool,
) -> Result<i32> {
    let found = servers::read_config(file).map_err(|e| UserError::wrap(&e))?;
    let found: Vec<_> = found
        .into_iter()
        .filter(|f| only.is_none_or(|o| f.key == o || f.spec.name == o))
        .collect();
    if found.is_empty() {
        return Err(UserError::new(
            format!(
                "{} holds no server{}",
                file.display(),
                only.map(|o| format!(" named {o:?}")).unwrap_or_default()
            ),
            "the file must be an MCP configuration (`mcpServers` or `servers`)",
        ));
    }
    let notes: Vec<String> = found.iter().flat_map(|f| f.notes.clone()).collect();
    let specs: Vec<ServerSpec> = found.into_iter().map(|f| f.spec).collect();
    let source = file
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_else(|| file.display().to_string());
    let o = run(&app, &specs, Some(&source))?;
    report(&o, as_json, &notes);
    Ok(0)
}
