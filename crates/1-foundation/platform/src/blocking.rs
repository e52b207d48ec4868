//! Blocking work (files, git, hashing, a WASM call) run from async code: the one way the
//! crates do it.

/// Run `f` on tokio's blocking threads and return its value. A panic in `f` continues in the
/// caller, as if `f` had run there; work cancelled before it ran (the runtime shutting down,
/// when nothing awaits it any more) panics too.
pub async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    match tokio::task::spawn_blocking(f).await {
        Ok(v) => v,
        Err(e) => match e.try_into_panic() {
            Ok(p) => std::panic::resume_unwind(p),
            Err(e) => panic!("blocking work was cancelled: {e}"),
        },
    }
}

/// Run `f` (short work bounded by its own deadline: a WASM call) off the async scheduler. On a
/// multi-threaded runtime this thread runs it while its other work moves to another thread
/// (`block_in_place`): no hand-over to a blocking-pool thread, which after an idle moment has
/// to be woken first (about half a millisecond here, most of a first call after a pause).
/// Elsewhere (a current-thread runtime), [`blocking`].
pub async fn blocking_here<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    match tokio::runtime::Handle::current().runtime_flavor() {
        tokio::runtime::RuntimeFlavor::MultiThread => tokio::task::block_in_place(f),
        _ => blocking(f).await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_come_back_and_panics_continue_in_the_caller() {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .build()
            .unwrap();
        assert_eq!(rt.block_on(blocking(|| 2 + 2)), 4);
        assert_eq!(rt.block_on(blocking_here(|| "here")), "here");
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            rt.block_on(blocking(|| -> u8 { panic!("inside") }))
        }));
        let p = caught.unwrap_err();
        assert_eq!(p.downcast_ref::<&str>(), Some(&"inside"));
    }
}
