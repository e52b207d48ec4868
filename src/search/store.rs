//! The tools' vectors of one model, keyed by a hash of the text embedded: in memory (int8 with
//! a scale per vector) and in a cache file outside git (`<cache>/search/<model>.vec`), so a
//! restart or a `git pull` embeds only new or changed tools. The file is a cache, never a
//! source of truth: a damaged tail is ignored and rewritten, a missing file rebuilt.
//!
//! File: `TSVC`, u32 dimensions, then records: 16-byte key, f32 scale, dimensions × i8.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// A text's key: the first 16 bytes of its sha256 (each model has its own store and file, so
/// the model is not part of it).
pub type Key = [u8; 16];

pub fn key(text: &str) -> Key {
    crate::index::text_key(text)
}

/// A normalised vector, quantised.
#[derive(Debug, Clone)]
pub struct Vector {
    scale: f32,
    values: Box<[i8]>,
}

impl Vector {
    pub fn quantize(v: &[f32]) -> Vector {
        let max = v.iter().fold(0f32, |m, x| m.max(x.abs()));
        let scale = if max > 0.0 { max / 127.0 } else { 1.0 };
        Vector {
            scale,
            values: v
                .iter()
                .map(|x| (x / scale).round().clamp(-127.0, 127.0) as i8)
                .collect(),
        }
    }

    /// Dot product with a float vector of the same length.
    pub fn dot(&self, q: &[f32]) -> f32 {
        let mut s = 0f32;
        for (a, b) in self.values.iter().zip(q) {
            s += f32::from(*a) * b;
        }
        s * self.scale
    }

    pub fn dims(&self) -> usize {
        self.values.len()
    }
}

/// The vectors of one model.
#[derive(Debug, Default)]
pub struct Store {
    dims: usize,
    vectors: HashMap<Key, Vector>,
    file: Option<PathBuf>,
}

const MAGIC: &[u8; 4] = b"TSVC";

impl Store {
    /// The store of a model, with what its cache file holds (none when `file` is None).
    pub fn open(file: Option<PathBuf>) -> Store {
        let mut s = Store {
            file,
            ..Store::default()
        };
        if let Some(f) = &s.file
            && let Ok(bytes) = std::fs::read(f)
        {
            s.load(&bytes);
        }
        s
    }

    fn load(&mut self, bytes: &[u8]) {
        if bytes.len() < 8 || &bytes[..4] != MAGIC {
            return;
        }
        let dims = u32::from_le_bytes([bytes[4], bytes[5], bytes[6], bytes[7]]) as usize;
        if dims == 0 || dims > 1 << 16 {
            return;
        }
        let rec = 16 + 4 + dims;
        for r in bytes[8..].chunks_exact(rec) {
            let mut k = [0u8; 16];
            k.copy_from_slice(&r[..16]);
            let scale = f32::from_le_bytes([r[16], r[17], r[18], r[19]]);
            if !scale.is_finite() || scale <= 0.0 {
                continue;
            }
            let values = r[20..].iter().map(|&b| b as i8).collect();
            self.vectors.insert(k, Vector { scale, values });
        }
        self.dims = dims;
    }

    pub fn get(&self, k: &Key) -> Option<&Vector> {
        self.vectors.get(k)
    }

    pub fn contains(&self, k: &Key) -> bool {
        self.vectors.contains_key(k)
    }

    pub fn len(&self) -> usize {
        self.vectors.len()
    }

    pub fn is_empty(&self) -> bool {
        self.vectors.is_empty()
    }

    /// Add vectors (and append them to the cache file; a failure to write only logs).
    pub fn insert(&mut self, items: Vec<(Key, Vec<f32>)>) {
        let Some(first) = items.first() else { return };
        let dims = first.1.len();
        if self.dims != dims {
            // Another model's file, or the first vectors: start afresh.
            self.vectors.clear();
            self.dims = dims;
            if let Some(f) = &self.file {
                let _ = std::fs::remove_file(f);
            }
        }
        let mut out = Vec::new();
        for (k, v) in items {
            if v.len() != dims {
                continue;
            }
            let q = Vector::quantize(&v);
            out.extend_from_slice(&k);
            out.extend_from_slice(&q.scale.to_le_bytes());
            out.extend(q.values.iter().map(|&b| b as u8));
            self.vectors.insert(k, q);
        }
        if let Some(f) = &self.file
            && let Err(e) = append(f, dims, &out)
        {
            tracing::debug!(file = %f.display(), error = %e, "embedding cache not written");
        }
    }

    /// Keep only the vectors of `keep` (the tools there are); rewrites the cache file when
    /// more than half of it is stale.
    pub fn retain(&mut self, keep: &std::collections::HashSet<Key>) {
        let before = self.vectors.len();
        self.vectors.retain(|k, _| keep.contains(k));
        if self.vectors.len() * 2 < before
            && let Some(f) = &self.file
        {
            let mut out = Vec::new();
            for (k, v) in &self.vectors {
                out.extend_from_slice(k);
                out.extend_from_slice(&v.scale.to_le_bytes());
                out.extend(v.values.iter().map(|&b| b as u8));
            }
            let _ = std::fs::remove_file(f);
            if let Err(e) = append(f, self.dims, &out) {
                tracing::debug!(file = %f.display(), error = %e, "embedding cache not rewritten");
            }
        }
    }
}

/// Append records to the cache file (creating it with its header); a file whose length is not
/// a whole number of records is cut back first.
fn append(file: &Path, dims: usize, records: &[u8]) -> std::io::Result<()> {
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let rec = 16 + 4 + dims;
    let len = std::fs::metadata(file).map(|m| m.len()).unwrap_or(0) as usize;
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(file)?;
    if len < 8 {
        f.set_len(0)?;
        let mut head = MAGIC.to_vec();
        head.extend_from_slice(&(dims as u32).to_le_bytes());
        f.write_all(&head)?;
    } else if !(len - 8).is_multiple_of(rec) {
        f.set_len((8 + (len - 8) / rec * rec) as u64)?;
    }
    f.write_all(records)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors_survive_a_restart_and_a_damaged_tail_is_dropped() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("search/m.vec");
        let mut s = Store::open(Some(file.clone()));
        let (a, b) = (key("alpha"), key("beta"));
        assert_ne!(a, b);
        s.insert(vec![(a, vec![0.6, 0.8]), (b, vec![1.0, 0.0])]);
        let again = Store::open(Some(file.clone()));
        assert_eq!(again.len(), 2);
        assert!((again.get(&a).unwrap().dot(&[0.6, 0.8]) - 1.0).abs() < 0.02);
        // A write cut short: the whole records stay, the next insert starts at a record.
        let bytes = std::fs::read(&file).unwrap();
        std::fs::write(&file, &bytes[..bytes.len() - 3]).unwrap();
        let mut cut = Store::open(Some(file.clone()));
        assert_eq!(cut.len(), 1);
        cut.insert(vec![(key("gamma"), vec![0.0, 1.0])]);
        assert_eq!(Store::open(Some(file.clone())).len(), 2);
        // Garbage is no store at all, never an error.
        std::fs::write(&file, b"not a cache").unwrap();
        assert!(Store::open(Some(file)).is_empty());
    }
}
