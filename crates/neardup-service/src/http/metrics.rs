//! `GET /metrics` in the Prometheus text format: uptime, requests by route, method and
//! status, latency histograms by route, and each collection's counts.
//!
//! Labels come from closed sets (the routes of the router, the methods it takes, the
//! collections), so no request can add a series.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::http::{header, Method};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::Shared;
use crate::api::Stats;

/// Latency buckets of the histograms, in seconds.
const BUCKETS: [f64; 14] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0,
];

/// A collection's series: the name after `neardup_collection_`, the kind, the help, the value.
type Series = (&'static str, &'static str, &'static str, fn(&Stats) -> u64);

/// The series of each collection, in the order they are written.
const COLLECTION_SERIES: [Series; 10] = [
    ("documents", "gauge", "Live stored documents.", |s| {
        s.documents
    }),
    (
        "partitions",
        "gauge",
        "Partitions (segment files) held.",
        |s| s.partitions,
    ),
    ("disk_bytes", "gauge", "Bytes of the segment files.", |s| {
        s.disk_bytes
    }),
    (
        "memory_bytes",
        "gauge",
        "Approximate bytes of the in-memory indexes and ids.",
        |s| s.memory_bytes,
    ),
    ("stored", "counter", "Documents stored since start.", |s| {
        s.stored
    }),
    (
        "duplicates",
        "counter",
        "Inserts answered as duplicates since start.",
        |s| s.duplicates,
    ),
    (
        "refused",
        "counter",
        "Inserts refused (existing id, bad time, store error).",
        |s| s.refused,
    ),
    ("checks", "counter", "Texts checked since start.", |s| {
        s.checks
    }),
    (
        "groups",
        "counter",
        "Groups written, one sync each, since start.",
        |s| s.groups,
    ),
    (
        "expired",
        "counter",
        "Documents expired since start.",
        |s| s.expired,
    ),
];

#[derive(Default)]
struct Histogram {
    buckets: [AtomicU64; BUCKETS.len()],
    count: AtomicU64,
    sum_micros: AtomicU64,
}

impl Histogram {
    fn observe(&self, seconds: f64) {
        for (bucket, &le) in self.buckets.iter().zip(&BUCKETS) {
            if seconds <= le {
                bucket.fetch_add(1, Ordering::Relaxed);
            }
        }
        self.count.fetch_add(1, Ordering::Relaxed);
        self.sum_micros
            .fetch_add((seconds * 1e6) as u64, Ordering::Relaxed);
    }

    /// Writes the histogram's series for `route` (already escaped).
    fn write(&self, out: &mut String, route: &str) {
        for (bucket, le) in self.buckets.iter().zip(BUCKETS) {
            let _ = writeln!(
                out,
                "neardup_http_request_duration_seconds_bucket{{route=\"{route}\",le=\"{le}\"}} {}",
                bucket.load(Ordering::Relaxed)
            );
        }
        let count = self.count.load(Ordering::Relaxed);
        let _ = writeln!(
            out,
            "neardup_http_request_duration_seconds_bucket{{route=\"{route}\",le=\"+Inf\"}} {count}"
        );
        let _ = writeln!(
            out,
            "neardup_http_request_duration_seconds_sum{{route=\"{route}\"}} {:.6}",
            self.sum_micros.load(Ordering::Relaxed) as f64 / 1e6
        );
        let _ = writeln!(
            out,
            "neardup_http_request_duration_seconds_count{{route=\"{route}\"}} {count}"
        );
    }
}

/// The request counts and latencies since the service started.
#[derive(Default)]
pub(super) struct Metrics {
    /// (route, method, status) -> count.
    requests: Mutex<BTreeMap<(String, String, u16), u64>>,
    /// route -> latency.
    latency: Mutex<BTreeMap<String, Arc<Histogram>>>,
}

impl Metrics {
    fn record(&self, route: String, method: String, status: u16, seconds: f64) {
        {
            let mut requests = self.requests.lock().unwrap_or_else(|e| e.into_inner());
            *requests.entry((route.clone(), method, status)).or_default() += 1;
        }
        let histogram = {
            let mut latency = self.latency.lock().unwrap_or_else(|e| e.into_inner());
            Arc::clone(latency.entry(route).or_default())
        };
        histogram.observe(seconds);
    }

    fn write_requests(&self, out: &mut String) {
        let _ = writeln!(
            out,
            "# HELP neardup_http_requests_total HTTP requests by route, method and status."
        );
        let _ = writeln!(out, "# TYPE neardup_http_requests_total counter");
        let requests = self.requests.lock().unwrap_or_else(|e| e.into_inner());
        for ((route, method, status), count) in requests.iter() {
            let _ = writeln!(
                out,
                "neardup_http_requests_total{{route=\"{}\",method=\"{method}\",status=\"{status}\"}} {count}",
                escape(route)
            );
        }
    }

    fn write_latency(&self, out: &mut String) {
        let _ = writeln!(
            out,
            "# HELP neardup_http_request_duration_seconds Request latency by route."
        );
        let _ = writeln!(
            out,
            "# TYPE neardup_http_request_duration_seconds histogram"
        );
        let latency = self.latency.lock().unwrap_or_else(|e| e.into_inner());
        for (route, histogram) in latency.iter() {
            histogram.write(out, &escape(route));
        }
    }
}

/// The middleware that counts and times every request by its route.
pub(super) async fn observe(State(state): State<Shared>, request: Request, next: Next) -> Response {
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_owned(), |p| p.as_str().to_owned());
    let method = method_label(request.method()).to_owned();
    let start = Instant::now();
    let response = next.run(request).await;
    let seconds = start.elapsed().as_secs_f64();
    let status = response.status().as_u16();
    state.metrics.record(route, method, status, seconds);
    response
}

/// The `method` label of a request: one of the methods the routes take, else `other` (a
/// label from the request itself would let each new token add a series forever).
fn method_label(method: &Method) -> &'static str {
    match *method {
        Method::GET => "GET",
        Method::HEAD => "HEAD",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::DELETE => "DELETE",
        _ => "other",
    }
}

/// `GET /metrics`.
pub(super) async fn metrics(State(state): State<Shared>) -> Response {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# HELP neardup_uptime_seconds Seconds since the service started."
    );
    let _ = writeln!(out, "# TYPE neardup_uptime_seconds gauge");
    let _ = writeln!(
        out,
        "neardup_uptime_seconds {:.3}",
        state.started.elapsed().as_secs_f64()
    );
    state.metrics.write_requests(&mut out);
    state.metrics.write_latency(&mut out);
    let service = Arc::clone(&state.service);
    let stats: Vec<(String, Stats)> = tokio::task::spawn_blocking(move || {
        service
            .names()
            .into_iter()
            .filter_map(|name| {
                let collection = service.collection(&name).ok()?;
                Some((name, collection.stats()))
            })
            .collect()
    })
    .await
    .unwrap_or_default();
    write_collections(&mut out, &stats);
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], out).into_response()
}

fn write_collections(out: &mut String, stats: &[(String, Stats)]) {
    for (key, kind, help, value) in COLLECTION_SERIES {
        let metric = if kind == "counter" {
            format!("neardup_collection_{key}_total")
        } else {
            format!("neardup_collection_{key}")
        };
        let _ = writeln!(out, "# HELP {metric} {help}");
        let _ = writeln!(out, "# TYPE {metric} {kind}");
        for (name, stats) in stats {
            let _ = writeln!(
                out,
                "{metric}{{collection=\"{}\"}} {}",
                escape(name),
                value(stats)
            );
        }
    }
}

fn escape(label: &str) -> String {
    label
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}
