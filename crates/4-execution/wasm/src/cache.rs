//! The compiled-code cache: native code compiled from a verified artifact, kept on disk
//! between starts, bounded in size.
//!
//! # Verified, never trusted
//! A cache entry is native code: loading a forged one runs it inside the server. Each entry
//! (`<artifact-sha>-<engine>.cwasm`, the compiled code exactly as wasmtime serialized it)
//! therefore has a MAC beside it (`….cwasm.mac`): BLAKE3 in keyed mode over the artifact's
//! sha256, the engine key and the compiled bytes, keyed by a random secret kept **outside the
//! cache directory** (`<data dir>/toolsmith/wasm-cache.key`, mode 0600). The artifact's sha256
//! was verified against tool.toml when the entry was made, so an entry is bound to the exact
//! module it was compiled from. On load the entry is opened once and mapped; the MAC is
//! checked over the mapped bytes, and on Linux the code is then mapped from that same open
//! file (its `/proc/self/fd` link: a file renamed over the entry meanwhile is not what is
//! loaded) — only when the file is this user's and nobody else may write it, so that no one
//! else can change its bytes between the check and their use; otherwise the checked bytes
//! are copied and loaded from the copy. Any mismatch — another tool's entry copied over, bytes
//! edited, a foreign engine, a missing MAC — is discarded and the module recompiled.
//!
//! What an attacker who can write the cache directory can do: delete or corrupt entries
//! (costing a recompile), never get native code run. One who can also read the key file (the
//! same user, outside a sandbox) could forge entries, but could equally replace the toolsmith
//! binary. Without a key file (no data dir, unwritable), nothing is cached on disk.
//!
//! The store of compiled functions (`functions`) is saved beside the entries, as
//! `functions-<engine>.bin`, under the same key, and trimmed with them.
//!
//! # Bounded
//! Every rebuild of a tool compiles a new entry (a component embedding an interpreter: about
//! 35 MB). After each new entry the directory is trimmed to [`MAX_BYTES`], the entries used
//! longest ago first (a load refreshes its entry's modification time).

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;
use wasmtime::{Engine, Module};

/// The most the cache directory's entries may hold together (bytes).
pub(super) const MAX_BYTES: u64 = 2 << 30;

/// The size from which an artifact's compilation reads the compiled functions saved by earlier
/// starts and saves them again (`functions`): components embedding an interpreter (18 MB and
/// more), not a Rust tool's module.
const SAVED_FUNCTIONS_FROM: usize = 8 << 20;

/// Where compiled code is kept, under which key, for which engine.
pub(super) struct CodeCache {
    /// None: nothing is cached on disk (no directory, or no key).
    dir: Option<PathBuf>,
    key: Option<Arc<[u8; 32]>>,
    /// The engine's compatibility hash, in every entry's name and MAC.
    engine: String,
    max_bytes: u64,
    /// The engine's store of compiled functions (counted in the log of each compilation),
    /// saved in `dir` after a compilation that added to it.
    functions: Arc<super::functions::Functions>,
    /// Whether the saved store was read (before this start's first compilation).
    functions_read: std::sync::Once,
    /// The artifact size from which a compilation reads and saves the store.
    saved_from: usize,
}

impl CodeCache {
    /// The cache in `dir` for `engine`, keyed by the secret at [`cache_key_path`] (made on
    /// first use); without a key nothing is cached.
    pub(super) fn new(
        engine: &Engine,
        dir: Option<PathBuf>,
        functions: Arc<super::functions::Functions>,
    ) -> CodeCache {
        let key = match &dir {
            Some(_) => {
                let key = cache_key_path().and_then(|p| load_or_create_key(&p));
                if key.is_none() {
                    tracing::warn!(
                        "no key for the compiled-code cache ({:?}): WASM modules are compiled on every start",
                        cache_key_path()
                    );
                }
                key.map(Arc::new)
            }
            None => None,
        };
        CodeCache {
            dir: dir.filter(|_| key.is_some()),
            key,
            engine: engine_id(engine),
            max_bytes: MAX_BYTES,
            functions,
            functions_read: std::sync::Once::new(),
            saved_from: SAVED_FUNCTIONS_FROM,
        }
    }

    /// Where the store of compiled functions is saved, with the key its MAC is made under.
    fn functions_file(&self) -> Option<(PathBuf, &[u8; 32])> {
        let (dir, key) = (self.dir.as_ref()?, self.key.as_deref()?);
        Some((dir.join(format!("functions-{}.bin", self.engine)), key))
    }

    /// Add the compiled functions earlier starts saved to the store, once per start.
    fn read_saved_functions(&self) {
        self.functions_read.call_once(|| {
            let Some((path, key)) = self.functions_file() else {
                return;
            };
            let began = std::time::Instant::now();
            let read = self.functions.load(&path, key, &self.engine);
            tracing::debug!(functions = ?read, took = ?began.elapsed(), "compiled functions of earlier starts read");
        });
    }

    /// Save the store of compiled functions for later starts.
    fn save_functions(&self) {
        let Some((path, key)) = self.functions_file() else {
            return;
        };
        if let Some(parent) = path.parent() {
            let _ = std::fs::create_dir_all(parent);
        }
        let began = std::time::Instant::now();
        match self.functions.save(&path, key, &self.engine) {
            Ok(()) => tracing::debug!(took = ?began.elapsed(), "compiled functions saved"),
            Err(e) => {
                tracing::debug!(error = %e, file = %path.display(), "compiled functions not saved")
            }
        }
    }

    /// Code compiled earlier for exactly this artifact and engine (its MAC checked), or
    /// compiled now and stored as a new entry; its memory images made.
    pub(super) fn compiled<C: Compiled>(
        &self,
        engine: &Engine,
        bytes: &[u8],
        sha: &str,
    ) -> Result<C, String> {
        let began = std::time::Instant::now();
        let compiled = self.load_or_compile::<C>(engine, bytes, sha)?;
        let loaded = began.elapsed();
        if let Err(e) = compiled.initialize_images() {
            tracing::debug!(error = %e, "memory images are made at the first call instead");
        }
        tracing::debug!(?loaded, imaged = ?began.elapsed(), "compiled code ready");
        Ok(compiled)
    }

    /// Code compiled earlier for the artifact whose sha256 is `sha` and this engine, from its
    /// entry (its MAC checked), without the artifact's bytes; its memory images made. None when
    /// there is no usable entry. The entry is bound to that sha: what runs is that artifact's
    /// code, whatever the artifact file holds now.
    pub(super) fn compiled_entry<C: Compiled>(&self, engine: &Engine, sha: &str) -> Option<C> {
        let began = std::time::Instant::now();
        let compiled = self.entry::<C>(engine, sha)?;
        if let Err(e) = compiled.initialize_images() {
            tracing::debug!(error = %e, "memory images are made at the first call instead");
        }
        tracing::debug!(took = ?began.elapsed(), "compiled code ready from its entry");
        Some(compiled)
    }

    /// The entry's file for `sha` (modules and components apart).
    fn entry_file<C: Compiled>(&self, sha: &str) -> Option<PathBuf> {
        self.dir.as_ref().map(|d| {
            d.join(format!(
                "{}-{}{}.cwasm",
                sha.trim_start_matches("sha256:"),
                self.engine,
                C::SUFFIX
            ))
        })
    }

    /// The compiled code of the entry for `sha`, when there is one and its MAC holds.
    fn entry<C: Compiled>(&self, engine: &Engine, sha: &str) -> Option<C> {
        let (f, key) = (self.entry_file::<C>(sha)?, self.key.as_ref()?);
        let tag = std::fs::read(mac_path(&f)).ok()?;
        let file = std::fs::File::open(&f).ok()?;
        // SAFETY: a read-only mapping of the entry, whose bytes are only read here (hashed, or
        // copied); a change to the file while it is mapped can make them wrong, never unsound
        // to read, and the MAC is checked over the very bytes then used.
        let map = unsafe { memmap2::Mmap::map(&file) }.ok()?;
        let began = std::time::Instant::now();
        let verified = verify_entry(key, sha, &self.engine, &map, &tag);
        tracing::debug!(bytes = map.len(), took = ?began.elapsed(), "compiled-code entry checked");
        if !verified {
            tracing::warn!(
                file = %f.display(),
                "discarding a compiled module that does not belong to this artifact (bad integrity record); recompiling"
            );
            return None;
        }
        // SAFETY: these exact bytes carry a valid MAC under our secret key, made for code we
        // compiled (`C::serialize`) from the artifact whose sha256 is `sha`, on an engine with
        // the same compatibility hash (the file name keeps modules and components apart). They
        // are loaded from the same open file only when no one but this user can write it.
        let loaded = match same_file_link(&file) {
            Some(link) => unsafe { C::deserialize_file(engine, &link) },
            None => unsafe { C::deserialize(engine, &map) },
        };
        match loaded {
            Ok(m) => {
                touch(&f);
                Some(m)
            }
            Err(e) => {
                tracing::warn!(file = %f.display(), error = %e, "discarding an unusable compiled module");
                None
            }
        }
    }

    fn load_or_compile<C: Compiled>(
        &self,
        engine: &Engine,
        bytes: &[u8],
        sha: &str,
    ) -> Result<C, String> {
        if let Some(compiled) = self.entry::<C>(engine, sha) {
            return Ok(compiled);
        }
        let file = self.entry_file::<C>(sha);
        // The functions earlier starts compiled, before this start's first compilation of a
        // large artifact (an interpreter: the store is about their code; a small module
        // compiles in milliseconds and leaves the server's memory as it was).
        let large = bytes.len() >= self.saved_from;
        if large {
            self.read_saved_functions();
        }
        let (began, before) = (std::time::Instant::now(), self.functions.counts());
        let module = C::compile(engine, bytes)?;
        let after = self.functions.counts();
        tracing::debug!(
            took = ?began.elapsed(),
            reused = after.reused - before.reused,
            compiled = after.compiled - before.compiled,
            "compiled (functions reused from earlier compilations, and compiled now)"
        );
        if large && after.compiled > before.compiled {
            self.save_functions();
        }
        if let (Some(f), Some(key), Ok(data)) = (&file, &self.key, module.serialize()) {
            if let Some(parent) = f.parent() {
                let _ = std::fs::create_dir_all(parent);
            }
            // The code first, then its MAC: an entry without one is never loaded.
            let mut tag = MAC_MAGIC.to_vec();
            tag.extend_from_slice(&entry_mac(key, sha, &self.engine, &data));
            let _ = crate::platform::write_atomic(f, &data, crate::platform::Atomic::CACHE)
                .and_then(|()| {
                    crate::platform::write_atomic(
                        &mac_path(f),
                        &tag,
                        crate::platform::Atomic::CACHE,
                    )
                });
            self.trim(f);
        }
        Ok(module)
    }

    /// Delete the entries used longest ago until the directory's entries fit in the bound
    /// (`kept`, just written, stays).
    fn trim(&self, kept: &Path) {
        let Some(dir) = &self.dir else { return };
        let Ok(read) = std::fs::read_dir(dir) else {
            return;
        };
        let mut entries: Vec<(SystemTime, u64, PathBuf)> = read
            .flatten()
            .filter(|e| {
                e.path()
                    .extension()
                    .is_some_and(|x| x == "cwasm" || x == "bin")
            })
            .filter_map(|e| {
                let m = e.metadata().ok()?;
                Some((m.modified().ok()?, m.len(), e.path()))
            })
            .collect();
        let mut total: u64 = entries.iter().map(|e| e.1).sum();
        entries.sort();
        for (_, len, path) in entries {
            if total <= self.max_bytes {
                break;
            }
            if path != kept && std::fs::remove_file(&path).is_ok() {
                let _ = std::fs::remove_file(mac_path(&path));
                tracing::debug!(file = %path.display(), "compiled-code cache: dropped the entry used longest ago");
                total -= len;
            }
        }
    }
}

/// Mark an entry used now (what `trim` keeps longest).
fn touch(path: &Path) {
    if let Ok(f) = std::fs::File::options().append(true).open(path) {
        let _ = f.set_modified(SystemTime::now());
    }
}

/// The first bytes of an entry's MAC file, before the 32-byte MAC.
const MAC_MAGIC: &[u8] = b"toolsmith-cwasm-mac-v2\n";

/// Where the MAC of the entry at `entry` is.
fn mac_path(entry: &Path) -> PathBuf {
    let mut p = entry.as_os_str().to_owned();
    p.push(".mac");
    PathBuf::from(p)
}

/// The MAC of a cache entry: binds the compiled bytes to the artifact and engine.
fn entry_mac(key: &[u8; 32], artifact_sha: &str, engine: &str, compiled: &[u8]) -> [u8; 32] {
    let mut mac = blake3::Hasher::new_keyed(key);
    for part in [artifact_sha.as_bytes(), b"\0", engine.as_bytes(), b"\0"] {
        mac.update(part);
    }
    mac.update(compiled);
    *mac.finalize().as_bytes()
}

/// Whether `tag` (an entry's MAC file) holds the MAC of `compiled` for this artifact and engine.
fn verify_entry(
    key: &[u8; 32],
    artifact_sha: &str,
    engine: &str,
    compiled: &[u8],
    tag: &[u8],
) -> bool {
    let Some(tag) = tag.strip_prefix(MAC_MAGIC) else {
        return false;
    };
    let Ok(tag) = <[u8; 32]>::try_from(tag) else {
        return false;
    };
    // Constant-time comparison (`blake3::Hash`'s equality).
    blake3::Hash::from_bytes(entry_mac(key, artifact_sha, engine, compiled))
        == blake3::Hash::from_bytes(tag)
}

/// A path that opens `file` itself (not whatever its name points at by then), when no one
/// but this user can change its bytes: owned by this user, writable by no one else. Linux
/// only (`/proc/self/fd`); None elsewhere, and then the checked bytes are copied.
fn same_file_link(file: &std::fs::File) -> Option<PathBuf> {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::MetadataExt;
        use std::os::unix::io::AsRawFd;
        let meta = file.metadata().ok()?;
        // SAFETY: geteuid has no preconditions and cannot fail.
        let me = unsafe { libc::geteuid() };
        if meta.uid() != me || meta.mode() & 0o022 != 0 {
            return None;
        }
        let link = PathBuf::from(format!("/proc/self/fd/{}", file.as_raw_fd()));
        link.exists().then_some(link)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = file;
        None
    }
}

/// Compiled code the cache holds: a core module or a component.
pub(super) trait Compiled: Sized {
    /// Told apart in the entry's file name.
    const SUFFIX: &'static str;
    fn compile(engine: &Engine, bytes: &[u8]) -> Result<Self, String>;
    fn serialize(&self) -> wasmtime::Result<Vec<u8>>;
    /// # Safety
    /// `bytes` must come from `serialize` on an engine with the same compatibility hash.
    unsafe fn deserialize(engine: &Engine, bytes: &[u8]) -> wasmtime::Result<Self>;
    /// [`deserialize`](Compiled::deserialize), the code mapped from the file at `path`.
    ///
    /// # Safety
    /// As `deserialize`, for the file's bytes, which must not change while it is loaded.
    unsafe fn deserialize_file(engine: &Engine, path: &Path) -> wasmtime::Result<Self>;
    /// Write the copy-on-write images of its linear memories now (on Linux a memfd holding
    /// the initial data: tens of MB for a component embedding an interpreter) instead of
    /// at its first instantiation, which is a call.
    fn initialize_images(&self) -> wasmtime::Result<()>;
}

impl Compiled for Module {
    const SUFFIX: &'static str = "";
    fn compile(engine: &Engine, bytes: &[u8]) -> Result<Self, String> {
        Module::new(engine, bytes).map_err(|e| format!("not a valid WebAssembly module: {e}"))
    }
    fn serialize(&self) -> wasmtime::Result<Vec<u8>> {
        Module::serialize(self)
    }
    unsafe fn deserialize(engine: &Engine, bytes: &[u8]) -> wasmtime::Result<Self> {
        // SAFETY: the caller's promise.
        unsafe { Module::deserialize(engine, bytes) }
    }
    unsafe fn deserialize_file(engine: &Engine, path: &Path) -> wasmtime::Result<Self> {
        // SAFETY: the caller's promise.
        unsafe { Module::deserialize_file(engine, path) }
    }
    fn initialize_images(&self) -> wasmtime::Result<()> {
        self.initialize_copy_on_write_image()
    }
}

impl Compiled for wasmtime::component::Component {
    const SUFFIX: &'static str = "-component";
    fn compile(engine: &Engine, bytes: &[u8]) -> Result<Self, String> {
        wasmtime::component::Component::new(engine, bytes)
            .map_err(|e| format!("not a valid WebAssembly component: {e:#}"))
    }
    fn serialize(&self) -> wasmtime::Result<Vec<u8>> {
        wasmtime::component::Component::serialize(self)
    }
    unsafe fn deserialize(engine: &Engine, bytes: &[u8]) -> wasmtime::Result<Self> {
        // SAFETY: the caller's promise.
        unsafe { wasmtime::component::Component::deserialize(engine, bytes) }
    }
    unsafe fn deserialize_file(engine: &Engine, path: &Path) -> wasmtime::Result<Self> {
        // SAFETY: the caller's promise.
        unsafe { wasmtime::component::Component::deserialize_file(engine, path) }
    }
    fn initialize_images(&self) -> wasmtime::Result<()> {
        self.initialize_copy_on_write_image()
    }
}

/// An engine's compatibility hash, as entries' names and MACs carry it.
fn engine_id(engine: &Engine) -> String {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut h);
    format!("{:016x}", h.finish())
}

/// Where the cache MAC key lives: outside every cache directory.
pub fn cache_key_path() -> Option<PathBuf> {
    dirs::data_local_dir().map(|d| d.join("toolsmith").join("wasm-cache.key"))
}

/// Read the cache key, creating it (32 random bytes, mode 0600) on first use.
fn load_or_create_key(path: &Path) -> Option<[u8; 32]> {
    let read = |p: &Path| -> Option<[u8; 32]> { std::fs::read(p).ok()?.try_into().ok() };
    if let Some(k) = read(path) {
        return Some(k);
    }
    let mut key = [0u8; 32];
    getrandom::fill(&mut key).ok()?;
    std::fs::create_dir_all(path.parent()?).ok()?;
    let mut rnd = [0u8; 8];
    getrandom::fill(&mut rnd).ok()?;
    let tmp = path.with_extension(format!("tmp{}", hex::encode(rnd)));
    {
        use std::io::Write;
        let mut f = crate::platform::create_private(&tmp).ok()?;
        f.write_all(&key).and_then(|()| f.sync_all()).ok()?;
    }
    // Whoever links first wins; everyone then reads the winner's key.
    let _ = std::fs::hard_link(&tmp, path);
    let _ = std::fs::remove_file(&tmp);
    read(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn trimming_drops_the_entries_used_longest_ago_and_keeps_the_new_one() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path().to_path_buf();
        let cache = CodeCache {
            dir: Some(dir.clone()),
            key: None,
            engine: "e".into(),
            max_bytes: 250,
            functions: Arc::new(super::super::functions::Functions::new(0)),
            functions_read: std::sync::Once::new(),
            saved_from: 0,
        };
        let now = SystemTime::now();
        let write = |name: &str, age_s: u64| {
            let p = dir.join(name);
            std::fs::write(&p, [0u8; 100]).expect("write");
            let f = std::fs::File::options()
                .append(true)
                .open(&p)
                .expect("open");
            f.set_modified(now - Duration::from_secs(age_s))
                .expect("mtime");
            p
        };
        let oldest = write("a.cwasm", 300);
        let used = write("b.cwasm", 200);
        let middle = write("c.cwasm", 100);
        let newest = write("d.cwasm", 400);
        std::fs::write(dir.join("key.other"), [0u8; 1000]).expect("write");
        // b was just loaded: it is now the most recently used.
        touch(&used);
        cache.trim(&newest);
        assert!(!oldest.exists(), "the entry used longest ago goes first");
        assert!(!middle.exists(), "then the next, until the entries fit");
        assert!(used.exists() && newest.exists());
        assert!(
            dir.join("key.other").exists(),
            "only entries are counted and removed"
        );
    }

    /// A module returning 42: one type, one function, exported as `run`.
    const MODULE: &[u8] = &[
        0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7f,
        0x03, 0x02, 0x01, 0x00, 0x07, 0x07, 0x01, 0x03, b'r', b'u', b'n', 0x00, 0x00, 0x0a, 0x06,
        0x01, 0x04, 0x00, 0x41, 0x2a, 0x0b,
    ];

    /// A fresh start: an engine with its own store of functions, a cache in `dir` under `key`.
    fn start(dir: &Path, key: [u8; 32]) -> (Engine, CodeCache) {
        let functions = Arc::new(super::super::functions::Functions::new(1 << 20));
        let mut config = wasmtime::Config::new();
        config
            .enable_incremental_compilation(Arc::clone(&functions) as Arc<dyn wasmtime::CacheStore>)
            .expect("incremental");
        let engine = Engine::new(&config).expect("engine");
        let cache = CodeCache {
            dir: Some(dir.to_path_buf()),
            key: Some(Arc::new(key)),
            engine: engine_id(&engine),
            max_bytes: MAX_BYTES,
            functions,
            functions_read: std::sync::Once::new(),
            saved_from: 0,
        };
        (engine, cache)
    }

    #[test]
    fn a_later_start_compiles_only_what_earlier_ones_did_not_and_only_under_the_key() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let (engine, first) = start(tmp.path(), [1; 32]);
        let _: Module = first
            .compiled(&engine, MODULE, "sha256:a")
            .expect("compile");
        let counts = first.functions.counts();
        assert!(counts.compiled > 0 && counts.reused == 0, "{counts:?}");
        let (path, _) = first.functions_file().expect("a file");
        assert!(path.is_file(), "saved after the compilation");

        // A restart, another artifact with the same function: nothing compiled again.
        let (engine, later) = start(tmp.path(), [1; 32]);
        let _: Module = later
            .compiled(&engine, MODULE, "sha256:b")
            .expect("compile");
        let counts = later.functions.counts();
        assert_eq!(counts.compiled, 0, "{counts:?}");
        assert!(counts.reused > 0, "{counts:?}");

        // Under another key the saved store is not read: compiled again (and saved anew).
        let (engine, other) = start(tmp.path(), [2; 32]);
        let _: Module = other
            .compiled(&engine, MODULE, "sha256:c")
            .expect("compile");
        assert!(other.functions.counts().compiled > 0);

        // A changed byte: not read either.
        let mut bytes = std::fs::read(&path).expect("read");
        let last = bytes.len() - 1;
        bytes[last] ^= 0x55;
        std::fs::write(&path, &bytes).expect("write");
        let (engine, edited) = start(tmp.path(), [2; 32]);
        let _: Module = edited
            .compiled(&engine, MODULE, "sha256:d")
            .expect("compile");
        assert!(edited.functions.counts().compiled > 0);
    }
}
