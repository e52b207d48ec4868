//! The watcher: file events under `tools/` (hand edits, `git pull`, `git checkout`, writes
//! made through toolsmith) are debounced, the index is refreshed, and each settled change is
//! announced to every client exactly once.

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
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<()>();
    let tools = shared.app.toolbox.tools_dir();
    let mut watcher = notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
        if let Ok(ev) = res {
            if matches!(ev.kind, EventKind::Access(_)) {
                return;
            }
            let _ = tx.send(());
        }
    })?;
    watcher.watch(&tools, RecursiveMode::Recursive)?;
    tokio::spawn(async move {
        let _watcher = watcher; // lives as long as the task
        loop {
            tokio::select! {
                got = rx.recv() => if got.is_none() { break },
                _ = shared.poke.notified() => {},
            }
            // Debounce: wait until events stop for SETTLE, at most MAX_DELAY.
            let deadline = tokio::time::Instant::now() + MAX_DELAY;
            loop {
                let now = tokio::time::Instant::now();
                if now >= deadline {
                    break;
                }
                match tokio::time::timeout(SETTLE.min(deadline - now), rx.recv()).await {
                    Ok(Some(())) => continue,
                    Ok(None) | Err(_) => break,
                }
            }
            let s = Arc::clone(&shared);
            let _ = tokio::task::spawn_blocking(move || s.app.refresh()).await;
            announce(&shared).await;
        }
    });
    Ok(())
}

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
