//! `rocescope export`: the analysis as Prometheus metrics on `/metrics` (and `/healthz`),
//! and optionally as NDJSON lines every interval, for fleet monitoring.
//!
//! A worker thread reads the source (interface or files), analyses every frame and, about
//! once a second, turns a report into metric families ([`crate::metrics::Exposition`]); the
//! HTTP server only encodes the latest families, so a scrape never waits for the capture. With
//! `-r`, the files are analysed as fast as they read, then their final figures are served
//! until the exporter is stopped.
//!
//! The HTTP server (hyper on a single-threaded tokio runtime, in its own thread) has limits, so
//! that clients that misbehave cannot take it down: connections at once, the size of a
//! request's head, a time limit to send it, a time limit for answers the client does not read;
//! running out of file descriptors pauses accepting, never ends it
//! (docs/reliability.md).

use crate::cli::ExportArgs;
use crate::driver::{self, Flow};
use crate::metrics::{self, Exposition, Family};
use crate::report_cmd::analysis_config;
use crate::stdio::note;
use anyhow::Context;
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
    /// Most flows tracked at once (`--max-flows`): the least recently seen go past it.
    max_flows: usize,
    /// The latest frame's number (an sFlow datagram is one frame; records with no captured
    /// byte are numbered, as tshark numbers them).
    frames: u64,
    /// NIC counters to set beside the capture (`--counters`).
    counters:
        Option<(rocescope_analyzer::nic_counters::CounterInput, rocescope_analyzer::nic_counters::Host)>,
}

impl Worker {
    /// Past `--max-flows`, the least recently seen flows go: what they counted stays
    /// exported (in their own series or `other`), as for idle ones.
    fn cap_flows(&mut self) {
        if self.analyzer.flows().len() > self.max_flows {
            let evicted = self.analyzer.evict_over(self.max_flows);
            self.exposition.retire(&evicted);
        }
    }

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
        // Flows' entries built one at a time: memory for the flows with their own series,
        // not for every flow's entry.
        let mut streamed = self.analyzer.report_streamed();
        let report = &mut streamed.report;
        report.capture = self.stats.map(|s| CaptureCounters {
            interface: name.to_string(),
            received: s.received,
            kernel_dropped: s.kernel_dropped,
            if_dropped: s.if_dropped,
        });
        if let Some((input, host)) = &self.counters {
            crate::report_cmd::add_counters(&mut streamed, input, host);
        }
        self.exposition.update_streamed(&streamed, flows);
        let report = &streamed.report;
        if let Ok(mut sh) = shared.lock() {
            sh.families = Arc::new(self.exposition.families().to_vec());
            sh.generation += 1;
            sh.packets = report.summary.packets;
            sh.updated = Some(Instant::now());
        }
    }
}

/// Least time between two reports; the worker also keeps reporting under a tenth of its time.
const REFRESH: Duration = Duration::from_secs(1);

/// Run the command.
pub fn run(args: &ExportArgs) -> anyhow::Result<ExitCode> {
    let stop = driver::install_signals()?;
    let opts = args.decoder.decode_options();
    let mut cfg = analysis_config(&args.analysis, &opts)?;
    let counters = crate::report_cmd::read_counters(&args.counters, &args.counters_host)?;
    if args.no_http && args.push.is_none() {
        anyhow::bail!("--no-http leaves nothing to export: add --push FILE (or - for standard output)");
    }
    // The server's runtime and listener first: a port in use fails before any analysis.
    let listener = if args.no_http {
        None
    } else {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .build()
            .context("cannot start the HTTP server")?;
        let listener = {
            let _in_runtime = runtime.enter();
            http::listen(args.listen).map_err(|e| {
                anyhow::anyhow!(
                    "cannot listen on {}: {e} (another exporter running? try --listen 127.0.0.1:PORT)",
                    args.listen
                )
            })?
        };
        Some((runtime, listener))
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
    let mut opened = crate::signals::opening(|| driver::open(&args.source, &opts, true))?;
    cfg.points = opened.point_names();
    crate::report_cmd::check_uplinks(&cfg)?;
    let live = opened.source.is_live();
    let name = opened.name.clone();
    let idle_ns = match args.flow_idle_timeout {
        Some(s) if s > 0.0 && s.is_finite() => Some((s * 1e9) as i64),
        Some(_) => None,
        None if live => Some(600_000_000_000),
        None => None,
    };
    let shared = Arc::new(Mutex::new(Shared::default()));
    // The HTTP server runs in its own thread and says on `server` why it ended: only a stop
    // ends it cleanly; anything else (or a panic, which drops the sender) is a failure.
    let server = match listener {
        Some((runtime, listener)) => {
            if let Ok(addr) = listener.local_addr() {
                note!("rocescope: exporting {} on http://{addr}/metrics", escape(&name));
            }
            let limits = http::Limits::from_args(args);
            if limits.reduced {
                note!(
                    "rocescope: at most {} HTTP connections at once: the open-file limit leaves no room \
                     for more (raise it with ulimit -n)",
                    limits.max_connections
                );
            }
            let ctx = http::Context::new(Arc::clone(&shared), name.clone(), live, Arc::clone(&stop), limits);
            let (tx, rx) = std::sync::mpsc::channel();
            std::thread::Builder::new().name("rocescope-http".into()).spawn(move || {
                let _ = tx.send(runtime.block_on(http::serve(listener, ctx)));
            })?;
            Some(rx)
        }
        None => None,
    };
    // Set once the worker has published its final figures and ended.
    let worker_done = Arc::new(AtomicBool::new(false));
    let worker = {
        let shared = Arc::clone(&shared);
        let stop = Arc::clone(&stop);
        let source = args.source.clone();
        let top = args.top_flows;
        let max_flows = usize::try_from(args.analysis.max_flows).unwrap_or(usize::MAX);
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
                max_flows,
                frames: 0,
                counters,
            });
            // The common RoCEv2 frame through the fast path (issue 28).
            let decoding = if st.borrow().analyzer.takes_common(&opts) {
                driver::Decoding::Fast
            } else {
                driver::Decoding::All
            };
            let result = driver::pump(
                &mut opened,
                &source,
                &opts,
                decoding,
                &stop,
                |rec, packet, common| {
                    let mut w = st.borrow_mut();
                    w.frames = rec.number_after(w.frames);
                    let n = w.frames;
                    match (common, packet) {
                        (Some(c), _) => w.analyzer.push_common_record(n, rec, c),
                        (None, Some(p)) => w.analyzer.push_frame(n, rec, p, &opts),
                        (None, None) => {}
                    }
                    w.cap_flows();
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
                        end.source_error.map(|e| driver::with_cover(e, merged, end.frames, "the figures")),
                        false,
                    )
                }
                // Errors that are not about the input itself get its name here; the input's
                // own errors name it already.
                Err(e) => (Some(format!("{}: {e:#}", escape(&name))), true),
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
    let mut server_failed = false;
    loop {
        let done = shared.lock().map(|s| s.done).unwrap_or(true);
        if worker.is_finished() && !done {
            // The worker died without finishing (a panic): say so, on /healthz too.
            if let Ok(mut sh) = shared.lock() {
                sh.done = true;
                sh.failed = true;
                sh.error = Some(format!("{}: the analysis thread stopped unexpectedly", escape(&name)));
            }
        }
        if done && !reported_done {
            reported_done = true;
            if let Some(e) = shared.lock().ok().and_then(|s| s.error.clone()) {
                note!("rocescope: {e}");
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
            Some(rx) => match rx.recv_timeout(Duration::from_millis(100)) {
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                // Ended because of the stop: the loop ends on its next turn.
                Ok(Ok(())) if stop.load(Ordering::Relaxed) => {}
                // Anything else is a failure: exit non-zero, so a supervisor restarts us.
                Ok(Ok(())) => {
                    note!("rocescope: the HTTP server stopped unexpectedly");
                    server_failed = true;
                    break;
                }
                Ok(Err(e)) => {
                    note!("rocescope: the HTTP server failed: {e}");
                    server_failed = true;
                    break;
                }
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                    if !stop.load(Ordering::Relaxed) {
                        note!("rocescope: the HTTP server stopped unexpectedly");
                        server_failed = true;
                    }
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
    let mut exit = if server_failed { ExitCode::from(1) } else { ExitCode::SUCCESS };
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
            note!("rocescope: {e}");
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

/// The HTTP server: hyper's HTTP/1.1 on the tokio runtime of the `rocescope-http` thread.
mod http {
    use super::{html_escape, Shared};
    use crate::cli::ExportArgs;
    use crate::metrics;
    use crate::stdio::note;
    use http_body_util::Full;
    use hyper::body::{Bytes, Incoming};
    use hyper::header::{HeaderValue, ACCEPT, ALLOW, CONTENT_TYPE};
    use hyper::{Method, Request, Response, StatusCode};
    use hyper_util::rt::{TokioIo, TokioTimer};
    use std::collections::HashMap;
    use std::convert::Infallible;
    use std::future::Future;
    use std::io;
    use std::net::SocketAddr;
    use std::pin::Pin;
    use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};
    use std::task::{Context as TaskContext, Poll};
    use std::time::{Duration, Instant};
    use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
    use tokio::net::{TcpListener, TcpSocket};
    use tokio::sync::Notify;

    /// Connections at once unless `--http-max-connections` says otherwise (fewer when the
    /// open-file limit leaves less room).
    const MAX_CONNECTIONS: usize = 256;
    /// File descriptors kept free of connections, when the cap comes from the open-file
    /// limit: the listener, the runtime, the capture, connections being refused
    /// ([`MAX_REFUSING`]) and anything opened later.
    const FD_RESERVE: u64 = 32;
    /// Connections past the cap being answered 503 at once; past these, they are closed
    /// without an answer.
    const MAX_REFUSING: usize = 16;
    /// How long a refused connection is kept for its answer.
    const REFUSE_LINGER: Duration = Duration::from_millis(250);
    /// At the cap, a new connection replaces the one that has gone longest without a
    /// request, if it has gone this long (idle, slow, or never reading its answers): a scrape
    /// gets through a flood of idle connections. Otherwise the new one gets 503.
    const EVICT_IDLE: Duration = Duration::from_secs(1);
    /// Connections the kernel queues until they are accepted (std's is 128: a burst of
    /// connections past it has its SYNs dropped, and clients wait a second to retry).
    const BACKLOG: u32 = 1024;
    /// Largest request head (request line and headers): anything larger is answered 431.
    /// Prometheus sends about 300 bytes.
    const MAX_HEAD: usize = 16 * 1024;
    /// Most headers in a request (hyper answers 431 past it).
    const MAX_HEADERS: usize = 64;
    /// First pause after accept() failed for want of resources (descriptors, memory); it
    /// doubles while the failures go on, up to `MAX_BACKOFF`.
    const MIN_BACKOFF: Duration = Duration::from_millis(50);
    /// Longest pause between two accept() attempts while resources lack.
    const MAX_BACKOFF: Duration = Duration::from_secs(1);
    /// At most one message per this long about failed accepts.
    const LOG_EVERY: Duration = Duration::from_secs(10);
    /// How often the accept loop looks at the stop flag.
    const STOP_POLL: Duration = Duration::from_millis(100);
    /// The content type of plain-text answers (errors), as tiny_http gave them.
    const TEXT: &str = "text/plain; charset=UTF-8";
    /// Said, raw, to a connection past the cap before it is closed.
    const BUSY: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=UTF-8\r\n\
        Content-Length: 16\r\nConnection: close\r\n\r\nbusy, try again\n";

    /// The server's limits.
    #[derive(Debug, Clone, Copy)]
    pub(super) struct Limits {
        /// Connections open at once; more are answered 503 and closed at once.
        pub max_connections: usize,
        /// Time to send a request's head, from the connection or the previous answer.
        pub header_timeout: Duration,
        /// Time an answer may wait for a client that reads none of it.
        pub write_timeout: Duration,
        /// The cap is below [`MAX_CONNECTIONS`] because of the open-file limit.
        pub reduced: bool,
    }

    impl Limits {
        /// From the (hidden) `--http-*` options and the open-file limit.
        pub fn from_args(args: &ExportArgs) -> Self {
            let (max_connections, reduced) = match args.http_max_connections {
                Some(n) => (n as usize, false),
                None => {
                    let room = fd_room();
                    (
                        room.map_or(MAX_CONNECTIONS, |r| r.clamp(1, MAX_CONNECTIONS)),
                        room.is_some_and(|r| r < MAX_CONNECTIONS),
                    )
                }
            };
            Self {
                max_connections,
                header_timeout: Duration::from_secs_f64(args.http_header_timeout),
                write_timeout: Duration::from_secs_f64(args.http_write_timeout),
                reduced,
            }
        }
    }

    /// Descriptors left under the soft open-file limit, less a reserve (None: no limit).
    fn fd_room() -> Option<usize> {
        let soft = rustix::process::getrlimit(rustix::process::Resource::Nofile).current?;
        let open = std::fs::read_dir("/proc/self/fd").map_or(32, |d| d.count() as u64);
        Some(usize::try_from(soft.saturating_sub(open + FD_RESERVE)).unwrap_or(usize::MAX))
    }

    /// What the answers need.
    pub(super) struct Context {
        shared: Arc<Mutex<Shared>>,
        name: String,
        live: bool,
        stop: Arc<AtomicBool>,
        limits: Limits,
        /// The last encoded `/metrics` body per format (Prometheus text, OpenMetrics), with
        /// the snapshot generation it encodes: scrapes between two snapshots cost a copy.
        cache: Mutex<[Option<(u64, Bytes)>; 2]>,
    }

    impl Context {
        /// The context of a server.
        pub fn new(
            shared: Arc<Mutex<Shared>>,
            name: String,
            live: bool,
            stop: Arc<AtomicBool>,
            limits: Limits,
        ) -> Self {
            Self { shared, name, live, stop, limits, cache: Mutex::new([None, None]) }
        }
    }

    /// Listen on `addr` (within the server's runtime), with a backlog for bursts of
    /// connections.
    pub(super) fn listen(addr: SocketAddr) -> io::Result<TcpListener> {
        let socket = if addr.is_ipv4() { TcpSocket::new_v4()? } else { TcpSocket::new_v6()? };
        socket.set_reuseaddr(true)?;
        socket.bind(addr)?;
        socket.listen(BACKLOG)
    }

    /// Serve until the stop flag is set (`Ok`), or until accepting fails in a way that
    /// retrying cannot mend (the listener itself is gone): `Err` says why.
    pub(super) async fn serve(listener: TcpListener, ctx: Context) -> Result<(), String> {
        let ctx = Arc::new(ctx);
        let conns = Arc::new(Conns::new());
        let refusing = Arc::new(AtomicUsize::new(0));
        let mut http = hyper::server::conn::http1::Builder::new();
        http.timer(TokioTimer::new())
            .header_read_timeout(ctx.limits.header_timeout)
            .max_buf_size(MAX_HEAD)
            .max_headers(MAX_HEADERS)
            // Pipelined requests are answered one after the other, each flushed: hyper's
            // `pipeline_flush` would batch them, but it also drops the 400 and 431 answers.
            .keep_alive(true);
        let mut errors = AcceptErrors::new();
        let mut tick = tokio::time::interval(STOP_POLL);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            let accepted = tokio::select! {
                r = listener.accept() => r,
                _ = tick.tick() => {
                    if ctx.stop.load(Ordering::Relaxed) {
                        return Ok(());
                    }
                    continue;
                }
            };
            let stream = match accepted {
                Ok((stream, _)) => {
                    errors.accepted();
                    stream
                }
                Err(e) => {
                    match AcceptError::of(&e) {
                        AcceptError::Fatal => return Err(format!("cannot accept connections: {e}")),
                        AcceptError::Connection => errors.note(&e, false),
                        AcceptError::Resources => {
                            errors.note(&e, true);
                            tokio::time::sleep(errors.pause()).await;
                        }
                    }
                    continue;
                }
            };
            if conns.len() >= ctx.limits.max_connections {
                if conns.evict_idle() {
                    // Let the evicted connection end (and close its socket) first.
                    tokio::task::yield_now().await;
                } else {
                    refuse(stream, &refusing);
                    continue;
                }
            }
            let _ = stream.set_nodelay(true);
            let slot = Slot::take(&conns);
            let io = TokioIo::new(WriteTimeout::new(stream, ctx.limits.write_timeout));
            let (c, conn) = (Arc::clone(&ctx), Arc::clone(&slot.conn));
            let service = hyper::service::service_fn(move |req| {
                conn.requested();
                std::future::ready(Ok::<_, Infallible>(answer(&req, &c)))
            });
            let served = http.serve_connection(io, service);
            tokio::spawn(async move {
                // A connection's errors (timeouts, bad requests, resets) end only it.
                tokio::select! {
                    _ = served => {}
                    () = slot.conn.evict.notified() => {}
                }
                drop(slot);
            });
        }
    }

    /// The open connections: how many, and which has gone longest without a request.
    struct Conns {
        epoch: Instant,
        table: Mutex<(u64, HashMap<u64, Arc<Conn>>)>,
    }

    /// One open connection.
    struct Conn {
        /// When its last request came (or it connected), in ms since [`Conns::epoch`].
        last_request: AtomicU64,
        /// Notified to close it.
        evict: Notify,
        evicted: AtomicBool,
        epoch: Instant,
    }

    impl Conn {
        fn now(epoch: Instant) -> u64 {
            u64::try_from(epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
        }

        /// A request came.
        fn requested(&self) {
            self.last_request.store(Self::now(self.epoch), Ordering::Relaxed);
        }
    }

    impl Conns {
        fn new() -> Self {
            Self { epoch: Instant::now(), table: Mutex::new((0, HashMap::new())) }
        }

        fn len(&self) -> usize {
            self.table.lock().map_or(0, |t| t.1.len())
        }

        /// Close the connection that has gone longest without a request, if that is at
        /// least [`EVICT_IDLE`]: a new one takes its place. False if none has.
        fn evict_idle(&self) -> bool {
            let Ok(t) = self.table.lock() else { return false };
            let now = Conn::now(self.epoch);
            // Of those idle as long (to the millisecond), the one opened first.
            let idlest =
                t.1.iter()
                    .filter(|(_, c)| !c.evicted.load(Ordering::Relaxed))
                    .min_by_key(|(id, c)| (c.last_request.load(Ordering::Relaxed), **id));
            match idlest {
                Some((_, c))
                    if now.saturating_sub(c.last_request.load(Ordering::Relaxed))
                        >= EVICT_IDLE.as_millis() as u64 =>
                {
                    c.evicted.store(true, Ordering::Relaxed);
                    c.evict.notify_one();
                    true
                }
                _ => false,
            }
        }
    }

    /// One connection's place among the open ones, given back when it ends.
    struct Slot {
        conns: Arc<Conns>,
        id: u64,
        conn: Arc<Conn>,
    }

    impl Slot {
        fn take(conns: &Arc<Conns>) -> Self {
            let conn = Arc::new(Conn {
                last_request: AtomicU64::new(Conn::now(conns.epoch)),
                evict: Notify::new(),
                evicted: AtomicBool::new(false),
                epoch: conns.epoch,
            });
            let mut id = 0;
            if let Ok(mut t) = conns.table.lock() {
                id = t.0;
                t.0 += 1;
                t.1.insert(id, Arc::clone(&conn));
            }
            Self { conns: Arc::clone(conns), id, conn }
        }
    }

    impl Drop for Slot {
        fn drop(&mut self) {
            if let Ok(mut t) = self.conns.table.lock() {
                t.1.remove(&self.id);
            }
        }
    }

    /// A connection past the cap: 503, then closed. At most [`MAX_REFUSING`] at a time are
    /// answered, each for at most [`REFUSE_LINGER`] (the answer, then what the client sends
    /// until it closes, so that the close is no reset that would lose the answer); past
    /// those, the connection is closed at once.
    fn refuse(mut stream: tokio::net::TcpStream, refusing: &Arc<AtomicUsize>) {
        if refusing.load(Ordering::Relaxed) >= MAX_REFUSING {
            return;
        }
        refusing.fetch_add(1, Ordering::Relaxed);
        let refusing = Arc::clone(refusing);
        tokio::spawn(async move {
            let _ = tokio::time::timeout(REFUSE_LINGER, async {
                stream.write_all(BUSY).await?;
                stream.shutdown().await?;
                let mut sink = [0u8; 4096];
                while stream.read(&mut sink).await? > 0 {}
                Ok::<_, io::Error>(())
            })
            .await;
            drop(stream);
            refusing.fetch_sub(1, Ordering::Relaxed);
        });
    }

    /// What a failed accept() means.
    enum AcceptError {
        /// That connection failed before it was accepted (the client gave up, a network
        /// error): the next one may do.
        Connection,
        /// No descriptors or memory for now: pause, then try again.
        Resources,
        /// The listener itself is gone.
        Fatal,
    }

    impl AcceptError {
        fn of(e: &io::Error) -> Self {
            use rustix::io::Errno;
            let Some(errno) = Errno::from_io_error(e) else { return Self::Resources };
            // accept(2): errors of the connection, passed on by Linux, to be retried.
            let connection = [
                Errno::CONNABORTED,
                Errno::CONNRESET,
                Errno::INTR,
                Errno::AGAIN,
                Errno::PROTO,
                Errno::PERM,
                Errno::NETDOWN,
                Errno::NOPROTOOPT,
                Errno::HOSTDOWN,
                Errno::NONET,
                Errno::HOSTUNREACH,
                Errno::OPNOTSUPP,
                Errno::NETUNREACH,
                Errno::TIMEDOUT,
            ];
            if connection.contains(&errno) {
                Self::Connection
            } else if [Errno::BADF, Errno::INVAL, Errno::NOTSOCK, Errno::FAULT].contains(&errno) {
                Self::Fatal
            } else {
                // EMFILE, ENFILE, ENOBUFS, ENOMEM and anything unforeseen: pause and retry.
                Self::Resources
            }
        }
    }

    /// Failed accepts: a message at most every [`LOG_EVERY`], and the pause before the next.
    struct AcceptErrors {
        /// Failures not yet told about.
        untold: u64,
        last_told: Option<Instant>,
        /// A message was printed since the last accepted connection.
        told_in_run: bool,
        /// Resource failures since the last accepted connection.
        starved: u64,
        backoff: Duration,
    }

    impl AcceptErrors {
        fn new() -> Self {
            Self { untold: 0, last_told: None, told_in_run: false, starved: 0, backoff: MIN_BACKOFF }
        }

        fn note(&mut self, e: &io::Error, resources: bool) {
            if resources {
                self.starved += 1;
            }
            if self.last_told.is_some_and(|t| t.elapsed() < LOG_EVERY) {
                self.untold += 1;
                return;
            }
            let more = match self.untold {
                0 => String::new(),
                n => format!(" ({n} more failures since the last message)"),
            };
            let what = if resources { "pausing, then accepting again" } else { "still accepting" };
            note!("rocescope: HTTP: cannot accept a connection: {e}{more}; {what}");
            self.untold = 0;
            self.last_told = Some(Instant::now());
            self.told_in_run = true;
        }

        /// The pause after a resource failure: doubles while they go on.
        fn pause(&mut self) -> Duration {
            let d = self.backoff;
            self.backoff = (self.backoff * 2).min(MAX_BACKOFF);
            d
        }

        fn accepted(&mut self) {
            if self.starved > 0 && self.told_in_run {
                note!("rocescope: HTTP: accepting connections again");
            }
            self.told_in_run = false;
            self.starved = 0;
            self.backoff = MIN_BACKOFF;
        }
    }

    /// A connection whose writes fail once they have made no progress for the write
    /// timeout: a client that never reads its answers cannot hold its connection (nor the
    /// answers' memory) for ever. Reads are bounded by hyper's header timeout.
    struct WriteTimeout {
        io: tokio::net::TcpStream,
        timeout: Duration,
        deadline: Pin<Box<tokio::time::Sleep>>,
        /// A write is waiting: `deadline` runs.
        blocked: bool,
    }

    impl WriteTimeout {
        fn new(io: tokio::net::TcpStream, timeout: Duration) -> Self {
            Self { io, timeout, deadline: Box::pin(tokio::time::sleep(timeout)), blocked: false }
        }

        /// The write could not proceed: start the clock (if not running), fail when it ends.
        fn wait<T>(&mut self, cx: &mut TaskContext<'_>) -> Poll<io::Result<T>> {
            if !self.blocked {
                self.blocked = true;
                self.deadline.as_mut().reset(tokio::time::Instant::now() + self.timeout);
            }
            match self.deadline.as_mut().poll(cx) {
                Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "the client read nothing for the write timeout",
                ))),
                Poll::Pending => Poll::Pending,
            }
        }

        fn track<T>(&mut self, cx: &mut TaskContext<'_>, r: Poll<io::Result<T>>) -> Poll<io::Result<T>> {
            match r {
                Poll::Pending => self.wait(cx),
                ready => {
                    self.blocked = false;
                    ready
                }
            }
        }
    }

    impl AsyncRead for WriteTimeout {
        fn poll_read(
            self: Pin<&mut Self>,
            cx: &mut TaskContext<'_>,
            buf: &mut ReadBuf<'_>,
        ) -> Poll<io::Result<()>> {
            Pin::new(&mut self.get_mut().io).poll_read(cx, buf)
        }
    }

    impl AsyncWrite for WriteTimeout {
        fn poll_write(self: Pin<&mut Self>, cx: &mut TaskContext<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
            let this = self.get_mut();
            let r = Pin::new(&mut this.io).poll_write(cx, buf);
            this.track(cx, r)
        }

        fn poll_write_vectored(
            self: Pin<&mut Self>,
            cx: &mut TaskContext<'_>,
            bufs: &[io::IoSlice<'_>],
        ) -> Poll<io::Result<usize>> {
            let this = self.get_mut();
            let r = Pin::new(&mut this.io).poll_write_vectored(cx, bufs);
            this.track(cx, r)
        }

        fn is_write_vectored(&self) -> bool {
            self.io.is_write_vectored()
        }

        fn poll_flush(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<io::Result<()>> {
            let this = self.get_mut();
            let r = Pin::new(&mut this.io).poll_flush(cx);
            this.track(cx, r)
        }

        fn poll_shutdown(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<io::Result<()>> {
            Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
        }
    }

    /// A response with a body and a content type.
    fn reply(status: StatusCode, ctype: &'static str, body: impl Into<Bytes>) -> Response<Full<Bytes>> {
        let mut r = Response::new(Full::new(body.into()));
        *r.status_mut() = status;
        r.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static(ctype));
        r
    }

    /// Answer one request (hyper leaves out the body of an answer to HEAD).
    fn answer(req: &Request<Incoming>, ctx: &Context) -> Response<Full<Bytes>> {
        if !matches!(*req.method(), Method::GET | Method::HEAD) {
            let mut r = reply(StatusCode::METHOD_NOT_ALLOWED, TEXT, "only GET\n");
            r.headers_mut().insert(ALLOW, HeaderValue::from_static("GET, HEAD"));
            return r;
        }
        match req.uri().path() {
            "/metrics" => {
                let openmetrics = req.headers().get_all(ACCEPT).iter().any(|v| {
                    String::from_utf8_lossy(v.as_bytes()).contains("application/openmetrics-text")
                });
                let ctype = if openmetrics {
                    "application/openmetrics-text; version=1.0.0; charset=utf-8"
                } else {
                    prometheus_client::encoding::prometheus_text::CONTENT_TYPE
                };
                match metrics_body(ctx, openmetrics) {
                    Some(body) => reply(StatusCode::OK, ctype, body),
                    None => reply(StatusCode::INTERNAL_SERVER_ERROR, TEXT, "encoding the metrics failed\n"),
                }
            }
            "/healthz" => {
                let (code, body) = match ctx.shared.lock() {
                    Ok(s) => {
                        let status = if s.failed { "failed" } else { "ok" };
                        let doc = serde_json::json!({
                            "status": status,
                            "source": ctx.name,
                            "mode": if ctx.live { "live" } else { "file" },
                            "packets": s.packets,
                            "done": s.done,
                            "error": s.error,
                            "snapshot_age_s": s.updated.map(|u| u.elapsed().as_secs_f64()),
                        });
                        let code = if s.failed { StatusCode::SERVICE_UNAVAILABLE } else { StatusCode::OK };
                        (code, doc.to_string() + "\n")
                    }
                    Err(_) => (
                        StatusCode::SERVICE_UNAVAILABLE,
                        "{\"status\":\"failed\",\"error\":\"worker panicked\"}\n".to_string(),
                    ),
                };
                reply(code, "application/json", body)
            }
            "/" => reply(
                StatusCode::OK,
                "text/html; charset=utf-8",
                format!(
                    "<html><head><title>rocescope exporter</title></head><body><h1>rocescope exporter</h1><p>Source: {}</p><p><a href=\"/metrics\">/metrics</a> <a href=\"/healthz\">/healthz</a></p></body></html>\n",
                    html_escape(&ctx.name)
                ),
            ),
            _ => reply(StatusCode::NOT_FOUND, TEXT, "not found: try /metrics or /healthz\n"),
        }
    }

    /// The latest families, encoded (None: encoding failed); from the cache while the
    /// snapshot is the same.
    fn metrics_body(ctx: &Context, openmetrics: bool) -> Option<Bytes> {
        let (generation, fams) = match ctx.shared.lock() {
            Ok(s) => (Some(s.generation), Arc::clone(&s.families)),
            Err(_) => (None, Arc::default()),
        };
        let slot = usize::from(openmetrics);
        if let (Some(g), Ok(cache)) = (generation, ctx.cache.lock()) {
            if let Some((cached, body)) = &cache[slot] {
                if *cached == g {
                    return Some(body.clone());
                }
            }
        }
        let body = Bytes::from(metrics::exposition_text(fams, openmetrics).ok()?);
        if let (Some(g), Ok(mut cache)) = (generation, ctx.cache.lock()) {
            cache[slot] = Some((g, body.clone()));
        }
        Some(body)
    }
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
