//! The approvals of one toolbox on this machine: a JSON file in the personal directory
//! (`approvals/<hash of the toolbox path>.json`, mode 0600), never in the toolbox itself. Each
//! tool has at most one decision, bound to the exact content it was made for; the commit of
//! the last approved version is kept so a changed tool can show what changed since.

use crate::personal;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// A person's decision about one version of a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    /// The version may run with what it asks.
    Approved,
    /// It may not.
    Denied,
}

/// What is stored for one tool.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Record {
    /// Approved or denied.
    pub decision: Decision,
    /// The content hash the decision is bound to (see `approval::content_hash`).
    pub content: String,
    /// What the tool asked for, as the person saw it.
    pub requested: Vec<String>,
    /// When (seconds since the epoch) and through what (`cli`, `elicitation`).
    pub at: u64,
    /// Through what.
    pub via: String,
    /// The toolbox commit when the decision was made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// The commit of the last version a person approved (kept across later changes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approved_commit: Option<String>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct File {
    toolbox: String,
    #[serde(default)]
    tools: BTreeMap<String, Record>,
}

impl personal::ToolboxRecords for File {
    fn empty(toolbox: String) -> File {
        File {
            toolbox,
            ..Default::default()
        }
    }
}

/// The approvals file of one toolbox.
#[derive(Debug, Clone)]
pub struct Store {
    file: personal::ToolboxFile,
}

impl Store {
    /// The store of the toolbox at `root`, kept under `personal_dir`.
    pub fn new(personal_dir: &Path, root: &Path) -> Store {
        Store {
            file: personal::ToolboxFile::new(personal_dir, "approvals", root),
        }
    }

    /// The decisions file.
    pub fn path(&self) -> &Path {
        self.file.path()
    }

    fn load(&self) -> std::io::Result<File> {
        self.file.load()
    }

    /// The decision recorded for `name`, if any.
    pub fn get(&self, name: &str) -> std::io::Result<Option<Record>> {
        Ok(self.load()?.tools.remove(name))
    }

    /// Every tool's record.
    pub fn all(&self) -> std::io::Result<BTreeMap<String, Record>> {
        Ok(self.load()?.tools)
    }

    /// Record a decision (replacing the tool's previous one, keeping its last approved commit).
    pub fn put(&self, name: &str, mut record: Record) -> std::io::Result<()> {
        self.file.change(|f: &mut File| {
            if record.decision == Decision::Approved {
                record.approved_commit = record.commit.clone();
            } else if record.approved_commit.is_none() {
                record.approved_commit = f.tools.get(name).and_then(|r| r.approved_commit.clone());
            }
            f.tools.insert(name.to_string(), record);
        })
    }
}
