//! The watcher: file events under `tools/` (hand edits, `git pull`, `git checkout`, writes
//! made through toolsmith) are debounced, the index is refreshed, and each settled change is
//! announced to every client exactly once. A person's decisions (`toolsmith approve`, the
//! console) are watched too: an MCP entry that waited for approval lists its tools once it may.

use super::Shared;
use notify::{EventKind, RecursiveMode, Watcher};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// Quiet time after the last event before a change counts as settled.
const SETTLE: Duration = Duration::from_millis(40);
/// Longest a burst of events may delay the announcement.
const MAX_DELAY: Duration = Duration::from_millis(250);

pub const GUIDE_URI: &str = "toolsmith://guide";

pub fn spawn(shared: Arc<Shared>) -> anyhow::Result<()> {
    // Each event names the tool directory it touched, or None when it cannot be attributed.
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Option<String>>();
    let tools = shared.app.toolbox.tools_dir();
    let tools_for_events = tools.clone();
    // Once the watch is in place: one reading of the whole tree, for an edit made after the
    // index was read and before the watch saw anything (it has no event of its own).
    let settle_start = tx.clone();
    let mut watcher = notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
        if let Ok(ev) = res {
            if matches!(ev.kind, EventKind::Access(_)) {
                return;
            }
            for path in &ev.paths {
                let _ = tx.send(tool_of(&tools_for_events, path));
            }
            if ev.paths.is_empty() {
                let _ = tx.send(None);
            }
        }
    })?;
    tokio::spawn(async move {
        // Setting up a recursive watch walks the tree (~40 ms for 2,000 directories): do it
        // off the async threads, while the server already answers.
        let watcher = crate::platform::blocking(move || {
            watcher
                .watch(&tools, RecursiveMode::Recursive)
                .map(|()| watcher)
        })
        .await;
        let _watcher = match watcher {
            Ok(Ok(w)) => w,
            Ok(Err(e)) => {
                tracing::error!(error = %e, "cannot watch the toolbox; changes made outside this server will not be noticed");
                return;
            }
            Err(_) => return,
        };
        // Announced only if it changed something (the generation moved).
        let _ = settle_start.send(None);
        drop(settle_start);
        loop {
            let mut touched = std::collections::BTreeSet::new();
            let mut full = false;
            tokio::select! {
                got = rx.recv() => match got {
                    None => break,
                    Some(Some(name)) => { touched.insert(name); }
                    Some(None) => full = true,
                },
                _ = shared.poke.notified() => full = true,
            }
            // Debounce: wait until events stop for SETTLE, at most MAX_DELAY.
            let deadline = tokio::time::Instant::now() + MAX_DELAY;
            loop {
                let now = tokio::time::Instant::now();
                if now >= deadline {
                    break;
                }
                match tokio::time::timeout(SETTLE.min(deadline - now), rx.recv()).await {
                    Ok(Some(Some(name))) => {
                        touched.insert(name);
                        continue;
                    }
                    Ok(Some(None)) => {
                        full = true;
                        continue;
                    }
                    Ok(None) | Err(_) => break,
                }
            }
            let s = Arc::clone(&shared);
            let changed = crate::platform::blocking(move || {
                if full {
                    s.app.refresh()
                } else {
                    let names: Vec<String> = touched.into_iter().collect();
                    s.app.refresh_tools(&names)
                }
            })
            .await
            .unwrap_or_default();
            // An MCP entry edited or pulled: its server lists its tools for the new version
            // first (for a while at most), so that clients hear of the change once.
            if !changed.is_empty() {
                let relist =
                    super::upstream::list_stale(Arc::clone(&shared), Some(changed.clone()));
                if tokio::time::timeout(RELIST_WAIT, relist).await.is_ok() {
                    let s = Arc::clone(&shared);
                    let _ = crate::platform::blocking(move || s.app.refresh_tools(&changed)).await;
                }
            }
            announce(&shared).await;
            // Tools changed on disk, and HEAD may have moved with them (a pull, a checkout, a
            // sync): catch the history memo up now, so the next tool_history does not (when
            // HEAD has not moved this is one look at it).
            let s = Arc::clone(&shared);
            crate::platform::detached(move || {
                if let Err(e) = crate::history::prepare(&s.app.toolbox) {
                    tracing::debug!(error = %e, "the history memo was not caught up");
                }
            });
        }
    });
    Ok(())
}

/// Watch this toolbox's approvals file (in the personal directory, written by `toolsmith
/// approve`, `deny` and the console, in this process or another): when it changes, the MCP
/// entries whose tools were never listed (one waiting for a person) are listed now, so their
/// tools appear (one list_changed) without a first call of the entry itself.
pub fn spawn_approvals(shared: Arc<Shared>) {
    let file = shared.app.gate().store().path().to_path_buf();
    let Some(dir) = file.parent().map(std::path::Path::to_path_buf) else {
        return;
    };
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<()>();
    let watched = file.clone();
    let watcher = notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
        if let Ok(ev) = res
            && !matches!(ev.kind, EventKind::Access(_))
            && (ev.paths.is_empty() || ev.paths.contains(&watched))
        {
            let _ = tx.send(());
        }
    });
    let mut watcher = match watcher {
        Ok(w) => w,
        Err(e) => {
            tracing::warn!(error = %e, "cannot watch the approvals; an approved MCP entry lists its tools on its first call");
            return;
        }
    };
    // The directory may not exist before the first decision: make it (private, as the
    // personal directory's files are) so that the first one is seen.
    if let Err(e) = crate::personal::ensure_dir(&dir).and_then(|()| {
        watcher
            .watch(&dir, RecursiveMode::NonRecursive)
            .map_err(std::io::Error::other)
    }) {
        tracing::warn!(error = %e, dir = %dir.display(), "cannot watch the approvals; an approved MCP entry lists its tools on its first call");
        return;
    }
    tokio::spawn(async move {
        let _watcher = watcher;
        while rx.recv().await.is_some() {
            // Debounce: a decision is one atomic write (a rename), but editors and locks
            // make several events.
            while let Ok(Some(())) = tokio::time::timeout(SETTLE * 5, rx.recv()).await {}
            let _ = super::upstream::list_stale(Arc::clone(&shared), None).await;
        }
    });
}

/// How long a change waits for its MCP entries' servers to list their tools before it is
/// announced (a slower listing is announced on its own).
const RELIST_WAIT: std::time::Duration = std::time::Duration::from_secs(20);

/// Announce the current index generation if clients have not heard of it yet.
pub async fn announce(shared: &Shared) {
    let generation = shared.app.generation();
    if shared.announced.swap(generation, Ordering::SeqCst) == generation {
        return;
    }
    tracing::info!(generation, "toolbox changed; notifying clients");
    shared.hub.tools_changed().await;
    shared.hub.resource_updated(GUIDE_URI).await;
}

/// The tool directory an event path belongs to: `Some(name)` for `tools/<name>/...`, None
/// when it cannot be attributed (the tools directory itself). Toolsmith's hidden in-flight
/// directories (`tools/.staging-*`, `tools/.trash-*`) are attributed to no tool and ignored
/// by the caller through the name check in `Index::reindex_tool`'s directory listing.
fn tool_of(tools: &std::path::Path, path: &std::path::Path) -> Option<String> {
    let rel = path.strip_prefix(tools).ok()?;
    let first = rel.components().next()?;
    let name = first.as_os_str().to_string_lossy().into_owned();
    if name.starts_with('.') {
        // In-flight writes: the rename into place produces its own event for tools/<name>.
        return Some(String::new());
    }
    Some(name)
}
