//! `report --html FILE` end to end (docs/html-report.md): the page of `samples/demo.pcap`,
//! of fabric-shape samples (four uplinks merged, an iteration rhythm with a straggler) and
//! of a real capture, each written beside its `--json` document by the same run, rendered
//! by headless Chromium: its DOM (`--dump-dom`) holds every chart, and each chart's
//! `data-*` values equal the JSON's figures; screenshots at 1280x800 and 390x844 come out
//! at those sizes; the network log shows no request from the page. Without Chromium
//! (/usr/bin/chromium, or `chromium` on PATH) the browser checks skip and say so; the
//! static checks of the file (no script, no URL, the Content-Security-Policy) run anyway.

mod common;

use scraper::{ElementRef, Html, Selector};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Chromium, when installed.
fn chromium() -> Option<PathBuf> {
    let fixed = PathBuf::from("/usr/bin/chromium");
    if fixed.is_file() {
        return Some(fixed);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|d| d.join("chromium")).find(|p| p.is_file())
}

/// Run Chromium headless on `page` with `extra` flags (a profile of its own in `dir`, no
/// background requests, every host name unresolvable so nothing can leave the machine);
/// its standard output. Killed after two minutes.
fn browse(chrome: &Path, dir: &Path, page: &Path, extra: &[String]) -> Vec<u8> {
    let profile = dir.join(format!("profile-{}", extra.len()));
    let mut cmd = Command::new(chrome);
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-extensions",
        "--hide-scrollbars",
        "--host-resolver-rules=MAP * ~NOTFOUND",
    ])
    .arg(format!("--user-data-dir={}", profile.display()))
    .args(extra)
    .arg(format!("file://{}", page.display()))
    .stdin(Stdio::null())
    .stdout(Stdio::piped())
    .stderr(Stdio::null());
    let mut child = cmd.spawn().expect("start chromium");
    let mut out = Vec::new();
    let mut stdout = child.stdout.take().expect("piped");
    let reader = std::thread::spawn(move || {
        use std::io::Read;
        let _ = stdout.read_to_end(&mut out);
        out
    });
    let start = Instant::now();
    loop {
        if child.try_wait().expect("wait").is_some() {
            break;
        }
        if start.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            panic!("chromium took over 2 minutes on {}", page.display());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    reader.join().expect("read chromium's output")
}

/// A PNG's width and height (its IHDR chunk).
fn png_size(path: &Path) -> (u32, u32) {
    let b = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(
        b.len() > 24 && b.starts_with(b"\x89PNG\r\n\x1a\n") && &b[12..16] == b"IHDR",
        "{} is no PNG",
        path.display()
    );
    let n = |i: usize| u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
    (n(16), n(20))
}

/// The URLs the page asked for, from a Chromium net log: every URL request but the
/// browser's own (its initiator "not an origin": updater, account checks).
fn page_requests(log: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(log).unwrap_or_else(|e| panic!("{}: {e}", log.display()));
    // A log cut short by the browser's exit lacks its closing brackets.
    let v: Value = serde_json::from_str(&text)
        .or_else(|_| serde_json::from_str(&format!("{}]}}", text.trim_end().trim_end_matches(','))))
        .expect("net log is JSON");
    let mut urls = Vec::new();
    for e in v["events"].as_array().expect("events") {
        let p = &e["params"];
        let Some(url) = p["url"].as_str() else { continue };
        let lower = url.to_ascii_lowercase();
        let remote = ["http:", "https:", "ws:", "wss:", "ftp:"].iter().any(|s| lower.starts_with(s));
        if remote && p["initiator"].as_str() != Some("not an origin") && p.get("initiator").is_some() {
            urls.push(url.to_string());
        }
    }
    urls
}

fn sel(s: &str) -> Selector {
    Selector::parse(s).expect("selector")
}

fn numbers(s: &str) -> Vec<u64> {
    if s.is_empty() {
        return Vec::new();
    }
    s.split(',').map(|n| n.parse().unwrap_or_else(|_| panic!("not a number: {n:?}"))).collect()
}

fn u64s(v: &Value) -> Vec<u64> {
    v.as_array().expect("array").iter().map(|n| n.as_u64().expect("u64")).collect()
}

fn data<'a>(e: &ElementRef<'a>, name: &str) -> &'a str {
    e.value().attr(name).unwrap_or_else(|| panic!("no {name} on {:?}", e.value()))
}

/// The file itself: one document with its policy, and nothing that could fetch.
fn check_static(html: &str) {
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">"
    ));
    let lower = html.to_ascii_lowercase();
    for bad in ["<script", "<link", "<iframe", "<object", "<embed", "@import", "@font-face", "url("] {
        assert!(!lower.contains(bad), "the page holds {bad}");
    }
    for attr in ["src=", "href="] {
        for (i, _) in lower.match_indices(attr) {
            let value = lower[i + attr.len()..].trim_start_matches(['"', '\'']);
            assert!(
                value.starts_with('#') || value.starts_with("data:"),
                "{attr}{}",
                &value[..value.len().min(60)]
            );
        }
    }
}

/// The DOM Chromium built against the report's JSON.
fn check_dom(dom: &str, r: &Value) {
    let doc = Html::parse_document(dom);
    let one = |s: &str| doc.select(&sel(s)).next().unwrap_or_else(|| panic!("no {s} in the DOM"));

    // The headline: the findings' counts, the findings worst first with their evidence.
    let v = one("#verdict");
    let f = &r["summary"]["findings"];
    for k in ["critical", "warning", "info"] {
        assert_eq!(data(&v, &format!("data-{k}")), f[k].as_u64().expect("count").to_string(), "{k}");
    }
    assert_eq!(
        data(&v, "data-violations"),
        r["audit"]["violations"].as_array().expect("violations").len().to_string()
    );
    let items: Vec<_> = doc.select(&sel("#findings > li")).collect();
    let findings = r["findings"].as_array().expect("findings");
    assert_eq!(items.len(), findings.len());
    for (li, f) in items.iter().zip(findings) {
        assert_eq!(data(li, "data-kind"), f["kind"].as_str().expect("kind"));
        assert_eq!(data(li, "data-severity"), f["severity"].as_str().expect("severity"));
        let frames: Vec<u64> = li
            .select(&sel(".evidence > li[data-frame]"))
            .map(|e| data(&e, "data-frame").parse().expect("frame"))
            .collect();
        let want: Vec<u64> = f["evidence"]
            .as_array()
            .expect("evidence")
            .iter()
            .take(8)
            .map(|e| e["frame"].as_u64().expect("frame"))
            .collect();
        assert_eq!(frames, want, "{}", f["title"]);
    }
    match r["summary"]["capture_quality"]["note"].as_str() {
        Some(note) => assert!(one("#capture-quality").text().collect::<String>().contains(note)),
        None => assert!(doc.select(&sel("#capture-quality")).next().is_none()),
    }

    // The fabric's series, a chart per capture point that has any.
    let mut drawn = [0; 3];
    for p in r["timeline"]["points"].as_array().expect("timeline") {
        let point = p["point"].as_u64().expect("point");
        let prios = p["priorities"].as_array().expect("priorities");
        let series = |field: &str| -> Vec<(u64, Vec<u64>)> {
            prios
                .iter()
                .map(|q| (q["priority"].as_u64().expect("priority"), u64s(&q[field])))
                .filter(|(_, v)| v.iter().any(|n| *n > 0))
                .collect()
        };
        let plotted = |id: &str, field: &str| -> Option<Vec<(u64, Vec<u64>)>> {
            let fig = doc.select(&sel(&format!("figure#{id}"))).next()?;
            assert_eq!(data(&fig, "data-bin-ns"), p["bin_ns"].as_u64().expect("bin").to_string());
            assert!(fig.select(&sel("svg[viewBox]")).next().is_some(), "{id} has no SVG");
            Some(
                fig.select(&sel(".data > span.series[data-priority]"))
                    .map(|s| (data(&s, "data-priority").parse().expect("priority"), numbers(data(&s, field))))
                    .collect(),
            )
        };
        let want = series("bytes");
        match plotted(&format!("throughput-p{point}"), "data-bytes") {
            Some(got) => (assert_eq!(got, want, "throughput at point {point}"), drawn[0] += 1).1,
            None => assert!(want.is_empty(), "no throughput chart for point {point}"),
        }
        let want = series("pause_ns");
        match plotted(&format!("paused-p{point}"), "data-pause-ns") {
            Some(got) => {
                assert_eq!(got, want, "paused time at point {point}");
                let link = doc.select(&sel(&format!("#paused-p{point} span.series[data-kind=pause]"))).next();
                assert_eq!(
                    link.map(|s| numbers(data(&s, "data-pause-ns"))),
                    p.get("link_pause_ns").map(u64s)
                );
                drawn[1] += 1;
            }
            None => assert!(
                want.is_empty() && p.get("link_pause_ns").is_none(),
                "no paused chart for point {point}"
            ),
        }
        let sum = |field: &str| -> Vec<u64> {
            let len = prios.iter().map(|q| q[field].as_array().map_or(0, Vec::len)).max().unwrap_or(0);
            (0..len).map(|i| prios.iter().map(|q| q[field][i].as_u64().unwrap_or(0)).sum()).collect()
        };
        let (ce, cnps) = (sum("ce"), sum("cnps"));
        match doc.select(&sel(&format!("figure#congestion-p{point}"))).next() {
            Some(fig) => {
                assert_eq!((numbers(data(&fig, "data-ce")), numbers(data(&fig, "data-cnps"))), (ce, cnps));
                drawn[2] += 1;
            }
            None => assert!(ce.iter().chain(&cnps).all(|n| *n == 0), "no CE/CNP chart for point {point}"),
        }
    }
    // A section with nothing to draw says so in a line, and draws no empty axes.
    for (i, section) in ["throughput-section", "paused-section", "congestion-section"].iter().enumerate() {
        let empty = doc.select(&sel(&format!("#{section} p.empty"))).next().is_some();
        assert_eq!(empty, drawn[i] == 0, "{section}");
    }

    // The iteration strip.
    let rhythm = r.get("rhythm").and_then(Value::as_array).cloned().unwrap_or_default();
    for rh in &rhythm {
        let id = format!("#rhythm-p{} .data > span.iteration", rh["point"]);
        let got: Vec<(i64, i64, String)> = doc
            .select(&sel(&id))
            .map(|s| {
                (
                    data(&s, "data-start-ns").parse().expect("start"),
                    data(&s, "data-busy-ns").parse().expect("busy"),
                    data(&s, "data-last-host").to_string(),
                )
            })
            .collect();
        let want: Vec<(i64, i64, String)> = rh["iteration_list"]
            .as_array()
            .expect("iterations")
            .iter()
            .map(|it| {
                let busy =
                    it["busy_end_ns"].as_i64().expect("end") - it["busy_start_ns"].as_i64().expect("start");
                (
                    it["start_ns"].as_i64().expect("start"),
                    busy,
                    it["last_host"].as_str().expect("host").to_string(),
                )
            })
            .collect();
        assert_eq!(got, want, "{id}");
    }
    assert_eq!(doc.select(&sel("#rhythm-section p.empty")).next().is_some(), rhythm.is_empty());

    // ECMP: measured uplinks and predicted paths as bars.
    let e = &r["ecmp"];
    let bars = |id: &str, key: &str| -> Vec<(String, u64)> {
        doc.select(&sel(&format!("#{id} .data > span.bar")))
            .map(|s| (data(&s, key).to_string(), data(&s, "data-bytes").parse().expect("bytes")))
            .collect()
    };
    if let Some(u) = e.get("uplinks") {
        let want: Vec<(String, u64)> = u["uplinks"]
            .as_array()
            .expect("uplinks")
            .iter()
            .map(|l| (l["point"].to_string(), l["bytes"].as_u64().expect("bytes")))
            .collect();
        assert_eq!(bars("ecmp-uplinks", "data-point"), want);
    }
    if let Some(p) = e.get("prediction") {
        let want: Vec<(String, u64)> = p["loads"]
            .as_array()
            .expect("loads")
            .iter()
            .map(|l| (l["path"].to_string(), l["bytes"].as_u64().expect("bytes")))
            .collect();
        assert_eq!(bars("ecmp-paths", "data-path"), want);
    }
    let none = e.get("uplinks").is_none() && e.get("prediction").is_none();
    assert_eq!(doc.select(&sel("#ecmp-section p.empty")).next().is_some(), none);

    // The QoS audit.
    let rows: Vec<(String, u64, u64)> = doc
        .select(&sel("#qos-audit tr.violation"))
        .map(|t| {
            (
                data(&t, "data-what").to_string(),
                data(&t, "data-packets").parse().expect("n"),
                data(&t, "data-first-frame").parse().expect("n"),
            )
        })
        .collect();
    let want: Vec<(String, u64, u64)> = r["audit"]["violations"]
        .as_array()
        .expect("violations")
        .iter()
        .map(|v| {
            (
                v["what"].as_str().expect("what").to_string(),
                v["packets"].as_u64().expect("n"),
                v["first_frame"].as_u64().expect("n"),
            )
        })
        .collect();
    assert_eq!(rows, want);

    // The top QPs: each row's sparkline values and PSN events are its flow's.
    let flows = r["flows"].as_array().expect("flows");
    let rows: Vec<_> = doc.select(&sel("#top-qps tr.qp")).collect();
    assert_eq!(rows.is_empty(), r["connections"].as_array().expect("connections").is_empty());
    for row in &rows {
        let id: usize = data(row, "data-flow").parse().expect("flow");
        let f = &flows[id];
        assert_eq!(numbers(data(row, "data-bins")), u64s(&f["throughput"]["bins"]), "flow {id}");
        assert_eq!(data(row, "data-packets"), f["packets"].to_string());
        assert!(row.select(&sel("td.spark svg[viewBox]")).next().is_some(), "flow {id} has no sparkline");
        let psn = &f["psn"];
        for (attr, want) in [
            ("data-psn-gaps", &psn["gaps"]),
            ("data-psn-retransmits", &psn["retransmits"]),
            ("data-psn-out-of-order", &psn["out_of_order"]),
            ("data-psn-naks", &f["naks"]["psn_seq_err"]),
        ] {
            let got = row.value().attr(attr).unwrap_or("0");
            assert_eq!(got, want.to_string(), "flow {id} {attr}");
        }
    }
}

/// One capture: the page and the JSON from one run, checked statically, then in Chromium.
fn check(name: &str, dir: &Path, args: &[&str]) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let page = tmp.path().join(format!("{name}.html"));
    let o = Command::new(env!("CARGO_BIN_EXE_rocescope"))
        .args(["report", "--json", "--html"])
        .arg(&page)
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run rocescope");
    // Findings or violations may set 3 or 4; a failure to read or write is 1.
    assert!(
        matches!(o.status.code(), Some(0 | 3 | 4)),
        "{name}: {:?} {}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    let r = common::report_json(&o.stdout);
    let html = std::fs::read_to_string(&page).expect("the page was written");
    check_static(&html);
    // The browser is not needed for the page's own data: the file holds the same DOM.
    check_dom(&html, &r);
    let Some(chrome) = chromium() else {
        common::skip("no Chromium (/usr/bin/chromium or chromium on PATH): the HTML report was not rendered");
        return;
    };
    let log = tmp.path().join("net.json");
    let dom = browse(
        &chrome,
        tmp.path(),
        &page,
        &["--dump-dom".into(), format!("--log-net-log={}", log.display())],
    );
    let dom = String::from_utf8(dom).expect("the DOM is UTF-8");
    assert!(dom.contains("id=\"verdict\""), "{name}: Chromium's DOM has no verdict:\n{dom:.2000}");
    check_dom(&dom, &r);
    assert_eq!(page_requests(&log), Vec::<String>::new(), "{name}: the page asked for something");
    for (w, h) in [(1280u32, 800u32), (390, 844)] {
        let shot = tmp.path().join(format!("{name}-{w}x{h}.png"));
        browse(
            &chrome,
            tmp.path(),
            &page,
            &[format!("--screenshot={}", shot.display()), format!("--window-size={w},{h}")],
        );
        assert_eq!(png_size(&shot), (w, h), "{name} screenshot");
    }
}

#[test]
fn demo_page_renders_with_the_json_figures() {
    check("demo", &common::root().join("samples"), &["-r", "demo.pcap"]);
}

#[test]
fn four_uplinks_page_draws_their_load_and_a_series_per_point() {
    let dir = common::root().join("samples/ecmp");
    check(
        "uplinks",
        &dir,
        &[
            "-r",
            "uplink1.pcap",
            "-r",
            "uplink2.pcap",
            "-r",
            "uplink3.pcap",
            "-r",
            "uplink4.pcap",
            "--uplinks",
            "uplink1,uplink2,uplink3,uplink4",
        ],
    );
}

#[test]
fn rhythm_page_draws_the_iterations_and_the_straggler() {
    check("rhythm", &common::root().join("samples"), &["-r", "rhythm-straggler.pcap"]);
}

#[test]
fn predicted_paths_page_draws_a_bar_per_path() {
    check("paths", &common::root().join("samples/ecmp"), &["-r", "low-entropy.pcap", "--ecmp-paths", "4"]);
}

#[test]
fn real_capture_page_renders_with_the_json_figures() {
    let Some(dir) = common::real_captures() else { return };
    check("real", &dir, &["-r", "rocev2_test.pcap"]);
}

/// The network check sees a page's request: a page that loads an image from elsewhere is
/// caught (so an empty list above means none was made, not that none could be seen).
#[test]
fn the_network_check_catches_a_page_that_fetches() {
    let Some(chrome) = chromium() else {
        common::skip("no Chromium (/usr/bin/chromium or chromium on PATH): the network check was not tried");
        return;
    };
    let tmp = tempfile::tempdir().expect("tempdir");
    let page = tmp.path().join("fetches.html");
    std::fs::write(
        &page,
        "<!DOCTYPE html><html><body><img src=\"http://example.invalid/x.png\"></body></html>",
    )
    .expect("write");
    let log = tmp.path().join("net.json");
    browse(&chrome, tmp.path(), &page, &["--dump-dom".into(), format!("--log-net-log={}", log.display())]);
    assert_eq!(page_requests(&log), vec!["http://example.invalid/x.png".to_string()]);
}

#[test]
fn an_unwritable_html_file_is_status_1_naming_it() {
    let o = Command::new(env!("CARGO_BIN_EXE_rocescope"))
        .args(["report", "-q", "--html", "/nonexistent-dir/report.html", "-r"])
        .arg(common::root().join("samples/demo.pcap"))
        .output()
        .expect("run rocescope");
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("/nonexistent-dir/report.html"), "{err}");
}

#[test]
fn the_html_file_is_not_the_capture() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let cap = tmp.path().join("c.pcap");
    std::fs::copy(common::root().join("samples/demo.pcap"), &cap).expect("copy");
    let o = Command::new(env!("CARGO_BIN_EXE_rocescope"))
        .args(["report", "-q", "-r"])
        .arg(&cap)
        .arg("--html")
        .arg(&cap)
        .output()
        .expect("run rocescope");
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        std::fs::read(&cap).expect("read"),
        std::fs::read(common::root().join("samples/demo.pcap")).expect("read")
    );
}
