//! Which stored tools a client sees first: the ranking behind the default `tools/list` when a
//! toolbox holds more tools than the list may show. Pinned tools come first, then the tools
//! used most recently, then the ones changed most recently; the rest stay reachable through
//! `search_tools` and `call_tool`.
//!
//! Use is remembered per toolbox outside git (`.toolsmith/usage.json`), so the ranking
//! survives restarts; it never changes the tree, and a missing or broken file only means
//! "no use recorded yet".

use super::{Index, Tool};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::{SystemTime, UNIX_EPOCH};

/// Most stored tools the default `tools/list` shows.
pub const LIST_CAP: usize = 200;

/// The file under `.toolsmith/` holding when each tool was last called.
const USAGE_FILE: &str = "usage.json";

/// Last use (unix milliseconds) per tool, per toolbox root, shared by this process.
fn usage() -> &'static Mutex<HashMap<PathBuf, HashMap<String, u64>>> {
    static USAGE: OnceLock<Mutex<HashMap<PathBuf, HashMap<String, u64>>>> = OnceLock::new();
    USAGE.get_or_init(Default::default)
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

fn with_usage<T>(root: &Path, f: impl FnOnce(&mut HashMap<String, u64>) -> T) -> T {
    let mut all = usage().lock().unwrap_or_else(|p| p.into_inner());
    let map = all.entry(root.to_path_buf()).or_insert_with(|| {
        std::fs::read(usage_path(root))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default()
    });
    f(map)
}

/// Remember that `name` was just called (best effort: a failed write only loses the record).
pub fn record_use(root: &Path, name: &str) {
    let snapshot = with_usage(root, |m| {
        m.insert(name.to_string(), now_ms());
        serde_json::to_vec(m).ok()
    });
    if let Some(bytes) = snapshot {
        let path = usage_path(root);
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let tmp = path.with_extension("json.tmp");
        if std::fs::write(&tmp, bytes).is_ok() {
            let _ = std::fs::rename(&tmp, &path);
        }
    }
}

/// The tools called most recently (newest first, at most `cap`), from the usage record alone:
/// what a client most likely wants before the whole index is built.
pub fn recently_used(root: &Path, cap: usize) -> Vec<String> {
    let mut used: Vec<(String, u64)> =
        with_usage(root, |m| m.iter().map(|(n, t)| (n.clone(), *t)).collect());
    used.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    used.into_iter().take(cap).map(|(n, _)| n).collect()
}

/// When a tool's tool.toml last changed (unix milliseconds; 0 when unknown).
fn changed_ms(t: &Tool, index: &Index) -> u64 {
    index
        .get(&t.manifest.name)
        .and_then(|e| std::fs::metadata(e.dir.join(crate::manifest::FILE_NAME)).ok())
        .and_then(|m| m.modified().ok())
        .and_then(|m| m.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_millis() as u64)
}

/// At most `cap` tools of `index`: all of them in name order when they fit; otherwise pinned
/// first, then by most recent use, then by most recent change (then name).
pub fn ranked(index: &Index, cap: usize) -> Vec<&Tool> {
    let all: Vec<&Tool> = index.tools().collect();
    if all.len() <= cap {
        return all;
    }
    let used = with_usage(index.root(), |m| m.clone());
    let mut keyed: Vec<(bool, u64, u64, &Tool)> = all
        .into_iter()
        .map(|t| {
            let name = t.manifest.name.as_str();
            (
                t.manifest.pinned,
                used.get(name).copied().unwrap_or(0),
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
