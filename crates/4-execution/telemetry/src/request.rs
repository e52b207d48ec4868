//! One MCP request's span and metrics by the OpenTelemetry MCP conventions: a SERVER span
//! named `{mcp.method.name} {target}` (the tool or prompt, where there is one), its parent the
//! W3C trace context the client sent in the request's `_meta` (`traceparent`, `tracestate`);
//! attributes `mcp.method.name`, `mcp.protocol.version`, `mcp.session.id`,
//! `jsonrpc.request.id`, `gen_ai.tool.name` and `gen_ai.operation.name = execute_tool` on
//! `tools/call`, `gen_ai.prompt.name`, `mcp.resource.uri`, `network.transport`, and on failure
//! `error.type` (`tool_error` for a result with `isError`, else the JSON-RPC code) and
//! `rpc.response.status_code`. When it ends, `mcp.server.operation.duration` gets a point, and
//! a `tools/call` counts in `toolsmith.tool.calls` (and `toolsmith.tool.errors`).
//!
//! Arguments and results are recorded (`gen_ai.tool.call.arguments`,
//! `gen_ai.tool.call.result`) only when the person opted in, and then only after every stored
//! secret value, in each of its forms, is replaced by `[secret NAME]`.
//!
//! While the request runs, its span is a span id and a start time (`record`); when it ends,
//! the telemetry thread makes the span, its stages' and the points (`spans`).
//!
//! The MCP layer knows the protocol; this module knows only the names and values it is given.

use crate::pipeline;
use crate::record::{Done, Outcome, Recorder, Target as Owned, Transport};
use opentelemetry::{Context, KeyValue};
use std::time::Instant;

/// The most characters of arguments or a result recorded (when content is recorded at all).
const CONTENT_CHARS: usize = 8 * 1024;

/// What a request is about.
#[derive(Debug, Clone, Copy)]
pub enum Target<'a> {
    /// Nothing in particular (lists, initialize, ping…).
    None,
    /// A tool (`tools/call`).
    Tool(&'a str),
    /// A prompt (`prompts/get`).
    Prompt(&'a str),
    /// A resource (`resources/read`, subscriptions).
    Resource(&'a str),
}

/// A request as the MCP layer describes it.
#[derive(Debug, Clone)]
pub struct RequestInfo<'a> {
    /// `mcp.method.name`.
    pub method: &'a str,
    /// The tool, prompt or resource.
    pub target: Target<'a>,
    /// `jsonrpc.request.id`.
    pub request_id: String,
    /// `mcp.protocol.version`, when known.
    pub protocol_version: Option<String>,
    /// `mcp.session.id`: toolsmith's session id (the one its commits' `Session:` trailer
    /// names), for sessions of the 2025 protocol; None for stateless 2026 requests.
    pub session_id: Option<&'a str>,
    /// `network.transport`.
    pub transport: Transport,
    /// `_meta.traceparent`.
    pub traceparent: Option<&'a str>,
    /// `_meta.tracestate`.
    pub tracestate: Option<&'a str>,
}

/// A request's span, while the request runs. When it is dropped — after `finish`, or
/// unfinished — its records go to the telemetry thread.
pub struct Request {
    cx: Context,
    started: Instant,
    /// What the telemetry thread gets; its end, duration and stages are filled in at the end.
    done: Option<Box<Done>>,
}

/// Start a request's span (None when nothing is exported).
pub fn request(info: &RequestInfo<'_>) -> Option<Request> {
    let p = pipeline::get()?;
    let recorder = Recorder::new();
    let cx = match &p.tracer {
        Some(_) => crate::record::scope(&Context::new().with_value(recorder.clone()), recorder.id),
        None => Context::new(),
    };
    let start = opentelemetry::time::now();
    Some(Request {
        cx,
        started: Instant::now(),
        done: Some(Box::new(Done {
            recorder,
            method: info.method.to_string(),
            target: match info.target {
                Target::None => Owned::None,
                Target::Tool(t) => Owned::Tool(t.to_string()),
                Target::Prompt(t) => Owned::Prompt(t.to_string()),
                Target::Resource(t) => Owned::Resource(t.to_string()),
            },
            request_id: info.request_id.clone(),
            protocol_version: info.protocol_version.clone(),
            session_id: info.session_id.map(str::to_string),
            transport: info.transport,
            traceparent: info.traceparent.map(str::to_string),
            tracestate: info.tracestate.map(str::to_string),
            start,
            end: start,
            secs: 0.0,
            outcome: None,
            content: Vec::new(),
            stages: Vec::new(),
        })),
    })
}

impl Request {
    /// The context the request's work runs in (its span current).
    pub fn context(&self) -> Context {
        self.cx.clone()
    }

    /// Await `fut` with the request's span current (the stages it starts become children).
    pub async fn run<F: std::future::Future>(&self, fut: F) -> F::Output {
        opentelemetry::context::FutureExt::with_context(fut, self.cx.clone()).await
    }

    /// Whether the person lets arguments and results be recorded.
    pub fn records_content(&self) -> bool {
        pipeline::get().is_some_and(|p| p.settings.content)
    }

    /// Record a tool's arguments and result (only when `records_content`), each redacted of
    /// every stored secret (in the JSON values, then in the text they make) and cut to
    /// `CONTENT_CHARS`.
    pub fn content(
        &mut self,
        arguments: Option<serde_json::Value>,
        result: Option<serde_json::Value>,
    ) {
        let (Some(p), Some(done)) = (
            pipeline::get().filter(|p| p.settings.content),
            self.done.as_mut(),
        ) else {
            return;
        };
        let redactor = match toolsmith_secrets::Store::new(&p.settings.personal).load() {
            Ok(all) => toolsmith_secrets::redact::Redactor::new(&all),
            // Secrets unreadable: nothing can be shown to be free of them.
            Err(_) => return,
        };
        for (key, value) in [
            ("gen_ai.tool.call.arguments", arguments),
            ("gen_ai.tool.call.result", result),
        ] {
            let Some(mut v) = value else { continue };
            redactor.json(&mut v);
            let mut clean = redactor.text(&v.to_string());
            if clean.len() > CONTENT_CHARS {
                let mut cut = CONTENT_CHARS;
                while !clean.is_char_boundary(cut) {
                    cut -= 1;
                }
                clean.truncate(cut);
                clean.push('…');
            }
            done.content.push(KeyValue::new(key, clean));
        }
    }

    /// End the span with `outcome` (and record the request's metrics).
    pub fn finish(mut self, outcome: Outcome) {
        if let Some(d) = self.done.as_mut() {
            d.outcome = Some(outcome);
        }
    }
}

impl Drop for Request {
    fn drop(&mut self) {
        let Some(mut done) = self.done.take() else {
            return;
        };
        done.end = opentelemetry::time::now();
        done.secs = self.started.elapsed().as_secs_f64();
        done.stages = done.recorder.take();
        crate::spans::queue::push(crate::spans::Pending::Request(done));
    }
}

/// A session ended after `secs` seconds: `mcp.server.session.duration`.
pub fn session_ended(secs: f64, protocol_version: Option<String>, transport: Transport) {
    let Some(m) = pipeline::get().and_then(|p| p.instruments.as_ref()) else {
        return;
    };
    let mut attrs = vec![KeyValue::new("network.transport", transport.name())];
    if let Some(v) = protocol_version {
        attrs.push(KeyValue::new("mcp.protocol.version", v));
    }
    m.session.record(secs, &attrs);
}
