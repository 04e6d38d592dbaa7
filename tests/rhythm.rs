//! The training iteration's rhythm and its stragglers (issue 29; docs/verdicts.md
//! "Iteration rhythm and stragglers"), end to end: the sample built for it, and the real
//! captures, which hold no training job and must get no rhythm verdict.

mod common;

use serde_json::Value;
use std::path::Path;
use std::process::Command;

fn report(path: &Path, extra: &[&str]) -> (Value, String) {
    let run = |args: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_rocescope"))
            .arg("report")
            .args(args)
            .arg("-r")
            .arg(path)
            .args(extra)
            .output()
            .expect("run rocescope");
        assert!(o.status.code().is_some_and(|c| c == 0 || c == 4), "{}", String::from_utf8_lossy(&o.stderr));
        o.stdout
    };
    (common::report_json(&run(&["--json"])), String::from_utf8_lossy(&run(&[])).into_owned())
}

#[test]
fn a_synchronised_job_shows_its_period_and_its_straggler() {
    let (r, text) = report(&common::root().join("samples/rhythm-straggler.pcap"), &[]);
    let rh = &r["rhythm"][0];
    // Built: an iteration every 10 ms (a few µs of jitter), six hosts, eight bursts of which
    // six fall in whole windows inside the capture.
    let period = rh["period_ns"].as_i64().unwrap();
    assert!((period - 10_000_000).abs() < 100_000, "{period}");
    assert_eq!((rh["iterations"].as_u64(), rh["hosts"].as_u64()), (Some(6), Some(6)), "{rh:#}");
    assert!(rh["strength"].as_f64().unwrap() > 0.8, "{rh:#}");
    // The slow host's 60 packets 80 µs apart: a 4.7 ms busy part, 47% of the period.
    let busy = rh["busy_ns_median"].as_i64().unwrap();
    assert!((4_600_000..=4_900_000).contains(&busy), "{busy}");
    assert_eq!(rh["herd"], false);
    assert_eq!((rh["ce_at_start"].clone(), rh["pause_at_start"].clone()), (Value::Null, Value::Null));
    // 10.0.0.66 ends last every time, 3 ms after the others (their 60 packets 30 µs apart).
    for it in rh["iteration_list"].as_array().unwrap() {
        assert_eq!(it["last_host"], "10.0.0.66", "{it:#}");
        let m = it["margin_ns"].as_i64().unwrap();
        assert!((2_900_000..=3_100_000).contains(&m), "{m}");
        assert_eq!(r["flows"][it["last_flow"].as_u64().unwrap() as usize]["dest_qp"], 0x605);
    }
    let s = &rh["stragglers"];
    assert_eq!(s.as_array().map(Vec::len), Some(1), "{s:#}");
    assert_eq!(
        (s[0]["host"].as_str(), s[0]["last_in"].as_u64(), s[0]["of"].as_u64()),
        (Some("10.0.0.66"), Some(6), Some(6))
    );
    assert_eq!(s[0]["verdict"], true);
    // The finding names the host and its QP, and the frames that ended its iterations.
    let f: Vec<&Value> =
        r["findings"].as_array().unwrap().iter().filter(|f| f["kind"] == "straggler").collect();
    assert_eq!(f.len(), 1);
    let title = f[0]["title"].as_str().unwrap();
    assert!(
        title.contains("host 10.0.0.66") && title.contains("6 of 6") && title.contains("0x000605"),
        "{title}"
    );
    assert_eq!(f[0]["evidence"].as_array().map(Vec::len), Some(3));
    // The text report's ITERATIONS section says the same.
    assert!(text.contains("ITERATIONS"), "{text}");
    assert!(
        text.contains("one every 10.0 ms") && text.contains("last to finish: 10.0.0.66 in 6 of 6"),
        "{text}"
    );
}

/// One peak computation: an iteration's peak rests on bins as wide as the timeline's, and is
/// never above the timeline's busiest bin at the point, at any `--bin`.
#[test]
fn the_rhythm_peak_never_exceeds_the_timeline_peak() {
    for bin in ["10ms", "1ms", "10us"] {
        let (r, _) = report(&common::root().join("samples/rhythm-straggler.pcap"), &["--bin", bin]);
        let rh = &r["rhythm"][0];
        let point = &r["timeline"]["points"][0];
        let bound: f64 =
            point["priorities"].as_array().unwrap().iter().map(|p| p["peak"]["gbps"].as_f64().unwrap()).sum();
        let peak = rh["peak_gbps"].as_f64().unwrap();
        assert!(peak > 0.0 && peak <= bound + 1e-9, "--bin {bin}: rhythm {peak} over the timeline's {bound}");
        for it in rh["iteration_list"].as_array().unwrap() {
            assert!(it["peak_gbps"].as_f64().unwrap() <= peak + 1e-9, "{it}");
        }
    }
}

#[test]
fn the_rhythm_is_the_same_on_any_number_of_threads() {
    let path = common::root().join("samples/rhythm-straggler.pcap");
    let (one, _) = report(&path, &["--threads", "1"]);
    for t in ["2", "3"] {
        let (r, _) = report(&path, &["--threads", t]);
        assert_eq!(r["rhythm"], one["rhythm"], "{t} threads");
    }
}

#[test]
fn no_real_capture_gets_a_straggler() {
    let Some(dir) = common::real_captures() else { return };
    for p in common::captures_in(&dir) {
        let (r, _) = report(&p, &[]);
        let kinds: Vec<&str> =
            r["findings"].as_array().unwrap().iter().filter_map(|f| f["kind"].as_str()).collect();
        assert!(!kinds.contains(&"straggler"), "{}", p.display());
    }
}
