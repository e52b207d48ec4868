//! Blocking work (files, git, hashing, a WASM call) run from async code: the one way the
//! crates do it.

/// Blocking work that did not finish: it panicked, or it was cancelled before it ran (the
/// runtime shutting down).
#[derive(Debug, thiserror::Error)]
#[error("the work {0}")]
pub struct Stopped(String);

impl Stopped {
    fn of(e: tokio::task::JoinError) -> Stopped {
        match e.try_into_panic() {
            Ok(p) => Stopped(format!(
                "failed unexpectedly: {}",
                p.downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| p.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "a panic".into())
            )),
            Err(e) => Stopped(format!("was cancelled: {e}")),
        }
    }
}

/// Run `f` on tokio's blocking threads and return its value; a panic in `f` comes back as
/// [`Stopped`] (an MCP request then answers with an error instead of never answering).
pub async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, Stopped> {
    tokio::task::spawn_blocking(f).await.map_err(Stopped::of)
}

/// Start blocking work nobody waits for (a warm-up, a memo caught up, a watch set up in the
/// background); a panic in it is reported by the panic hook, as on any thread.
pub fn detached(f: impl FnOnce() + Send + 'static) {
    drop(tokio::task::spawn_blocking(f));
}

/// Run `f` (short work bounded by its own deadline: a WASM call) off the async scheduler. On a
/// multi-threaded runtime this thread runs it while its other work moves to another thread
/// (`block_in_place`): no hand-over to a blocking-pool thread, which after an idle moment has
/// to be woken first (about half a millisecond here, most of a first call after a pause).
/// Elsewhere (a current-thread runtime), [`blocking`].
pub async fn blocking_here<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, Stopped> {
    match tokio::runtime::Handle::current().runtime_flavor() {
        tokio::runtime::RuntimeFlavor::MultiThread => Ok(tokio::task::block_in_place(f)),
        _ => blocking(f).await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_come_back_and_a_panic_is_an_error() {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .build()
            .unwrap();
        assert_eq!(rt.block_on(blocking(|| 2 + 2)).unwrap(), 4);
        assert_eq!(rt.block_on(blocking_here(|| "here")).unwrap(), "here");
        let e = rt
            .block_on(blocking(|| -> u8 { panic!("inside") }))
            .unwrap_err();
        assert_eq!(e.to_string(), "the work failed unexpectedly: inside");
    }
}
