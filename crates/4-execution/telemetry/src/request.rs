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
//! The MCP layer knows the protocol; this module knows only the names and values it is given.

use crate::pipeline;
use opentelemetry::propagation::{Extractor, TextMapPropagator};
use opentelemetry::trace::{SpanKind, Status, TraceContextExt, Tracer};
use opentelemetry::{Context, KeyValue};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use std::time::Instant;

/// The most characters of arguments or a result recorded (when content is recorded at all).
const CONTENT_CHARS: usize = 8 * 1024;

/// How the request arrived.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// stdio (`network.transport = pipe`).
    Pipe,
    /// Streamable HTTP (`network.transport = tcp`).
    Tcp,
}

impl Transport {
    fn name(self) -> &'static str {
        match self {
            Transport::Pipe => "pipe",
            Transport::Tcp => "tcp",
        }
    }
}

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

/// A request's span, while the request runs.
pub struct Request {
    cx: Context,
    started: Instant,
    method: String,
    tool: Option<String>,
    protocol_version: Option<String>,
    transport: Transport,
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

/// Start a request's span (None when nothing is exported).
pub fn request(info: &RequestInfo<'_>) -> Option<Request> {
    let p = pipeline::get()?;
    let (name_target, tool) = match info.target {
        Target::Tool(t) => (Some(t), Some(t.to_string())),
        Target::Prompt(p) => (Some(p), None),
        _ => (None, None),
    };
    let parent = match info.traceparent {
        Some(tp) => TraceContextPropagator::new().extract(&Meta {
            traceparent: Some(tp),
            tracestate: info.tracestate,
        }),
        None => Context::new(),
    };
    let cx = match &p.tracer {
        Some(tracer) => {
            let name = match name_target {
                Some(t) => format!("{} {t}", info.method),
                None => info.method.to_string(),
            };
            let mut attrs = vec![
                KeyValue::new("mcp.method.name", info.method.to_string()),
                KeyValue::new("jsonrpc.request.id", info.request_id.clone()),
                KeyValue::new("network.transport", info.transport.name()),
            ];
            if let Some(v) = &info.protocol_version {
                attrs.push(KeyValue::new("mcp.protocol.version", v.clone()));
            }
            if let Some(s) = info.session_id {
                attrs.push(KeyValue::new("mcp.session.id", s.to_string()));
            }
            match info.target {
                Target::Tool(t) => {
                    attrs.push(KeyValue::new("gen_ai.tool.name", t.to_string()));
                    attrs.push(KeyValue::new("gen_ai.operation.name", "execute_tool"));
                }
                Target::Prompt(n) => attrs.push(KeyValue::new("gen_ai.prompt.name", n.to_string())),
                Target::Resource(u) => attrs.push(KeyValue::new("mcp.resource.uri", u.to_string())),
                Target::None => {}
            }
            let span = tracer
                .span_builder(name)
                .with_kind(SpanKind::Server)
                .with_attributes(attrs)
                .start_with_context(tracer, &parent);
            parent.with_span(span)
        }
        None => parent,
    };
    Some(Request {
        cx,
        started: Instant::now(),
        method: info.method.to_string(),
        tool,
        protocol_version: info.protocol_version.clone(),
        transport: info.transport,
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
    pub fn content(&self, arguments: Option<serde_json::Value>, result: Option<serde_json::Value>) {
        let Some(p) = pipeline::get().filter(|p| p.settings.content) else {
            return;
        };
        let redactor = match toolsmith_secrets::Store::new(&p.settings.personal).load() {
            Ok(all) => toolsmith_secrets::redact::Redactor::new(&all),
            // Secrets unreadable: nothing can be shown to be free of them.
            Err(_) => return,
        };
        let span = self.cx.span();
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
            span.set_attribute(KeyValue::new(key, clean));
        }
    }

    /// End the span with `outcome` and record the request's metrics.
    pub fn finish(self, outcome: Outcome) {
        let secs = self.started.elapsed().as_secs_f64();
        let error_type = match outcome {
            Outcome::Ok => None,
            Outcome::ToolError => Some("tool_error".to_string()),
            Outcome::RpcError(code) => Some(code.to_string()),
        };
        let span = self.cx.span();
        if let Some(t) = &error_type {
            span.set_attribute(KeyValue::new("error.type", t.clone()));
            if let Outcome::RpcError(code) = outcome {
                span.set_attribute(KeyValue::new("rpc.response.status_code", code.to_string()));
            }
            span.set_status(Status::error(t.clone()));
        }
        span.end();
        let Some(m) = pipeline::get().and_then(|p| p.instruments.as_ref()) else {
            return;
        };
        let mut attrs = vec![
            KeyValue::new("mcp.method.name", self.method),
            KeyValue::new("network.transport", self.transport.name()),
        ];
        if let Some(v) = self.protocol_version {
            attrs.push(KeyValue::new("mcp.protocol.version", v));
        }
        if let Some(t) = &self.tool {
            attrs.push(KeyValue::new("gen_ai.tool.name", t.clone()));
        }
        if let Some(e) = &error_type {
            attrs.push(KeyValue::new("error.type", e.clone()));
        }
        m.operation.record(secs, &attrs);
        if let Some(t) = self.tool {
            let tool = [KeyValue::new("gen_ai.tool.name", t)];
            m.calls.add(1, &tool);
            if let Some(e) = error_type {
                m.errors
                    .add(1, &[tool[0].clone(), KeyValue::new("error.type", e)]);
            }
        }
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
