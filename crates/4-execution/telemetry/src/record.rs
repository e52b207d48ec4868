//! What a request and its stages record while they run: names, ids, times and the attributes
//! their callers give. A stage takes a span id and a clock reading when it starts and pushes
//! its record when it ends; when the request ends, its records (`Done`) go to the telemetry
//! thread, which makes the SDK's spans and points (`spans`). Also here: the few types both
//! sides share (how the request arrived and ended), and the id generator that gives a span
//! made from a record the id its children already name (`Assigned`).
//!
//! A request's `Context` carries its recorder (a value) and the current span's id (its span
//! slot: the request's, or an enclosing stage's), which is the parent a stage starting there
//! records. A stage that ends after its request (work an MCP task carries on with) is sent on
//! its own, after it.

use opentelemetry::trace::{SpanContext, SpanId, TraceContextExt, TraceFlags, TraceId, TraceState};
use opentelemetry::{Context, KeyValue};
use opentelemetry_sdk::trace::{IdGenerator, RandomIdGenerator};
use std::cell::Cell;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::SystemTime;

/// A new span id, taken where the span starts (its children name it as their parent before it
/// is built).
pub(crate) fn new_span_id() -> SpanId {
    RandomIdGenerator::default().new_span_id()
}

/// One span as recorded: it is built with exactly these ids and times.
#[derive(Debug)]
pub(crate) struct SpanRecord {
    pub name: &'static str,
    pub id: SpanId,
    /// The enclosing span: the request's or an enclosing stage's.
    pub parent: SpanId,
    pub start: SystemTime,
    pub end: SystemTime,
    pub attrs: Vec<KeyValue>,
    /// `error.type` when the stage failed.
    pub error: Option<&'static str>,
}

/// A request's records while it runs, shared by the request and the stages under it.
#[derive(Debug)]
pub(crate) struct Recorder {
    /// The request's span id (its stages' parent).
    pub id: SpanId,
    stages: Mutex<Stages>,
    /// The request's span as built (a late stage's trace and parent).
    pub built: OnceLock<SpanContext>,
}

#[derive(Debug)]
struct Stages {
    ended: Vec<SpanRecord>,
    /// The request's spans were made: a stage that ends now is made on its own.
    made: bool,
}

impl Recorder {
    pub fn new() -> Arc<Recorder> {
        Arc::new(Recorder {
            id: new_span_id(),
            stages: Mutex::new(Stages {
                ended: Vec::with_capacity(8),
                made: false,
            }),
            built: OnceLock::new(),
        })
    }

    /// A stage ended: kept for the request, or given back (`Some`) when the request's spans
    /// were already made.
    pub fn ended(&self, span: SpanRecord) -> Option<SpanRecord> {
        let mut s = self.stages.lock().unwrap_or_else(|p| p.into_inner());
        if s.made {
            return Some(span);
        }
        s.ended.push(span);
        None
    }

    /// The request ends: the stages ended so far, in the order they started.
    pub fn take(&self) -> Vec<SpanRecord> {
        let mut s = self.stages.lock().unwrap_or_else(|p| p.into_inner());
        s.made = true;
        let mut out = std::mem::take(&mut s.ended);
        out.sort_by_key(|r| r.start);
        out
    }
}

/// `cx` with `recorder`'s span `id` current: the parent of stages that start in it.
pub(crate) fn scope(cx: &Context, id: SpanId) -> Context {
    cx.with_remote_span_context(SpanContext::new(
        TraceId::INVALID,
        id,
        TraceFlags::default(),
        false,
        TraceState::NONE,
    ))
}

/// The recorder and current span id of `cx`, when a request records there.
pub(crate) fn current(cx: &Context) -> Option<(Arc<Recorder>, SpanId)> {
    let recorder = cx.get::<Arc<Recorder>>()?;
    Some((recorder.clone(), cx.span().span_context().span_id()))
}

/// How the request arrived.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// stdio (`network.transport = pipe`).
    Pipe,
    /// Streamable HTTP (`network.transport = tcp`).
    Tcp,
}

impl Transport {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Transport::Pipe => "pipe",
            Transport::Tcp => "tcp",
        }
    }
}

/// How a request ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Answered.
    Ok,
    /// A tool's result with `isError`.
    ToolError,
    /// A JSON-RPC error with this code.
    RpcError(i32),
}

/// What a request was about, owned.
#[derive(Debug)]
pub(crate) enum Target {
    None,
    Tool(String),
    Prompt(String),
    Resource(String),
}

/// A request that ended, with everything its span and points need.
#[derive(Debug)]
pub(crate) struct Done {
    pub recorder: Arc<Recorder>,
    pub method: String,
    pub target: Target,
    pub request_id: String,
    pub protocol_version: Option<String>,
    pub session_id: Option<String>,
    pub transport: Transport,
    pub traceparent: Option<String>,
    pub tracestate: Option<String>,
    pub start: SystemTime,
    /// When it ended (set then).
    pub end: SystemTime,
    /// How long it took (set when it ended).
    pub secs: f64,
    /// None: dropped before it finished (no outcome, no points).
    pub outcome: Option<Outcome>,
    /// Arguments and result, redacted, when the person opted in.
    pub content: Vec<KeyValue>,
    /// Its stages that ended before it did, in start order (taken when it ended).
    pub stages: Vec<SpanRecord>,
}

thread_local! {
    /// The span id the next span built on this thread gets: the one it was recorded with.
    pub(crate) static ASSIGNED: Cell<Option<SpanId>> = const { Cell::new(None) };
}

/// The tracer provider's id generator: random ids, except for a span being made from a record,
/// which keeps the id its children already name.
#[derive(Debug, Default)]
pub(crate) struct Assigned(RandomIdGenerator);

impl IdGenerator for Assigned {
    fn new_trace_id(&self) -> TraceId {
        self.0.new_trace_id()
    }
    fn new_span_id(&self) -> SpanId {
        ASSIGNED
            .with(Cell::take)
            .unwrap_or_else(|| self.0.new_span_id())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(name: &'static str, start: SystemTime) -> SpanRecord {
        SpanRecord {
            name,
            id: new_span_id(),
            parent: SpanId::INVALID,
            start,
            end: start,
            attrs: Vec::new(),
            error: None,
        }
    }

    #[test]
    fn stages_come_in_start_order_and_a_late_one_is_given_back() {
        let r = Recorder::new();
        let t0 = SystemTime::now();
        // Children end before their parents: the order they started in is restored.
        assert!(
            r.ended(span("inner", t0 + std::time::Duration::from_micros(5)))
                .is_none()
        );
        assert!(r.ended(span("outer", t0)).is_none());
        let names: Vec<&str> = r.take().iter().map(|s| s.name).collect();
        assert_eq!(names, ["outer", "inner"]);
        // After the request's spans were made, a stage is made on its own.
        assert!(r.ended(span("late", t0)).is_some());
        assert!(r.take().is_empty());
    }

    #[test]
    fn a_context_names_its_recorder_and_current_span() {
        let r = Recorder::new();
        let cx = scope(&Context::new().with_value(r.clone()), r.id);
        let (found, id) = current(&cx).expect("a recording context");
        assert!(Arc::ptr_eq(&found, &r));
        assert_eq!(id, r.id);
        let child = new_span_id();
        let (_, id) = current(&scope(&cx, child)).unwrap();
        assert_eq!(id, child, "a stage's context names the stage");
        assert!(current(&Context::new()).is_none());
    }
}
