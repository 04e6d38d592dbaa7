//! `rocescope report`: analyse a capture or an interface and print findings first, then the
//! connections, the PFC timelines and the QoS audit (or one JSON document). Exit status 3
//! when the audit found violations, so a change can be gated on it; an audit that saw no
//! RoCE is one (`no_roce`): it checked nothing.

use crate::cli::{AnalysisOpts, ReportArgs};
use crate::driver::{self, Flow};
use crate::output::report_text;
use crate::parquet_out::ParquetOut;
use crate::stdio::{self, note};
use anyhow::Context;
use rocescope_analyzer::{Analyzer, AuditConfig, Config, Sampling, SamplingSource};
use rocescope_capture::text;
use std::io::Write;
use std::process::ExitCode;

/// Exit status when the audit found violations.
pub const EXIT_VIOLATIONS: u8 = 3;

/// The analysis configuration the options (and baseline file) select.
pub fn analysis_config(
    a: &AnalysisOpts,
    decoder: &rocescope_decoder::DecodeOptions,
) -> anyhow::Result<Config> {
    let mut audit = match &a.baseline {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read baseline {}", text::path(path)))?;
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
    if a.expect_pcp.is_some() {
        audit.roce_pcp = a.expect_pcp;
    }
    if a.lossless.is_some() {
        audit.lossless_priorities = a.lossless.clone();
    }
    if let Some(t) = a.trust {
        audit.trust = t;
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
        ..Config::default()
    };
    cfg.pfc.storm_window_ns = (a.storm_window_ms * 1e6) as i64;
    cfg.pfc.storm_threshold = a.storm_threshold;
    cfg.pfc.deadlock_ns = (a.deadlock_ms * 1e6) as i64;
    cfg.pfc.pause_allowance_ns = (a.pause_allowance_us * 1e3).round() as i64;
    cfg.match_window_ns = (a.match_window_ms * 1e6) as i64;
    cfg.reorder_ns = (a.reorder_window * 1e3) as i64;
    cfg.cc.cnp_pacing_ns = (a.cnp_pacing_us * 1e3).round() as i64;
    cfg.cc.window_ns = (a.cc_window_us * 1e3).round() as i64;
    cfg.cc.delay_ns = (a.cc_delay_us * 1e3).round() as i64;
    cfg.findings_per_kind = a.findings_per_kind;
    cfg.min_ack_timeout_ns = a.min_ack_timeout;
    cfg.sampling = a.sample_rate.map(|rate| Sampling { source: SamplingSource::Flag, rate });
    cfg.sflow = !a.no_sflow;
    cfg.mirror_sessions = !a.one_point_per_capture;
    cfg.switch_clock = !a.capture_clock;
    cfg.erspan_cos = !a.no_erspan_cos;
    Ok(cfg)
}

/// Run the command.
pub fn run(args: &ReportArgs) -> anyhow::Result<ExitCode> {
    let stop = driver::install_signals()?;
    let opts = args.decoder.decode_options();
    let mut cfg = analysis_config(&args.analysis, &opts)?;
    let mut opened = crate::signals::opening(|| driver::open(&args.source, &opts, false))?;
    cfg.points = opened.point_names();
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
    let mut analyzer = Analyzer::new(cfg);
    // Frame numbers as the capture counts them (an sFlow datagram is one frame, whatever
    // it samples): what findings cite as evidence.
    let mut number = 0u64;
    let end = driver::pump(
        &mut opened,
        &args.source,
        &opts,
        driver::Decoding::All,
        &stop,
        |rec, packet| {
            number += 1;
            if let Some(p) = packet {
                analyzer.push_frame(number, rec, p, &opts);
                if let Some(out) = &mut parquet {
                    out.push(number, rec, p, &opts);
                }
            }
            Ok(Flow::Continue)
        },
        |_| Flow::Continue,
    )?;
    analyzer.finish();
    // The flows' entries are built as they are written: a million flows' entries never sit
    // in memory together.
    let mut streamed = analyzer.report_streamed();
    let report = &mut streamed.report;
    // A damaged or unreadable input is said in the document too, not only on stderr.
    report.input_errors = end.errors.clone();
    report.capture = end.stats.map(|s| rocescope_analyzer::report::CaptureCounters {
        interface: opened.name.clone(),
        received: s.received,
        kernel_dropped: s.kernel_dropped,
        if_dropped: s.if_dropped,
    });
    // The files are complete (and named) before the report is printed; a failure is said
    // after it, and makes the exit status 1.
    let parquet = parquet.map(|p| p.finish(&streamed));
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let res = if args.quiet {
        Ok(())
    } else if args.json {
        // Streamed through a large buffer: stdout is line-buffered, and the document can be
        // gigabytes (a million flows), too much to build in memory first. Names keep no
        // control character raw on the way (`\u009b`, `\u202e`: stdio::JsonSafe).
        let mut w = std::io::BufWriter::with_capacity(1 << 20, &mut out);
        crate::output::exact::to_writer(stdio::JsonSafe(&mut w), &streamed)
            .map_err(std::io::Error::from)
            .and_then(|()| w.write_all(b"\n"))
            .and_then(|()| w.flush())
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
    let violations = !streamed.report.audit.violations.is_empty();
    // Freeing a million flows one by one takes seconds; the process is about to end.
    std::mem::forget(streamed);
    std::mem::forget(analyzer);
    driver::report_stats(&text::escape(&opened.name).to_string(), &end);
    if let Some(e) = end.source_error {
        let merged = opened.source.point_names().is_some();
        note!("rocescope: {}", driver::with_cover(e, merged, end.frames, "the report"));
        return Ok(ExitCode::from(1));
    }
    if !violations {
        Ok(ExitCode::SUCCESS)
    } else {
        Ok(ExitCode::from(EXIT_VIOLATIONS))
    }
}
