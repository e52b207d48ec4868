//! The WebAssembly runner: wasmtime with a pooling allocator, `InstancePre` kept in memory,
//! compiled code cached on disk (keyed by artifact sha256 and engine settings), and per-call
//! limits on time (epoch interruption), memory (store limits) and output (capped pipes).

use super::{CallOutput, RunError, allowed_roots, inside_roots};
use crate::hashing;
use crate::index::Tool;
use serde_json::Value;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};
use wasmtime::{
    Config, Engine, InstanceAllocationStrategy, Linker, Module, PoolingAllocationConfig, Store,
    StoreLimits, StoreLimitsBuilder,
};
use wasmtime_wasi::p1::WasiP1Ctx;
use wasmtime_wasi::p2::pipe::{MemoryInputPipe, MemoryOutputPipe};
use wasmtime_wasi::{FsPerms, I32Exit, WasiCtxBuilder};

/// One epoch tick: the granularity of time limits.
const TICK: Duration = Duration::from_millis(5);
/// The most memory any one instance may have (a tool's `memory_mb` is capped to this).
pub const MAX_MEMORY_MB: u64 = 1024;

struct Ctx {
    wasi: WasiP1Ctx,
    limits: StoreLimits,
}

/// A verified, compiled module ready to instantiate.
struct Loaded {
    pre: wasmtime::InstancePre<Ctx>,
    /// (size, mtime) of the artifact when it was verified, to skip re-hashing unchanged files.
    stamp: (u64, Option<SystemTime>),
    sha: String,
}

/// Runs WASM tools. Cheap to clone; share one per process.
#[derive(Clone)]
pub struct WasmRunner {
    engine: Engine,
    linker: Arc<Linker<Ctx>>,
    loaded: Arc<Mutex<HashMap<PathBuf, Arc<Loaded>>>>,
    cache_dir: Option<PathBuf>,
    engine_key: String,
}

impl WasmRunner {
    /// Create the engine (and its epoch ticker thread). `cache_dir` holds compiled modules.
    pub fn new(cache_dir: Option<PathBuf>) -> Result<WasmRunner, RunError> {
        let start = |message: String| RunError::Start {
            tool: "(wasm engine)".into(),
            message,
        };
        let mut pool = PoolingAllocationConfig::default();
        pool.total_memories(64)
            .total_tables(64)
            .total_core_instances(64)
            .max_memory_size((MAX_MEMORY_MB as usize) << 20);
        let mut config = Config::new();
        config
            .epoch_interruption(true)
            .allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
        let engine = Engine::new(&config).map_err(|e| start(e.to_string()))?;
        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p1::add_to_linker_sync(&mut linker, |c: &mut Ctx| &mut c.wasi)
            .map_err(|e| start(e.to_string()))?;
        let mut h = std::collections::hash_map::DefaultHasher::new();
        engine.precompile_compatibility_hash().hash(&mut h);
        let engine_key = format!("{:016x}", h.finish());
        let weak = engine.weak();
        std::thread::Builder::new()
            .name("wasm-epoch".into())
            .spawn(move || {
                while let Some(engine) = weak.upgrade() {
                    engine.increment_epoch();
                    drop(engine);
                    std::thread::sleep(TICK);
                }
            })
            .map_err(|e| start(e.to_string()))?;
        Ok(WasmRunner {
            engine,
            linker: Arc::new(linker),
            loaded: Arc::default(),
            cache_dir,
            engine_key,
        })
    }

    /// The default cache directory for compiled modules (outside any git repository).
    pub fn default_cache_dir() -> Option<PathBuf> {
        std::env::var_os("TOOLSMITH_CACHE")
            .map(PathBuf::from)
            .or_else(|| dirs::cache_dir().map(|d| d.join("toolsmith")))
            .map(|d| d.join("wasm"))
    }

    /// Verify and load the module of a tool, using the in-memory and on-disk caches.
    fn load(&self, dir: &Path, tool: &Tool) -> Result<Arc<Loaded>, RunError> {
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
        if let Some(l) = self.loaded.lock().ok().and_then(|m| m.get(&path).cloned()) {
            if l.stamp == stamp && l.sha == expected {
                return Ok(l);
            }
        }
        let bytes = std::fs::read(&path).map_err(|_| RunError::NotBuilt {
            tool: name.clone(),
            path: path.clone(),
        })?;
        let actual = hashing::sha256_bytes(&bytes);
        if actual != expected {
            return Err(RunError::Tampered {
                tool: name.clone(),
                expected,
                actual,
            });
        }
        let module = self
            .compile_cached(&bytes, &actual)
            .map_err(|message| RunError::Start {
                tool: name.clone(),
                message,
            })?;
        let pre = self
            .linker
            .instantiate_pre(&module)
            .map_err(|e| RunError::Start {
                tool: name.clone(),
                message: format!("the module cannot be linked as a WASI preview 1 program: {e}"),
            })?;
        let loaded = Arc::new(Loaded {
            pre,
            stamp,
            sha: actual,
        });
        if let Ok(mut m) = self.loaded.lock() {
            m.insert(path, Arc::clone(&loaded));
        }
        Ok(loaded)
    }

    /// Deserialize a module compiled earlier by this engine, or compile and store it.
    fn compile_cached(&self, bytes: &[u8], sha: &str) -> Result<Module, String> {
        let file = self.cache_dir.as_ref().map(|d| {
            d.join(format!(
                "{}-{}.cwasm",
                sha.trim_start_matches("sha256:"),
                self.engine_key
            ))
        });
        if let Some(f) = &file {
            if f.is_file() {
                // SAFETY: the file was written by `Module::serialize` of an engine with the
                // same compatibility hash (part of the file name), in toolsmith's own cache
                // directory, for an artifact whose sha256 was just verified.
                match unsafe { Module::deserialize_file(&self.engine, f) } {
                    Ok(m) => return Ok(m),
                    Err(e) => {
                        tracing::warn!(file = %f.display(), error = %e, "discarding an unusable compiled module")
                    }
                }
            }
        }
        let module = Module::new(&self.engine, bytes)
            .map_err(|e| format!("not a valid WebAssembly module: {e}"))?;
        if let (Some(f), Ok(data)) = (&file, module.serialize()) {
            if let Some(parent) = f.parent() {
                let _ = std::fs::create_dir_all(parent);
            }
            let tmp = f.with_extension(format!("tmp{}", std::process::id()));
            if std::fs::write(&tmp, data).is_ok() {
                let _ = std::fs::rename(&tmp, f);
            }
        }
        Ok(module)
    }

    /// Verify and compile a tool ahead of its first call (e.g. at server start).
    pub fn prepare(&self, dir: &Path, tool: &Tool) -> Result<(), RunError> {
        self.load(dir, tool).map(|_| ())
    }

    /// Run a WASM tool with JSON arguments on stdin. Blocking: call from a blocking context.
    pub fn call(&self, dir: &Path, tool: &Tool, args: &Value) -> Result<CallOutput, RunError> {
        let m = &tool.manifest;
        let name = m.name.clone();
        let loaded = self.load(dir, tool)?;
        let cap = m.limits.output_bytes() as usize;
        let mem_mb = m.limits.memory_mb().min(MAX_MEMORY_MB);
        let timeout_ms = m.limits.timeout_ms();

        let stdout = MemoryOutputPipe::new(cap + 1);
        let stderr = MemoryOutputPipe::new(cap + 1);
        let mut b = WasiCtxBuilder::new();
        b.stdin(MemoryInputPipe::new(args.to_string().into_bytes()))
            .stdout(stdout.clone())
            .stderr(stderr.clone())
            .arg(&name);
        for var in &m.capabilities.env {
            if let Ok(v) = std::env::var(var) {
                b.env(var, v);
            }
        }
        let roots = allowed_roots();
        for (paths, perms) in [
            (&m.capabilities.read, FsPerms::ReadOnly),
            (&m.capabilities.write, FsPerms::ReadWrite),
        ] {
            for p in paths {
                let path = Path::new(p);
                if !inside_roots(path, &roots) {
                    return Err(RunError::Denied {
                        tool: name,
                        what: format!("the path {p}"),
                        why: "it is not inside TOOLSMITH_ROOTS".into(),
                    });
                }
                b.preopened_dir(path, p, perms)
                    .map_err(|e| RunError::Denied {
                        tool: name.clone(),
                        what: format!("the path {p}"),
                        why: e.to_string(),
                    })?;
            }
        }
        let limits = StoreLimitsBuilder::new()
            .memory_size((mem_mb as usize) << 20)
            .trap_on_grow_failure(true)
            .instances(1)
            .build();
        let mut store = Store::new(
            &self.engine,
            Ctx {
                wasi: b.build_p1(),
                limits,
            },
        );
        store.limiter(|c| &mut c.limits);
        store.set_epoch_deadline((timeout_ms / TICK.as_millis() as u64).max(1) + 1);
        store.epoch_deadline_trap();

        let run = loaded
            .pre
            .instantiate(&mut store)
            .and_then(|i| i.get_typed_func::<(), ()>(&mut store, "_start"))
            .and_then(|f| f.call(&mut store, ()));
        drop(store);
        let out = stdout.contents();
        let err = stderr.contents();
        if out.len() > cap || err.len() > cap {
            return Err(RunError::OutputTooLarge {
                tool: name,
                bytes: cap as u64,
            });
        }
        let stderr_text = String::from_utf8_lossy(&err).trim().to_string();
        match run {
            Ok(()) => Ok(CallOutput::from_stdout(&out, &err)),
            Err(e) => {
                if let Some(exit) = e.downcast_ref::<I32Exit>() {
                    if exit.0 == 0 {
                        return Ok(CallOutput::from_stdout(&out, &err));
                    }
                    return Err(RunError::Failed {
                        tool: name,
                        code: exit.0,
                        stderr: stderr_text,
                    });
                }
                if let Some(trap) = e.downcast_ref::<wasmtime::Trap>() {
                    if *trap == wasmtime::Trap::Interrupt {
                        return Err(RunError::Timeout {
                            tool: name,
                            ms: timeout_ms,
                        });
                    }
                }
                let text = format!("{e:#}");
                if text.contains("forcing trap when growing memory")
                    || text.contains("memory minimum size")
                    || text.contains("exceeds memory limits")
                {
                    return Err(RunError::Memory {
                        tool: name,
                        mb: mem_mb,
                    });
                }
                let message = if stderr_text.is_empty() {
                    text
                } else {
                    format!("{text}\nstderr: {stderr_text}")
                };
                Err(RunError::Trap {
                    tool: name,
                    message,
                })
            }
        }
    }
}
