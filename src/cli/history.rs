//! CLI commands over a tool's history: `history`, `diff`, `rollback`, `restore`,
//! `undo-session`.

use super::CLI_ACTOR;
use super::output::{self, UserError};
use crate::history::{self, HistoryError};
use crate::toolbox::Toolbox;
use anyhow::Result;

impl From<HistoryError> for UserError {
    fn from(e: HistoryError) -> Self {
        UserError::of(&e)
    }
}

/// `toolsmith history NAME`
#[derive(Debug, clap::Args)]
pub struct HistoryArgs {
    pub name: String,
    #[arg(long, short = 'n', default_value_t = 50)]
    pub limit: usize,
}

/// `toolsmith diff NAME FROM [TO]`
#[derive(Debug, clap::Args)]
pub struct DiffArgs {
    pub name: String,
    /// The older revision.
    pub from: String,
    /// The newer revision.
    #[arg(default_value = "HEAD")]
    pub to: String,
}

/// `toolsmith rollback NAME REVISION`
#[derive(Debug, clap::Args)]
pub struct RollbackArgs {
    pub name: String,
    /// The version to restore (a commit from `toolsmith history NAME`).
    pub revision: String,
}

/// `toolsmith restore NAME [REVISION]`
#[derive(Debug, clap::Args)]
pub struct RestoreArgs {
    pub name: String,
    /// Restore this version instead of the last one.
    pub revision: Option<String>,
}

/// `toolsmith undo-session SESSION`
#[derive(Debug, clap::Args)]
pub struct UndoArgs {
    /// The session id (the `Session:` trailer of its commits, see `git log`).
    pub session: String,
}

fn short(id: &str) -> &str {
    &id[..id.len().min(10)]
}

pub fn history(tb: &Toolbox, a: &HistoryArgs, json: bool) -> Result<i32> {
    let v = history::tool_history(tb, &a.name, a.limit).map_err(UserError::from)?;
    if v.is_empty() {
        return Err(UserError::new(
            format!("tool {:?} has no history in this toolbox", a.name),
            "`toolsmith list` shows the tools",
        ));
    }
    if json {
        output::json(&serde_json::to_value(&v)?);
        return Ok(0);
    }
    let rows: Vec<Vec<String>> = v
        .iter()
        .map(|c| {
            vec![
                short(&c.commit).to_string(),
                c.date.clone(),
                c.actor.clone().unwrap_or_else(|| c.author.clone()),
                c.message.clone(),
            ]
        })
        .collect();
    print!(
        "{}",
        output::table(&["COMMIT", "DATE", "ACTOR", "MESSAGE"], &rows)
    );
    Ok(0)
}

pub fn diff(tb: &Toolbox, a: &DiffArgs, json: bool) -> Result<i32> {
    let d = history::diff_tool(tb, &a.name, &a.from, &a.to)
        .map_err(|e| UserError::from(HistoryError::from(e)))?;
    if json {
        output::json(&serde_json::to_value(&d)?);
    } else {
        print!("{}", d.unified);
    }
    Ok(0)
}

fn print_rollback(o: &history::RollbackOutcome, verb: &str, json: bool) -> Result<i32> {
    if json {
        output::json(&serde_json::to_value(o)?);
        return Ok(0);
    }
    match &o.commit {
        Some(c) => println!(
            "{verb} {} to its version of {} (commit {})",
            o.name,
            short(&o.restored_from),
            short(c)
        ),
        None => println!(
            "{} already is its version of {}",
            o.name,
            short(&o.restored_from)
        ),
    }
    if let Some(a) = &o.artifact {
        println!(
            "artifact {}: {} ({})",
            a.path,
            a.sha256,
            if a.verified {
                "verified"
            } else {
                "NOT verified"
            }
        );
    }
    println!("environment: {}", o.environment);
    for w in &o.warnings {
        eprintln!("warning: {w}");
    }
    Ok(0)
}

pub fn rollback(tb: &Toolbox, a: &RollbackArgs, json: bool) -> Result<i32> {
    let o = history::rollback_tool(tb, &a.name, &a.revision, CLI_ACTOR).map_err(UserError::from)?;
    print_rollback(&o, "rolled back", json)
}

pub fn restore(tb: &Toolbox, a: &RestoreArgs, json: bool) -> Result<i32> {
    let o = history::restore_tool(tb, &a.name, a.revision.as_deref(), CLI_ACTOR)
        .map_err(UserError::from)?;
    print_rollback(&o, "restored", json)
}

pub fn undo_session(tb: &Toolbox, a: &UndoArgs, json: bool) -> Result<i32> {
    let o = history::undo_session(tb, &a.session, CLI_ACTOR).map_err(UserError::from)?;
    if json {
        output::json(&serde_json::to_value(&o)?);
        return Ok(0);
    }
    println!(
        "session {}: {} commit(s) reverted{}",
        o.session,
        o.reverted.len(),
        o.commit
            .as_deref()
            .map(|c| format!(" in commit {}", short(c)))
            .unwrap_or_else(|| " (nothing left to change)".into())
    );
    for t in &o.tools {
        println!("  {:<24} {}", t.name, t.action);
    }
    Ok(0)
}
