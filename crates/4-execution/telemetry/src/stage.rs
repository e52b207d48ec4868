//! Child spans for the stages of work a request does (a call's argument check, approval wait,
//! sandbox start, run and redaction; a build's or registration's steps). A stage is a child of
//! the span current where it starts — the request's, or an enclosing stage's — and exists only
//! when the pipeline is installed and there is such a parent: the CLI's calls and the server's
//! background work make none, and nothing is done for them beyond one check.
//!
//! A stage records its name, the attributes its caller gives (names, kinds, counts — never
//! arguments, results, messages or anything a secret could be in) and, when it fails, an
//! `error.type` its caller classifies.

use crate::pipeline;
use opentelemetry::trace::{SpanKind, Status, TraceContextExt, Tracer};
use opentelemetry::{Context, ContextGuard, KeyValue, Value};
use std::future::Future;

/// One stage's span (or nothing, when no span is made). The span ends when it is dropped.
#[must_use = "a stage's span ends when it is dropped"]
pub struct Stage {
    cx: Option<Context>,
}

/// Start the stage `name` under the current span.
pub fn stage(name: &'static str) -> Stage {
    let Some(tracer) = pipeline::get().and_then(|p| p.tracer.as_ref()) else {
        return Stage { cx: None };
    };
    let parent = Context::current();
    if !parent.has_active_span() {
        return Stage { cx: None };
    }
    let span = tracer
        .span_builder(name)
        .with_kind(SpanKind::Internal)
        .start_with_context(tracer, &parent);
    Stage {
        cx: Some(parent.with_span(span)),
    }
}

impl Stage {
    /// Whether a span is being recorded (attributes worth computing).
    pub fn is_recording(&self) -> bool {
        self.cx.is_some()
    }

    /// Set an attribute (a name, a kind, a count: never content).
    pub fn attr(&self, key: &'static str, value: impl Into<Value>) {
        if let Some(cx) = &self.cx {
            cx.span().set_attribute(KeyValue::new(key, value));
        }
    }

    /// Mark the stage failed with `error_type` (a fixed classification, never a message).
    pub fn fail(&self, error_type: &'static str) {
        if let Some(cx) = &self.cx {
            let span = cx.span();
            span.set_attribute(KeyValue::new("error.type", error_type));
            span.set_status(Status::error(error_type));
        }
    }

    /// Run `f` inside the stage (stages it starts are its children), then end it.
    pub fn enter<T>(self, f: impl FnOnce() -> T) -> T {
        let _attached: Option<ContextGuard> = self.cx.clone().map(Context::attach);
        f()
    }

    /// Run `f` inside the stage; a failure is classified by `kind`; then end it.
    pub fn enter_checked<T, E>(
        self,
        f: impl FnOnce() -> Result<T, E>,
        kind: impl FnOnce(&E) -> &'static str,
    ) -> Result<T, E> {
        let out = {
            let _attached: Option<ContextGuard> = self.cx.clone().map(Context::attach);
            f()
        };
        if let Err(e) = &out {
            self.fail(kind(e));
        }
        out
    }

    /// Await `fut` inside the stage (stages it starts are its children), then end it.
    pub async fn run<F: Future>(self, fut: F) -> F::Output {
        match self.cx.clone() {
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
        let out = match self.cx.clone() {
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
        if let Some(cx) = &self.cx {
            cx.span().end();
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
