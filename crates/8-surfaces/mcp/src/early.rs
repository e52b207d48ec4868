//! The first `tools/list` of a server whose index is still being built (a toolbox of many
//! thousand tools takes most of a second): answered at once with the meta-tools and the tools
//! used most recently (indexed on their own), followed by one `list_changed` when the whole
//! index is ready. A toolbox indexed within [`WAIT`] is listed whole, as before.

use super::Shared;
use crate::index::{Index, rank};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// How long a `tools/list` waits for the whole index before answering with a partial view.
pub const WAIT: Duration = Duration::from_millis(40);

/// The index to list from: the whole one when it is ready within [`WAIT`], else a partial
/// one (and clients hear `list_changed` once the whole index is ready).
pub fn index_for_list(shared: &Arc<Shared>) -> Arc<Index> {
    if let Some(idx) = shared.app.index_within(WAIT) {
        return idx;
    }
    if !shared.partial_list.swap(true, Ordering::SeqCst) {
        let s = Arc::clone(shared);
        tokio::spawn(async move {
            let s2 = Arc::clone(&s);
            let _ = crate::platform::blocking(move || s2.app.index()).await;
            tracing::info!("index ready; notifying clients that listed early");
            s.hub.tools_changed().await;
        });
    }
    let root = shared.app.toolbox.root();
    Arc::new(Index::build_only(
        root,
        &shared.app.usage().recently_used(rank::LIST_CAP),
    ))
}
