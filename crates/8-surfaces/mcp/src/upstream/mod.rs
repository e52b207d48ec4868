//! The servers of MCP entries (`kind = "mcp"`), as toolsmith's own MCP client: one connection
//! per entry, opened on first use (a stdio server started in the sandbox, or the entry's URL),
//! kept while used and closed after `[mcp] idle_secs` without a call, and on shutdown.
//!
//! A call passes the entry's timeout, its progress notifications and log messages (labelled
//! by the call's host as the entry's, never toolsmith's) and its cancellation (a
//! dropped call sends `notifications/cancelled`); a server that exits during a call is an
//! error naming the entry, with the end of its stderr, and the next call starts it again.
//! Another version of the entry or other grants (a commit, an approval) start a new process.
//! Each connection lists its tools when it opens and when the server says they changed; a
//! listing that differs from the cached one (`index::upstream`, outside git) is written and
//! the index told, which announces one `list_changed` to toolsmith's own clients.

mod client;
mod connect;
mod result;

use crate::app::Upstream;
use crate::config::Config;
use crate::index::Tool;
use crate::index::upstream::{self as listing, Listing};
use crate::runner::host::Host;
use crate::runner::server::{self, ServerProcess};
use crate::runner::{CallOutput, RunError};
use client::Client;
use futures::future::BoxFuture;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResponse, CancelledNotificationParam,
    ClientRequest, ServerResult,
};
use rmcp::service::{Peer, PeerRequestOptions, RoleClient, RunningService};
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

/// How often idle connections are looked for.
const REAP_EVERY: Duration = Duration::from_secs(5);

/// Told the name of an entry whose cached listing changed.
pub type OnListed = Arc<dyn Fn(&str) + Send + Sync>;

/// The connections of one `App`'s MCP entries.
pub struct Pool {
    config: Arc<Config>,
    slots: Mutex<HashMap<String, Arc<Slot>>>,
    on_listed: Mutex<Option<OnListed>>,
    reaping: std::sync::atomic::AtomicBool,
    me: Weak<Pool>,
}

#[derive(Default)]
struct Slot {
    conn: tokio::sync::Mutex<Option<Arc<Conn>>>,
}

struct Conn {
    entry: String,
    /// The entry's version and grants this connection was opened for.
    stamp: u64,
    service: RunningService<RoleClient, Client>,
    process: Option<Mutex<ServerProcess>>,
    client: Client,
    last_used: Mutex<Instant>,
    busy: AtomicUsize,
    idle: Duration,
    listener: tokio::task::JoinHandle<()>,
}

impl Drop for Conn {
    fn drop(&mut self) {
        self.listener.abort();
        tracing::info!(entry = %self.entry, "stopped an MCP server connection");
    }
}

impl Conn {
    fn alive(&self) -> bool {
        if self.service.peer().is_transport_closed() {
            return false;
        }
        match &self.process {
            Some(p) => p.lock().map(|mut p| p.exited().is_none()).unwrap_or(false),
            None => true,
        }
    }

    fn touch(&self) {
        if let Ok(mut t) = self.last_used.lock() {
            *t = Instant::now();
        }
    }
}

/// Counts a call in flight on a connection (not idle while it runs).
struct Busy<'a>(&'a Conn);

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        self.0.busy.fetch_sub(1, Ordering::SeqCst);
        self.0.touch();
    }
}

/// `app` with a client of its MCP entries' servers (a new [`Pool`]): how the server and every
/// CLI command build their app, so that none can forget it. The pool is returned too (the
/// server hears of listings that changed through it).
pub fn with_client(app: crate::app::App) -> (crate::app::App, Arc<Pool>) {
    let pool = Pool::new(Arc::clone(app.config()));
    (
        app.with_upstream(Arc::clone(&pool) as Arc<dyn Upstream>),
        pool,
    )
}

impl Pool {
    /// An empty pool: connections open on first use.
    pub fn new(config: Arc<Config>) -> Arc<Pool> {
        Arc::new_cyclic(|me| Pool {
            config,
            slots: Mutex::default(),
            on_listed: Mutex::default(),
            reaping: false.into(),
            me: me.clone(),
        })
    }

    /// What to do when an entry's tools were listed (announce the change to clients).
    pub fn set_on_listed(&self, f: OnListed) {
        if let Ok(mut g) = self.on_listed.lock() {
            *g = Some(f);
        }
    }

    /// How many connections are open (tests, stats).
    pub fn open(&self) -> usize {
        let slots: Vec<Arc<Slot>> = self
            .slots
            .lock()
            .map(|s| s.values().cloned().collect())
            .unwrap_or_default();
        slots
            .iter()
            .filter(|s| s.conn.try_lock().map(|c| c.is_some()).unwrap_or(true))
            .count()
    }

    /// The process id of an entry's running server (tests).
    pub fn pid(&self, entry: &str) -> Option<u32> {
        let slot = self.slots.lock().ok()?.get(entry).cloned()?;
        let g = slot.conn.try_lock().ok()?;
        let c = g.as_ref()?;
        c.process.as_ref()?.lock().ok()?.pid()
    }

    fn slot(&self, entry: &str) -> Arc<Slot> {
        let mut slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        Arc::clone(slots.entry(entry.to_string()).or_default())
    }

    /// The open connection of `entry` for this version and grants, opening one if needed.
    async fn connect(
        &self,
        dir: &Path,
        entry: &crate::runner::Granted,
    ) -> Result<Arc<Conn>, RunError> {
        let name = entry.manifest.name.clone();
        let stamp = server::stamp(dir, entry);
        let slot = self.slot(&name);
        let mut g = slot.conn.lock().await;
        if let Some(c) = g.as_ref() {
            if c.stamp == stamp && c.alive() {
                c.touch();
                return Ok(Arc::clone(c));
            }
            tracing::info!(entry = %name, "replacing the MCP server connection (the entry changed, or it ended)");
            *g = None;
        }
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let client = Client::new(&name, tx);
        let remote = entry.manifest.mcp.as_ref().is_some_and(|s| s.url.is_some());
        let opened = if remote {
            connect::http(entry, client.clone()).await?
        } else {
            connect::stdio(dir, entry, &self.config, client.clone()).await?
        };
        let root = crate::runner::toolbox_root(dir);
        let manifest_hash = listing::manifest_hash(dir);
        let peer = opened.service.peer().clone();
        // The listing now, and again whenever the server says it changed.
        let me = self.me.clone();
        let entry_name = name.clone();
        let listener = tokio::spawn(async move {
            let mut rx = rx;
            loop {
                if let (Some(pool), Some(root)) = (me.upgrade(), root.as_deref())
                    && let Err(e) = pool.relist(&peer, root, &entry_name, &manifest_hash).await
                {
                    tracing::warn!(entry = %entry_name, error = %e, "cannot list the server's tools");
                }
                if rx.recv().await.is_none() {
                    break;
                }
                // A burst of notifications is one listing.
                while rx.try_recv().is_ok() {}
            }
        });
        let conn = Arc::new(Conn {
            entry: name,
            stamp,
            service: opened.service,
            process: opened.process.map(Mutex::new),
            client,
            last_used: Mutex::new(Instant::now()),
            busy: AtomicUsize::new(0),
            idle: Duration::from_secs(
                entry
                    .manifest
                    .mcp
                    .as_ref()
                    .map_or(crate::manifest::McpServer::DEFAULT_IDLE_SECS, |s| {
                        s.idle_secs()
                    }),
            ),
            listener,
        });
        *g = Some(Arc::clone(&conn));
        drop(g);
        self.start_reaper();
        Ok(conn)
    }

    /// Ask the server for its tools and cache the listing; true when it changed.
    async fn relist(
        &self,
        peer: &rmcp::Peer<RoleClient>,
        root: &Path,
        entry: &str,
        manifest_hash: &str,
    ) -> Result<Vec<String>, String> {
        let tools = peer
            .list_all_tools()
            .await
            .map_err(|e| crate::error::chain(&e))?;
        let info = peer.peer_info();
        let l = Listing {
            format: listing::FORMAT,
            manifest: manifest_hash.to_string(),
            listed_at: crate::personal::now_secs(),
            server: info.as_ref().and_then(|i| i.server_info.as_ref()).map(|s| {
                listing::ServerInfo {
                    name: s.name.clone(),
                    version: s.version.clone(),
                }
            }),
            instructions: info
                .as_ref()
                .and_then(|i| i.instructions.clone())
                .map(|t| t.chars().take(listing::MAX_INSTRUCTIONS).collect()),
            tools: tools
                .iter()
                .filter_map(|t| serde_json::to_value(t).ok())
                .collect(),
        };
        let changed = store(root, entry, &l).map_err(|e| e.to_string())?;
        if changed {
            tracing::info!(
                entry,
                tools = l.tools.len(),
                "the server's tool list changed"
            );
            let f = self.on_listed.lock().ok().and_then(|g| g.clone());
            if let Some(f) = f {
                f(entry);
            }
        }
        Ok(tools.iter().map(|t| t.name.to_string()).collect())
    }

    /// Close connections idle past their entry's `idle_secs` (one task per pool, ended
    /// with it).
    fn start_reaper(&self) {
        if self.reaping.swap(true, Ordering::SeqCst) {
            return;
        }
        let me = self.me.clone();
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(REAP_EVERY).await;
                let Some(pool) = me.upgrade() else { break };
                pool.reap();
            }
        });
    }

    fn reap(&self) {
        let slots: Vec<Arc<Slot>> = self
            .slots
            .lock()
            .map(|s| s.values().cloned().collect())
            .unwrap_or_default();
        for s in slots {
            let Ok(mut g) = s.conn.try_lock() else {
                continue;
            };
            let idle = g.as_ref().is_some_and(|c| {
                c.busy.load(Ordering::SeqCst) == 0
                    && c.last_used.lock().is_ok_and(|t| t.elapsed() >= c.idle)
            });
            let dead = g.as_ref().is_some_and(|c| !c.alive());
            if idle || dead {
                if let Some(c) = g.as_ref() {
                    tracing::info!(entry = %c.entry, idle, "closing an MCP server connection");
                }
                *g = None;
            }
        }
    }

    /// Forget a connection that failed (when it is still the one in the slot).
    async fn drop_conn(&self, conn: &Arc<Conn>) {
        let slot = self.slot(&conn.entry);
        let mut g = slot.conn.lock().await;
        if g.as_ref().is_some_and(|c| Arc::ptr_eq(c, conn)) {
            *g = None;
        }
    }

    /// The error of a call whose connection failed: the server's exit and stderr when it
    /// ended, and the connection dropped either way (the next call opens it afresh).
    async fn failed(&self, conn: &Arc<Conn>, tool: &str, e: rmcp::ServiceError) -> RunError {
        let gone = crashed(conn).await;
        self.drop_conn(conn).await;
        match gone {
            Some((how, stderr)) => RunError::ServerExited {
                entry: conn.entry.clone(),
                tool: tool.to_string(),
                how,
                stderr,
            },
            None => RunError::Server {
                entry: conn.entry.clone(),
                message: format!("the call of {tool:?} failed: {}", crate::error::chain(&e)),
                hint: "call again: the connection is opened afresh".into(),
            },
        }
    }

    async fn call_on(
        &self,
        dir: &Path,
        entry: &crate::runner::Granted,
        tool: &str,
        args: Value,
        host: &dyn Host,
    ) -> Result<CallOutput, RunError> {
        let conn = self.connect(dir, entry).await?;
        conn.busy.fetch_add(1, Ordering::SeqCst);
        let busy = Busy(&conn);
        let shown = listing::tool_name(&conn.entry, tool);
        let arguments = match args {
            Value::Object(o) => o,
            _ => Default::default(),
        };
        // rmcp gives each request its own progress token; reports under it reach this call.
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(
            CallToolRequestParams::new(tool.to_string()).with_arguments(arguments),
        ));
        let peer = conn.service.peer().clone();
        let sent = peer
            .send_request_with_option(request, PeerRequestOptions::no_options())
            .await;
        let handle = match sent {
            Ok(h) => h,
            Err(e) => return Err(self.failed(&conn, tool, e).await),
        };
        let mut route = conn.client.state.route(handle.progress_token.clone());
        // Abandoning the call (the client cancelled, the deadline passed) tells the server.
        let mut abandon = Abandon(Some((peer.clone(), handle.id.clone())));
        let call = handle.await_response();
        tokio::pin!(call);
        let limit = Duration::from_millis(entry.manifest.limits.timeout_ms());
        let deadline = tokio::time::sleep(limit);
        tokio::pin!(deadline);
        let answer = loop {
            tokio::select! {
                r = &mut call => break r,
                Some((p, total, message)) = route.reports.recv() => host.progress(p, total, message),
                Some((level, text)) = route.logs.recv() => host.log(&level, &text),
                _ = &mut deadline => {
                    return Err(RunError::Timeout { tool: shown, ms: limit.as_millis() as u64 });
                }
            }
        };
        // Reports read before the answer are all in the channel by now (client::Heard).
        while let Ok((p, total, message)) = route.reports.try_recv() {
            host.progress(p, total, message);
        }
        while let Ok((level, text)) = route.logs.try_recv() {
            host.log(&level, &text);
        }
        abandon.0 = None;
        let answer = answer.and_then(|r| match r {
            ServerResult::CallToolResult(r) => Ok(CallToolResponse::Complete(r)),
            ServerResult::InputRequiredResult(r) => Ok(CallToolResponse::InputRequired(r)),
            ServerResult::CreateTaskResult(r) => Ok(CallToolResponse::Task(r)),
            _ => Err(rmcp::ServiceError::UnexpectedResponse),
        });
        drop(busy);
        match answer {
            Ok(CallToolResponse::Complete(r)) => {
                result::output(&shown, r, entry.manifest.limits.output_bytes())
            }
            Ok(_) => Err(RunError::Server {
                entry: conn.entry.clone(),
                message: format!(
                    "{tool:?} answered with a request for input or a task, which toolsmith does not pass on"
                ),
                hint: "call a tool that answers at once; toolsmith's own long tools run as tasks"
                    .into(),
            }),
            Err(rmcp::ServiceError::McpError(e)) => Err(RunError::ToolError {
                tool: shown,
                message: e.message.to_string(),
                data: e.data,
            }),
            Err(e) => Err(self.failed(&conn, tool, e).await),
        }
    }
}

/// List, in the background, the tools of the MCP entries among `names` (all when None) whose
/// listing is missing or was made for another version of their tool.toml (after a clone, a
/// pull, a hand edit). Each runs through the gates of a call, with no one to ask: an entry
/// that waits for approval or is held is left for its first call. The server is stopped after
/// listing: it starts again on first use.
pub fn list_stale(
    shared: Arc<crate::Shared>,
    names: Option<Vec<String>>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let s = Arc::clone(&shared);
        let Ok(idx) = crate::platform::blocking(move || s.app.index()).await else {
            return;
        };
        let root = shared.app.toolbox.root().to_path_buf();
        let stale: Vec<Tool> = idx
            .tools()
            .filter(|t| t.manifest.kind == crate::manifest::Kind::Mcp && t.upstream.is_none())
            .filter(|t| names.as_ref().is_none_or(|n| n.contains(&t.manifest.name)))
            .filter(|t| {
                let dir = shared.app.toolbox.tools_dir().join(&t.manifest.name);
                listing::read(&root, &t.manifest.name)
                    .is_none_or(|l| l.manifest != listing::manifest_hash(&dir))
            })
            .cloned()
            .collect();
        drop(idx);
        for t in stale {
            let name = t.manifest.name.clone();
            let out = shared
                .app
                .run(
                    crate::index::Callee::stored(&shared.app.toolbox.tools_dir(), t),
                    Value::Object(Default::default()),
                    &crate::runner::host::NoHost,
                )
                .await;
            match out {
                Ok(_) => tracing::info!(entry = %name, "listed the tools of an MCP server"),
                Err(e) => {
                    tracing::info!(entry = %name, error = %crate::error::chain(&e), "the tools of an MCP server are listed on its first call")
                }
            }
            if let Some(u) = shared.app.upstream() {
                u.stop(&name);
            }
        }
    })
}

/// How a stdio server ended, and the end of its stderr, once it has (given a moment).
async fn crashed(conn: &Conn) -> Option<(String, String)> {
    let p = conn.process.as_ref()?;
    for _ in 0..40 {
        let ended = p.lock().ok().and_then(|mut g| g.exited());
        if let Some(how) = ended {
            // Its last lines may still be on their way.
            tokio::time::sleep(Duration::from_millis(30)).await;
            let tail = p.lock().map(|g| g.stderr_tail(4000)).unwrap_or_default();
            return Some((format!("exited ({how})"), tail));
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let tail = p.lock().map(|g| g.stderr_tail(4000)).unwrap_or_default();
    Some(("closed its end of the connection".into(), tail))
}

/// Write `l` as the cached listing of `entry` when it differs from the one there (the time of
/// listing aside); true when it was written.
fn store(root: &Path, entry: &str, l: &Listing) -> std::io::Result<bool> {
    if let Some(old) = listing::read(root, entry)
        && old.manifest == l.manifest
        && old.tools == l.tools
        && old.server == l.server
        && old.instructions == l.instructions
    {
        return Ok(false);
    }
    let path: PathBuf = listing::cache_path(root, entry);
    let dir = path.parent().unwrap_or(root);
    std::fs::create_dir_all(dir)?;
    let text = serde_json::to_string_pretty(l).map_err(std::io::Error::other)?;
    crate::platform::write_atomic(&path, text.as_bytes(), crate::platform::Atomic::CACHE)?;
    Ok(true)
}

impl Upstream for Pool {
    fn call<'a>(
        &'a self,
        dir: &'a Path,
        entry: &'a crate::runner::Granted,
        tool: &'a str,
        args: Value,
        host: &'a dyn Host,
    ) -> BoxFuture<'a, Result<CallOutput, RunError>> {
        Box::pin(self.call_on(dir, entry, tool, args, host))
    }

    fn list<'a>(
        &'a self,
        dir: &'a Path,
        entry: &'a crate::runner::Granted,
    ) -> BoxFuture<'a, Result<Vec<String>, RunError>> {
        Box::pin(async move {
            let conn = self.connect(dir, entry).await?;
            let peer = conn.service.peer().clone();
            let name = conn.entry.clone();
            let root = crate::runner::toolbox_root(dir).unwrap_or_else(|| dir.to_path_buf());
            self.relist(&peer, &root, &name, &listing::manifest_hash(dir))
                .await
                .map_err(|message| RunError::Server {
                    entry: name.clone(),
                    message: format!("it did not list its tools: {message}"),
                    hint: "check that the server works: its stderr is in toolsmith's log (-v)"
                        .into(),
                })
        })
    }

    fn stop(&self, entry: &str) {
        let slot = self.slots.lock().ok().and_then(|mut s| s.remove(entry));
        if let Some(s) = slot
            && let Ok(mut g) = s.conn.try_lock()
        {
            *g = None;
        }
    }

    fn stop_all(&self) {
        let slots: Vec<Arc<Slot>> = self
            .slots
            .lock()
            .map(|mut s| s.drain().map(|(_, v)| v).collect())
            .unwrap_or_default();
        for s in slots {
            if let Ok(mut g) = s.conn.try_lock() {
                *g = None;
            }
        }
    }
}

/// Sends `notifications/cancelled` for a request still unanswered when dropped.
struct Abandon(Option<(Peer<RoleClient>, rmcp::model::RequestId)>);

impl Drop for Abandon {
    fn drop(&mut self) {
        if let Some((peer, id)) = self.0.take() {
            tokio::spawn(async move {
                let _ = peer
                    .notify_cancelled(CancelledNotificationParam::new(
                        Some(id),
                        Some("the caller abandoned the call".into()),
                    ))
                    .await;
            });
        }
    }
}
