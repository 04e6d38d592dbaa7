//! `rocescope export` as a fleet runs it: a real Prometheus server (Debian's `prometheus`,
//! on loopback) scrapes the exporter with the shipped scrape config, and its HTTP API must
//! answer with the series and values the report gives. Also: the shipped rules and config
//! pass promtool, the dashboard loads and asks only for metrics the exporter serves, and
//! the exporter's own endpoints, errors and NDJSON push. Tests that need prometheus or
//! promtool skip (with a message) where they are missing; `.ci/run` installs them.

mod common;

use serde_json::Value;
use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_rocescope")
}

fn sample(name: &str) -> PathBuf {
    common::root().join("samples").join(name)
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).expect("a free port")
}

/// Kills the child when dropped, so a failed assertion leaves no server behind.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A plain HTTP/1.0 GET: status and body.
fn get(port: u16, path: &str, accept: Option<&str>) -> Option<(u16, String)> {
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(2)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    let accept = accept.map(|a| format!("Accept: {a}\r\n")).unwrap_or_default();
    write!(s, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n{accept}\r\n").ok()?;
    let mut buf = String::new();
    s.read_to_string(&mut buf).ok()?;
    let (head, body) = buf.split_once("\r\n\r\n")?;
    let status = head.split_whitespace().nth(1)?.parse().ok()?;
    Some((status, body.to_string()))
}

fn wait_http(port: u16, path: &str) -> (u16, String) {
    let t0 = Instant::now();
    loop {
        if let Some(r) = get(port, path, None) {
            return r;
        }
        assert!(t0.elapsed() < Duration::from_secs(30), "nothing answered on port {port}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn start_export(args: &[&str]) -> (Running, u16) {
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let child = Command::new(bin())
        .arg("export")
        .args(args)
        .args(["--listen", &listen])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the exporter");
    let r = Running(child);
    // Wait until the file is analysed (final figures).
    let t0 = Instant::now();
    loop {
        let (code, body) = wait_http(port, "/healthz");
        assert_eq!(code, 200, "{body}");
        let v: Value = serde_json::from_str(&body).expect("healthz is JSON");
        if v["done"] == true {
            break;
        }
        assert!(t0.elapsed() < Duration::from_secs(30), "the file never finished: {body}");
        std::thread::sleep(Duration::from_millis(100));
    }
    (r, port)
}

fn report_json(files: &[&Path]) -> Value {
    let mut cmd = Command::new(bin());
    cmd.args(["report", "--json"]);
    for f in files {
        cmd.arg("-r").arg(f);
    }
    let o = cmd.output().expect("report");
    common::report_json(&o.stdout)
}

/// `name{labels} value` lines of a Prometheus text exposition.
fn samples(text: &str) -> Vec<(String, String, f64)> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .filter_map(|l| {
            let (series, value) = l.rsplit_once(' ')?;
            let (name, labels) = match series.split_once('{') {
                Some((n, rest)) => (n.to_string(), rest.trim_end_matches('}').to_string()),
                None => (series.to_string(), String::new()),
            };
            Some((name, labels, value.parse().ok()?))
        })
        .collect()
}

fn sum(text: &str, name: &str, label_part: &str) -> f64 {
    samples(text).iter().filter(|(n, l, _)| n == name && l.contains(label_part)).map(|(_, _, v)| v).sum()
}

#[test]
fn metrics_agree_with_the_report_and_other_keeps_the_sums() {
    let (_exp, port) = start_export(&["-r", sample("demo.pcap").to_str().unwrap(), "--top-flows", "3"]);
    let (code, text) = get(port, "/metrics", None).expect("scrape");
    assert_eq!(code, 200);
    let r = report_json(&[&sample("demo.pcap")]);
    let flows = r["flows"].as_array().unwrap();
    let total = |f: &dyn Fn(&Value) -> u64| flows.iter().map(f).sum::<u64>() as f64;
    assert_eq!(sum(&text, "rocescope_flow_packets_total", ""), total(&|f| f["packets"].as_u64().unwrap()));
    assert_eq!(sum(&text, "rocescope_flow_bytes_total", ""), total(&|f| f["bytes"].as_u64().unwrap()));
    assert_eq!(sum(&text, "rocescope_cnp_packets_total", ""), r["summary"]["cnps"].as_f64().unwrap());
    assert_eq!(sum(&text, "rocescope_icrc_errors_total", ""), r["summary"]["icrc_bad"].as_f64().unwrap());
    assert_eq!(
        sum(&text, "rocescope_retransmitted_packets_total", ""),
        total(&|f| f["psn"]["retransmits"].as_u64().unwrap())
    );
    assert_eq!(sum(&text, "rocescope_rnr_naks_total", ""), total(&|f| f["naks"]["rnr"].as_u64().unwrap()));
    assert_eq!(sum(&text, "rocescope_frames_total", ""), 182.0);
    // Three flows plus `other` per label set.
    let qps: BTreeSet<String> = samples(&text)
        .into_iter()
        .filter(|(n, _, _)| n == "rocescope_flow_packets_total")
        .map(|(_, l, _)| l)
        .collect();
    assert_eq!(qps.len(), 4, "{qps:?}");
    assert!(qps.iter().any(|l| l.contains("qp=\"other\"")));
    // PFC per (MAC, priority): the storm on priority 3.
    let pfc = r["pfc"].as_array().unwrap();
    let p3 = pfc.iter().find(|p| p["kind"] == "pfc" && p["priority"] == 3).unwrap();
    assert_eq!(
        sum(&text, "rocescope_pfc_pause_frames_total", "priority=\"3\""),
        p3["pause_frames"].as_f64().unwrap()
    );
    assert_eq!(
        sum(&text, "rocescope_pfc_paused_seconds_total", "priority=\"3\""),
        p3["paused_ns"].as_f64().unwrap() / 1e9
    );
    // OpenMetrics when asked for it.
    let (_, om) = get(port, "/metrics", Some("application/openmetrics-text; version=1.0.0")).unwrap();
    assert!(om.trim_end().ends_with("# EOF"), "OpenMetrics ends with # EOF");
    assert!(om.contains("# UNIT rocescope_pfc_paused_seconds seconds"));
    // Other paths.
    assert_eq!(get(port, "/nope", None).unwrap().0, 404);
    let (code, body) = get(port, "/healthz", None).unwrap();
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!((code, v["status"].as_str(), v["packets"].as_u64()), (200, Some("ok"), Some(182)));
}

#[test]
fn prometheus_scrapes_the_exporter_with_the_shipped_config() {
    if Command::new("prometheus").arg("--version").output().is_err() {
        common::skip("prometheus not installed (apt-get install prometheus)");
        return;
    }
    // The two-point pair (a loss between them) and the demo (every other scenario: storms,
    // NAKs, CNPs, audit), so every dashboard panel has data.
    let (_exp, port) = start_export(&[
        "-r",
        sample("two-points-sender.pcap").to_str().unwrap(),
        "-r",
        sample("two-points-receiver.pcap").to_str().unwrap(),
        "-r",
        sample("demo.pcap").to_str().unwrap(),
        "--expect-dscp",
        "26",
    ]);
    let dir = tempfile::tempdir().unwrap();
    // The shipped config and rules, with the exporter's test port.
    let shipped = std::fs::read_to_string(common::root().join("deploy/prometheus/prometheus.yml")).unwrap();
    assert!(shipped.contains("127.0.0.1:9464"), "the shipped config scrapes the default port");
    std::fs::write(
        dir.path().join("prometheus.yml"),
        shipped.replace("127.0.0.1:9464", &format!("127.0.0.1:{port}")),
    )
    .unwrap();
    std::fs::copy(
        common::root().join("deploy/prometheus/rocescope.rules.yml"),
        dir.path().join("rocescope.rules.yml"),
    )
    .unwrap();
    let prom_port = free_port();
    let prom = Command::new("prometheus")
        .arg(format!("--config.file={}", dir.path().join("prometheus.yml").display()))
        .arg(format!("--storage.tsdb.path={}", dir.path().join("data").display()))
        .arg(format!("--web.listen-address=127.0.0.1:{prom_port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start prometheus");
    let _prom = Running(prom);
    let query = |q: &str| -> Vec<Value> {
        let path = format!("/api/v1/query?query={}", encode(q));
        let (code, body) = wait_http(prom_port, &path);
        if code != 200 {
            return Vec::new(); // still starting
        }
        let v: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
        v["data"]["result"].as_array().cloned().unwrap_or_default()
    };
    let value = |v: &Value| v["value"][1].as_str().and_then(|s| s.parse::<f64>().ok()).unwrap();
    // Wait for the first scrape (every 5 s in the shipped config).
    let t0 = Instant::now();
    let up = loop {
        let r = query("up{job=\"rocescope\"}");
        if let Some(u) = r.first() {
            break value(u);
        }
        assert!(t0.elapsed() < Duration::from_secs(60), "Prometheus never scraped the exporter");
        std::thread::sleep(Duration::from_millis(500));
    };
    assert_eq!(up, 1.0, "the scrape succeeded");
    let t0 = Instant::now();
    let lost = loop {
        let r = query("rocescope_lost_between_points_packets_total");
        if !r.is_empty() {
            break r;
        }
        assert!(t0.elapsed() < Duration::from_secs(30), "no lost-between-points series");
        std::thread::sleep(Duration::from_millis(500));
    };
    assert_eq!(lost.len(), 1);
    let m = &lost[0]["metric"];
    assert_eq!(m["from"], "two-points-sender.pcap");
    assert_eq!(m["to"], "two-points-receiver.pcap");
    assert_eq!(m["qp"], "0x000072");
    assert_eq!(value(&lost[0]), 1.0);
    // Per point: the sender's NIC saw all 11 request packets (8 new + 3 resent); the
    // receiver's, the 10 the fabric delivered.
    let sent = query("sum by (point) (rocescope_flow_packets_total{src=\"10.0.0.1\"})");
    let by_point = |p: &str| sent.iter().find(|s| s["metric"]["point"] == p).map(&value);
    assert_eq!(by_point("two-points-sender.pcap"), Some(11.0));
    assert_eq!(by_point("two-points-receiver.pcap"), Some(10.0));
    let retx =
        query("sum(rocescope_retransmitted_packets_total{cause=\"nak\",point=\"two-points-sender.pcap\"})");
    assert_eq!(retx.first().map(&value), Some(3.0));
    let gaps = query("sum by (point) (rocescope_psn_gaps_total{point=~\"two-points.*\"})");
    assert_eq!(gaps.iter().map(value).sum::<f64>(), 1.0, "one gap, at the receiver");
    // The shipped rules loaded.
    let (code, body) = wait_http(prom_port, "/api/v1/rules");
    assert_eq!(code, 200);
    let v: Value = serde_json::from_str(&body).unwrap();
    let groups: Vec<&str> =
        v["data"]["groups"].as_array().unwrap().iter().filter_map(|g| g["name"].as_str()).collect();
    assert!(groups.contains(&"rocescope"), "{groups:?}");
    let alerts: Vec<String> = v["data"]["groups"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|g| g["rules"].as_array().cloned().unwrap_or_default())
        .filter(|r| r["type"] == "alerting")
        .filter_map(|r| r["name"].as_str().map(str::to_owned))
        .collect();
    for want in ["RocePfcStorm", "RoceHighRetransmitRate", "RoceDscpViolations"] {
        assert!(alerts.iter().any(|a| a == want), "{want} in {alerts:?}");
    }
    // Every dashboard query, as Grafana would send it, runs on this Prometheus; once two
    // scrapes are in, the panels over what these captures hold have data.
    let t0 = Instant::now();
    while query("count_over_time(rocescope_frames_total[1m])").first().map(value).unwrap_or(0.0) < 2.0 {
        assert!(t0.elapsed() < Duration::from_secs(30), "no second scrape");
        std::thread::sleep(Duration::from_millis(500));
    }
    let dash: Value = serde_json::from_str(
        &std::fs::read_to_string(common::root().join("deploy/grafana/rocescope.json")).unwrap(),
    )
    .unwrap();
    let mut empty = Vec::new();
    for p in dash["panels"].as_array().unwrap() {
        for t in p["targets"].as_array().into_iter().flatten() {
            let expr = t["expr"].as_str().unwrap_or("");
            let q = expr
                .replace("$__rate_interval", "20s")
                .replace("$__range", "1m")
                .replace("$instance", ".*")
                .replace("$point", ".*");
            let path = format!("/api/v1/query?query={}", encode(&q));
            let (code, body) = wait_http(prom_port, &path);
            let v: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
            assert_eq!((code, v["status"].as_str()), (200, Some("success")), "{}: {q}: {body}", p["title"]);
            if v["data"]["result"].as_array().is_none_or(|r| r.is_empty()) {
                empty.push(p["title"].as_str().unwrap_or("").to_string());
            }
        }
    }
    // Files have no libpcap counters, and a file's figures do not move, so the CE share (CE
    // rate over a packet rate guarded by > 0) has nothing to divide; everything else has data.
    assert_eq!(empty, ["CE-marked packets per flow (top 10)", "Capture drops"], "panels without data");
}

/// Percent-encode a PromQL query for a URL.
fn encode(q: &str) -> String {
    q.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[test]
fn shipped_rules_and_config_pass_promtool() {
    if Command::new("promtool").arg("--version").output().is_err() {
        common::skip("promtool not installed (apt-get install prometheus)");
        return;
    }
    let dir = common::root().join("deploy/prometheus");
    for args in [
        vec!["check", "config", "prometheus.yml"],
        vec!["check", "rules", "rocescope.rules.yml"],
        vec!["test", "rules", "rocescope.rules.test.yml"],
    ] {
        let o = Command::new("promtool").args(&args).current_dir(&dir).output().expect("promtool");
        assert!(
            o.status.success(),
            "promtool {args:?}: {}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

/// Metric names a PromQL expression refers to (`rocescope_...`, not recording rules).
fn names_in(expr: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let b = expr.as_bytes();
    let mut i = 0;
    while let Some(at) = expr[i..].find("rocescope_") {
        let start = i + at;
        let boundary = start == 0
            || !(b[start - 1].is_ascii_alphanumeric() || b[start - 1] == b'_' || b[start - 1] == b':');
        let mut end = start;
        while end < b.len() && (b[end].is_ascii_alphanumeric() || b[end] == b'_') {
            end += 1;
        }
        if boundary {
            out.insert(expr[start..end].to_string());
        }
        i = end;
    }
    out
}

#[test]
fn dashboard_and_rules_ask_only_for_metrics_the_exporter_serves() {
    let (_exp, port) = start_export(&[
        "-r",
        sample("demo.pcap").to_str().unwrap(),
        "-r",
        sample("two-points-receiver.pcap").to_str().unwrap(),
    ]);
    let (_, text) = get(port, "/metrics", None).unwrap();
    // Every family the exporter describes (capture counters have no series for files).
    let served: BTreeSet<String> = text
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_owned)
        .collect();
    let dash: Value = serde_json::from_str(
        &std::fs::read_to_string(common::root().join("deploy/grafana/rocescope.json")).unwrap(),
    )
    .expect("the dashboard is JSON");
    let panels = dash["panels"].as_array().expect("panels");
    let ids: BTreeSet<u64> = panels.iter().filter_map(|p| p["id"].as_u64()).collect();
    assert_eq!(ids.len(), panels.len(), "panel ids are unique");
    let mut asked = BTreeSet::new();
    for p in panels {
        assert!(p["title"].is_string() && p["gridPos"].is_object(), "{p}");
        for t in p["targets"].as_array().into_iter().flatten() {
            asked.extend(names_in(t["expr"].as_str().unwrap_or("")));
        }
    }
    let rules =
        std::fs::read_to_string(common::root().join("deploy/prometheus/rocescope.rules.yml")).unwrap();
    // Expressions only (group and rule names are not metrics); multi-line ones are folded
    // (`expr: |`), so take everything from an `expr:` to the next key.
    let mut in_expr = false;
    for line in rules.lines() {
        let t = line.trim_start();
        if let Some(rest) = t.strip_prefix("expr:") {
            in_expr = true;
            asked.extend(names_in(rest));
        } else if in_expr && !t.contains(": ") && !t.starts_with('-') && !t.ends_with(':') {
            asked.extend(names_in(t));
        } else {
            in_expr = false;
        }
    }
    assert!(asked.len() > 10, "{asked:?}");
    for name in &asked {
        assert!(served.contains(name), "{name} is asked for but not served");
    }
    for must in ["rocescope_cnp_packets_total", "rocescope_pfc_pause_frames_total"] {
        assert!(served.contains(must), "{must}");
    }
}

#[test]
fn push_writes_ndjson_and_errors_are_clear() {
    // --push - with --no-http: one line for a file, then exit.
    let o = Command::new(bin())
        .args(["export", "--no-http", "--push", "-", "-r"])
        .arg(sample("ecn-cnp.pcap"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8(o.stdout).unwrap();
    assert_eq!(out.lines().count(), 1, "{out}");
    let v: Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    assert!(common::pushed_sum(&v, "rocescope_cnp_packets_total") > 0.0);
    // A port in use.
    let busy = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = busy.local_addr().unwrap().to_string();
    let o = Command::new(bin())
        .args(["export", "--listen", &addr, "-r"])
        .arg(sample("demo.pcap"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains(&format!("cannot listen on {addr}")));
    // Nothing to export.
    let o =
        Command::new(bin()).args(["export", "--no-http", "-r"]).arg(sample("demo.pcap")).output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--push"));
}
