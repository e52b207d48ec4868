//! The per-tool figures the report is made of, derived from the audit log and kept outside git
//! (the personal directory's `health/<toolbox>.json`, a `personal::ToolboxFile`): calls,
//! failures, the last use, the last error (already redacted in the audit), and the durations of
//! the most recent calls. Brought up to date from where it last stopped reading the log (its
//! first line and an offset: a rotation is followed into `audit.log.1`), rebuilt from the log
//! when lost. Bounded: `RECENT` durations per tool, errors cut to `ERROR_CHARS`, tools that no
//! longer exist dropped.

use crate::audit::{Entry, Log};
use crate::personal::{ToolboxFile, ToolboxRecords};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, VecDeque};
use std::io::{BufRead, Read, Seek, SeekFrom};
use std::path::Path;

/// Durations kept per tool (the p50 and p95 are of these calls).
pub const RECENT: usize = 64;
/// Characters of the last error kept.
const ERROR_CHARS: usize = 300;

/// One tool's calls.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Stat {
    /// Calls that ran (ended "ok" or "error").
    pub calls: u64,
    /// Those that failed.
    pub errors: u64,
    /// Calls refused until a person decides (not counted as runs).
    #[serde(default)]
    pub pending: u64,
    /// The first and last call (seconds since the epoch).
    pub first: u64,
    /// The last call.
    pub last: u64,
    /// The durations (ms) of the most recent calls, oldest first.
    pub recent_ms: VecDeque<u64>,
    /// The last error's message (redacted by the audit), cut.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    /// Who called last (an MCP client's name, `cli`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub last_actor: String,
}

/// Where reading the log stopped.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
struct Cursor {
    /// The first line of the file being read (tells it apart once rotated).
    head: String,
    /// Bytes of it read.
    offset: u64,
}

/// The records of one toolbox.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Records {
    toolbox: String,
    cursor: Cursor,
    /// Per tool.
    pub tools: BTreeMap<String, Stat>,
}

impl ToolboxRecords for Records {
    fn empty(toolbox: String) -> Records {
        Records {
            toolbox,
            cursor: Cursor::default(),
            tools: BTreeMap::new(),
        }
    }
}

impl Stat {
    fn add(&mut self, e: &Entry) {
        if e.outcome == "pending" {
            self.pending += 1;
            return;
        }
        self.calls += 1;
        if self.first == 0 || e.time < self.first {
            self.first = e.time;
        }
        self.last = self.last.max(e.time);
        self.last_actor.clone_from(&e.actor);
        if e.outcome == "error" {
            self.errors += 1;
            self.last_error = e
                .error
                .as_ref()
                .map(|m| m.chars().take(ERROR_CHARS).collect());
        }
        self.recent_ms.push_back(e.ms);
        while self.recent_ms.len() > RECENT {
            self.recent_ms.pop_front();
        }
    }

    /// The `p`-th percentile (0–100) of the recent durations, by the nearest rank.
    pub fn percentile(&self, p: f64) -> Option<u64> {
        if self.recent_ms.is_empty() {
            return None;
        }
        let mut v: Vec<u64> = self.recent_ms.iter().copied().collect();
        v.sort_unstable();
        let rank = ((p / 100.0) * v.len() as f64).ceil() as usize;
        Some(v[rank.clamp(1, v.len()) - 1])
    }
}

/// The first line of a file ("" when it has none).
fn head(path: &Path) -> std::io::Result<String> {
    match std::fs::File::open(path) {
        Ok(f) => {
            let mut line = String::new();
            std::io::BufReader::new(f).read_line(&mut line)?;
            Ok(line)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
        Err(e) => Err(e),
    }
}

/// Read whole lines of `path` from `offset`, for `f`; the offset after the last whole line.
fn read_from(path: &Path, offset: u64, mut f: impl FnMut(&str)) -> std::io::Result<u64> {
    let mut file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(e),
    };
    file.seek(SeekFrom::Start(offset))?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    let whole = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    for line in String::from_utf8_lossy(&bytes[..whole]).lines() {
        f(line);
    }
    Ok(offset + whole as u64)
}

/// Bring the records of the toolbox at `root` up to date with the audit log of `personal`;
/// keep only the tools `keep` says exist. The records, as written.
pub fn update(
    personal: &Path,
    root: &Path,
    keep: impl Fn(&str) -> bool,
) -> std::io::Result<Records> {
    let file = ToolboxFile::new(personal, "health", root);
    let log = Log::new(personal);
    let current = log.path().to_path_buf();
    let rotated = current.with_extension("log.1");
    // The audit names a toolbox by the path its handle was opened with.
    let names: Vec<String> = {
        let mut v = vec![root.display().to_string()];
        if let Ok(c) = root.canonicalize() {
            v.push(c.display().to_string());
        }
        v
    };
    file.change(|r: &mut Records| -> std::io::Result<Records> {
        let now_head = head(&current)?;
        let (continued, rotated_since) = (
            !now_head.is_empty() && r.cursor.head == now_head,
            !r.cursor.head.is_empty() && r.cursor.head == head(&rotated)?,
        );
        if !continued && !rotated_since {
            // First time, or the records do not match the log: made again from it.
            r.tools.clear();
        }
        let tools = &mut r.tools;
        let mut add = |line: &str| {
            if let Ok(e) = serde_json::from_str::<Entry>(line)
                && e.event == "call"
                && names.contains(&e.toolbox)
            {
                tools.entry(e.tool.clone()).or_default().add(&e);
            }
        };
        let offset = if continued {
            read_from(&current, r.cursor.offset, &mut add)?
        } else if rotated_since {
            // Rotated since: the rest of the old file, then the new one.
            read_from(&rotated, r.cursor.offset, &mut add)?;
            read_from(&current, 0, &mut add)?
        } else {
            read_from(&rotated, 0, &mut add)?;
            read_from(&current, 0, &mut add)?
        };
        r.cursor = Cursor {
            head: now_head,
            offset,
        };
        r.tools.retain(|name, _| keep(name));
        Ok(r.clone())
    })?
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(root: &Path, tool: &str, outcome: &str, ms: u64, time: u64) -> Entry {
        Entry {
            time,
            event: "call".into(),
            toolbox: root.display().to_string(),
            tool: tool.into(),
            outcome: outcome.into(),
            ms,
            error: (outcome == "error").then(|| "it broke".to_string()),
            ..Default::default()
        }
    }

    #[test]
    fn records_follow_the_log_across_a_rotation_and_stay_bounded() {
        let tmp = tempfile::tempdir().unwrap();
        let (personal, root) = (tmp.path().join("p"), tmp.path().join("box"));
        std::fs::create_dir_all(&root).unwrap();
        let log = Log::new(&personal);
        log.append(&entry(&root, "a", "ok", 10, 1));
        log.append(&entry(&root, "a", "error", 30, 2));
        log.append(&entry(Path::new("/elsewhere"), "a", "ok", 5, 3));
        let r = update(&personal, &root, |_| true).unwrap();
        let a = &r.tools["a"];
        assert_eq!((a.calls, a.errors, a.last), (2, 1, 2));
        assert_eq!(a.last_error.as_deref(), Some("it broke"));
        // Read again: nothing counted twice; a new line counted once.
        log.append(&entry(&root, "b", "ok", 7, 4));
        let r = update(&personal, &root, |_| true).unwrap();
        assert_eq!((r.tools["a"].calls, r.tools["b"].calls), (2, 1));
        // Rotated: the old file's rest and the new file are read.
        std::fs::rename(log.path(), log.path().with_extension("log.1")).unwrap();
        log.append(&entry(&root, "b", "ok", 9, 5));
        let r = update(&personal, &root, |_| true).unwrap();
        assert_eq!(r.tools["b"].calls, 2);
        // Bounded: the recent durations, and only tools that exist.
        for i in 0..(RECENT as u64 + 10) {
            log.append(&entry(&root, "b", "ok", i, 10 + i));
        }
        let r = update(&personal, &root, |n| n == "b").unwrap();
        assert_eq!(r.tools.len(), 1);
        assert_eq!(r.tools["b"].recent_ms.len(), RECENT);
        assert_eq!(r.tools["b"].percentile(50.0), Some(41));
        // Lost: made again from the log.
        std::fs::remove_dir_all(personal.join("health")).unwrap();
        let again = update(&personal, &root, |n| n == "b").unwrap();
        assert_eq!(again.tools["b"].calls, r.tools["b"].calls);
    }
}
