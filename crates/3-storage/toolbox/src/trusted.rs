//! This machine's record of tool versions it trusts: the versions it made itself (every write
//! through [`Toolbox::apply`] of content made here), the versions a person trusted
//! (`toolsmith trust NAME`), the toolbox as it was when toolsmith first opened it here (the
//! baseline), and the `allowed_signers` versions it accepts. A version is a git tree id (a
//! tool) or blob id (`allowed_signers`), so a record is bound to exact content.
//!
//! The record is `.git/toolsmith-trusted`: outside the tree (never committed, never pulled),
//! one line per record, appended (`tool NAME TREE`, `signers BLOB`). `crates/5-policy/trust/` decides from
//! it which tools are held; this module only keeps it.
//!
//! Which writes record: a commit's provenance is read from its message, the one place every
//! writer already describes what it did. A `Source:` trailer (import, update from an origin,
//! any content fetched from elsewhere) means received; the verbs `rollback`, `restore` and
//! `undo-session` mean a copy of an older version (trusted only if that version was); every
//! other write is content made here and is recorded.

use super::{Toolbox, ToolboxError, io_err};
use crate::git;
use crate::index::TOOLS_DIR;
use std::collections::HashSet;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Mutex;

/// The record file, in the git directory.
pub const TRUSTED_FILE: &str = "toolsmith-trusted";
/// The file naming the keys whose signed changes are trusted (committed, at the root).
pub const ALLOWED_SIGNERS: &str = "allowed_signers";

/// Where the content of a write came from, as its commit message says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provenance {
    /// Made on this machine (by its person or its AI): recorded as trusted.
    Local,
    /// Brought from elsewhere (a `Source:` trailer): not recorded.
    Received,
    /// A copy of an older version: not recorded (it is as trusted as that version was).
    Restored,
}

impl Provenance {
    /// Read a commit message.
    pub fn of_message(message: &str) -> Provenance {
        let first = message.split_whitespace().next().unwrap_or("");
        if matches!(first, "rollback" | "restore" | "undo-session") {
            return Provenance::Restored;
        }
        let received = message.lines().any(|l| {
            l.strip_prefix("Source:")
                .or_else(|| l.strip_prefix("Source-Commit:"))
                .is_some()
        });
        if received {
            Provenance::Received
        } else {
            Provenance::Local
        }
    }
}

/// The parsed record, cached by the file's size.
#[derive(Debug, Default, Clone)]
pub struct Trusted {
    tools: HashSet<(String, String)>,
    signers: HashSet<String>,
}

impl Trusted {
    /// Whether the tree `tree` of tool `name` is recorded.
    pub fn has_tool(&self, name: &str, tree: &str) -> bool {
        self.tools.contains(&(name.to_string(), tree.to_string()))
    }

    /// Whether the `allowed_signers` blob `blob` is recorded.
    pub fn has_signers(&self, blob: &str) -> bool {
        self.signers.contains(blob)
    }
}

/// The record as last read, with the file's size then (this toolbox's `state`).
#[derive(Default)]
struct Cache(Mutex<Option<(u64, Trusted)>>);

impl Toolbox {
    fn trusted_path(&self) -> PathBuf {
        self.root.join(".git").join(TRUSTED_FILE)
    }

    /// The record (empty when there is none yet).
    pub fn trusted(&self) -> Trusted {
        let path = self.trusted_path();
        let len = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        let cache = self.state(|_| Cache::default());
        if let Ok(c) = cache.0.lock()
            && let Some((l, t)) = c.as_ref()
            && *l == len
        {
            return t.clone();
        }
        let mut t = Trusted::default();
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        for line in text.lines() {
            let parts: Vec<&str> = line.split_whitespace().collect();
            match parts.as_slice() {
                ["tool", name, tree] => {
                    t.tools.insert((name.to_string(), tree.to_string()));
                }
                ["signers", blob] => {
                    t.signers.insert(blob.to_string());
                }
                _ => {}
            }
        }
        if let Ok(mut c) = cache.0.lock() {
            *c = Some((len, t.clone()));
        }
        t
    }

    fn append_trusted(&self, lines: &[String]) -> Result<(), ToolboxError> {
        if lines.is_empty() {
            return Ok(());
        }
        let path = self.trusted_path();
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(io_err("open", &path))?;
        // One write: appends of whole lines do not interleave.
        f.write_all(lines.concat().as_bytes())
            .and_then(|()| f.sync_all())
            .map_err(io_err("write", &path))
    }

    /// Record the versions of `tools` at HEAD as trusted on this machine (a person's
    /// `toolsmith trust`, or a write made here). Returns the recorded (name, tree) pairs.
    pub fn record_trusted(&self, tools: &[String]) -> Result<Vec<(String, String)>, ToolboxError> {
        let mut out = Vec::new();
        for name in tools {
            crate::names::validate(name)?;
            if let Some(tree) =
                git::entry_id_at(&self.root, "HEAD", &format!("{TOOLS_DIR}/{name}"))?
            {
                out.push((name.clone(), tree));
            }
        }
        let have = self.trusted();
        let lines: Vec<String> = out
            .iter()
            .filter(|(n, t)| !have.has_tool(n, t))
            .map(|(n, t)| format!("tool {n} {t}\n"))
            .collect();
        self.append_trusted(&lines)?;
        Ok(out)
    }

    /// Record an `allowed_signers` blob as accepted on this machine.
    pub fn record_signers(&self, blob: &str) -> Result<(), ToolboxError> {
        if self.trusted().has_signers(blob) {
            return Ok(());
        }
        self.append_trusted(&[format!("signers {blob}\n")])
    }

    /// The first time toolsmith opens a toolbox on this machine, the toolbox as it is (every
    /// tool and `allowed_signers` at HEAD) is the baseline: what this machine starts from.
    /// Later changes that arrive from elsewhere are judged against it.
    pub(super) fn ensure_trust_baseline(&self) -> Result<(), ToolboxError> {
        if self.trusted_path().exists() {
            return Ok(());
        }
        let mut lines = vec!["# toolsmith: tool versions trusted on this machine\n".to_string()];
        if let Ok(Some(tree)) = git::entry_id_at(&self.root, "HEAD", TOOLS_DIR) {
            for (name, id) in git::tree_entries(&self.root, &tree)? {
                if crate::names::validate(&name).is_ok() {
                    lines.push(format!("tool {name} {id}\n"));
                }
            }
        }
        if let Ok(Some(blob)) = git::entry_id_at(&self.root, "HEAD", ALLOWED_SIGNERS) {
            lines.push(format!("signers {blob}\n"));
        }
        self.append_trusted(&lines)
    }
}
