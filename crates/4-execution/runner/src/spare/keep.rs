//! How long and how much a pool keeps. A look-after runs every few seconds in a server: a tool
//! whose calls slowed down goes back to its base count of spares (`HOT_FOR`), and one unused
//! for `IDLE_STOP` gives back everything it kept (its next call starts afresh). The overall
//! bounds — how many process sets wait (`TOOLSMITH_MAX_SPARES`) and their resident memory
//! (`TOOLSMITH_SPARE_MEMORY`) — are kept after every start: the least recently used tool's go
//! first. What one waiting process set costs is measured once it is up (all its processes'
//! resident memory: the sandbox's and the interpreter's), estimated per interpreter until then.

use super::{Inner, Slot, discard};
use crate::stubs::Stub;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// A tool whose last call is older than this keeps only its base count of spares.
const HOT_FOR: Duration = Duration::from_secs(30);
/// A tool not called for this long gives back its spares and fork server.
const IDLE_STOP: Duration = Duration::from_secs(30 * 60);
/// How often the look-after runs.
const SWEEP_EVERY: Duration = Duration::from_secs(5);

/// What a waiting process set of this stub costs before it is measured (KiB; measured here:
/// the sandbox's processes and the interpreter, waiting).
pub(super) fn estimate_kib(stub: Option<Stub>) -> u64 {
    let mib = match stub {
        Some(Stub::Python) => 20,
        Some(Stub::Node) => 45,
        Some(Stub::Ruby) => 18,
        Some(Stub::Perl) => 12,
        Some(Stub::Php) => 22,
        Some(Stub::Bash) => 7,
        Some(Stub::Exec) | None => 8,
    };
    mib * 1024
}

/// Start the look-after of this pool (once; inside a tokio runtime). It holds the pool
/// weakly: it ends when the pool is dropped.
pub(super) fn start_sweeping(inner: &Arc<Inner>) {
    let Ok(h) = tokio::runtime::Handle::try_current() else {
        return;
    };
    if inner.sweeping.swap(true, Ordering::SeqCst) {
        return;
    }
    let weak = Arc::downgrade(inner);
    h.spawn(async move {
        loop {
            tokio::time::sleep(SWEEP_EVERY).await;
            let Some(inner) = weak.upgrade() else {
                return;
            };
            let _ = crate::platform::blocking(move || sweep(&inner)).await;
        }
    });
}

/// One look-after: shrink the tools whose calls slowed down, stop those unused for long,
/// measure what was not measured yet, keep the bounds.
fn sweep(inner: &Inner) {
    let now = Instant::now();
    let mut measure: Vec<(PathBuf, u32)> = Vec::new();
    {
        let mut slots = inner.slots();
        slots.retain(|dir, s| {
            let unused = now.saturating_duration_since(s.last_call);
            if unused >= IDLE_STOP && s.starting == 0 && !s.server_starting() {
                tracing::debug!(dir = %dir.display(), "unused for {} min: stopping what it kept", IDLE_STOP.as_secs() / 60);
                return false;
            }
            if unused >= HOT_FOR && s.want > inner.per_tool {
                s.want = inner.per_tool;
                while s.idle.len() > inner.per_tool {
                    discard(vec![s.idle.remove(0)]);
                }
            }
            if !s.measured
                && let Some(pid) = s.waiting_pid()
            {
                measure.push((dir.clone(), pid));
            }
            true
        });
        evict(&mut slots, inner);
    }
    for (dir, pid) in measure {
        let kib = tree_kib(pid);
        if kib == 0 {
            continue;
        }
        if let Some(s) = inner.slots().get_mut(&dir) {
            s.kib = kib;
            s.measured = true;
        }
    }
}

/// Stop the least recently used tools' waiting processes while more than the bounds wait:
/// `max_total` process sets, `max_kib` of memory.
pub(super) fn evict(slots: &mut HashMap<PathBuf, Slot>, inner: &Inner) {
    loop {
        let count: usize = slots.values().map(Slot::waiting).sum();
        let kib: u64 = slots.values().map(|s| s.waiting() as u64 * s.kib).sum();
        if count <= inner.max_total && kib <= inner.max_kib {
            return;
        }
        let Some(victim) = slots
            .iter()
            .filter(|(_, s)| s.waiting() > 0)
            .min_by_key(|(_, s)| s.last_used)
            .map(|(k, _)| k.clone())
        else {
            return;
        };
        if let Some(s) = slots.get_mut(&victim) {
            if s.idle.is_empty() {
                #[cfg(target_os = "linux")]
                s.stop_server();
            } else {
                discard(vec![s.idle.remove(0)]);
            }
        }
    }
}

/// The resident memory (KiB) of a process and all its descendants; 0 when it is gone.
fn tree_kib(pid: u32) -> u64 {
    let mut total = 0;
    let mut todo = vec![pid];
    let mut seen = 0;
    while let Some(p) = todo.pop() {
        seen += 1;
        if seen > 256 {
            break;
        }
        let status = std::fs::read_to_string(format!("/proc/{p}/status")).unwrap_or_default();
        total += status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .unwrap_or(0);
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{p}/task")) else {
            continue;
        };
        for t in tasks.flatten() {
            let children = std::fs::read_to_string(t.path().join("children")).unwrap_or_default();
            todo.extend(
                children
                    .split_whitespace()
                    .filter_map(|c| c.parse::<u32>().ok()),
            );
        }
    }
    total
}
