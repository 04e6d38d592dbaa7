//! Rendering: header, tabs, the current screen, footer, help. Pure functions of the state.

use crate::app::{App, Screen};
use crate::congestion::{fmt_dur, resample};
use crate::keys::KEYS;
use crate::snapshot::FrameLine;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Cell, Clear, Gauge, Paragraph, Row, Sparkline, Table, TableState, Tabs, Wrap};
use ratatui::Frame;
use rocescope_analyzer::report::Severity;
use rocescope_analyzer::PauseKind;

/// Turns a frame into its decoded tree and hex dump (the worker's decoder, passed in).
pub type TreeFn<'a> = &'a dyn Fn(&FrameLine) -> String;

fn health_style(h: &str) -> Style {
    match h {
        "critical" => Style::new().fg(Color::Red).add_modifier(Modifier::BOLD),
        "warning" => Style::new().fg(Color::Yellow),
        "info" => Style::new().fg(Color::Cyan),
        _ => Style::new().fg(Color::Green),
    }
}

fn health_mark(h: &str) -> &'static str {
    match h {
        "critical" => "!! crit",
        "warning" => "!  warn",
        "info" => "i  info",
        _ => "   ok",
    }
}

fn sev_name(s: Severity) -> &'static str {
    match s {
        Severity::Critical => "critical",
        Severity::Warning => "warning",
        Severity::Info => "info",
    }
}

fn list(v: &[u8]) -> String {
    if v.is_empty() {
        "-".into()
    } else {
        v.iter().map(u8::to_string).collect::<Vec<_>>().join(",")
    }
}

/// Draw everything.
pub fn draw(f: &mut Frame<'_>, app: &mut App, tree: TreeFn<'_>) {
    let area = f.area();
    let [header, tabs, body, footer] = Layout::vertical([
        Constraint::Length(3),
        Constraint::Length(1),
        Constraint::Min(3),
        Constraint::Length(1),
    ])
    .areas(area);
    app.page = usize::from(body.height.saturating_sub(3)).max(1);
    draw_header(f, app, header);
    let titles: Vec<Line<'_>> = Screen::ALL.iter().map(|s| Line::from(s.title())).collect();
    let idx = Screen::ALL.iter().position(|s| *s == app.screen).unwrap_or(0);
    f.render_widget(
        Tabs::new(titles)
            .select(idx)
            .highlight_style(Style::new().add_modifier(Modifier::REVERSED))
            .divider("|"),
        tabs,
    );
    match app.screen {
        Screen::Qps | Screen::Congestion if app.updating => draw_updating(f, app, body),
        Screen::Qps if app.detail.is_some() => draw_detail(f, app, body),
        Screen::Qps => draw_qps(f, app, body),
        Screen::Packets => draw_packets(f, app, body, tree),
        Screen::Pause => draw_pause(f, app, body),
        Screen::Audit => draw_audit(f, app, body),
        Screen::Findings => draw_findings(f, app, body),
        Screen::Congestion => crate::congestion::draw(f, app, body),
        Screen::Fabric => crate::fabric::draw(f, app, body),
    }
    draw_footer(f, app, footer);
    if app.help {
        draw_help(f, area);
    }
}

/// The QPs and Congestion screens while the worker builds the next snapshot
/// ([`App::release`]).
fn draw_updating(f: &mut Frame<'_>, app: &App, area: Rect) {
    let n = app.shown.as_ref().map_or(0, |s| s.report.summary.connections);
    let text = format!(
        "Updating: the next picture of {n} connections is being built. The last one was freed first, so that only one is held in memory; the other screens stay as they were."
    );
    f.render_widget(
        Paragraph::new(text).wrap(Wrap { trim: true }).block(Block::bordered().title(" updating ")),
        area,
    );
}

fn draw_header(f: &mut Frame<'_>, app: &App, area: Rect) {
    let Some(s) = &app.shown else {
        f.render_widget(Paragraph::new("waiting for the first packets ..."), area);
        return;
    };
    let sm = &s.report.summary;
    let span_s = match (sm.start_ns, sm.end_ns) {
        (Some(a), Some(b)) => (b - a) as f64 / 1e9,
        _ => 0.0,
    };
    let drops = drops_text(&s.report);
    let mode = if s.live {
        "live"
    } else if s.done {
        "file"
    } else {
        "file, analysing"
    };
    let frozen = if app.frozen { "  [FROZEN: Space to resume]" } else { "" };
    let line1 = Line::from(vec![
        Span::styled("rocescope ", Style::new().add_modifier(Modifier::BOLD)),
        Span::raw(format!("{} ({mode}){frozen}", s.source)),
    ]);
    // Most important first; on a narrow terminal the tail parts give way.
    let mut parts = vec![format!("{} packets ({} RoCE)", sm.packets, sm.roce)];
    if let Some(q) = &sm.capture_quality {
        // Before the rates it qualifies (crate::report::quality in the analyzer).
        parts.push(format!("capture holds ~{:.0}%: rates sampled", (q.share * 100.0).round().max(1.0)));
    }
    parts.push(rates(s, span_s));
    if !s.live && s.replay.is_none() && !s.done {
        // How fast the file is being read: progress, not a property of the network.
        parts.push(format!("read {:.0} pkt/s", s.rate_pps));
    }
    parts.extend([
        format!("drops {drops}"),
        format!("ICRC bad {}", sm.icrc_bad),
        format!("malformed {}", sm.malformed),
    ]);
    if sm.duplicates > 0 {
        parts.push(format!("mirror dups {}", sm.duplicates));
    }
    parts.extend([format!("elapsed {:.1} s", s.elapsed_s), format!("capture span {:.3} s", span_s)]);
    let mut text = String::new();
    for p in parts {
        let sep = if text.is_empty() { "" } else { " | " };
        if !text.is_empty() && text.chars().count() + sep.len() + p.chars().count() > usize::from(area.width)
        {
            break;
        }
        text.push_str(sep);
        text.push_str(&p);
    }
    let line2 = Line::from(text);
    let fc = &sm.findings;
    let line3 = Line::from(vec![
        Span::raw("findings: "),
        Span::styled(format!("{} critical", fc.critical), health_style("critical")),
        Span::raw(", "),
        Span::styled(format!("{} warning", fc.warning), health_style("warning")),
        Span::raw(", "),
        Span::styled(format!("{} info", fc.info), health_style("info")),
        Span::raw(format!(" | {} connections, {} flows", sm.connections, sm.flows)),
    ]);
    match (s.progress, s.done) {
        (Some(p), false) => {
            let [top, gauge] = Layout::vertical([Constraint::Length(2), Constraint::Length(1)]).areas(area);
            f.render_widget(Paragraph::new(vec![line1, line2]), top);
            f.render_widget(
                Gauge::default().ratio(p.clamp(0.0, 1.0)).label(format!("analysing {:.0}%", p * 100.0)),
                gauge,
            );
        }
        _ => f.render_widget(Paragraph::new(vec![line1, line2, line3]), area),
    }
    let warn = Rect { y: area.y + 2, height: area.height.saturating_sub(2).min(1), ..area };
    if let Some(e) = &s.error {
        f.render_widget(Paragraph::new(format!("stopped: {e}")).style(health_style("critical")), warn);
    } else if let Some(n) = &s.notice {
        f.render_widget(Paragraph::new(n.as_str()).style(health_style("warning")), warn);
    }
}

/// The header's rate. Live and replayed captures: the last interval, per second of capture
/// time. A file analysed as fast as it reads: its reading speed would say nothing about the
/// network, so the capture's own mean rate over its span.
/// The header's capture drops: a live run's libpcap counters; else what the files recorded
/// (pcapng statistics blocks); `-` when neither is known.
fn drops_text(r: &rocescope_analyzer::report::Report) -> String {
    let recorded = r.points.iter().filter_map(|p| p.capture_counters.as_ref()?.dropped);
    match (&r.capture, recorded.reduce(u64::saturating_add)) {
        (Some(c), _) => format!("{} kernel / {} if", c.kernel_dropped, c.if_dropped),
        (None, Some(n)) => format!("{n} (recorded in the file)"),
        (None, None) => String::from("-"),
    }
}

fn rates(s: &crate::Snapshot, span_s: f64) -> String {
    match s.replay {
        _ if s.live => format!("{:.0} pps, {:.2} Gb/s", s.rate_pps, s.rate_gbps),
        Some(x) => format!("{:.0} pps, {:.2} Gb/s (replay {x}x)", s.rate_pps, s.rate_gbps),
        None if span_s > 0.0 => format!(
            "capture mean {:.0} pps, {:.2} Gb/s",
            s.report.summary.packets as f64 / span_s,
            s.wire_bytes as f64 * 8.0 / span_s / 1e9
        ),
        None => "capture mean -".into(),
    }
}

fn draw_footer(f: &mut Frame<'_>, app: &App, area: Rect) {
    let line = if app.editing_filter {
        let state = match &app.filter_error {
            Some(e) => Span::styled(format!("  invalid: {e}"), health_style("critical")),
            None => Span::styled("  valid (Enter to keep, Esc to cancel)", health_style("ok")),
        };
        // The terminal's cursor sits where the next character goes (Ctrl-A/E, arrows move it).
        let before: String = app.filter_text.chars().take(app.filter_cursor).collect();
        let x = area.x.saturating_add(1).saturating_add(Span::raw(before).width() as u16);
        if area.height > 0 && x < area.right() {
            f.set_cursor_position((x, area.y));
        }
        Line::from(vec![Span::raw(format!("/{}", app.filter_text)), state])
    } else if let Some(n) = &app.notice {
        Line::from(Span::styled(n.clone(), health_style("warning")))
    } else if app.screen == Screen::Packets && !app.packet_filter_text.is_empty() {
        Line::from(format!("packet filter: {}   (/ to edit)   q quit  ? keys", app.packet_filter_text))
    } else if app.screen == Screen::Qps && !app.filter_text.is_empty() {
        // Only where it filters: the QPs rows (issue 41: Findings showed the badge over all
        // of its rows).
        Line::from(format!("filter: {}   (/ to edit)   q quit  ? keys", app.filter_text))
    } else {
        let live = app.shown.as_ref().is_some_and(|s| s.live);
        Line::from(key_bar(usize::from(area.width), live))
    };
    f.render_widget(Paragraph::new(line), area);
}

/// The key bar, most needed first: as many as fit in `width` columns (`q quit` and `? keys`
/// always, so an 80-column terminal shows how to leave and where the rest is). `c clear`
/// only live: a file is not cleared.
fn key_bar(width: usize, live: bool) -> String {
    const BAR: [&str; 10] = [
        "q quit",
        "? keys",
        "Tab screens",
        "Enter open",
        "Esc back",
        "/ filter",
        "Space freeze",
        "s/S sort",
        "v flows",
        "c clear",
    ];
    let mut out = String::new();
    for k in BAR.iter().filter(|k| live || !k.starts_with("c ")) {
        let sep = if out.is_empty() { "" } else { "  " };
        if !out.is_empty() && out.len() + sep.len() + k.len() > width {
            break;
        }
        out.push_str(sep);
        out.push_str(k);
    }
    out
}

/// QPs columns: title, width, and whether a narrow terminal (under [`WIDE_QPS`] columns)
/// keeps it. Narrow keeps what answers "is it losing, is it marked": 80x24 stays readable.
const QP_COLUMNS: [(&str, Constraint, bool); 14] = [
    ("health", Constraint::Length(7), true),
    ("QP A", Constraint::Min(16), true),
    ("QP B", Constraint::Min(16), true),
    ("pkts", Constraint::Length(7), true),
    ("Gb/s now/peak", Constraint::Length(13), false),
    ("msgs", Constraint::Length(6), false),
    ("gaps", Constraint::Length(5), true),
    ("retx n/t", Constraint::Length(8), true),
    ("NAKs", Constraint::Length(5), true),
    ("RNR", Constraint::Length(4), false),
    ("CE%", Constraint::Length(5), true),
    ("CNPs", Constraint::Length(5), false),
    ("DSCP", Constraint::Length(6), false),
    ("PCP", Constraint::Length(4), false),
];

/// A fixed column's width (a `Min` column's least).
fn width_of(c: Constraint) -> u16 {
    match c {
        Constraint::Length(n) | Constraint::Min(n) => n,
        _ => 0,
    }
}

/// Terminal width from which every QPs column is shown.
const WIDE_QPS: u16 = 130;

fn draw_qps(f: &mut Frame<'_>, app: &App, area: Rect) {
    let rows = app.rows();
    let wide = area.width >= WIDE_QPS;
    let keep = |i: usize| wide || QP_COLUMNS[i].2;
    let title_of = |i: usize, t: &'static str| match (i, app.by_flow) {
        (1, true) => "source",
        (2, true) => "destination (QP)",
        _ => t,
    };
    let Some(s) = &app.shown else { return };
    // Merged captures: a column naming each row's capture point, after the health.
    let point_w = if s.report.points.len() > 1 {
        s.report.points.iter().map(|p| p.name.chars().count()).max().unwrap_or(5).clamp(5, 24) as u16
    } else {
        0
    };
    let with_point = |mut v: Vec<Cell<'static>>, point: Cell<'static>| {
        if point_w > 0 {
            v.insert(1.min(v.len()), point);
        }
        v
    };
    let header = Row::new(with_point(
        QP_COLUMNS
            .iter()
            .enumerate()
            .filter(|(i, _)| keep(*i))
            .map(|(i, c)| Cell::from(title_of(i, c.0)))
            .collect(),
        Cell::from("point"),
    ))
    .style(Style::new().add_modifier(Modifier::BOLD));
    let sel = app.selected[0].min(rows.len().saturating_sub(1));
    // Build widgets for the visible window only (the selection kept in view): formatting
    // 10,000 rows to show 40 is what made large captures sluggish.
    // The host columns' width, so a label cut there says so (`…`): the QP comes first and
    // stays (issue 41).
    let fixed: u16 = QP_COLUMNS
        .iter()
        .enumerate()
        .filter(|(i, _)| keep(*i) && *i != 1 && *i != 2)
        .map(|(_, c)| width_of(c.1))
        .sum();
    let n_cols =
        QP_COLUMNS.iter().enumerate().filter(|(i, _)| keep(*i)).count() as u16 + u16::from(point_w > 0);
    let host_w =
        usize::from(area.width.saturating_sub(2 + 2 + fixed + point_w + n_cols.saturating_sub(1)) / 2);
    let fit = |label: &str| -> String {
        if label.chars().count() <= host_w || host_w < 2 {
            label.to_string()
        } else {
            label.chars().take(host_w - 1).chain(['…']).collect()
        }
    };
    let visible = usize::from(area.height.saturating_sub(3)).max(1);
    let start = (sel + 1).saturating_sub(visible);
    app.qps_offset.set(start);
    let body: Vec<Row<'_>> = rows
        .window(start, visible)
        .map(|r| {
            let cells = [
                Cell::from(health_mark(r.row.health)).style(health_style(r.row.health)),
                Cell::from(fit(&r.a_label)),
                Cell::from(fit(&r.b_label)),
                Cell::from(format!("{}", r.row.pkts)),
                Cell::from(format!("{:.2}/{:.2}", r.gbps_now, r.gbps_peak)),
                Cell::from(r.messages.to_string()),
                Cell::from(format!("{}", r.row.gaps)),
                Cell::from(format!("{}/{}", r.retx_nak, r.retx_timeout)),
                Cell::from(format!("{}", r.row.naks)),
                Cell::from(format!("{}", r.row.rnr)),
                Cell::from(format!("{:.2}", r.row.ce)),
                Cell::from(format!("{}", r.row.cnps)),
                Cell::from(list(&r.row.dscp)),
                Cell::from(list(&r.row.pcp)),
            ];
            Row::new(with_point(
                cells.into_iter().enumerate().filter(|(i, _)| keep(*i)).map(|(_, c)| c).collect(),
                Cell::from(r.point.clone()),
            ))
        })
        .collect();
    let mut widths: Vec<Constraint> =
        QP_COLUMNS.iter().enumerate().filter(|(i, _)| keep(*i)).map(|(_, c)| c.1).collect();
    if point_w > 0 {
        widths.insert(1, Constraint::Length(point_w));
    }
    let title = format!(
        " {}: {} of {} (sorted by {}{}){} ",
        if app.by_flow { "flows" } else { "QPs" },
        rows.len(),
        if app.by_flow { s.report.flows.len() } else { s.report.connections.len() },
        app.sort.0.name(),
        if app.sort.1 { ", reversed" } else { "" },
        if wide { "" } else { ", widen for all columns" }
    );
    let table = Table::new(body, widths)
        .header(header)
        .block(Block::bordered().title(title))
        .row_highlight_style(Style::new().add_modifier(Modifier::REVERSED))
        .highlight_symbol("> ");
    let mut state =
        TableState::default().with_selected(if rows.is_empty() { None } else { Some(sel - start) });
    f.render_stateful_widget(table, area, &mut state);
}

/// A flow's UDP source port (its ECMP entropy), and how it changed.
fn sport_text(fl: &rocescope_analyzer::report::FlowReport) -> String {
    match (fl.udp_src_port, fl.udp_src_port_last) {
        (None, _) => "- (RoCEv1)".to_string(),
        (Some(p), Some(last)) => format!("{p}, changed {}x (now {last})", fl.udp_src_port_changes),
        (Some(p), None) => p.to_string(),
    }
}

/// The QP detail's text for one direction: its title and lines (unwrapped).
fn detail_text(fl: &rocescope_analyzer::report::FlowReport) -> (String, Vec<String>) {
    let lat = |l: &Option<Box<rocescope_analyzer::stats::LatencySummary>>| {
        l.as_deref().map_or("-".into(), |l| {
            format!(
                "p50 {:.1} us, p99 {:.1} us (n={})",
                l.p50_ns as f64 / 1e3,
                l.p99_ns as f64 / 1e3,
                l.count
            )
        })
    };
    let text = vec![
        Line::from(format!(
            "{} packets, {} bytes, {} messages, PMTU {} | UDP source port {}",
            fl.packets,
            fl.bytes,
            fl.messages,
            fl.pmtu,
            sport_text(fl)
        )),
        Line::from(format!(
            "PSN: {} gaps ({} missing), {} dup, {} late (max {:.1} us), {} spurious NAKs",
            fl.psn.gaps,
            fl.psn.missing,
            fl.psn.duplicates,
            fl.psn.out_of_order,
            fl.psn.max_late_ns as f64 / 1e3,
            fl.psn.spurious_naks
        )),
        Line::from(format!(
            "resent: {} NAK / {} timeout / {} RNR / {} implied / {} unknown",
            fl.psn.retransmits_nak,
            fl.psn.retransmits_timeout,
            fl.psn.retransmits_rnr,
            fl.psn.retransmits_implied,
            fl.psn.retransmits_unknown
        )),
        Line::from(format!(
            "loss: {} network, {} capture | ACKs {} | NAKs {} seq, {} other | RNR {}",
            fl.psn.network_loss_gaps,
            fl.psn.capture_loss_gaps,
            fl.acks,
            fl.naks.psn_seq_err,
            fl.naks.invalid_request
                + fl.naks.remote_access
                + fl.naks.remote_operational
                + fl.naks.invalid_rd
                + fl.naks.other,
            fl.naks.rnr
        )),
        Line::from(format!(
            "ECN: {} ECT0, {} ECT1, {} Not-ECT, {} CE ({:.2}%) | CNPs {} carried, {} back",
            fl.ecn.ect0,
            fl.ecn.ect1,
            fl.ecn.not_ect,
            fl.ecn.ce,
            fl.ecn.ce_fraction * 100.0,
            fl.cnps,
            fl.cnps_received
        )),
        Line::from(format!("ACK latency: {}", lat(&fl.latency.ack))),
        Line::from(format!("READ latency: {}", lat(&fl.latency.read))),
        Line::from(format!("NAK to resend: {}", lat(&fl.latency.nak_to_retransmit))),
        // With congestion-control figures (a flow that saw CE marks or CNPs), the CE to
        // CNP line carries them in short: CNP spacing, too fast, rate falls.
        Line::from(match &fl.cc {
            Some(cc) => format!(
                "CE to CNP: {} | CNPs {} apart, {} too fast | rate fell {}/{}",
                fl.latency
                    .ce_to_cnp
                    .as_deref()
                    .map_or("-".into(), |l| format!("p50 {:.1} us", l.p50_ns as f64 / 1e3)),
                cc.cnp_interval.map_or("-".into(), |l| format!("p50 {:.1} us", l.p50_ns as f64 / 1e3)),
                cc.cnp_too_fast,
                cc.reaction.fell,
                cc.reaction.evaluated
            ),
            None => format!("CE to CNP: {}", lat(&fl.latency.ce_to_cnp)),
        }),
        Line::from(format!(
            "DSCP {} PCP {} | ICRC bad {} | Gb/s mean {:.2}, peak {:.2}",
            list(&fl.dscp),
            list(&fl.pcp),
            fl.icrc_bad,
            fl.throughput.mean_gbps,
            fl.throughput.peak_gbps
        )),
        Line::from(burst_text(&fl.throughput.burst)),
    ];
    let title = format!(" {} → {} QP 0x{:06x} ", fl.src, fl.dst, fl.dest_qp);
    (title, text.into_iter().map(|l| l.to_string()).collect())
}

/// Lines `text` takes when word-wrapped to `width` columns (as `Wrap { trim: true }` does,
/// near enough: a word longer than the width is cut across lines).
fn wrapped_lines(text: &str, width: usize) -> usize {
    let width = width.max(1);
    let (mut lines, mut at) = (1usize, 0usize);
    for word in text.split_whitespace() {
        let n = word.chars().count();
        let need = if at == 0 { n } else { at + 1 + n };
        if need <= width {
            at = need;
        } else if n <= width {
            lines += 1;
            at = n;
        } else {
            // A word wider than the box: it is broken.
            lines += usize::from(at > 0) + (n - 1) / width;
            at = (n - 1) % width + 1;
        }
    }
    lines
}

fn draw_detail(f: &mut Frame<'_>, app: &App, area: Rect) {
    let Some(s) = &app.shown else { return };
    let Some(c) = app.detail.and_then(|d| s.report.connections.get(d)) else { return };
    let flows: Vec<_> = c.flows.iter().filter_map(|i| s.report.flows.get(*i).map(|fl| (*i, fl))).collect();
    let texts: Vec<(String, Vec<String>)> = flows.iter().map(|(_, fl)| detail_text(fl)).collect();
    // The boxes grow to hold their wrapped lines (a narrow terminal wraps most of them),
    // leaving the charts and at least three lines of events.
    let halves =
        Layout::horizontal(vec![Constraint::Ratio(1, flows.len().max(1) as u32); flows.len().max(1)])
            .split(area);
    let needed = texts
        .iter()
        .zip(halves.iter())
        .map(|((_, lines), col)| {
            let inner = usize::from(col.width.saturating_sub(2)).max(1);
            lines.iter().map(|l| wrapped_lines(l, inner)).sum::<usize>() + 2
        })
        .max()
        .unwrap_or(13);
    let room = area.height.saturating_sub(6 + 3).max(3);
    let top_h = u16::try_from(needed).unwrap_or(u16::MAX).max(13).min(room);
    let [top, spark, events] =
        Layout::vertical([Constraint::Length(top_h), Constraint::Length(6), Constraint::Min(3)]).areas(area);
    let cols = Layout::horizontal(vec![Constraint::Ratio(1, flows.len().max(1) as u32); flows.len().max(1)])
        .split(top);
    for ((title, text), col) in texts.into_iter().zip(cols.iter()) {
        let text: Vec<Line<'_>> = text.into_iter().map(Line::from).collect();
        f.render_widget(
            Paragraph::new(text).block(Block::bordered().title(title)).wrap(Wrap { trim: true }),
            *col,
        );
    }
    let axis_ns = crate::congestion::capture_axis_ns(&s.report);

    let scols = Layout::horizontal(vec![Constraint::Ratio(1, flows.len().max(1) as u32); flows.len().max(1)])
        .split(spark);
    for ((_, fl), col) in flows.iter().zip(scols.iter()) {
        // Shares that keep each title whole in a half of 160 columns.
        let [tp, ce, cn, rs] = Layout::horizontal([
            Constraint::Fill(26),
            Constraint::Fill(21),
            Constraint::Fill(17),
            Constraint::Fill(16),
        ])
        .areas(*col);
        let t = &fl.throughput;
        // Every chart on the capture's time axis (as the Congestion screen's): the bins
        // resampled onto the chart's columns, so a flow late in the capture is drawn where
        // it was, and both directions line up.
        let cols = |r: Rect| usize::from(r.width.saturating_sub(2));
        let on = |v: &[u64], r: Rect| resample(v, t.bin_ns, axis_ns, cols(r));
        // Sparklines take integers: thousandths keep a fraction of a packet per column.
        let milli =
            |v: Vec<f64>| -> Vec<u64> { v.into_iter().map(|x| (x * 1000.0).round() as u64).collect() };
        let title = format!(" Gb/s /{}, peak {:.2} ", fmt_dur(t.bin_ns as f64), t.peak_gbps);
        f.render_widget(
            Sparkline::default().block(Block::bordered().title(title)).data(milli(on(&t.bins, tp))),
            tp,
        );
        // CE marks per 1000 packets in each bin: DCQCN's input, over time.
        let permille: Vec<u64> =
            t.ce.iter().zip(&t.packets).map(|(c, p)| if *p > 0 { c * 1000 / p } else { 0 }).collect();
        let peak = permille.iter().copied().max().unwrap_or(0);
        let title = format!(" CE %, peak {:.1}% ", peak as f64 / 10.0);
        let shown: Vec<u64> = on(&t.ce, ce)
            .iter()
            .zip(on(&t.packets, ce))
            .map(|(c, p)| if p > 0.0 { (c * 1000.0 / p).round().min(1000.0) as u64 } else { 0 })
            .collect();
        f.render_widget(
            Sparkline::default()
                .block(Block::bordered().title(title))
                .style(Style::new().fg(Color::Yellow))
                .max(1000)
                .data(shown),
            ce,
        );
        // A count per bin, titled with its total.
        let mut counts = |name: &str, v: &[u64], color: Color, r: Rect| {
            let title = format!(" {name}: {} ", v.iter().sum::<u64>());
            f.render_widget(
                Sparkline::default()
                    .block(Block::bordered().title(title))
                    .style(Style::new().fg(color))
                    .data(milli(on(v, r))),
                r,
            );
        };
        // CNPs this (data) flow's sender received per bin: DCQCN's brake, under the CE marks.
        counts("CNPs back", &t.cnps, Color::Magenta, cn);
        // Resent packets per bin: when the flow was recovering from loss.
        counts("resent", &t.resent, Color::Red, rs);
    }
    let ids: Vec<usize> = flows.iter().map(|(i, _)| *i).collect();
    let mut ev: Vec<(u64, String)> = s
        .report
        .findings
        .iter()
        .filter(|fd| fd.flow.is_some_and(|x| ids.contains(&x)))
        .flat_map(|fd| {
            fd.evidence
                .iter()
                .map(move |e| (e.frame, format!("[{}] frame {}: {}", sev_name(fd.severity), e.frame, e.what)))
        })
        .collect();
    ev.sort();
    ev.dedup();
    let lines: Vec<Line<'_>> = if ev.is_empty() && c.health != "ok" {
        // Beyond --findings-per-kind of a kind, findings are folded into one summary each.
        vec![Line::from(format!(
            "{}: its findings are among those folded into a summary on the Findings screen (more of their kind than are listed one by one)",
            c.health
        ))]
    } else if ev.is_empty() {
        vec![Line::from("no events: no gaps, NAKs, resends, RNR, CE marks or bad ICRCs")]
    } else {
        ev.into_iter().map(|(_, t)| Line::from(t)).collect()
    };
    let title =
        format!(" events ({} ↔ {}, paired by {}) — Enter: its packets, Esc: back ", c.a, c.b, c.pairing);
    f.render_widget(Paragraph::new(lines).block(Block::bordered().title(title)), events);
}

/// A flow's microburst figures: its busiest bins at the `--bin` width.
fn burst_text(b: &rocescope_analyzer::stats::Burst) -> String {
    let at = |ns: u64| format!("+{:.3} ms", ns as f64 / 1e6);
    let bin = fmt_dur(b.bin_ns as f64);
    let ce = if b.ce_peak > 0 {
        format!("most CE {}/{} at {}", b.ce_peak, b.ce_peak_packets, at(b.ce_peak_offset_ns))
    } else {
        "no CE".into()
    };
    format!("burst: busiest {bin}: {:.2} Gb/s at {}, {ce}", b.peak_gbps, at(b.peak_offset_ns))
}

fn draw_packets(f: &mut Frame<'_>, app: &App, area: Rect, tree: TreeFn<'_>) {
    let Some(s) = &app.shown else { return };
    let rows = app.packet_rows(s);
    if let Some(n) = app.packet_open {
        // Several lines can share a frame number (an sFlow datagram and its samples): the
        // selected line, else the first of that frame.
        let selected = rows.get(app.selected[1]).copied().filter(|r| r.number == n);
        if let Some(fr) = selected.or_else(|| rows.iter().copied().find(|r| r.number == n)) {
            let text = tree(fr);
            f.render_widget(
                Paragraph::new(text).block(Block::bordered().title(format!(" frame {n} — Esc: back "))),
                area,
            );
            return;
        }
    }
    let sel = app.selected[1].min(rows.len().saturating_sub(1));
    // Scrolled sideways (Right, Left; as less -S): a line's end (PSN, flags) is reachable at
    // any width (issue 41).
    let skip = app.packet_hscroll;
    let body: Vec<Row<'_>> = rows
        .iter()
        .map(|r| {
            let text: String =
                if skip == 0 { r.summary.clone() } else { r.summary.chars().skip(skip).collect() };
            Row::new(vec![Cell::from(text)])
        })
        .collect();
    let kept = s.frames.len();
    let width = usize::from(area.width.saturating_sub(4));
    let cut = rows.get(sel).is_some_and(|r| r.summary.chars().count() > skip + width);
    let sideways = match (skip, cut) {
        (0, false) => String::new(),
        (0, true) => "Right: more ".to_string(),
        (n, true) => format!("from column {}, Left Right ", n + 1),
        (n, false) => format!("from column {}, Left ", n + 1),
    };
    let title = match (&app.packet_flows, app.packet_filter.is_some()) {
        (Some(_), false) => format!(" packets of the selected QP: {} (Esc: all) ", rows.len()),
        (Some(_), true) => {
            format!(" packets of the selected QP matching the filter: {} (Esc: all) ", rows.len())
        }
        (None, true) => format!(" packets matching the filter: {} of the last {kept} ", rows.len()),
        (None, false) => format!(" packets: the last {} ", rows.len()),
    };
    let table = Table::new(body, [Constraint::Min(10)])
        .block(Block::bordered().title(title).title_bottom(sideways))
        .row_highlight_style(Style::new().add_modifier(Modifier::REVERSED))
        .highlight_symbol("> ");
    let mut state = TableState::default().with_selected(if rows.is_empty() { None } else { Some(sel) });
    f.render_stateful_widget(table, area, &mut state);
}

/// Widths of the Pause screen's columns before the strip.
const PAUSE_FIXED: [u16; 5] = [17, 7, 9, 8, 18];
/// The marks column under 100 columns: the worst mark alone ("DEADLOCK?").
const NARROW_MARKS: u16 = 9;

/// The NIC's counters beside the capture's figures (`--counters`), under the timelines.
fn draw_counters(f: &mut Frame<'_>, c: &rocescope_analyzer::nic_counters::CountersReport, area: Rect) {
    let rows: Vec<Row<'_>> = c
        .figures
        .iter()
        .filter(|r| r.nic.unwrap_or(1) > 0 || r.capture.unwrap_or(0) > 0)
        .map(|r| {
            let num = |v: Option<u64>| v.map_or_else(|| "-".to_string(), |v| v.to_string());
            let style = match r.status.as_ref() {
                "capture_misses" | "capture_more" => health_style("warning"),
                _ => Style::new(),
            };
            Row::new(vec![
                Cell::from(r.label()),
                Cell::from(num(r.nic)),
                Cell::from(num(r.capture)),
                Cell::from(r.status.clone()).style(style),
                Cell::from(r.capture_figure.clone()),
            ])
        })
        .collect();
    let title = if c.mode == "delta" {
        format!(" NIC counters: {} (delta) ", c.files.join(" → "))
    } else {
        format!(" NIC counters: {} (ONE snapshot: absolute, not compared) ", c.files.join(", "))
    };
    let header = Row::new(vec!["figure", "NIC", "capture", "status", "capture figure"])
        .style(Style::new().add_modifier(Modifier::BOLD));
    let widths = [
        Constraint::Length(36),
        Constraint::Length(12),
        Constraint::Length(12),
        Constraint::Length(15),
        Constraint::Min(10),
    ];
    f.render_widget(Table::new(rows, widths).header(header).block(Block::bordered().title(title)), area);
}

fn draw_pause(f: &mut Frame<'_>, app: &App, area: Rect) {
    let Some(s) = &app.shown else { return };
    let area = match &s.report.counters {
        Some(c) => {
            let shown =
                c.figures.iter().filter(|r| r.nic.unwrap_or(1) > 0 || r.capture.unwrap_or(0) > 0).count();
            let h = (shown as u16 + 3).min(area.height / 2);
            let [top, bottom] = Layout::vertical([Constraint::Min(3), Constraint::Length(h)]).areas(area);
            draw_counters(f, c, bottom);
            top
        }
        None => area,
    };
    let sm = &s.report.summary;
    let (start, end) = (sm.start_ns.unwrap_or(0), sm.end_ns.unwrap_or(0));
    let span = (end - start).max(1);
    // The strip fills what the fixed columns leave: their widths, a space between each
    // of the 6 columns, and the border.
    // Merged captures: a first column naming each timeline's capture point.
    let point_w = if s.report.points.len() > 1 {
        s.report.points.iter().map(|p| p.name.chars().count()).max().unwrap_or(5).clamp(5, 24) as u16
    } else {
        0
    };
    // Narrow (80 columns): the worst mark alone, in a column as wide as "DEADLOCK?", so the
    // strip keeps 23 columns rather than 14 (issue 41).
    let narrow = area.width < 100;
    let marks_w = if narrow { NARROW_MARKS } else { PAUSE_FIXED[4] };
    let fixed: u16 =
        PAUSE_FIXED[..4].iter().sum::<u16>() + marks_w + 5 + 2 + if point_w > 0 { point_w + 1 } else { 0 };
    let strip_w = usize::from(area.width.saturating_sub(fixed)).max(10);
    if s.report.pfc.is_empty() {
        f.render_widget(
            Paragraph::new("no PFC or PAUSE frames. Hosts consume them: capture from a TAP or a switch mirror to see pauses.")
                .wrap(Wrap { trim: true })
                .block(Block::bordered().title(" Pause ")),
            area,
        );
        return;
    }
    let sel = app.selected[2].min(s.report.pfc.len().saturating_sub(1));
    let body: Vec<Row<'_>> = s
        .report
        .pfc
        .iter()
        .map(|p| {
            let mut strip = vec!['·'; strip_w];
            for i in &p.intervals {
                let a = ((i.start_ns - start).max(0) as i128 * strip_w as i128 / span as i128) as usize;
                let b = ((i.end_ns - start).max(0) as i128 * strip_w as i128 / span as i128) as usize;
                for c in
                    strip.iter_mut().take(b.max(a + 1).min(strip_w)).skip(a.min(strip_w.saturating_sub(1)))
                {
                    *c = '█';
                }
            }
            let what = match p.kind {
                PauseKind::Pfc => format!("PFC p{}", p.priority),
                PauseKind::Pause => "PAUSE".into(),
            };
            let mut marks = Vec::new();
            if !p.storms.is_empty() {
                marks.push("STORM");
            }
            if p.deadlock_hint.is_some() {
                marks.push("DEADLOCK?");
            }
            if p.kind == PauseKind::Pfc && p.roce_packets_on_priority == 0 {
                marks.push("no RoCE");
            }
            let style = if p.deadlock_hint.is_some() || !p.storms.is_empty() {
                health_style("critical")
            } else if marks.is_empty() {
                Style::new()
            } else {
                health_style("warning")
            };
            let mut cells = vec![
                Cell::from(p.src_mac.clone()),
                Cell::from(what),
                Cell::from(format!("{}/{}", p.pause_frames, p.xon_frames)),
                Cell::from(format!("{:.0}", p.max_pause_us_per_s)),
                Cell::from(if narrow {
                    marks.first().copied().unwrap_or_default().to_string()
                } else {
                    marks.join(" ")
                })
                .style(style),
                Cell::from(strip.into_iter().collect::<String>()).style(style),
            ];
            if point_w > 0 {
                let name =
                    s.report.points.get(usize::from(p.point)).map_or(String::new(), |x| x.name.clone());
                cells.insert(0, Cell::from(name));
            }
            Row::new(cells)
        })
        .collect();
    let mut titles = vec!["source MAC", "kind", "pause/XON", "µs/s max", "", "paused over the capture (█)"];
    let mut widths: Vec<Constraint> = PAUSE_FIXED[..4]
        .iter()
        .chain([&marks_w])
        .map(|w| Constraint::Length(*w))
        .chain([Constraint::Min(10)])
        .collect();
    if narrow {
        titles[5] = "paused (█)";
    }
    if point_w > 0 {
        titles.insert(0, "point");
        widths.insert(0, Constraint::Length(point_w));
    }
    let header = Row::new(titles).style(Style::new().add_modifier(Modifier::BOLD));
    let table = Table::new(body, widths)
        .header(header)
        .block(Block::bordered().title(" Pause timelines "))
        .row_highlight_style(Style::new().add_modifier(Modifier::REVERSED));
    let mut state = TableState::default().with_selected(Some(sel));
    f.render_stateful_widget(table, area, &mut state);
}

fn draw_audit(f: &mut Frame<'_>, app: &App, area: Rect) {
    let Some(s) = &app.shown else { return };
    let a = &s.report.audit;
    if a.violations.is_empty() {
        let text = if s.report.summary.roce == 0 {
            "no RoCE seen: nothing to audit"
        } else if !a.audited {
            if s.report
                .findings
                .iter()
                .any(|f| f.kind == rocescope_analyzer::report::FindingKind::MarkingInconsistent)
            {
                "not audited: no expectations given (--expect-dscp, --expect-cnp-dscp, --expect-pcp, --lossless, --expect-ecn or --baseline); the marking disagrees with itself: see Findings (marking_inconsistent)"
            } else {
                "not audited: no expectations given (--expect-dscp, --expect-cnp-dscp, --expect-pcp, --lossless, --expect-ecn or --baseline); the marking is consistent and no pause is on an unused priority"
            }
        } else {
            "clean: every packet carries the expected class"
        };
        f.render_widget(
            Paragraph::new(text).block(Block::bordered().title(" Audit ")).wrap(Wrap { trim: true }),
            area,
        );
        return;
    }
    let show = |v: &rocescope_analyzer::audit::serde_json_value::Value| match v {
        rocescope_analyzer::audit::serde_json_value::Value::Num(n) => n.to_string(),
        rocescope_analyzer::audit::serde_json_value::Value::Text(t) => (*t).to_string(),
        rocescope_analyzer::audit::serde_json_value::Value::List(l) => format!("{l:?}"),
    };
    let body: Vec<Row<'_>> = a
        .violations
        .iter()
        .map(|v| {
            let who = match (&v.flow, &v.src_mac) {
                (Some(fl), _) => format!("QP 0x{:06x} {} → {}", fl.dest_qp, fl.src, fl.dst),
                (None, Some(m)) => format!("pauses from {m}"),
                // Capture-wide: untagged RoCE under a PCP expectation, or no RoCE at all.
                _ => match s.report.points.get(usize::from(v.point)) {
                    Some(p) if s.report.points.len() > 1 => format!("the whole capture at {}", p.name),
                    _ => "the whole capture".into(),
                },
            };
            Row::new(vec![
                who,
                v.what.to_string(),
                show(&v.expected),
                show(&v.seen),
                v.packets.to_string(),
                v.first_frame.to_string(),
            ])
        })
        .collect();
    let header = Row::new(vec!["where", "what", "expected", "seen", "packets", "first frame"])
        .style(Style::new().add_modifier(Modifier::BOLD));
    let sel = app.selected[3].min(a.violations.len().saturating_sub(1));
    // The fixed columns take 58 of an 80-column terminal's 78; "where" the rest. (Lengths
    // that cannot all be met leave the layout solver a choice it makes differently from
    // run to run.)
    let table = Table::new(
        body,
        [
            Constraint::Fill(1),
            Constraint::Length(14),
            Constraint::Length(12),
            Constraint::Length(9),
            Constraint::Length(7),
            Constraint::Length(11),
        ],
    )
    .header(header)
    .block(Block::bordered().title(format!(" Audit: {} violation(s) ", a.violations.len())))
    .row_highlight_style(Style::new().add_modifier(Modifier::REVERSED));
    let mut state = TableState::default().with_selected(Some(sel));
    f.render_stateful_widget(table, area, &mut state);
}

fn draw_findings(f: &mut Frame<'_>, app: &App, area: Rect) {
    let Some(s) = &app.shown else { return };
    let fs = &s.report.findings;
    if fs.is_empty() {
        f.render_widget(Paragraph::new("no findings").block(Block::bordered().title(" Findings ")), area);
        return;
    }
    // The selected finding whole (its title wraps there: the list cuts it at 80 columns) and
    // its evidence, below the list.
    let detail_h = (area.height / 2).clamp(7, 12);
    let [list, detail] = Layout::vertical([Constraint::Min(3), Constraint::Length(detail_h)]).areas(area);
    let sel = app.selected[4].min(fs.len().saturating_sub(1));
    let body: Vec<Row<'_>> = fs
        .iter()
        .map(|fd| {
            let sev = sev_name(fd.severity);
            Row::new(vec![Cell::from(sev).style(health_style(sev)), Cell::from(fd.title.clone())])
        })
        .collect();
    let table = Table::new(body, [Constraint::Length(9), Constraint::Min(10)])
        .block(Block::bordered().title(format!(" Findings, worst first: {} (Enter: go to it) ", fs.len())))
        .row_highlight_style(Style::new().add_modifier(Modifier::REVERSED));
    let mut state = TableState::default().with_selected(Some(sel));
    f.render_stateful_widget(table, list, &mut state);
    let start = s.report.summary.start_ns.unwrap_or(0);
    let lines: Vec<Line<'_>> = fs
        .get(sel)
        .map(|fd| {
            std::iter::once(Line::styled(fd.title.clone(), Style::new().add_modifier(Modifier::BOLD)))
                .chain(fd.evidence.iter().map(|e| {
                    if e.ts_ns > 0 {
                        Line::from(format!(
                            "frame {} at {:.6} s: {}",
                            e.frame,
                            (e.ts_ns - start) as f64 / 1e9,
                            e.what
                        ))
                    } else {
                        Line::from(format!("frame {}: {}", e.frame, e.what))
                    }
                }))
                .collect()
        })
        .unwrap_or_default();
    f.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .block(Block::bordered().title(" the finding and its evidence ")),
        detail,
    );
}

fn draw_help(f: &mut Frame<'_>, area: Rect) {
    let w = area.width.min(80);
    // Bindings without a label are covered by the line before theirs; a help text longer
    // than the box wraps under itself, never cut (issue 41).
    let text_w = usize::from(w.saturating_sub(2)).saturating_sub(HELP_LABEL + 1).max(10);
    let mut lines: Vec<Line<'_>> = Vec::new();
    for b in KEYS.iter().filter(|b| !b.label.is_empty()) {
        for (i, part) in wrap_words(b.help, text_w).into_iter().enumerate() {
            let label = if i == 0 { b.label } else { "" };
            lines.push(Line::from(format!("{label:<HELP_LABEL$} {part}")));
        }
    }
    let h = (u16::try_from(lines.len()).unwrap_or(u16::MAX).saturating_add(2)).min(area.height);
    let r = Rect { x: area.x + (area.width - w) / 2, y: area.y + (area.height - h) / 2, width: w, height: h };
    f.render_widget(Clear, r);
    f.render_widget(
        Paragraph::new(lines).block(Block::bordered().title(" keys: q, Esc or any key closes ")),
        r,
    );
}

/// The key column of the help.
const HELP_LABEL: usize = 16;

/// `text` in lines of at most `width` characters, broken between words (a longer word is a
/// line of its own).
fn wrap_words(text: &str, width: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            out.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    out.push(line);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drops_are_libpcaps_live_else_what_the_files_recorded() {
        use rocescope_analyzer::report::{CaptureCounters, PointCaptureCounters};
        let mut a = rocescope_analyzer::Analyzer::new(rocescope_analyzer::Config::default());
        a.finish();
        let mut r = a.report();
        assert_eq!(drops_text(&r), "-");
        let recorded = |dropped| PointCaptureCounters { dropped, ..PointCaptureCounters::default() };
        r.points[0].capture_counters = Some(recorded(None));
        assert_eq!(drops_text(&r), "-", "nothing recorded is not zero");
        r.points[0].capture_counters = Some(recorded(Some(18)));
        assert_eq!(drops_text(&r), "18 (recorded in the file)");
        r.capture =
            Some(CaptureCounters { interface: "eth0".into(), received: 9, kernel_dropped: 2, if_dropped: 1 });
        assert_eq!(drops_text(&r), "2 kernel / 1 if");
    }

    #[test]
    fn wrapped_lines_count_as_word_wrap_does() {
        assert_eq!(wrapped_lines("", 10), 1);
        assert_eq!(wrapped_lines("one two three", 13), 1);
        assert_eq!(wrapped_lines("one two three", 12), 2);
        // one, two, thr, ee: a word wider than the box is broken across lines.
        assert_eq!(wrapped_lines("one two three", 3), 4);
        assert_eq!(wrapped_lines("abcdefghij", 4), 3);
        assert_eq!(wrapped_lines("ab abcdefghij", 4), 4);
        assert_eq!(wrapped_lines("x", 0), 1);
    }
}
