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

/// The key of `text` (`index::text_key`).
pub fn key(text: &str) -> Key {
    toolsmith_index::text_key(text)
}

/// The int8 form of a normalised vector: (scale, values), `value × scale` ≈ the component.
pub fn quantize(v: &[f32]) -> (f32, Vec<i8>) {
    let max = v.iter().fold(0f32, |m, x| m.max(x.abs()));
    let scale = if max > 0.0 { max / 127.0 } else { 1.0 };
    let values = v
        .iter()
        .map(|x| (x / scale).round().clamp(-127.0, 127.0) as i8)
        .collect();
    (scale, values)
}

/// A query vector in the form the scan multiplies fast: i16 components and their scale (the
/// largest magnitude is as large as a sum over `dims` products of i8 × i16 allows in an i32).
#[derive(Debug, Clone)]
pub struct Query {
    scale: f32,
    values: Vec<i16>,
}

impl Query {
    /// Quantise a query vector (as large as the row width allows without overflow).
    pub fn new(v: &[f32]) -> Query {
        let max = v.iter().fold(0f32, |m, x| m.max(x.abs()));
        let room = (0.99 * i32::MAX as f32 / (127.0 * v.len().max(1) as f32)).min(32767.0);
        let scale = if max > 0.0 { max / room } else { 1.0 };
        Query {
            scale,
            values: v
                .iter()
                .map(|x| (x / scale).round().clamp(-room, room) as i16)
                .collect(),
        }
    }

    /// Its dimensions.
    pub fn dims(&self) -> usize {
        self.values.len()
    }
}

/// Integer dot product (exact; vectorised by the compiler since integer sums reassociate).
fn dot(a: &[i8], b: &[i16]) -> i32 {
    a.iter()
        .zip(b)
        .map(|(&x, &y)| i32::from(x) * i32::from(y))
        .sum()
}

/// Hashes a `Key` by its first 8 bytes: keys are sha256 prefixes, already uniform.
#[derive(Default)]
pub struct KeyHasher(u64);

impl std::hash::Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut b = [0u8; 8];
            b[..chunk.len()].copy_from_slice(chunk);
            self.0 = self.0.rotate_left(5) ^ u64::from_le_bytes(b);
        }
    }
    // The length prefix of the key's slice says nothing (every key has 16 bytes).
    fn write_usize(&mut self, _: usize) {}
}

type Rows = HashMap<Key, u32, std::hash::BuildHasherDefault<KeyHasher>>;

/// The vectors of one model: one matrix (a row per vector, int8, a scale per row) and where
/// each key's row is.
#[derive(Debug, Default)]
pub struct Store {
    dims: usize,
    rows: Rows,
    values: Vec<i8>,
    scales: Vec<f32>,
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
        self.dims = dims;
        let rec = 16 + 4 + dims;
        let records = bytes[8..].chunks_exact(rec);
        self.rows.reserve(records.len());
        self.values.reserve_exact(records.len() * dims);
        self.scales.reserve_exact(records.len());
        for r in records {
            let mut k = [0u8; 16];
            k.copy_from_slice(&r[..16]);
            let scale = f32::from_le_bytes([r[16], r[17], r[18], r[19]]);
            if !scale.is_finite() || scale <= 0.0 {
                continue;
            }
            self.put(k, scale, r[20..].iter().map(|&b| b as i8));
        }
    }

    /// Store a row under `k` (replacing the row it had).
    fn put(&mut self, k: Key, scale: f32, values: impl Iterator<Item = i8>) {
        match self.rows.get(&k) {
            Some(&r) => {
                let r = r as usize;
                for (o, v) in self.values[r * self.dims..(r + 1) * self.dims]
                    .iter_mut()
                    .zip(values)
                {
                    *o = v;
                }
                self.scales[r] = scale;
            }
            None => {
                self.rows.insert(k, self.scales.len() as u32);
                self.values.extend(values.take(self.dims));
                self.scales.push(scale);
            }
        }
    }

    /// The row of `k`'s vector.
    pub fn row(&self, k: &Key) -> Option<u32> {
        self.rows.get(k).copied()
    }

    /// Cosine of row `r` (a normalised vector) and the normalised query `q`.
    pub fn similarity(&self, r: u32, q: &Query) -> f32 {
        let r = r as usize;
        let row = &self.values[r * self.dims..(r + 1) * self.dims];
        dot(row, &q.values) as f32 * self.scales[r] * q.scale
    }

    /// Cosine of two rows (both normalised vectors).
    pub fn between(&self, a: u32, b: u32) -> f32 {
        let (a, b) = (a as usize, b as usize);
        let ra = &self.values[a * self.dims..(a + 1) * self.dims];
        let rb = &self.values[b * self.dims..(b + 1) * self.dims];
        let dot: i32 = ra
            .iter()
            .zip(rb)
            .map(|(&x, &y)| i32::from(x) * i32::from(y))
            .sum();
        dot as f32 * self.scales[a] * self.scales[b]
    }

    /// Dimensions of the vectors held (0: none yet).
    /// The dimensions of its vectors.
    pub fn dims(&self) -> usize {
        self.dims
    }

    /// Whether it holds the vector of that key.
    pub fn contains(&self, k: &Key) -> bool {
        self.rows.contains_key(k)
    }

    /// How many vectors it holds.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Add vectors (and append them to the cache file; a failure to write only logs).
    pub fn insert(&mut self, items: Vec<(Key, Vec<f32>)>) {
        let Some(first) = items.first() else { return };
        let dims = first.1.len();
        if self.dims != dims {
            // Another model's file, or the first vectors: start afresh.
            self.rows.clear();
            self.values = Vec::new();
            self.scales = Vec::new();
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
            let (scale, values) = quantize(&v);
            out.extend_from_slice(&k);
            out.extend_from_slice(&scale.to_le_bytes());
            out.extend(values.iter().map(|&b| b as u8));
            self.put(k, scale, values.into_iter());
        }
        if let Some(f) = &self.file
            && let Err(e) = append(f, dims, &out)
        {
            tracing::debug!(file = %f.display(), error = %e, "embedding cache not written");
        }
    }

    /// Keep only the vectors of `keep` (the tools there are), compacting the matrix; rewrites
    /// the cache file when more than half of it is stale.
    pub fn retain(&mut self, keep: &std::collections::HashSet<Key>) {
        let before = self.rows.len();
        let mut kept: Vec<(Key, u32)> = self
            .rows
            .iter()
            .filter(|(k, _)| keep.contains(*k))
            .map(|(k, &r)| (*k, r))
            .collect();
        if kept.len() == before {
            return;
        }
        kept.sort_by_key(|&(_, r)| r);
        let dims = self.dims;
        let mut rows = Rows::default();
        rows.reserve(kept.len());
        for (new, &(k, old)) in kept.iter().enumerate() {
            let (new, old) = (new, old as usize);
            self.values
                .copy_within(old * dims..(old + 1) * dims, new * dims);
            self.scales[new] = self.scales[old];
            rows.insert(k, new as u32);
        }
        self.values.truncate(kept.len() * dims);
        self.values.shrink_to_fit();
        self.scales.truncate(kept.len());
        self.scales.shrink_to_fit();
        self.rows = rows;
        if self.rows.len() * 2 < before
            && let Some(f) = &self.file
        {
            let mut out = Vec::with_capacity(kept.len() * (20 + dims));
            for (r, (k, _)) in kept.iter().enumerate() {
                out.extend_from_slice(k);
                out.extend_from_slice(&self.scales[r].to_le_bytes());
                out.extend(
                    self.values[r * dims..(r + 1) * dims]
                        .iter()
                        .map(|&b| b as u8),
                );
            }
            let _ = std::fs::remove_file(f);
            if let Err(e) = append(f, dims, &out) {
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
        let r = again.row(&a).unwrap();
        assert!((again.similarity(r, &Query::new(&[0.6, 0.8])) - 1.0).abs() < 0.02);
        assert!(again.similarity(r, &Query::new(&[-0.8, 0.6])).abs() < 0.02);
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

    #[test]
    fn retain_compacts_rows_and_keeps_each_vector_with_its_key() {
        let mut s = Store::open(None);
        let keys: Vec<Key> = (0..6).map(|i| key(&format!("t{i}"))).collect();
        let vecs: Vec<Vec<f32>> = (0..6)
            .map(|i| {
                let a = i as f32 * 0.5;
                vec![a.cos(), a.sin(), 0.0]
            })
            .collect();
        s.insert(keys.iter().copied().zip(vecs.clone()).collect());
        let keep: std::collections::HashSet<Key> = [keys[1], keys[4], keys[5]].into();
        s.retain(&keep);
        assert_eq!(s.len(), 3);
        assert!(!s.contains(&keys[0]));
        for i in [1, 4, 5] {
            let r = s.row(&keys[i]).unwrap();
            assert!(r < 3);
            let sim = s.similarity(r, &Query::new(&vecs[i]));
            assert!((sim - 1.0).abs() < 0.02, "{i}: {sim}");
        }
        // Large dimensions: the query's scale leaves room in the i32 sum.
        let big: Vec<f32> = vec![1.0 / (3072f32).sqrt(); 3072];
        let mut b = Store::open(None);
        b.insert(vec![(keys[0], big.clone())]);
        let sim = b.similarity(0, &Query::new(&big));
        assert!((sim - 1.0).abs() < 0.02, "{sim}");
    }
}
