//! Child spans for the stages of work a request does (a call's argument check, approval wait,
//! sandbox start, run and redaction; a build's or registration's steps). A stage is a child of
//! the span current where it starts — the request's, or an enclosing stage's — and exists only
//! when traces are exported and there is such a parent: the CLI's calls and the server's
//! background work make none, and nothing is done for them beyond one check.
//!
//! A stage records its name, the attributes its caller gives (names, kinds, counts — never
//! arguments, results, messages or anything a secret could be in) and, when it fails, an
//! `error.type` its caller classifies. While it runs it is a span id, a start time and a
//! `Context` naming it for its children; its span is made with its request's (`record`,
//! `spans`).

use crate::pipeline;
use crate::record::{Recorder, SpanRecord, new_span_id};
use opentelemetry::{Context, ContextGuard, KeyValue, Value};
use std::future::Future;
use std::sync::Mutex;

/// One stage's span (or nothing, when no span is made). The span ends when it is dropped.
#[must_use = "a stage's span ends when it is dropped"]
pub struct Stage {
    /// Boxed: with nothing recorded, a stage is one null pointer to move and drop.
    open: Option<Box<Open>>,
}

struct Open {
    /// The context its children start in (this stage current).
    cx: Context,
    recorder: std::sync::Arc<Recorder>,
    span: Mutex<SpanRecord>,
}

/// Start the stage `name` under the current span.
pub fn stage(name: &'static str) -> Stage {
    if pipeline::get().is_none_or(|p| p.tracer.is_none()) {
        return Stage { open: None };
    }
    let parent = Context::current();
    let Some((recorder, outer)) = crate::record::current(&parent) else {
        return Stage { open: None };
    };
    let id = new_span_id();
    let now = opentelemetry::time::now();
    Stage {
        open: Some(Box::new(Open {
            cx: crate::record::scope(&parent, id),
            recorder,
            span: Mutex::new(SpanRecord {
                name,
                id,
                parent: outer,
                start: now,
                end: now,
                attrs: Vec::new(),
                error: None,
            }),
        })),
    }
}

impl Stage {
    /// Whether a span is being recorded (attributes worth computing).
    pub fn is_recording(&self) -> bool {
        self.open.is_some()
    }

    fn with(&self, f: impl FnOnce(&mut SpanRecord)) {
        if let Some(o) = &self.open {
            f(&mut o.span.lock().unwrap_or_else(|p| p.into_inner()));
        }
    }

    /// Set an attribute (a name, a kind, a count: never content).
    pub fn attr(&self, key: &'static str, value: impl Into<Value>) {
        self.with(|s| s.attrs.push(KeyValue::new(key, value)));
    }

    /// Mark the stage failed with `error_type` (a fixed classification, never a message).
    pub fn fail(&self, error_type: &'static str) {
        self.with(|s| s.error = Some(error_type));
    }

    fn context(&self) -> Option<Context> {
        self.open.as_ref().map(|o| o.cx.clone())
    }

    /// Run `f` inside the stage (stages it starts are its children), then end it.
    pub fn enter<T>(self, f: impl FnOnce() -> T) -> T {
        let _attached: Option<ContextGuard> = self.context().map(Context::attach);
        f()
    }

    /// Run `f` inside the stage; a failure is classified by `kind`; then end it.
    pub fn enter_checked<T, E>(
        self,
        f: impl FnOnce() -> Result<T, E>,
        kind: impl FnOnce(&E) -> &'static str,
    ) -> Result<T, E> {
        let out = {
            let _attached: Option<ContextGuard> = self.context().map(Context::attach);
            f()
        };
        if let Err(e) = &out {
            self.fail(kind(e));
        }
        out
    }

    /// Await `fut` inside the stage (stages it starts are its children), then end it.
    pub async fn run<F: Future>(self, fut: F) -> F::Output {
        match self.context() {
            None => fut.await,
            Some(cx) => opentelemetry::context::FutureExt::with_context(fut, cx).await,
        }
    }

    /// `run` for a fallible future: a failure is classified by `kind`.
    pub async fn run_checked<T, E, F>(
        self,
        fut: F,
        kind: impl FnOnce(&E) -> &'static str,
    ) -> Result<T, E>
    where
        F: Future<Output = Result<T, E>>,
    {
        let out = match self.context() {
            None => fut.await,
            Some(cx) => opentelemetry::context::FutureExt::with_context(fut, cx).await,
        };
        if let Err(e) = &out {
            self.fail(kind(e));
        }
        out
    }
}

impl Drop for Stage {
    fn drop(&mut self) {
        let Some(o) = self.open.take() else { return };
        let mut span = o.span.into_inner().unwrap_or_else(|p| p.into_inner());
        span.end = opentelemetry::time::now();
        if let Some(late) = o.recorder.ended(span) {
            crate::spans::queue::push(crate::spans::Pending::Stage(o.recorder, late));
        }
    }
}

/// The span current where it was made, to be the parent of work that runs elsewhere: on
/// another thread (`spawn_blocking`) or as a task of its own (an MCP task outliving its
/// request), where the current span does not follow by itself.
#[derive(Clone)]
pub struct Carried(Option<Context>);

impl Carried {
    /// The current span (nothing when nothing is exported).
    pub fn here() -> Carried {
        Carried(pipeline::get().map(|_| Context::current()))
    }

    /// Run `f` with the carried span current.
    pub fn enter<T>(self, f: impl FnOnce() -> T) -> T {
        let _attached: Option<ContextGuard> = self.0.map(Context::attach);
        f()
    }

    /// Await `fut` with the carried span current.
    pub async fn run<F: Future>(self, fut: F) -> F::Output {
        match self.0 {
            None => fut.await,
            Some(cx) => opentelemetry::context::FutureExt::with_context(fut, cx).await,
        }
    }
}
