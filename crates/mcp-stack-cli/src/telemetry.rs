//! The `mcp` binary's tracing: log lines on stderr (`MCP_LOG`, default `warn`) and, with
//! `--otlp-endpoint URL` (or `OTEL_EXPORTER_OTLP_ENDPOINT`), OTLP/HTTP export of the MCP spans
//! and duration histograms the server and client libraries emit through `tracing`.
//!
//! The two outputs have their own filters (per-layer filtering), so without an endpoint the
//! only filter is `MCP_LOG`'s and the libraries' `INFO` spans stay disabled: nothing is built
//! for them on the request path.

use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

/// `--otlp-endpoint`: where to export traces and metrics.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct TelemetryArgs {
    /// Export traces and metrics over OTLP/HTTP (protobuf) to this collector, e.g.
    /// http://127.0.0.1:4318 (to its /v1/traces and /v1/metrics). MCP_OTEL_FILTER picks the
    /// spans (default: info).
    #[arg(long, global = true, value_name = "URL", env = "OTEL_EXPORTER_OTLP_ENDPOINT")]
    pub otlp_endpoint: Option<String>,
}

/// Keeps the exporters running; dropping it flushes what is buffered (spans, then metrics)
/// and stops them. Keep it until the process is about to exit.
#[derive(Debug, Default)]
#[must_use = "dropping the guard stops the export"]
pub struct TelemetryGuard {
    #[cfg(feature = "otel")]
    _pipeline: Option<otel::Pipeline>,
}

/// How log lines look on stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogStyle {
    /// A server's log (`mcp serve`): time, level, target, fields.
    Server,
    /// A command's messages (client commands, and `mcp proxy`'s notices about its upstream):
    /// `mcp: warning: message key=value`, the style of the CLI's own messages.
    Command,
}

/// Installs the process's subscriber: log lines on stderr (`MCP_LOG`, default `warn`, and
/// `mcp_proxy=info` in the command style of `mcp proxy`; ANSI colours when `ansi`, in `style`), plus the OTLP export when `args` names an endpoint. An
/// endpoint that cannot be used is reported on stderr and the export left off.
pub fn init(args: &TelemetryArgs, ansi: bool, style: LogStyle) -> TelemetryGuard {
    // The proxy's notices about its upstream (which upstream, restarts) are `info` events; a
    // server keeps plain `warn`: an `info` directive for any target raises the level hint, and
    // the request path then builds what `info` spans and events need (measured: stdio f=64
    // lost a third of its throughput).
    let default = match style {
        LogStyle::Server => "warn",
        LogStyle::Command => "warn,mcp_proxy=info",
    };
    let filter = || EnvFilter::try_from_env("MCP_LOG").unwrap_or_else(|_| default.into());
    let fmt = tracing_subscriber::fmt::layer().with_writer(std::io::stderr).with_ansi(ansi);
    let log = match style {
        LogStyle::Server => fmt.with_filter(filter()).boxed(),
        LogStyle::Command => fmt.event_format(CommandLine).with_filter(filter()).boxed(),
    };
    let registry = tracing_subscriber::registry().with(log);
    let endpoint = args.otlp_endpoint.as_deref().map(str::trim).filter(|e| !e.is_empty());
    #[cfg(feature = "otel")]
    {
        let pipeline = endpoint.and_then(|e| match otel::Pipeline::start(e) {
            Ok(p) => Some(p),
            Err(e) => {
                eprintln!("mcp: --otlp-endpoint: {e}; not exporting");
                None
            }
        });
        let filter = || EnvFilter::try_from_env("MCP_OTEL_FILTER").unwrap_or_else(|_| "info".into());
        registry.with(pipeline.as_ref().map(|p| p.layer().with_filter(filter()))).init();
        TelemetryGuard { _pipeline: pipeline }
    }
    #[cfg(not(feature = "otel"))]
    {
        if endpoint.is_some() {
            eprintln!("mcp: --otlp-endpoint: this build has no `otel` feature; not exporting");
        }
        registry.init();
        TelemetryGuard {}
    }
}

/// Formats an event as the CLI's own messages are written: `mcp: warning: text key=value`.
struct CommandLine;

impl<S, N> tracing_subscriber::fmt::FormatEvent<S, N> for CommandLine
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
    N: for<'a> tracing_subscriber::fmt::FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &tracing_subscriber::fmt::FmtContext<'_, S, N>,
        mut w: tracing_subscriber::fmt::format::Writer<'_>,
        event: &tracing::Event<'_>,
    ) -> std::fmt::Result {
        let (level, colour) = match *event.metadata().level() {
            tracing::Level::ERROR => ("error", "31"),
            tracing::Level::WARN => ("warning", "33"),
            tracing::Level::INFO => ("note", "36"),
            _ => ("debug", "2"),
        };
        if w.has_ansi_escapes() {
            write!(w, "mcp: \x1b[{colour}m{level}\x1b[0m: ")?;
        } else {
            write!(w, "mcp: {level}: ")?;
        }
        ctx.field_format().format_fields(w.by_ref(), event)?;
        writeln!(w)
    }
}

#[cfg(feature = "otel")]
pub use otel::duration_view;

#[cfg(feature = "otel")]
mod otel {
    use opentelemetry::trace::TracerProvider as _;
    use opentelemetry_otlp::{Protocol, WithExportConfig, WithHttpConfig};
    use opentelemetry_sdk::metrics::{Aggregation, Instrument, PeriodicReader, SdkMeterProvider, Stream};
    use opentelemetry_sdk::trace::SdkTracerProvider;
    use opentelemetry_sdk::Resource;
    use std::time::Duration;
    use tracing_subscriber::registry::LookupSpan;
    use tracing_subscriber::Layer;

    /// The semantic conventions' bucket boundaries for MCP operation durations (seconds).
    const DURATION_BUCKETS: [f64; 14] =
        [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0];
    /// How long one export may take.
    pub(super) const EXPORT_TIMEOUT: Duration = Duration::from_secs(10);

    /// The running exporters and the thread their HTTP requests run on.
    #[derive(Debug)]
    pub(super) struct Pipeline {
        tracer: SdkTracerProvider,
        meter: SdkMeterProvider,
        _client: super::export_http::ExportClient,
    }

    impl Pipeline {
        /// Exporters to the collector at `endpoint` (a base URL; the signal paths are added).
        pub(super) fn start(endpoint: &str) -> Result<Self, String> {
            let base = endpoint.trim_end_matches('/');
            if !(base.starts_with("http://") || base.starts_with("https://")) {
                return Err(format!("{endpoint:?} is not an http:// or https:// URL"));
            }
            let client = super::export_http::ExportClient::start().map_err(|e| format!("export thread: {e}"))?;
            let resource = Resource::builder().with_service_name("mcp").build();
            let spans = opentelemetry_otlp::SpanExporter::builder()
                .with_http()
                .with_http_client(client.clone())
                .with_protocol(Protocol::HttpBinary)
                .with_endpoint(format!("{base}/v1/traces"))
                .with_timeout(EXPORT_TIMEOUT)
                .build()
                .map_err(|e| e.to_string())?;
            let metrics = opentelemetry_otlp::MetricExporter::builder()
                .with_http()
                .with_http_client(client.clone())
                .with_protocol(Protocol::HttpBinary)
                .with_endpoint(format!("{base}/v1/metrics"))
                .with_timeout(EXPORT_TIMEOUT)
                .build()
                .map_err(|e| e.to_string())?;
            let tracer =
                SdkTracerProvider::builder().with_batch_exporter(spans).with_resource(resource.clone()).build();
            let meter = SdkMeterProvider::builder()
                .with_reader(PeriodicReader::builder(metrics).build())
                .with_resource(resource)
                .with_view(duration_view)
                .build();
            opentelemetry::global::set_text_map_propagator(propagator());
            Ok(Self { tracer, meter, _client: client })
        }

        /// The layers turning `tracing` spans and `histogram.` events into OpenTelemetry.
        pub(super) fn layer<S>(&self) -> impl Layer<S> + Send + Sync
        where
            S: tracing::Subscriber + for<'a> LookupSpan<'a> + Send + Sync,
        {
            let spans = tracing_opentelemetry::layer().with_tracer(self.tracer.tracer("mcp"));
            spans.and_then(tracing_opentelemetry::MetricsLayer::new(self.meter.clone()))
        }
    }

    impl Drop for Pipeline {
        fn drop(&mut self) {
            // Flushes on the export thread, which stops after (when `client` drops).
            if let Err(e) = self.tracer.shutdown() {
                eprintln!("mcp: exporting spans: {e}");
            }
            if let Err(e) = self.meter.shutdown() {
                eprintln!("mcp: exporting metrics: {e}");
            }
        }
    }

    /// W3C Trace Context and Baggage, the keys `_meta` reserves.
    fn propagator() -> opentelemetry::propagation::TextMapCompositePropagator {
        opentelemetry::propagation::TextMapCompositePropagator::new(vec![
            Box::new(opentelemetry_sdk::propagation::TraceContextPropagator::new()),
            Box::new(opentelemetry_sdk::propagation::BaggagePropagator::new()),
        ])
    }

    /// The view giving `mcp.server.operation.duration`, `mcp.client.operation.duration` and the
    /// gateway's `mcp.gateway.upstream.duration` (recorded through `tracing` as `histogram.`
    /// events) their unit, seconds, and the semantic conventions' bucket boundaries. For a meter provider built by hand
    /// (`SdkMeterProvider::builder().with_view(duration_view)`).
    pub fn duration_view(i: &Instrument) -> Option<Stream> {
        const DURATIONS: [&str; 3] =
            ["mcp.server.operation.duration", "mcp.client.operation.duration", "mcp.gateway.upstream.duration"];
        if !DURATIONS.contains(&i.name()) {
            return None;
        }
        Stream::builder()
            .with_unit("s")
            .with_aggregation(Aggregation::ExplicitBucketHistogram {
                boundaries: DURATION_BUCKETS.to_vec(),
                record_min_max: true,
            })
            .build()
            .ok()
    }
}

#[cfg(feature = "otel")]
mod export_http {
    //! The exporters' HTTP client: reqwest (already in the tree for the client commands) on a
    //! thread of its own with a one-thread runtime, so export works from the SDK's background
    //! threads whatever runtime, if any, the rest of the process runs.

    use bytes::Bytes;
    use opentelemetry_http::{HttpClient, HttpError};

    /// Sends export requests on the export thread. Cheap to clone.
    #[derive(Debug, Clone)]
    pub(super) struct ExportClient {
        client: reqwest::Client,
        runtime: tokio::runtime::Handle,
        _stop: std::sync::Arc<Stop>,
    }

    /// Ends the export thread when the last client is dropped.
    #[derive(Debug)]
    struct Stop(Option<tokio::sync::oneshot::Sender<()>>);

    impl Drop for Stop {
        fn drop(&mut self) {
            if let Some(tx) = self.0.take() {
                let _ = tx.send(());
            }
        }
    }

    impl ExportClient {
        /// Starts the export thread.
        pub(super) fn start() -> std::io::Result<Self> {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
            let handle = runtime.handle().clone();
            let (tx, rx) = tokio::sync::oneshot::channel::<()>();
            std::thread::Builder::new().name("mcp-otlp".into()).spawn(move || {
                let _ = runtime.block_on(rx);
            })?;
            let client = reqwest::Client::builder()
                .timeout(super::otel::EXPORT_TIMEOUT)
                .build()
                .map_err(std::io::Error::other)?;
            Ok(Self { client, runtime: handle, _stop: std::sync::Arc::new(Stop(Some(tx))) })
        }
    }

    #[async_trait::async_trait]
    impl HttpClient for ExportClient {
        async fn send_bytes(&self, request: http::Request<Bytes>) -> Result<http::Response<Bytes>, HttpError> {
            let client = self.client.clone();
            let request = reqwest::Request::try_from(request.map(reqwest::Body::from))?;
            let sent = self.runtime.spawn(async move {
                let response = client.execute(request).await?;
                let mut out = http::Response::builder().status(response.status().as_u16());
                for (k, v) in response.headers() {
                    out = out.header(k.as_str(), v.as_bytes());
                }
                let body = response.bytes().await?;
                Ok::<_, HttpError>(out.body(body)?)
            });
            sent.await?
        }
    }
}
