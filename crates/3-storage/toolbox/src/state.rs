//! What this process keeps about one open toolbox: caches and records derived from its files
//! (trust verdicts, the drift of stored tools, the trusted-versions record, use ranks, the
//! history memo). Each is a type of the module that describes it; the toolbox only holds them,
//! one of each type, so they live exactly as long as the handle that `open` gave out (clones
//! share them) and nothing is keyed by a path in a process-wide table.

use super::Toolbox;
use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// The derived state of one open toolbox: at most one value per type.
#[derive(Default)]
pub(crate) struct State {
    slots: Mutex<HashMap<TypeId, Arc<dyn Any + Send + Sync>>>,
}

impl std::fmt::Debug for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.slots.lock().map(|s| s.len()).unwrap_or(0);
        f.debug_struct("State").field("slots", &n).finish()
    }
}

impl Toolbox {
    /// This toolbox's `T`, made by `make` (given the root) the first time it is asked for; every
    /// clone of this handle gets the same one. Each type has one constructor, named where the
    /// type is (`tb.state(rank::Usage::new)`).
    pub fn state<T: Send + Sync + 'static>(&self, make: impl FnOnce(&Path) -> T) -> Arc<T> {
        let mut slots = self.state.slots.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(t) = slots
            .get(&TypeId::of::<T>())
            .and_then(|s| Arc::clone(s).downcast::<T>().ok())
        {
            return t;
        }
        let t = Arc::new(make(&self.root));
        slots.insert(
            TypeId::of::<T>(),
            Arc::clone(&t) as Arc<dyn Any + Send + Sync>,
        );
        t
    }
}
