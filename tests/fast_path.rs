//! The fast path (issue 28): common RoCEv2 frames classified at fixed offsets
//! (`rocescope_decoder::fast`) and fed with `Analyzer::push_common_record` give exactly the
//! report the full decode gives, over every bundled sample and every real capture, with the
//! default settings and with an audit, a DSCP trust mode and no ICRC check.

mod common;

use rocescope_analyzer::audit::{AuditConfig, Trust};
use rocescope_analyzer::{Analyzer, Config};
use rocescope_capture::CaptureReader;
use rocescope_decoder::{decode, fast, DecodeOptions};
use std::path::Path;

/// The report of `path` read through the full decoder, and through the fast path wherever
/// it classifies the frame; and how many frames took the fast path.
fn both(path: &Path, cfg: &Config, opts: &DecodeOptions) -> (serde_json::Value, serde_json::Value, u64) {
    let mut full = Analyzer::new(cfg.clone());
    let mut mixed = Analyzer::new(cfg.clone());
    assert!(mixed.takes_common(opts));
    let mut r = CaptureReader::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let (mut n, mut fast_frames) = (0, 0);
    while let Some(rec) = r.next_record().unwrap_or_else(|e| panic!("{}: {e}", path.display())) {
        n = rec.number_after(n);
        let p = decode(rec.link_type, rec.data, opts);
        full.push_frame(n, &rec, &p, opts);
        match fast::classify(rec.link_type, rec.data, opts) {
            Some(c) => {
                fast_frames += 1;
                mixed.push_common_record(n, &rec, &c);
            }
            None => mixed.push_frame(n, &rec, &p, opts),
        }
    }
    full.finish();
    mixed.finish();
    let json = |a: &Analyzer| serde_json::to_value(a.report()).unwrap();
    (json(&full), json(&mixed), fast_frames)
}

fn settings() -> Vec<(Config, DecodeOptions)> {
    let audit = AuditConfig {
        roce_dscp: Some(vec![26]),
        cnp_dscp: Some(vec![48]),
        roce_pcp: Some(3),
        lossless_priorities: Some(vec![3]),
        ecn_capable: true,
        trust: Trust::Dscp,
        ..AuditConfig::default()
    };
    vec![
        (Config::default(), DecodeOptions::default()),
        (
            Config { audit, ..Config::default() },
            DecodeOptions { check_icrc: false, ..DecodeOptions::default() },
        ),
    ]
}

fn check_all(files: &[std::path::PathBuf]) -> u64 {
    let mut fast_frames = 0;
    for (cfg, opts) in settings() {
        for f in files {
            let (full, mixed, n) = both(f, &cfg, &opts);
            assert!(full == mixed, "{}: the fast path's report differs from the full decode's", f.display());
            fast_frames += n;
        }
    }
    fast_frames
}

#[test]
fn every_sample_gives_the_full_decodes_report() {
    let files = common::pcaps_under(&common::root().join("samples"));
    assert!(files.len() > 40, "{}", files.len());
    let fast_frames = check_all(&files);
    assert!(fast_frames > 1000, "the samples exercise the fast path: {fast_frames} frames");
}

#[test]
fn every_real_capture_gives_the_full_decodes_report() {
    let Some(dir) = common::real_captures() else { return };
    let fast_frames = check_all(&common::captures_in(&dir));
    assert!(fast_frames > 1000, "the real captures exercise the fast path: {fast_frames} frames");
}
