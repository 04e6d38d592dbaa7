//! `rocescope export`: the analysis as Prometheus metrics on `/metrics` (and `/healthz`),
//! and optionally as NDJSON lines every interval, for fleet monitoring.
//!
//! A worker thread reads the source (interface or files), analyses every frame and, about
//! once a second, turns a report into metric families ([`crate::metrics::Exposition`]); the
//! HTTP loop only encodes the latest families, so a scrape never waits for the capture. With
//! `-r`, the files are analysed as fast as they read, then their final figures are served
//! until the exporter is stopped.

use crate::cli::ExportArgs;
use crate::driver::{self, Flow};
use crate::metrics::{self, Exposition, Family};
use crate::report_cmd::analysis_config;
use crate::stdio::note;
use anyhow::Context;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::DescriptorEncoder;
use prometheus_client::registry::Registry;
use rocescope_analyzer::report::CaptureCounters;
use rocescope_analyzer::Analyzer;
use rocescope_capture::text::{self, escape};
use std::io::Write;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// What the worker shares with the HTTP loop.
#[derive(Debug, Default)]
struct Shared {
    families: Arc<Vec<Family>>,
    /// Snapshots published so far.
    generation: u64,
    packets: u64,
    /// The input has ended (files), or the capture stopped.
    done: bool,
    /// The source failed (a live capture died, or a file is damaged part-way).
    error: Option<String>,
    /// The capture died: `/healthz` answers 503.
    failed: bool,
    /// Writing a pushed line failed.
    push_failed: bool,
    updated: Option<Instant>,
}

/// The latest families, as a prometheus-client collector.
#[derive(Debug)]
struct Snapshot(Arc<Vec<Family>>);

impl Collector for Snapshot {
    fn encode(&self, encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        metrics::encode(&self.0, encoder)
    }
}

/// The worker's analysis state.
struct Worker {
    analyzer: Analyzer,
    exposition: Exposition,
    last: Instant,
    interval: Duration,
    stats: Option<rocescope_capture::CaptureStats>,
    live: bool,
    /// Flows idle this long (ns of capture time) are no longer tracked.
    idle_ns: Option<i64>,
    /// Frames read (an sFlow datagram is one frame): the number of the latest.
    frames: u64,
}

impl Worker {
    /// Publish when the refresh interval has passed; keep reporting under a tenth of the
    /// worker's time (a report over 100k flows takes a while).
    fn maybe_publish(&mut self, shared: &Mutex<Shared>, name: &str) {
        if self.last.elapsed() >= self.interval {
            let t = Instant::now();
            // A file's flows get their series at its end (its exact top N).
            self.publish(shared, name, self.live);
            self.interval = REFRESH.max(t.elapsed() * 10);
            self.last = Instant::now();
        }
    }

    /// Build a report, turn it into families, and hand them to the HTTP loop and the push.
    /// `flows`: include the per-flow families.
    fn publish(&mut self, shared: &Mutex<Shared>, name: &str, flows: bool) {
        if let (Some(idle), Some(now)) = (self.idle_ns, self.analyzer.totals().end_ns) {
            let evicted = self.analyzer.evict_idle(now.saturating_sub(idle));
            self.exposition.retire(&evicted);
        }
        let mut report = self.analyzer.report_counters();
        report.capture = self.stats.map(|s| CaptureCounters {
            interface: name.to_string(),
            received: s.received,
            kernel_dropped: s.kernel_dropped,
            if_dropped: s.if_dropped,
        });
        self.exposition.update(&report, flows);
        if let Ok(mut sh) = shared.lock() {
            sh.families = Arc::new(self.exposition.families().to_vec());
            sh.generation += 1;
            sh.packets = report.summary.packets;
            sh.updated = Some(Instant::now());
        }
    }
}

/// Requests answered at once; more get 503 (a scrape is a few milliseconds).
const MAX_IN_FLIGHT: usize = 8;

/// Least time between two reports; the worker also keeps reporting under a tenth of its time.
const REFRESH: Duration = Duration::from_secs(1);

/// Run the command.
pub fn run(args: &ExportArgs) -> anyhow::Result<ExitCode> {
    let stop = driver::install_signals()?;
    let opts = args.decoder.decode_options();
    let mut cfg = analysis_config(&args.analysis, &opts)?;
    if args.no_http && args.push.is_none() {
        anyhow::bail!("--no-http leaves nothing to export: add --push FILE (or - for standard output)");
    }
    let server = if args.no_http {
        None
    } else {
        Some(tiny_http::Server::http(args.listen).map_err(|e| {
            anyhow::anyhow!(
                "cannot listen on {}: {e} (another exporter running? try --listen 127.0.0.1:PORT)",
                args.listen
            )
        })?)
    };
    let push = match &args.push {
        Some(p) if p.as_os_str() == "-" => Some(Box::new(std::io::stdout()) as Box<dyn Write + Send>),
        Some(p) => Some(Box::new(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(p)
                .with_context(|| format!("cannot open {} for --push", text::path(p)))?,
        ) as Box<dyn Write + Send>),
        None => None,
    };
    let mut opened = crate::signals::opening(|| driver::open(&args.source, opts.roce_port, true))?;
    cfg.points = opened.point_names();
    let live = opened.source.is_live();
    let name = opened.name.clone();
    let idle_ns = match args.flow_idle_timeout {
        Some(s) if s > 0.0 && s.is_finite() => Some((s * 1e9) as i64),
        Some(_) => None,
        None if live => Some(600_000_000_000),
        None => None,
    };
    if let Some(s) = &server {
        note!("rocescope: exporting {} on http://{}/metrics", escape(&name), s.server_addr());
    }
    let shared = Arc::new(Mutex::new(Shared::default()));
    // Set once the worker has published its final figures and ended.
    let worker_done = Arc::new(AtomicBool::new(false));
    let worker = {
        let shared = Arc::clone(&shared);
        let stop = Arc::clone(&stop);
        let source = args.source.clone();
        let top = args.top_flows;
        let name = name.clone();
        let merged = opened.source.point_names().is_some();
        std::thread::Builder::new().name("rocescope-export".into()).spawn(move || {
            let st = std::cell::RefCell::new(Worker {
                analyzer: Analyzer::new(cfg),
                exposition: Exposition::new(top),
                last: Instant::now(),
                interval: REFRESH,
                stats: None,
                live,
                idle_ns,
                frames: 0,
            });
            let result = driver::pump(
                &mut opened,
                &source,
                &opts,
                driver::Decoding::All,
                &stop,
                |rec, packet| {
                    let mut w = st.borrow_mut();
                    w.frames += 1;
                    if let Some(p) = packet {
                        let n = w.frames;
                        w.analyzer.push_frame(n, rec, p, &opts);
                    }
                    w.maybe_publish(&shared, &name);
                    Ok(Flow::Continue)
                },
                |s| {
                    let mut w = st.borrow_mut();
                    w.stats = s;
                    w.maybe_publish(&shared, &name);
                    Flow::Continue
                },
            );
            let mut w = st.into_inner();
            w.analyzer.finish();
            let (error, failed) = match result {
                Ok(end) => {
                    if end.stats.is_some() {
                        w.stats = end.stats;
                    }
                    (
                        end.source_error
                            .map(|e| format!("{e} ({})", driver::covers(merged, end.frames, "the figures"))),
                        false,
                    )
                }
                Err(e) => (Some(format!("{e:#}")), true),
            };
            w.publish(&shared, &name, true);
            if let Ok(mut sh) = shared.lock() {
                sh.done = true;
                sh.failed = failed || (live && error.is_some());
                sh.error = error;
            }
        })?
    };

    // The push has its own thread: a reader that stalls holds up neither the scrapes nor a
    // stop. It ends after the final line (or when its output fails).
    let push_done = Arc::new(AtomicBool::new(false));
    let pusher = match push {
        Some(out) => {
            let (shared, push_done, final_flag) =
                (Arc::clone(&shared), Arc::clone(&push_done), Arc::clone(&worker_done));
            let every = Duration::from_secs_f64(args.interval);
            Some(std::thread::Builder::new().name("rocescope-push".into()).spawn(move || {
                push_loop(out, &shared, every, live, &final_flag);
                push_done.store(true, Ordering::Relaxed);
            })?)
        }
        None => None,
    };

    let mut reported_done = false;
    let in_flight = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    loop {
        let done = shared.lock().map(|s| s.done).unwrap_or(true);
        if worker.is_finished() && !done {
            // The worker died without finishing (a panic): say so, on /healthz too.
            if let Ok(mut sh) = shared.lock() {
                sh.done = true;
                sh.failed = true;
                sh.error = Some("the analysis thread stopped unexpectedly".into());
            }
        }
        if done && !reported_done {
            reported_done = true;
            if let Some(e) = shared.lock().ok().and_then(|s| s.error.clone()) {
                note!("rocescope: {}: {e}", escape(&name));
            }
            if !live && server.is_some() {
                note!(
                    "rocescope: {} analysed; serving its final figures until stopped (Ctrl-C)",
                    escape(&name)
                );
            }
        }
        if stop.load(Ordering::Relaxed) || (server.is_none() && worker.is_finished()) {
            break;
        }
        match &server {
            Some(s) => match s.recv_timeout(Duration::from_millis(100)) {
                Ok(Some(req)) => {
                    // Each answer on its own thread, so a client that reads slowly does not
                    // hold up the others; a few at a time.
                    if in_flight.load(Ordering::Relaxed) >= MAX_IN_FLIGHT {
                        let _ = req.respond(
                            tiny_http::Response::from_string("busy, try again\n").with_status_code(503),
                        );
                    } else {
                        in_flight.fetch_add(1, Ordering::Relaxed);
                        let (sh, nm, inf) = (Arc::clone(&shared), name.clone(), Arc::clone(&in_flight));
                        let spawned =
                            std::thread::Builder::new().name("rocescope-http".into()).spawn(move || {
                                serve(req, &sh, &nm, live);
                                inf.fetch_sub(1, Ordering::Relaxed);
                            });
                        if spawned.is_err() {
                            in_flight.fetch_sub(1, Ordering::Relaxed);
                        }
                    }
                }
                Ok(None) => {}
                Err(e) => {
                    note!("rocescope: HTTP server: {e}");
                    break;
                }
            },
            // Push only: nothing left to do once the push has ended (a file's final line
            // written, or its output gone).
            None if push_done.load(Ordering::Relaxed) => break,
            None => std::thread::sleep(Duration::from_millis(100)),
        }
    }
    // Stop: the worker publishes its final figures, the push writes them, then exit.
    stop.store(true, Ordering::Relaxed);
    let _ = worker.join();
    worker_done.store(true, Ordering::Relaxed);
    let mut exit = ExitCode::SUCCESS;
    if let Some(p) = pusher {
        match p.join() {
            Ok(()) => {}
            Err(_) => exit = ExitCode::from(1),
        }
        if shared.lock().map(|s| s.push_failed).unwrap_or(false) {
            exit = ExitCode::from(1);
        }
    }
    if let Some(e) = shared.lock().ok().and_then(|s| s.error.clone()) {
        if !reported_done {
            note!("rocescope: {}: {e}", escape(&name));
        }
        exit = ExitCode::from(1);
    }
    Ok(exit)
}

/// Write a line every `every` while figures come (live: every interval), and a last one
/// with the final figures once `final_flag` is set (the worker has finished).
fn push_loop(
    mut out: Box<dyn Write + Send>,
    shared: &Mutex<Shared>,
    every: Duration,
    live: bool,
    final_flag: &AtomicBool,
) {
    let mut pushed = 0u64;
    let mut next = Instant::now() + every;
    loop {
        let (done, generation, fams) = shared
            .lock()
            .map(|s| (s.done, s.generation, Arc::clone(&s.families)))
            .unwrap_or((true, 0, Arc::default()));
        // A file's figures are final once it is done; live ones once the worker has ended.
        let last = final_flag.load(Ordering::Relaxed) || (done && !live);
        let due = Instant::now() >= next;
        // A file: a line when new figures came (and the last one); live: every interval.
        if generation > 0 && ((due && (live || generation != pushed)) || (last && generation != pushed)) {
            let ts = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64());
            let mut line = metrics::ndjson_line(&fams, ts);
            line.push('\n');
            if let Err(e) = out.write_all(line.as_bytes()).and_then(|()| out.flush()) {
                if e.kind() != std::io::ErrorKind::BrokenPipe {
                    note!("rocescope: --push: {e}");
                    if let Ok(mut s) = shared.lock() {
                        s.push_failed = true;
                    }
                }
                return;
            }
            pushed = generation;
            next = Instant::now() + every;
        } else if due {
            next = Instant::now() + every;
        }
        if last && generation == pushed {
            return;
        }
        std::thread::sleep(Duration::from_millis(50).min(every));
    }
}

/// Answer one HTTP request.
fn serve(req: tiny_http::Request, shared: &Arc<Mutex<Shared>>, name: &str, live: bool) {
    use tiny_http::{Header, Method, Response};
    let header = |k: &str, v: &str| Header::from_bytes(k.as_bytes(), v.as_bytes()).ok();
    let path = req.url().split('?').next().unwrap_or("").to_string();
    if !matches!(req.method(), Method::Get | Method::Head) {
        let mut r = Response::from_string("only GET\n").with_status_code(405);
        if let Some(h) = header("Allow", "GET, HEAD") {
            r.add_header(h);
        }
        let _ = req.respond(r);
        return;
    }
    let response = match path.as_str() {
        "/metrics" => {
            let openmetrics = req.headers().iter().any(|h| {
                h.field.equiv("Accept") && h.value.as_str().contains("application/openmetrics-text")
            });
            let fams = shared.lock().map(|s| Arc::clone(&s.families)).unwrap_or_default();
            let mut registry = Registry::default();
            registry.register_collector(Box::new(Snapshot(fams)));
            let mut body = String::new();
            let (res, ctype) = if openmetrics {
                (
                    prometheus_client::encoding::text::encode(&mut body, &registry),
                    "application/openmetrics-text; version=1.0.0; charset=utf-8",
                )
            } else {
                (
                    prometheus_client::encoding::prometheus_text::encode(&mut body, &registry),
                    prometheus_client::encoding::prometheus_text::CONTENT_TYPE,
                )
            };
            match res {
                Ok(()) => {
                    let mut r = Response::from_string(body);
                    if let Some(h) = header("Content-Type", ctype) {
                        r.add_header(h);
                    }
                    r
                }
                Err(_) => Response::from_string("encoding the metrics failed\n").with_status_code(500),
            }
        }
        "/healthz" => {
            let (code, body) = match shared.lock() {
                Ok(s) => {
                    let status = if s.failed { "failed" } else { "ok" };
                    let doc = serde_json::json!({
                        "status": status,
                        "source": name,
                        "mode": if live { "live" } else { "file" },
                        "packets": s.packets,
                        "done": s.done,
                        "error": s.error,
                        "snapshot_age_s": s.updated.map(|u| u.elapsed().as_secs_f64()),
                    });
                    (if s.failed { 503 } else { 200 }, doc.to_string() + "\n")
                }
                Err(_) => (503, "{\"status\":\"failed\",\"error\":\"worker panicked\"}\n".to_string()),
            };
            let mut r = Response::from_string(body).with_status_code(code);
            if let Some(h) = header("Content-Type", "application/json") {
                r.add_header(h);
            }
            r
        }
        "/" => {
            let mut r = Response::from_string(format!(
                "<html><head><title>rocescope exporter</title></head><body><h1>rocescope exporter</h1><p>Source: {}</p><p><a href=\"/metrics\">/metrics</a> <a href=\"/healthz\">/healthz</a></p></body></html>\n",
                html_escape(name)
            ));
            if let Some(h) = header("Content-Type", "text/html; charset=utf-8") {
                r.add_header(h);
            }
            r
        }
        _ => Response::from_string("not found: try /metrics or /healthz\n").with_status_code(404),
    };
    let _ = req.respond(response);
}

/// `s` for HTML text, its control characters escaped first (`\x1b`), as everywhere a name
/// is shown.
fn html_escape(s: &str) -> String {
    escape(s)
        .to_string()
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
