//! `rocescope compare`: the before-and-after pairs in `samples/compare/` give exactly the
//! verdicts and gate statuses their generator worked out; report-JSON and Parquet sides give
//! the same answer as the captures; a capture against itself is no change; a side that
//! cannot be read is status 1, a bad command line status 2; the text fits 100 columns; the
//! JSON matches docs/compare.schema.json.

mod common;

/// The gate's status (README "Exit status": the same as report's).
const GATE: i32 = 4;
/// Nothing to compare.
const NOTHING: i32 = 5;

use serde_json::Value;
use std::path::PathBuf;
use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rocescope")).args(args).output().expect("run rocescope")
}

fn dir() -> PathBuf {
    common::root().join("samples/compare")
}

fn path(name: &str) -> String {
    dir().join(name).to_str().unwrap().to_string()
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `compare --json` of two sides (and options): the document and the exit status.
fn compare(sides: &[&str], extra: &[&str]) -> (Value, Option<i32>) {
    let mut args = vec!["compare", "--json"];
    args.extend_from_slice(sides);
    args.extend_from_slice(extra);
    let o = run(&args);
    assert!(!o.stdout.is_empty(), "{args:?}: {}", err(&o));
    (common::compare_json(&o.stdout), o.status.code())
}

/// (severity, kind, priority, title) of every verdict, in order.
fn verdicts(doc: &Value) -> Vec<(String, String, Option<u64>, String)> {
    doc["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            (
                v["severity"].as_str().unwrap().to_string(),
                v["kind"].as_str().unwrap().to_string(),
                v["priority"].as_u64(),
                v["title"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// Every `NAME.expected.json` of samples/compare that is not one side's own, by name.
fn comparisons() -> Vec<(String, Value)> {
    let mut v: Vec<(String, Value)> = std::fs::read_dir(dir())
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter_map(|p| {
            let n = p.file_name()?.to_str()?.strip_suffix(".expected.json")?.to_string();
            (!n.ends_with("-before") && !n.ends_with("-after")).then_some(n)
        })
        .map(|n| {
            let e: Value =
                serde_json::from_slice(&std::fs::read(dir().join(format!("{n}.expected.json"))).unwrap())
                    .unwrap();
            (n, e)
        })
        .collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

/// The pairs and what their generator says `compare` must find.
fn pairs() -> Vec<(String, Value)> {
    comparisons().into_iter().filter(|(_, e)| e.get("split").is_none()).collect()
}

/// The captures with a change inside them (`compare --split-at`): the capture, and what its
/// generator says the split must find (its `split` object: `at`, `verdicts`, `runs`).
fn splits() -> Vec<(String, Value)> {
    comparisons()
        .into_iter()
        .filter_map(|(_, e)| Some((path(e["file"].as_str()?), e.get("split")?.clone())))
        .collect()
}

fn check_verdicts(name: &str, doc: &Value, want: &Value) {
    check_verdicts_but(name, doc, want, &[]);
}

/// As [`check_verdicts`], leaving out the verdicts of the kinds in `skip` on both sides.
fn check_verdicts_but(name: &str, doc: &Value, want: &Value, skip: &[&str]) {
    let got: Vec<_> = verdicts(doc).into_iter().filter(|v| !skip.contains(&v.1.as_str())).collect();
    let want: Vec<&Value> = want["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| !skip.contains(&w["kind"].as_str().unwrap()))
        .collect();
    assert_eq!(got.len(), want.len(), "{name}: {got:#?}");
    for ((sev, kind, prio, title), w) in got.iter().zip(want) {
        assert_eq!(sev, w["severity"].as_str().unwrap(), "{name}: {title}");
        assert_eq!(kind, w["kind"].as_str().unwrap(), "{name}: {title}");
        assert_eq!(*prio, w["priority"].as_u64(), "{name}: {title}");
        for part in w["title_has"].as_array().unwrap() {
            assert!(title.contains(part.as_str().unwrap()), "{name}: {title:?} lacks {part}");
        }
    }
    // Worst first.
    let rank = |s: &str| ["critical", "warning", "info"].iter().position(|x| *x == s).unwrap();
    assert!(got.windows(2).all(|w| rank(&w[0].0) <= rank(&w[1].0)), "{name}: {got:#?}");
}

/// The options a pair is compared with (its expectations), and the status it gives (the
/// gate fails, 5, unless the pair says otherwise).
fn pair_args(want: &Value) -> (Vec<String>, i32) {
    let args = want["args"]
        .as_array()
        .map(|a| a.iter().map(|x| x.as_str().unwrap().to_string()).collect())
        .unwrap_or_default();
    (args, want["exit"].as_i64().unwrap_or(i64::from(GATE)) as i32)
}

#[test]
fn the_samples_give_the_verdicts_and_statuses_their_generator_worked_out() {
    let pairs = pairs();
    assert_eq!(
        pairs.iter().map(|p| p.0.as_str()).collect::<Vec<_>>(),
        [
            "acks-marked",
            "class-emptied",
            "dscp-remark",
            "ecn-off",
            "few-acks",
            "icrc-errors",
            "latency-rose",
            "no-roce",
            "roce-gone",
            "rocev1",
            "rollback"
        ]
    );
    assert_eq!(
        comparisons()
            .iter()
            .map(|p| p.0.as_str())
            .filter(|n| !pairs.iter().any(|p| p.0 == *n))
            .collect::<Vec<_>>(),
        ["split-change"]
    );
    for (name, want) in &pairs {
        let (b, a) = (path(want["before"].as_str().unwrap()), path(want["after"].as_str().unwrap()));
        let (args, exit) = pair_args(want);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (doc, code) = compare(&[&b, &a], &args);
        check_verdicts(name, &doc, want);
        assert_eq!(code, Some(exit), "{name}: the default gate");
        assert_eq!(doc["gate"]["failed"], exit == GATE, "{name}");
        assert_eq!(doc["gate"]["nothing_to_compare"], exit == NOTHING, "{name}");
        assert_eq!(doc["nothing_to_compare"], exit == NOTHING, "{name}");
        assert_eq!(doc["gate"]["exit"], exit);
        for r in want["runs"].as_array().unwrap() {
            let args: Vec<&str> = r["args"].as_array().unwrap().iter().map(|a| a.as_str().unwrap()).collect();
            let (sides, extra): (Vec<&str>, Vec<&str>) =
                if args == ["SAME"] { (vec![&b, &b], vec![]) } else { (vec![&b, &a], args.clone()) };
            let (doc, code) = compare(&sides, &extra);
            assert_eq!(code, r["exit"].as_i64().map(|x| x as i32), "{name} {}: {doc:#}", r["about"]);
            if args == ["SAME"] {
                assert!(doc["verdicts"].as_array().unwrap().is_empty(), "{name}: {doc:#}");
                assert_eq!(doc["changes_beyond_noise"], 0);
            }
        }
    }
}

/// The ECN-off pair in detail: the rows the verdict rests on, each beyond noise.
#[test]
fn ecn_off_rows_and_their_noise() {
    let (doc, _) = compare(&[&path("ecn-off-before.pcap"), &path("ecn-off-after.pcap")], &[]);
    let p = &doc["points"][0];
    assert_eq!(p["name"], "ecn-off-after.pcap");
    assert_eq!(p["before_name"], "ecn-off-before.pcap");
    let prio3 = p["priorities"].as_array().unwrap().iter().find(|x| x["priority"] == 3).unwrap();
    assert_eq!(prio3["sides"], "both");
    let row = |m: &str| prio3["rows"].as_array().unwrap().iter().find(|r| r["metric"] == m).unwrap().clone();
    let ce = row("ce_fraction");
    // One data packet in 20 marked before (1200 data packets, 60 marks), none after; the
    // fraction is of the data packets, as the data ECN row beside it (CE 5.0%), not of the
    // 2,400 RoCE packets the ACKs share the priority with (issue 41: it read 2.5%).
    assert_eq!(ce["after"], 0.0);
    // The per-packet marks name each value's flows: the 3 data flows at DSCP 26 untagged,
    // the 3 flows that carry the CNPs (with their QPs' ACKs) at DSCP 48.
    for (class, dscp) in [("data", 26), ("ack", 26), ("cnp", 48)] {
        let m = &p[class]["before"];
        assert_eq!(m["dscp"][0]["values"], serde_json::json!([dscp]), "{class}");
        assert_eq!(
            (m["dscp"][0]["flows"].as_u64(), m["pcp"][0]["flows"].as_u64()),
            (Some(3), Some(3)),
            "{class}"
        );
    }
    let data_ecn = p["data"]["before"]["ecn"].as_array().unwrap();
    let ecn_total: u64 = data_ecn.iter().map(|n| n.as_u64().unwrap()).sum();
    let row_ce = data_ecn[3].as_u64().unwrap() as f64 / ecn_total as f64;
    assert!((ce["before"].as_f64().unwrap() - 60.0 / 1200.0).abs() < 1e-9, "{ce}");
    assert!((ce["before"].as_f64().unwrap() - row_ce).abs() < 1e-9, "{ce} vs the data ECN row {row_ce}");
    assert_eq!(ce["beyond_noise"], true);
    assert_eq!(ce["noise"], "wilson");
    let pause = row("pause_us_per_s");
    assert_eq!(pause["beyond_noise"], true);
    assert!(pause["ratio"].as_f64().unwrap() > 100.0, "{pause}");
    let cnps = row("cnps_per_s");
    assert_eq!((cnps["after"].as_f64(), cnps["beyond_noise"].as_bool()), (Some(0.0), Some(true)));
    assert_eq!(row("loss_per_million")["change"], 0.0);
    // The data's marks: DSCP 26 on both sides, ECT(0) and CE before, ECT(0) only after.
    assert_eq!(p["data"]["before"]["dscp"][0]["values"], serde_json::json!([26]));
    assert_eq!(p["data"]["after"]["dscp"][0]["values"], serde_json::json!([26]));
    assert_eq!(p["data"]["after"]["ecn"][3], 0);
    assert_eq!(p["data"]["before"]["ecn"][3], 60);
    assert_eq!(p["cnp"]["after"]["packets"], 0);
    // Priority 3 carries no CNPs itself (they travel on DSCP 48): no carried row there.
    assert!(prio3["rows"].as_array().unwrap().iter().all(|r| r["metric"] != "cnps_carried_per_s"));
    // Priority 6 carries only the CNPs (60 in 0.06 s before): it says what it carries and
    // has no data rows that would read as zeros ("QPs sending data 0", "CNPs per second 0.0").
    let prio6 = p["priorities"].as_array().unwrap().iter().find(|x| x["priority"] == 6).unwrap();
    let rows6 = prio6["rows"].as_array().unwrap();
    let r6 = |m: &str| rows6.iter().find(|r| r["metric"] == m).unwrap().clone();
    let carried = r6("cnps_carried_per_s");
    assert!((carried["before"].as_f64().unwrap() - 1000.0).abs() < 10.0, "{carried}");
    assert_eq!(carried["after"], Value::Null);
    for m in ["ce_fraction", "cnps_per_s", "timeouts", "qps"] {
        assert_eq!((r6(m)["before"].clone(), r6(m)["after"].clone()), (Value::Null, Value::Null), "{m}");
    }
    let text = run(&["compare", &path("ecn-off-before.pcap"), &path("ecn-off-after.pcap")]).stdout;
    let text = String::from_utf8(text).unwrap();
    let six = &text[text.find("  priority 6 (").unwrap()..text.find("  marks").unwrap()];
    assert!(six.contains("CNPs carried per second") && six.contains("1002"), "{six}");
    assert!(!six.contains("QPs sending data") && !six.contains("CNPs per second"), "{six}");
    assert!(text.contains("CE fraction (data)              5.000%"), "{text}");
}

/// The latency rows of priority `prio` at the first point: metric -> row.
fn latency_rows(doc: &Value, prio: u64) -> Vec<Value> {
    let p =
        doc["points"][0]["priorities"].as_array().unwrap().iter().find(|x| x["priority"] == prio).unwrap();
    p["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["metric"].as_str().unwrap().contains("_p"))
        .cloned()
        .collect()
}

fn row<'a>(rows: &'a [Value], metric: &str) -> &'a Value {
    rows.iter().find(|r| r["metric"] == metric).unwrap()
}

/// ACK latency samples a capture's flows recorded (their summaries' counts).
fn ack_samples(capture: &str) -> u64 {
    let r = common::report_json(&run(&["report", "--json", "-r", capture]).stdout);
    r["flows"].as_array().unwrap().iter().filter_map(|f| f["latency"]["ack"]["count"].as_u64()).sum()
}

/// The few-ACKs pair: each latency row judged on the pooled samples, with its interval and
/// samples, within noise; the same reports without their samples (an older rocescope's
/// documents) show the flows' summaries pooled, about doubled, and judge nothing.
#[test]
fn few_acks_per_qp_are_no_latency_verdict() {
    let (b, a) = (path("few-acks-before.pcap"), path("few-acks-after.pcap"));
    let (doc, code) = compare(&[&b, &a], &["--fail-on", "latency-rise=1"]);
    assert_eq!(code, Some(0), "{doc:#}");
    assert!(verdicts(&doc).is_empty(), "{:?}", verdicts(&doc));
    let rows = latency_rows(&doc, 3);
    let p50 = row(&rows, "ack_p50_ns");
    assert_eq!(
        (p50["noise"].as_str(), p50["beyond_noise"].as_bool()),
        (Some("samples"), Some(false)),
        "{p50}"
    );
    assert_eq!(p50["before_samples"].as_u64(), Some(ack_samples(&b)));
    assert_eq!(p50["after_samples"].as_u64(), Some(ack_samples(&a)));
    let (ib, ia) = (&p50["before_interval"], &p50["after_interval"]);
    for (i, v) in [(ib, &p50["before"]), (ia, &p50["after"])] {
        assert!(i["lo"].as_f64() <= v.as_f64() && v.as_f64() <= i["hi"].as_f64(), "{p50}");
    }
    assert!(ib["hi"].as_f64() >= ia["lo"].as_f64() && ia["hi"].as_f64() >= ib["lo"].as_f64(), "{p50}");
    // Fewer than 400 samples a side: no interval for a 99th percentile, not judged.
    let p99 = row(&rows, "ack_p99_ns");
    assert!(p99["before_samples"].as_u64().unwrap() < 400 && p99.get("before_interval").is_none(), "{p99}");
    assert_eq!(p99["beyond_noise"], Value::Null);
    // An older document has no `latency_samples`: the flows' medians pooled (what compare
    // used to judge), far apart, and not judged.
    let tmp = tempfile::tempdir().unwrap();
    let mut old = Vec::new();
    for f in [&b, &a] {
        let mut r = common::report_json(&run(&["report", "--json", "-r", f]).stdout);
        assert!(r["latency_samples"].as_array().is_some_and(|v| !v.is_empty()));
        r.as_object_mut().unwrap().remove("latency_samples");
        let p = tmp.path().join(format!("{}.json", old.len()));
        std::fs::write(&p, serde_json::to_vec(&r).unwrap()).unwrap();
        old.push(p.to_str().unwrap().to_string());
    }
    let (doc, code) = compare(&[&old[0], &old[1]], &["--fail-on", "latency-rise=1"]);
    assert_eq!(code, Some(0), "{doc:#}");
    let rows = latency_rows(&doc, 3);
    let p50 = row(&rows, "ack_p50_ns");
    assert_eq!((p50["noise"].as_str(), &p50["beyond_noise"]), (Some("summaries"), &Value::Null), "{p50}");
    assert!(p50["ratio"].as_f64().unwrap() > 1.5, "the summaries' medians, about doubled: {p50}");
    let o = run(&["compare", &old[0], &old[1]]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("no samples: not judged"));
}

/// The latency-rose pair: a real shift over 1,200 ACKs a side is beyond noise on both
/// percentiles, the intervals far apart; a Parquet side holds no samples and judges none.
#[test]
fn a_real_latency_rise_is_a_verdict() {
    let (b, a) = (path("latency-rose-before.pcap"), path("latency-rose-after.pcap"));
    let (doc, code) = compare(&[&b, &a], &[]);
    assert_eq!(code, Some(GATE));
    let rows = latency_rows(&doc, 3);
    for m in ["ack_p50_ns", "ack_p99_ns"] {
        let r = row(&rows, m);
        assert_eq!((r["noise"].as_str(), r["beyond_noise"].as_bool()), (Some("samples"), Some(true)), "{r}");
        assert_eq!((r["before_samples"].as_u64(), r["after_samples"].as_u64()), (Some(1200), Some(1200)));
        assert!(
            r["before_interval"]["hi"].as_f64().unwrap() * 3.0 < r["after_interval"]["lo"].as_f64().unwrap(),
            "{r}"
        );
        let ratio = r["ratio"].as_f64().unwrap();
        assert!((3.5..4.5).contains(&ratio), "{r}");
    }
    // No READs: their rows have no figure.
    assert_eq!(row(&rows, "read_p50_ns")["before"], Value::Null);
    let tmp = tempfile::tempdir().unwrap();
    let pq = tmp.path().join("after.parquet");
    let o = run(&["report", "-q", "-r", &a, "--parquet", pq.to_str().unwrap()]);
    assert!(matches!(o.status.code(), Some(0 | 3)), "{}", err(&o));
    let (doc, code) = compare(&[&b, pq.to_str().unwrap()], &[]);
    assert_eq!(code, Some(0), "{:?}", verdicts(&doc));
    let r = row(&latency_rows(&doc, 3), "ack_p50_ns").clone();
    assert_eq!((r["noise"].as_str(), &r["beyond_noise"]), (Some("summaries"), &Value::Null), "{r}");
}

/// The three Mellanox captures of the same hosts and workload (shared/real-captures: 16 QPs
/// a direction, 2 to 8 ACKs each, latency climbing through a 1.2 ms burst) in their 6
/// ordered pairs: no latency verdict. Judged on the flows' summaries, 4 of the 6 failed the
/// gate on "ACK latency p50 doubled".
#[test]
fn the_mellanox_captures_of_one_workload_give_no_latency_verdict() {
    let Some(d) = common::real_captures() else { return };
    let files: Vec<String> = ["rocev2_test.pcap", "rocev2-2_test.pcap", "rocev1_test.pcap"]
        .iter()
        .map(|f| d.join(f).to_str().unwrap().to_string())
        .collect();
    let mut judged = 0;
    for b in &files {
        for a in files.iter().filter(|a| *a != b) {
            let (doc, _) = compare(&[b, a], &[]);
            let lat: Vec<_> = verdicts(&doc).into_iter().filter(|v| v.1.starts_with("latency")).collect();
            assert!(lat.is_empty(), "{b} {a}: {lat:?}");
            for prio in [0, 3] {
                let rows = latency_rows(&doc, prio);
                let p50 = row(&rows, "ack_p50_ns");
                assert_eq!(p50["noise"], "samples", "{b} {a}: {p50}");
                assert_eq!(p50["beyond_noise"], false, "{b} {a}: {p50}");
                judged += 1;
            }
        }
    }
    assert_eq!(judged, 12);
}

/// Each side as a `report --json` document or a `report --parquet` directory gives the
/// captures' answer: the same verdicts and exit status.
#[test]
fn report_json_and_parquet_sides_give_the_captures_answer() {
    let tmp = tempfile::tempdir().unwrap();
    for (name, want) in pairs() {
        let mut sides = Vec::new();
        // Each side's report made with the pair's options (its expectations): like with like.
        let (pair, _) = pair_args(&want);
        for f in [want["before"].as_str().unwrap(), want["after"].as_str().unwrap()] {
            let mut report = vec!["report", "--json", "-r"];
            let file = path(f);
            report.push(&file);
            report.extend(pair.iter().map(String::as_str));
            let o = run(&report);
            assert!(matches!(o.status.code(), Some(0 | 3)), "{}", err(&o));
            let json = tmp.path().join(format!("{f}.json"));
            std::fs::write(&json, &o.stdout).unwrap();
            let pq = tmp.path().join(format!("{f}.parquet"));
            let o = run(&["report", "-q", "-r", &path(f), "--parquet", pq.to_str().unwrap()]);
            assert!(matches!(o.status.code(), Some(0 | 3)), "{}", err(&o));
            sides.push((path(f), json.to_str().unwrap().to_string(), pq.to_str().unwrap().to_string()));
        }
        let (b, a) = (&sides[0], &sides[1]);
        let (args, _) = pair_args(&want);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (base, code) = compare(&[&b.0, &a.0], &args);
        for (bs, as_) in [(&b.1, &a.1), (&b.2, &a.2), (&b.0, &a.1), (&b.2, &a.0)] {
            let (doc, c) = compare(&[bs, as_], &args);
            // A Parquet directory holds no findings and no latency samples: their verdicts
            // need a report on both sides.
            let skip: &[&str] = if bs.ends_with(".parquet") || as_.ends_with(".parquet") {
                &["finding_rose", "latency_rose", "latency_fell"]
            } else {
                &[]
            };
            let but = |d: &Value| {
                verdicts(d).into_iter().filter(|v| !skip.contains(&v.1.as_str())).collect::<Vec<_>>()
            };
            assert_eq!(but(&doc), but(&base), "{name}: {bs} {as_}");
            check_verdicts_but(&name, &doc, &want, skip);
            if !verdicts(&base).iter().any(|v| skip.contains(&v.1.as_str())) {
                assert_eq!(c, code, "{name}: {bs} {as_}");
            }
        }
        let (doc, _) = compare(&[&b.1, &a.2], &[]);
        assert_eq!(doc["before"]["kind"], "report_json");
        assert_eq!(doc["after"]["kind"], "parquet");
        // A capture, its report and its tables against each other: no change (nothing to
        // compare without RoCE).
        for (x, y) in [(&b.0, &b.1), (&b.0, &b.2), (&b.1, &b.2)] {
            let (doc, c) = compare(&[x, y], &args);
            let want = if doc["nothing_to_compare"] == true { NOTHING } else { 0 };
            assert_eq!(c, Some(want), "{name}: {x} {y}: {doc:#}");
            assert!(doc["verdicts"].as_array().unwrap().is_empty(), "{name}: {x} {y}");
        }
    }
}

/// Every sample and every real capture against itself: no change, status 0; the ones
/// without RoCE (a capture of pauses only, an undecoded tunnel, native InfiniBand) are
/// nothing to compare, status 5.
#[test]
fn a_capture_against_itself_is_no_change() {
    let mut files = common::pcaps_under(&common::root().join("samples"));
    if let Some(d) = common::real_captures() {
        files.extend(common::captures_in(&d));
    }
    assert!(files.len() > 40);
    for f in &files {
        let f = f.to_str().unwrap();
        let o = run(&["compare", "--json", f, f]);
        let doc = common::compare_json(&o.stdout);
        let nothing = doc["nothing_to_compare"] == true;
        assert_eq!(o.status.code(), Some(if nothing { NOTHING } else { 0 }), "{f}: {}", err(&o));
        if nothing {
            let r = common::report_json(&run(&["report", "--json", "-r", f]).stdout);
            assert_eq!(r["summary"]["roce"], 0, "{f}");
            // Of the real captures, only the two native InfiniBand ones (ERF, not RoCE) and
            // LLDP's PFC configuration hold no RoCE.
            let known = if f.contains("/samples/") {
                &["no-roce", "roce-gone-after.pcap", "unknown-gre.pcap"][..]
            } else {
                &["/ib2.pcap", "/infiniband.pcap", "/dcb_pfc.pcap"][..]
            };
            assert!(known.iter().any(|k| f.contains(k)), "{f}");
        }
        assert!(doc["verdicts"].as_array().unwrap().is_empty(), "{f}: {doc:#}");
        assert!(doc["unmatched"].as_array().unwrap().is_empty(), "{f}");
        assert_eq!(doc["changes_beyond_noise"], 0, "{f}");
    }
}

#[test]
fn thresholds_and_levels_move_the_gate() {
    let (b, a) = (path("ecn-off-before.pcap"), path("ecn-off-after.pcap"));
    // The 30% fall is a verdict at the default 20%, not at 50%.
    let (doc, code) = compare(&[&b, &a], &["--fail-on", "throughput-drop=50%"]);
    assert!(!verdicts(&doc).iter().any(|v| v.1 == "throughput_fell"), "{doc:#}");
    assert_eq!(code, Some(GATE), "the ECN verdict still fails it");
    assert_eq!(doc["limits"]["throughput_drop"], 0.5);
    // Paused time must rise 1000 times for the ECN verdict to say so: then it is a warning.
    let (doc, code) = compare(&[&b, &a], &["--fail-on", "critical,congestion-rise=1000"]);
    let v = verdicts(&doc);
    assert_eq!(v[0].0, "warning", "{v:#?}");
    assert!(v[0].3.contains("ECN may be off on the switch, or the congestion went away"), "{v:#?}");
    assert_eq!(code, Some(0), "no CRITICAL verdict: --fail-on critical passes");
    let (_, code) = compare(&[&b, &a], &["--fail-on", "info"]);
    assert_eq!(code, Some(GATE));
}

#[test]
fn several_files_a_side_pair_points_by_name_and_say_what_is_on_one_side() {
    let s = common::root().join("samples/two-points-sender.pcap");
    let r = common::root().join("samples/two-points-receiver.pcap");
    let (s, r) = (s.to_str().unwrap(), r.to_str().unwrap());
    let (doc, code) = compare(&["--before", s, r, "--after", r, s], &[]);
    assert_eq!(code, Some(0), "{doc:#}");
    assert_eq!(doc["points"].as_array().unwrap().len(), 2);
    assert_eq!(
        doc["before"]["points"],
        serde_json::json!(["two-points-sender.pcap", "two-points-receiver.pcap"])
    );
    // The receiver's capture missing after: said, and a warning.
    let (doc, code) = compare(&["--before", s, r, "--after", s], &[]);
    assert_eq!(code, Some(GATE), "{doc:#}");
    let u = &doc["unmatched"][0];
    assert_eq!((u["side"].as_str(), u["point"].as_str()), (Some("before"), Some("two-points-receiver.pcap")));
    let v = verdicts(&doc);
    assert!(
        v.iter()
            .any(|x| x.1 == "point_one_side" && x.3.contains("two-points-receiver.pcap is only in BEFORE")),
        "{v:#?}"
    );
}

#[test]
fn a_side_that_cannot_be_read_is_status_1_and_says_which() {
    let tmp = tempfile::tempdir().unwrap();
    let good = path("ecn-off-before.pcap");
    let missing = tmp.path().join("nope.pcap");
    let o = run(&["compare", &good, missing.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(err(&o).contains("AFTER") && err(&o).contains("nope.pcap"), "{}", err(&o));
    assert!(o.stdout.is_empty());
    let junk = tmp.path().join("junk.pcap");
    std::fs::write(&junk, b"this is not a capture at all, only text").unwrap();
    let o = run(&["compare", junk.to_str().unwrap(), &good]);
    assert_eq!(o.status.code(), Some(1));
    assert!(err(&o).contains("BEFORE"), "{}", err(&o));
    // A JSON document that is not a report.
    let other = tmp.path().join("other.json");
    std::fs::write(&other, br#"{"hello": 1}"#).unwrap();
    let o = run(&["compare", &good, other.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(err(&o).contains("not a rocescope report"), "{}", err(&o));
    // A capture cut short: not compared (a gate must not pass on half a capture).
    let bytes = std::fs::read(&good).unwrap();
    let cut = tmp.path().join("cut.pcap");
    std::fs::write(&cut, &bytes[..bytes.len() / 2 + 7]).unwrap();
    let o = run(&["compare", cut.to_str().unwrap(), &good]);
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    assert!(err(&o).contains("not compared"), "{}", err(&o));
    // A directory with no tables.
    let o = run(&["compare", tmp.path().to_str().unwrap(), &good]);
    assert_eq!(o.status.code(), Some(1));
    assert!(err(&o).contains("no flows-*.parquet"), "{}", err(&o));
}

#[test]
fn usage_errors_are_status_2() {
    let good = path("ecn-off-before.pcap");
    for args in [
        vec!["compare", good.as_str()],
        vec!["compare", good.as_str(), good.as_str(), good.as_str()],
        vec!["compare", good.as_str(), good.as_str(), "--fail-on", "sometimes"],
        vec!["compare", good.as_str(), good.as_str(), "--fail-on", "latency-rise=0.5"],
        vec!["compare", good.as_str(), good.as_str(), "--fail-on", "speed=3"],
        vec!["compare", "--before", good.as_str()],
        vec!["compare", good.as_str(), good.as_str(), "--before", good.as_str(), "--after", good.as_str()],
    ] {
        let o = run(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", err(&o));
        assert!(!err(&o).is_empty());
    }
    let o = run(&["compare", "--help"]);
    let help = String::from_utf8_lossy(&o.stdout);
    assert!(
        help.contains("Exit status (the same in every command") && help.contains("4        the gate"),
        "{help}"
    );
}

#[test]
fn the_text_fits_100_columns_and_quiet_prints_nothing() {
    for (b, a) in
        [("ecn-off-before.pcap", "ecn-off-after.pcap"), ("dscp-remark-before.pcap", "dscp-remark-after.pcap")]
    {
        let o = run(&["compare", &path(b), &path(a)]);
        assert_eq!(o.status.code(), Some(GATE));
        let text = String::from_utf8(o.stdout).unwrap();
        assert!(text.contains("VERDICTS") && text.contains("POINT"), "{text}");
        for line in text.lines() {
            assert!(line.chars().count() <= 100, "{} columns: {line}", line.chars().count());
        }
        let o = run(&["compare", "-q", &path(b), &path(a)]);
        assert_eq!(o.status.code(), Some(GATE));
        assert!(o.stdout.is_empty());
    }
    // A long file name wraps, never past 100 columns.
    let tmp = tempfile::tempdir().unwrap();
    let long = tmp.path().join(format!("{}.pcap", "x".repeat(140)));
    std::fs::copy(dir().join("ecn-off-before.pcap"), &long).unwrap();
    let o = run(&["compare", long.to_str().unwrap(), &path("ecn-off-after.pcap")]);
    for line in String::from_utf8(o.stdout).unwrap().lines() {
        assert!(line.chars().count() <= 100, "{line}");
    }
    // The NCCL section too, with a long value (a device list).
    let env = tmp.path().join("job.env");
    let hca = (0..16).map(|i| format!("mlx5_{i}:1")).collect::<Vec<_>>().join(",");
    std::fs::write(&env, format!("NCCL_IB_TC=106\nNCCL_IB_HCA={hca}\n")).unwrap();
    let (b, a) = (path("dscp-remark-before.pcap"), path("dscp-remark-after.pcap"));
    let o = run(&["compare", &b, &a, "--nccl-env", env.to_str().unwrap()]);
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.contains("NCCL SETTINGS AGAINST THE WIRE") && text.contains("mlx5_15:1"), "{text}");
    for line in text.lines() {
        assert!(line.chars().count() <= 100, "{line}");
    }
}

/// The shipped schema stays open to fields a later version adds, and names its version.
#[test]
fn the_schema_accepts_added_fields_and_names_its_version() {
    let schema: Value =
        serde_json::from_slice(&std::fs::read(common::root().join("docs/compare.schema.json")).unwrap())
            .unwrap();
    assert_eq!(schema["properties"]["schema_version"]["const"], rocescope_analyzer::compare::SCHEMA_VERSION);
    let (mut doc, _) = compare(&[&path("dscp-remark-before.pcap"), &path("dscp-remark-after.pcap")], &[]);
    doc["added_later"] = Value::from(1);
    doc["verdicts"][0]["also"] = Value::from("x");
    let validator = jsonschema::validator_for(&schema).expect("a valid JSON Schema");
    assert!(validator.is_valid(&doc));
    doc["schema_version"] = Value::from(2);
    assert!(!validator.is_valid(&doc));
}

/// The sides' own expectations (counts per flow) hold, as every sample's do.
#[test]
fn each_side_is_what_its_generator_wrote() {
    for f in common::captures_in(&dir()) {
        let stem = f.file_stem().unwrap().to_str().unwrap();
        let e: Value =
            serde_json::from_slice(&std::fs::read(dir().join(format!("{stem}.expected.json"))).unwrap())
                .unwrap();
        let o = run(&["report", "--json", "-r", f.to_str().unwrap()]);
        let r = common::report_json(&o.stdout);
        assert_eq!(r["summary"]["packets"], e["counts"]["frames"], "{stem}");
        assert_eq!(r["summary"]["cnps"], e["counts"]["cnp"], "{stem}");
        for fe in e["flows"].as_array().unwrap() {
            let fr = r["flows"]
                .as_array()
                .unwrap()
                .iter()
                .find(|x| x["src"] == fe["src"] && x["dst"] == fe["dst"] && x["dest_qp"] == fe["dest_qp"])
                .unwrap_or_else(|| panic!("{stem}: {fe}"));
            for (got, want) in [
                (&fr["packets"], &fe["packets"]),
                (&fr["ecn"]["ce"], &fe["ecn_ce"]),
                (&fr["cnps"], &fe["cnps"]),
                (&fr["psn"]["retransmits"], &fe["retransmits"]),
                (&fr["naks"]["psn_seq_err"], &fe["naks_psn_seq_err"]),
            ] {
                assert_eq!(got, want, "{stem}: {fe}");
            }
            let sorted = |v: &Value| {
                let mut x: Vec<u64> = v.as_array().unwrap().iter().map(|d| d.as_u64().unwrap()).collect();
                x.sort_unstable();
                x
            };
            assert_eq!(sorted(&fr["dscp"]), sorted(&fe["dscp"]), "{stem}: {fe}");
        }
    }
}

/// `--nccl-env` on both sides of the DSCP re-mark: NCCL_IB_TC matched the wire before and
/// does not after (the switch moved the data to DSCP 0, the job's environment is the same),
/// a WARNING saying the fabric moved, which hosts and QPs from what to what, offering the job
/// no value; the same capture twice changes nothing;
/// a report document made without the option is said to be unchecked; a bad file is status 1.
#[test]
fn nccl_settings_that_stop_matching_the_wire_are_a_verdict() {
    let env = common::root().join("samples/nccl/nccl-job.match.env");
    let env = env.to_str().unwrap();
    let (before, after) = (path("dscp-remark-before.pcap"), path("dscp-remark-after.pcap"));
    let (doc, code) = compare(&[&before, &after], &["--nccl-env", env]);
    assert_eq!(code, Some(GATE));
    let tc = doc["nccl"].as_array().unwrap().iter().find(|v| v["name"] == "NCCL_IB_TC").expect("NCCL_IB_TC");
    assert_eq!(
        (tc["value"].as_str(), tc["before"].as_str(), tc["after"].as_str()),
        (Some("0x6a"), Some("match"), Some("mismatch"))
    );
    // The same file on both sides: the fabric moved, and no value is offered to the job.
    assert!(tc.get("would_match").is_none(), "{tc:#}");
    assert!(tc["wire_before"].as_str().is_some_and(|w| w.contains("DSCP 26")), "{tc:#}");
    let v: Vec<_> = verdicts(&doc).into_iter().filter(|v| v.1.starts_with("nccl")).collect();
    assert_eq!(v.len(), 1, "{v:?}");
    let (severity, kind, _, title) = &v[0];
    assert_eq!((severity.as_str(), kind.as_str()), ("warning", "nccl_now_mismatch"));
    assert!(title.starts_with("the fabric moved: NCCL_IB_TC=0x6a is the same on both sides"), "{title}");
    assert!(
        title.contains("DSCP 26 → 0") && title.contains("QP") && title.contains("not the job"),
        "{title}"
    );
    assert!(!title.contains("would match"), "{title}");
    // The other verdicts are the pair's own.
    let (plain, _) = compare(&[&before, &after], &[]);
    let rest: Vec<_> = verdicts(&doc).into_iter().filter(|v| !v.1.starts_with("nccl")).collect();
    assert_eq!(rest, verdicts(&plain));
    assert!(plain.get("nccl").is_none(), "no nccl section without the option");
    // The same capture twice: every variable as it was, no verdict.
    let (same, code) = compare(&[&after, &after], &["--nccl-env", env]);
    assert_eq!(code, Some(0), "{same:#}");
    assert!(same["verdicts"].as_array().unwrap().is_empty(), "{same:#}");
    assert!(same["nccl"].as_array().unwrap().iter().all(|v| v["before"] == v["after"]));
    // A report document made without --nccl-env: that side is not checked, and it says so.
    let tmp = tempfile::tempdir().unwrap();
    let o = run(&["report", "--json", "-r", &before]);
    let json = tmp.path().join("before.json");
    std::fs::write(&json, &o.stdout).unwrap();
    let (doc, _) = compare(&[json.to_str().unwrap(), &after], &["--nccl-env", env]);
    let kinds: Vec<String> =
        verdicts(&doc).into_iter().map(|v| v.1).filter(|k| k.starts_with("nccl")).collect();
    assert_eq!(kinds, ["nccl_one_side"]);
    assert!(doc["nccl"].as_array().unwrap().iter().all(|v| v["before"] == "absent"));
    // ... and one made with it keeps its check.
    let o = run(&["report", "--json", "-r", &before, "--nccl-env", env]);
    std::fs::write(&json, &o.stdout).unwrap();
    let (doc, _) = compare(&[json.to_str().unwrap(), &after], &["--nccl-env", env]);
    let kinds: Vec<String> =
        verdicts(&doc).into_iter().map(|v| v.1).filter(|k| k.starts_with("nccl")).collect();
    assert_eq!(kinds, ["nccl_now_mismatch"]);
    // A file that is not an NCCL environment: status 1 before any capture is read.
    let bad = tmp.path().join("bad.env");
    std::fs::write(&bad, "NCCL_IB_TC=abc\n").unwrap();
    let o = run(&["compare", &before, &after, "--nccl-env", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    assert!(err(&o).contains("bad.env") && err(&o).contains("line 1"), "{}", err(&o));
}

/// A report document whose times ask for more bins than its series holds (a bin of 1 µs, the
/// schema's least, over 11 days) is compared from the bins it has: no allocation of the
/// span, no abort. (A bin of 1 ns is out of the schema: tests/documents.rs.)
#[test]
fn a_report_document_with_absurd_times_is_read_from_its_series() {
    let tmp = tempfile::tempdir().unwrap();
    let o = run(&["report", "--json", "-r", &path("ecn-off-before.pcap")]);
    let mut doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let start = doc["points"][0]["start_ns"].as_i64().unwrap();
    doc["points"][0]["end_ns"] = Value::from(start + 1_000_000_000_000_000);
    for p in doc["timeline"]["points"].as_array_mut().unwrap() {
        p["bin_ns"] = Value::from(1_000);
    }
    let odd = tmp.path().join("odd.json");
    std::fs::write(&odd, serde_json::to_vec(&doc).unwrap()).unwrap();
    let o = run(&["compare", "--json", odd.to_str().unwrap(), &path("ecn-off-before.pcap")]);
    assert!(matches!(o.status.code(), Some(0 | 4)), "{}", err(&o));
    assert!(!err(&o).contains("memory allocation"), "{}", err(&o));
}

/// `--junit FILE`: each verdict a test case, failing exactly when it fails the gate, for CI
/// systems that show test reports; a clean comparison one passing case, and "nothing to
/// compare" an error, never a silent pass.
#[test]
fn the_gate_as_a_junit_report() {
    let tmp = std::env::temp_dir().join(format!("rocescope-junit-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let xml_of = |before: &str, after: &str, extra: &[&str], code: i32| -> String {
        let file = tmp.join(format!("{before}-{after}.xml"));
        let (b, a) = (path(before), path(after));
        let mut args = vec!["compare", b.as_str(), a.as_str(), "--json", "--junit", file.to_str().unwrap()];
        args.extend_from_slice(extra);
        let o = run(&args);
        assert_eq!(o.status.code(), Some(code), "{}", err(&o));
        let doc = common::compare_json(&o.stdout);
        let xml = std::fs::read_to_string(&file).unwrap();
        // One test case per verdict (or one for a clean or empty comparison).
        let n = doc["verdicts"].as_array().unwrap().len().max(1);
        assert_eq!(xml.matches("<testcase ").count(), n, "{xml}");
        xml
    };
    // ECN off: the CRITICAL and the WARNING fail the default gate, the INFO passes.
    let x = xml_of("ecn-off-before.pcap", "ecn-off-after.pcap", &[], GATE);
    assert!(x.starts_with("<?xml"), "{x}");
    assert_eq!(x.matches("<failure ").count(), 2, "{x}");
    assert!(x.contains(r#"<testcase name="ecn_stopped at ecn-off-after.pcap priority 3""#), "{x}");
    assert!(x.contains("<system-out>INFO: priority 6 carries RoCE or pauses only before"), "{x}");
    // Under --fail-on critical only the CRITICAL fails.
    let x = xml_of("ecn-off-before.pcap", "ecn-off-after.pcap", &["--fail-on", "critical"], GATE);
    assert_eq!(x.matches("<failure ").count(), 1, "{x}");
    // A capture against itself: one passing case.
    let x = xml_of("ecn-off-before.pcap", "ecn-off-before.pcap", &[], 0);
    assert!(x.contains(r#"<testcase name="no change beyond noise""#) && !x.contains("<failure"), "{x}");
    // No RoCE on either side: an error, as the exit status 5 says.
    let x = xml_of("no-roce-before.pcap", "no-roce-after.pcap", &[], NOTHING);
    assert!(x.contains(r#"<testcase name="nothing_to_compare""#) && x.contains("<error "), "{x}");
    // A file that cannot be written is an error naming it (status 1).
    let (b, a) = (path("ecn-off-before.pcap"), path("ecn-off-after.pcap"));
    let o = run(&["compare", b.as_str(), a.as_str(), "-q", "--junit", "/nonexistent-dir/x.xml"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(err(&o).contains("/nonexistent-dir/x.xml"), "{}", err(&o));
    let _ = std::fs::remove_dir_all(&tmp);
}

/// Like with like: report documents made with different options (here `--bin` and an
/// expectation) get a WARNING naming each option and its two values; the same options, or a
/// capture analysed with the command's own, none.
#[test]
fn sides_made_with_different_options_are_a_warning() {
    let tmp = std::env::temp_dir().join(format!("rocescope-options-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let doc = |name: &str, extra: &[&str]| -> String {
        let file = tmp.join(name);
        let pcap = path("ecn-off-before.pcap");
        let mut args = vec!["report", "--json", "-r", pcap.as_str(), "--fail-on", "never"];
        args.extend_from_slice(extra);
        let o = run(&args);
        assert_eq!(o.status.code(), Some(0), "{}", err(&o));
        std::fs::write(&file, &o.stdout).unwrap();
        file.to_str().unwrap().to_string()
    };
    let (plain, fine, expect) = (
        doc("plain.json", &[]),
        doc("fine.json", &["--bin", "1ms"]),
        doc("expect.json", &["--expect-dscp", "26"]),
    );
    let kinds = |v: &Value| -> Vec<(String, String)> {
        verdicts(v).into_iter().filter(|x| x.1 == "options_differ").map(|x| (x.0, x.3)).collect()
    };
    let (v, code) = compare(&[fine.as_str(), plain.as_str()], &[]);
    let k = kinds(&v);
    assert_eq!(code, Some(GATE));
    assert_eq!(k.len(), 1, "{:#}", v["verdicts"]);
    assert_eq!(k[0].0, "warning");
    assert!(k[0].1.contains("timeline.base_ns (--bin) 1000000 → 10000000"), "{}", k[0].1);
    let (v, _) = compare(&[plain.as_str(), expect.as_str()], &[]);
    let k = kinds(&v);
    assert!(k.len() == 1 && k[0].1.contains("audit.expected.roce_dscps null → [26]"), "{:#}", v["verdicts"]);
    // The same options, or a capture side (the command's own options): none.
    for sides in [[plain.as_str(), plain.as_str()], [plain.as_str(), &path("ecn-off-before.pcap")]] {
        let (v, code) = compare(&sides, &[]);
        assert!(kinds(&v).is_empty() && code == Some(0), "{sides:?}: {:#}", v["verdicts"]);
    }
    let _ = std::fs::remove_dir_all(&tmp);
}

/// NIC counters on both sides: each figure's delta is a row (`counters[]`), from capture
/// sides given `--counters-before/--counters-after` and from report documents made with
/// `--counters` alike; a PFC storm in the AFTER counters is beyond noise, an unchanged
/// figure is not; counters for a report-document side are refused.
#[test]
fn nic_counter_deltas_are_rows() {
    let counters = common::root().join("samples/counters");
    let c = |n: &str| counters.join(n).to_str().unwrap().to_string();
    let (b1, b2, a1, a2) = (
        c("agree-before.txt"),
        c("agree-after.txt"),
        c("bnxt-ethtool-before.txt"),
        c("bnxt-ethtool-after.txt"),
    );
    let demo = common::root().join("samples/demo.pcap");
    let demo = demo.to_str().unwrap();
    let options = [
        "--counters-before",
        &b1,
        "--counters-before",
        &b2,
        "--counters-after",
        &a1,
        "--counters-after",
        &a2,
    ];
    let (doc, code) = compare(&[demo, demo], &options);
    assert_eq!(code, Some(0), "counters are rows, not verdicts: {doc:#}");
    let rows = doc["counters"].as_array().expect("counters[]");
    let row = |figure: &str, prio: Option<u64>| {
        rows.iter()
            .find(|r| r["figure"] == figure && r["priority"].as_u64() == prio)
            .unwrap_or_else(|| panic!("{figure} {prio:?}: {rows:#?}"))
    };
    let same = row("pause_rx_duration_us", Some(3));
    assert_eq!(
        (same["before"].as_u64(), same["after"].as_u64(), &same["beyond_noise"]),
        (Some(9024), Some(9024), &false.into())
    );
    let one_side = row("pfc_frames_rx", Some(3));
    assert_eq!((one_side["before"].is_null(), one_side["after"].as_u64()), (true, Some(31)));
    assert!(one_side["beyond_noise"].is_null());
    let text_args: Vec<&str> = ["compare", demo, demo].into_iter().chain(options).collect();
    let text = String::from_utf8_lossy(&run(&text_args).stdout).into_owned();
    assert!(text.contains("NIC COUNTERS") && text.contains("pause_rx_duration_us prio 3"), "{text}");
    // Report documents made with --counters give the same rows.
    let tmp = tempfile::tempdir().unwrap();
    let doc_of = |name: &str, c1: &str, c2: &str| {
        let o = run(&["report", "--json", "-r", demo, "--counters", c1, "--counters", c2]);
        let p = tmp.path().join(name);
        std::fs::write(&p, &o.stdout).unwrap();
        p.to_str().unwrap().to_string()
    };
    let (jb, ja) = (doc_of("b.json", &b1, &b2), doc_of("a.json", &a1, &a2));
    let (from_docs, _) = compare(&[&jb, &ja], &[]);
    assert_eq!(from_docs["counters"], doc["counters"]);
    // Without counters on both sides: no rows.
    let (plain, _) = compare(&[&jb, demo], &[]);
    assert!(plain.get("counters").is_none(), "{plain:#}");
    // Counter files for a report document: refused, naming why.
    let o = run(&["compare", &jb, demo, "--counters-before", &b1, "--counters-after", &a1]);
    assert_eq!(o.status.code(), Some(1));
    assert!(err(&o).contains("a report document keeps the counters"), "{}", err(&o));
}

/// `compare --split-at TIME FILE`: the captures with a change inside them give the verdicts
/// and gate statuses their generator worked out; each side says its window, the two windows
/// together hold every frame once, and the text names them.
#[test]
fn a_change_inside_one_capture_split_at_its_time() {
    let splits = splits();
    assert_eq!(splits.len(), 1);
    for (file, want) in &splits {
        let at = want["at"].as_str().unwrap();
        let (doc, code) = compare(&["--split-at", at, file], &[]);
        check_verdicts(file, &doc, want);
        assert!(verdicts(&doc).iter().any(|v| v.0 == "critical"), "{file}: a CRITICAL verdict");
        assert_eq!(code, Some(GATE), "{file}");
        assert_eq!(
            (doc["gate"]["failed"].as_bool(), doc["gate"]["exit"].as_i64()),
            (Some(true), Some(i64::from(GATE)))
        );
        let (b, a) = (&doc["before"], &doc["after"]);
        assert_eq!((b["kind"].as_str(), a["kind"].as_str()), (Some("capture"), Some("capture")));
        assert_eq!(b["files"], a["files"]);
        assert_eq!((b["window"]["from"].as_str(), b["window"]["to"].as_str()), (None, Some(at)));
        assert_eq!((a["window"]["from"].as_str(), a["window"]["to"].as_str()), (Some(at), None));
        // One instant splits them: BEFORE ends (exclusive) where AFTER starts (inclusive).
        assert!(b["window"]["end_ns"].as_i64().is_some());
        assert_eq!(b["window"]["end_ns"], a["window"]["start_ns"]);
        // What one side skipped is the other's: every frame counted once.
        let whole = common::report_json(&run(&["report", "--json", "-r", file]).stdout);
        let frames = whole["summary"]["packets"].as_u64().unwrap();
        let outside = |s: &Value| s["window"]["frames_outside"].as_u64().unwrap();
        assert_eq!(outside(b) + outside(a), frames, "{file}");
        assert!(outside(b) > 0 && outside(a) > 0, "{file}");
        for r in want["runs"].as_array().unwrap() {
            let args: Vec<&str> = r["args"].as_array().unwrap().iter().map(|a| a.as_str().unwrap()).collect();
            let (_, code) = compare(&["--split-at", at, file], &args);
            assert_eq!(code, r["exit"].as_i64().map(|x| x as i32), "{file} {}", r["about"]);
        }
        // The text says each side's window, and fits 100 columns.
        let o = run(&["compare", "--split-at", at, file]);
        let text = String::from_utf8(o.stdout).unwrap();
        let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            words.contains(&format!("window to {at} (")) && words.contains(&format!("window from {at} (")),
            "{text}"
        );
        assert!(text.lines().all(|l| l.chars().count() <= 100), "{text}");
        // --junit as for two sides.
        let tmp = tempfile::tempdir().unwrap();
        let xml = tmp.path().join("split.xml");
        let o = run(&["compare", "-q", "--split-at", at, file, "--junit", xml.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(GATE));
        let xml = std::fs::read_to_string(&xml).unwrap();
        assert_eq!(xml.matches("<testcase ").count(), doc["verdicts"].as_array().unwrap().len(), "{xml}");
    }
}

/// The same split as two `report --from/--to` documents, or two `--parquet` directories made
/// over the two windows, and the same time given absolute: the same verdicts and status.
#[test]
fn a_split_is_the_comparison_of_its_two_windows() {
    let tmp = tempfile::tempdir().unwrap();
    for (file, want) in splits() {
        let at = want["at"].as_str().unwrap();
        let (split, code) = compare(&["--split-at", at, &file], &[]);
        let whole = common::report_json(&run(&["report", "--json", "-r", &file]).stdout);
        let first = whole["summary"]["start_ns"].as_i64().unwrap();
        let mut sides = Vec::new();
        for (name, flag) in [("before", "--to"), ("after", "--from")] {
            let json = tmp.path().join(format!("{name}.json"));
            let o = run(&["report", "--json", "-r", &file, flag, at]);
            assert_eq!(o.status.code(), Some(0), "{}", err(&o));
            let r = common::report_json(&o.stdout);
            assert_eq!(r["summary"]["window"][&flag[2..]], at);
            std::fs::write(&json, &o.stdout).unwrap();
            let pq = tmp.path().join(format!("{name}.parquet"));
            let o = run(&["report", "-q", "-r", &file, flag, at, "--parquet", pq.to_str().unwrap()]);
            assert_eq!(o.status.code(), Some(0), "{}", err(&o));
            sides.push((json.to_str().unwrap().to_string(), pq.to_str().unwrap().to_string()));
        }
        let (doc, c) = compare(&[&sides[0].0, &sides[1].0], &[]);
        assert_eq!(verdicts(&doc), verdicts(&split), "{file}: report documents");
        assert_eq!(c, code);
        // The documents say their windows (and no options_differ: a window is not an option).
        assert_eq!(doc["before"]["window"]["to"], at);
        assert_eq!(doc["after"]["window"]["from"], at);
        let (doc, c) = compare(&[&sides[0].1, &sides[1].1], &[]);
        check_verdicts_but(&file, &doc, &want, &["finding_rose"]);
        assert_eq!(c, code, "{file}: Parquet directories");
        // The split time as RFC 3339 and as epoch seconds: the same instant, the same answer.
        let ns = split["before"]["window"]["end_ns"].as_i64().unwrap();
        let (s, frac) = (ns.div_euclid(1_000_000_000), ns.rem_euclid(1_000_000_000));
        assert_eq!(ns - first, 30_000_000, "{file}: +30ms after the first frame");
        let epoch = format!("{s}.{frac:09}");
        let rfc = format!("2026-01-01T00:00:{:02}.{frac:09}Z", s - 1_767_225_600);
        for t in [epoch.as_str(), rfc.as_str()] {
            let (doc, c) = compare(&["--split-at", t, &file], &[]);
            assert_eq!(verdicts(&doc), verdicts(&split), "{file}: --split-at {t}");
            assert_eq!(
                (c, &doc["after"]["window"]["start_ns"]),
                (code, &split["after"]["window"]["start_ns"])
            );
        }
    }
}

/// A steady capture split is no change: the sample of ordinary RC traffic split in its
/// middle, and the split sample's steady first half (before its change at +30 ms) split at
/// +15 ms, as two `report --from/--to` documents.
#[test]
fn a_steady_capture_split_makes_no_warning() {
    let no_fault = |doc: &Value, what: &str| {
        let bad: Vec<_> = verdicts(doc).into_iter().filter(|v| v.0 != "info").collect();
        assert!(bad.is_empty(), "{what}: {bad:#?}");
    };
    let rc = common::root().join("samples/rc-normal.pcap");
    let (doc, code) = compare(&["--split-at", "+55us", rc.to_str().unwrap()], &[]);
    no_fault(&doc, "rc-normal");
    assert_eq!(code, Some(0), "{doc:#}");
    let skipped = |s: &str| doc[s]["window"]["frames_outside"].as_u64().unwrap();
    assert_eq!(skipped("before") + skipped("after"), 26, "rc-normal holds 26 frames");
    let tmp = tempfile::tempdir().unwrap();
    let change = path("split-change.pcap");
    let mut docs = Vec::new();
    for (name, window) in
        [("first", vec!["--to", "+15ms"]), ("second", vec!["--from", "+15ms", "--to", "+30ms"])]
    {
        let mut args = vec!["report", "--json", "-r", change.as_str()];
        args.extend(window);
        let o = run(&args);
        assert_eq!(o.status.code(), Some(0), "{name}: {}", err(&o));
        assert_eq!(common::report_json(&o.stdout)["summary"]["packets"], 360, "{name}: 60 rounds of 3 QPs");
        let f = tmp.path().join(format!("{name}.json"));
        std::fs::write(&f, &o.stdout).unwrap();
        docs.push(f.to_str().unwrap().to_string());
    }
    let (doc, code) = compare(&[&docs[0], &docs[1]], &[]);
    no_fault(&doc, "split-change before its change");
    assert_eq!(code, Some(0), "{doc:#}");
}

/// `--split-at` misused is a usage error (status 2) that says what is wrong: with
/// `--before/--after`, without a capture, a time that does not parse, a time with no frame
/// on one side of it, a side that is not a capture.
#[test]
fn split_at_misused_is_status_2() {
    let f = path("split-change.pcap");
    let tmp = tempfile::tempdir().unwrap();
    let json = tmp.path().join("r.json");
    std::fs::write(&json, run(&["report", "--json", "-r", &f]).stdout).unwrap();
    let json = json.to_str().unwrap();
    for (args, says) in [
        (vec!["--split-at", "+30ms", "--before", &f, "--after", &f], "cannot be used with"),
        (vec!["--split-at", "+30ms"], "give the capture to split"),
        (vec!["--split-at", "yesterday", &f], "is not a time"),
        (vec!["--split-at", "2026-01-01T00:00:00.03", &f], "give its zone"),
        (vec!["--split-at", "+90ms", &f], "no frame of the capture is at or after it"),
        (vec!["--split-at", "+0s", &f], "no frame of the capture is before it"),
        (vec!["--split-at", "1700000000", &f], "no frame of the capture is before it"),
        (vec!["--split-at", "+30ms", json], "--split-at splits a capture"),
        (vec!["--split-at", "+30ms", "-"], "not standard input"),
    ] {
        let mut a = vec!["compare"];
        a.extend(args.iter().copied());
        let o = run(&a);
        assert_eq!(o.status.code(), Some(2), "{a:?}: {}", err(&o));
        assert!(err(&o).contains(says), "{a:?}: {}", err(&o));
        assert!(o.stdout.is_empty(), "{a:?}");
    }
}
