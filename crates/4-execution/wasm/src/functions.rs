//! Compiled functions kept between compilations (Cranelift's incremental compilation cache),
//! so a module that repeats another's functions compiles only what is new.
//!
//! Every Python component embeds the same CPython, every JavaScript component the same
//! engine: tens of thousands of functions whose bodies are byte for byte those of the last
//! component compiled. Cranelift keys each function by a SHA-256 of its IR and the target's
//! flags; a hit skips that function's compilation. The store lives in the server's memory
//! only: an entry is native code, and nothing outside this process can write it (the on-disk
//! compiled-code cache, `cache`, is MAC-checked for the same reason). It is bounded
//! ([`MAX_BYTES`]); past the bound the entries kept longest are dropped first.

use std::borrow::Cow;
use std::collections::{HashMap, VecDeque};
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
    entries: HashMap<Vec<u8>, Vec<u8>>,
    /// Keys in the order they were stored (the oldest is dropped first).
    order: VecDeque<Vec<u8>>,
    bytes: usize,
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

impl wasmtime::CacheStore for Functions {
    fn get(&self, key: &[u8]) -> Option<Cow<'_, [u8]>> {
        let found = self.state().entries.get(key).cloned();
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
        if let Some(old) = s.entries.insert(key.to_vec(), value) {
            s.bytes -= key.len() + old.len();
        } else {
            s.order.push_back(key.to_vec());
        }
        s.bytes += size;
        while s.bytes > self.max_bytes {
            let Some(oldest) = s.order.pop_front() else {
                break;
            };
            if let Some(v) = s.entries.remove(&oldest) {
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
}
