//! The audit trail: an append-only JSON-lines log in the personal directory (`audit.log`,
//! mode 0600) of every call of a stored tool (time, toolbox, tool, version commit, actor and
//! session, duration, outcome, bytes in and out, the grants used, where a script's process came
//! from — never argument values) and
//! of every approval and denial. When the file passes `MAX_BYTES` it is rotated to
//! `audit.log.1` (one generation kept), so the log stays bounded. `toolsmith audit` reads both.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

// The crates below, under the names the code map gives them.
use toolsmith_git as git;
use toolsmith_personal as personal;

use serde::{Deserialize, Serialize};
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

/// Size past which the log is rotated.
pub const MAX_BYTES: u64 = 8 * 1024 * 1024;

/// One line of the log.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Entry {
    /// Seconds since the epoch.
    pub time: u64,
    /// "call", or a decision: "approved", "denied", "approved once", "secret set", ...
    pub event: String,
    /// The toolbox's root directory.
    pub toolbox: String,
    /// The tool.
    pub tool: String,
    /// The commit of the version called (HEAD's, when the tool is committed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// Who called (the MCP client's name, `cli`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub actor: String,
    /// The MCP session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// "ok", "error", or "pending" (refused until a person decides).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub outcome: String,
    /// The error's message, for a call that failed (secrets redacted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// How long the call took, in milliseconds.
    #[serde(default)]
    pub ms: u64,
    /// The size of the arguments, in bytes (never their values).
    #[serde(default)]
    pub bytes_in: u64,
    /// The size of the result, in bytes.
    #[serde(default)]
    pub bytes_out: u64,
    /// Capabilities beyond the defaults the call ran with (or the decision was about).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub grants: Vec<String>,
    /// For a tool limited to listed domains: the hosts its proxy let through, and refused.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts_reached: Vec<String>,
    /// The hosts its proxy refused.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts_refused: Vec<String>,
    /// For a script call: where its process came from — `forked` (its tool's fork server),
    /// `spare` (started before the call), `started` (for the call: nothing was ready),
    /// `worker` (its warm worker). Every one is a fresh process set up the same way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process: Option<String>,
    /// For decisions: through what (`cli`, `elicitation`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub via: String,
}

/// The toolbox's HEAD commit, read from the ref files (every call is audited, and opening
/// the repository costs more than the rest of the audit); gix resolves it otherwise.
fn commit_of(root: &Path) -> Option<String> {
    let git = root.join(".git");
    let head = std::fs::read_to_string(git.join("HEAD")).ok()?;
    let is_id = |s: &str| s.len() == 40 && s.bytes().all(|b| b.is_ascii_hexdigit());
    let direct = match head.trim().strip_prefix("ref: ") {
        None => Some(head.trim().to_string()),
        Some(r) if r.starts_with("refs/") && !r.contains("..") => {
            std::fs::read_to_string(git.join(r))
                .ok()
                .map(|s| s.trim().to_string())
        }
        Some(_) => None,
    };
    match direct {
        Some(id) if is_id(&id) => Some(id),
        _ => crate::git::resolve(root, "HEAD").ok(),
    }
}

impl Entry {
    /// A call of `tool`, to be completed when it ends.
    pub fn call(root: &Path, tool: &str, actor: String, session: Option<String>) -> Entry {
        Entry {
            time: crate::personal::now_secs(),
            event: "call".into(),
            toolbox: root.display().to_string(),
            tool: tool.into(),
            commit: commit_of(root),
            actor,
            session,
            ..Default::default()
        }
    }

    /// A person's decision about a tool (or a secret).
    pub fn decision(root: &Path, tool: &str, event: &str, via: &str, grants: Vec<String>) -> Entry {
        Entry {
            time: crate::personal::now_secs(),
            event: event.into(),
            toolbox: root.display().to_string(),
            tool: tool.into(),
            commit: commit_of(root),
            actor: "person".into(),
            grants,
            via: via.into(),
            ..Default::default()
        }
    }
}

/// The log file.
#[derive(Debug, Clone)]
pub struct Log {
    path: PathBuf,
}

impl Log {
    /// The log of the personal directory `personal_dir`.
    pub fn new(personal_dir: &Path) -> Log {
        Log {
            path: personal_dir.join("audit.log"),
        }
    }

    /// The log file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn rotated(&self) -> PathBuf {
        self.path.with_extension("log.1")
    }

    /// Append one entry. The audit never fails a call: a write error is logged on stderr.
    pub fn append(&self, e: &Entry) {
        if let Err(err) = self.try_append(e) {
            tracing::warn!(file = %self.path.display(), error = %err, "cannot write the audit log");
        }
    }

    fn try_append(&self, e: &Entry) -> std::io::Result<()> {
        if std::fs::metadata(&self.path).is_ok_and(|m| m.len() >= MAX_BYTES) {
            std::fs::rename(&self.path, self.rotated())?;
        }
        let mut line = serde_json::to_vec(e).map_err(std::io::Error::other)?;
        line.push(b'\n');
        // One write of a whole line on an O_APPEND file: concurrent writers do not interleave.
        crate::personal::append_private(&self.path)?.write_all(&line)
    }

    /// The entries (oldest first) matching `tool` and `since` (seconds since the epoch).
    pub fn read(&self, tool: Option<&str>, since: Option<u64>) -> std::io::Result<Vec<Entry>> {
        let mut out = Vec::new();
        for p in [self.rotated(), self.path.clone()] {
            let f = match std::fs::File::open(&p) {
                Ok(f) => f,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(e),
            };
            for line in std::io::BufReader::new(f).lines() {
                let Ok(e) = serde_json::from_str::<Entry>(&line?) else {
                    continue;
                };
                if tool.is_some_and(|t| t != e.tool) || since.is_some_and(|s| e.time < s) {
                    continue;
                }
                out.push(e);
            }
        }
        Ok(out)
    }
}

/// Seconds since the epoch of a time given as RFC 3339 (2026-01-31T12:00:00Z) or an age (30m,
/// 2h, 7d); None when it is neither.
pub fn parse_since(s: &str) -> Option<u64> {
    let s = s.trim();
    if let Ok(t) = s.parse::<jiff::Timestamp>() {
        return Some(t.as_second().max(0) as u64);
    }
    let (num, unit) = s.split_at(s.len().saturating_sub(1));
    let n: u64 = num.parse().ok()?;
    let secs = match unit {
        "s" => n,
        "m" => n * 60,
        "h" => n * 3600,
        "d" => n * 86400,
        _ => return None,
    };
    Some(crate::personal::now_secs().saturating_sub(secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_appended_filtered_and_rotated() {
        let tmp = tempfile::tempdir().unwrap();
        let log = Log::new(tmp.path());
        let mut e = Entry {
            time: 100,
            event: "call".into(),
            tool: "a".into(),
            ..Default::default()
        };
        log.append(&e);
        e.tool = "b".into();
        e.time = 200;
        log.append(&e);
        assert_eq!(log.read(Some("b"), None).unwrap().len(), 1);
        assert_eq!(log.read(None, Some(150)).unwrap()[0].tool, "b");
        // Past the bound, the file is rotated and both generations are read.
        let f = std::fs::OpenOptions::new()
            .append(true)
            .open(log.path())
            .unwrap();
        f.set_len(MAX_BYTES).unwrap();
        log.append(&e);
        assert!(std::fs::metadata(log.path()).unwrap().len() < 1024);
        assert!(log.rotated().exists());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(log.path()).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }
}
