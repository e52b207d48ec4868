//! Loaded WASM tools kept within a memory budget (`TOOLSMITH_WASM_MEMORY`).
//!
//! Each loaded module or component is kept in memory (its compiled code mapped, its memory
//! images made, its `InstancePre`) so that its calls start at warm speed. That costs memory:
//! a component embedding CPython holds about 55 MB resident. The loaded set is therefore
//! accounted: every entry by its measured size (its compiled code's mapping plus the initial
//! data its memory images hold), stamped with its last use. After a load, the entries used
//! least recently are unloaded until the set fits the budget again; the one just loaded always
//! stays (a budget smaller than one tool still runs that tool). An unloaded tool's next call
//! loads it again from the verified compiled-code cache (`cache`): its artifact hashed, the
//! entry's MAC checked, no compiling.
//!
//! Unloading drops the set's reference: a call running with it keeps it alive until that call
//! ends; then wasmtime unmaps its code and purges its memory images from the instance pool.
//! The memory the allocator kept for the loading is given back to the system (`give_back`).

use std::any::Any;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

/// A loaded artifact, kept as its type-erased `Arc` (a module's or a component's).
type Shared = Arc<dyn Any + Send + Sync>;

struct Entry {
    loaded: Shared,
    /// The tool's name, for the log.
    tool: String,
    bytes: u64,
    /// When it was last used, on the set's clock.
    used: u64,
}

#[derive(Default)]
struct State {
    entries: HashMap<PathBuf, Entry>,
    /// Artifacts unloaded for the budget and not loaded since (their next load is a reload).
    unloaded: HashSet<PathBuf>,
    total: u64,
    clock: u64,
    reloads: u64,
    unloads: u64,
}

/// The loaded modules and components of a runner, within `budget` bytes.
pub(super) struct Resident {
    budget: u64,
    state: Mutex<State>,
}

/// What the loaded set holds now (`WasmRunner::resident`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Usage {
    /// Modules and components loaded.
    pub loaded: usize,
    /// Their accounted size, in bytes.
    pub bytes: u64,
    /// The budget, in bytes.
    pub budget: u64,
    /// How many were unloaded for the budget since the runner started.
    pub unloads: u64,
    /// How many of those were loaded again by a later call.
    pub reloads: u64,
}

impl Resident {
    pub(super) fn new(budget: u64) -> Resident {
        Resident {
            budget,
            state: Mutex::default(),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The loaded form kept for `path` when it is an `L` and `fresh` accepts it; marked used.
    pub(super) fn get<L: Any + Send + Sync>(
        &self,
        path: &Path,
        fresh: impl FnOnce(&L) -> bool,
    ) -> Option<Arc<L>> {
        let mut s = self.state();
        s.clock += 1;
        let now = s.clock;
        let e = s.entries.get_mut(path)?;
        let l = Arc::clone(&e.loaded).downcast::<L>().ok()?;
        if !fresh(&l) {
            return None;
        }
        e.used = now;
        Some(l)
    }

    /// Keep `loaded` for `path` (replacing what was there), accounted as `bytes`; then unload
    /// the entries used least recently, never this one, until the set fits the budget.
    pub(super) fn insert<L: Any + Send + Sync>(
        &self,
        path: PathBuf,
        tool: &str,
        loaded: Arc<L>,
        bytes: u64,
    ) {
        let mut dropped: Vec<Shared> = Vec::new();
        {
            let mut s = self.state();
            s.clock += 1;
            let used = s.clock;
            if s.unloaded.remove(&path) {
                s.reloads += 1;
                tracing::info!(tool = %tool, kib = bytes >> 10, "WASM tool loaded again (it had been unloaded for TOOLSMITH_WASM_MEMORY)");
            }
            let entry = Entry {
                loaded,
                tool: tool.to_string(),
                bytes,
                used,
            };
            s.total += bytes;
            if let Some(old) = s.entries.insert(path.clone(), entry) {
                s.total -= old.bytes;
                dropped.push(old.loaded);
            }
            while s.total > self.budget {
                let Some(victim) = s
                    .entries
                    .iter()
                    .filter(|(p, _)| **p != path)
                    .min_by_key(|(_, e)| e.used)
                    .map(|(p, _)| p.clone())
                else {
                    break;
                };
                let Some(e) = s.entries.remove(&victim) else {
                    break;
                };
                s.total -= e.bytes;
                s.unloads += 1;
                tracing::info!(
                    tool = %e.tool,
                    kib = e.bytes >> 10,
                    loaded_kib = s.total >> 10,
                    budget_mib = self.budget >> 20,
                    "WASM tool unloaded (used least recently; over TOOLSMITH_WASM_MEMORY): its next call loads it again"
                );
                s.unloaded.insert(victim);
                dropped.push(e.loaded);
            }
        }
        // Unmapped here (or when the last call running with one ends), outside the lock.
        drop(dropped);
    }

    /// What the set holds now.
    pub(super) fn usage(&self) -> Usage {
        let s = self.state();
        Usage {
            loaded: s.entries.len(),
            bytes: s.total,
            budget: self.budget,
            unloads: s.unloads,
            reloads: s.reloads,
        }
    }
}

/// Have buffers of a MiB and more mapped for themselves (and unmapped when freed), once per
/// process. glibc's threshold for that starts at 128 KiB and rises to the size of every large
/// buffer freed, up to 32 MiB: after the first component load, its artifact and compiled-code
/// buffers (18 and 35 MB for a Python component) are carved from the arenas instead, and each
/// load leaves ~20 MB there that unloading never gives back (measured: 10 Python components
/// loaded in turn under a 256 MiB budget held 323 MB resident; with the threshold fixed, 255 MB,
/// the five loaded ones and the binary).
pub(super) fn tune_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        // SAFETY: mallopt only sets an allocator parameter.
        ONCE.call_once(|| unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, 1 << 20);
        });
    }
}

/// Give the memory the allocator holds free back to the system. Loading a component reads
/// its artifact and compiled code (tens of MB) into buffers freed right after, and compiling
/// one uses hundreds of MB; glibc keeps such freed memory in its arenas (RSS that no longer
/// holds anything) unless asked to return it.
pub(super) fn give_back() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only walks the allocator's own arenas; no pointer is handed over.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_entries_used_least_recently_go_first_and_never_the_one_just_loaded() {
        let r = Resident::new(100);
        let (a, b, c) = (PathBuf::from("a"), PathBuf::from("b"), PathBuf::from("c"));
        r.insert(a.clone(), "a", Arc::new(1u8), 40);
        r.insert(b.clone(), "b", Arc::new(2u8), 40);
        // a used after b: b is now the one used least recently.
        assert_eq!(r.get::<u8>(&a, |_| true).as_deref(), Some(&1));
        r.insert(c.clone(), "c", Arc::new(3u8), 40);
        assert!(r.get::<u8>(&b, |_| true).is_none(), "b was unloaded");
        assert!(r.get::<u8>(&a, |_| true).is_some() && r.get::<u8>(&c, |_| true).is_some());
        let u = r.usage();
        assert_eq!((u.loaded, u.bytes, u.unloads, u.reloads), (2, 80, 1, 0));
        // Loading b again is a reload; alone bigger than the budget, it stays, all else goes.
        r.insert(b.clone(), "b", Arc::new(2u8), 150);
        let u = r.usage();
        assert_eq!((u.loaded, u.bytes, u.unloads, u.reloads), (1, 150, 3, 1));
        // Another type kept under the same path is not this one; a stale entry is not kept.
        assert!(r.get::<u16>(&b, |_| true).is_none());
        assert!(r.get::<u8>(&b, |_| false).is_none());
    }

    #[test]
    fn a_replaced_entry_is_no_longer_counted() {
        let r = Resident::new(100);
        r.insert(PathBuf::from("a"), "a", Arc::new(1u8), 60);
        r.insert(PathBuf::from("a"), "a", Arc::new(2u8), 70);
        let u = r.usage();
        assert_eq!((u.loaded, u.bytes, u.unloads), (1, 70, 0));
    }
}
