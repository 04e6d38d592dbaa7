//! The Congestion screen (`6`): at one capture point, per priority the RoCE rate, the CE-mark
//! rate, the CNP rate and the PFC paused time, then the QPs most marked with their CE and CNP
//! rates, all on ONE time axis from the capture start to its latest frame.
//!
//! The report's series have bins of different widths (the fabric's up to 512 bins, each
//! flow's up to 64, each doubling as the capture grows), so every series is resampled onto
//! the screen's columns by overlap ([`resample`]): a bin wider than a column spreads its count
//! evenly over the columns it covers, and a column that covers several bins sums them. A
//! column's rate is its share over the column's time.

use crate::app::App;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Wrap};
use ratatui::Frame;
use rocescope_analyzer::fabric::{PointSeriesReport, PrioritySeries};
use rocescope_analyzer::report::{FlowReport, PauseReport, Report};
use rocescope_analyzer::PauseKind;

/// QPs ranked on the screen at most (the most marked): a partial sort picks them out of any
/// number of flows.
pub const MAX_QP_ROWS: usize = 1000;

/// Spread per-bin counts (bins of `bin_ns` from the capture start) over `cols` equal columns
/// covering `[0, axis_ns)`, by overlap. The counts are events that happened before the axis
/// ends (its latest frame), so a bin reaching past the end is spread over its part inside
/// the axis, and a bin starting at or past the end goes to the last column: the sum is
/// preserved. Empty when `cols` is 0.
pub fn resample(values: &[u64], bin_ns: u64, axis_ns: u64, cols: usize) -> Vec<f64> {
    spread(values, bin_ns, axis_ns, cols, true)
}

/// As [`resample`] for time (paused ns per bin): a pause can run past the latest frame, so
/// the part of a bin past the axis is left out rather than squeezed into the last column.
pub fn resample_time(values: &[u64], bin_ns: u64, axis_ns: u64, cols: usize) -> Vec<f64> {
    spread(values, bin_ns, axis_ns, cols, false)
}

fn spread(values: &[u64], bin_ns: u64, axis_ns: u64, cols: usize, events: bool) -> Vec<f64> {
    let mut out = vec![0.0; cols];
    if cols == 0 || bin_ns == 0 || axis_ns == 0 {
        return out;
    }
    let axis = axis_ns as f64;
    let col_w = axis / cols as f64;
    let bin = bin_ns as f64;
    for (i, v) in values.iter().enumerate() {
        if *v == 0 {
            continue;
        }
        let v = *v as f64;
        let a = i as f64 * bin;
        let b = a + bin;
        if a >= axis {
            if events {
                if let Some(last) = out.last_mut() {
                    *last += v;
                }
            }
            continue;
        }
        let end = b.min(axis);
        // Events: spread over the part inside the axis; time: over the whole bin.
        let per_ns = if events { v / (end - a) } else { v / bin };
        let c0 = ((a / col_w).floor() as usize).min(cols - 1);
        let c1 = ((end / col_w).ceil() as usize).clamp(c0 + 1, cols);
        for (c, o) in out.iter_mut().enumerate().take(c1).skip(c0) {
            let lo = a.max(c as f64 * col_w);
            let hi = end.min((c + 1) as f64 * col_w);
            if hi > lo {
                *o += per_ns * (hi - lo);
            }
        }
    }
    out
}

/// The time axis of the charts: from the capture start to its latest frame (one `--bin`
/// while the capture is a single instant).
pub fn capture_axis_ns(r: &Report) -> u64 {
    let sm = &r.summary;
    let span = match (sm.start_ns, sm.end_ns) {
        (Some(a), Some(b)) => u64::try_from(b.saturating_sub(a)).unwrap_or(0),
        _ => 0,
    };
    if span > 0 {
        span
    } else {
        r.timeline.base_ns.max(1)
    }
}

/// The QPs the screen lists, in order: indices into `Report::flows`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct QpRanking {
    /// The flows listed (at most [`MAX_QP_ROWS`]).
    pub flows: Vec<usize>,
    /// Flows that qualified (marked, or at the point when none was).
    pub candidates: usize,
    /// Ranked by CE marks then CNPs received (some flow was marked or got CNPs); otherwise
    /// every flow at the point, by its busiest `--bin` bin.
    pub congested: bool,
}

impl QpRanking {
    /// Rows listed.
    pub fn len(&self) -> usize {
        self.flows.len()
    }

    /// No row.
    pub fn is_empty(&self) -> bool {
        self.flows.is_empty()
    }
}

/// Rank the flows at capture point `point` (every flow for `None`): those with CE marks or
/// CNPs received, by CE marks then CNPs received; if there are none, every flow by its
/// busiest `--bin` bin. The top `limit` are picked with a partial sort (linear in the flows).
pub fn rank_qps(r: &Report, point: Option<u16>, limit: usize) -> QpRanking {
    let at = |f: &FlowReport| point.is_none_or(|p| f.point == p);
    let mut cand: Vec<usize> = r
        .flows
        .iter()
        .enumerate()
        .filter(|(_, f)| at(f) && (f.ecn.ce > 0 || f.cnps_received > 0))
        .map(|(i, _)| i)
        .collect();
    let congested = !cand.is_empty();
    if !congested {
        cand = r.flows.iter().enumerate().filter(|(_, f)| at(f)).map(|(i, _)| i).collect();
    }
    let flow = |i: usize| r.flows.get(i);
    let cmp = |a: &usize, b: &usize| -> std::cmp::Ordering {
        let (Some(fa), Some(fb)) = (flow(*a), flow(*b)) else { return std::cmp::Ordering::Equal };
        let by_marks = if congested {
            fb.ecn.ce.cmp(&fa.ecn.ce).then(fb.cnps_received.cmp(&fa.cnps_received))
        } else {
            std::cmp::Ordering::Equal
        };
        by_marks.then(fb.throughput.burst.peak_gbps.total_cmp(&fa.throughput.burst.peak_gbps)).then(a.cmp(b))
    };
    let candidates = cand.len();
    if cand.len() > limit && limit > 0 {
        cand.select_nth_unstable_by(limit - 1, cmp);
    }
    cand.truncate(limit);
    cand.sort_unstable_by(cmp);
    QpRanking { flows: cand, candidates, congested }
}

/// Three significant digits, trailing zeros dropped: 17.5, 160, 2.56, 10.
fn sig3(v: f64) -> String {
    let s = if v >= 99.95 {
        format!("{v:.0}")
    } else if v >= 9.995 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    };
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// A duration: `10 µs`, `2.56 ms`, `1.5 s`.
pub fn fmt_dur(ns: f64) -> String {
    let (v, unit) = if ns >= 1e9 {
        (ns / 1e9, "s")
    } else if ns >= 1e6 {
        (ns / 1e6, "ms")
    } else if ns >= 1e3 {
        (ns / 1e3, "µs")
    } else {
        (ns, "ns")
    };
    format!("{} {unit}", sig3(v))
}

/// A time after the capture start: `+0.050 ms`, `+12.345 s`.
fn fmt_at(ns: u64) -> String {
    if ns >= 10_000_000_000 {
        format!("+{:.3} s", ns as f64 / 1e9)
    } else {
        format!("+{:.3} ms", ns as f64 / 1e6)
    }
}

/// A row's maximum, in at most 7 characters: 13.35, 100, 175k, 1.00M.
fn fmt_max(v: f64) -> String {
    if v >= 999_500.0 {
        format!("{:.2}M", v / 1e6)
    } else if v >= 1e4 {
        format!("{:.0}k", v / 1e3)
    } else if v >= 1e3 {
        format!("{:.1}k", v / 1e3)
    } else if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// A one-line chart: a block per column, scaled to the row's max (a blank column had none).
fn bars(values: &[f64]) -> (String, f64) {
    const BLOCKS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    let max = values.iter().copied().fold(0.0, f64::max);
    let s = values
        .iter()
        .map(|v| {
            if *v <= 0.0 || max <= 0.0 {
                ' '
            } else {
                let k = ((v / max) * 8.0).ceil().clamp(1.0, 8.0) as usize;
                BLOCKS.get(k - 1).copied().unwrap_or('█')
            }
        })
        .collect();
    (s, max)
}

/// Widths of a chart line: label, series name, chart, max.
#[derive(Clone, Copy, Debug)]
struct Cols {
    label: usize,
    chart: usize,
}

/// Series name column.
const NAME_W: usize = 10;
/// Max column.
const MAX_W: usize = 7;

impl Cols {
    fn for_width(inner: usize) -> Cols {
        let label = if inner >= 120 {
            30
        } else if inner >= 70 {
            26
        } else {
            (inner / 4).min(12)
        };
        Cols { label, chart: inner.saturating_sub(label + NAME_W + MAX_W + 3) }
    }
}

/// `s` cut or padded to `w` characters (an ellipsis marks a cut).
fn fit(s: &str, w: usize) -> String {
    let n = s.chars().count();
    if n <= w {
        format!("{s:<w$}")
    } else if w == 0 {
        String::new()
    } else {
        let mut t: String = s.chars().take(w - 1).collect();
        t.push('…');
        t
    }
}

/// One chart line: label, series name, the chart, its max.
fn chart_line(
    c: Cols,
    label: String,
    label_style: Style,
    name: &str,
    values: &[f64],
    color: Color,
) -> Line<'static> {
    let (chart, max) = bars(values);
    Line::from(vec![
        Span::styled(fit(&label, c.label), label_style),
        Span::raw(" "),
        Span::raw(fit(name, NAME_W)),
        Span::raw(" "),
        Span::styled(chart, Style::new().fg(color)),
        Span::raw(" "),
        Span::styled(format!("{:>MAX_W$}", fmt_max(max)), Style::new().add_modifier(Modifier::BOLD)),
    ])
}

/// A note across the block, under a priority's label.
fn note_line(c: Cols, text: String) -> Line<'static> {
    let w = c.label + NAME_W + c.chart + MAX_W + 3;
    Line::styled(fit(&format!("  {text}"), w), Style::new().fg(Color::DarkGray))
}

/// A text line in the chart's place.
fn text_line(c: Cols, label: String, label_style: Style, text: String) -> Line<'static> {
    Line::from(vec![
        Span::styled(fit(&label, c.label), label_style),
        Span::raw(" "),
        Span::raw(fit("", NAME_W)),
        Span::raw(" "),
        Span::styled(fit(&text, c.chart + 1 + MAX_W), Style::new().fg(Color::DarkGray)),
    ])
}

/// The time axis under the charts: 0, the middle, the end.
fn ruler(c: Cols, axis_ns: u64) -> Line<'static> {
    let w = c.chart;
    let mut v: Vec<char> = vec!['─'; w];
    let mut put = |at: usize, s: &str| {
        for (k, ch) in s.chars().enumerate() {
            if let Some(x) = v.get_mut(at + k) {
                *x = ch;
            }
        }
    };
    let end = fmt_at(axis_ns);
    let mid = fmt_at(axis_ns / 2);
    let (ne, nm) = (end.chars().count(), mid.chars().count());
    if w > ne + 2 {
        put(w - ne, &end);
    }
    if w > 2 * (ne + nm) {
        put(w / 2 - nm / 2, &mid);
    }
    put(0, "0");
    Line::from(vec![
        Span::raw(fit("", c.label)),
        Span::raw(" "),
        Span::raw(fit("time", NAME_W)),
        Span::raw(" "),
        Span::styled(v.into_iter().collect::<String>(), Style::new().fg(Color::DarkGray)),
    ])
}

/// What the screen's columns stand for.
#[derive(Clone, Copy, Debug)]
struct Axis {
    ns: u64,
    cols: usize,
}

impl Axis {
    fn col_ns(self) -> f64 {
        self.ns as f64 / self.cols.max(1) as f64
    }

    /// Counts per column.
    fn counts(self, v: &[u64], bin_ns: u64) -> Vec<f64> {
        resample(v, bin_ns, self.ns, self.cols)
    }

    /// Per second, per column.
    fn per_s(self, v: &[u64], bin_ns: u64) -> Vec<f64> {
        let k = 1e9 / self.col_ns();
        self.counts(v, bin_ns).into_iter().map(|x| x * k).collect()
    }

    /// Gb/s per column from bytes.
    fn gbps(self, v: &[u64], bin_ns: u64) -> Vec<f64> {
        let k = 8.0 / self.col_ns();
        self.counts(v, bin_ns).into_iter().map(|x| x * k).collect()
    }

    /// CE % per column.
    fn ce_pct(self, ce: &[u64], packets: &[u64], bin_ns: u64) -> Vec<f64> {
        let c = self.counts(ce, bin_ns);
        let p = self.counts(packets, bin_ns);
        c.iter().zip(&p).map(|(c, p)| if *p > 0.0 { (c / p * 100.0).min(100.0) } else { 0.0 }).collect()
    }

    /// Paused µs per s per column.
    fn pause(self, v: &[u64], bin_ns: u64) -> Vec<f64> {
        let k = 1e6 / self.col_ns();
        resample_time(v, bin_ns, self.ns, self.cols).into_iter().map(|x| x * k).collect()
    }
}

/// `1 CNP`, `2 CNPs`.
fn count(n: u64, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

fn sum(v: &[u64]) -> u64 {
    v.iter().fold(0u64, |a, b| a.saturating_add(*b))
}

/// A priority's busiest bins at the `--bin` width, in words.
fn peak_text(s: &PrioritySeries, base_ns: u64, cnps_only: bool) -> Option<String> {
    let p = &s.peak;
    let mut parts = Vec::new();
    if p.gbps > 0.0 && !cnps_only {
        parts.push(format!(
            "busiest {}: {:.2} Gb/s at {}",
            fmt_dur(base_ns as f64),
            p.gbps,
            fmt_at(p.offset_ns)
        ));
    }
    if p.ce > 0 {
        parts.push(format!("most CE {}/{} at {}", p.ce, p.ce_packets, fmt_at(p.ce_offset_ns)));
    }
    if p.cnps > 0 {
        let what = if cnps_only { format!("busiest {}: ", fmt_dur(base_ns as f64)) } else { String::new() };
        parts.push(format!("{what}most CNPs {} at {}", p.cnps, fmt_at(p.cnps_offset_ns)));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// The paused time of one priority (`None`: 802.3x PAUSE) at one point, per MAC as the report
/// and the Pause screen give it, not summed over the MACs: the most paused MAC's total,
/// the number of MACs that paused it, and that MAC's paused ns per series bin of `bin_ns`
/// from `start_ns`. `None` when the report lists no such timeline (the fabric series, summed
/// over the MACs, is then all there is).
fn paused_by_mac(
    pfc: &[PauseReport],
    point: u16,
    prio: Option<u8>,
    start_ns: i64,
    bin_ns: u64,
    bins: usize,
) -> Option<(u64, usize, Vec<u64>)> {
    let same = |p: &&PauseReport| {
        p.point == point
            && match prio {
                Some(q) => p.kind == PauseKind::Pfc && p.priority == q,
                None => p.kind == PauseKind::Pause,
            }
    };
    let macs = pfc.iter().filter(same).count();
    let top = pfc.iter().filter(same).max_by_key(|p| p.paused_ns)?;
    let mut v = vec![0u64; bins];
    let w = i64::try_from(bin_ns.max(1)).unwrap_or(i64::MAX);
    for i in &top.intervals {
        let (mut t, e) = (i.start_ns - start_ns, i.end_ns - start_ns);
        while t < e {
            let k = t.div_euclid(w);
            let until = ((k + 1) * w).min(e);
            if let Some(x) = usize::try_from(k).ok().and_then(|k| v.get_mut(k)) {
                *x += (until - t).max(0) as u64;
            }
            t = until;
        }
    }
    Some((top.paused_ns.max(0) as u64, macs, v))
}

/// A paused-time label: `1.2 ms paused`, and which MAC when several paused.
fn paused_label(paused: u64, macs: usize) -> String {
    if macs > 1 {
        format!("{} paused (busiest of {macs} MACs)", fmt_dur(paused as f64))
    } else {
        format!("{} paused", fmt_dur(paused as f64))
    }
}

/// The fabric block's lines at one point: per priority its rows (those with something to
/// show) and, with `peaks`, its busiest bins; the link PAUSE row; the time axis. Paused time
/// is per MAC (`pfc`, the report's timelines, from `start_ns`; [`paused_by_mac`]).
#[allow(clippy::too_many_arguments)]
fn fabric_lines(
    ps: &PointSeriesReport,
    pfc: &[PauseReport],
    start_ns: i64,
    base_ns: u64,
    ax: Axis,
    c: Cols,
    peaks: bool,
) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    let bin = ps.bin_ns;
    let plain = Style::new();
    for s in &ps.priorities {
        let mut rows: Vec<(String, &str, Vec<f64>, Color)> = Vec::new();
        let (bytes, packets, ce, cnps, paused) =
            (sum(&s.bytes), sum(&s.packets), sum(&s.ce), sum(&s.cnps), sum(&s.pause_ns));
        // A priority of CNPs alone (NICs often send them on one of their own): its rate says
        // no more than its CNP rate.
        let cnps_only = packets > 0 && cnps == packets;
        if bytes > 0 && !cnps_only {
            rows.push((format!("{packets} pkts"), "Gb/s", ax.gbps(&s.bytes, bin), Color::Cyan));
        }
        if ce > 0 {
            let pct = ce as f64 * 100.0 / packets.max(1) as f64;
            rows.push((
                format!("{ce} CE ({pct:.1}%)"),
                "CE %",
                ax.ce_pct(&s.ce, &s.packets, bin),
                Color::Yellow,
            ));
        }
        if cnps > 0 {
            rows.push((count(cnps, "CNP"), "CNP/s", ax.per_s(&s.cnps, bin), Color::Magenta));
        }
        if paused > 0 {
            let (what, values) =
                match paused_by_mac(pfc, ps.point, Some(s.priority), start_ns, bin, s.pause_ns.len()) {
                    Some((p, macs, v)) => (paused_label(p, macs), ax.pause(&v, bin)),
                    None => (paused_label(paused, 1), ax.pause(&s.pause_ns, bin)),
                };
            rows.push((what, "pause µs/s", values, Color::Red));
        }
        if let (true, Some(first)) = (cnps_only, rows.first_mut()) {
            first.0 = format!("{} only", count(cnps, "CNP"));
        }
        for (k, (total, name, values, color)) in rows.into_iter().enumerate() {
            let label = if k == 0 { format!("prio {}: {total}", s.priority) } else { format!("  {total}") };
            let style = if k == 0 { Style::new().add_modifier(Modifier::BOLD) } else { plain };
            lines.push(chart_line(c, label, style, name, &values, color));
        }
        if peaks {
            if let Some(t) = peak_text(s, base_ns, cnps_only) {
                lines.push(note_line(c, t));
            }
        }
    }
    let link = sum(&ps.link_pause_ns);
    if link > 0 {
        let bins = ps.link_pause_ns.len();
        let (label, values) = match paused_by_mac(pfc, ps.point, None, start_ns, bin, bins) {
            Some((p, macs, v)) => (format!("link: {}", paused_label(p, macs)), ax.pause(&v, bin)),
            None => (format!("link: {}", paused_label(link, 1)), ax.pause(&ps.link_pause_ns, bin)),
        };
        lines.push(chart_line(
            c,
            label,
            Style::new().add_modifier(Modifier::BOLD),
            "PAUSE µs/s",
            &values,
            Color::Red,
        ));
    }
    lines.push(ruler(c, ax.ns));
    lines
}

/// Any CE mark, CNP or pause in the series of one point.
fn congested(ps: &PointSeriesReport) -> bool {
    ps.link_pause_ns.iter().any(|x| *x > 0)
        || ps.priorities.iter().any(|s| s.ce.iter().chain(&s.cnps).chain(&s.pause_ns).any(|x| *x > 0))
}

/// Draw the Congestion screen.
pub(crate) fn draw(f: &mut Frame<'_>, app: &App, area: Rect) {
    let Some(s) = &app.shown else { return };
    let r = &s.report;
    let base = r.timeline.base_ns;
    let Some(ps) = r.timeline.points.get(app.point) else {
        let text = vec![
            Line::from("no RoCE and no pauses yet."),
            Line::from(
                "This screen charts, per priority and per QP, the CE-mark rate, the CNP rate and the PFC \
                 paused time on one time axis, and the busiest bins at the --bin resolution.",
            ),
            Line::from(format!(
                "`--bin 10us|100us|1ms|10ms` sets the resolution (now {}).",
                fmt_dur(base as f64)
            )),
        ];
        f.render_widget(
            Paragraph::new(text).block(Block::bordered().title(" Congestion ")).wrap(Wrap { trim: true }),
            area,
        );
        return;
    };
    let inner = usize::from(area.width.saturating_sub(2));
    let c = Cols::for_width(inner);
    let ax = Axis { ns: capture_axis_ns(r), cols: c.chart };
    let ranking = app.congestion_rows();
    let point_name = match r.points.get(usize::from(ps.point)) {
        Some(p) if r.points.len() > 1 => p.name.clone(),
        _ => s.source.clone(),
    };
    let n_points = r.timeline.points.len();
    let which = if n_points > 1 {
        format!("point {}/{n_points}: {point_name} ([ ] next)", app.point + 1)
    } else {
        point_name
    };
    // The receiver with the most senders at once at this point (incast: crate docs of
    // rocescope_analyzer::incast).
    let fan_in = r.incast.iter().find(|i| i.point == ps.point).map(|i| {
        let pos = match i.position {
            rocescope_analyzer::incast::Position::Past => ", past the queue",
            rocescope_analyzer::incast::Position::Before => ", before the queue",
            rocescope_analyzer::incast::Position::Unknown => "",
        };
        format!("fan-in {} → {}{pos}", rocescope_analyzer::incast::fan_in_text(i.fan_in), i.receiver)
    });
    // Most important first; on a narrow terminal the tail parts give way.
    let parts = [
        Some(which),
        Some(format!("0 to {}", fmt_at(ax.ns))),
        Some(format!("a column is {}", fmt_dur(ax.col_ns()))),
        Some(format!("--bin {} (busiest bins)", fmt_dur(base as f64))),
        fan_in,
        Some(format!("series bins {}", fmt_dur(ps.bin_ns as f64))),
    ]
    .into_iter()
    .flatten();
    let mut header = String::new();
    for p in parts {
        let sep = if header.is_empty() { "" } else { " | " };
        if !header.is_empty()
            && header.chars().count() + sep.len() + p.chars().count() > usize::from(area.width)
        {
            break;
        }
        header.push_str(sep);
        header.push_str(&p);
    }
    let qp_min: u16 = if ranking.is_empty() { 3 } else { 6 };
    let avail = area.height.saturating_sub(1 + qp_min);
    // Without CE marks, CNPs or pauses: say so first.
    let mut notes = Vec::new();
    if !congested(ps) {
        let green = Style::new().fg(Color::Green);
        let what = "no congestion here: no CE marks, CNPs or pauses (throughput only).";
        let bin = format!("`--bin 10us|100us|1ms|10ms` sets the resolution (now {}).", fmt_dur(base as f64));
        if inner > what.chars().count() + bin.chars().count() {
            notes.push(Line::styled(format!("{what} {bin}"), green));
        } else {
            notes.push(Line::styled(what, green));
            notes.push(Line::styled(bin, green));
        }
    }
    // The busiest bins give way first on a short terminal.
    let start = r.summary.start_ns.unwrap_or(0);
    let mut lines = fabric_lines(ps, &r.pfc, start, base, ax, c, true);
    if notes.len() + lines.len() + 2 > usize::from(avail) {
        lines = fabric_lines(ps, &r.pfc, start, base, ax, c, false);
    }
    notes.append(&mut lines);
    let lines = notes;
    let fab_h = u16::try_from(lines.len() + 2).unwrap_or(u16::MAX).min(avail.max(3));
    let [top, fab, qps] =
        Layout::vertical([Constraint::Length(1), Constraint::Length(fab_h), Constraint::Min(0)]).areas(area);
    f.render_widget(Paragraph::new(header), top);
    f.render_widget(
        Paragraph::new(lines)
            .block(Block::bordered().title(" fabric, per priority: each row scaled to its max (right) ")),
        fab,
    );
    draw_qps(f, app, r, &ranking, ax, c, qps);
}

fn draw_qps(f: &mut Frame<'_>, app: &App, r: &Report, ranking: &QpRanking, ax: Axis, c: Cols, area: Rect) {
    let base = r.timeline.base_ns;
    let more = if ranking.candidates > ranking.len() {
        format!(" (the first {})", ranking.len())
    } else {
        String::new()
    };
    let title = if ranking.congested {
        format!(" QPs by CE marks, then CNPs received: {}{more}; Enter: QP detail ", ranking.candidates)
    } else {
        format!(
            " QPs by their busiest {} (no CE marks or CNPs): {}{more}; Enter: QP detail ",
            fmt_dur(base as f64),
            ranking.candidates
        )
    };
    let block = Block::bordered().title(title);
    if ranking.is_empty() {
        f.render_widget(Paragraph::new("no QP at this point").block(block), area);
        return;
    }
    let visible = usize::from(area.height.saturating_sub(2) / 2).max(1);
    let sel = app.selected[5].min(ranking.len().saturating_sub(1));
    let start = (sel + 1).saturating_sub(visible);
    let mut lines = Vec::new();
    for (k, i) in ranking.flows.iter().enumerate().skip(start).take(visible) {
        let Some(fl) = r.flows.get(*i) else { continue };
        let t = &fl.throughput;
        let chosen = k == sel;
        let (mark, style) =
            if chosen { ("> ", Style::new().add_modifier(Modifier::REVERSED)) } else { ("  ", Style::new()) };
        let prio = fl.priority.map_or("p?".to_string(), |p| format!("p{p}"));
        let who = format!("{mark}{} → {}", fl.src, fl.dst);
        let qp = if ranking.congested {
            format!("QP 0x{:x} {prio}: {} CE, {}", fl.dest_qp, fl.ecn.ce, count(fl.cnps_received, "CNP"))
        } else {
            format!("QP 0x{:x} {prio}", fl.dest_qp)
        };
        if ranking.congested {
            lines.push(chart_line(
                c,
                who,
                style,
                "CE %",
                &ax.ce_pct(&t.ce, &t.packets, t.bin_ns),
                Color::Yellow,
            ));
            lines.push(chart_line(c, qp, style, "CNP/s", &ax.per_s(&t.cnps, t.bin_ns), Color::Magenta));
        } else {
            lines.push(chart_line(c, who, style, "Gb/s", &ax.gbps(&t.bins, t.bin_ns), Color::Cyan));
            let b = &t.burst;
            let text = format!(
                "busiest {}: {:.2} Gb/s at {}",
                fmt_dur(b.bin_ns as f64),
                b.peak_gbps,
                fmt_at(b.peak_offset_ns)
            );
            lines.push(text_line(c, qp, style, text));
        }
    }
    f.render_widget(Paragraph::new(lines).block(block), area);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-6 * b.abs().max(1.0)
    }

    /// A PFC timeline at point 0 on `prio` from MAC `mac`, paused over `spans` (ns from 0).
    fn timeline(mac: &str, prio: u8, spans: &[(i64, i64)]) -> PauseReport {
        use rocescope_analyzer::pfc::Interval;
        use rocescope_analyzer::report::PauseDirection;
        let intervals: Vec<Interval> = spans
            .iter()
            .map(|&(start_ns, end_ns)| Interval {
                start_ns,
                end_ns,
                xon: false,
                frames: 1,
                first_frame: 1,
                roce_during: 0,
                roce_towards: 0,
                ignored: 0,
            })
            .collect();
        PauseReport {
            point: 0,
            src_mac: mac.into(),
            kind: PauseKind::Pfc,
            priority: prio,
            pause_frames: spans.len() as u64,
            xon_frames: 0,
            quanta_total: 0,
            paused_ns: spans.iter().map(|(s, e)| e - s).sum(),
            pause_us_per_s: 0.0,
            max_pause_us_per_s: 0.0,
            link_bps: 100_000_000_000,
            intervals,
            intervals_dropped: 0,
            storms: Vec::new(),
            deadlock_hint: None,
            roce_packets_on_priority: 1,
            first_frame: 1,
            roce_to_mac: 0,
            direction: PauseDirection::Unknown,
            link_peer: None,
            ignored_frames: 0,
            ignored_from_peer: 0,
            ignored_max_delay_ns: 0,
        }
    }

    #[test]
    fn paused_time_is_per_mac_not_summed() {
        // Two MACs pause priority 3 over the same 60 µs, one of them 30 µs more; another
        // priority's pauses do not count. Bins of 50 µs.
        let pfc = [
            timeline("02:00:00:00:00:01", 3, &[(0, 60_000)]),
            timeline("02:00:00:00:00:02", 3, &[(0, 60_000), (100_000, 130_000)]),
            timeline("02:00:00:00:00:02", 4, &[(0, 150_000)]),
        ];
        let (paused, macs, bins) = paused_by_mac(&pfc, 0, Some(3), 0, 50_000, 3).unwrap();
        assert_eq!((paused, macs), (90_000, 2));
        assert_eq!(bins, [50_000, 10_000, 30_000], "never above the bin width");
        assert_eq!(paused_label(paused, macs), format!("{} paused (busiest of 2 MACs)", fmt_dur(90_000.0)));
        assert!(paused_by_mac(&pfc, 0, None, 0, 50_000, 3).is_none(), "no 802.3x PAUSE");
        assert!(paused_by_mac(&pfc, 1, Some(3), 0, 50_000, 3).is_none(), "another point");
    }

    #[test]
    fn series_of_different_widths_line_up_and_keep_their_sums() {
        // 1 ms on 10 columns of 100 µs: one series of 10 µs bins, one of 250 µs bins.
        let fine: Vec<u64> = (0..100).map(|i| i % 7).collect();
        let coarse = vec![400, 0, 100, 20];
        let a = resample(&fine, 10_000, 1_000_000, 10);
        let b = resample(&coarse, 250_000, 1_000_000, 10);
        assert!(close(a.iter().sum(), fine.iter().sum::<u64>() as f64));
        assert!(close(b.iter().sum(), 520.0));
        // Ten 10 µs bins per column, summed.
        assert!(close(a[0], fine[..10].iter().sum::<u64>() as f64));
        // A 250 µs bin spreads evenly: 400 over columns 0, 1 and half of 2.
        assert!(close(b[0], 160.0) && close(b[1], 160.0) && close(b[2], 80.0), "{b:?}");
        assert!(close(b[3], 0.0) && close(b[4], 0.0), "{b:?}");
        assert!(close(b[5], 40.0) && close(b[6], 40.0) && close(b[7], 24.0), "{b:?}");
        assert!(close(b[8], 8.0) && close(b[9], 8.0), "{b:?}");
        // Columns narrower than a bin: a bin of 3 columns' width spreads over 3 columns.
        let c = resample(&[30, 6], 300, 600, 6);
        assert_eq!(c.iter().map(|x| x.round() as u64).collect::<Vec<_>>(), vec![10, 10, 10, 2, 2, 2]);
        // A bin reaching past the axis end (its latest frame) is spread over its part inside
        // it; one starting past the end goes to the last column: the sum holds.
        let d = resample(&[0, 0, 0, 9, 5], 300, 1000, 10);
        assert!(close(d.iter().sum(), 14.0), "{d:?}");
        assert!(close(d[9], 9.0 + 5.0), "{d:?}");
        // Time past the axis is not charted.
        let e = resample_time(&[0, 0, 0, 300], 300, 1000, 10);
        assert!(close(e.iter().sum(), 100.0), "{e:?}");
        // Degenerate shapes: no panic, nothing invented.
        assert!(resample(&[1, 2], 100, 1000, 0).is_empty());
        assert_eq!(resample(&[1, 2], 0, 1000, 3), vec![0.0; 3]);
        assert_eq!(resample(&[], 100, 1000, 3), vec![0.0; 3]);
        assert!(close(resample(&[7], 1_000_000, 10, 1)[0], 7.0));
    }

    #[test]
    fn charts_and_figures_read_well() {
        let (s, max) = bars(&[0.0, 1.0, 4.0, 8.0]);
        assert_eq!(s, " ▁▄█");
        assert_eq!(max, 8.0);
        assert_eq!(bars(&[0.0, 0.0]).0, "  ");
        assert_eq!(fmt_dur(10_000.0), "10 µs");
        assert_eq!(fmt_dur(2_560_000.0), "2.56 ms");
        assert_eq!(fmt_dur(17_517.0), "17.5 µs");
        assert_eq!(fmt_dur(160_000.0), "160 µs");
        assert_eq!(fmt_at(50_000), "+0.050 ms");
        assert_eq!(fmt_max(175_000.0), "175k");
        assert_eq!(fmt_max(13.349), "13.3");
        assert_eq!(fmt_max(999_962.0), "1.00M");
        assert_eq!(fit("abcdef", 4), "abc…");
        assert_eq!(fit("ab", 4), "ab  ");
    }
}
