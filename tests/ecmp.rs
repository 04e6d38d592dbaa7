//! ECMP end to end (docs/verdicts.md "ECMP"): samples/ecmp/ built with their answers, a
//! host pair whose busy QPs share one UDP source port (`ecmp_low_entropy`, its control
//! pair not flagged), a leaf's four uplinks as four capture points with two elephants on one
//! (`ecmp_imbalance`, measured), the prediction under the modelled hashes, and no ECMP
//! finding on any real capture.

mod common;

use serde_json::Value;
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::{Command, Output};

fn sample(name: &str) -> PathBuf {
    common::root().join("samples/ecmp").join(name)
}

fn expected(name: &str) -> Value {
    let p = sample(&format!("{name}.expected.json"));
    serde_json::from_slice(&std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))).unwrap()
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rocescope"))
        .args(args)
        .current_dir(common::root().join("samples/ecmp"))
        .output()
        .expect("run rocescope")
}

fn report(args: &[&str]) -> Value {
    let mut all = vec!["report", "--json", "--findings-per-kind", "0"];
    all.extend_from_slice(args);
    let o = run(&all);
    assert_eq!(o.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    common::report_json(&o.stdout)
}

/// (kind, severity) of every finding.
fn findings(r: &Value) -> BTreeSet<(String, String)> {
    r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["kind"].as_str().unwrap().to_string(), f["severity"].as_str().unwrap().to_string()))
        .collect()
}

fn kinds(list: &Value) -> BTreeSet<(String, String)> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|f| (f["kind"].as_str().unwrap().to_string(), f["severity"].as_str().unwrap().to_string()))
        .collect()
}

fn pair<'a>(r: &'a Value, src: &str, dst: &str) -> &'a Value {
    r["ecmp"]["host_pairs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["src"] == src && p["dst"] == dst)
        .unwrap_or_else(|| panic!("no host pair {src} → {dst}: {:#}", r["ecmp"]))
}

const UPLINKS: [&str; 4] = ["uplink1.pcap", "uplink2.pcap", "uplink3.pcap", "uplink4.pcap"];

fn uplink_args(extra: &[&'static str]) -> Vec<&'static str> {
    let mut v = Vec::new();
    for u in UPLINKS {
        v.extend(["-r", u]);
    }
    v.extend_from_slice(extra);
    v
}

#[test]
fn the_samples_match_their_counts_and_flows() {
    for name in ["low-entropy", "uplink1", "uplink2", "uplink3", "uplink4"] {
        let e = expected(name);
        let c = common::count(&sample(&format!("{name}.pcap")));
        let x = &e["counts"];
        for (k, mine) in [
            ("frames", c.frames),
            ("roce_v2", c.roce_v2),
            ("icrc_valid", c.icrc_valid),
            ("icrc_truncated", c.icrc_truncated),
            ("malformed", c.malformed),
        ] {
            assert_eq!(mine, x[k].as_u64().unwrap(), "{name}: counts.{k}");
        }
        // Every flow's packets and payload as the generator wrote them.
        let r = report(&["-r", &format!("{name}.pcap")]);
        for want in e["flows"].as_array().unwrap() {
            let got = r["flows"]
                .as_array()
                .unwrap()
                .iter()
                .find(|f| {
                    f["src"] == want["src"] && f["dst"] == want["dst"] && f["dest_qp"] == want["dest_qp"]
                })
                .unwrap_or_else(|| panic!("{name}: no flow {want}"));
            assert_eq!(got["packets"], want["packets"], "{name}: {want}");
            assert_eq!(got["payload_bytes"], want["payload_bytes"], "{name}: {want}");
        }
    }
}

#[test]
fn one_port_for_every_busy_qp_of_a_pair_is_low_entropy_and_hashed_ports_are_not() {
    let e = expected("low-entropy");
    let r = report(&["-r", "low-entropy.pcap"]);
    assert_eq!(findings(&r), kinds(&e["findings"]), "{:#}", r["findings"]);
    let f = r["findings"].as_array().unwrap().iter().find(|f| f["kind"] == "ecmp_low_entropy").unwrap();
    let title = f["title"].as_str().unwrap();
    assert!(title.contains("10.0.0.61 → 10.0.0.62") && title.contains("8 busy QPs"), "{title}");
    assert!(title.contains("flow label is 0"), "names the NIC setting: {title}");
    assert!(!title.contains("10.0.0.63"), "the control pair is not flagged: {title}");
    assert_eq!(f["evidence"].as_array().unwrap().len(), 5);
    for want in e["analysis"]["host_pairs"].as_array().unwrap() {
        let got = pair(&r, want["src"].as_str().unwrap(), want["dst"].as_str().unwrap());
        for k in ["qps", "busy_qps", "ports", "top_port", "top_port_busy_qps"] {
            if !want[k].is_null() {
                assert_eq!(got[k], want[k], "{k}: {got:#}");
            }
        }
        for k in ["entropy_bits", "qp_entropy_bits"] {
            let (g, w) = (got[k].as_f64().unwrap(), want[k].as_f64().unwrap());
            assert!((g - w).abs() < 1e-9, "{k}: {g} != {w}");
        }
    }
    // The control pair's ports are the kernel's, one a QP.
    let ports: BTreeSet<u64> = r["flows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["src"] == "10.0.0.63" && f["payload_bytes"].as_u64() > Some(0))
        .map(|f| f["udp_src_port"].as_u64().unwrap())
        .collect();
    let want: BTreeSet<u64> = e["analysis"]["host_pairs"][1]["sports"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_u64().unwrap())
        .collect();
    assert_eq!(ports, want);
    // Per source host: the same figures (one destination each).
    let hosts = r["ecmp"]["hosts"].as_array().unwrap();
    let h = hosts.iter().find(|h| h["src"] == "10.0.0.61").unwrap();
    assert_eq!(
        (h["qps"].as_u64(), h["ports"].as_u64(), h["destinations"].as_u64()),
        (Some(8), Some(1), Some(1))
    );
    // Elephants: 16 busy flows of equal size; the top 10 carry 10/16, 13 carry 80%.
    let el = &r["elephants"];
    assert_eq!((el["data_flows"].as_u64(), el["busy_flows"].as_u64()), (Some(16), Some(16)));
    assert_eq!(el["top"].as_array().unwrap().len(), 10);
    assert!((el["top_share"].as_f64().unwrap() - 10.0 / 16.0).abs() < 1e-9);
    assert_eq!(el["flows_for_share"], 13);
    assert_eq!(el["top"][0]["udp_src_port"], 49152);
    // The text report's sections.
    let o = run(&["report", "-r", "low-entropy.pcap"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("ELEPHANTS (16 data flows"), "{text}");
    // The header speaks of the top 10; the 5 lines under it say they are its head (issue 41).
    assert!(text.contains("the top 10 carry 62.5%"), "{text}");
    assert!(text.contains("  the 5 largest of those 10 (all 10 in --json):"), "{text}");
    assert!(
        text.contains(
            "10.0.0.61 → 10.0.0.62: 8 QPs (8 busy) on 1 port(s), 8 on port 49152: 0.00 bits of 3.00"
        ),
        "{text}"
    );
    assert!(text.contains("10.0.0.63 → 10.0.0.64: 8 QPs (8 busy) on 8 port(s)"), "{text}");
}

#[test]
fn the_prediction_puts_one_port_on_one_path_and_e_ecmp_spreads_it() {
    let r = report(&["-r", "low-entropy.pcap", "--ecmp-paths", "4"]);
    let p = &r["ecmp"]["prediction"];
    assert_eq!(
        (p["paths"].as_u64(), p["hash"].as_str(), p["key"].as_str()),
        (Some(4), Some("crc32-lo"), Some("5-tuple"))
    );
    assert_eq!(p["loads"].as_array().unwrap().len(), 4);
    assert_eq!(p["flows"], 16);
    // The eight QPs on port 49152 share one 5-tuple: one path holds all of them.
    let fixed: BTreeSet<u64> = r["flows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["src"] == "10.0.0.61" && f["payload_bytes"].as_u64() > Some(0))
        .map(|f| f["id"].as_u64().unwrap())
        .collect();
    let c = &p["collisions"][0];
    assert!(c["busy_flows"].as_u64().unwrap() >= 8, "{p:#}");
    let named: BTreeSet<u64> =
        c["elephants"].as_array().unwrap().iter().map(|x| x.as_u64().unwrap()).collect();
    assert!(named.len() == 8 && named.is_subset(&fixed), "{named:?} {fixed:?}");
    assert!(p["max_over_mean"].as_f64().unwrap() > 1.5);
    let f =
        r["findings"].as_array().unwrap().iter().find(|f| f["kind"] == "ecmp_imbalance").expect("predicted");
    assert_eq!(f["severity"], "info", "a prediction is never more than info");
    assert!(f["title"].as_str().unwrap().contains("a prediction"), "{f}");
    // E-ECMP hashes the destination QP too: the eight QPs leave that one path.
    let r = report(&["-r", "low-entropy.pcap", "--ecmp-paths", "4", "--ecmp-hash", "eecmp"]);
    let p = &r["ecmp"]["prediction"];
    assert_eq!((p["hash"].as_str(), p["key"].as_str()), (Some("eecmp"), Some("5-tuple+qp")));
    let used = p["loads"].as_array().unwrap().iter().filter(|l| l["busy_flows"].as_u64() > Some(0)).count();
    assert_eq!(used, 4, "{p:#}");
    assert!(p["max_over_mean"].as_f64().unwrap() <= 1.5);
    assert!(!findings(&r).iter().any(|f| f.0 == "ecmp_imbalance"));
    // Every modelled hash runs; the seed is part of the key.
    for h in [
        "crc16",
        "crc16-ccitt,seed=0x1234",
        "crc32-hi",
        "crc32-eth-lo",
        "crc32-koopman-hi,qp",
        "xor16",
        "xor8",
    ] {
        let r = report(&["-r", "low-entropy.pcap", "--ecmp-paths", "8", "--ecmp-hash", h]);
        let p = &r["ecmp"]["prediction"];
        assert_eq!(
            p["loads"].as_array().unwrap().iter().map(|l| l["flows"].as_u64().unwrap()).sum::<u64>(),
            16,
            "{h}"
        );
    }
}

#[test]
fn four_uplinks_measured_show_two_elephants_on_one() {
    let e = expected("uplink1");
    let r = report(&uplink_args(&["--uplinks", "uplink1,uplink2,uplink3,uplink4"]));
    assert_eq!(findings(&r), kinds(&e["analysis"]["findings_together"]), "{:#}", r["findings"]);
    let f = r["findings"].as_array().unwrap().iter().find(|f| f["kind"] == "ecmp_imbalance").unwrap();
    let title = f["title"].as_str().unwrap();
    assert!(title.contains("uplink1.pcap") && title.contains("measured"), "{title}");
    assert!(title.contains("10.0.0.11 → 10.0.0.21") && title.contains("10.0.0.12 → 10.0.0.22"), "{title}");
    let u = &r["ecmp"]["uplinks"];
    let loads = u["uplinks"].as_array().unwrap();
    assert_eq!(loads.len(), 4);
    let busy: Vec<u64> = loads.iter().map(|l| l["busy_flows"].as_u64().unwrap()).collect();
    assert_eq!(busy, [2, 1, 1, 0]);
    assert_eq!(u["busiest"], 0);
    let m = u["max_over_mean"].as_f64().unwrap();
    assert!((1.9..2.1).contains(&m), "{m}");
    assert!(loads[3]["share"].as_f64().unwrap() < 0.01, "uplink 4 idles");
    assert!(u["unmatched"].as_array().unwrap().is_empty());
    // Over time: the series' bins, one ratio a bin.
    assert!(u["bin_ns"].as_u64().unwrap() > 0);
    let bins = u["max_over_mean_bins"].as_array().unwrap();
    assert!(!bins.is_empty() && bins.iter().all(|b| b.as_f64().is_some()));
    assert_eq!(loads[0]["bins"].as_array().unwrap().len(), bins.len());
    // Eight flows over four uplinks are too few to tell which switch hash placed them.
    let fit = &u["hash_fit"];
    assert_eq!(
        (fit["flows"].as_u64(), fit["tested"].as_u64(), fit["decided"].as_bool()),
        (Some(8), Some(20), Some(false))
    );
    assert!(fit["fitting"].as_array().unwrap().is_empty());
    // The prediction beside it, over as many paths as uplinks; the finding is the measured one.
    assert_eq!(r["ecmp"]["prediction"]["paths"], 4);
    assert_eq!(r["findings"].as_array().unwrap().iter().filter(|f| f["kind"] == "ecmp_imbalance").count(), 1);
    // Uplinks named as the report names the points.
    let r2 = report(&uplink_args(&["--uplinks", "uplink1.pcap,uplink2.pcap,uplink3.pcap,uplink4.pcap"]));
    assert_eq!(r2["ecmp"]["uplinks"]["uplinks"], r["ecmp"]["uplinks"]["uplinks"]);
    // Without --uplinks the four points make no ECMP finding: nothing says they are paths.
    let r = report(&uplink_args(&[]));
    assert!(r["ecmp"]["uplinks"].is_null() && r["ecmp"]["prediction"].is_null());
    assert!(!findings(&r).iter().any(|f| f.0.starts_with("ecmp")));
    // The text report.
    let o = run(&["report"]
        .into_iter()
        .chain(uplink_args(&["--uplinks", "uplink1,uplink2,uplink3,uplink4"]))
        .collect::<Vec<_>>());
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("UPLINKS (measured"), "{text}");
    assert!(text.contains("busiest/mean 2.00 over the capture"), "{text}");
    assert!(
        text.contains("which switch hash: too few data flows to tell (8; 6 beyond the uplinks needed)"),
        "{text}"
    );
}

#[test]
fn an_uplink_no_point_has_is_an_error_before_reading() {
    let o =
        run(&["report"].into_iter().chain(uplink_args(&["--uplinks", "uplink1,spine9"])).collect::<Vec<_>>());
    // A bad option value: usage (2), as every other (issue 40: it was 1, "could not read").
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("\"spine9\"") && err.contains("uplink4.pcap"), "{err}");
    // One capture's points may be mirror sessions found while reading: named in the report.
    let r = report(&["-r", "uplink1.pcap", "--uplinks", "spine9"]);
    assert_eq!(r["ecmp"]["uplinks"]["unmatched"][0], "spine9");
    let o = run(&["report", "-r", "uplink1.pcap", "--ecmp-hash", "md5"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("crc16-ccitt"));
    // A hash with nothing to predict, and more uplinks than the prediction's paths, were
    // passed over without a word (issue 40): usage errors.
    let o = run(&["report", "-r", "uplink1.pcap", "--ecmp-hash", "xor8"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("--ecmp-paths"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let many = (0..1030).map(|i| format!("up{i}")).collect::<Vec<_>>().join(",");
    let o = run(&["report", "-r", "uplink1.pcap", "--uplinks", &many]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("1030 uplinks"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // With paths, or with uplinks, the hash is taken.
    assert_eq!(
        run(&["report", "-q", "-r", "uplink1.pcap", "--ecmp-paths", "4", "--ecmp-hash", "xor8"])
            .status
            .code(),
        Some(0)
    );
}

/// No real capture gets an ECMP finding, by default or under any modelled hash.
#[test]
fn no_real_capture_gets_an_ecmp_finding() {
    let Some(dir) = common::real_captures() else { return };
    for path in common::captures_in(&dir) {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        for extra in [&[][..], &["--ecmp-paths", "4"][..], &["--ecmp-paths", "2", "--ecmp-hash", "xor16"][..]]
        {
            let mut args = vec!["report", "--json", "-r", path.to_str().unwrap()];
            args.extend_from_slice(extra);
            let o = run(&args);
            let r: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{name}: {e}"));
            let ecmp: Vec<&Value> = r["findings"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|f| f["kind"].as_str().unwrap().starts_with("ecmp"))
                .collect();
            assert!(ecmp.is_empty(), "{name} {extra:?}: {ecmp:?}");
        }
    }
}

/// A QP captured at two points (its sender's and its receiver's) is one flow on the wire:
/// one elephant and one placed flow, kept where it was seen with the most bytes.
#[test]
fn a_qp_seen_at_two_points_is_one_elephant_and_placed_once() {
    let root = common::root().join("samples");
    let (tx, rx) = (root.join("two-points-sender.pcap"), root.join("two-points-receiver.pcap"));
    let r = report(&["-r", tx.to_str().unwrap(), "-r", rx.to_str().unwrap(), "--ecmp-paths", "4"]);
    let data: Vec<&Value> =
        r["flows"].as_array().unwrap().iter().filter(|f| f["payload_bytes"].as_u64() > Some(0)).collect();
    assert_eq!(data.len(), 2, "the QP's data flow at each point");
    let most = data.iter().max_by_key(|f| f["bytes"].as_u64()).unwrap();
    let el = &r["elephants"];
    assert_eq!(el["data_flows"], 1);
    assert_eq!(el["top"].as_array().map(Vec::len), Some(1));
    assert_eq!(
        (el["top"][0]["point"].clone(), el["top"][0]["bytes"].clone()),
        (most["point"].clone(), most["bytes"].clone())
    );
    assert_eq!(r["ecmp"]["prediction"]["flows"], 1);
}
