//! Compiled functions kept between compilations (Cranelift's incremental compilation cache),
//! so a module that repeats another's functions compiles only what is new.
//!
//! Every Python component embeds the same CPython, every JavaScript component the same
//! engine: tens of thousands of functions whose bodies are byte for byte those of the last
//! component compiled. Cranelift keys each function by a SHA-256 of its IR and the target's
//! flags; a hit skips that function's compilation. It is bounded ([`MAX_BYTES`]); past the
//! bound the entries used least recently are dropped first (an interpreter's functions, reused
//! by every build, stay; a tool's own, used by its builds only, go).
//!
//! # Kept between starts, verified
//! The store is written to the compiled-code cache's directory after a compilation that added
//! to it, and read back before the first compilation of a later start (`save`, `load`): the
//! first component built after a restart compiles only its own code, not the interpreter
//! again. An entry is native code, so the file is verified as the cache's entries are: a MAC
//! (BLAKE3 in keyed mode, the cache's secret key kept outside the directory) over the engine's
//! compatibility hash and every byte of the entries. The file is read into memory once, its
//! MAC checked over those bytes, and the entries taken from the same bytes; a file that fails
//! the check is ignored (and replaced at the next save). Two servers saving at once: the last
//! one's store is what the file holds, each file whole (written aside, then renamed).

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// The most the store holds (keys and values), in bytes: about three interpreters' code.
pub(super) const MAX_BYTES: usize = 96 << 20;

/// The runner's store of compiled functions (`Config::enable_incremental_compilation`).
#[derive(Debug)]
pub(super) struct Functions {
    state: Mutex<State>,
    max_bytes: usize,
    hits: AtomicU64,
    misses: AtomicU64,
}

#[derive(Debug, Default)]
struct State {
    /// Each entry's value and when it was last stored or served (its stamp in `recency`).
    entries: HashMap<Vec<u8>, (Vec<u8>, u64)>,
    recency: Recency,
    bytes: usize,
}

/// The keys by when they were last stored or served: the least recent is dropped first.
#[derive(Debug, Default)]
struct Recency {
    order: BTreeMap<u64, Vec<u8>>,
    /// The next use's stamp.
    clock: u64,
}

impl Recency {
    /// Mark `key` (last used at `stamp`, if it was stored before) used now: its new stamp.
    fn touch(&mut self, key: &[u8], stamp: Option<u64>) -> u64 {
        let now = self.clock;
        self.clock += 1;
        let k = stamp
            .and_then(|t| self.order.remove(&t))
            .unwrap_or_else(|| key.to_vec());
        self.order.insert(now, k);
        now
    }
}

/// How many functions a store served and compiled (`Functions::counts`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct Counts {
    pub(super) reused: u64,
    pub(super) compiled: u64,
}

impl Functions {
    pub(super) fn new(max_bytes: usize) -> Functions {
        Functions {
            state: Mutex::default(),
            max_bytes,
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
        }
    }

    /// Functions served from the store and compiled since the runner started.
    pub(super) fn counts(&self) -> Counts {
        Counts {
            reused: self.hits.load(Ordering::Relaxed),
            compiled: self.misses.load(Ordering::Relaxed),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The first bytes of a saved store, before its 32-byte MAC.
const MAGIC: &[u8] = b"toolsmith-functions-v1\n";

impl Functions {
    /// Write every entry (the least recently used first) to `path` with its MAC under `key`,
    /// for an engine whose compatibility hash is `engine`: written aside, then renamed over it.
    pub(super) fn save(&self, path: &Path, key: &[u8; 32], engine: &str) -> std::io::Result<()> {
        let mut body = Vec::new();
        {
            let s = self.state();
            body.reserve(s.bytes + 8 * s.entries.len());
            for k in s.recency.order.values() {
                if let Some((v, _)) = s.entries.get(k) {
                    for part in [k, v] {
                        let len = u32::try_from(part.len()).map_err(std::io::Error::other)?;
                        body.extend_from_slice(&len.to_le_bytes());
                        body.extend_from_slice(part);
                    }
                }
            }
        }
        let mut file = Vec::with_capacity(MAGIC.len() + 32 + body.len());
        file.extend_from_slice(MAGIC);
        file.extend_from_slice(&mac(key, engine, &body));
        file.extend_from_slice(&body);
        crate::platform::write_atomic(path, &file, crate::platform::Atomic::CACHE)
    }

    /// Add the entries saved at `path` (by [`save`](Functions::save), for this engine, under
    /// `key`) to the store: how many, or None when there is no file or it fails its check
    /// (then nothing is added).
    pub(super) fn load(&self, path: &Path, key: &[u8; 32], engine: &str) -> Option<usize> {
        let bytes = std::fs::read(path).ok()?;
        let rest = bytes.strip_prefix(MAGIC)?;
        let (tag, body) = rest.split_at_checked(32)?;
        // Constant-time comparison (`blake3::Hash`'s equality).
        if blake3::Hash::from_bytes(mac(key, engine, body))
            != blake3::Hash::from_bytes(tag.try_into().ok()?)
        {
            tracing::warn!(file = %path.display(), "ignoring saved compiled functions that fail their integrity check");
            return None;
        }
        let mut entries = Vec::new();
        let mut at = body;
        while !at.is_empty() {
            let (k, after) = field(at)?;
            let (v, after) = field(after)?;
            entries.push((k, v));
            at = after;
        }
        let n = entries.len();
        for (k, v) in entries {
            wasmtime::CacheStore::insert(self, k, v.to_vec());
        }
        Some(n)
    }
}

/// One length-prefixed field of a saved store, and what follows it.
fn field(at: &[u8]) -> Option<(&[u8], &[u8])> {
    let (len, rest) = at.split_at_checked(4)?;
    let len = u32::from_le_bytes(len.try_into().ok()?) as usize;
    rest.split_at_checked(len)
}

/// The MAC of a saved store's entries for an engine (its own domain: never a cache entry's).
fn mac(key: &[u8; 32], engine: &str, body: &[u8]) -> [u8; 32] {
    let mut mac = blake3::Hasher::new_keyed(key);
    mac.update(b"toolsmith compiled functions\0");
    mac.update(engine.as_bytes());
    mac.update(b"\0");
    mac.update(body);
    *mac.finalize().as_bytes()
}

impl wasmtime::CacheStore for Functions {
    fn get(&self, key: &[u8]) -> Option<Cow<'_, [u8]>> {
        let found = {
            let s = &mut *self.state();
            s.entries.get_mut(key).map(|(v, stamp)| {
                *stamp = s.recency.touch(key, Some(*stamp));
                v.clone()
            })
        };
        let counter = if found.is_some() {
            &self.hits
        } else {
            &self.misses
        };
        counter.fetch_add(1, Ordering::Relaxed);
        found.map(Cow::Owned)
    }

    fn insert(&self, key: &[u8], value: Vec<u8>) -> bool {
        let size = key.len() + value.len();
        if size > self.max_bytes {
            return false;
        }
        let mut s = self.state();
        let stamp = s.entries.get(key).map(|(old, stamp)| (old.len(), *stamp));
        if let Some((old, _)) = stamp {
            s.bytes -= key.len() + old;
        }
        let now = s.recency.touch(key, stamp.map(|(_, t)| t));
        s.entries.insert(key.to_vec(), (value, now));
        s.bytes += size;
        while s.bytes > self.max_bytes {
            let Some((_, oldest)) = s.recency.order.pop_first() else {
                break;
            };
            if let Some((v, _)) = s.entries.remove(&oldest) {
                s.bytes -= oldest.len() + v.len();
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasmtime::CacheStore;

    #[test]
    fn the_store_serves_what_it_kept_and_stays_within_its_bound() {
        let f = Functions::new(100);
        assert!(f.get(b"a").is_none());
        assert!(f.insert(b"a", vec![1; 40]));
        assert_eq!(f.get(b"a").as_deref(), Some(&[1u8; 40][..]));
        assert!(f.insert(b"b", vec![2; 40]));
        // A third entry pushes the oldest out.
        assert!(f.insert(b"c", vec![3; 40]));
        assert!(f.get(b"a").is_none());
        assert!(f.get(b"b").is_some() && f.get(b"c").is_some());
        assert!(f.state().bytes <= 100);
        // Replacing an entry counts its new size only.
        assert!(f.insert(b"c", vec![4; 10]));
        assert_eq!(f.state().bytes, 41 + 11);
        // Larger than the whole bound: not kept.
        assert!(!f.insert(b"d", vec![0; 200]));
        assert_eq!(
            f.counts(),
            Counts {
                reused: 3,
                compiled: 2
            }
        );
    }

    #[test]
    fn the_entries_used_least_recently_go_first() {
        let f = Functions::new(100);
        assert!(f.insert(b"a", vec![1; 40]) && f.insert(b"b", vec![2; 40]));
        // `a`, stored first, was just used: `b` goes for `c`.
        assert!(f.get(b"a").is_some());
        assert!(f.insert(b"c", vec![3; 40]));
        assert!(f.get(b"b").is_none());
        assert!(f.get(b"a").is_some() && f.get(b"c").is_some());
        let s = f.state();
        assert_eq!(s.entries.len(), s.recency.order.len());
        assert_eq!(s.bytes, 82);
    }

    #[test]
    fn a_saved_store_is_read_back_only_under_its_key_and_engine_and_unchanged() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let path = tmp.path().join("functions.bin");
        let (key, other) = ([7u8; 32], [8u8; 32]);
        let f = Functions::new(1000);
        assert!(f.insert(b"one", vec![1; 10]) && f.insert(b"two", vec![2; 20]));
        f.save(&path, &key, "e1").expect("save");

        let back = Functions::new(1000);
        assert_eq!(back.load(&path, &key, "e1"), Some(2));
        // In the order they were used: the least recent first.
        let order: Vec<Vec<u8>> = back.state().recency.order.values().cloned().collect();
        assert_eq!(order, ["one", "two"].map(|k| k.as_bytes().to_vec()));
        assert_eq!(back.get(b"one").as_deref(), Some(&[1u8; 10][..]));
        assert_eq!(back.get(b"two").as_deref(), Some(&[2u8; 20][..]));

        // Another key, another engine, a changed byte, a cut file: nothing is added.
        for (k, e) in [(&other, "e1"), (&key, "e2")] {
            let none = Functions::new(1000);
            assert_eq!(none.load(&path, k, e), None);
            assert!(none.state().entries.is_empty());
        }
        let good = std::fs::read(&path).expect("read");
        let mut bad = good.clone();
        let last = bad.len() - 1;
        bad[last] ^= 1;
        std::fs::write(&path, &bad).expect("write");
        assert_eq!(Functions::new(1000).load(&path, &key, "e1"), None);
        std::fs::write(&path, &good[..good.len() - 3]).expect("write");
        assert_eq!(Functions::new(1000).load(&path, &key, "e1"), None);
        assert_eq!(
            Functions::new(1000).load(&tmp.path().join("none"), &key, "e1"),
            None
        );
    }
}
