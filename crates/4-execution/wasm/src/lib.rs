//! The WebAssembly runner: wasmtime with a pooling allocator, `InstancePre` kept in memory,
//! compiled code cached on disk (keyed by artifact sha256 and engine settings), and per-call
//! limits on time (epoch interruption), memory (store limits) and output (capped pipes).
//!
//! The compiled-code cache is verified, never trusted: see `cache`. What stays loaded is
//! bounded by a memory budget, the tools used least recently unloaded first: see `budget`.
//! `wit` maps a component function's WIT types to JSON. The only crate that compiles wasmtime
//! for calls (the builds' generator reads `wit::form` from here).

#![deny(missing_docs)]

// The crates below, under the names the code map gives them.
use toolsmith_call as call;
use toolsmith_config as config;
use toolsmith_hashing as hashing;
use toolsmith_index as index;
use toolsmith_manifest as manifest;
use toolsmith_platform as platform;
use toolsmith_sandbox as sandbox;
use toolsmith_telemetry as telemetry;

pub mod wit;

pub(crate) use crate::call::{CallOutput, Granted, RunError, TRACEBACK, lines};
use crate::sandbox::inside_roots;

mod artifact;
mod budget;
mod cache;
pub mod component;
mod functions;
mod http;
mod load;

use crate::index::Tool;
use budget::Resident;
pub use budget::Usage;
pub use cache::cache_key_path;
use cache::{CodeCache, Compiled};
use load::{Known, Source, Stamp, Verified};
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use wasmtime::{
    Config, Engine, InstanceAllocationStrategy, Linker, Module, PoolingAllocationConfig,
    ResourceLimiter, Store, StoreLimits, StoreLimitsBuilder,
};
use wasmtime_wasi::p1::WasiP1Ctx;
use wasmtime_wasi::p2::pipe::{MemoryInputPipe, MemoryOutputPipe};
use wasmtime_wasi::{FsPerms, I32Exit, WasiCtxBuilder};

/// One epoch tick: the granularity of time limits.
const TICK: Duration = Duration::from_millis(5);
/// The most memory any one instance may have (a tool's `memory_mb` is capped to this).
pub const MAX_MEMORY_MB: u64 = 1024;

struct ModuleState {
    wasi: WasiP1Ctx,
    limits: Limits,
}

/// The store's limits, remembering whether a memory request was refused: that is how a call
/// that ran out of memory is told apart from any other trap (no matching of error text).
struct Limits {
    inner: StoreLimits,
    memory_refused: bool,
}

impl Limits {
    fn new(inner: StoreLimits) -> Limits {
        Limits {
            inner,
            memory_refused: false,
        }
    }
}

impl ResourceLimiter for Limits {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let r = self.inner.memory_growing(current, desired, maximum);
        if !matches!(r, Ok(true)) {
            self.memory_refused = true;
        }
        r
    }

    fn table_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        self.inner.table_growing(current, desired, maximum)
    }

    fn instances(&self) -> usize {
        self.inner.instances()
    }

    fn tables(&self) -> usize {
        self.inner.tables()
    }

    fn memories(&self) -> usize {
        self.inner.memories()
    }
}

/// A verified, compiled module ready to instantiate.
struct Loaded {
    pre: wasmtime::InstancePre<ModuleState>,
    /// Instantiating it runs none of its code (no start function): `prepare` may instantiate
    /// it once ahead of its first call.
    inert: bool,
    stamp: Stamp,
    sha: String,
}

impl Verified for Loaded {
    fn verified(&self) -> (&Stamp, &str) {
        (&self.stamp, &self.sha)
    }
    fn code_bytes(&self) -> u64 {
        artifact::span(self.pre.module().image_range())
    }
}

/// Runs WASM tools. Cheap to clone; share one per process.
#[derive(Clone)]
pub struct WasmRunner {
    engine: Engine,
    linker: Arc<Linker<ModuleState>>,
    /// Components (`[run] world`): their own linker (WASI 0.2).
    component_linker: Arc<wasmtime::component::Linker<component::ComponentState>>,
    /// The loaded modules and components, within the memory budget.
    resident: Arc<Resident>,
    /// Compiled code on disk.
    cache: Arc<CodeCache>,
    /// Directories tools may be granted (`Config::roots`).
    roots: Arc<[PathBuf]>,
    /// Calls running now: the epoch ticker ticks only while there are some.
    ticking: Arc<Ticking>,
    /// Per artifact, held while it is verified and compiled or loaded from the cache, so a
    /// call arriving while the server prepares the same tool waits for that work instead of
    /// doing it again beside it.
    loading: Arc<Mutex<HashMap<PathBuf, Arc<Mutex<()>>>>>,
    /// Per artifact file, what its last verified load found (see [`Known`]).
    known: Arc<Mutex<HashMap<PathBuf, Known>>>,
}

/// How many WASM calls run, and the ticker's wake-up when the first one starts.
#[derive(Default)]
struct Ticking {
    calls: Mutex<usize>,
    wake: std::sync::Condvar,
}

impl Ticking {
    fn calls(&self) -> std::sync::MutexGuard<'_, usize> {
        self.calls.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The epoch ticker of `engine`: a tick every `TICK` while a call runs, none while the
    /// engine is idle (it checks once a second whether the engine is gone).
    fn run(&self, engine: wasmtime::EngineWeak) {
        loop {
            {
                let mut calls = self.calls();
                while *calls == 0 {
                    calls = match self.wake.wait_timeout(calls, Duration::from_secs(1)) {
                        Ok((g, _)) => g,
                        Err(p) => p.into_inner().0,
                    };
                    if engine.upgrade().is_none() {
                        return;
                    }
                }
            }
            let Some(e) = engine.upgrade() else { return };
            e.increment_epoch();
            drop(e);
            std::thread::sleep(TICK);
        }
    }
}

/// A call running: counted while it lives.
struct Running<'a>(&'a Ticking);

impl<'a> Running<'a> {
    fn start(t: &'a Ticking) -> Running<'a> {
        *t.calls() += 1;
        t.wake.notify_one();
        Running(t)
    }
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        let mut calls = self.0.calls();
        *calls = calls.saturating_sub(1);
    }
}

/// How far [`WasmRunner::prepare`] got ahead of a tool's first call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prepared {
    /// Verified, compiled code loaded, and instantiated once (its memory image in the pool).
    Instantiated,
    /// Verified and compiled code loaded; its instantiation runs its code (a start function)
    /// or failed, so its first call instantiates it.
    Loaded,
}

impl WasmRunner {
    /// Create the engine (and its epoch ticker thread, ticking while calls run). `cache_dir` holds compiled modules;
    /// declared paths must lie inside `roots`.
    pub fn new(cache_dir: Option<PathBuf>, roots: Vec<PathBuf>) -> Result<WasmRunner, RunError> {
        let start = |message: String| RunError::Start {
            tool: "(wasm engine)".into(),
            message,
        };
        budget::tune_allocator();
        let mut pool = PoolingAllocationConfig::default();
        pool.total_memories(64)
            .total_tables(64)
            .total_core_instances(64)
            .max_memory_size((MAX_MEMORY_MB as usize) << 20);
        let mut config = Config::new();
        config
            .epoch_interruption(true)
            .allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
        // Functions compiled once are reused by every later compilation in this server: a
        // second component embedding the same interpreter compiles only its own code.
        let functions = Arc::new(functions::Functions::new(functions::MAX_BYTES));
        config
            .enable_incremental_compilation(Arc::clone(&functions) as Arc<dyn wasmtime::CacheStore>)
            .map_err(|e| start(e.to_string()))?;
        let engine = Engine::new(&config).map_err(|e| start(e.to_string()))?;
        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p1::add_to_linker_sync(&mut linker, |c: &mut ModuleState| &mut c.wasi)
            .map_err(|e| start(e.to_string()))?;
        let component_linker = component::linker(&engine).map_err(|e| start(e.to_string()))?;
        let weak = engine.weak();
        let ticking = Arc::new(Ticking::default());
        let ticker = Arc::clone(&ticking);
        std::thread::Builder::new()
            .name("wasm-epoch".into())
            .spawn(move || ticker.run(weak))
            .map_err(|e| start(e.to_string()))?;
        let cache = Arc::new(CodeCache::new(&engine, cache_dir, functions));
        Ok(WasmRunner {
            engine,
            linker: Arc::new(linker),
            component_linker: Arc::new(component_linker),
            resident: Arc::new(Resident::new(
                crate::config::DEFAULT_WASM_MEMORY_MB.saturating_mul(1 << 20),
            )),
            cache,
            roots: roots.into(),
            ticking,
            loading: Arc::default(),
            known: Arc::default(),
        })
    }

    /// The same runner keeping what it loads within `mib` MiB (`TOOLSMITH_WASM_MEMORY`;
    /// see `budget`). Call before its first load: it starts an empty loaded set.
    pub fn with_memory_budget(mut self, mib: u64) -> WasmRunner {
        self.resident = Arc::new(Resident::new(mib.saturating_mul(1 << 20)));
        self
    }

    /// What is loaded now, its accounted size, and how often tools were unloaded for the
    /// budget and loaded again.
    pub fn resident(&self) -> Usage {
        self.resident.usage()
    }

    /// Verify and load the module of a tool, using the in-memory and on-disk caches.
    fn load(&self, dir: &Path, tool: &Tool) -> Result<Arc<Loaded>, RunError> {
        let name = &tool.manifest.name;
        self.load_verified(dir, tool, |source, sha, stamp| {
            let module = self
                .compile_cached::<Module>(source, &sha)
                .map_err(|message| RunError::Start {
                    tool: name.clone(),
                    message,
                })?;
            let pre = self
                .linker
                .instantiate_pre(&module)
                .map_err(|e| RunError::Start {
                    tool: name.clone(),
                    message: format!(
                        "the module cannot be linked as a WASI preview 1 program: {e}"
                    ),
                })?;
            Ok(Loaded {
                pre,
                inert: source.inert(),
                stamp,
                sha,
            })
        })
    }

    /// A call's approved capabilities onto its WASI context: `env` and secrets as environment
    /// values, `read`/`write` roots as preopened directories (each inside TOOLSMITH_ROOTS).
    fn grant(&self, b: &mut WasiCtxBuilder, tool: &crate::Granted) -> Result<(), RunError> {
        let m = &tool.manifest;
        let name = m.name.clone();
        for var in &m.capabilities.env {
            if let Ok(v) = std::env::var(var) {
                b.env(var, v);
            }
        }
        for (var, v) in tool.secrets.vars() {
            b.env(var, v);
        }
        for (paths, perms) in [
            (&m.capabilities.read, FsPerms::ReadOnly),
            (&m.capabilities.write, FsPerms::ReadWrite),
        ] {
            for p in paths {
                let path = Path::new(p);
                if !inside_roots(path, &self.roots) {
                    return Err(RunError::Denied {
                        tool: name.clone(),
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
        Ok(())
    }

    /// Verify and compile a tool ahead of its first call (e.g. at server start), and, when
    /// instantiating it runs none of its code, instantiate it once: its first instance
    /// (memory image mapped into a slot of the pool, which keeps it for the next instance of
    /// the same artifact) is then made here instead of in its first call. The throwaway
    /// instance has no grant; a module's deadline is already passed (were any of its code to
    /// run, it would trap at once), a component's two ticks away (see `instantiate_once`).
    pub fn prepare(&self, dir: &Path, tool: &Tool) -> Result<Prepared, RunError> {
        let instantiated = if tool.manifest.is_component() {
            let loaded = self.load_component(dir, tool)?;
            loaded.inert && self.instantiate_once(&loaded, tool)
        } else {
            let loaded = self.load(dir, tool)?;
            loaded.inert
                && {
                    // No deadline set: it is already passed.
                    let mut store = self.module_store(tool, WasiCtxBuilder::new().build_p1());
                    match loaded.pre.instantiate(&mut store) {
                        Ok(_) => true,
                        Err(e) => {
                            tracing::debug!(tool = %tool.manifest.name, "instantiating ahead failed: {e}");
                            false
                        }
                    }
                }
        };
        Ok(if instantiated {
            Prepared::Instantiated
        } else {
            Prepared::Loaded
        })
    }

    /// A store for one instance of a module tool: its memory limit (growth past it traps),
    /// one instance, interruption at the epoch deadline (none set yet: already passed).
    fn module_store(&self, tool: &Tool, wasi: WasiP1Ctx) -> Store<ModuleState> {
        let mem_mb = tool.manifest.limits.memory_mb().min(MAX_MEMORY_MB);
        let limits = Limits::new(
            StoreLimitsBuilder::new()
                .memory_size((mem_mb as usize) << 20)
                .trap_on_grow_failure(true)
                .instances(1)
                .build(),
        );
        let mut store = Store::new(&self.engine, ModuleState { wasi, limits });
        store.limiter(|c| &mut c.limits);
        store.epoch_deadline_trap();
        store
    }

    /// Run a WASM tool with JSON arguments on stdin. Blocking: call from a blocking context.
    pub fn call(
        &self,
        dir: &Path,
        tool: &crate::Granted,
        args: &Value,
    ) -> Result<CallOutput, RunError> {
        let _running = Running::start(&self.ticking);
        if tool.manifest.is_component() {
            return self.call_component(dir, tool, args);
        }
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
        self.grant(&mut b, tool)?;
        let mut store = self.module_store(tool, b.build_p1());
        store.set_epoch_deadline((timeout_ms / TICK.as_millis() as u64).max(1) + 1);

        let run = crate::telemetry::stage("sandbox start")
            .enter(|| loaded.pre.instantiate(&mut store))
            .and_then(|i| i.get_typed_func::<(), ()>(&mut store, "_start"))
            .and_then(|f| f.call(&mut store, ()));
        let memory_refused = store.data().limits.memory_refused;
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
                Err(failure(
                    e,
                    name,
                    timeout_ms,
                    memory_refused.then_some(mem_mb),
                    stderr_text,
                ))
            }
        }
    }
}

/// Why a call that did not return ended: its time ran out, its memory, or a trap.
fn failure(
    e: wasmtime::Error,
    tool: String,
    timeout_ms: u64,
    memory_refused_mb: Option<u64>,
    stderr_text: String,
) -> RunError {
    if let Some(trap) = e.downcast_ref::<wasmtime::Trap>()
        && *trap == wasmtime::Trap::Interrupt
    {
        return RunError::Timeout {
            tool,
            ms: timeout_ms,
        };
    }
    if let Some(mb) = memory_refused_mb {
        return RunError::Memory { tool, mb };
    }
    // A Python component's uncaught exception: its traceback says it all, not the wasm frames
    // of the interpreter that printed it.
    if let Some(at) = stderr_text.find(crate::TRACEBACK) {
        return RunError::Trap {
            tool,
            message: stderr_text[at..].trim().to_string(),
        };
    }
    let text = format!("{e:#}");
    let message = if stderr_text.is_empty() {
        text
    } else {
        format!("{text}\nstderr: {stderr_text}")
    };
    RunError::Trap { tool, message }
}
