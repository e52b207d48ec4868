//! Loading a tool's artifact: verified against tool.toml's sha256 (or known unchanged since it
//! was), its compiled code from the cache (`cache`), the loaded form kept within the memory
//! budget (`budget`), one load per artifact at a time.

use super::{Compiled, RunError, WasmRunner, artifact, budget};
use crate::hashing;
use crate::index::Tool;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

/// (size, mtime) of an artifact's file when it was verified, to skip re-hashing unchanged files.
pub(super) type Stamp = (u64, Option<SystemTime>);

/// What a loaded artifact was verified as: the file's stamp then, and its sha256.
pub(super) trait Verified: Send + Sync + 'static {
    fn verified(&self) -> (&Stamp, &str);
    /// The size of its compiled code's mapping (bytes).
    fn code_bytes(&self) -> u64;
}

/// What verifying an artifact found, kept after its loaded form is unloaded for the memory
/// budget: loaded again while its file is unchanged (the same stamp) and tool.toml records the
/// same sha256, it is made from the compiled-code entry bound to that sha256 (MAC-checked)
/// without reading and hashing the artifact again. What runs is the code of the artifact with
/// that sha256 whatever the file holds; the stamp keeps a changed file's own verification
/// (and its "tampered" refusal) as before.
#[derive(Clone)]
pub(super) struct Known {
    stamp: Stamp,
    sha: String,
    /// What the artifact's bytes said (see `artifact`).
    facts: artifact::Facts,
}

/// What a tool's loaded form is made from: the artifact's bytes, read and verified now, or
/// what an earlier verification of the same unchanged file found.
#[derive(Clone, Copy)]
pub(super) enum Source<'a> {
    Bytes(&'a [u8]),
    Known(&'a artifact::Facts),
}

impl Source<'_> {
    /// Whether instantiating it runs none of its code (no start function).
    pub(super) fn inert(&self) -> bool {
        match self {
            Source::Bytes(b) => !artifact::runs_at_instantiation(b),
            Source::Known(f) => f.inert,
        }
    }
}

impl WasmRunner {
    /// The loaded form of a tool's artifact kept in the loaded set, when it was verified from
    /// the file as it is now; else the one `make` builds from the artifact's bytes once their
    /// sha256 is tool.toml's (one load per artifact at a time: a call arriving meanwhile waits
    /// for it), kept in the set within the memory budget.
    pub(super) fn load_verified<L: Verified>(
        &self,
        dir: &Path,
        tool: &Tool,
        make: impl Fn(Source<'_>, String, Stamp) -> Result<L, RunError>,
    ) -> Result<Arc<L>, RunError> {
        let name = &tool.manifest.name;
        let path = dir.join(tool.manifest.artifact());
        let meta = std::fs::metadata(&path).map_err(|_| RunError::NotBuilt {
            tool: name.clone(),
            path: path.clone(),
        })?;
        let stamp = (meta.len(), meta.modified().ok());
        let expected = tool
            .manifest
            .hashes
            .artifact
            .clone()
            .ok_or_else(|| RunError::Unverified { tool: name.clone() })?;
        let cached = || {
            self.resident
                .get::<L>(&path, |l| l.verified() == (&stamp, expected.as_str()))
        };
        if let Some(l) = cached() {
            return Ok(l);
        }
        let lock = self.loading_lock(&path);
        let _loading = lock.lock();
        if let Some(l) = cached() {
            return Ok(l);
        }
        let began = std::time::Instant::now();
        // Unloaded for the budget, the file unchanged: from its compiled-code entry.
        let known = self
            .known
            .lock()
            .ok()
            .and_then(|k| k.get(&path).cloned())
            .filter(|k| k.stamp == stamp && k.sha == expected);
        if let Some(k) = known {
            match make(Source::Known(&k.facts), k.sha.clone(), stamp) {
                Ok(l) => {
                    let loaded = Arc::new(l);
                    let size = loaded.code_bytes() + k.facts.data_bytes;
                    tracing::debug!(tool = %name, size, loaded = ?began.elapsed(), "loaded again from its compiled code, the artifact unchanged");
                    self.resident.insert(path, name, Arc::clone(&loaded), size);
                    budget::give_back();
                    return Ok(loaded);
                }
                Err(e) => {
                    tracing::debug!(tool = %name, error = %e, "verifying the artifact again")
                }
            }
        }
        let bytes = std::fs::read(&path).map_err(|_| RunError::NotBuilt {
            tool: name.clone(),
            path: path.clone(),
        })?;
        let actual = hashing::sha256_bytes(&bytes);
        let hashed = began.elapsed();
        if actual != expected {
            return Err(RunError::Tampered {
                tool: name.clone(),
                expected,
                actual,
            });
        }
        let loaded = Arc::new(make(Source::Bytes(&bytes), actual.clone(), stamp)?);
        let facts = artifact::Facts::of(&bytes);
        // What it holds resident: its code's mapping, and the initial data its memory
        // images hold (a copy of the data segments).
        let size = loaded.code_bytes() + facts.data_bytes;
        drop(bytes);
        if let Ok(mut k) = self.known.lock() {
            k.insert(
                path.clone(),
                Known {
                    stamp,
                    sha: actual,
                    facts,
                },
            );
        }
        tracing::debug!(tool = %name, size, ?hashed, loaded = ?began.elapsed(), "artifact verified and loaded");
        self.resident.insert(path, name, Arc::clone(&loaded), size);
        budget::give_back();
        Ok(loaded)
    }

    /// The lock held while the artifact at `path` is loaded.
    fn loading_lock(&self, path: &Path) -> Arc<Mutex<()>> {
        match self.loading.lock() {
            Ok(mut m) => Arc::clone(m.entry(path.to_path_buf()).or_default()),
            Err(_) => Arc::default(),
        }
    }

    /// Verified compiled code for an artifact whose sha256 is `sha` (see `cache`): from its
    /// bytes (compiled now, or the entry for them), or — an artifact known unchanged — from
    /// its entry only.
    pub(super) fn compile_cached<C: Compiled>(
        &self,
        source: Source<'_>,
        sha: &str,
    ) -> Result<C, String> {
        match source {
            Source::Bytes(bytes) => self.cache.compiled::<C>(&self.engine, bytes, sha),
            Source::Known(_) => self
                .cache
                .compiled_entry::<C>(&self.engine, sha)
                .ok_or_else(|| "no compiled-code entry for it".to_string()),
        }
    }
}
