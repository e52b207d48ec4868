//! CLI commands for sharing: `import`, `update`, `export`.

use super::CLI_ACTOR;
use super::output::{self, UserError};
use crate::config::Config;
use crate::share::{self, ImportRequest, ShareError};
use crate::toolbox::Toolbox;
use anyhow::Result;
use std::path::PathBuf;

impl From<ShareError> for UserError {
    fn from(e: ShareError) -> Self {
        UserError::of(&e)
    }
}

/// `toolsmith import SOURCE [--ref R] [--path P] [--name N]`
#[derive(Debug, clap::Args)]
pub struct ImportArgs {
    /// A git URL or path, a Gist URL, `gist:<id>`, a Gist id, or an OCI artifact
    /// `oci://REGISTRY/REPO:TAG` (or `oci://REGISTRY/REPO@sha256:DIGEST`).
    pub source: String,
    /// Branch, tag or commit (default: the remote's default branch).
    #[arg(long = "ref")]
    pub reference: Option<String>,
    /// The tool's directory in the repository (or a toolbox: import all of its tools).
    #[arg(long)]
    pub path: Option<String>,
    /// Import under this name.
    #[arg(long)]
    pub name: Option<String>,
}

/// `toolsmith update NAME [--apply [--commit C]]`
#[derive(Debug, clap::Args)]
pub struct UpdateArgs {
    pub name: String,
    /// Apply the update (default: only show it).
    #[arg(long)]
    pub apply: bool,
    /// With --apply: the reviewed origin commit (or OCI digest); refused if the origin moved on.
    #[arg(long)]
    pub commit: Option<String>,
}

/// `toolsmith export [NAMES...] --remote URL [--branch B]`, `export NAME --gist FILE`,
/// `export NAME --oci REGISTRY/REPO:TAG` or `export --skills DIR`
#[derive(Debug, clap::Args)]
pub struct ExportArgs {
    /// Tools to export (default: the whole toolbox).
    pub names: Vec<String>,
    /// Where to push: a bare repository path or a URL.
    #[arg(long)]
    pub remote: Option<String>,
    /// The remote branch.
    #[arg(long, default_value = "main")]
    pub branch: String,
    /// Write the one named tool as a Gist-shaped JSON file (`-` for stdout) instead of pushing.
    #[arg(long, value_name = "FILE")]
    pub gist: Option<PathBuf>,
    /// Publish the one named tool as an OCI artifact at REGISTRY/REPO:TAG (credentials from
    /// the docker config file).
    #[arg(long, value_name = "REF", conflicts_with_all = ["gist", "remote"])]
    pub oci: Option<String>,
    /// Write the toolbox as an Agent Skills directory (a `<skill>/SKILL.md` with its scripts per
    /// tool) for agents that read skills from disk.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["gist", "remote", "oci"])]
    pub skills: Option<PathBuf>,
}

pub fn import(tb: &Toolbox, a: &ImportArgs, config: &Config, json: bool) -> Result<i32> {
    let req = ImportRequest {
        source: a.source.clone(),
        reference: a.reference.clone(),
        path: a.path.clone(),
        name: a.name.clone(),
        gist_base: config.gist_base.clone(),
    };
    let o = share::import_tool(tb, &req, CLI_ACTOR).map_err(UserError::from)?;
    if json {
        output::json(&serde_json::to_value(&o)?);
        return Ok(0);
    }
    for t in &o.tools {
        // A git commit is shown short; an OCI digest in full (it is what gets pinned).
        let at = if o.source_commit.starts_with("sha256:") {
            o.source_commit.as_str()
        } else {
            &o.source_commit[..10.min(o.source_commit.len())]
        };
        println!("imported {} ({}) from {} at {at}", t.name, t.kind, o.url);
        if let Some(from) = t.converted_from {
            println!(
                "  converted from {from}; the manifest written:\n{}",
                t.inferred_manifest.as_deref().unwrap_or("")
            );
        }
        for n in t.notes.iter().chain(&t.warnings) {
            eprintln!("  note: {n}");
        }
    }
    Ok(0)
}

pub fn update(tb: &Toolbox, a: &UpdateArgs, config: &Config, json: bool) -> Result<i32> {
    let o = share::update_tool(
        tb,
        &a.name,
        a.apply,
        a.commit.as_deref(),
        CLI_ACTOR,
        config.gist_base.as_deref(),
    )
    .map_err(UserError::from)?;
    if json {
        output::json(&serde_json::to_value(&o)?);
        return Ok(0);
    }
    let short: String = o.to_commit.chars().take(10).collect();
    let all = std::iter::once(&o).chain(&o.skill_tools);
    if all.clone().all(|t| t.up_to_date) && !o.applied {
        let names: Vec<&str> = all.map(|t| t.name.as_str()).collect();
        println!(
            "{} {} up to date with {} ({short})",
            names.join(", "),
            if names.len() > 1 { "are" } else { "is" },
            o.url,
        );
    } else {
        for t in all.clone() {
            if !o.skill_tools.is_empty() {
                println!("== {}", t.name);
            }
            print!("{}", t.diff);
            for c in &t.changed_fields {
                println!("CHANGED {}: {} -> {}", c.field, c.old, c.new);
            }
            if t.local_changes {
                eprintln!(
                    "warning: {} was changed here since it was imported; updating overwrites that",
                    t.name
                );
            }
        }
    }
    for s in &o.new_scripts {
        eprintln!(
            "note: the skill has a new script {s}, which no tool here runs; import the skill again under another name to get it"
        );
    }
    for t in &o.left_alone {
        eprintln!("note: left as it is: {t}");
    }
    let names: Vec<&str> = std::iter::once(&o)
        .chain(&o.skill_tools)
        .map(|t| t.name.as_str())
        .collect();
    if o.applied {
        println!("updated {} to {short}", names.join(", "));
    } else if o.hint.is_some() {
        println!(
            "not applied. To apply exactly this{}: toolsmith update {} --apply --commit {}",
            if names.len() > 1 {
                format!(" (to {})", names.join(", "))
            } else {
                String::new()
            },
            o.name,
            o.to_commit
        );
    }
    Ok(0)
}

pub fn export(tb: &Toolbox, a: &ExportArgs, json: bool) -> Result<i32> {
    if let Some(dir) = &a.skills {
        if !a.names.is_empty() {
            return Err(UserError::new(
                "--skills exports the whole toolbox",
                "drop the tool names: toolsmith export --skills DIR",
            ));
        }
        let index = std::sync::Arc::new(crate::index::Index::build(tb.root()));
        let view = crate::trust::View::new(tb, index);
        let o = share::skills::export(&view, dir).map_err(UserError::from)?;
        if json {
            output::json(&serde_json::to_value(&o)?);
        } else {
            for (skill, tool) in &o.skills {
                println!("{skill}/SKILL.md  (from {tool})");
            }
            for (tool, why) in &o.skipped {
                eprintln!("note: {tool} left out: {why}");
            }
            for (tool, review) in &o.held {
                eprintln!(
                    "note: {tool} left out: it is held (its version came from elsewhere, unsigned by an allowed key); review it with `{review}`, then trust it with `{}`",
                    review.replacen("review", "trust", 1)
                );
            }
            for dir in &o.removed {
                eprintln!("note: removed {dir}/ of the earlier export (its tool is gone or held)");
            }
            println!("wrote {} skill(s) to {}", o.skills.len(), o.dir);
        }
        return Ok(0);
    }
    if let Some(target) = &a.oci {
        let [name] = a.names.as_slice() else {
            return Err(UserError::new(
                "--oci publishes exactly one tool",
                "name one tool: toolsmith export NAME --oci REGISTRY/REPO:TAG",
            ));
        };
        let o = share::export_oci(tb, name, target).map_err(UserError::from)?;
        if json {
            output::json(&serde_json::to_value(&o)?);
        } else {
            println!("published {} ({}) to {}", o.tool, o.kind, o.reference);
            println!("digest {}", o.digest);
            println!("import exactly this with: toolsmith import {}", o.pinned);
        }
        return Ok(0);
    }
    if let Some(file) = &a.gist {
        let [name] = a.names.as_slice() else {
            return Err(UserError::new(
                "--gist exports exactly one tool",
                "name one tool: toolsmith export NAME --gist FILE",
            ));
        };
        let v = share::gist_json(tb, name).map_err(UserError::from)?;
        let text = serde_json::to_string_pretty(&v)?;
        if file.as_os_str() == "-" {
            println!("{text}");
        } else {
            std::fs::write(file, text + "\n")?;
            eprintln!("wrote {}", file.display());
        }
        return Ok(0);
    }
    let Some(remote) = &a.remote else {
        return Err(UserError::new(
            "export needs --remote (or --gist FILE)",
            "e.g. toolsmith export --remote ../shared.git",
        ));
    };
    let o = share::export_tools(tb, &a.names, remote, &a.branch).map_err(UserError::from)?;
    if json {
        output::json(&serde_json::to_value(&o)?);
    } else {
        println!(
            "pushed {} tool(s) to {} {} ({})",
            o.tools.len(),
            o.remote,
            o.branch,
            &o.commit[..10.min(o.commit.len())]
        );
    }
    Ok(0)
}
