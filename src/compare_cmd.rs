//! `rocescope compare BEFORE AFTER`: two captures (or `report --json` documents, or
//! `report --parquet` directories) profiled per capture point and priority, compared side by
//! side with each change's size and whether it is beyond noise, verdicts on the change worst
//! first, and a gate (exit status 4, as `report`'s) a change pipeline can use. The comparison itself is
//! `rocescope_analyzer::compare`; the rules: docs/verdicts.md "Change verdicts".

use crate::cli::{CompareArgs, SourceArgs};
use crate::driver::{self, Flow};
use crate::output::compare_text;
use crate::window::{TimeArg, Window};
use anyhow::Context;
use rocescope_analyzer::compare::{Comparison, Profile, ReportFacts};
use rocescope_analyzer::report::Severity;
use rocescope_analyzer::Analyzer;
use rocescope_capture::text;
use serde::Serialize;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// Exit status when the change gate failed: a verdict at or above `--fail-on`.
pub const EXIT_CHANGE: u8 = crate::exit::GATE;

/// Exit status when neither side holds any RoCE: nothing was compared (never a pass).
pub const EXIT_NOTHING: u8 = crate::exit::NOTHING;

/// What a side was read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SideKind {
    /// Capture files, analysed here.
    Capture,
    /// A `report --json` document.
    ReportJson,
    /// A `report --parquet` directory.
    Parquet,
}

/// One side as read: where from, and its profile.
#[derive(Debug, Serialize)]
pub struct Side {
    /// What it was read from.
    pub kind: SideKind,
    /// The files (or directory) given.
    pub files: Vec<String>,
    /// Its capture points.
    pub points: Vec<String>,
    /// Sampled capture.
    pub sampled: bool,
    /// The share of its request packets the capture holds, when low (the report's
    /// `summary.capture_quality.share`; absent when it holds most of them).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capture_share: Option<f64>,
    /// A report of part of its input.
    pub partial: bool,
    /// The time window its report was made over: each side of `--split-at`, or a report
    /// document made with `--from`/`--to` (absent without one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<rocescope_analyzer::report::Window>,
    /// The profile.
    #[serde(skip)]
    pub profile: Profile,
}

/// The gate's outcome.
#[derive(Debug, Serialize)]
pub struct Gate {
    /// `critical`, `warning`, `info` or `never`.
    pub fail_on: &'static str,
    /// A verdict at or above it was made.
    pub failed: bool,
    /// Neither side holds any RoCE: nothing was compared (status 5, whatever `fail_on`).
    pub nothing_to_compare: bool,
    /// The exit status.
    pub exit: u8,
}

/// The JSON document (docs/compare-json.md).
#[derive(Serialize)]
pub struct Document<'a> {
    /// [`rocescope_analyzer::compare::SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The side before the change.
    pub before: &'a Side,
    /// The side after.
    pub after: &'a Side,
    /// The change gate.
    pub gate: Gate,
    /// The comparison.
    #[serde(flatten)]
    pub comparison: &'a Comparison,
}

fn level_name(l: Option<Severity>) -> &'static str {
    match l {
        Some(Severity::Critical) => "critical",
        Some(Severity::Warning) => "warning",
        Some(Severity::Info) => "info",
        None => "never",
    }
}

/// Run the command.
pub fn run(args: &CompareArgs) -> anyhow::Result<ExitCode> {
    // Ctrl-C or SIGTERM while a side is read stops the reading: no verdict, status 130/143
    // with a word (crate::signals::Interrupted), never a gate passed on half a side.
    driver::install_signals()?;
    // Checked when the command line was read (main): a usage error there.
    let (before_files, after_files) = args.sides().map_err(|e| anyhow::anyhow!(e))?;
    let (level, limits) = args.gate().map_err(|e| anyhow::anyhow!(e))?;
    // A bad environment file is an error before any capture is read.
    let nccl = crate::report_cmd::read_nccl_env(args.nccl.nccl_env.as_deref(), args.nccl.nccl_version)?;
    // Counter files too are read (and refused) before any capture.
    let counters_before = crate::report_cmd::read_counters(&args.counters_before, &args.counters_host)
        .context("--counters-before")?;
    let counters_after = crate::report_cmd::read_counters(&args.counters_after, &args.counters_host)
        .context("--counters-after")?;
    let counters = [counters_before.as_ref(), counters_after.as_ref()];
    let (before, after) = match &args.split_at {
        Some(at) => split_sides(&before_files, at, args, nccl.as_ref(), counters)?,
        None => (
            read_side(&before_files, args, nccl.as_ref(), None, counters[0], "BEFORE")
                .map_err(interrupted_or)
                .context("BEFORE")?
                .0,
            read_side(&after_files, args, nccl.as_ref(), None, counters[1], "AFTER")
                .map_err(interrupted_or)
                .context("AFTER")?
                .0,
        ),
    };
    // The expectations (`--expect-*`, `--lossless`, `--baseline`) the direction of a change
    // is judged against.
    let expect = crate::report_cmd::analysis_config(&args.analysis, &args.decoder.decode_options())?.audit;
    let comparison = Comparison::expecting(&before.profile, &after.profile, &limits, &expect);
    let failed = comparison.fails(level);
    let exit = if comparison.nothing_to_compare {
        EXIT_NOTHING
    } else if failed {
        EXIT_CHANGE
    } else {
        crate::exit::OK
    };
    let doc = Document {
        schema_version: rocescope_analyzer::compare::SCHEMA_VERSION,
        before: &before,
        after: &after,
        gate: Gate {
            fail_on: level_name(level),
            failed,
            nothing_to_compare: comparison.nothing_to_compare,
            exit,
        },
        comparison: &comparison,
    };
    if let Some(path) = &args.junit {
        let xml = crate::output::junit::render(&doc, level).context("writing the JUnit report")?;
        std::fs::write(path, xml).with_context(|| format!("writing {}", text::path(path)))?;
    }
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let res = if args.quiet {
        Ok(())
    } else if args.json {
        crate::output::exact::to_writer(&mut out, &doc)
            .map_err(std::io::Error::from)
            .and_then(|()| out.write_all(b"\n"))
    } else {
        out.write_all(compare_text::render(&doc).as_bytes())
    };
    if let Err(e) = res.and_then(|()| out.flush()) {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            return Err(e).context("writing the comparison");
        }
    }
    Ok(ExitCode::from(exit))
}

/// A side that failed once a signal had asked to stop failed because of it (a pipe or FIFO
/// that ended where the signal came, [`crate::input::Stream`]): said as the interruption.
fn interrupted_or(e: anyhow::Error) -> anyhow::Error {
    match crate::signals::received() {
        Some(sig) if e.downcast_ref::<crate::signals::Interrupted>().is_none() => {
            crate::signals::Interrupted(sig).into()
        }
        _ => e,
    }
}

/// The NCCL environment `--nccl-env` read, and the file's name.
type NcclEnvFile = (rocescope_analyzer::nccl::NcclEnv, String);

/// A side's NIC counters (`--counters-before`, `--counters-after`) and their host.
type Counters = (rocescope_analyzer::nic_counters::CounterInput, rocescope_analyzer::nic_counters::Host);

/// `--split-at`: the capture read twice, BEFORE its frames before `at` and AFTER those at or
/// after it (a relative time resolved against the first frame of all its files both times).
/// A capture with no frame on one side of `at` is a usage error ([`crate::window::Usage`]):
/// an empty side would read as the traffic stopping.
fn split_sides(
    files: &[PathBuf],
    at: &TimeArg,
    args: &CompareArgs,
    nccl: Option<&NcclEnvFile>,
    counters: [Option<&Counters>; 2],
) -> anyhow::Result<(Side, Side)> {
    for f in files {
        if f.as_os_str() == "-" {
            return Err(crate::window::Usage(
                "--split-at reads the capture twice: give a file, not standard input (-)".into(),
            )
            .into());
        }
        if crate::input::is_stream(f) {
            return Err(crate::window::Usage(format!(
                "--split-at reads the capture twice: give a file, not a pipe or FIFO ({})",
                text::path(f)
            ))
            .into());
        }
        if f.is_dir() || looks_like_json(f)? {
            return Err(crate::window::Usage(format!(
                "--split-at splits a capture: {} is a {}",
                text::path(f),
                if f.is_dir() { "directory (report --parquet's tables)" } else { "report document" }
            ))
            .into());
        }
    }
    let before = Window { from: None, to: Some(at.clone()) };
    let after = Window { from: Some(at.clone()), to: None };
    let mut sides = Vec::new();
    let sides_of = [("BEFORE", before, "before", counters[0]), ("AFTER", after, "at or after", counters[1])];
    for (label, window, which, counters) in sides_of {
        let (side, read) = read_side(files, args, nccl, Some(&window), counters, label)
            .map_err(interrupted_or)
            .context(label)?;
        if let Some((_, first, last)) = read.filter(|r| r.0 == 0) {
            return Err(crate::window::Usage(format!(
                "--split-at {}: no frame of the capture is {which} it (it runs from {} to {}, +0 s to +{:.6} s): {label} would be empty",
                at.text,
                rocescope_capture::time::utc(first),
                rocescope_capture::time::utc(last),
                (last - first) as f64 / 1e9
            ))
            .into());
        }
        sides.push(side);
    }
    let after = sides.pop().ok_or_else(|| anyhow::anyhow!("no AFTER side"))?;
    let before = sides.pop().ok_or_else(|| anyhow::anyhow!("no BEFORE side"))?;
    Ok((before, after))
}

/// Frames a capture side analysed, and the first and last frame read (in its window or
/// not); `None` when it read none.
type Read = Option<(u64, i64, i64)>;

/// Read one side: a directory is a Parquet output, a file starting with `{` a report
/// document, anything else captures (several merged as capture points), analysed over
/// `window` when given. A capture side is checked against `nccl` (`--nccl-env`); a report
/// document keeps the `nccl` section it was made with, if any; a Parquet directory has none.
/// `label` (BEFORE, AFTER) names the side's progress bar.
pub fn read_side(
    files: &[PathBuf],
    args: &CompareArgs,
    nccl: Option<&NcclEnvFile>,
    window: Option<&Window>,
    counters: Option<&Counters>,
    label: &str,
) -> anyhow::Result<(Side, Read)> {
    let names: Vec<String> = files.iter().map(|p| text::path(p).to_string()).collect();
    let mut read = None;
    // One file is opened once and sniffed without consuming a byte: a pipe, a FIFO or
    // `<(...)` is read whole by whichever reader it turns out to be for (issue 40).
    let mut one = match files {
        [dir] if window.is_none() && dir.is_dir() => None,
        [file] if window.is_none() => Some(crate::input::Opened::open(file)?),
        _ => None,
    };
    let json = match one.as_mut() {
        Some(o) => o.looks_like_json().with_context(|| format!("cannot read {}", text::path(&o.path)))?,
        None => false,
    };
    let (kind, facts) = match (files, one) {
        ([dir], None) if window.is_none() && dir.is_dir() => (SideKind::Parquet, parquet_facts(dir, args)?),
        (_, Some(o)) if json => (SideKind::ReportJson, json_facts(o)?),
        (_, one) => {
            let (facts, r) = capture_facts(files, one, args, nccl, window, counters, label)?;
            read = r;
            (SideKind::Capture, facts)
        }
    };
    if kind != SideKind::Capture && counters.is_some() {
        anyhow::bail!(
            "--counters-before/--counters-after apply to a capture side; a report document keeps the counters it \
             was made with (report --counters), a Parquet directory has none"
        );
    }
    let mut profile = Profile::from_facts(&facts);
    if kind == SideKind::Parquet {
        // The tables hold no findings: none to compare, rather than none found.
        profile.findings = None;
    }
    Ok((
        Side {
            kind,
            files: names,
            points: profile.points.iter().map(|p| p.name.clone()).collect(),
            sampled: profile.sampled,
            capture_share: profile.capture_share,
            partial: profile.partial,
            window: facts.summary.window.clone(),
            profile,
        },
        read,
    ))
}

/// Whether a regular file's first byte that is not white space is `{` (`--split-at`, which
/// refuses streams: a side is sniffed through [`crate::input::Opened::looks_like_json`]).
fn looks_like_json(path: &Path) -> anyhow::Result<bool> {
    crate::input::Opened::open(path)?
        .looks_like_json()
        .with_context(|| format!("cannot read {}", text::path(path)))
}

/// The facts of a `report --json` document, read from where the sniff left it.
fn json_facts(o: crate::input::Opened) -> anyhow::Result<ReportFacts> {
    let name = text::path(&o.path).to_string();
    ReportFacts::from_reader(o.reader).map_err(|e| anyhow::anyhow!("{name}: {e}"))
}

/// The facts of a `report --parquet` directory.
fn parquet_facts(dir: &Path, args: &CompareArgs) -> anyhow::Result<ReportFacts> {
    let opts = args.decoder.decode_options();
    let cfg = crate::report_cmd::analysis_config(&args.analysis, &opts)?;
    // The Parquet library reads as it reads, without looking at the stop flag: a signal
    // meanwhile ends the process at once (there is no verdict to give from half a side).
    crate::signals::opening(|| rocescope_output::parquet_read::facts(dir, &cfg))
        .with_context(|| format!("{} (a --parquet directory)", text::path(dir)))
}

/// Analyse capture files as `report -r F... [--from T] [--to T]` does and take the facts
/// of the report, with how many frames it analysed and the span of those read; `one`: the
/// side's one file, already opened (and sniffed); `label` names its progress bar.
fn capture_facts(
    files: &[PathBuf],
    one: Option<crate::input::Opened>,
    args: &CompareArgs,
    nccl: Option<&NcclEnvFile>,
    window: Option<&Window>,
    counters: Option<&Counters>,
    label: &str,
) -> anyhow::Result<(ReportFacts, Read)> {
    let opts = args.decoder.decode_options();
    let mut cfg = crate::report_cmd::analysis_config(&args.analysis, &opts)?;
    let source = SourceArgs {
        read: files.to_vec(),
        files: Vec::new(),
        sflow: None,
        interface: None,
        filter: None,
        snaplen: None,
        buffer_kib: None,
        no_promisc: false,
        user: None,
        count: None,
        duration: None,
        from: window.and_then(|w| w.from.clone()),
        to: window.and_then(|w| w.to.clone()),
        blind_after: 5.0,
    };
    let mut opened = match one {
        Some(o) => driver::Opened {
            name: o.path.display().to_string(),
            source: rocescope_capture::Source::File(rocescope_capture::CaptureReader::from_read(
                o.reader, &o.path,
            )?),
            quiet: false,
            progress: None,
        },
        None => driver::open(&source, &opts, false)?,
    };
    cfg.points = opened.point_names();
    // Each side that is a capture has a bar of its own, named BEFORE or AFTER, cleared
    // when it is read (before the other side's).
    let setting =
        crate::progress::Setting { when: args.progress.progress, quiet: args.quiet, streams_stdout: false };
    opened.show_progress(setting, label, files);
    let mut analyzer = Analyzer::new(cfg);
    let decoding = if analyzer.takes_common(&opts) { driver::Decoding::Fast } else { driver::Decoding::All };
    let mut number = 0u64;
    let stop = crate::signals::stop_flag().unwrap_or_else(|| Arc::new(AtomicBool::new(false)));
    let end = driver::pump(
        &mut opened,
        &source,
        &opts,
        decoding,
        &stop,
        |rec, packet, common| {
            number = rec.number_after(number);
            match (common, packet) {
                (Some(c), _) => analyzer.push_common_record(number, rec, c),
                (None, Some(p)) => analyzer.push_frame(number, rec, p, &opts),
                (None, None) => {}
            }
            Ok(Flow::Continue)
        },
        |_| Flow::Continue,
    )?;
    opened.clear_progress();
    if end.interrupted || crate::signals::received().is_some() {
        return Err(crate::signals::Interrupted(
            crate::signals::received().unwrap_or(signal_hook::consts::SIGINT),
        )
        .into());
    }
    if let Some(e) = end.source_error {
        // A gate must not pass on half a capture.
        anyhow::bail!("{e}: a damaged capture is not compared");
    }
    analyzer.finish();
    // The report as `report` builds it, with `--nccl-env`'s check (its section and its
    // findings, which reach the comparison's FINDINGS table as every kind does).
    // Streamed, as `report --json` writes it: one flow's entry at a time.
    let mut report = analyzer.report_streamed();
    report.report.input_errors = end.errors;
    report.report.summary.window = end.window;
    if let Some((input, host)) = counters {
        crate::report_cmd::add_counters(&mut report, input, host);
    }
    if let Some((env, file)) = nccl {
        crate::report_cmd::add_nccl(&mut report, env, file);
    }
    let facts = ReportFacts::from_serialize(&report).map_err(|e| anyhow::anyhow!(e))?;
    Ok((facts, end.span.map(|(first, last)| (end.frames, first, last))))
}
