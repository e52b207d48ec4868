//! The process's export pipeline: a tracer provider with a batch span processor and a meter
//! provider with a periodic reader, both posting OTLP/HTTP protobuf to the configured
//! endpoints; the instruments; flushing at shutdown. Installed once, by the binary, when the
//! settings say to export; absent otherwise, so every span and metric call is one check.

use crate::settings::{Export, Settings};
use opentelemetry::KeyValue;
use opentelemetry::metrics::{Counter, Histogram, MeterProvider as _};
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::WithExportConfig;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::trace::{
    BatchConfig, BatchConfigBuilder, BatchSpanProcessor, SdkTracer, SdkTracerProvider,
};
use std::sync::OnceLock;
use thiserror::Error;

/// The instrumentation scope of everything toolsmith records.
const SCOPE: &str = "toolsmith";

/// Histogram bounds (seconds): the conventions' advice, with finer steps below 10 ms, where a
/// warm WASM call or a list answers.
const BOUNDS: [f64; 18] = [
    0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0,
    120.0, 300.0,
];

/// Why the pipeline could not be made.
#[derive(Debug, Error)]
pub enum PipelineError {
    /// The OTLP exporter refused its configuration.
    #[error("cannot set up the OTLP {signal} exporter: {message}")]
    Exporter {
        /// `traces` or `metrics`.
        signal: &'static str,
        /// The exporter's words.
        message: String,
    },
}

impl toolsmith_error::Hint for PipelineError {
    fn hint(&self) -> Option<String> {
        Some("check the OTEL_EXPORTER_OTLP_* variables (`toolsmith doctor` shows what they say); unset OTEL_EXPORTER_OTLP_ENDPOINT to export nothing".into())
    }
}

/// The instruments of the MCP conventions and toolsmith's own.
pub(crate) struct Instruments {
    /// `mcp.server.operation.duration` (s).
    pub operation: Histogram<f64>,
    /// `mcp.server.session.duration` (s).
    pub session: Histogram<f64>,
    /// `toolsmith.tool.calls`: calls per tool.
    pub calls: Counter<u64>,
    /// `toolsmith.tool.errors`: failed calls per tool.
    pub errors: Counter<u64>,
}

/// The installed pipeline.
pub(crate) struct Pipeline {
    pub tracer: Option<SdkTracer>,
    tracers: Option<SdkTracerProvider>,
    meters: Option<SdkMeterProvider>,
    pub instruments: Option<Instruments>,
    pub settings: Settings,
}

static PIPELINE: OnceLock<Pipeline> = OnceLock::new();

/// The pipeline, when one is installed.
pub(crate) fn get() -> Option<&'static Pipeline> {
    PIPELINE.get()
}

/// Whether anything is exported in this process (one atomic load).
pub fn enabled() -> bool {
    PIPELINE.get().is_some()
}

fn resource(settings: &Settings) -> Resource {
    let mut b = Resource::builder()
        .with_attribute(KeyValue::new("service.version", env!("CARGO_PKG_VERSION")));
    let named = settings.service_name.is_some()
        || Resource::builder()
            .build()
            .get(&opentelemetry::Key::from_static_str("service.name"))
            .is_some_and(|v| !v.as_str().starts_with("unknown_service"));
    if !named {
        b = b.with_service_name("toolsmith");
    }
    b.build()
}

/// Spans are exported in batches of [`BATCH`] (the SDK's default is 512) from a queue of
/// [`QUEUE`]: a call makes about six spans, and each export is a burst of work on a 2-core
/// machine's other core (measured: p95 overhead of a warm WASM call +12–13 % with 512, +6.5–7 %
/// with 2,048). A person's `OTEL_BSP_MAX_EXPORT_BATCH_SIZE` / `OTEL_BSP_MAX_QUEUE_SIZE` win.
const BATCH: usize = 2048;
const QUEUE: usize = 8192;

/// The batch configuration: the SDK's (which reads the `OTEL_BSP_*` variables), with
/// toolsmith's batch and queue sizes where `is_set` says the person gave none.
fn batch_config(is_set: impl Fn(&str) -> bool) -> BatchConfig {
    let mut b = BatchConfigBuilder::default();
    if !is_set("OTEL_BSP_MAX_QUEUE_SIZE") {
        b = b.with_max_queue_size(QUEUE);
    }
    if !is_set("OTEL_BSP_MAX_EXPORT_BATCH_SIZE") {
        b = b.with_max_export_batch_size(BATCH);
    }
    b.build()
}

/// Install the pipeline the settings ask for (once per process; later calls change
/// nothing). Ok(false): nothing to export.
pub fn install(settings: Settings) -> Result<bool, PipelineError> {
    let Export::To { traces, metrics } = &settings.export else {
        return Ok(false);
    };
    if PIPELINE.get().is_some() {
        return Ok(true);
    }
    toolsmith_platform::tls::install();
    let resource = resource(&settings);
    let tracers = match traces {
        Some(d) => {
            let exporter = opentelemetry_otlp::SpanExporter::builder()
                .with_http()
                .with_protocol(opentelemetry_otlp::Protocol::HttpBinary)
                .with_endpoint(d.url.clone())
                .build()
                .map_err(|e| PipelineError::Exporter {
                    signal: "traces",
                    message: e.to_string(),
                })?;
            let processor = BatchSpanProcessor::builder(exporter)
                .with_batch_config(batch_config(|k| std::env::var_os(k).is_some()))
                .build();
            Some(
                SdkTracerProvider::builder()
                    .with_id_generator(crate::record::Assigned::default())
                    .with_span_processor(processor)
                    .with_resource(resource.clone())
                    .build(),
            )
        }
        None => None,
    };
    let meters = match metrics {
        Some(d) => {
            let exporter = opentelemetry_otlp::MetricExporter::builder()
                .with_http()
                .with_protocol(opentelemetry_otlp::Protocol::HttpBinary)
                .with_endpoint(d.url.clone())
                .build()
                .map_err(|e| PipelineError::Exporter {
                    signal: "metrics",
                    message: e.to_string(),
                })?;
            Some(
                SdkMeterProvider::builder()
                    .with_periodic_exporter(exporter)
                    .with_resource(resource)
                    .build(),
            )
        }
        None => None,
    };
    let instruments = meters.as_ref().map(|p| {
        let meter = p.meter(SCOPE);
        Instruments {
            operation: meter
                .f64_histogram("mcp.server.operation.duration")
                .with_unit("s")
                .with_description("Duration of an MCP request or notification as the server saw it")
                .with_boundaries(BOUNDS.to_vec())
                .build(),
            session: meter
                .f64_histogram("mcp.server.session.duration")
                .with_unit("s")
                .with_description("Duration of an MCP session as the server saw it")
                .with_boundaries(BOUNDS.to_vec())
                .build(),
            calls: meter
                .u64_counter("toolsmith.tool.calls")
                .with_unit("{call}")
                .with_description("Calls of each tool (tools/call)")
                .build(),
            errors: meter
                .u64_counter("toolsmith.tool.errors")
                .with_unit("{call}")
                .with_description("Calls of each tool that failed (a protocol error or isError)")
                .build(),
        }
    });
    let tracer = tracers.as_ref().map(|p| p.tracer(SCOPE));
    let _ = PIPELINE.set(Pipeline {
        tracer,
        tracers,
        meters,
        instruments,
        settings,
    });
    Ok(true)
}

/// Stop the providers, exporting what the SDK still holds.
pub(crate) fn stop() {
    let Some(p) = PIPELINE.get() else { return };
    if let Some(t) = &p.tracers
        && let Err(e) = t.shutdown()
    {
        tracing::warn!("telemetry: the last spans could not be exported: {e}");
    }
    if let Some(m) = &p.meters
        && let Err(e) = m.shutdown()
    {
        tracing::warn!("telemetry: the last metric points could not be exported: {e}");
    }
}

/// The installed settings (None: nothing is exported).
pub fn settings() -> Option<&'static Settings> {
    PIPELINE.get().map(|p| &p.settings)
}
