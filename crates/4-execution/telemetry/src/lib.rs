//! OpenTelemetry for toolsmith, off until configured: when the standard `OTEL_*` variables
//! name an OTLP endpoint (`settings`), `toolsmith serve` exports traces and metrics over OTLP
//! HTTP/protobuf (`pipeline`): a span per MCP request by the OpenTelemetry MCP conventions,
//! its parent the trace context the client sent in `_meta` (`request`), children for the
//! stages of a call, a build or a registration (`stage`), and the conventions' histograms with
//! per-tool call and error counts. While a request runs, it and its stages only record ids and
//! times (`record`); its spans and points are made together when it ends (`spans`).
//!
//! Invariant: nothing leaves the process that a person did not ask for. Arguments and results
//! are recorded only when the person opted in (`TOOLSMITH_TELEMETRY_CONTENT`, read by
//! `toolsmith-config` like every `TOOLSMITH_*` variable), and then redacted of every stored
//! secret; spans carry names, kinds, ids and classifications, never messages. The `OTEL_*`
//! variables are OpenTelemetry's standard ones: this crate and the SDK read them, nothing else.
//! This crate knows no MCP library types (only `toolsmith-mcp` has rmcp).

#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod pipeline;
mod record;
mod request;
pub mod settings;
mod spans;
mod stage;

pub use pipeline::{PipelineError, enabled, install, settings};
pub use record::{Outcome, Transport};
pub use request::{Request, RequestInfo, Target, request, session_ended};
pub use settings::Settings;
pub use spans::{flush, shutdown};
pub use stage::{Carried, Stage, stage};
