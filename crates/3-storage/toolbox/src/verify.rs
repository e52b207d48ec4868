//! Before a stored tool runs: does what is on disk differ from what was committed (hand edits,
//! a swapped file) or from the source hash recorded in its tool.toml? And the toolbox policy
//! for such calls (`toolsmith.toml`, `[policy] uncommitted = "warn" | "refuse"`).
//!
//! Hand editing is a supported way of working, so by default a tool with uncommitted changes
//! still runs, but never silently: the call's result and log say so, and `toolsmith lint` and
//! the guide list it. With `uncommitted = "refuse"` such calls are refused. The policy file is
//! at the toolbox root, outside every tool directory, so no meta-tool can change it.
//!
//! Results are remembered per tool under a fingerprint of the tool's files (path, size,
//! mtime, inode) and of HEAD, so a call to an unchanged tool costs a few `stat`s.

use super::{Toolbox, ToolboxError};
use crate::hashing;
use crate::index::TOOLS_DIR;
use crate::manifest::{Kind, Manifest};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::hash::{Hash, Hasher};
use std::path::Path;
use std::sync::Mutex;

/// The toolbox-level settings file (committed; edited by people only).
pub const SETTINGS_FILE: &str = "toolsmith.toml";

/// What to do when a tool about to run differs from its committed version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum UncommittedPolicy {
    /// Run, and say so in the result and the log (the default).
    #[default]
    Warn,
    /// Refuse the call.
    Refuse,
}

/// How a tool on disk differs from what was committed and recorded.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Drift {
    /// Files that differ from HEAD: "main.py (modified)", "x (added)", "y (removed)".
    pub uncommitted: Vec<String>,
    /// The source files and lockfile no longer match `[hashes] source` in tool.toml.
    pub source_mismatch: bool,
}

impl Drift {
    /// Nothing differs from HEAD and the recorded hashes.
    pub fn is_clean(&self) -> bool {
        self.uncommitted.is_empty() && !self.source_mismatch
    }

    /// One line for a result, a log or the guide.
    pub fn describe(&self, name: &str) -> String {
        let mut parts = Vec::new();
        if !self.uncommitted.is_empty() {
            parts.push(format!(
                "uncommitted changes ({})",
                self.uncommitted.join(", ")
            ));
        }
        if self.source_mismatch {
            parts.push("source or lockfile not matching the hash in tool.toml".to_string());
        }
        format!("tool {name} runs {}", parts.join(" and "))
    }
}

/// Each stored tool's drift, with the stamp of its files and HEAD it was computed for (this
/// toolbox's `state`).
#[derive(Default)]
struct Cache(Mutex<HashMap<std::path::PathBuf, (u64, Drift)>>);

/// The files of a tool directory that git would track (ignored directories and `*.pyc` left
/// out), relative, sorted.
fn disk_files(dir: &Path) -> Vec<(String, std::fs::Metadata)> {
    let mut out = Vec::new();
    let walker = crate::hashing::walk_tool_dir(dir);
    for e in walker.filter_map(Result::ok) {
        if !e.file_type().is_file() || e.file_name().to_string_lossy().ends_with(".pyc") {
            continue;
        }
        let (Ok(rel), Ok(meta)) = (e.path().strip_prefix(dir), e.metadata()) else {
            continue;
        };
        out.push((rel.to_string_lossy().replace('\\', "/"), meta));
    }
    out
}

impl Toolbox {
    /// The policy for calls to tools with uncommitted changes (`toolsmith.toml`).
    pub fn uncommitted_policy(&self) -> UncommittedPolicy {
        let Ok(text) = std::fs::read_to_string(self.root.join(SETTINGS_FILE)) else {
            return UncommittedPolicy::Warn;
        };
        let value = toml::from_str::<toml::Table>(&text).ok().and_then(|t| {
            t.get("policy")?
                .get("uncommitted")?
                .as_str()
                .map(str::to_string)
        });
        match value.as_deref() {
            Some("refuse") => UncommittedPolicy::Refuse,
            Some("warn") | None => UncommittedPolicy::Warn,
            Some(other) => {
                // Fail closed: a setting we cannot read as "warn" refuses.
                tracing::warn!(
                    value = other,
                    "{SETTINGS_FILE}: [policy] uncommitted must be \"warn\" or \"refuse\"; refusing"
                );
                UncommittedPolicy::Refuse
            }
        }
    }

    /// How the stored tool `name` on disk differs from HEAD and from its recorded source hash.
    pub fn drift(&self, name: &str, manifest: &Manifest) -> Result<Drift, ToolboxError> {
        let dir = self.tool_dir(name)?;
        let files = disk_files(&dir);
        let mut h = std::collections::hash_map::DefaultHasher::new();
        for (rel, meta) in &files {
            rel.hash(&mut h);
            meta.len().hash(&mut h);
            meta.modified().ok().hash(&mut h);
            // The change time too: an edit can put the size and mtime back, not the ctime.
            #[cfg(unix)]
            {
                use std::os::unix::fs::MetadataExt;
                (meta.ino(), meta.ctime(), meta.ctime_nsec()).hash(&mut h);
            }
        }
        let git = self.root.join(".git");
        let head = std::fs::read(git.join("HEAD")).ok();
        head.hash(&mut h);
        // The branch HEAD names moves without HEAD's text changing (a commit, a reset).
        let branch = head
            .as_deref()
            .and_then(|b| b.strip_prefix(b"ref: "))
            .and_then(|r| std::str::from_utf8(r).ok())
            .map(|r| git.join(r.trim()));
        for f in [git.join("index"), git.join("packed-refs")]
            .into_iter()
            .chain(branch)
        {
            let m = std::fs::metadata(f).ok();
            m.as_ref()
                .map(|m| (m.len(), m.modified().ok()))
                .hash(&mut h);
            #[cfg(unix)]
            m.as_ref()
                .map(std::os::unix::fs::MetadataExt::ino)
                .hash(&mut h);
        }
        manifest.hashes.source.hash(&mut h);
        let stamp = h.finish();
        let cache = self.state(|_| Cache::default());
        if let Ok(c) = cache.0.lock()
            && let Some((s, d)) = c.get(&dir)
            && *s == stamp
        {
            return Ok(d.clone());
        }
        let drift = self.compute_drift(name, manifest, &dir, &files)?;
        if let Ok(mut c) = cache.0.lock() {
            c.insert(dir, (stamp, drift.clone()));
        }
        Ok(drift)
    }

    fn compute_drift(
        &self,
        name: &str,
        manifest: &Manifest,
        dir: &Path,
        files: &[(String, std::fs::Metadata)],
    ) -> Result<Drift, ToolboxError> {
        let prefix = format!("{TOOLS_DIR}/{name}");
        // Files git's stat data proves unchanged are not read again (an 18 MB component's
        // blob took ~60 ms to inflate and compare); the rest are compared byte for byte.
        let head = crate::git::head_files_by_stat(&self.root, &prefix).unwrap_or_default();
        let proven = |rel: &str, meta: &std::fs::Metadata| {
            head.binary_search_by(|(p, ..)| p.as_str().cmp(rel))
                .is_ok_and(|i| head[i].2 && toolsmith_platform::executable(meta) == Some(head[i].1))
        };
        let mut committed: Option<BTreeMap<String, (Vec<u8>, bool)>> = None;
        let mut uncommitted = Vec::new();
        for (rel, meta) in files {
            if proven(rel, meta) {
                continue;
            }
            let committed = committed.get_or_insert_with(|| {
                match crate::git::read_tree_at(&self.root, "HEAD", &prefix) {
                    Ok(v) => v.into_iter().map(|(p, b, x)| (p, (b, x))).collect(),
                    Err(_) => BTreeMap::new(),
                }
            });
            match committed.get(rel) {
                None => uncommitted.push(format!("{rel} (added)")),
                Some((bytes, exec)) => {
                    let same_len = meta.len() == bytes.len() as u64;
                    let same = same_len
                        && std::fs::read(dir.join(rel)).is_ok_and(|b| b == *bytes)
                        && toolsmith_platform::executable(meta).is_none_or(|x| x == *exec);
                    if !same {
                        uncommitted.push(format!("{rel} (modified)"));
                    }
                }
            }
        }
        let removed: Vec<&String> = match &committed {
            Some(c) => c.keys().collect(),
            None => head.iter().map(|(p, ..)| p).collect(),
        };
        for rel in removed {
            if !files.iter().any(|(r, _)| r == rel) {
                uncommitted.push(format!("{rel} (removed)"));
            }
        }
        // Scripts run their source: it must match the recorded hash. (A WASM tool runs its
        // artifact, whose hash the runner checks on every load.)
        // (So does an MCP entry its lockfiles: what installs its server.)
        let source_mismatch = matches!(manifest.kind, Kind::Script | Kind::Mcp)
            && match &manifest.hashes.source {
                Some(expected) => hashing::source_hash(dir, None)
                    .map(|actual| actual != *expected)
                    .unwrap_or(true),
                None => false,
            };
        Ok(Drift {
            uncommitted,
            source_mismatch,
        })
    }
}

impl Toolbox {
    /// Every valid tool of `index` that runs something other than what was committed and
    /// recorded (one `git status` pass over `tools/` plus the scripts' source hashes), by name.
    pub fn drift_report(&self, index: &crate::index::Index) -> Vec<(String, Drift)> {
        let changed = crate::git::changed_paths(&self.root, TOOLS_DIR).unwrap_or_else(|e| {
            tracing::warn!(error = %e, "cannot compute the git status of tools/");
            Vec::new()
        });
        let mut out = Vec::new();
        // (A tool of an MCP entry's server has no files: its entry is checked.)
        for t in index.tools().filter(|t| t.upstream.is_none()) {
            let m = &t.manifest;
            let prefix = format!("{TOOLS_DIR}/{}/", m.name);
            let uncommitted: Vec<String> = changed
                .iter()
                .filter_map(|p| p.strip_prefix(&prefix))
                .filter(|p| !p.ends_with(".pyc"))
                .map(|p| format!("{p} (changed)"))
                .collect();
            let source_mismatch = matches!(m.kind, Kind::Script | Kind::Mcp)
                && m.hashes.source.as_ref().is_some_and(|expected| {
                    hashing::source_hash(&self.tools_dir().join(&m.name), None)
                        .map(|actual| actual != *expected)
                        .unwrap_or(true)
                });
            let drift = Drift {
                uncommitted,
                source_mismatch,
            };
            if !drift.is_clean() {
                out.push((m.name.clone(), drift));
            }
        }
        out
    }
}
