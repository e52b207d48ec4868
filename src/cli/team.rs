//! CLI commands for a team toolbox: `sync` (follow a git remote), `review` and `trust` (held
//! tools that arrived from elsewhere).

use super::CLI_ACTOR;
use super::output::{self, UserError};
use crate::error::Hint;
use crate::sync::{self, Side, SyncError, SyncRequest};
use crate::toolbox::Toolbox;
use crate::trust::{self, TrustError};
use anyhow::Result;
use std::time::Duration;

impl From<SyncError> for UserError {
    fn from(e: SyncError) -> Self {
        UserError::of(&e)
    }
}

/// `toolsmith sync [REMOTE] [--take NAME=ours|theirs]... [--watch INTERVAL]`
#[derive(Debug, clap::Args)]
pub struct SyncArgs {
    /// A configured remote, a URL or a path (default: the branch's upstream, else origin).
    pub remote: Option<String>,
    /// Settle a conflicting tool (or top-level file): NAME=ours or NAME=theirs. Repeatable.
    #[arg(long, value_name = "NAME=SIDE", value_parser = sync::parse_take)]
    pub take: Vec<(String, Side)>,
    /// Keep following the remote: sync again every INTERVAL (e.g. 30s, 5m, 1h).
    #[arg(long, value_name = "INTERVAL", value_parser = parse_interval)]
    pub watch: Option<Duration>,
}

/// `30`, `30s`, `5m`, `1h`.
fn parse_interval(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let (num, unit) = s
        .find(|c: char| !c.is_ascii_digit())
        .map(|i| s.split_at(i))
        .unwrap_or((s, "s"));
    let n: u64 = num
        .parse()
        .map_err(|_| format!("{s:?} is not an interval like 30s, 5m or 1h"))?;
    let secs = match unit {
        "s" | "" => n,
        "m" => n * 60,
        "h" => n * 3600,
        _ => return Err(format!("{s:?}: the unit must be s, m or h")),
    };
    if secs == 0 {
        return Err("the interval must be at least 1s".into());
    }
    Ok(Duration::from_secs(secs))
}

pub fn sync(tb: &Toolbox, a: &SyncArgs, json: bool) -> Result<i32> {
    let req = SyncRequest {
        remote: a.remote.clone(),
        take: a.take.clone(),
    };
    let actor = crate::toolbox::Actor::from(CLI_ACTOR);
    let Some(interval) = a.watch else {
        let out = sync::sync(tb, &req, &actor).map_err(UserError::from)?;
        print_outcome(&out, json)?;
        return Ok(0);
    };
    loop {
        match sync::sync(tb, &req, &actor) {
            Ok(out) => print_outcome(&out, json)?,
            // Keep following: a conflict or an unreachable remote is reported, and the next
            // round tries again.
            Err(e) => {
                eprintln!("error: {e}");
                if let Some(h) = e.hint() {
                    eprintln!("hint: {h}");
                }
            }
        }
        std::thread::sleep(interval);
    }
}

fn print_outcome(o: &sync::SyncOutcome, json: bool) -> Result<()> {
    if json {
        output::json(&serde_json::to_value(o)?);
        return Ok(());
    }
    let short = &o.commit[..o.commit.len().min(10)];
    println!("{} with {} {}: {short}", o.action, o.remote, o.branch);
    for (name, side) in &o.taken {
        println!(
            "  took {name} from {}",
            if *side == Side::Ours {
                "ours"
            } else {
                "theirs"
            }
        );
    }
    for t in &o.changed_tools {
        println!("  changed tool {t}");
    }
    for f in &o.changed_files {
        println!("  changed file {f}");
    }
    for h in &o.held {
        println!(
            "  held {h}: its new version is not signed by an allowed key; `toolsmith review {h}`, then `toolsmith trust {h}`"
        );
    }
    Ok(())
}

/// `toolsmith review NAME`
#[derive(Debug, clap::Args)]
pub struct ReviewArgs {
    pub name: String,
}

/// `toolsmith trust NAME` or `toolsmith trust --signers`
#[derive(Debug, clap::Args)]
pub struct TrustArgs {
    /// The tool whose current version to trust on this machine.
    #[arg(required_unless_present = "signers")]
    pub name: Option<String>,
    /// Accept the committed allowed_signers file as it is now.
    #[arg(long, conflicts_with = "name")]
    pub signers: bool,
}

impl From<TrustError> for UserError {
    fn from(e: TrustError) -> Self {
        UserError::of(&e)
    }
}

pub fn review(tb: &Toolbox, a: &ReviewArgs, json: bool) -> Result<i32> {
    let r = trust::review(tb, &a.name).map_err(UserError::from)?;
    if json {
        output::json(&serde_json::to_value(&r)?);
        return Ok(0);
    }
    match &r.held {
        Some(h) => println!("{h}"),
        None => println!("tool {} is trusted on this machine", r.name),
    }
    match &r.since {
        Some(c) => println!(
            "changes since the last version trusted here ({}):",
            &c[..c.len().min(10)]
        ),
        None => println!(
            "no version of {} was ever trusted here; the whole tool:",
            r.name
        ),
    }
    for c in &r.commits {
        println!(
            "  {} {} ({})",
            &c.commit[..c.commit.len().min(10)],
            c.summary,
            c.author
        );
    }
    println!();
    print!("{}", r.diff);
    if r.held.is_some() {
        eprintln!("trust it with `toolsmith trust {}`", r.name);
    }
    Ok(0)
}

pub fn trust(tb: &Toolbox, a: &TrustArgs, json: bool) -> Result<i32> {
    if a.signers {
        let blob = trust::trust_signers(tb).map_err(UserError::from)?;
        if json {
            output::json(&serde_json::json!({"signers": blob}));
        } else {
            match blob {
                Some(b) => println!("accepted allowed_signers {}", &b[..b.len().min(10)]),
                None => println!("this toolbox has no allowed_signers file"),
            }
        }
        return Ok(0);
    }
    let name = a.name.clone().unwrap_or_default();
    let tree = trust::trust(tb, &name).map_err(UserError::from)?;
    if json {
        output::json(&serde_json::json!({"name": name, "tree": tree}));
    } else {
        println!(
            "trusted {name} (version {}) on this machine",
            &tree[..tree.len().min(10)]
        );
    }
    Ok(0)
}
