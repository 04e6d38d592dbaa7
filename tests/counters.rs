//! `rocescope report --counters`: NIC counters beside the capture (docs/counters.md). The
//! counter files in samples/counters/ are for host 10.0.0.5 of samples/demo.pcap: one pair
//! agrees with the capture, one file disagrees, one holds a single snapshot.

mod common;

use serde_json::Value;
use std::process::{Command, Output};

const HOST: &str = "10.0.0.5,02:00:00:00:00:05";

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rocescope")).args(args).output().expect("run rocescope")
}

fn path(name: &str) -> String {
    common::root().join("samples").join(name).to_str().unwrap().to_string()
}

/// The JSON report of demo.pcap with these extra arguments (schema-checked).
fn report(extra: &[&str]) -> Value {
    let demo = path("demo.pcap");
    let mut args = vec!["report", "--json", "-r", demo.as_str()];
    args.extend_from_slice(extra);
    let o = run(&args);
    assert!(!o.stdout.is_empty(), "{}", String::from_utf8_lossy(&o.stderr));
    common::report_json(&o.stdout)
}

fn row<'a>(r: &'a Value, figure: &str, priority: Option<u64>) -> &'a Value {
    r["counters"]["figures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["figure"] == figure && x["priority"].as_u64() == priority)
        .unwrap_or_else(|| panic!("no row {figure} {priority:?}: {}", r["counters"]))
}

fn disagreements(r: &Value) -> Vec<String> {
    r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == "counters_disagree")
        .map(|f| {
            assert_eq!(f["severity"], "warning", "never critical: {f}");
            f["title"].as_str().unwrap().to_string()
        })
        .collect()
}

#[test]
fn counters_that_agree_with_the_capture_make_no_finding() {
    let (b, a) = (path("counters/agree-before.txt"), path("counters/agree-after.txt"));
    let r = report(&["--counters", &b, "--counters", &a, "--counters-host", HOST]);
    let c = &r["counters"];
    assert_eq!(c["mode"], "delta");
    assert_eq!(c["ports"], serde_json::json!(["ethtool -S", "mlx5_0/1"]));
    assert_eq!(c["host"], serde_json::json!(["10.0.0.5", "02:00:00:00:00:05"]));
    for (figure, prio, n) in [
        ("cnp_handled", None, 2),
        ("local_ack_timeout", None, 1),
        ("pause_rx", Some(3), 30),
        ("pause_rx_duration_us", Some(3), 9024),
        ("link_pause_rx", None, 2),
    ] {
        let x = row(&r, figure, prio);
        assert_eq!((x["nic"].as_u64(), x["capture"].as_u64()), (Some(n), Some(n)), "{x}");
        assert_eq!(x["status"], "agree", "{x}");
    }
    // The NIC sent no pause and no CNP, and the capture shows none from the host.
    assert_eq!(row(&r, "pause_tx", Some(3))["status"], "agree");
    assert_eq!(row(&r, "cnp_sent", None)["capture"], 0);
    assert!(disagreements(&r).is_empty(), "{:?}", disagreements(&r));
    // Counters no figure takes are kept.
    let unmapped = c["unmapped"].as_array().unwrap();
    assert!(unmapped.iter().any(|u| u["name"] == "rx_prio3_pause_transition" && u["value"] == 1));
    assert!(unmapped.iter().any(|u| u["name"] == "roce_adp_retrans" && u["port"] == "mlx5_0/1"));
}

#[test]
fn counters_that_disagree_make_warnings_by_direction() {
    let r = report(&["--counters", &path("counters/disagree.txt"), "--counters-host", HOST]);
    assert_eq!(row(&r, "pause_tx", Some(3))["status"], "capture_misses");
    assert_eq!(row(&r, "cnp_sent", None)["status"], "capture_misses");
    assert_eq!(row(&r, "cnp_handled", None)["status"], "capture_more");
    // Received pauses still agree: the direction is told apart by the MAC.
    assert_eq!(row(&r, "pause_rx", Some(3))["status"], "agree");
    // Durations and NIC-inferred events are shown, not judged.
    assert_eq!(row(&r, "pause_tx_duration_us", Some(3))["status"], "not_compared");
    assert_eq!(row(&r, "ecn_marked_received", None)["status"], "not_compared");
    let d = disagreements(&r);
    assert_eq!(d.len(), 3, "{d:?}");
    assert!(d.iter().any(|t| t.starts_with(
        "the NIC sent 12 PFC pause frames on priority 3 (tx_prio3_pause) while the capture saw none from 02:00:00:00:00:05: the capture misses the NIC's transmit direction"
    )), "{d:?}");
    assert!(
        d.iter().any(
            |t| t.starts_with("the NIC sent 7 CNPs (np_cnp_sent) and the capture saw none from 10.0.0.5")
        ),
        "{d:?}"
    );
    assert!(d.iter().any(|t| t.starts_with(
        "the capture shows 2 CNPs sent to the host (10.0.0.5), more than the NIC counted between the snapshots (1, rp_cnp_handled)"
    )), "{d:?}");
    // Counted in the summary like every finding.
    let plain = report(&[]);
    assert_eq!(
        r["summary"]["findings"]["warning"].as_u64().unwrap(),
        plain["summary"]["findings"]["warning"].as_u64().unwrap() + 3
    );
    // The text report lists them and the COUNTERS section.
    let demo = path("demo.pcap");
    let o =
        run(&["report", "-r", &demo, "--counters", &path("counters/disagree.txt"), "--counters-host", HOST]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("\nCOUNTERS (") && text.contains("capture_misses"), "{text}");
    assert!(text.contains("WARNING   the NIC sent 12 PFC pause frames on priority 3"), "{text}");
}

/// Without --counters-host the capture's figures are the whole capture's: the NIC's 12 sent
/// pauses meet the capture's 30 on the priority (from any MAC, the switch's among them), so
/// nothing is missed, and nothing is called more than the NIC counted.
#[test]
fn without_a_host_only_a_missing_priority_is_judged() {
    let r = report(&["--counters", &path("counters/disagree.txt")]);
    assert_eq!(row(&r, "pause_tx", Some(3))["status"], "not_compared");
    assert_eq!(row(&r, "cnp_handled", None)["status"], "not_compared");
    // np_cnp_sent 7 against the capture's 4 CNPs: more, not missing.
    assert_eq!(row(&r, "cnp_sent", None)["status"], "nic_more");
    assert!(disagreements(&r).is_empty(), "{:?}", disagreements(&r));
    assert!(r["counters"]["notes"].to_string().contains("no --counters-host"));
}

#[test]
fn one_snapshot_is_shown_and_never_compared() {
    let r = report(&["--counters", &path("counters/single.txt"), "--counters-host", HOST]);
    let c = &r["counters"];
    assert_eq!(c["mode"], "absolute");
    assert_eq!(c["ports"], serde_json::json!(["mlx5_0/1", "mlx5_1/1"]));
    // Two ports summed: 13990 + 5.
    assert_eq!(row(&r, "cnp_sent", None)["nic"], 13995);
    assert!(c["figures"].as_array().unwrap().iter().all(|x| x["status"] == "not_compared"));
    assert!(disagreements(&r).is_empty());
    assert!(c["notes"][0].as_str().unwrap().contains("since the NIC's counters were last reset"), "{c}");
    let demo = path("demo.pcap");
    let o = run(&["report", "-r", &demo, "--counters", &path("counters/single.txt")]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("ONE snapshot: absolute values"), "{text}");
}

/// A pcapng file's own drop counters (its Interface Statistics Blocks: 18 dropped in
/// `capture/demo-isb.pcapng`) explain what the capture missed, as a live capture's libpcap
/// drops do: the NIC's 12 sent pauses and 7 sent CNPs, none in the capture, are
/// `loss_explains`, not a disagreement; the capture seeing more CNPs than the NIC handled
/// still is one.
#[test]
fn a_pcapng_files_recorded_drops_explain_what_the_capture_missed() {
    let isb = path("capture/demo-isb.pcapng");
    let o = run(&[
        "report",
        "--json",
        "-r",
        &isb,
        "--counters",
        &path("counters/disagree.txt"),
        "--counters-host",
        HOST,
    ]);
    let r = common::report_json(&o.stdout);
    assert_eq!(r["points"][0]["capture_counters"]["dropped"], 18);
    assert_eq!(row(&r, "pause_tx", Some(3))["status"], "loss_explains");
    assert_eq!(row(&r, "cnp_sent", None)["status"], "loss_explains");
    assert_eq!(row(&r, "cnp_handled", None)["status"], "capture_more");
    assert_eq!(disagreements(&r).len(), 1, "{:?}", disagreements(&r));
}

#[test]
fn irdma_names_and_a_repeated_dump_give_deltas() {
    let r = report(&["--counters", &path("counters/irdma-hw-counters.txt")]);
    assert_eq!(r["counters"]["mode"], "delta");
    assert_eq!(row(&r, "cnp_handled", None)["nic"], 2);
    assert_eq!(row(&r, "cnp_handled", None)["counters"], serde_json::json!(["irdma0/1 cnpHandled"]));
}

#[test]
fn counters_that_went_backwards_have_no_delta() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("reset.txt");
    std::fs::write(
        &f,
        "NIC statistics:\n     tx_prio3_pause: 50\n# after\nNIC statistics:\n     tx_prio3_pause: 3\n",
    )
    .unwrap();
    let r = report(&["--counters", f.to_str().unwrap(), "--counters-host", HOST]);
    assert_eq!(row(&r, "pause_tx", Some(3))["nic"], Value::Null);
    assert_eq!(r["counters"]["went_backwards"], serde_json::json!(["ethtool -S tx_prio3_pause"]));
    assert!(disagreements(&r).is_empty());
}

/// CNPs reaching the NIC are handled or ignored: 1 handled and 1 ignored are the capture's 2.
#[test]
fn ignored_cnps_count_towards_those_the_capture_shows() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("cnp.txt");
    std::fs::write(
        &f,
        "# before\nlink mlx5_0/1 rp_cnp_handled 10 rp_cnp_ignored 5\n# after\nlink mlx5_0/1\n    rp_cnp_handled 11\n    rp_cnp_ignored 6\n",
    )
    .unwrap();
    let r = report(&["--counters", f.to_str().unwrap(), "--counters-host", HOST]);
    assert_eq!(row(&r, "cnp_handled", None)["nic"], 1);
    assert_ne!(row(&r, "cnp_handled", None)["status"], "capture_more");
    assert!(disagreements(&r).is_empty(), "{:?}", disagreements(&r));
}

/// Each (file name, contents, error) of `cases`, written under `dir` and given to
/// `--counters` on `demo`: refused with exit status 1 before any report, in one line that
/// holds the error.
fn refused(dir: &std::path::Path, demo: &str, cases: &[(&str, &str, &str)]) {
    for (name, body, want) in cases {
        let f = dir.join(name);
        std::fs::write(&f, body).unwrap();
        let o = run(&["report", "-r", demo, "--counters", f.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{name}: {err}");
        assert!(o.stdout.is_empty(), "{name}: no report before the error");
        assert!(err.contains(want), "{name}: {err}");
        assert_eq!(err.lines().count(), 1, "{name}: said once: {err}");
    }
}

#[test]
fn a_bad_counter_file_is_an_error_naming_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let demo = path("demo.pcap");
    let cases: [(&str, &str, &str); 4] = [
        (
            "bad.txt",
            "NIC statistics:\n     rx_prio3_pause: 12x\n",
            "bad.txt: line 2: counter `rx_prio3_pause` has the value `12x`, not a whole number",
        ),
        (
            "junk.txt",
            "NIC statistics:\n     rx_packets: 1\nthis is not a counter\n",
            "junk.txt: line 3: `this is not a counter` is not `ethtool -S`",
        ),
        ("empty.txt", "\n", "empty.txt: no counters in it"),
        (
            "three.txt",
            "# before\nlink m/1 a 1\n# after\nlink m/1 a 2\n# after\nlink m/1 a 3\n",
            "three.txt: line 5: a third snapshot starts here",
        ),
    ];
    refused(dir.path(), &demo, &cases);
    // A missing file, binary garbage, two files with two snapshots, three files, a bad host.
    let o = run(&["report", "-r", &demo, "--counters", "/nonexistent/counters.txt"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot read counter file /nonexistent/counters.txt"));
    let bin = dir.path().join("bin.txt");
    std::fs::write(&bin, [0u8, 159, 146, 150, b':', 0xff, b'\n']).unwrap();
    let o = run(&["report", "-r", &demo, "--counters", bin.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
    let dis = path("counters/disagree.txt");
    let o = run(&["report", "-r", &demo, "--counters", &dis, "--counters", &dis]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("holds 2 snapshots"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = run(&["report", "-r", &demo, "--counters", &dis, "--counters", &dis, "--counters", &dis]);
    assert_eq!(o.status.code(), Some(1));
    let o = run(&["report", "-r", &demo, "--counters", &dis, "--counters-host", "eth0"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--counters-host: `eth0` is neither"));
    // --counters-host alone is a usage error.
    let o = run(&["report", "-r", &demo, "--counters-host", HOST]);
    assert_eq!(o.status.code(), Some(2));
}

/// `export --counters`: the same figures as Prometheus series (docs/metrics.md).
#[test]
fn the_exporter_serves_the_figures() {
    let demo = path("demo.pcap");
    let dis = path("counters/disagree.txt");
    let o = run(&[
        "export",
        "-r",
        &demo,
        "--no-http",
        "--push",
        "-",
        "--counters",
        &dis,
        "--counters-host",
        HOST,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let line: Value = serde_json::from_slice(o.stdout.split(|b| *b == b'\n').next().unwrap()).unwrap();
    let value = |name: &str, figure: &str, prio: Option<&str>| {
        line["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| {
                m["name"] == name
                    && m["labels"]["figure"] == figure
                    && m["labels"]["priority"].as_str() == prio
            })
            .and_then(|m| m["value"].as_f64())
    };
    assert_eq!(value("rocescope_nic_figure", "pause_tx", Some("3")), Some(12.0));
    assert_eq!(value("rocescope_nic_figure_capture", "pause_tx", Some("3")), Some(0.0));
    assert_eq!(value("rocescope_nic_figure_disagree", "pause_tx", Some("3")), Some(1.0));
    assert_eq!(value("rocescope_nic_figure_disagree", "pause_rx", Some("3")), Some(0.0));
    assert_eq!(value("rocescope_nic_figure", "cnp_sent", None), Some(7.0));
    // A bad file stops the exporter before it starts.
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.txt");
    std::fs::write(&bad, "link mlx5_0/1 np_cnp_sent x\n").unwrap();
    let o = run(&["export", "-r", &demo, "--no-http", "--push", "-", "--counters", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr)
        .contains("bad.txt: line 1: counter `np_cnp_sent` has the value `x`"));
}

/// bnxt_en's `ethtool -S` (samples/counters/bnxt-ethtool-*.txt): the frames naming a priority
/// (XON too) and the paused µs agree with the capture; 802.3x PAUSE counts the XON the
/// capture's figure leaves out, so the NIC counts one more, which is no finding.
#[test]
fn bnxt_ethtool_counters_agree_with_the_capture() {
    let (b, a) = (path("counters/bnxt-ethtool-before.txt"), path("counters/bnxt-ethtool-after.txt"));
    let r = report(&["--counters", &b, "--counters", &a, "--counters-host", HOST]);
    let c = &r["counters"];
    assert_eq!(c["mode"], "delta");
    assert_eq!(c["ports"], serde_json::json!(["ethtool -S"]));
    for (figure, prio, n, counter) in [
        ("pfc_frames_rx", Some(3), 31, "rx_pfc_ena_frames_pri3"),
        ("pfc_frames_rx", Some(5), 3, "rx_pfc_ena_frames_pri5"),
        ("pause_rx_duration_us", Some(3), 9024, "pfc_pri3_rx_duration_us"),
        ("pause_rx_duration_us", Some(5), 15, "pfc_pri5_rx_duration_us"),
        ("pfc_frames_tx", Some(3), 0, "tx_pfc_ena_frames_pri3"),
        ("pause_tx_duration_us", Some(3), 0, "pfc_pri3_tx_duration_us"),
        ("link_pause_tx", None, 0, "tx_pause_frames"),
    ] {
        let x = row(&r, figure, prio);
        assert_eq!((x["nic"].as_u64(), x["capture"].as_u64()), (Some(n), Some(n)), "{x}");
        assert_eq!(x["status"], "agree", "{x}");
        assert_eq!(x["counters"], serde_json::json!([format!("ethtool -S {counter}")]), "{x}");
    }
    let pause = row(&r, "link_pause_rx", None);
    assert_eq!((pause["nic"].as_u64(), pause["capture"].as_u64()), (Some(3), Some(2)), "{pause}");
    assert_eq!(pause["status"], "nic_more");
    assert_eq!(pause["counters"], serde_json::json!(["ethtool -S rx_pause_frames"]));
    let discards = row(&r, "rx_discards", None);
    assert_eq!((discards["nic"].as_u64(), discards["status"].as_str()), (Some(0), Some("not_compared")));
    // Every priority's frame counter has its row; no mlx5 figure is filled.
    let figures = c["figures"].as_array().unwrap();
    assert_eq!(figures.iter().filter(|x| x["figure"] == "pfc_frames_tx").count(), 8);
    assert!(!figures.iter().any(|x| x["figure"] == "pause_rx" || x["figure"] == "pause_tx"));
    assert!(disagreements(&r).is_empty(), "{:?}", disagreements(&r));
    // Transitions, all-priority totals and ring counters are kept, not mapped.
    let unmapped = c["unmapped"].as_array().unwrap();
    for (name, v) in [("pfc_pri3_rx_transitions", 2), ("rx_pfc_frames", 34), ("[0]: rx_ucast_packets", 60)] {
        assert!(unmapped.iter().any(|u| u["name"] == name && u["value"] == v), "{name}: {unmapped:?}");
    }
    // The text report.
    let demo = path("demo.pcap");
    let o = run(&["report", "-r", &demo, "--counters", &b, "--counters", &a, "--counters-host", HOST]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.lines().any(|l| l.starts_with("  PFC frames received +XON prio 3") && l.contains(" 31  agree ")),
        "{text}"
    );
    assert!(text.lines().any(|l| l.starts_with("  PAUSE received") && l.contains("nic_more")), "{text}");
}

/// PFC frames a bnxt NIC sent that the capture never saw: a warning, by the host's MAC.
#[test]
fn bnxt_pfc_frames_the_capture_never_saw_are_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let after = std::fs::read_to_string(path("counters/bnxt-ethtool-after.txt")).unwrap();
    assert!(after.contains("     tx_pfc_ena_frames_pri3: 57\n"));
    let f = dir.path().join("after.txt");
    std::fs::write(
        &f,
        after.replace("     tx_pfc_ena_frames_pri3: 57\n", "     tx_pfc_ena_frames_pri3: 69\n"),
    )
    .unwrap();
    let b = path("counters/bnxt-ethtool-before.txt");
    let r = report(&["--counters", &b, "--counters", f.to_str().unwrap(), "--counters-host", HOST]);
    let x = row(&r, "pfc_frames_tx", Some(3));
    assert_eq!((x["nic"].as_u64(), x["capture"].as_u64()), (Some(12), Some(0)), "{x}");
    assert_eq!(x["status"], "capture_misses");
    let d = disagreements(&r);
    assert_eq!(d.len(), 1, "{d:?}");
    assert!(d[0].starts_with(
        "the NIC sent 12 PFC frames (XON too) on priority 3 (tx_pfc_ena_frames_pri3) while the capture saw none from 02:00:00:00:00:05: the capture misses the NIC's transmit direction"
    ), "{d:?}");
}

/// `rdma -j -p statistic show` twice in one file (samples/counters/rdma-json.json): one
/// snapshot per document, counters per port.
#[test]
fn rdma_json_documents_give_deltas_per_port() {
    let json = path("counters/rdma-json.json");
    let r = report(&["--counters", &json, "--counters-host", HOST]);
    let c = &r["counters"];
    assert_eq!(c["mode"], "delta");
    assert_eq!(c["ports"], serde_json::json!(["mlx5_0/1", "mlx5_1/1"]));
    for (figure, n) in [("cnp_handled", 2), ("local_ack_timeout", 1)] {
        let x = row(&r, figure, None);
        assert_eq!(
            (x["nic"].as_u64(), x["capture"].as_u64(), x["status"].as_str()),
            (Some(n), Some(n), Some("agree"))
        );
    }
    let sent = row(&r, "cnp_sent", None);
    assert_eq!((sent["nic"].as_u64(), sent["capture"].as_u64()), (Some(7), Some(0)), "{sent}");
    assert_eq!(sent["status"], "capture_misses");
    assert_eq!(sent["counters"], serde_json::json!(["mlx5_0/1 np_cnp_sent", "mlx5_1/1 np_cnp_sent"]));
    assert_eq!(row(&r, "ecn_marked_received", None)["status"], "not_compared");
    let d = disagreements(&r);
    assert_eq!(d.len(), 1, "{d:?}");
    assert!(
        d[0].starts_with("the NIC sent 7 CNPs (np_cnp_sent) and the capture saw none from 10.0.0.5"),
        "{d:?}"
    );
    let unmapped = c["unmapped"].as_array().unwrap();
    assert!(unmapped
        .iter()
        .any(|u| u["port"] == "mlx5_1/1" && u["name"] == "rx_write_requests" && u["value"] == 3));
    assert!(!unmapped.iter().any(|u| u["name"] == "ifname" || u["name"] == "port"));
    // The two documents as two files (before, after): the same rows.
    let text = std::fs::read_to_string(&json).unwrap();
    let cut = text.find("} ]\n").unwrap() + 4;
    let dir = tempfile::tempdir().unwrap();
    let (fb, fa) = (dir.path().join("before.json"), dir.path().join("after.json"));
    std::fs::write(&fb, &text[..cut]).unwrap();
    std::fs::write(&fa, &text[cut..]).unwrap();
    let two = report(&[
        "--counters",
        fb.to_str().unwrap(),
        "--counters",
        fa.to_str().unwrap(),
        "--counters-host",
        HOST,
    ]);
    assert_eq!(two["counters"]["figures"], c["figures"]);
    // One document alone: absolute values, never compared.
    let one = report(&["--counters", fb.to_str().unwrap(), "--counters-host", HOST]);
    assert_eq!(one["counters"]["mode"], "absolute");
    assert_eq!(row(&one, "cnp_sent", None)["nic"], 13995);
    assert!(disagreements(&one).is_empty());
}

/// JSON that is not `rdma -j statistic show`: an error naming the file, the line and what
/// was expected, before any frame is read.
#[test]
fn json_that_is_not_rdma_statistic_show_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let demo = path("demo.pcap");
    let cases: [(&str, &str, &str); 4] = [
        (
            "qp.json",
            "[ {\n        \"ifindex\": 0,\n        \"port\": 1,\n        \"ifname\": \"mlx5_0\",\n        \"cntn\": 4,\n        \"rx_write_requests\": 0,\n        \"lqpn\": [ 178 ]\n    } ]\n",
            "qp.json: line 1: a QP counter (`cntn`, `lqpn`: `rdma statistic qp show` output), not a port's: give `rdma -j statistic show`",
        ),
        (
            "other.json",
            "{\"version\": 1, \"counters\": {\"np_cnp_sent\": 3}}\n",
            "other.json: line 1: a JSON object without `ifname` (a string) and `port` (a number): not `rdma -j statistic show` output",
        ),
        (
            "cut.json",
            "[ {\n        \"ifname\": \"mlx5_0\",\n        \"port\": 1,\n        \"np_cnp_sent\": 3\n",
            "cut.json: line 5: not valid JSON (EOF while parsing an object) in the JSON document that starts on line 1",
        ),
        (
            "state.json",
            "[{\"ifname\":\"mlx5_0\",\"port\":1,\"state\":\"ACTIVE\"}]\n",
            "state.json: line 1: counter `state` of `mlx5_0/1` has the value `\"ACTIVE\"`, not a whole number",
        ),
    ];
    refused(dir.path(), &demo, &cases);
}

/// The JSON report of `samples/nak-beyond.pcap` (captured at the requester's link: 5 packets
/// lost beyond it, NAKed and resent by go-back-N; a 3-packet WRITE resent after one ACK
/// timeout) with these extra arguments.
fn nak_beyond(extra: &[&str]) -> Value {
    let pcap = path("nak-beyond.pcap");
    let mut args = vec!["report", "--json", "-r", pcap.as_str()];
    args.extend_from_slice(extra);
    let o = run(&args);
    assert!(!o.stdout.is_empty(), "{}", String::from_utf8_lossy(&o.stderr));
    common::report_json(&o.stdout)
}

fn finding_of<'a>(r: &'a Value, kind: &str) -> Vec<&'a Value> {
    r["findings"].as_array().unwrap().iter().filter(|f| f["kind"] == kind).collect()
}

/// Losses counted as the NIC counts them (docs/counters.md "Units"): per lost packet in the
/// finding (5 NAKed losses are 5 packets, not 1), one ACK timeout per timer expiry however
/// many packets it resent (the requester's `local_ack_timeout_err` 1 against 3 resends),
/// one sequence-error NAK per NAK (`packet_seq_err` 5).
#[test]
fn losses_count_per_packet_and_timeouts_per_expiry() {
    let plain = nak_beyond(&[]);
    let loss = finding_of(&plain, "network_loss");
    assert_eq!(loss.len(), 1);
    let title = loss[0]["title"].as_str().unwrap();
    assert!(
        title.contains(": 5 packets lost in the network (beyond this capture point: no gap here; 5 NAKed PSNs it saw pass)"),
        "{title}"
    );
    let data = plain["flows"].as_array().unwrap().iter().find(|f| f["dest_qp"] == 0x132).unwrap();
    assert_eq!(
        (
            &data["psn"]["network_loss_packets"],
            &data["psn"]["lost_beyond_point"],
            &data["psn"]["resent_out_of_sequence"]
        ),
        (&Value::from(5), &Value::from(5), &Value::from(10))
    );
    let r = nak_beyond(&[
        "--counters",
        &path("counters/nak-beyond-requester.txt"),
        "--counters-host",
        "10.0.0.51",
    ]);
    for (figure, n) in [("seq_err_nak_received", 5), ("local_ack_timeout", 1)] {
        let x = row(&r, figure, None);
        assert_eq!(
            (x["nic"].as_u64(), x["capture"].as_u64(), x["status"].as_str()),
            (Some(n), Some(n), Some("agree")),
            "{x}"
        );
    }
    let timeouts = r["flows"].as_array().unwrap().iter().find(|f| f["dest_qp"] == 0x142).unwrap();
    assert_eq!(
        (&timeouts["psn"]["retransmits_timeout"], &timeouts["psn"]["timeout_events"]),
        (&Value::from(3), &Value::from(1))
    );
    assert!(disagreements(&r).is_empty(), "{:?}", disagreements(&r));
    // The responder's out_of_sequence counts packets: the 10 that reached it after a missing
    // one, resent by go-back-N (the capture's figure was its 5 NAKs).
    let r = nak_beyond(&[
        "--counters",
        &path("counters/nak-beyond-responder.txt"),
        "--counters-host",
        "10.0.0.52",
    ]);
    let x = row(&r, "out_of_sequence", None);
    assert_eq!(
        (x["nic"].as_u64(), x["capture"].as_u64(), x["status"].as_str()),
        (Some(10), Some(10), Some("agree")),
        "{x}"
    );
}

/// PFC moving on another priority than the one RoCE travels on (the responder's NIC pauses
/// priority 4, RoCE comes to it on 3): a warning naming both; none where PFC moves on RoCE's
/// priority (the demo's counter files), and none from one snapshot.
#[test]
fn pfc_on_another_priority_than_roces_is_a_warning_naming_both() {
    let resp = path("counters/nak-beyond-responder.txt");
    let r = nak_beyond(&["--counters", &resp, "--counters-host", "10.0.0.52,02:00:00:00:00:34"]);
    let m = finding_of(&r, "pfc_priority_mismatch");
    assert_eq!(m.len(), 1, "{:#}", r["findings"]);
    assert_eq!((m[0]["severity"].as_str(), m[0]["priority"].as_u64()), (Some("warning"), Some(4)));
    let title = m[0]["title"].as_str().unwrap();
    assert!(
        title.starts_with("the NIC sent 12 PFC pause frames on priority 4 (tx_prio4_pause) and none on priority 3, where the capture shows the RoCE coming to the host (10.0.0.52)"),
        "{title}"
    );
    assert!(
        title.contains("the NIC lists no pause counter for priority 3: on mlx5 that means PFC is off there"),
        "{title}"
    );
    // Without a host: the whole capture's RoCE, on 3 too: the same verdict.
    assert_eq!(finding_of(&nak_beyond(&["--counters", &resp]), "pfc_priority_mismatch").len(), 1);
    // PFC on RoCE's own priority (the demo's host, paused and pausing on 3): nothing.
    let (b, a) = (path("counters/agree-before.txt"), path("counters/agree-after.txt"));
    let disagree = path("counters/disagree.txt");
    for extra in [
        vec!["--counters", b.as_str(), "--counters", a.as_str(), "--counters-host", HOST],
        vec!["--counters", disagree.as_str(), "--counters-host", HOST],
    ] {
        assert!(finding_of(&report(&extra), "pfc_priority_mismatch").is_empty());
    }
    // One snapshot: absolute values, never a finding.
    let dir = tempfile::tempdir().unwrap();
    let one = dir.path().join("one.txt");
    let text = std::fs::read_to_string(&resp).unwrap();
    std::fs::write(&one, text.split("# after").nth(1).unwrap()).unwrap();
    let r = nak_beyond(&["--counters", one.to_str().unwrap(), "--counters-host", "10.0.0.52"]);
    assert!(finding_of(&r, "pfc_priority_mismatch").is_empty());
}

/// Losses beyond the capture point on their way to the host, and the host's NIC counting
/// receive drops over the capture (`rx_discards_phy` +5): the finding says the packets were
/// dropped in the host's NIC, not in the network; with fewer drops than losses, that up to
/// that many were; without the host's IP or without drops, nothing changes.
#[test]
fn nic_receive_drops_place_the_losses_beyond_the_capture_point() {
    let resp = path("counters/nak-beyond-responder.txt");
    let r = nak_beyond(&["--counters", &resp, "--counters-host", "10.0.0.52"]);
    let loss = finding_of(&r, "network_loss");
    let title = loss[0]["title"].as_str().unwrap();
    assert_eq!(loss[0]["severity"], "critical");
    assert!(!title.contains("in the network ("), "{title}");
    assert!(
        title.contains(": 5 packets lost (beyond this capture point: no gap here; 5 NAKed PSNs it saw pass)")
            && title.ends_with("; dropped in the host's NIC receive buffer, not in the network: the host's NIC counted 5 receive drops between the counter snapshots (rx_discards_phy) against 5 packets lost beyond the capture point on their way to it"),
        "{title}"
    );
    let d = &r["counters"]["nic_drops"];
    assert_eq!((d["lost_beyond"].as_u64(), d["nic_dropped"].as_u64()), (Some(5), Some(5)), "{d}");
    assert_eq!(d["counters"], serde_json::json!(["ethtool -S rx_discards_phy"]));
    assert_eq!(d["flows"][0]["packets"], 5);
    assert_eq!(r["flows"][d["flows"][0]["flow"].as_u64().unwrap() as usize]["dest_qp"], 0x132);
    // Fewer drops than losses: some of them.
    let dir = tempfile::tempdir().unwrap();
    let two = dir.path().join("two.txt");
    std::fs::write(
        &two,
        std::fs::read_to_string(&resp).unwrap().replace("rx_discards_phy: 22", "rx_discards_phy: 19"),
    )
    .unwrap();
    let r = nak_beyond(&["--counters", two.to_str().unwrap(), "--counters-host", "10.0.0.52"]);
    let title = finding_of(&r, "network_loss")[0]["title"].as_str().unwrap().to_string();
    assert!(title.contains("5 packets lost in the network (beyond"), "{title}");
    assert!(title.contains("; up to 2 of those lost beyond the capture point were dropped in the host's NIC receive buffer, the rest in the network"), "{title}");
    // No host IP (whose NIC?), the other host (no loss on its way), no drops: unchanged.
    let plain = finding_of(&nak_beyond(&[]), "network_loss")[0]["title"].clone();
    let requester = path("counters/nak-beyond-requester.txt");
    for extra in [
        vec!["--counters", resp.as_str()],
        vec!["--counters", resp.as_str(), "--counters-host", "10.0.0.51"],
        vec!["--counters", requester.as_str(), "--counters-host", "10.0.0.51"],
    ] {
        let r = nak_beyond(&extra);
        assert_eq!(finding_of(&r, "network_loss")[0]["title"], plain, "{extra:?}");
        assert!(r["counters"].get("nic_drops").is_none(), "{extra:?}");
    }
}
