//! The application core shared by the CLI and the MCP server: one toolbox, its live index,
//! the configuration and the runners (with the processes they keep: warm workers, spares).
//! Dispatches a tool call to the runner for the tool's kind.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

// The crates below, under the names the code map gives them.
use toolsmith_approval as approval;
use toolsmith_config as config;
use toolsmith_deps as deps;
use toolsmith_error as error;
use toolsmith_index as index;
use toolsmith_manifest as manifest;
use toolsmith_platform as platform;
use toolsmith_runner as runner;
use toolsmith_search as search;
use toolsmith_telemetry as telemetry;
use toolsmith_toolbox as toolbox;
use toolsmith_trust as trust;
use toolsmith_wasm as wasm;

use crate::config::Config;
use crate::index::{Index, Origin, Tool};
use crate::manifest::Kind;
use crate::runner::host::Host;
use crate::runner::{CallOutput, RunError, Scripts};
use crate::toolbox::Toolbox;
use crate::wasm::WasmRunner;
use futures::future::BoxFuture;
use serde_json::Value;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

mod calls;
pub mod examples;
pub mod pipeline;
mod run;
pub use calls::{CallError, check_arguments};

/// How deep pipelines may nest.
pub const MAX_PIPELINE_DEPTH: usize = 8;

/// How many of the tools a toolbox used most a server starting on it makes ready (their
/// fork servers or spares; the pool's count and memory bounds hold as well).
pub const PRESTART: usize = 4;
/// A WASM artifact larger than this (bytes) is prepared at start only when it is among the
/// tools used most (`App::prepare_wasm`): a Rust tool is well below, a Python or JavaScript
/// component (an interpreter inside) far above.
const LARGE_ARTIFACT: u64 = 4 << 20;

/// What runs the servers of MCP entries (`kind = "mcp"`) and calls their tools: the MCP
/// layer's client (`mcp::upstream::Pool`), given to the app when it is built
/// (`App::with_upstream`) by what serves or calls — the server and every CLI command alike. Each call it gets has passed the gates as its entry: the
/// entry's files verified, its version trusted, its grants decided by `approval::admit`.
pub trait Upstream: Send + Sync {
    /// Call the server tool `tool` of the entry `entry` (admitted) living in `dir`.
    fn call<'a>(
        &'a self,
        dir: &'a std::path::Path,
        entry: &'a crate::runner::Granted,
        tool: &'a str,
        args: Value,
        host: &'a dyn Host,
    ) -> BoxFuture<'a, Result<CallOutput, RunError>>;
    /// Ask the entry's server for its tools now (starting it when it is not running) and
    /// cache the listing; the server's tool names.
    fn list<'a>(
        &'a self,
        dir: &'a std::path::Path,
        entry: &'a crate::runner::Granted,
    ) -> BoxFuture<'a, Result<Vec<String>, RunError>>;
    /// Stop the server of one entry (it changed, or was deleted).
    fn stop(&self, entry: &str);
    /// Stop every server (shutdown).
    fn stop_all(&self);
}

/// The toolbox, its index, the configuration and the runners.
pub struct App {
    /// The toolbox.
    pub toolbox: Toolbox,
    config: Arc<Config>,
    /// Script tools' runner and the processes it keeps (workers, spares).
    scripts: Scripts,
    index: Arc<RwLock<Arc<Index>>>,
    /// Whether the index has been built (see `new_deferred`).
    ready: Arc<(std::sync::Mutex<bool>, std::sync::Condvar)>,
    generation: AtomicU64,
    wasm: std::sync::OnceLock<Result<WasmRunner, String>>,
    /// This person's private directory (approvals, secrets, audit): `Config::data_dir`.
    personal: std::path::PathBuf,
    /// The semantic half of search: the configured embeddings and the tools' vectors.
    semantic: Arc<crate::search::Semantic>,
    /// The client of MCP entries' servers, given when the app is built (`with_upstream`).
    upstream: Option<Arc<dyn Upstream>>,
    /// How many calls (from a client, not nested) run now: a server's start-up work waits
    /// for none (`wait_no_calls`), so a first call has the processor to itself.
    running: Arc<(std::sync::Mutex<usize>, std::sync::Condvar)>,
}

/// A call running (`App::running`): counted until dropped.
pub(crate) struct Running(Arc<(std::sync::Mutex<usize>, std::sync::Condvar)>);

impl Drop for Running {
    fn drop(&mut self) {
        let (n, ended) = &*self.0;
        let mut n = n.lock().unwrap_or_else(|p| p.into_inner());
        *n = n.saturating_sub(1);
        ended.notify_all();
    }
}

impl App {
    /// The app of `toolbox` with `config` (the binary's, built at start; in tests
    /// `Config::from_env()` or `Config::default()`), its index built now.
    pub fn new(toolbox: Toolbox, config: impl Into<Arc<Config>>) -> App {
        let app = App::unindexed(toolbox, config.into(), true);
        if let Ok(mut g) = app.index.write() {
            *g = Arc::new(Index::build(app.toolbox.root()));
        }
        app
    }

    fn unindexed(toolbox: Toolbox, config: Arc<Config>, ready: bool) -> App {
        App {
            // One personal directory: the toolbox's writes and history read the app's.
            toolbox: toolbox.with_personal(config.data_dir.clone()),
            index: Arc::new(RwLock::new(Arc::new(Index::default()))),
            ready: Arc::new((std::sync::Mutex::new(ready), std::sync::Condvar::new())),
            generation: AtomicU64::new(0),
            wasm: std::sync::OnceLock::new(),
            personal: config.data_dir.clone(),
            semantic: Arc::new(crate::search::Semantic::new(
                config.embeddings.clone(),
                &config.data_dir,
                Some(&config.cache_dir),
            )),
            scripts: Scripts::new(Arc::clone(&config)),
            config,
            upstream: None,
            running: Arc::default(),
        }
    }

    /// Count a call as running until the value is dropped.
    pub(crate) fn running(&self) -> Running {
        let (n, _) = &*self.running;
        *n.lock().unwrap_or_else(|p| p.into_inner()) += 1;
        Running(Arc::clone(&self.running))
    }

    /// Block until no call runs, for at most `at_most` (a server's start-up steps: loading
    /// WASM tools, search, the history memo). On a small machine a first call that came at
    /// once otherwise shares the processor with all of them.
    pub fn wait_no_calls(&self, at_most: std::time::Duration) {
        let (n, ended) = &*self.running;
        let n = n.lock().unwrap_or_else(|p| p.into_inner());
        let _ = ended.wait_timeout_while(n, at_most, |n| *n > 0);
    }

    /// This app with `upstream` running its MCP entries' servers (the MCP layer's client,
    /// `mcp::upstream::Pool`): set when the app is built, never later. An app built without
    /// one (a library user, a test) refuses to call an MCP entry, saying so.
    pub fn with_upstream(mut self, upstream: Arc<dyn Upstream>) -> App {
        self.upstream = Some(upstream);
        self
    }

    /// What runs MCP entries' servers, when the app was built with one.
    pub fn upstream(&self) -> Option<Arc<dyn Upstream>> {
        self.upstream.clone()
    }

    fn upstream_or_err(&self, name: &str) -> Result<Arc<dyn Upstream>, RunError> {
        self.upstream().ok_or_else(|| RunError::Start {
            tool: name.to_string(),
            message: "this process has no MCP client to run MCP server entries".into(),
        })
    }

    /// Stop every process this app keeps: warm workers, spares and MCP servers (shutdown).
    pub fn stop_all(&self) {
        self.scripts.stop_all();
        if let Some(u) = self.upstream() {
            u.stop_all();
        }
    }

    /// The configuration this app was made with.
    pub fn config(&self) -> &Arc<Config> {
        &self.config
    }

    /// The script runner and the processes it keeps (warm workers, spares).
    pub fn scripts(&self) -> &Scripts {
        &self.scripts
    }

    /// Keep approvals, secrets and the audit log in `dir` instead of the default.
    pub fn with_personal_dir(mut self, dir: impl Into<std::path::PathBuf>) -> App {
        self.personal = dir.into();
        self.toolbox = self.toolbox.with_personal(self.personal.clone());
        self.semantic = Arc::new(crate::search::Semantic::new(
            self.config.embeddings.clone(),
            &self.personal,
            Some(&self.config.cache_dir),
        ));
        self
    }

    /// The toolbox as it may be shown to the model or another agent now: held tools withheld
    /// (`trust::View`). Everything that shows a tool's text or files reads this.
    pub fn view(&self) -> crate::trust::View {
        crate::trust::View::new(&self.toolbox, self.index())
    }

    /// Search the tools (`crate::search`: lexical and semantic rankings fused), as the view
    /// shows them: a held tool is found by its name only, and said to be held.
    pub fn search(&self, query: &str, limit: usize) -> crate::search::Results {
        let view = self.view();
        let withheld = view
            .tools()
            .filter(|s| matches!(s, crate::trust::Shown::Held(_)))
            .count();
        let mut found =
            crate::search::search(&self.index(), &self.semantic, query, limit + withheld);
        found.results.retain_mut(|hit| match view.get(&hit.name) {
            Some(crate::trust::Shown::Open(_)) => true,
            Some(crate::trust::Shown::Held(w)) => {
                if !hit.matched.contains(&"name") {
                    return false;
                }
                hit.summary = w.note();
                hit.matched = vec!["name"];
                hit.similarity = None;
                true
            }
            None => false,
        });
        found.results.truncate(limit);
        found
    }

    /// The semantic half of search.
    pub fn semantic(&self) -> &Arc<crate::search::Semantic> {
        &self.semantic
    }

    /// Keep the tools' embeddings up to date in the background from now on (a server: a
    /// query never waits for them). A one-shot command calls `prepare_search` instead.
    pub fn start_search(&self) {
        self.semantic.start(self.index());
    }

    /// Embed the tools that have no vector yet, now (a one-shot command's search).
    pub fn prepare_search(&self) {
        self.semantic.prepare(self.index().search_index());
    }

    /// The use of this toolbox's tools (the ranking past 200 tools, what a restart starts).
    pub fn usage(&self) -> std::sync::Arc<crate::index::rank::Usage> {
        self.toolbox.state(crate::index::rank::Usage::new)
    }

    /// This person's private directory (approvals, secrets, audit log).
    pub fn personal_dir(&self) -> &std::path::Path {
        &self.personal
    }

    /// The approval gate of this toolbox on this machine.
    pub fn gate(&self) -> crate::approval::Gate<'_> {
        crate::approval::Gate {
            toolbox: &self.toolbox,
            personal: &self.personal,
            roots: &self.config.roots,
            wait: std::time::Duration::from_secs(self.config.approval_wait_secs as u64),
        }
    }

    /// Like `new`, but the index is built on a background thread, so a server can answer
    /// `initialize` at once; readers of the index wait until it is ready.
    pub fn new_deferred(toolbox: Toolbox, config: impl Into<Arc<Config>>) -> App {
        let app = App::unindexed(toolbox, config.into(), false);
        let (slot, ready, root) = (
            Arc::clone(&app.index),
            Arc::clone(&app.ready),
            app.toolbox.root().to_path_buf(),
        );
        let build = move || {
            let index = Index::build(&root);
            if let Ok(mut g) = slot.write() {
                *g = Arc::new(index);
            }
            let (lock, cvar) = &*ready;
            if let Ok(mut r) = lock.lock() {
                *r = true;
            }
            cvar.notify_all();
        };
        if let Err(e) = std::thread::Builder::new()
            .name("index-build".into())
            .spawn(build)
        {
            // No thread: build here, so readers never wait forever.
            tracing::warn!(error = %e, "cannot start the index thread; indexing now");
            let index = Index::build(app.toolbox.root());
            if let Ok(mut g) = app.index.write() {
                *g = Arc::new(index);
            }
            let (lock, cvar) = &*app.ready;
            if let Ok(mut r) = lock.lock() {
                *r = true;
            }
            cvar.notify_all();
        }
        app
    }

    /// Wait until the index has been built (immediate for `App::new`).
    pub fn wait_ready(&self) {
        let (lock, cvar) = &*self.ready;
        let Ok(mut r) = lock.lock() else { return };
        while !*r {
            r = match cvar.wait(r) {
                Ok(r) => r,
                Err(_) => return,
            };
        }
    }

    /// Compile or load WASM tools ahead of their first call (a cold start then deserializes
    /// cached code, and a first call only instantiates): every small one, and of the large
    /// ones (a component embedding an interpreter: tens of MB of code and memory image each)
    /// only the [`PRESTART`] used most recently and most often. No tool code runs. Smallest
    /// first: a module is ready in a millisecond or two, a component embedding an interpreter
    /// takes a hundred, and a first call of the small one should not wait behind it.
    pub fn prepare_wasm(&self) {
        let Ok(runner) = self.wasm() else { return };
        let used = self.usage().most_used(PRESTART);
        let index = self.index();
        let mut tools: Vec<(u64, &Tool, std::path::PathBuf)> = index
            .tools()
            .filter(|t| t.manifest.kind == Kind::Wasm)
            .map(|t| {
                let dir = self.toolbox.tools_dir().join(&t.manifest.name);
                let size =
                    std::fs::metadata(dir.join(t.manifest.artifact())).map_or(0, |m| m.len());
                (size, t, dir)
            })
            .collect();
        tools.sort_by_key(|(size, ..)| *size);
        for (size, t, dir) in tools {
            if size > LARGE_ARTIFACT && !used.contains(&t.manifest.name) {
                continue;
            }
            let began = std::time::Instant::now();
            self.warm(t);
            let warmed = began.elapsed();
            match runner.prepare(&dir, t) {
                Ok(how) => {
                    tracing::debug!(tool = %t.manifest.name, ?how, ?warmed, prepared = ?began.elapsed(), "prepared")
                }
                Err(e) => tracing::debug!(tool = %t.manifest.name, error = %e, "not prepared"),
            }
        }
    }

    /// Do ahead of a tool's first call what that call would otherwise do first, none of it
    /// running tool code: compile its input schema's validator, compare its files with git
    /// (remembered until a file or HEAD changes; a file git's index vouches for by its stat
    /// data is not read), read the trust policy for it.
    fn warm(&self, tool: &Tool) {
        let _ = tool.validator.get(&tool.input_schema);
        let _ = self.verify_stored(Origin::Stored, tool);
        let _ = crate::trust::require_trusted(&self.toolbox, Origin::Stored, tool);
    }

    /// The index if it is built within `timeout`, else None (it goes on building).
    pub fn index_within(&self, timeout: std::time::Duration) -> Option<Arc<Index>> {
        let (lock, cvar) = &*self.ready;
        let ready = match lock.lock() {
            Ok(r) => cvar
                .wait_timeout_while(r, timeout, |r| !*r)
                .map(|(r, _)| *r)
                .unwrap_or(true),
            Err(_) => true,
        };
        ready.then(|| self.index())
    }

    /// A snapshot of the index (cheap: an Arc).
    pub fn index(&self) -> Arc<Index> {
        self.wait_ready();
        match self.index.read() {
            Ok(g) => Arc::clone(&g),
            Err(p) => Arc::clone(&p.into_inner()),
        }
    }

    /// Bring the index up to date with the tree. Returns the names that changed.
    pub fn refresh(&self) -> Vec<String> {
        self.update_index(|idx| idx.refresh())
    }

    /// Re-read only the named tool directories (the watcher knows which changed).
    /// Returns the names whose entries changed.
    pub fn refresh_tools(&self, names: &[String]) -> Vec<String> {
        self.update_index(|idx| {
            names
                .iter()
                .filter(|n| idx.reindex_tool(n))
                .cloned()
                .collect()
        })
    }

    /// Apply an update to the index under the write lock; the index is copied only when
    /// readers still hold the old snapshot.
    fn update_index(&self, f: impl FnOnce(&mut Index) -> Vec<String>) -> Vec<String> {
        self.wait_ready();
        let mut guard = match self.index.write() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        let changed = f(Arc::make_mut(&mut guard));
        if !changed.is_empty() {
            self.generation.fetch_add(1, Ordering::SeqCst);
            let now = Arc::clone(&guard);
            drop(guard);
            self.semantic.schedule(now);
        }
        changed
    }

    /// Bumped every time the index changes.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    /// The WASM runner (made on first use: its engine and compiled-code cache).
    pub fn wasm(&self) -> Result<&WasmRunner, RunError> {
        self.wasm
            .get_or_init(|| {
                WasmRunner::new(
                    Some(self.config.cache_dir.join("wasm")),
                    self.config.roots.clone(),
                )
                .map(|w| w.with_memory_budget(self.config.wasm_memory_mb))
                .map_err(|e| e.to_string())
            })
            .as_ref()
            .map_err(|message| RunError::Start {
                tool: "(wasm engine)".into(),
                message: message.clone(),
            })
    }

    /// Look up a valid tool by name.
    pub fn tool(&self, name: &str) -> Result<Tool, CallError> {
        let idx = self.index();
        match idx.get(name) {
            None => Err(CallError::NoSuchTool {
                name: name.to_string(),
            }),
            Some(e) => match e.tool() {
                Some(t) => Ok(t.clone()),
                None => Err(CallError::Broken {
                    name: name.to_string(),
                    errors: e
                        .errors()
                        .iter()
                        .map(|d| d.to_string())
                        .collect::<Vec<_>>()
                        .join("; "),
                }),
            },
        }
    }

    /// Before any call (a server starting on this toolbox, once its index is ready): start
    /// what the calls of the tools it used most recently and most often will need — at most
    /// [`PRESTART`] script tools whose call would run now without waiting for a person (checked
    /// as a call checks them: files against HEAD under `uncommitted = "refuse"`, trust, the
    /// approval of this very content) and whose environment is built (nothing is installed
    /// here). No tool code runs: what starts waits for its call.
    pub async fn prestart(&self) {
        for name in self.usage().most_used(PRESTART) {
            self.prestart_tool(&name).await;
        }
    }

    /// A tool just registered: start what its first call will find waiting, as [`prestart`]
    /// would (checked the same way), and wait until it is up — at most `within` — so that call
    /// is forked, not started. Nothing starts outside a server (one-shot commands keep no
    /// processes) or for a tool whose call would wait for a person.
    ///
    /// [`prestart`]: App::prestart
    pub async fn prestart_new(&self, name: &str, within: std::time::Duration) {
        if self.prestart_tool(name).await {
            let dir = self.toolbox.tools_dir().join(name);
            self.scripts.ready_at(&dir, within).await;
        }
    }

    /// Pre-start one tool (see [`prestart`](App::prestart)); false when nothing was started.
    async fn prestart_tool(&self, name: &str) -> bool {
        let root = self.toolbox.root().to_path_buf();
        let Ok(tool) = self.tool(name) else {
            return false;
        };
        let dir = self.toolbox.tools_dir().join(name);
        let m = &tool.manifest;
        let allowed = crate::deps::Allowances::new(&self.config.data_dir, &root);
        let ctx = crate::deps::Ctx {
            sandbox: &self.config.sandbox,
            cache: &self.config.cache_dir,
            allowed: &allowed,
        };
        if m.kind != Kind::Script
            || m.run.worker
            || !crate::deps::built_already(ctx, &root, m, &dir)
            || self.verify_stored(Origin::Stored, &tool).is_err()
            || crate::trust::require_trusted(&self.toolbox, Origin::Stored, &tool).is_err()
        {
            return false;
        }
        let Some(tool) = crate::approval::admitted_now(&self.gate(), &dir, tool) else {
            return false;
        };
        let _ = tool.validator.get(&tool.input_schema);
        tracing::debug!(tool = %name, "pre-starting what its calls need");
        self.scripts.prestart(&dir, &tool).await
    }
}
