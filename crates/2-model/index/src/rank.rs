//! Which stored tools a client sees first: the ranking behind the default `tools/list` when a
//! toolbox holds more tools than the list may show. Pinned tools come first, then the tools
//! used most recently, then the ones changed most recently; the rest stay reachable through
//! `search_tools` and `call_tool`.
//!
//! Use is remembered per toolbox outside git (`.toolsmith/usage.json`: when each tool was last
//! called and how often), so the ranking survives restarts; it never changes the tree, and a
//! missing or broken file only means "no use recorded yet". A server starting on the toolbox
//! also reads it to start, before any call, what the tools it used most will need
//! (`most_used`).

use super::{Index, Tool};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

/// Most stored tools the default `tools/list` shows.
pub const LIST_CAP: usize = 200;

/// The file under `.toolsmith/` holding when each tool was last called.
const USAGE_FILE: &str = "usage.json";

/// One tool's use: when it was last called (unix milliseconds) and how often.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(from = "Recorded")]
struct Use {
    last: u64,
    calls: u64,
}

/// A use as the file holds it: `{"last": ms, "calls": n}`, or (files written before the count
/// was kept) the time alone.
#[derive(serde::Deserialize)]
#[serde(untagged)]
enum Recorded {
    Counted { last: u64, calls: u64 },
    Last(u64),
}

impl From<Recorded> for Use {
    fn from(r: Recorded) -> Use {
        match r {
            Recorded::Counted { last, calls } => Use { last, calls },
            Recorded::Last(last) => Use { last, calls: 1 },
        }
    }
}

/// The use of one toolbox's tools: the record in memory, written to `.toolsmith/usage.json`
/// shortly after each use. Held by the toolbox (`tb.state(Usage::new)`), so every handle of
/// it in this process shares one record; what is still unwritten when the last handle goes is
/// written then.
#[derive(Debug)]
pub struct Usage {
    /// The usage file.
    path: PathBuf,
    /// The record, read from the file when first needed.
    record: Mutex<Option<HashMap<String, Use>>>,
    /// Whether a write is queued that has not read the record yet.
    queued: AtomicBool,
    /// One write at a time.
    writing: Mutex<()>,
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

fn usage_path(root: &Path) -> PathBuf {
    root.join(".toolsmith").join(USAGE_FILE)
}

/// How long after a use its record is written.
const PERSIST_AFTER: std::time::Duration = std::time::Duration::from_secs(1);

impl Usage {
    /// The use of the toolbox at `root` (nothing is read until it is needed).
    pub fn new(root: &Path) -> Usage {
        Usage {
            path: usage_path(root),
            record: Mutex::new(None),
            queued: AtomicBool::new(false),
            writing: Mutex::new(()),
        }
    }

    fn with<T>(&self, f: impl FnOnce(&mut HashMap<String, Use>) -> T) -> T {
        let mut record = self.record.lock().unwrap_or_else(|p| p.into_inner());
        let map = record.get_or_insert_with(|| {
            std::fs::read(&self.path)
                .ok()
                .and_then(|b| serde_json::from_slice(&b).ok())
                .unwrap_or_default()
        });
        f(map)
    }

    /// Remember that `name` was just called (best effort: a failed write only loses the
    /// record). The record in memory changes at once; the file is written off the call's path
    /// (inside a tokio runtime: shortly after, in a blocking task). A write already queued
    /// takes this use along: a burst of calls costs a few writes, not one each.
    pub fn record(self: &Arc<Self>, name: &str) {
        self.with(|m| {
            let u = m
                .entry(name.to_string())
                .or_insert(Use { last: 0, calls: 0 });
            u.last = now_ms();
            u.calls += 1;
        });
        if self.queued.swap(true, Ordering::AcqRel) {
            return;
        }
        match tokio::runtime::Handle::try_current() {
            // A moment later: the call's result goes out first, and the call's processes have
            // the CPU to themselves meanwhile (a rename on some file systems takes a millisecond).
            Ok(h) => {
                let usage = Arc::clone(self);
                drop(h.spawn(async move {
                    tokio::time::sleep(PERSIST_AFTER).await;
                    let _ = toolsmith_platform::blocking(move || usage.write_now()).await;
                }))
            }
            Err(_) => self.write_now(),
        }
    }

    /// Write the record now when a write is still waiting (a server stopping).
    pub fn flush(&self) {
        if self.queued.load(Ordering::Acquire) {
            self.write_now();
        }
    }

    /// Write the current record (through a temporary file).
    fn write_now(&self) {
        let _one = self.writing.lock().unwrap_or_else(|p| p.into_inner());
        // Unqueued before the record is read: a use recorded after this read queues a new write.
        self.queued.store(false, Ordering::Release);
        let Some(bytes) = self.with(|m| serde_json::to_vec(m).ok()) else {
            return;
        };
        if let Some(dir) = self.path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let _ =
            toolsmith_platform::write_atomic(&self.path, &bytes, toolsmith_platform::Atomic::CACHE);
    }

    /// When `name` was last called (unix milliseconds) and how often, as recorded.
    pub fn of(&self, name: &str) -> Option<(u64, u64)> {
        self.with(|m| m.get(name).map(|u| (u.last, u.calls)))
    }

    /// The tools called most recently (newest first, at most `cap`), from the record alone:
    /// what a client most likely wants before the whole index is built.
    pub fn recently_used(&self, cap: usize) -> Vec<String> {
        let mut used: Vec<(String, u64)> =
            self.with(|m| m.iter().map(|(n, u)| (n.clone(), u.last)).collect());
        used.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        used.into_iter().take(cap).map(|(n, _)| n).collect()
    }

    /// The tools a server starting on this toolbox should have ready first (at most `cap`):
    /// the most recently used, then the most often used, alternately (each list newest or most
    /// used first, without repeats).
    pub fn most_used(&self, cap: usize) -> Vec<String> {
        let all: Vec<(String, Use)> =
            self.with(|m| m.iter().map(|(n, u)| (n.clone(), *u)).collect());
        let mut recent = all.clone();
        recent.sort_by(|a, b| b.1.last.cmp(&a.1.last).then_with(|| a.0.cmp(&b.0)));
        let mut often = all;
        often.sort_by(|a, b| {
            b.1.calls
                .cmp(&a.1.calls)
                .then(b.1.last.cmp(&a.1.last))
                .then_with(|| a.0.cmp(&b.0))
        });
        let mut out: Vec<String> = Vec::new();
        for (r, o) in recent.into_iter().zip(often) {
            for name in [r.0, o.0] {
                if out.len() < cap && !out.contains(&name) {
                    out.push(name);
                }
            }
        }
        out
    }
}

impl Drop for Usage {
    /// The last handle of the toolbox went: what is unwritten is written now.
    fn drop(&mut self) {
        self.flush();
    }
}

/// When a tool's tool.toml last changed (unix milliseconds; 0 when unknown).
fn changed_ms(t: &Tool, index: &Index) -> u64 {
    index
        .get(&t.manifest.name)
        .and_then(|e| std::fs::metadata(e.dir.join(toolsmith_manifest::FILE_NAME)).ok())
        .and_then(|m| m.modified().ok())
        .and_then(|m| m.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_millis() as u64)
}

/// At most `cap` tools of `index`: all of them in name order when they fit; otherwise pinned
/// first, then by most recent use, then by most recent change (then name).
pub fn ranked<'a>(index: &'a Index, usage: &Usage, cap: usize) -> Vec<&'a Tool> {
    let all: Vec<&Tool> = index.tools().collect();
    if all.len() <= cap {
        return all;
    }
    let used = usage.with(|m| m.clone());
    let mut keyed: Vec<(bool, u64, u64, &Tool)> = all
        .into_iter()
        .map(|t| {
            let name = t.manifest.name.as_str();
            (
                t.manifest.pinned,
                used.get(name).map_or(0, |u| u.last),
                changed_ms(t, index),
                t,
            )
        })
        .collect();
    keyed.sort_by(|a, b| {
        b.0.cmp(&a.0)
            .then(b.1.cmp(&a.1))
            .then(b.2.cmp(&a.2))
            .then(a.3.manifest.name.cmp(&b.3.manifest.name))
    });
    keyed.into_iter().take(cap).map(|k| k.3).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Uses recorded in a burst inside a runtime all reach the file, the last one included.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_burst_of_uses_is_persisted_whole() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        let usage = Arc::new(Usage::new(root));
        for i in 0..50 {
            usage.record(&format!("tool_{i:02}"));
        }
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        let on_disk = loop {
            let m: HashMap<String, Use> = std::fs::read(usage_path(root))
                .ok()
                .and_then(|b| serde_json::from_slice(&b).ok())
                .unwrap_or_default();
            if m.len() == 50 || std::time::Instant::now() > deadline {
                break m;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        };
        assert_eq!(on_disk.len(), 50, "{on_disk:?}");
        assert!(on_disk.values().all(|u| u.calls == 1 && u.last > 0));
        assert!(on_disk.contains_key("tool_49"));
        let dir = usage_path(root)
            .parent()
            .expect("a directory")
            .to_path_buf();
        let temporary: Vec<_> = std::fs::read_dir(&dir)
            .expect("the usage directory")
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().starts_with(".tmp-"))
            .collect();
        assert!(temporary.is_empty(), "temporary files left: {temporary:?}");
    }

    /// A file of the format before counts (times alone) still reads; the tools to have ready
    /// first alternate between the most recent and the most often used.
    #[test]
    fn most_used_alternates_recent_and_frequent_and_old_files_read() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        std::fs::create_dir_all(root.join(".toolsmith")).unwrap();
        std::fs::write(
            usage_path(root),
            r#"{"old": 5, "often": {"last": 10, "calls": 40}, "recent": {"last": 30, "calls": 2}, "mid": {"last": 20, "calls": 9}}"#,
        )
        .unwrap();
        let usage = Usage::new(root);
        assert_eq!(usage.most_used(3), ["recent", "often", "mid"]);
        assert_eq!(usage.most_used(9), ["recent", "often", "mid", "old"]);
        assert_eq!(usage.recently_used(9), ["recent", "mid", "often", "old"]);
    }
}
