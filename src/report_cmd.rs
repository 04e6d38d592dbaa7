//! `rocescope report`: analyse a capture or an interface and print findings first, then the
//! connections, the PFC timelines and the QoS audit (or one JSON document). The exit status
//! policy ([`analysed_status`], README "Exit status"): 3 when the audit found violations of
//! the expectations given (an audit that saw no RoCE is one, `no_roce`: it checked
//! nothing), 4 for findings at or above `--fail-on`, so a change can be gated on either.

use crate::cli::{AnalysisOpts, FailOn, ReportArgs};
use crate::driver::{self, Flow};
use crate::output::report_text;
use crate::parquet_out::ParquetOut;
use crate::stdio::note;
use anyhow::Context;
use rocescope_analyzer::nccl;
use rocescope_analyzer::nic_counters::{self, CounterInput, Host};
use rocescope_analyzer::nic_findings;
use rocescope_analyzer::report::{Finding, Report, Severity, StreamedReport};
use rocescope_analyzer::{Analyzer, AuditConfig, Config, Sampling, SamplingSource};
use rocescope_capture::{small_file, text};
use rocescope_decoder::DecodeOptions;
use std::io::Write;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

/// Exit status when the audit found violations of the expectations given.
pub const EXIT_VIOLATIONS: u8 = crate::exit::VIOLATIONS;

/// Exit status when findings at or above the `--fail-on` level were found.
pub const EXIT_FINDINGS: u8 = crate::exit::GATE;

/// The exit status of an analysed run (README "Exit status"): findings at or above the
/// `--fail-on` level first (4), then violations of the expectations the user gave (3).
/// A pause on a priority no RoCE uses is a violation the analyzer derives itself (no
/// expectation named it): reported, but it fails the run only under a lossless-priority
/// expectation that excludes that priority.
pub fn analysed_status(report: &Report, audit: &AuditConfig, fail_on: FailOn) -> u8 {
    let f = &report.summary.findings;
    let findings = match fail_on {
        FailOn::Info => f.critical + f.warning + f.info > 0,
        FailOn::Critical => f.critical > 0,
        FailOn::Warning => f.critical + f.warning > 0,
        FailOn::Audit | FailOn::Never => false,
    };
    if findings {
        return EXIT_FINDINGS;
    }
    let violations = report.audit.violations.iter().any(|v| v.of_expectation_given(audit));
    if fail_on != FailOn::Never && violations {
        EXIT_VIOLATIONS
    } else {
        0
    }
}

/// The analysis configuration the options (and baseline file) select.
pub fn analysis_config(
    a: &AnalysisOpts,
    decoder: &rocescope_decoder::DecodeOptions,
) -> anyhow::Result<Config> {
    let mut audit = match &a.baseline {
        Some(path) => {
            let bytes = small_file::read_small(path, "baseline", small_file::SMALL_FILE_LIMIT)?;
            let text = String::from_utf8(bytes)
                .with_context(|| format!("baseline {} is not UTF-8 text", text::path(path)))?;
            toml::from_str::<AuditConfig>(&text)
                .with_context(|| format!("baseline {} is not valid", text::path(path)))?
        }
        None => AuditConfig::default(),
    };
    // Flags override the baseline file, key by key (the QoS model: docs/verdicts.md "QoS
    // audit"; reference §1.7, §1.9).
    if a.expect_dscp.is_some() {
        audit.roce_dscp = a.expect_dscp.clone();
    }
    if a.expect_ack_dscp.is_some() {
        audit.ack_dscp = a.expect_ack_dscp.clone();
    }
    if a.expect_cnp_dscp.is_some() {
        audit.cnp_dscp = a.expect_cnp_dscp.clone();
    }
    if a.expect_outer_dscp.is_some() {
        audit.outer_dscp = a.expect_outer_dscp.clone();
    }
    if a.expect_pcp.is_some() {
        audit.roce_pcp = a.expect_pcp;
    }
    if a.lossless.is_some() {
        audit.lossless_priorities = a.lossless.clone();
    }
    if let Some(t) = a.trust {
        audit.trust = t;
    }
    if let Some(t) = a.pcp_tag {
        audit.pcp_tag = t;
    }
    if a.dscp_map.is_some() {
        audit.dscp_map = a.dscp_map;
    }
    audit.ecn_capable |= a.expect_ecn;
    audit.normalize().map_err(|e| match &a.baseline {
        Some(path) => anyhow::anyhow!("baseline {} is not valid: {e}", text::path(path)),
        None => anyhow::anyhow!("{e}"),
    })?;
    let mut cfg = Config {
        link_speed_bps: a.link_speed,
        pmtu: a.pmtu,
        audit,
        opcode: decoder.opcode,
        decode: *decoder,
        ..Config::default()
    };
    cfg.pfc.storm_window_ns = (a.storm_window_ms * 1e6) as i64;
    cfg.pfc.storm_threshold = a.storm_threshold;
    cfg.pfc.deadlock_ns = (a.deadlock_ms * 1e6) as i64;
    cfg.pfc.pause_allowance_ns = (a.pause_allowance_us * 1e3).round() as i64;
    cfg.keep_duplicates = a.keep_duplicates;
    cfg.match_window_ns = (a.match_window_ms * 1e6) as i64;
    cfg.reorder_ns = (a.reorder_window * 1e3) as i64;
    cfg.cc.cnp_pacing_ns = (a.cnp_pacing_us * 1e3).round() as i64;
    cfg.cc.window_ns = (a.cc_window_us * 1e3).round() as i64;
    cfg.cc.delay_ns = (a.cc_delay_us * 1e3).round() as i64;
    cfg.findings_per_kind = a.findings_per_kind;
    cfg.bin_ns = a.bin_ns;
    cfg.min_ack_timeout_ns = a.min_ack_timeout;
    cfg.sampling = a.sample_rate.map(|rate| Sampling { source: SamplingSource::Flag, rate });
    cfg.sflow = !a.no_sflow;
    cfg.mirror_sessions = !a.one_point_per_capture;
    cfg.switch_clock = !a.capture_clock;
    cfg.erspan_cos = !a.no_erspan_cos;
    let uplinks: Vec<String> =
        a.uplinks.iter().map(|u| u.trim().to_string()).filter(|u| !u.is_empty()).collect();
    // What would otherwise be passed over without a word (issue 40): a hash with nothing to
    // predict, more uplinks than the prediction's paths.
    if a.ecmp_hash.is_some() && a.ecmp_paths.is_none() && uplinks.is_empty() {
        return Err(crate::window::Usage(
            "--ecmp-hash models the switch hash of an ECMP prediction: give the paths too (--ecmp-paths N, or --uplinks)".into(),
        )
        .into());
    }
    let max = usize::from(rocescope_analyzer::ecmp::MAX_PATHS);
    if a.ecmp_paths.is_none() && uplinks.len() > max {
        return Err(crate::window::Usage(format!(
            "--uplinks: {} uplinks, more than the {max} paths an ECMP prediction models",
            uplinks.len()
        ))
        .into());
    }
    cfg.ecmp = rocescope_analyzer::ecmp::EcmpConfig {
        paths: a.ecmp_paths,
        hash: a.ecmp_hash.unwrap_or_default(),
        uplinks,
    };
    Ok(cfg)
}

/// `--uplinks` names that none of the merged captures' points has: an error before any
/// frame is read (a single capture's points may be mirror sessions found while reading, so
/// its names are checked in the report, `ecmp.uplinks.unmatched`).
pub fn check_uplinks(cfg: &Config) -> anyhow::Result<()> {
    if cfg.points.len() < 2 {
        return Ok(());
    }
    let unknown: Vec<&String> = cfg
        .ecmp
        .uplinks
        .iter()
        .filter(|u| !cfg.points.iter().any(|p| rocescope_analyzer::ecmp::names_point(u, p)))
        .collect();
    if let Some(u) = unknown.first() {
        // A bad option value: a usage error (2), not an input that could not be read.
        return Err(crate::window::Usage(format!(
            "--uplinks: no capture point is named {:?} (the points are {})",
            text::escape(u).to_string(),
            cfg.points.iter().map(|p| text::escape(p).to_string()).collect::<Vec<_>>().join(", ")
        ))
        .into());
    }
    Ok(())
}

/// Read the `--counters` files (before any frame is read: a bad file is an error at once,
/// naming the file and the line).
pub fn read_counters(
    files: &[std::path::PathBuf],
    host: &[String],
) -> anyhow::Result<Option<(CounterInput, Host)>> {
    if files.is_empty() {
        return Ok(None);
    }
    if files.len() > 2 {
        anyhow::bail!(
            "--counters given {} times; give one file (one snapshot, or two: before and after) or two files (before, after)",
            files.len()
        );
    }
    let mut read = Vec::new();
    for path in files {
        let name = text::path(path).to_string();
        let bytes = small_file::read_small(path, "counter file", small_file::SMALL_FILE_LIMIT)?;
        let body = String::from_utf8_lossy(&bytes);
        let snaps = nic_counters::parse(&body).map_err(|e| anyhow::anyhow!("counter file {name}: {e}"))?;
        read.push((name, snaps));
    }
    let input = CounterInput::combine(read).map_err(|e| anyhow::anyhow!("{e}"))?;
    let host = Host::parse(host).map_err(|e| anyhow::anyhow!("--counters-host: {e}"))?;
    Ok(Some((input, host)))
}

/// Set the counters beside the report's figures: the `counters` object, and its findings
/// among the others (after the warnings already there), counted in the summary.
pub fn add_counters(streamed: &mut StreamedReport<'_>, input: &CounterInput, host: &Host) {
    let mut flows = (0..streamed.flow_count()).filter_map(|id| streamed.flow(id));
    let (counters, findings) = nic_counters::reconcile(input, &streamed.report, &mut flows, host);
    attach(&mut streamed.report, counters, findings);
}

/// [`add_counters`] for a report that holds its flows (the exporter's).
pub fn add_counters_to(report: &mut Report, input: &CounterInput, host: &Host) {
    let flows = std::mem::take(&mut report.flows);
    let (counters, findings) = nic_counters::reconcile(input, report, &mut flows.iter().cloned(), host);
    report.flows = flows;
    attach(report, counters, findings);
}

fn attach(report: &mut Report, counters: nic_counters::CountersReport, findings: Vec<Finding>) {
    for f in findings {
        match f.severity {
            Severity::Critical => report.summary.findings.critical += 1,
            Severity::Warning => report.summary.findings.warning += 1,
            Severity::Info => report.summary.findings.info += 1,
        }
        let at =
            report.findings.iter().position(|x| x.severity > f.severity).unwrap_or(report.findings.len());
        report.findings.insert(at, f);
    }
    // Losses beyond the capture point that the host's NIC counted as receive drops.
    if let Some(d) = &counters.nic_drops {
        nic_findings::place_drops(&mut report.findings, d);
    }
    report.counters = Some(counters);
}

/// Read the `--nccl-env` file (before any frame is read: a bad file is an error at once,
/// naming the file and the line), with `--nccl-version` over the file's version comment.
/// `None` without the option.
pub fn read_nccl_env(
    path: Option<&std::path::Path>,
    version: Option<nccl::NcclVersion>,
) -> anyhow::Result<Option<(nccl::NcclEnv, String)>> {
    let Some(path) = path else { return Ok(None) };
    let name = text::path(path).to_string();
    let bytes = small_file::read_small(path, "NCCL environment file", small_file::SMALL_FILE_LIMIT)?;
    let body = String::from_utf8_lossy(&bytes);
    // NCCL's own config file keeps quotes: its values are read as NCCL reads them.
    let kind = nccl::FileKind::of_path(&path.to_string_lossy());
    let mut env =
        nccl::parse_as(&body, kind).map_err(|e| anyhow::anyhow!("NCCL environment file {name}: {e}"))?;
    if version.is_some() {
        env.version = version;
    }
    Ok(Some((env, name)))
}

/// Check the NCCL environment against the report: its `nccl` section, and a finding per
/// variable the wire contradicts among the others, counted in the summary.
pub fn add_nccl(streamed: &mut StreamedReport<'_>, env: &nccl::NcclEnv, file: &str) {
    let flows = (0..streamed.flow_count()).filter_map(|id| streamed.flow_counters(id));
    // Built for the check alone: the streamed report holds no list of them.
    let connections: Vec<_> = streamed.connections().collect();
    let mut check = nccl::check_flows(env, &streamed.report, &connections, flows);
    check.file = Some(file.to_string());
    nccl::attach(&mut streamed.report, check);
}

/// Run the command.
pub fn run(args: &ReportArgs) -> anyhow::Result<ExitCode> {
    let stop = driver::install_signals()?;
    let opts = args.decoder.decode_options();
    let mut cfg = analysis_config(&args.analysis, &opts)?;
    let counters = read_counters(&args.counters, &args.counters_host)?;
    let nccl_env = read_nccl_env(args.nccl.nccl_env.as_deref(), args.nccl.nccl_version)?;
    let mut opened = crate::signals::opening(|| driver::open(&args.source, &opts, false))?;
    cfg.points = opened.point_names();
    check_uplinks(&cfg)?;
    let setting =
        crate::progress::Setting { when: args.progress.progress, quiet: args.quiet, streams_stdout: false };
    let label = if opened.source.is_live() { "capturing" } else { "reading" };
    opened.show_progress(setting, label, &args.source.read);
    // Before any frame is read: an unwritable directory is an error at once.
    let mut parquet = match &args.parquet {
        Some(dir) => {
            let sources: Vec<String> = match (&args.source.interface, &args.source.sflow) {
                _ if !args.source.read.is_empty() => args
                    .source
                    .read
                    .iter()
                    .map(|p| if p.as_os_str() == "-" { "stdin".to_string() } else { p.display().to_string() })
                    .collect(),
                (Some(iface), _) => vec![iface.clone()],
                (None, Some(addr)) => vec![format!("sflow-{addr}")],
                (None, None) => vec![opened.name.clone()],
            };
            Some(ParquetOut::create(dir, &sources, cfg.points.clone())?)
        }
        None => None,
    };
    // Refused for an input that cannot be read twice, its file created: before any frame.
    let trace = crate::trace_out::TraceOut::create(args)?;
    // Before any frame is read too: a file that cannot be written is said at once.
    let html = args.html.as_deref().map(rocescope_output::html::HtmlFile::create).transpose()?;
    let threads = shard_count(args, &cfg, &opts);
    let live = args.source.read.is_empty();
    let max_flows = usize::try_from(args.analysis.max_flows).unwrap_or(usize::MAX);
    let mut analyzer = Analyzer::new(cfg.clone());
    analyzer.set_shard(0, threads);
    // Frame numbers as the capture counts them (an sFlow datagram is one frame, whatever
    // it samples; a record with no captured byte, passed over by the reader, keeps its
    // number, as in tshark): what findings cite as evidence.
    let mut number = 0u64;
    // About how much of the files was read, for a report a signal cut short.
    let mut bytes_read = 0u64;
    let agreement = Agreement { count: threads, reach: AtomicU64::new(0), arrived: AtomicU32::new(0) };
    // With several shards a signal is acted on by all of them together (Agreement).
    let never = AtomicBool::new(false);
    let pump_stop: &AtomicBool = if threads > 1 { &never } else { &stop };
    let mut agreed = None;
    // Two threads, Parquet aside: one reads and checks mirror copies, the other analyses
    // (crate::pipelined); no shards, no merge.
    let pipelined = threads == 2 && parquet.is_none() && pipeline_wanted(&cfg, &opts);
    // A capture file on more threads, Parquet aside, with a core free for the walker: read
    // once, each shard handed its frames (crate::divided).
    // (A pipe, FIFO or standard input on several threads is always read so: shard_count.)
    let divided = !pipelined && threads > 1 && parquet.is_none() && divided_wanted(threads);
    let (end, shards) = if pipelined || divided {
        let d = if pipelined {
            crate::pipelined::run(&mut opened, &args.source, &opts, &cfg, &stop)
        } else {
            crate::divided::run(&mut opened, &args.source, &opts, &cfg, threads, &stop)
        };
        bytes_read = d.bytes_read;
        let mut shards = d.shards.into_iter();
        if let Some(first) = shards.next() {
            analyzer = first.context("parallel analysis")?;
        }
        (d.end, shards.collect())
    } else {
        std::thread::scope(|scope| {
            // The other shards read the file too, each decoding and keeping its own host pairs'
            // flows (rocescope_analyzer::parallel); this thread decodes every frame, keeps the
            // capture-wide figures, reports and writes Parquet.
            let others: Vec<_> = (1..threads)
                .map(|i| {
                    let cfg = cfg.clone();
                    let (args, opts, agreement, stop) = (&*args, &opts, &agreement, &*stop);
                    scope.spawn(move || shard(args, opts, agreement, stop, cfg, i, threads))
                })
                .collect();
            let end = driver::pump(
                &mut opened,
                &args.source,
                &opts,
                // The common RoCEv2 frame goes through the fast path (classified at fixed
                // offsets), unless Parquet wants every frame decoded.
                if parquet.is_none() && analyzer.takes_common(&opts) {
                    driver::Decoding::Fast
                } else {
                    driver::Decoding::All
                },
                pump_stop,
                |rec, packet, common| {
                    number = rec.number_after(number);
                    if threads > 1 && !agreement.read(&stop, number, &mut agreed) {
                        return Ok(Flow::Stop);
                    }
                    bytes_read += driver::record_cost(rec.caplen);
                    match (common, packet) {
                        (Some(c), _) => analyzer.push_common_record(number, rec, c),
                        (None, Some(p)) => {
                            analyzer.push_frame(number, rec, p, &opts);
                            if let Some(out) = &mut parquet {
                                out.push(number, rec, p, &opts);
                            }
                        }
                        (None, None) => return Ok(Flow::Continue),
                    }
                    // A live report runs as long as it is let: past --max-flows the least
                    // recently seen flows go (a file's report keeps every flow).
                    if live && analyzer.flows().len() > max_flows {
                        analyzer.evict_over(max_flows);
                    }
                    Ok(Flow::Continue)
                },
                |_| Flow::Continue,
            );
            if threads > 1 {
                agreement.done(number, agreed.is_some());
            }
            let shards: Vec<anyhow::Result<Analyzer>> = others
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|_| Err(anyhow::anyhow!("a shard failed"))))
                .collect();
            (end, shards)
        })
    };
    let end = end?;
    opened.progress_finishing(&format!(
        "{} frames read; building the report",
        crate::progress::count(end.frames)
    ));
    // A window that held none of the frames read: said, not reported as an empty capture.
    if let Some(msg) = end.empty_window() {
        return Err(crate::window::Usage(msg).into());
    }
    // A signal that came while files were being read cut the report short (Ctrl-C on a live
    // capture is how it ends: not an interruption).
    let interrupted = (!args.source.read.is_empty() && stop.load(Ordering::SeqCst))
        .then(crate::signals::received)
        .flatten();
    if threads > 1 && !pipelined {
        let mut all = vec![analyzer];
        for a in shards {
            all.push(a.context("parallel analysis")?);
        }
        analyzer = rocescope_analyzer::parallel::merge(all).context("parallel analysis")?;
    }
    analyzer.finish();
    // The frames the analysis took (a frame read as a shard's signal came is not one).
    let frames_analysed = analyzer.totals().frames;
    // The flows' entries are built as they are written: a million flows' entries never sit
    // in memory together.
    let mut streamed = analyzer.report_streamed();
    // A damaged or unreadable input is said in the document too, not only on stderr.
    streamed.report.input_errors = end.errors.clone();
    streamed.report.summary.empty_records = end.empty_records;
    streamed.report.summary.window = end.window.clone();
    if let Some(sig) = interrupted {
        streamed.report.interrupted = true;
        let total = driver::file_bytes(&args.source.read);
        streamed.report.interrupted_at = Some(rocescope_analyzer::report::Interruption {
            signal: (if sig == signal_hook::consts::SIGTERM { "SIGTERM" } else { "SIGINT" }).into(),
            frames_read: frames_analysed,
            bytes_read: total.map(|t| bytes_read.min(t)),
            bytes_total: total,
        });
    }
    streamed.report.capture = end.stats.map(|s| rocescope_analyzer::report::CaptureCounters {
        interface: opened.name.clone(),
        received: s.received,
        kernel_dropped: s.kernel_dropped,
        if_dropped: s.if_dropped,
    });
    driver::attach_file_stats(&mut streamed.report.points, &end.file_stats);
    if let Some((input, host)) = &counters {
        add_counters(&mut streamed, input, host);
    }
    if let Some((env, file)) = &nccl_env {
        add_nccl(&mut streamed, env, file);
    }
    // The files are complete (and named) before the report is printed; a failure is said
    // after it, and makes the exit status 1.
    if parquet.is_some() {
        opened.progress_finishing("writing the Parquet files");
    }
    let parquet = parquet.map(|p| p.finish(&streamed));
    // The page is drawn from the finished report: nothing of it runs per frame.
    let html = html.map(|file| file.finish(&rocescope_output::html::render(&streamed, &opened.name)));
    // The terminal clean before the report is written to it.
    opened.clear_progress();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let res = if args.quiet {
        Ok(())
    } else if args.json {
        // Streamed: the document can be gigabytes (a million flows), too much to build in
        // memory first; the writer buffers it and hands over large writes. Names keep no
        // control character raw (`\u009b`, `\u202e`: the writer escapes them).
        // The flows' entries are built and formatted on --threads threads (the same bytes),
        // whatever the input (standard input and merged captures are read by one).
        let t = threads_up_to(args, 4);
        match unbuffered_stdout() {
            Some(mut file) => crate::output::exact::report_to_writer_threads(&mut file, &streamed, t)
                .map_err(std::io::Error::from)
                .and_then(|()| file.write_all(b"\n")),
            None => crate::output::exact::report_to_writer_threads(&mut out, &streamed, t)
                .map_err(std::io::Error::from)
                .and_then(|()| out.write_all(b"\n")),
        }
    } else {
        let text = report_text::render(&streamed, &opened.name, args.max_connections);
        out.write_all(text.as_bytes())
    };
    // A reader that went away (`| head`) ends the report quietly.
    if let Err(e) = res.and_then(|()| out.flush()) {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            return Err(e).context("writing the report");
        }
    }
    match parquet {
        Some(Ok(w)) => {
            if w.renamed {
                note!("rocescope: another capture's Parquet files had the same names; this run's took the next free suffix");
            }
            if !args.quiet {
                let files: Vec<String> =
                    w.files.iter().map(|(p, rows)| format!("{} ({rows} rows)", text::path(p))).collect();
                note!("rocescope: wrote {}", files.join(", "));
            }
        }
        Some(Err(e)) => {
            note!("rocescope: --parquet: {e:#}; this run left no Parquet file");
            std::mem::forget(streamed);
            std::mem::forget(analyzer);
            return Ok(ExitCode::from(1));
        }
        None => {}
    }
    if let Some(Err(e)) = html {
        note!("rocescope: --html: {e:#}");
        std::mem::forget(streamed);
        std::mem::forget(analyzer);
        return Ok(ExitCode::from(1));
    }
    // The trace: a pass of its own over the files, once the report is out (docs/trace.md).
    if let Some(t) = trace {
        if interrupted.is_some() {
            note!("rocescope: --trace: the reading was interrupted; no trace written");
        } else {
            let path = t.path().to_path_buf();
            match t.run(args, &opts, &cfg, &stop) {
                Ok(w) => crate::trace_out::note_written(&path, &w, args.quiet),
                Err(e) => {
                    note!("rocescope: --trace: {e:#}");
                    std::mem::forget(streamed);
                    std::mem::forget(analyzer);
                    return Ok(ExitCode::from(1));
                }
            }
        }
    }
    let status = analysed_status(&streamed.report, &cfg.audit, args.fail_on);
    // Freeing a million flows one by one takes seconds; the process is about to end.
    std::mem::forget(streamed);
    std::mem::forget(analyzer);
    driver::report_stats(&text::escape(&opened.name).to_string(), &end);
    if let Some(e) = end.source_error {
        let merged = opened.source.point_names().is_some();
        note!("rocescope: {}", driver::with_cover(e, merged, end.frames, "the report"));
        return Ok(ExitCode::from(1));
    }
    // Cut short by a signal: 128 + its number, as tcpdump and a shell say (130 for Ctrl-C).
    if let Some(sig) = interrupted {
        return Ok(ExitCode::from(u8::try_from(128 + sig).unwrap_or(130)));
    }
    Ok(ExitCode::from(status))
}

/// Standard output as a file of its own (its descriptor duplicated), for the JSON document:
/// `Stdout` is line-buffered, and searched each large write for a newline (one instruction a
/// byte of a document of gigabytes). `None` when there is no descriptor to duplicate.
fn unbuffered_stdout() -> Option<std::fs::File> {
    use std::os::fd::AsFd;
    std::io::stdout().as_fd().try_clone_to_owned().ok().map(std::fs::File::from)
}

/// Threads of the analysis (`--threads`, default 2 with two cores or more): one input only,
/// and not merged captures matched across capture points. A file is read by each shard or
/// once for all ([`divided_wanted`]); a pipe, FIFO or standard input, which can be read only
/// once, by the divided reading where it is wanted and by one thread otherwise (and with
/// `--parquet`, which the divided reading does not write) (issue 40: each shard reopened a
/// `<(...)` and read garbage, or waited in open(2) on a FIFO).
fn shard_count(args: &ReportArgs, cfg: &Config, opts: &DecodeOptions) -> u32 {
    let want = u32::try_from(threads_up_to(args, 2)).unwrap_or(1);
    match args.source.read.as_slice() {
        [p] if cfg.points.len() <= 1 => {
            let stream = crate::input::is_stream(p);
            // (The test that picks two stages: else two shards would each reopen it.)
            let once = if want == 2 { pipeline_wanted(cfg, opts) } else { divided_wanted(want) };
            if stream && (args.parquet.is_some() || !once) {
                1
            } else {
                want
            }
        }
        _ => 1,
    }
}

/// Whether `threads` shards read the file once (crate::divided) rather than each reading it
/// whole: only with a core free for the walker. On this project's 2-core machine two shards
/// and the walker took 0.75 s on 2 M mixed frames where two shards reading the file took
/// 0.53 s (2026-12-07, best of 5). `ROCESCOPE_DIVIDED=1` or `0` decides instead (tests and
/// benchmarks).
fn divided_wanted(threads: u32) -> bool {
    match std::env::var("ROCESCOPE_DIVIDED").as_deref() {
        Ok("1") => true,
        Ok("0") => false,
        _ => std::thread::available_parallelism().map_or(1, |n| n.get()) > threads as usize,
    }
}

/// Whether two threads run the analysis in two stages (crate::pipelined) rather than as two
/// shards of host pairs: unless `ROCESCOPE_PIPELINE=0` (benchmarks), or frames to the RoCE
/// port are sFlow datagrams (sFlow on its port: no common frames).
fn pipeline_wanted(cfg: &Config, opts: &DecodeOptions) -> bool {
    std::env::var("ROCESCOPE_PIPELINE").as_deref() != Ok("0") && Analyzer::takes_common_with(cfg, opts)
}

/// The threads `--threads` asks for, by default the cores up to `default_cap`: 2 for the
/// analysis, the two stages (crate::pipelined: 1.8x one thread on 2 cores, 2026-12-08; more
/// shards of host pairs are slower than that unless a core is free for the walker: the first
/// shard decodes every frame for the capture-wide figures, docs/scaling.md); 4 for
/// formatting the JSON's flow entries.
fn threads_up_to(args: &ReportArgs, default_cap: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    args.threads.map_or(cores.min(default_cap), usize::from).clamp(1, 64)
}

/// How the shards of a parallel analysis stop together on a signal (Ctrl-C): each, on
/// seeing it, says how many frames it has read and waits for the others; then every shard
/// reads up to the furthest of them, so the merged report covers one range of frames. A
/// shard whose reading ended first (the file's end, `-c`) counts with what it read.
struct Agreement {
    /// Shards.
    count: u32,
    /// The most frames any shard had read when it stopped.
    reach: AtomicU64,
    /// Shards that have said.
    arrived: AtomicU32,
}

impl Agreement {
    /// Whether to read frame `number` (from 1); `agreed` holds the agreed last frame once
    /// the signal has come.
    fn read(&self, stop: &AtomicBool, number: u64, agreed: &mut Option<u64>) -> bool {
        let limit = match *agreed {
            Some(l) => l,
            None if !stop.load(Ordering::Relaxed) => return true,
            None => {
                self.reach.fetch_max(number - 1, Ordering::AcqRel);
                self.arrived.fetch_add(1, Ordering::AcqRel);
                while self.arrived.load(Ordering::Acquire) < self.count {
                    std::thread::sleep(std::time::Duration::from_micros(200));
                }
                *agreed.insert(self.reach.load(Ordering::Acquire))
            }
        };
        number <= limit
    }

    /// A shard's reading ended having read `read` frames (if it had not agreed already).
    fn done(&self, read: u64, agreed: bool) {
        if !agreed {
            self.reach.fetch_max(read, Ordering::AcqRel);
            self.arrived.fetch_add(1, Ordering::AcqRel);
        }
    }
}

/// Shard `index` of `count`: read the file again and analyse its host pairs' flows.
fn shard(
    args: &ReportArgs,
    opts: &DecodeOptions,
    agreement: &Agreement,
    stop: &AtomicBool,
    cfg: Config,
    index: u32,
    count: u32,
) -> anyhow::Result<Analyzer> {
    let mut a = Analyzer::new(cfg);
    a.set_shard(index, count);
    let mut opened = match driver::open(&args.source, opts, false) {
        Ok(o) => o,
        Err(e) => {
            // Counted as done, so that a signal does not wait for it.
            agreement.done(0, false);
            return Err(e);
        }
    };
    // The first shard says what there is to say about the input.
    opened.quiet = true;
    let mut number = 0u64;
    let mut agreed = None;
    let never = AtomicBool::new(false);
    // Frames of other shards' host pairs are passed over undecoded, common frames take the
    // fast path (Analyzer::push_shard_record).
    let end = driver::pump(
        &mut opened,
        &args.source,
        opts,
        driver::Decoding::Caller,
        &never,
        |rec, _, _| {
            number = rec.number_after(number);
            if !agreement.read(stop, number, &mut agreed) {
                return Ok(Flow::Stop);
            }
            a.push_shard_record(number, rec, opts);
            Ok(Flow::Continue)
        },
        |_| Flow::Continue,
    );
    agreement.done(number, agreed.is_some());
    end?;
    Ok(a)
}
