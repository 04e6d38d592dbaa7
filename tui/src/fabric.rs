//! The Fabric screen (`7`): the shape of the job's traffic at one capture point: the
//! training iteration's rhythm as a strip (one cell per iteration, its height the busy share,
//! red where the straggler finished last), the hosts that finish last, and the elephant flows
//! with the ECMP picture (docs/verdicts.md "Iteration rhythm and stragglers"). Its rows are
//! the stragglers' and the elephants' QPs: Enter opens one.

use crate::app::App;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Wrap};
use ratatui::Frame;
use rocescope_analyzer::report::Report;
use rocescope_analyzer::rhythm::RhythmReport;

/// The capture point shown: the one the Congestion screen shows (`[` and `]` on either).
pub fn point_of(r: &Report, app_point: usize) -> Option<u16> {
    r.timeline.points.get(app_point).map(|p| p.point).or_else(|| r.rhythm.first().map(|x| x.point))
}

/// The rhythm at the point shown.
pub fn rhythm_at(r: &Report, app_point: usize) -> Option<&RhythmReport> {
    let p = point_of(r, app_point)?;
    r.rhythm.iter().find(|x| x.point == p)
}

/// The screen's rows, in order, each with the flow Enter opens: the flows of the hosts that
/// finished last (stragglers first), then every line of the elephants and ECMP pane (the
/// elephants' open their flow; the entropy lines and the bars scroll into view).
pub fn rows(r: &Report, app_point: usize) -> Vec<Option<usize>> {
    let mut rows: Vec<Option<usize>> = rhythm_at(r, app_point)
        .map(|rh| rh.stragglers.iter().map(|s| Some(s.flow)).collect())
        .unwrap_or_default();
    rows.extend(crate::fabric_ecmp::lines(r).into_iter().map(|(_, flow)| flow));
    rows
}

fn ms(ns: i64) -> String {
    format!("{:.1} ms", ns as f64 / 1e6)
}

/// The iteration strip: one cell per listed iteration, as wide as `width` allows (the
/// latest ones when there are more), red where the straggler of the rule was last.
fn strip(rh: &RhythmReport, width: usize) -> Line<'static> {
    let straggler = rh.stragglers.iter().find(|s| s.verdict).map(|s| s.host);
    let skip = rh.iteration_list.len().saturating_sub(width);
    let spans: Vec<Span<'static>> = rh
        .iteration_list
        .iter()
        .skip(skip)
        .map(|it| {
            let c = rocescope_analyzer::rhythm::strip_cell(rh.busy_share(it));
            let style = if Some(it.last_host) == straggler {
                Style::new().fg(Color::Red)
            } else {
                Style::new().fg(Color::Green)
            };
            Span::styled(c.to_string(), style)
        })
        .collect();
    Line::from(spans)
}

fn rhythm_lines(r: &Report, rh: &RhythmReport, width: usize) -> Vec<Line<'static>> {
    let pct = |x: f64| format!("{:.0}%", x * 100.0);
    let herd = |what: &str, s: Option<f64>| s.map(|x| format!("{what} {} at the bursts' starts", pct(x)));
    let mut lines = vec![
        Line::from(format!(
            "one iteration every {} (autocorrelation {:.2}): {} whole, {} hosts sending",
            ms(rh.period_ns),
            rh.strength,
            rh.iterations,
            rh.hosts
        )),
        Line::from(format!(
            "busy {} of each (median {}, longest {}), peak {:.2} Gb/s",
            pct(rh.busy_share_mean),
            ms(rh.busy_ns_median),
            ms(rh.busy_ns_max),
            rh.peak_gbps
        )),
    ];
    let shares: Vec<String> = [herd("CE marks", rh.ce_at_start), herd("paused time", rh.pause_at_start)]
        .into_iter()
        .flatten()
        .collect();
    if !shares.is_empty() {
        let style = if rh.herd { Style::new().fg(Color::Red) } else { Style::new() };
        let tail = if rh.herd { ": they cluster there (a thundering herd)" } else { "" };
        lines.push(Line::styled(format!("{}{tail}", shares.join(", ")), style));
    }
    let mut s = vec![Span::raw("busy share per iteration: ")];
    s.extend(strip(rh, width.saturating_sub(26)).spans);
    lines.push(Line::from(s));
    let start = r.summary.start_ns.unwrap_or(0);
    if let Some(first) = rh.iteration_list.first() {
        lines.push(Line::styled(
            format!(
                "(first whole iteration at +{:.3} ms; red: the straggler was last)",
                (first.start_ns - start) as f64 / 1e6
            ),
            Style::new().add_modifier(Modifier::DIM),
        ));
    }
    lines
}

pub(crate) fn draw(f: &mut Frame<'_>, app: &App, area: Rect) {
    let Some(s) = &app.shown else { return };
    let r = &s.report;
    let inner = usize::from(area.width.saturating_sub(2));
    let n_points = r.timeline.points.len();
    let point = point_of(r, app.point);
    let name = match point.and_then(|p| r.points.get(usize::from(p))) {
        Some(p) if r.points.len() > 1 => p.name.clone(),
        _ => s.source.clone(),
    };
    let header =
        if n_points > 1 { format!("point {}/{n_points}: {name} ([ ] next)", app.point + 1) } else { name };
    let rhythm = rhythm_at(r, app.point);
    let lines = match rhythm {
        Some(rh) => rhythm_lines(r, rh, inner),
        None => vec![
            Line::from("no training rhythm here: no bursts of data repeating at a period, three times or more."),
            Line::styled(
                "(a rhythm needs bursts of 16 KiB or more per QP, idle gaps over 1 ms between them, and three \
                 whole periods in the capture)",
                Style::new().add_modifier(Modifier::DIM),
            ),
        ],
    };
    let h = u16::try_from(lines.len() + 2).unwrap_or(u16::MAX).min(area.height.saturating_sub(4).max(3));
    let last_h =
        rhythm.map_or(0, |rh| u16::try_from(rh.stragglers.len().max(1) + 2).unwrap_or(u16::MAX).min(8));
    let [top, strip_area, last_area, rest] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(h),
        Constraint::Length(last_h),
        Constraint::Min(0),
    ])
    .areas(area);
    f.render_widget(Paragraph::new(header), top);
    f.render_widget(
        Paragraph::new(lines).block(Block::bordered().title(" iterations ")).wrap(Wrap { trim: true }),
        strip_area,
    );
    if let Some(rh) = rhythm {
        draw_last(f, app, r, rh, last_area);
    }
    let offset = rhythm.map_or(0, |rh| rh.stragglers.len());
    crate::fabric_ecmp::draw(f, r, app.selected_row().checked_sub(offset), rest);
}

/// Who finished last: one row per host last in two or more iterations (its QP is the row's
/// flow: Enter opens it).
fn draw_last(f: &mut Frame<'_>, app: &App, r: &Report, rh: &RhythmReport, area: Rect) {
    let selected = app.selected_row();
    let mut lines: Vec<Line<'static>> = Vec::new();
    if rh.stragglers.is_empty() {
        lines.push(Line::styled(
            "no host finished last in two iterations or more by over 1 ms and 10% of the busy part",
            Style::new().fg(Color::Green),
        ));
    }
    for (i, st) in rh.stragglers.iter().enumerate() {
        let qp = r.flows.get(st.flow).map_or_else(String::new, |fl| format!("QP 0x{:x}", fl.dest_qp));
        let text = format!(
            "{} {:<16} last in {:>3} of {:<3} by {} at the median ({:.0}% of the busy part), {qp}{}",
            if i == selected { '>' } else { ' ' },
            st.host.to_string(),
            st.last_in,
            st.of,
            ms(st.median_margin_ns),
            st.margin_share * 100.0,
            if st.verdict { ": a straggler" } else { "" }
        );
        let mut style = if st.verdict { Style::new().fg(Color::Red) } else { Style::new() };
        if i == selected {
            style = style.add_modifier(Modifier::REVERSED);
        }
        lines.push(Line::styled(text, style));
    }
    f.render_widget(
        Paragraph::new(lines).block(Block::bordered().title(" last to finish; Enter: QP detail ")),
        area,
    );
}
