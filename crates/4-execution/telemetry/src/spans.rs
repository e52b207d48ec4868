//! Making a request's records (`record`) into the SDK's spans — with the ids and times they
//! were recorded with — and its metric points, which the SDK's batch processor and periodic
//! reader then export. That is done on a thread of its own, off the path a client waits on
//! (`queue`). Measured on a warm WASM call (`benches/telemetry.rs`): made on the calling
//! thread, between the call's own steps where the caches are cold, the spans and points cost
//! ~27 µs a call (+6.4 to +8.7 % at p50); recorded there and made here, +3.1 to +5.9 % over
//! ten runs, median +4.1 %.

use crate::pipeline::Pipeline;
use crate::record::{ASSIGNED, Done, Outcome, Recorder, SpanRecord, Target};
use opentelemetry::propagation::{Extractor, TextMapPropagator};
use opentelemetry::trace::{
    Span as _, SpanContext, SpanId, SpanKind, Status, TraceContextExt, Tracer,
};
use opentelemetry::{Context, KeyValue};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::SdkTracer;
use std::cell::Cell;
use std::sync::Arc;

/// Start a span with the recorded id `id`.
fn start_as(
    tracer: &SdkTracer,
    id: SpanId,
    b: opentelemetry::trace::SpanBuilder,
    parent: &Context,
) -> opentelemetry_sdk::trace::Span {
    ASSIGNED.with(|a| a.set(Some(id)));
    let span = b.start_with_context(tracer, parent);
    // Not taken when the SDK made no span (shut down): it must not name another one.
    ASSIGNED.with(Cell::take);
    span
}

struct Meta<'a> {
    traceparent: Option<&'a str>,
    tracestate: Option<&'a str>,
}

impl Extractor for Meta<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        match key {
            "traceparent" => self.traceparent,
            "tracestate" => self.tracestate,
            _ => None,
        }
    }
    fn keys(&self) -> Vec<&str> {
        vec!["traceparent", "tracestate"]
    }
}

/// A stage's span in `request`'s trace, its parent the span its record names.
pub(crate) fn stage(tracer: &SdkTracer, request: &SpanContext, s: SpanRecord) {
    let parent = Context::new().with_remote_span_context(SpanContext::new(
        request.trace_id(),
        s.parent,
        request.trace_flags(),
        false,
        request.trace_state().clone(),
    ));
    let b = tracer
        .span_builder(s.name)
        .with_kind(SpanKind::Internal)
        .with_start_time(s.start)
        .with_attributes(s.attrs);
    let mut span = start_as(tracer, s.id, b, &parent);
    if let Some(e) = s.error {
        span.set_attribute(KeyValue::new("error.type", e));
        span.set_status(Status::error(e));
    }
    span.end_with_timestamp(s.end);
}

fn error_type(outcome: Option<Outcome>) -> Option<String> {
    match outcome? {
        Outcome::Ok => None,
        Outcome::ToolError => Some("tool_error".to_string()),
        Outcome::RpcError(code) => Some(code.to_string()),
    }
}

/// The request's span (parent: the client's `traceparent`), its stages' spans under it, and
/// its points.
pub(crate) fn request(p: &Pipeline, d: Done) {
    let error = error_type(d.outcome);
    if let Some(tracer) = &p.tracer {
        let parent = match &d.traceparent {
            Some(tp) => TraceContextPropagator::new().extract(&Meta {
                traceparent: Some(tp),
                tracestate: d.tracestate.as_deref(),
            }),
            None => Context::new(),
        };
        let name = match &d.target {
            Target::Tool(t) | Target::Prompt(t) => format!("{} {t}", d.method),
            _ => d.method.clone(),
        };
        let mut attrs = vec![
            KeyValue::new("mcp.method.name", d.method.clone()),
            KeyValue::new("jsonrpc.request.id", d.request_id.clone()),
            KeyValue::new("network.transport", d.transport.name()),
        ];
        if let Some(v) = &d.protocol_version {
            attrs.push(KeyValue::new("mcp.protocol.version", v.clone()));
        }
        if let Some(s) = &d.session_id {
            attrs.push(KeyValue::new("mcp.session.id", s.clone()));
        }
        match &d.target {
            Target::Tool(t) => {
                attrs.push(KeyValue::new("gen_ai.tool.name", t.clone()));
                attrs.push(KeyValue::new("gen_ai.operation.name", "execute_tool"));
            }
            Target::Prompt(n) => attrs.push(KeyValue::new("gen_ai.prompt.name", n.clone())),
            Target::Resource(u) => attrs.push(KeyValue::new("mcp.resource.uri", u.clone())),
            Target::None => {}
        }
        attrs.extend(d.content.iter().cloned());
        if let Some(t) = &error {
            attrs.push(KeyValue::new("error.type", t.clone()));
            if let Some(Outcome::RpcError(code)) = d.outcome {
                attrs.push(KeyValue::new("rpc.response.status_code", code.to_string()));
            }
        }
        let b = tracer
            .span_builder(name)
            .with_kind(SpanKind::Server)
            .with_start_time(d.start)
            .with_attributes(attrs);
        let mut span = start_as(tracer, d.recorder.id, b, &parent);
        let built = span.span_context().clone();
        let _ = d.recorder.built.set(built.clone());
        for s in d.stages {
            stage(tracer, &built, s);
        }
        if let Some(t) = &error {
            span.set_status(Status::error(t.clone()));
        }
        span.end_with_timestamp(d.end);
    }
    // An unfinished request (dropped) has no outcome to count.
    let (Some(m), Some(_)) = (&p.instruments, d.outcome) else {
        return;
    };
    let tool = match d.target {
        Target::Tool(t) => Some(t),
        _ => None,
    };
    let mut attrs = vec![
        KeyValue::new("mcp.method.name", d.method),
        KeyValue::new("network.transport", d.transport.name()),
    ];
    if let Some(v) = d.protocol_version {
        attrs.push(KeyValue::new("mcp.protocol.version", v));
    }
    if let Some(t) = &tool {
        attrs.push(KeyValue::new("gen_ai.tool.name", t.clone()));
    }
    if let Some(e) = &error {
        attrs.push(KeyValue::new("error.type", e.clone()));
    }
    m.operation.record(d.secs, &attrs);
    if let Some(t) = tool {
        let tool = [KeyValue::new("gen_ai.tool.name", t)];
        m.calls.add(1, &tool);
        if let Some(e) = error {
            m.errors
                .add(1, &[tool[0].clone(), KeyValue::new("error.type", e)]);
        }
    }
}

/// What waits for the telemetry thread: requests that ended, and stages that ended after
/// their request (made after it, in order).
pub(crate) enum Pending {
    Request(Box<Done>),
    Stage(Arc<Recorder>, SpanRecord),
}

fn make(p: &Pipeline, item: Pending) {
    match item {
        Pending::Request(d) => request(p, *d),
        Pending::Stage(recorder, s) => {
            if let (Some(tracer), Some(request)) = (&p.tracer, recorder.built.get()) {
                stage(tracer, request, s);
            }
        }
    }
}

/// The telemetry thread's queue. The thread takes what waits every [`queue::EVERY`], and
/// sleeps until woken when nothing does: a request wakes it only when it was idle, never once
/// per request (a wake per request cost more than the spans).
pub(crate) mod queue {
    use super::{Pending, make};
    use std::sync::{Condvar, Mutex, Once};
    use std::time::Duration;

    /// How often the thread takes what waits while requests come.
    pub const EVERY: Duration = Duration::from_millis(20);
    /// The most that waits: past it, a request's telemetry is dropped (said once).
    const MOST: usize = 16 * 1024;

    struct Queue {
        items: Vec<Pending>,
        idle: bool,
        dropped: u64,
    }

    static QUEUE: Mutex<Queue> = Mutex::new(Queue {
        items: Vec::new(),
        idle: false,
        dropped: 0,
    });
    static WAKE: Condvar = Condvar::new();
    /// Held while what was taken is being made, so a flush waits for it.
    static MAKING: Mutex<()> = Mutex::new(());

    fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
        m.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Queue `item` for the telemetry thread (started on first use).
    pub fn push(item: Pending) {
        static THREAD: Once = Once::new();
        THREAD.call_once(|| {
            if let Err(e) = std::thread::Builder::new()
                .name("telemetry".into())
                .spawn(run)
            {
                tracing::warn!(
                    "telemetry: cannot start its thread ({e}); spans are made at shutdown"
                );
            }
        });
        let mut q = lock(&QUEUE);
        if q.items.len() >= MOST {
            q.dropped += 1;
            if q.dropped == 1 {
                tracing::warn!(
                    "telemetry: its thread is behind; requests' spans and points are being dropped"
                );
            }
            return;
        }
        q.items.push(item);
        if q.idle {
            q.idle = false;
            WAKE.notify_one();
        }
    }

    fn run() {
        loop {
            {
                let mut q = lock(&QUEUE);
                while q.items.is_empty() {
                    q.idle = true;
                    q = WAKE.wait(q).unwrap_or_else(|p| p.into_inner());
                }
            }
            std::thread::sleep(EVERY);
            flush();
        }
    }

    /// Make everything queued so far into spans and points, here and now (after what the
    /// thread is making). The number of requests dropped because the queue was full.
    pub fn flush() -> u64 {
        let _making = lock(&MAKING);
        let (items, dropped) = {
            let mut q = lock(&QUEUE);
            (std::mem::take(&mut q.items), q.dropped)
        };
        if let Some(p) = crate::pipeline::get() {
            for item in items {
                make(p, item);
            }
        }
        dropped
    }
}

/// Make what requests recorded so far into spans and points now (normally done on the
/// telemetry thread every ~20 ms), for the SDK to export.
pub fn flush() {
    queue::flush();
}

/// Export what is still buffered and stop (the server stopping). Spans and points recorded
/// after this are dropped.
pub fn shutdown() {
    if !crate::pipeline::enabled() {
        return;
    }
    let dropped = queue::flush();
    if dropped > 0 {
        tracing::warn!(
            "telemetry: {dropped} requests' spans and points were dropped (its thread was behind)"
        );
    }
    crate::pipeline::stop();
}

#[cfg(test)]
mod tests {
    use super::*;
    use opentelemetry::trace::TracerProvider as _;

    #[test]
    fn a_span_made_from_a_record_keeps_its_recorded_id() {
        let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder()
            .with_id_generator(crate::record::Assigned::default())
            .build();
        let tracer = provider.tracer("test");
        let id = crate::record::new_span_id();
        let span = start_as(&tracer, id, tracer.span_builder("x"), &Context::new());
        assert_eq!(span.span_context().span_id(), id);
        // The next span gets a fresh id, not the assigned one again.
        let other = tracer.start("y");
        assert_ne!(other.span_context().span_id(), id);
        assert!(other.span_context().is_valid());
    }
}
