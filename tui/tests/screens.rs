//! The UI over the bundled scenario captures, rendered with ratatui's `TestBackend`: the
//! screens are compared with insta snapshots (`cargo insta review` after an intended change)
//! and the key handling is checked against what each scenario is known to contain.

use ratatui::backend::TestBackend;
use ratatui::Terminal;
use rocescope_analyzer::{Analyzer, AuditConfig, Config, FrameMeta};
use rocescope_capture::{Batch, Source};
use rocescope_decoder::{decode, DecodeOptions};
use rocescope_tui::app::LineEdit;
use rocescope_tui::keys::Action;
use rocescope_tui::view::{self, TreeFn};
use rocescope_tui::{App, FrameLine, Screen, Snapshot};
use std::path::PathBuf;

fn sample(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../samples").join(name)
}

/// Analyse a sample as the worker does, with fixed rates so the screens are reproducible.
fn snapshot(name: &str, audit: AuditConfig) -> Snapshot {
    snapshot_with(name, Config { audit, ..Config::default() })
}

/// [`snapshot`] with any analysis settings.
fn snapshot_with(name: &str, cfg: Config) -> Snapshot {
    snapshot_of(&sample(name), name, cfg)
}

/// A real capture (`../shared/real-captures`, or `$ROCESCOPE_REAL_CAPTURES`), or `None`
/// where the folder is absent: the test then skips, saying so.
fn real(name: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("ROCESCOPE_REAL_CAPTURES")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/real-captures"));
    let path = dir.join(name);
    if !path.is_file() {
        eprintln!("skipped: no real capture at {}", path.display());
        return None;
    }
    Some(path)
}

/// The capture at `path`, analysed as [`snapshot`] does, shown as `name`.
fn snapshot_of(path: &std::path::Path, name: &str, cfg: Config) -> Snapshot {
    let mut src = Source::file(path).expect("capture opens");
    let opts = DecodeOptions::default();
    let mut analyzer = Analyzer::new(cfg);
    let mut frames = Vec::new();
    let mut wire_bytes = 0;
    loop {
        let mut f = |rec: &rocescope_capture::Record<'_>| {
            wire_bytes += u64::from(rec.len);
            let p = decode(rec.link_type, rec.data, &opts);
            let number = analyzer.totals().packets + 1;
            let roce_before = analyzer.totals().roce;
            analyzer
                .push(&FrameMeta { number, ts_ns: rec.ts_ns, len: rec.len, link_bps: None, point: 0 }, &p);
            let flow = (analyzer.totals().roce > roce_before).then(|| analyzer.last_flow()).flatten();
            let op = p.roce.as_ref().map(|r| r.bth.opcode().0);
            frames.push(FrameLine {
                number,
                ts_ns: rec.ts_ns,
                flow,
                summary: format!("frame {number} opcode {op:?}"),
                bytes: rec.data.to_vec(),
                wire_len: rec.len,
                link_type: rec.link_type.0,
            });
            true
        };
        match src.for_each_batch(64, &mut f).expect("sample reads") {
            Batch::End => break,
            _ => continue,
        }
    }
    let mut s = Snapshot::empty(analyzer.report(), name, false);
    s.elapsed_s = 1.5;
    s.rate_pps = 1000.0;
    s.rate_gbps = 0.5;
    s.progress = Some(1.0);
    s.done = true;
    s.frames = frames;
    s.wire_bytes = wire_bytes;
    s
}

fn tree(line: &FrameLine) -> String {
    format!("tree of frame {} ({} bytes)", line.number, line.bytes.len())
}

fn render(app: &mut App, w: u16, h: u16) -> String {
    let mut term = Terminal::new(TestBackend::new(w, h)).expect("test backend");
    let t: TreeFn<'_> = &tree;
    term.draw(|f| view::draw(f, app, t)).expect("draw");
    let buf = term.backend().buffer().clone();
    let mut out = String::new();
    for y in 0..buf.area.height {
        let line: String = (0..buf.area.width).map(|x| buf[(x, y)].symbol().to_string()).collect();
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

fn app_with(s: Snapshot) -> App {
    let mut app = App::default();
    app.update(s);
    app
}

#[test]
fn qps_screen_puts_the_lossy_connection_first() {
    let mut app = app_with(snapshot("nak-gobackn.pcap", AuditConfig::default()));
    let screen = render(&mut app, 140, 20);
    insta::assert_snapshot!("qps_nak_gobackn", screen);
    let rows = app.rows();
    assert!(!rows.is_empty());
    assert_eq!(rows.get(0).unwrap().row.health, "critical", "the NAK'd connection sorts first: {rows:?}");
}

#[test]
fn flows_view_has_a_row_per_direction() {
    let mut app = app_with(snapshot("nak-gobackn.pcap", AuditConfig::default()));
    app.act(Action::ToggleFlows);
    let shown = app.shown.clone().expect("snapshot");
    let rows = app.rows();
    assert_eq!(rows.len(), shown.report.flows.len());
    // The worst flow is the data direction that lost a packet; its row opens its connection.
    assert_eq!(rows.get(0).unwrap().row.health, "critical");
    assert!(
        rows.get(0).unwrap().row.gaps > 0.0 || rows.get(0).unwrap().retx_timeout > 0,
        "{:?}",
        rows.get(0).unwrap()
    );
    let screen = render(&mut app, 140, 16);
    insta::assert_snapshot!("flows_nak_gobackn", screen);
    assert!(screen.contains("flows: 6 of 6"), "{screen}");
    app.act(Action::Enter);
    assert_eq!(app.detail, Some(rows.get(0).unwrap().conn));
    app.act(Action::Back);
    app.act(Action::ToggleFlows);
    assert_eq!(app.rows().len(), shown.report.connections.len());
}

#[test]
fn qp_detail_and_its_packets() {
    let mut app = app_with(snapshot("nak-gobackn.pcap", AuditConfig::default()));
    app.act(Action::Enter);
    assert!(app.detail.is_some(), "Enter opens the QP detail");
    let screen = render(&mut app, 140, 40);
    insta::assert_snapshot!("qp_detail_nak_gobackn", screen);
    assert!(screen.contains("NAK"), "detail names the NAK:\n{screen}");
    assert!(screen.contains("resent: 3"), "the go-back-N resends charted:\n{screen}");
    // Enter again lists that QP's packets; Enter on one opens its tree.
    app.act(Action::Enter);
    assert_eq!(app.screen, Screen::Packets);
    let shown = app.shown.clone().expect("snapshot");
    let rows = app.packet_rows(&shown);
    assert!(!rows.is_empty() && rows.len() <= shown.frames.len());
    let flows = app.packet_flows.clone().expect("narrowed to the QP");
    assert!(rows.iter().all(|f| f.flow.is_some_and(|x| flows.contains(&x))));
    app.act(Action::Enter);
    let screen = render(&mut app, 140, 20);
    assert!(screen.contains("tree of frame"), "the tree opens:\n{screen}");
    app.act(Action::Back);
    assert!(app.packet_open.is_none(), "Esc closes the tree");
}

#[test]
fn pause_screen_shows_the_storm() {
    let mut app = app_with(snapshot("pfc-storm.pcap", AuditConfig::default()));
    app.act(Action::Screen(3));
    assert_eq!(app.screen, Screen::Pause);
    assert!(app.row_count() > 0, "the storm has a timeline");
    let screen = render(&mut app, 140, 24);
    insta::assert_snapshot!("pause_pfc_storm", screen);
    // The strip spans the whole capture: the 802.3x PAUSE comes last in this scenario, so
    // its row must end paused (a strip wider than its column once cut that end off).
    let pause_row = screen.lines().find(|l| l.contains("PAUSE   2/1")).expect("PAUSE row");
    assert!(pause_row.ends_with("█│"), "{pause_row}");
    // The worst finding is the storm: Enter on it lands on its timeline.
    app.act(Action::Screen(5));
    app.act(Action::Top);
    app.act(Action::Enter);
    assert_eq!(app.screen, Screen::Pause);
    let shown = app.shown.clone().expect("snapshot");
    let row = &shown.report.pfc[app.selected[2]];
    assert!(!row.storms.is_empty(), "selected the storming priority: {row:?}");
}

#[test]
fn audit_screen_lists_violations() {
    let audit = AuditConfig {
        roce_dscp: Some(vec![26]),
        cnp_dscp: Some(vec![48]),
        roce_pcp: Some(3),
        lossless_priorities: Some(vec![3]),
        ecn_capable: true,
        ..AuditConfig::default()
    };
    let mut app = app_with(snapshot("qos-mismatch.pcap", audit));
    app.act(Action::Screen(4));
    assert!(app.row_count() >= 3, "DSCP, PCP and ECN violations at least");
    let screen = render(&mut app, 140, 24);
    insta::assert_snapshot!("audit_qos_mismatch", screen);
    app.act(Action::Screen(5));
    let screen = render(&mut app, 140, 24);
    insta::assert_snapshot!("findings_qos_mismatch", screen);
}

#[test]
fn sorting_filtering_and_freezing() {
    let s = snapshot("demo.pcap", AuditConfig::default());
    let mut app = app_with(s.clone());
    let all = app.rows().len();
    assert!(all >= 2, "demo has several connections");
    // Sort by packets, then reverse: the order flips.
    app.act(Action::SortNext);
    let by_pkts: Vec<f64> = app.rows().iter().map(|r| r.row.pkts).collect();
    assert!(by_pkts.windows(2).all(|w| w[0] >= w[1]), "descending packets: {by_pkts:?}");
    app.act(Action::SortReverse);
    let rev: Vec<f64> = app.rows().iter().map(|r| r.row.pkts).collect();
    assert!(rev.windows(2).all(|w| w[0] <= w[1]), "ascending packets: {rev:?}");
    // A filter that matches nothing empties the list; a bad one keeps the old filter and says why.
    app.act(Action::Filter);
    for c in "pkts>999999999".chars() {
        app.filter_edit(LineEdit::Insert(c));
    }
    app.filter_edit(LineEdit::Apply);
    assert_eq!(app.rows().len(), 0);
    app.act(Action::Filter);
    for _ in 0.."pkts>999999999".len() {
        app.filter_edit(LineEdit::Backspace);
    }
    app.filter_edit(LineEdit::Apply);
    assert_eq!(app.rows().len(), all, "clearing the filter shows everything");
    app.act(Action::Filter);
    for c in "nak".chars() {
        app.filter_edit(LineEdit::Insert(c));
    }
    app.filter_edit(LineEdit::Insert('>'));
    assert!(app.filter_error.is_some(), "a bad filter is explained");
    app.filter_edit(LineEdit::Apply);
    assert!(app.editing_filter, "Enter on an invalid filter keeps editing");
    app.filter_edit(LineEdit::Cancel);
    assert!(!app.editing_filter && app.filter_text.is_empty() && app.filter.is_none(), "Esc restores");
    assert_eq!(app.rows().len(), all, "the typed-but-cancelled filter no longer applies");
    // Frozen: a new snapshot waits; unfreezing shows it.
    app.act(Action::Freeze);
    let mut newer = s;
    newer.elapsed_s = 99.0;
    app.update(newer);
    assert_eq!(app.shown.as_ref().map(|s| s.elapsed_s), Some(1.5));
    app.act(Action::Freeze);
    assert_eq!(app.shown.as_ref().map(|s| s.elapsed_s), Some(99.0));
}

#[test]
fn packets_screen_and_an_80x24_terminal() {
    let mut app = app_with(snapshot("ecn-cnp.pcap", AuditConfig::default()));
    app.act(Action::Screen(2));
    let screen = render(&mut app, 120, 20);
    insta::assert_snapshot!("packets_ecn_cnp", screen);
    app.act(Action::Screen(1));
    let screen = render(&mut app, 80, 24);
    insta::assert_snapshot!("qps_ecn_cnp_80x24", screen);
    app.act(Action::Help);
    let screen = render(&mut app, 80, 24);
    insta::assert_snapshot!("help_80x24", screen);
    // The detail charts CE marks over time: the data direction was marked.
    app.act(Action::Back);
    app.act(Action::Enter);
    let screen = render(&mut app, 160, 40);
    insta::assert_snapshot!("qp_detail_ecn_cnp", screen);
    assert!(screen.contains("CE %, peak 25.0%"), "4 of 16 data packets were CE:\n{screen}");
}

#[test]
fn help_and_small_terminals() {
    let mut app = app_with(snapshot("rc-normal.pcap", AuditConfig::default()));
    app.act(Action::Help);
    let screen = render(&mut app, 100, 40);
    assert!(screen.contains("quit"), "help lists the keys:\n{screen}");
    app.act(Action::Back);
    assert!(!app.help);
    // Tiny and empty terminals render without panicking.
    for (w, h) in [(1, 1), (10, 3), (40, 8), (0, 0)] {
        let _ = render(&mut app, w, h);
    }
    let mut empty = App::default();
    let screen = render(&mut empty, 80, 10);
    assert!(!screen.trim().is_empty());
}

#[test]
fn every_frame_is_tied_to_its_own_flow() {
    // The first packet of each new flow once got the previous flow's index.
    for name in ["demo.pcap", "nak-gobackn.pcap", "ecn-cnp.pcap", "truncated.pcap"] {
        let s = snapshot(name, AuditConfig::default());
        let mut tied = 0;
        for f in &s.frames {
            let p = decode(rocescope_decoder::LinkType(f.link_type), &f.bytes, &DecodeOptions::default());
            // The source as the analyzer keys it: the IP address, or the GID for RoCEv1.
            let src =
                p.ip.as_ref()
                    .map(|ip| ip.src().to_string())
                    .or_else(|| p.roce.as_ref().and_then(|r| r.grh.map(|g| g.sgid().to_string())));
            match (f.flow, &p.roce, src) {
                (Some(i), Some(r), Some(src)) => {
                    let fl = &s.report.flows[i];
                    assert_eq!(r.bth.dest_qp(), fl.dest_qp, "{name} frame {}", f.number);
                    assert_eq!(src, fl.src, "{name} frame {}", f.number);
                    tied += 1;
                }
                (Some(i), _, _) => panic!("{name} frame {} tied to flow {i} without being RoCE", f.number),
                (None, r, _) => assert!(
                    r.is_none() || p.is_malformed_roce(),
                    "{name} frame {} is RoCE but has no flow",
                    f.number
                ),
            }
        }
        assert!(tied > 0, "{name}");
    }
}

#[test]
fn state_survives_shrinking_snapshots_and_clear() {
    let big = snapshot("demo.pcap", AuditConfig::default());
    let small = snapshot("rnr.pcap", AuditConfig::default());
    let mut app = app_with(big.clone());
    // Last packet selected, then a smaller picture arrives: the selection stays on a row.
    app.act(Action::Screen(2));
    app.act(Action::Bottom);
    assert_eq!(app.selected[1], big.frames.len() - 1);
    app.update(small.clone());
    assert_eq!(app.selected[1], small.frames.len() - 1, "clamped to the new rows");
    app.act(Action::Up);
    assert_eq!(app.selected[1], small.frames.len() - 2, "Up moves at once");
    // An open QP detail follows its connection into a newer snapshot of the same capture.
    let mut app = app_with(big.clone());
    app.act(Action::Down);
    app.act(Action::Enter);
    let conn = app.detail.expect("detail open");
    let first_flow = big.report.connections[conn].flows[0];
    app.update(big.clone());
    let now = app.detail.expect("still open");
    assert!(app.shown.as_ref().unwrap().report.connections[now].flows.contains(&first_flow));
    // Clear (live: a file is not cleared): the detail and narrowed views close, selections
    // go back to the top.
    app.act(Action::Enter);
    assert!(app.packet_flows.is_some());
    if let Some(s) = app.shown.as_mut() {
        s.live = true;
    }
    app.act(Action::Clear);
    assert!(app.clear_requested && app.detail.is_none() && app.packet_flows.is_none());
    assert_eq!(app.selected, [0; 7]);
    // A click below the last row selects the last row.
    let mut app = app_with(small);
    app.select_qp_row(1000);
    assert_eq!(app.selected[0], app.rows().len() - 1);
}

/// Several samples merged as capture points, as `rocescope tui -r a -r b -r c` does.
fn snapshot_merged(names: &[&str]) -> Snapshot {
    let paths: Vec<PathBuf> = names.iter().map(|n| sample(n)).collect();
    let mut src = Source::files(&paths).expect("samples open");
    let opts = DecodeOptions::default();
    let points = src.point_names().expect("merged");
    let mut analyzer = Analyzer::new(Config { points, ..Config::default() });
    let mut wire_bytes = 0;
    loop {
        let mut f = |rec: &rocescope_capture::Record<'_>| {
            wire_bytes += u64::from(rec.len);
            let p = decode(rec.link_type, rec.data, &opts);
            let number = analyzer.totals().packets + 1;
            let meta = FrameMeta { number, ts_ns: rec.ts_ns, len: rec.len, link_bps: None, point: rec.point };
            analyzer.push(&meta, &p);
            true
        };
        match src.for_each_batch(64, &mut f).expect("samples read") {
            Batch::End => break,
            _ => continue,
        }
    }
    analyzer.finish();
    let mut s = Snapshot::empty(analyzer.report(), "merged", false);
    s.wire_bytes = wire_bytes;
    s.elapsed_s = 1.5;
    s.progress = Some(1.0);
    s.done = true;
    s
}

#[test]
fn merged_captures_show_their_points() {
    let mut app =
        app_with(snapshot_merged(&["two-points-sender.pcap", "two-points-receiver.pcap", "pfc-storm.pcap"]));
    let screen = render(&mut app, 160, 12);
    insta::assert_snapshot!("qps_merged_points", screen);
    let row = |point: &str| screen.lines().find(|l| l.contains(point) && l.contains("0x71 10.0.0.1"));
    assert!(row("two-points-sender.pcap").is_some_and(|l| l.contains("3/0")), "{screen}");
    assert!(row("two-points-receiver.pcap").is_some(), "{screen}");
    app.act(Action::Screen(3));
    let screen = render(&mut app, 160, 10);
    insta::assert_snapshot!("pause_merged_points", screen);
    assert!(screen.lines().any(|l| l.contains("pfc-storm.pcap") && l.contains("STORM")), "{screen}");
    // The loss between the points is a finding that opens the sender's flow.
    app.act(Action::Screen(5));
    let shown = app.shown.clone().expect("snapshot");
    let i = shown.report.findings.iter().position(|f| f.kind == "lost_between_points").expect("finding");
    let flow = shown.report.findings[i].flow.expect("names the flow");
    assert_eq!(shown.report.flows[flow].point, 0, "at the sender");
}

/// Type `filter` after `/` and apply it; the labels of the QPs rows it leaves.
fn filtered(app: &mut App, filter: &str) -> Vec<String> {
    app.act(Action::Filter);
    app.filter_edit(LineEdit::DeleteToStart);
    for c in filter.chars() {
        app.filter_edit(LineEdit::Insert(c));
    }
    assert_eq!(app.filter_error, None, "{filter}");
    app.filter_edit(LineEdit::Apply);
    app.rows().iter().map(|r| r.a_label.clone()).collect()
}

/// Connections the report charges with loss: a network-loss, timeout or capture-loss finding.
fn lossy_in_report(s: &Snapshot) -> Vec<usize> {
    let mut conns: Vec<usize> = s
        .report
        .findings
        .iter()
        .filter(|f| ["network_loss", "timeout_retransmit", "capture_loss"].iter().any(|k| f.kind == *k))
        .filter_map(|f| f.flow)
        .filter_map(|fl| s.report.connections.iter().position(|c| c.flows.contains(&fl)))
        .collect();
    conns.sort_unstable();
    conns.dedup();
    conns
}

#[test]
fn loss_means_what_the_report_means() {
    // rnr.pcap: one RNR NAK and the sender's retry, which the report calls "not loss".
    let s = snapshot("rnr.pcap", AuditConfig::default());
    assert!(s.report.findings.iter().any(|f| f.kind == "rnr" && f.title.contains("not loss")));
    let mut app = app_with(s.clone());
    assert_eq!(filtered(&mut app, "loss"), Vec::<String>::new(), "an RNR retry is not loss");
    assert_eq!(filtered(&mut app, "rnr and retx>0"), ["0x61 10.0.0.1"], "but it is a resend");
    assert_eq!(filtered(&mut app, "not loss").len(), 1);
    assert!(lossy_in_report(&s).is_empty());

    // nak-gobackn.pcap: a NAK'd go-back-N, a gap never NAKed (capture loss), a timeout
    // resend: three kinds of loss, three connections.
    let s = snapshot("nak-gobackn.pcap", AuditConfig::default());
    let mut app = app_with(s.clone());
    let mut lossy = filtered(&mut app, "loss");
    lossy.sort();
    assert_eq!(lossy, ["0x31 10.0.0.1", "0x41 10.0.0.3", "0x51 10.0.0.5"]);
    let mut conns: Vec<usize> = app.rows().iter().map(|r| r.conn).collect();
    conns.sort_unstable();
    assert_eq!(conns, lossy_in_report(&s));

    // demo.pcap holds both: `loss` picks the report's lossy connections and not the RNR one.
    let s = snapshot("demo.pcap", AuditConfig::default());
    let mut app = app_with(s.clone());
    let lossy = filtered(&mut app, "loss");
    assert!(!lossy.contains(&"0x61 10.0.0.1".to_string()), "{lossy:?}");
    let mut conns: Vec<usize> = app.rows().iter().map(|r| r.conn).collect();
    conns.sort_unstable();
    assert_eq!(conns, lossy_in_report(&s));
    assert_eq!(conns.len(), 3);
    // The flows view: the same rule on one direction at a time.
    app.act(Action::ToggleFlows);
    let flows = filtered(&mut app, "loss");
    assert_eq!(flows.len(), 3, "the three data directions: {flows:?}");
}

#[test]
fn the_filter_line_shows_its_cursor() {
    let mut app = app_with(snapshot("rnr.pcap", AuditConfig::default()));
    app.act(Action::Filter);
    for c in "nak or ce".chars() {
        app.filter_edit(LineEdit::Insert(c));
    }
    app.filter_edit(LineEdit::Left);
    app.filter_edit(LineEdit::Left);
    let mut term = Terminal::new(TestBackend::new(80, 12)).expect("test backend");
    let t: TreeFn<'_> = &tree;
    term.draw(|f| view::draw(f, &mut app, t)).expect("draw");
    // "/nak or ce": the cursor on the `c`, column 1 + 7, on the last line.
    let pos = ratatui::backend::Backend::get_cursor_position(term.backend_mut()).expect("cursor");
    assert_eq!((pos.x, pos.y), (8, 11));
    let last: String = (0..80).map(|x| term.backend().buffer()[(x, 11)].symbol().to_string()).collect();
    assert!(last.starts_with("/nak or ce  valid"), "{last}");
    // Ctrl-U with the cursor there leaves `ce`; the cursor goes to the start.
    app.filter_edit(LineEdit::DeleteToStart);
    assert_eq!(app.filter_text, "ce");
    term.draw(|f| view::draw(f, &mut app, t)).expect("draw");
    let pos = ratatui::backend::Backend::get_cursor_position(term.backend_mut()).expect("cursor");
    assert_eq!((pos.x, pos.y), (1, 11));
}

#[test]
fn header_rate_says_what_it_measures() {
    let header = |s: Snapshot| render(&mut app_with(s), 200, 10).lines().nth(1).unwrap_or("").to_string();
    let base = snapshot("nak-gobackn.pcap", AuditConfig::default());
    let sm = &base.report.summary;
    let span = (sm.end_ns.unwrap() - sm.start_ns.unwrap()) as f64 / 1e9;
    assert!((span - 0.0672).abs() < 0.001, "{span}");
    // A finished file: the capture's own mean rate, 24 frames and 20896 bytes over its span.
    assert_eq!(base.wire_bytes, 20_896);
    let line = header(base.clone());
    let pps = format!("capture mean {:.0} pps, {:.2} Gb/s", 24.0 / span, 20_896.0 * 8.0 / span / 1e9);
    assert!(line.contains(&pps), "{line}");
    assert!(!line.contains("1000 pps") && !line.contains("read "), "{line}");
    // Still analysing: the reading speed too, named as such.
    let reading = Snapshot { done: false, progress: Some(0.5), rate_pps: 182_000.0, ..base.clone() };
    let line = header(reading);
    assert!(line.contains(&pps) && line.contains("read 182000 pkt/s"), "{line}");
    // Replayed and live: the rate over the last interval, per second of capture time.
    let line = header(Snapshot { replay: Some(0.5), ..base.clone() });
    assert!(line.contains("| 1000 pps, 0.50 Gb/s (replay 0.5x) |"), "{line}");
    let line = header(Snapshot { live: true, progress: None, ..base });
    assert!(line.contains("| 1000 pps, 0.50 Gb/s |"), "{line}");
}

#[test]
fn folded_findings_still_mark_their_flows() {
    // Four QPs reordered; one finding of the kind listed, three folded into a summary.
    let s = snapshot_with("reorder-spray.pcap", Config { findings_per_kind: 1, ..Config::default() });
    let folded: Vec<_> =
        s.report.findings.iter().filter(|f| f.folded.is_some() && f.kind == "out_of_order").collect();
    assert_eq!(folded.len(), 1, "{:#?}", s.report.findings);
    assert_eq!(folded[0].folded, Some(3));
    let mut app = app_with(s);
    // Every flow with a finding, folded or not, keeps its health in the flows view.
    app.act(Action::ToggleFlows);
    let rows = app.rows();
    assert_eq!(rows.iter().filter(|r| r.row.health == "info").count(), 4, "{rows:?}");
    app.act(Action::ToggleFlows);
    // A connection whose findings were all folded says so in its detail, not "no events".
    let shown = app.shown.clone().expect("snapshot");
    let listed: Vec<usize> = shown.report.findings.iter().filter_map(|f| f.flow).collect();
    let rows = app.rows();
    let i = rows
        .iter()
        .position(|r| !shown.report.connections[r.conn].flows.iter().any(|f| listed.contains(f)))
        .expect("a connection whose findings were all folded");
    app.select_qp_row(i);
    app.act(Action::Enter);
    let screen = render(&mut app, 160, 40);
    assert!(screen.contains("folded into a summary on the Findings screen"), "{screen}");
    assert!(!screen.contains("no events"), "{screen}");
}

#[test]
fn pulses_move_the_header_between_snapshots_but_not_a_frozen_view() {
    let mut s = snapshot("nak-gobackn.pcap", AuditConfig::default());
    s.done = false;
    let mut app = app_with(s);
    let pulse = rocescope_tui::Pulse {
        packets: 123_456,
        roce: 123_000,
        icrc_bad: 7,
        duplicates: 12,
        progress: Some(0.5),
        elapsed_s: 9.0,
        ..Default::default()
    };
    app.pulse(&pulse);
    let screen = render(&mut app, 160, 20);
    assert!(screen.contains("123456 packets (123000 RoCE)"), "{screen}");
    assert!(screen.contains("ICRC bad 7") && screen.contains("analysing 50%"), "{screen}");
    assert!(screen.contains("mirror dups 12"), "{screen}");
    // The tables are still the last snapshot's.
    assert!(screen.contains("critical") || screen.contains("crit"), "{screen}");
    // Frozen: the view holds still.
    app.act(Action::Freeze);
    app.pulse(&rocescope_tui::Pulse { packets: 999_999, ..pulse });
    let screen = render(&mut app, 160, 20);
    assert!(screen.contains("123456 packets") && !screen.contains("999999"), "{screen}");
}

/// A sample analysed at `--bin 10us`, as `rocescope tui --bin 10us` does.
fn snapshot_10us(name: &str) -> Snapshot {
    snapshot_with(name, Config { bin_ns: 10_000, ..Config::default() })
}

/// Terminal sizes down to nothing: the screen must draw at each without a panic.
const TINY: [(u16, u16); 7] = [(20, 5), (0, 0), (1, 1), (10, 3), (40, 8), (60, 15), (160, 6)];

#[test]
fn congestion_screen_on_demo() {
    let mut app = app_with(snapshot_10us("demo.pcap"));
    // Screen 6, after Findings in Tab order, before QPs.
    app.act(Action::Screen(5));
    app.act(Action::NextScreen);
    assert_eq!(app.screen, Screen::Congestion);
    let screen = render(&mut app, 160, 45);
    insta::assert_snapshot!("congestion_demo", screen);
    assert!(screen.contains("| 6 Congestion"), "{screen}");
    assert!(screen.contains("demo.pcap | 0 to +79.510 ms | a column is 736 µs | --bin 10 µs"), "{screen}");
    // Per priority: its rows, the pauses, the busiest bins at --bin.
    for text in [
        "prio 3: 132 pkts",
        "4 CE (3.0%)",
        "9.02 ms paused",
        "prio 5: 15.4 µs paused",
        "prio 6: 3 CNPs only",
        "link: 5.12 µs paused",
        "busiest 10 µs: 13.36 Gb/s at +0.050 ms; most CE 2/4 at +68.890 ms",
    ] {
        assert!(screen.contains(text), "{text}:\n{screen}");
    }
    // The QPs: the marked one first, then those that got CNPs.
    let qps: Vec<&str> = screen.lines().filter(|l| l.contains("QP 0x")).collect();
    assert_eq!(qps.len(), 3, "{screen}");
    assert!(qps[0].contains("QP 0x72 p3: 4 CE, 2 CNPs"), "{qps:?}");
    let screen = render(&mut app, 80, 24);
    insta::assert_snapshot!("congestion_demo_80x24", screen);
    assert!(screen.contains("prio 3: 132 pkts") && screen.contains("10.0.0.5 → 10.0.0.6"), "{screen}");
    app.act(Action::NextScreen);
    assert_eq!(app.screen, Screen::Fabric);
    app.act(Action::NextScreen);
    assert_eq!(app.screen, Screen::Qps, "Tab wraps to QPs");
    app.act(Action::PrevScreen);
    assert_eq!(app.screen, Screen::Fabric);
    for (w, h) in TINY {
        let _ = render(&mut app, w, h);
    }
}

#[test]
fn congestion_screen_on_cc_reaction() {
    let mut app = app_with(snapshot_10us("cc-reaction.pcap"));
    app.act(Action::Screen(6));
    let screen = render(&mut app, 160, 45);
    insta::assert_snapshot!("congestion_cc_reaction", screen);
    assert!(screen.contains("prio 3: 6022 pkts") && screen.contains("82 CE (1.4%)"), "{screen}");
    assert!(screen.contains("prio 6: 24 CNPs only"), "{screen}");
    // Ranked by CE marks, then CNPs received: the sender that does not react comes first.
    let rows = app.congestion_rows();
    assert!(rows.congested);
    let shown = app.shown.clone().expect("snapshot");
    let ce: Vec<u64> = rows.flows.iter().map(|i| shown.report.flows[*i].ecn.ce).collect();
    // The two senders captured before the queue carry no mark, only CNPs back.
    assert_eq!(ce, [73, 9, 0, 0]);
    let qps: Vec<&str> = screen.lines().filter(|l| l.contains("QP 0x")).collect();
    assert!(qps[0].contains("QP 0x152 p3: 73 CE, 2 CNPs"), "{qps:?}");
    assert!(
        screen.lines().any(|l| l.starts_with("│> 10.0.0.57 → 10.0.0.58") && l.contains("CE %")),
        "{screen}"
    );
    let screen = render(&mut app, 80, 24);
    insta::assert_snapshot!("congestion_cc_reaction_80x24", screen);
    // Down, Enter: that QP's detail on the QPs screen, with its microbursts and CNPs.
    app.act(Action::Down);
    assert_eq!(app.selected[5], 1);
    app.act(Action::Enter);
    assert_eq!(app.screen, Screen::Qps);
    let conn = app.detail.expect("detail open");
    assert!(shown.report.connections[conn].flows.contains(&rows.flows[1]));
    let screen = render(&mut app, 160, 45);
    insta::assert_snapshot!("qp_detail_cc_reaction", screen);
    assert!(
        screen.contains("burst: busiest 10 µs: 0.88 Gb/s at +1.800 ms, most CE 1/1 at +1.800 ms"),
        "{screen}"
    );
    assert!(screen.contains("CNPs back: 8"), "{screen}");
    // Esc: back to the QPs list; 6 returns to the same row.
    app.act(Action::Back);
    app.act(Action::Screen(6));
    assert_eq!(app.selected[5], 1);
    for (w, h) in TINY {
        let _ = render(&mut app, w, h);
    }
}

#[test]
fn congestion_screen_without_congestion_or_roce() {
    // RoCE, no CE marks, CNPs or pauses: says so; the QPs by their busiest bin.
    let mut app = app_with(snapshot_10us("rc-normal.pcap"));
    app.act(Action::Screen(6));
    let screen = render(&mut app, 160, 30);
    insta::assert_snapshot!("congestion_none_rc_normal", screen);
    assert!(screen.contains("no congestion here: no CE marks, CNPs or pauses"), "{screen}");
    assert!(screen.contains("`--bin 10us|100us|1ms|10ms` sets the resolution (now 10 µs)"), "{screen}");
    assert!(screen.contains("QPs by their busiest 10 µs (no CE marks or CNPs): 4"), "{screen}");
    assert!(!app.congestion_rows().congested);
    // On 80 columns the note takes two lines rather than being cut.
    let screen = render(&mut app, 80, 24);
    insta::assert_snapshot!("congestion_none_rc_normal_80x24", screen);
    assert!(screen.contains("│`--bin 10us|100us|1ms|10ms` sets the resolution (now 10 µs)."), "{screen}");
    for (w, h) in TINY {
        let _ = render(&mut app, w, h);
    }
    // A live interface before any RoCE.
    let mut app = App::default();
    app.update(Snapshot::empty(Analyzer::new(Config::default()).report(), "eth0", true));
    app.act(Action::Screen(6));
    let screen = render(&mut app, 100, 12);
    insta::assert_snapshot!("congestion_empty_live", screen);
    assert!(
        screen.contains("no RoCE and no pauses yet") && screen.contains("`--bin 10us|100us|1ms|10ms`"),
        "{screen}"
    );
    app.act(Action::Enter);
    app.act(Action::Down);
    app.act(Action::NextPoint);
    assert_eq!((app.screen, app.point), (Screen::Congestion, 0));
    for (w, h) in TINY {
        let _ = render(&mut app, w, h);
    }
    // No snapshot at all.
    let mut app = App::default();
    app.act(Action::Screen(6));
    for (w, h) in TINY {
        let _ = render(&mut app, w, h);
    }
}

#[test]
fn congestion_screen_cycles_the_capture_points() {
    let mut app =
        app_with(snapshot_merged(&["two-points-sender.pcap", "two-points-receiver.pcap", "pfc-storm.pcap"]));
    app.act(Action::Screen(6));
    let shown = app.shown.clone().expect("snapshot");
    assert_eq!(shown.report.timeline.points.len(), 3);
    let screen = render(&mut app, 160, 30);
    assert!(screen.contains("point 1/3: two-points-sender.pcap ([ ] next)"), "{screen}");
    app.act(Action::Down);
    app.act(Action::NextPoint);
    assert_eq!((app.point, app.selected[5]), (1, 0), "a new point starts at its first QP");
    let screen = render(&mut app, 160, 30);
    assert!(screen.contains("point 2/3: two-points-receiver.pcap"), "{screen}");
    // Each point lists its own QPs.
    let at = shown.report.timeline.points[1].point;
    assert!(app.congestion_rows().flows.iter().all(|i| shown.report.flows[*i].point == at));
    app.act(Action::NextPoint);
    let screen = render(&mut app, 160, 30);
    assert!(screen.contains("point 3/3: pfc-storm.pcap") && screen.contains("pause µs/s"), "{screen}");
    app.act(Action::NextPoint);
    assert_eq!(app.point, 0, "wraps");
    app.act(Action::PrevPoint);
    assert_eq!(app.point, 2);
    // Only on this screen.
    app.act(Action::Screen(1));
    app.act(Action::PrevPoint);
    assert_eq!(app.point, 2);
}

/// The congestion screen names the receiver with the most senders at once, and where the
/// capture point sits relative to their queue (an incast seen past it).
#[test]
fn congestion_screen_shows_the_fan_in() {
    let cfg = Config { bin_ns: 10_000, link_speed_bps: 10_000_000_000, ..Config::default() };
    let mut app = app_with(snapshot_with("incast.pcap", cfg));
    app.act(Action::Screen(5));
    app.act(Action::NextScreen);
    assert_eq!(app.screen, Screen::Congestion);
    let screen = render(&mut app, 160, 45);
    assert!(screen.contains("fan-in 16 → 10.0.0.100, past the queue"), "{screen}");
}

/// A paste of 12,000 characters into the filter line stops at the limit with a message (a
/// paste that long, parsed after each key, froze the screen), and filters that nest deeper
/// than the parser allows are errors, not a stack overflow.
#[test]
fn a_huge_paste_into_the_filter_line_stops_at_its_limit() {
    let mut app = app_with(snapshot("demo.pcap", AuditConfig::default()));
    app.act(Action::Filter);
    for _ in 0..12_000 {
        app.filter_edit(LineEdit::Insert('('));
    }
    assert_eq!(app.filter_text.chars().count(), rocescope_tui::app::MAX_FILTER_CHARS);
    assert!(
        app.filter_error.as_deref().is_some_and(|e| e.contains("at most 1024")),
        "{:?}",
        app.filter_error
    );
    let _ = render(&mut app, 80, 24);
    let deep = format!("{}nak{}", "(".repeat(100_000), ")".repeat(100_000));
    let e = rocescope_tui::filter::Filter::parse(&deep).unwrap_err();
    assert!(e.contains("nests deeper than 64"), "{e}");
    let e = rocescope_tui::filter::Filter::parse(&format!("{}nak", "!".repeat(100_000))).unwrap_err();
    assert!(e.contains("nests deeper than 64"), "{e}");
    assert!(rocescope_tui::filter::Filter::parse(&format!("{}nak{}", "(".repeat(60), ")".repeat(60))).is_ok());
}

#[test]
fn a_released_picture_says_it_is_updating_and_keeps_the_place() {
    let s = snapshot("demo.pcap", AuditConfig::default());
    let mut app = app_with(s.clone());
    // Third row selected, then its detail opened.
    app.act(Action::Down);
    app.act(Action::Down);
    let conn = app.rows().get(2).expect("a third row").conn;
    app.act(Action::Enter);
    assert_eq!(app.detail, Some(conn));
    let first_flow = s.report.connections[conn].flows.first().copied();
    let big = app.release().expect("not frozen").expect("a picture to give up");
    assert_eq!(big.flows.len(), s.report.flows.len());
    assert_eq!(big.connections.len(), s.report.connections.len());
    let held = app.shown.as_ref().expect("the header stays");
    assert!(held.report.flows.is_empty() && held.report.connections.is_empty() && held.rows.is_none());
    assert!(app.updating);
    // The QPs screen (its detail too) and the Congestion screen say so; the others draw.
    let screen = render(&mut app, 160, 20);
    assert!(screen.contains("Updating: the next picture of 21 connections"), "{screen}");
    assert!(screen.contains("182 packets"), "the header stays: {screen}");
    app.act(Action::Screen(6));
    assert!(render(&mut app, 160, 20).contains("Updating"));
    app.act(Action::Screen(5));
    let screen = render(&mut app, 160, 20);
    assert!(!screen.contains("Updating") && screen.contains("critical"), "{screen}");
    // Keys that act on the rows wait; screens change.
    app.act(Action::Screen(1));
    for a in [Action::Back, Action::Down, Action::Bottom, Action::SortNext, Action::Freeze] {
        app.act(a);
    }
    assert!(!app.frozen, "no freezing a picture being rebuilt");
    // A new picture puts the selection where it was.
    app.update(s.clone());
    assert!(!app.updating);
    assert_eq!(app.selected[0], 2);
    assert_eq!(app.detail, None, "the detail left while updating stays closed");
    // An open detail follows its first flow into the next picture.
    app.act(Action::Enter);
    assert_eq!(app.detail, Some(conn));
    let _ = app.release();
    app.update(s.clone());
    let reopened =
        app.detail.and_then(|d| app.shown.as_ref()?.report.connections.get(d)?.flows.first().copied());
    assert_eq!(reopened, first_flow);
    // A frozen view keeps its picture.
    app.act(Action::Freeze);
    assert!(app.release().is_err());
    assert_eq!(app.shown.as_ref().map(|s| s.report.flows.len()), Some(s.report.flows.len()));
}

/// The Fabric screen (`7`): the rhythm of a synchronised job as a strip, the host that
/// finishes last every time in red, Enter on it opens its QP.
#[test]
fn fabric_screen_shows_the_iterations_and_the_straggler() {
    let mut app = app_with(snapshot("rhythm-straggler.pcap", AuditConfig::default()));
    app.act(Action::Screen(7));
    assert_eq!(app.screen, Screen::Fabric);
    let screen = render(&mut app, 160, 45);
    insta::assert_snapshot!("fabric_rhythm_straggler", screen);
    for text in [
        "one iteration every 10.0 ms (autocorrelation 0.87): 6 whole, 6 hosts sending",
        "busy 47% of each (median 4.7 ms, longest 4.7 ms)",
        "busy share per iteration: ▄▄▄▄▄▄",
        "> 10.0.0.66",
        "last in   6 of 6   by 3.0 ms at the median (62% of the busy part), QP 0x605: a straggler",
    ] {
        assert!(screen.contains(text), "{text}:\n{screen}");
    }
    let screen = render(&mut app, 80, 24);
    insta::assert_snapshot!("fabric_rhythm_straggler_80x24", screen);
    for (w, h) in TINY {
        let _ = render(&mut app, w, h);
    }
    // Enter: the straggler's connection, on the QPs screen.
    app.act(Action::Enter);
    assert_eq!(app.screen, Screen::Qps);
    let shown = app.shown.clone().expect("a snapshot");
    let conn = app.detail.and_then(|c| shown.report.connections.get(c)).expect("a QP detail");
    assert!(conn.flows.iter().any(|f| shown.report.flows[*f].dest_qp == 0x605), "{conn:?}");
    // A capture without a rhythm says what the screen needs.
    let mut app = app_with(snapshot("demo.pcap", AuditConfig::default()));
    app.act(Action::Screen(7));
    let screen = render(&mut app, 160, 45);
    assert!(screen.contains("no training rhythm here"), "{screen}");
    // Its rows are then the lower pane's lines, of which the elephants open their QPs.
    let shown = app.shown.clone().expect("a snapshot");
    let flows: Vec<usize> = rocescope_tui::fabric::rows(&shown.report, 0).into_iter().flatten().collect();
    let top: Vec<usize> = shown.report.elephants.top.iter().map(|e| e.flow).collect();
    assert_eq!(flows, top);
    assert!(app.row_count() > top.len(), "the other lines scroll too");
}

/// The Fabric screen's elephants and ECMP: a host pair whose busy QPs share one UDP source
/// port in red, the prediction over four paths with its busiest path, the elephants that
/// share it in red; Enter on an elephant opens its QP.
#[test]
fn fabric_screen_shows_the_elephants_and_where_ecmp_puts_them() {
    let ecmp = rocescope_analyzer::ecmp::EcmpConfig { paths: Some(4), ..Default::default() };
    let mut app = app_with(snapshot_with("ecmp/low-entropy.pcap", Config { ecmp, ..Config::default() }));
    app.act(Action::Screen(7));
    let screen = render(&mut app, 160, 45);
    insta::assert_snapshot!("fabric_ecmp_low_entropy", screen);
    let shown = app.shown.clone().expect("a snapshot");
    let r = &shown.report;
    let p = r.ecmp.prediction.as_ref().expect("a prediction");
    let pair = r.ecmp.host_pairs.first().expect("a host pair");
    for text in [
        format!(
            "{} → {}: {} QPs ({} busy) on 1 port(s), {} on port {}",
            pair.src, pair.dst, pair.qps, pair.busy_qps, pair.top_port_qps, pair.top_port
        ),
        ": ECMP cannot spread them".to_string(),
        format!("busiest path {} at {:.2}x the mean", p.busiest, p.max_over_mean),
        format!("on the overloaded path {} (predicted)", p.busiest),
    ] {
        assert!(screen.contains(&text), "{text}:\n{screen}");
    }
    // No rhythm: the rows are the pane's lines; the elephants' open their QPs, the header,
    // the entropy lines and the path bars only scroll (issue 41: at 80x24 the bars were out
    // of reach).
    let rows = rocescope_tui::fabric::rows(r, 0);
    assert_eq!(app.row_count(), rows.len());
    let flows: Vec<usize> = rows.iter().flatten().copied().collect();
    assert_eq!(flows, r.elephants.top.iter().map(|e| e.flow).collect::<Vec<_>>());
    app.act(Action::Bottom);
    let bottom = render(&mut app, 80, 24);
    assert!(bottom.contains(&format!("│>   path {:<4}", p.loads.len().min(8) - 1)), "{bottom}");
    app.act(Action::Top);
    let _ = render(&mut app, 80, 24);
    for (w, h) in TINY {
        let _ = render(&mut app, w, h);
    }
    // Enter on the second elephant (the pane's third line): its connection.
    app.act(Action::Down);
    app.act(Action::Down);
    app.act(Action::Enter);
    assert_eq!(app.screen, Screen::Qps);
    let second = r.elephants.top.get(1).expect("two elephants").flow;
    let conn = app.detail.and_then(|c| r.connections.get(c)).expect("a QP detail");
    assert!(conn.flows.contains(&second), "{conn:?}");
}

#[test]
fn every_screen_fits_80x24_with_the_way_out_on_it() {
    let mut app = app_with(snapshot("demo.pcap", AuditConfig::default()));
    for (i, name) in
        ["qps", "packets", "pause", "audit", "findings", "congestion", "fabric"].iter().enumerate()
    {
        app.act(Action::Screen(i as u8 + 1));
        let screen = render(&mut app, 80, 24);
        assert!(screen.lines().last().is_some_and(|l| l.starts_with("q quit  ? keys")), "{screen}");
        insta::assert_snapshot!(format!("at_80x24_{name}"), screen);
    }
    // The help lists every key, `q` first, and closes on any key.
    app.act(Action::Screen(1));
    app.act(Action::Help);
    let screen = render(&mut app, 80, 24);
    insta::assert_snapshot!("at_80x24_help", screen);
    for key in ["q, Ctrl-C", "Tab, Shift-Tab", "? ", "/ "] {
        assert!(screen.contains(key), "{key} missing from the help:\n{screen}");
    }
    // `c` on a file keeps the analysis and says why.
    app.act(Action::Back);
    let before = app.rows().len();
    app.act(Action::Clear);
    assert!(!app.clear_requested);
    assert_eq!(app.rows().len(), before);
    let screen = render(&mut app, 80, 24);
    assert!(screen.contains("a file's analysis is kept"), "{screen}");
    app.act(Action::Down);
    assert!(app.notice.is_none(), "the notice goes with the next key");
}

#[test]
fn slash_on_the_packets_screen_filters_packets() {
    let mut app = app_with(snapshot("nak-gobackn.pcap", AuditConfig::default()));
    let all = app.packet_rows(app.shown.as_ref().unwrap()).len();
    app.act(Action::Screen(2));
    app.act(Action::Filter);
    assert!(app.editing_packets);
    app.filter_edits("nak or infiniband.bth.psn == 105".chars().map(LineEdit::Insert));
    assert_eq!(app.filter_error, None);
    app.filter_edits([LineEdit::Apply]);
    assert!(!app.editing_filter && !app.editing_packets);
    let s = app.shown.clone().unwrap();
    let rows = app.packet_rows(&s);
    assert!(!rows.is_empty() && rows.len() < all, "{} of {all}", rows.len());
    // The frames `decode -Y` shows for the same filter.
    assert_eq!(rows.iter().map(|f| f.number).collect::<Vec<_>>(), [5, 6, 9]);
    // The selection is on the newest match, the footer names the packet filter, and the
    // connection filter is untouched.
    assert_eq!(app.selected[1], rows.len() - 1);
    let screen = render(&mut app, 160, 20);
    assert!(screen.contains("packet filter: nak or infiniband.bth.psn == 105"), "{screen}");
    assert!(screen.contains(&format!("packets matching the filter: 3 of the last {all}")), "{screen}");
    assert!(app.filter.is_none() && app.filter_text.is_empty());
    app.act(Action::Screen(1));
    assert_eq!(app.rows().len(), s.report.connections.len());
    // A packet-only name does not parse as a connection filter, and the other way round.
    app.act(Action::Screen(2));
    app.act(Action::Filter);
    app.filter_edits([
        LineEdit::Insert(' '),
        LineEdit::Insert('a'),
        LineEdit::Insert('n'),
        LineEdit::Insert('d'),
    ]);
    app.filter_edits(" gaps>0".chars().map(LineEdit::Insert));
    assert!(app.filter_error.as_deref().is_some_and(|e| e.contains("connection")), "{:?}", app.filter_error);
    // Esc gives the filter back as it was.
    app.filter_edits([LineEdit::Cancel]);
    assert_eq!(app.packet_filter_text, "nak or infiniband.bth.psn == 105");
    assert_eq!(app.packet_rows(&s).len(), rows.len());
}

#[test]
fn the_packet_filter_decodes_as_the_worker_did() {
    // Told that RoCE is on another UDP port, the worker would not have read these frames as
    // RoCE: neither does the Packets screen's filter.
    let mut s = snapshot("nak-gobackn.pcap", AuditConfig::default());
    let mut app = app_with(s.clone());
    app.act(Action::Screen(2));
    app.act(Action::Filter);
    app.filter_edits("nak".chars().map(LineEdit::Insert));
    app.filter_edits([LineEdit::Apply]);
    assert_eq!(app.packet_rows(&s).len(), 1);
    s.decode.roce_port = 4792;
    assert_eq!(app.packet_rows(&s).len(), 0);
}

/// Issue 41: an 80x24 terminal on real captures. Every screen is snapshotted; the QPs rows
/// show their QP numbers (the addresses are what is cut); the key list closes on `q` and
/// `Esc` without quitting and no help line is cut; the Packets lines scroll sideways; every
/// line of the Fabric screen's lower pane is reachable.
#[test]
fn every_screen_at_80x24_on_real_captures() {
    for name in ["rocev2_test.pcap", "rdma-nccl2.pcap"] {
        let Some(path) = real(name) else { return };
        let mut app = app_with(snapshot_of(&path, name, Config::default()));
        let screens = ["qps", "packets", "pause", "audit", "findings", "congestion", "fabric"];
        for (i, screen) in screens.iter().enumerate() {
            app.act(Action::Screen(i as u8 + 1));
            let shot = render(&mut app, 80, 24);
            insta::assert_snapshot!(format!("real_80x24_{}_{screen}", name.replace(['.', '-'], "_")), shot);
        }
        // QPs: each row's two QP numbers are on screen.
        app.act(Action::Screen(1));
        let shot = render(&mut app, 80, 24);
        let rows: Vec<&str> = shot.lines().skip(6).take_while(|l| !l.starts_with('└')).collect();
        assert!(!rows.is_empty(), "{shot}");
        for row in &rows {
            assert!(
                row.matches(" 0x").count() + row.matches(" ? ").count() >= 2,
                "a row without its QPs: {row}\n{shot}"
            );
        }
        // The key list: q and Esc close it, and the program goes on.
        for close in [Action::Quit, Action::Back] {
            app.act(Action::Help);
            assert!(app.help);
            let shot = render(&mut app, 80, 24);
            for b in rocescope_tui::keys::KEYS.iter().filter(|b| !b.label.is_empty()) {
                let last = b.help.split(' ').next_back().unwrap_or_default();
                assert!(shot.contains(last), "help for {} cut:\n{shot}", b.label);
            }
            app.act(close);
            assert!(!app.help && !app.quit, "{close:?} closes the key list only");
        }
        // Packets: Right shows a line's end, Left brings its start back.
        app.act(Action::Screen(2));
        let start = render(&mut app, 80, 24);
        app.act(Action::ScrollRight);
        let right = render(&mut app, 80, 24);
        assert_ne!(start, right);
        assert!(right.contains("from column 21"), "{right}");
        app.act(Action::ScrollLeft);
        assert_eq!(render(&mut app, 80, 24), start);
        // Fabric: G selects the pane's last line, and it is drawn.
        app.act(Action::Screen(7));
        app.act(Action::Bottom);
        let shot = render(&mut app, 80, 24);
        let marked: Vec<&str> = shot.lines().filter(|l| l.starts_with("│> ")).collect();
        assert_eq!(marked.len(), 1, "{shot}");
    }
}

/// Issue 41: the `/` badge shows only where the filter applies (the QPs rows).
#[test]
fn the_filter_badge_only_where_it_filters() {
    let mut app = app_with(snapshot("demo.pcap", AuditConfig::default()));
    app.act(Action::Filter);
    app.filter_edits("ce>0".chars().map(LineEdit::Insert));
    app.filter_edits([LineEdit::Apply]);
    assert!(render(&mut app, 80, 24).contains("filter: ce>0"));
    app.act(Action::Screen(5));
    let findings = render(&mut app, 80, 24);
    assert!(!findings.contains("filter: ce>0"), "{findings}");
    app.act(Action::Screen(1));
    assert!(render(&mut app, 80, 24).contains("filter: ce>0"));
}
