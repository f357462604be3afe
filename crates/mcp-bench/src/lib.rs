//! Benchmark tooling for the MCP workspace.
//!
//! Binaries here (besides `mcp-coldstart` and `mcp-crossing`):
//! - `mcp-load`: a load generator that drives the `echo` tool over Streamable HTTP (keep-alive
//!   HTTP/1.1 connections, one request in flight each) or over stdio (pipelined, N in flight),
//!   and reports throughput, latency percentiles and the server's memory and CPU use.
//! - `mcp-ceiling-http`: a minimal hyper server that answers the same request with the same
//!   response shape using nothing but `serde_json::Value` — the "ceiling" an MCP server on the
//!   same stack can at best reach.
//! - `mcp-ceiling-stdio`: the same for newline-delimited JSON on stdin/stdout.
//! - `mcp-client-bench`: our client library (`mcp-stack-client`) against the ceiling servers,
//!   next to raw hyper / NDJSON client loops doing the same requests.
//! - `mcp-jwks`: a JWKS on 127.0.0.1 and a token signed with its key, for the production shape
//!   of `scripts/bench.sh` (servers that validate bearer JWTs).
//! - `mcp-hostile`: the figures of `mcp serve everything` under hostile clients (trickled and
//!   stalled bodies, a full connection cap, a burst of large bodies, legacy `initialize` and
//!   listen-filter floods, stdio with stdout unread, unsolicited and log notification floods);
//!   its HTTP client pieces are in [`hostile`], its flood server and flood cases in [`flood`].
//!
//! The ceiling servers also answer `server/discover` and `tools/list` ([`ceiling_response`]),
//! so that a real client can connect to them.
//!
//! This library holds what they share: the request and response shapes, duration parsing,
//! `/proc` readers and the report.

pub mod flood;
pub mod hostile;

use serde::Serialize;
use serde_json::{Map, Value};
use std::time::Duration;

/// The protocol revision the load generator speaks.
pub const PROTOCOL_VERSION: &str = "2026-07-28";

/// Number of worker threads to use: the CPUs this process may run on (so `taskset -c 0`
/// gives one worker).
pub fn worker_threads() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
}

/// One `tools/call` request for the `echo` tool, as a single line of JSON (no newline).
///
/// `text_json` is the already JSON-encoded text argument (with quotes).
pub fn echo_request(id: u64, text_json: &str) -> String {
    format!(
        concat!(
            r#"{{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{{"name":"echo","#,
            r#""arguments":{{"text":{}}},"_meta":{{"io.modelcontextprotocol/protocolVersion":"{}","#,
            r#""io.modelcontextprotocol/clientCapabilities":{{}}}}}}}}"#
        ),
        id, text_json, PROTOCOL_VERSION
    )
}

/// The response the ceiling servers give to an echo request:
/// `{"jsonrpc":"2.0","id":<id>,"result":{"content":[{"type":"text","text":<text>}],"resultType":"complete"}}`.
///
/// `id` and `text` are taken out of the parsed request; a missing one becomes `null`.
pub fn echo_response(mut request: Value) -> Value {
    let id = request.get_mut("id").map_or(Value::Null, Value::take);
    let text = request.pointer_mut("/params/arguments/text").map_or(Value::Null, Value::take);
    let mut item = Map::with_capacity(2);
    item.insert("type".into(), Value::String("text".into()));
    item.insert("text".into(), text);
    let mut result = Map::with_capacity(2);
    result.insert("content".into(), Value::Array(vec![Value::Object(item)]));
    result.insert("resultType".into(), Value::String("complete".into()));
    let mut resp = Map::with_capacity(3);
    resp.insert("jsonrpc".into(), Value::String("2.0".into()));
    resp.insert("id".into(), id);
    resp.insert("result".into(), Value::Object(result));
    Value::Object(resp)
}

/// What the ceiling servers answer to `request`: a `DiscoverResult` for `server/discover` and
/// a one-tool list for `tools/list` (what a client needs to connect and call `echo`), and
/// [`echo_response`] for everything else (so `mcp-load`'s requests cost what they always did).
pub fn ceiling_response(request: Value) -> Value {
    let result = match request.get("method").and_then(Value::as_str) {
        Some("server/discover") => serde_json::json!({
            "supportedVersions": [PROTOCOL_VERSION],
            "capabilities": {"tools": {}},
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "mcp-ceiling", "version": "0"}},
            "resultType": "complete"
        }),
        Some("tools/list") => serde_json::json!({
            "tools": [{"name": "echo", "description": "Echoes `text`.",
                "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}}],
            "resultType": "complete"
        }),
        _ => return echo_response(request),
    };
    let id = request.get("id").cloned().unwrap_or(Value::Null);
    serde_json::json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// Whether `body` contains the member `"id":<id>` (followed by a non-digit).
pub fn has_id(body: &[u8], id: u64) -> bool {
    let needle = format!("\"id\":{id}");
    let n = needle.as_bytes();
    body.windows(n.len()).enumerate().any(|(i, w)| w == n && body.get(i + n.len()).is_none_or(|b| !b.is_ascii_digit()))
}

/// Whether `haystack` contains `needle`.
pub fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    needle.is_empty() || haystack.windows(needle.len()).any(|w| w == needle)
}

/// Parses a duration such as `10s`, `500ms`, `2m`, `1.5s` or a bare number of seconds.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let split = s.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let n: f64 = num.parse().map_err(|_| format!("invalid duration {s:?} (try 10s, 500ms, 2m)"))?;
    let secs = match unit.trim() {
        "" | "s" => n,
        "ms" => n / 1000.0,
        "m" | "min" => n * 60.0,
        other => return Err(format!("unknown duration unit {other:?} (use ms, s or m)")),
    };
    if !secs.is_finite() || !(0.0..=86_400.0).contains(&secs) {
        return Err(format!("duration {s:?} out of range"));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// A `kB` field (`VmRSS`, `VmHWM`, ...) of `/proc/PID/status`, in KiB.
pub fn proc_status_kib(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status.lines().find_map(|l| {
        let rest = l.strip_prefix(field)?.strip_prefix(':')?;
        rest.split_whitespace().next()?.parse().ok()
    })
}

/// User plus system CPU time a process has used so far (`pid` of `None` = this process).
pub fn proc_cpu_time(pid: Option<u32>) -> Option<Duration> {
    let path = match pid {
        Some(p) => format!("/proc/{p}/stat"),
        None => "/proc/self/stat".to_owned(),
    };
    let stat = std::fs::read_to_string(path).ok()?;
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    let after = &stat[stat.rfind(')')? + 2..];
    let mut fields = after.split_whitespace().skip(11);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    // The kernel reports clock ticks; USER_HZ is 100 on every Linux ABI Rust targets.
    Some(Duration::from_millis((utime + stime) * 10))
}

/// The outcome of one load run.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Free-form label (for tables).
    pub label: String,
    /// `http` or `stdio`.
    pub transport: String,
    /// The URL or command that was loaded.
    pub target: String,
    /// Concurrency: HTTP connections or stdio requests in flight.
    pub concurrency: usize,
    /// Warm-up time in seconds (not measured).
    pub warmup_s: f64,
    /// Measured time in seconds.
    pub duration_s: f64,
    /// Successful requests completed in the measured window.
    pub requests: u64,
    /// Failed requests over the whole run (warm-up included).
    pub errors: u64,
    /// Successful requests per second in the measured window.
    pub rps: f64,
    /// Median latency in microseconds.
    pub p50_us: f64,
    /// 90th percentile latency in microseconds.
    pub p90_us: f64,
    /// 99th percentile latency in microseconds.
    pub p99_us: f64,
    /// 99.9th percentile latency in microseconds.
    pub p999_us: f64,
    /// Largest latency in microseconds.
    pub max_us: f64,
    /// Mean latency in microseconds.
    pub mean_us: f64,
    /// Server RSS before the load, KiB (`VmRSS`).
    pub idle_rss_kib: Option<u64>,
    /// Server peak RSS at the end, KiB (`VmHWM`).
    pub peak_rss_kib: Option<u64>,
    /// Server CPU use in the measured window, in percent of one core.
    pub server_cpu_pct: Option<f64>,
    /// Server CPU time per successful request in the measured window, microseconds.
    pub server_cpu_us_per_req: Option<f64>,
    /// The load generator's own CPU use in the measured window, in percent of one core.
    pub load_cpu_pct: Option<f64>,
}

/// Collects latencies (nanoseconds) and counts; merged across tasks.
#[derive(Debug)]
pub struct Stats {
    /// Latency histogram in nanoseconds.
    pub hist: hdrhistogram::Histogram<u64>,
    /// Failed requests.
    pub errors: u64,
}

impl Default for Stats {
    fn default() -> Self {
        Self::new()
    }
}

impl Stats {
    /// Empty statistics (latencies from 1 ns to 100 s, 3 significant digits).
    pub fn new() -> Self {
        Self {
            hist: hdrhistogram::Histogram::new_with_bounds(1, 100_000_000_000, 3).expect("valid histogram bounds"),
            errors: 0,
        }
    }

    /// Records one successful request's latency.
    pub fn record(&mut self, latency: Duration) {
        let ns = u64::try_from(latency.as_nanos()).unwrap_or(u64::MAX);
        self.hist.saturating_record(ns.max(1));
    }

    /// Adds `other` into `self`.
    pub fn merge(&mut self, other: &Stats) {
        self.hist.add(&other.hist).expect("histograms with equal bounds");
        self.errors += other.errors;
    }
}

/// Server-side measurements taken around the measured window.
#[derive(Debug, Default, Clone, Copy)]
pub struct ServerUsage {
    /// `VmRSS` before the load, KiB.
    pub idle_rss_kib: Option<u64>,
    /// `VmHWM` at the end, KiB.
    pub peak_rss_kib: Option<u64>,
    /// Server CPU time spent in the measured window.
    pub server_cpu: Option<Duration>,
    /// Load generator CPU time spent in the measured window.
    pub load_cpu: Option<Duration>,
}

/// What a run was: the fixed facts of a [`Report`].
#[derive(Debug, Clone)]
pub struct RunInfo {
    /// Free-form label.
    pub label: String,
    /// `http` or `stdio`.
    pub transport: &'static str,
    /// The URL or command.
    pub target: String,
    /// Connections or requests in flight.
    pub concurrency: usize,
    /// Warm-up time.
    pub warmup: Duration,
    /// Measured time.
    pub measured: Duration,
}

/// Builds a [`Report`] from merged statistics.
pub fn build_report(info: &RunInfo, stats: &Stats, usage: ServerUsage) -> Report {
    let h = &stats.hist;
    let secs = info.measured.as_secs_f64().max(1e-9);
    let us = |ns: u64| ns as f64 / 1000.0;
    let requests = h.len();
    let pct = |cpu: Option<Duration>| cpu.map(|c| 100.0 * c.as_secs_f64() / secs);
    Report {
        label: info.label.clone(),
        transport: info.transport.to_owned(),
        target: info.target.clone(),
        concurrency: info.concurrency,
        warmup_s: info.warmup.as_secs_f64(),
        duration_s: info.measured.as_secs_f64(),
        requests,
        errors: stats.errors,
        rps: requests as f64 / secs,
        p50_us: us(h.value_at_quantile(0.50)),
        p90_us: us(h.value_at_quantile(0.90)),
        p99_us: us(h.value_at_quantile(0.99)),
        p999_us: us(h.value_at_quantile(0.999)),
        max_us: us(h.max()),
        mean_us: h.mean() / 1000.0,
        idle_rss_kib: usage.idle_rss_kib,
        peak_rss_kib: usage.peak_rss_kib,
        server_cpu_pct: pct(usage.server_cpu),
        server_cpu_us_per_req: usage
            .server_cpu
            .filter(|_| requests > 0)
            .map(|c| c.as_secs_f64() * 1e6 / requests as f64),
        load_cpu_pct: pct(usage.load_cpu),
    }
}

fn fmt_us(us: f64) -> String {
    if us >= 1000.0 {
        format!("{:.2} ms", us / 1000.0)
    } else {
        format!("{us:.0} µs")
    }
}

fn fmt_kib(k: Option<u64>) -> String {
    k.map_or_else(|| "n/a".into(), |k| format!("{:.1} MiB", k as f64 / 1024.0))
}

impl Report {
    /// Prints the report: one JSON line when `json`, else a few human-readable lines.
    pub fn print(&self, json: bool) {
        if json {
            println!("{}", serde_json::to_string(self).expect("report serializes"));
            return;
        }
        let conc = match self.transport.as_str() {
            "http" => format!("{} connections", self.concurrency),
            _ => format!("{} in flight", self.concurrency),
        };
        println!(
            "{} {} ({conc}, {:.1} s measured after {:.1} s warm-up): {}",
            self.transport, self.label, self.duration_s, self.warmup_s, self.target
        );
        println!("  throughput  {:.0} req/s  ({} requests, {} errors)", self.rps, self.requests, self.errors);
        println!(
            "  latency     p50 {}  p90 {}  p99 {}  p99.9 {}  max {}  mean {}",
            fmt_us(self.p50_us),
            fmt_us(self.p90_us),
            fmt_us(self.p99_us),
            fmt_us(self.p999_us),
            fmt_us(self.max_us),
            fmt_us(self.mean_us)
        );
        let cpu = match (self.server_cpu_pct, self.server_cpu_us_per_req) {
            (Some(p), Some(r)) => format!("{p:.0}% of a core, {r:.1} µs CPU/request"),
            (Some(p), None) => format!("{p:.0}% of a core"),
            _ => "n/a".into(),
        };
        println!(
            "  server      idle RSS {}  peak RSS {}  CPU {cpu}",
            fmt_kib(self.idle_rss_kib),
            fmt_kib(self.peak_rss_kib)
        );
        if let Some(p) = self.load_cpu_pct {
            println!("  load gen    CPU {p:.0}% of a core");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_is_valid_json_with_the_expected_shape() {
        let line = echo_request(7, "\"hello\"");
        let v: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["id"], 7);
        assert_eq!(v["method"], "tools/call");
        assert_eq!(v["params"]["name"], "echo");
        assert_eq!(v["params"]["arguments"]["text"], "hello");
        assert_eq!(v["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"], PROTOCOL_VERSION);
    }

    #[test]
    fn ceiling_response_shape() {
        let req: Value = serde_json::from_str(&echo_request(3, "\"hi\"")).unwrap();
        let resp = echo_response(req);
        assert_eq!(
            resp,
            serde_json::json!({"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"hi"}],"resultType":"complete"}})
        );
    }

    #[test]
    fn ceiling_answers_what_a_client_needs_to_connect() {
        let discover = ceiling_response(serde_json::json!({"jsonrpc":"2.0","id":1,"method":"server/discover"}));
        assert_eq!(discover["id"], 1);
        assert_eq!(discover["result"]["supportedVersions"][0], PROTOCOL_VERSION);
        let tools = ceiling_response(serde_json::json!({"jsonrpc":"2.0","id":2,"method":"tools/list"}));
        assert_eq!(tools["result"]["tools"][0]["name"], "echo");
        let req: Value = serde_json::from_str(&echo_request(3, "\"hi\"")).unwrap();
        assert_eq!(ceiling_response(req.clone()), echo_response(req));
    }

    #[test]
    fn id_matching() {
        assert!(has_id(br#"{"id":12,"x":1}"#, 12));
        assert!(!has_id(br#"{"id":123}"#, 12));
        assert!(has_id(br#"{"id":12}"#, 12));
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("10s").unwrap(), Duration::from_secs(10));
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        assert_eq!(parse_duration("2").unwrap(), Duration::from_secs(2));
        assert_eq!(parse_duration("1m").unwrap(), Duration::from_secs(60));
        assert!(parse_duration("x").is_err());
        assert!(parse_duration("5h").is_err());
    }
}
