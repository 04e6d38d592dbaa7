//! The Fabric screen's lower part: the elephant flows (its rows: Enter opens one), the ECMP
//! entropy of the host pairs with busy QPs, and where ECMP puts the flows: predicted with
//! `--ecmp-paths`, measured at the capture points `--uplinks` names (docs/verdicts.md
//! "ECMP").

use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};
use ratatui::Frame;
use rocescope_analyzer::ecmp::{
    measured_imbalance, predicted_imbalance, PathPrediction, UplinkReport, IMBALANCE_RATIO,
};
use rocescope_analyzer::report::Report;

/// Host pairs listed.
const PAIRS: usize = 4;
/// Paths or uplinks drawn as bars.
const BARS: usize = 8;
/// A bar's cells at 100%.
const BAR_CELLS: usize = 20;

use rocescope_analyzer::ecmp::size_text as size;

/// A share as a bar of [`BAR_CELLS`], scaled to the largest share shown (`max`).
fn bar(share: f64, max: f64) -> String {
    let full = if max > 0.0 { (share / max * BAR_CELLS as f64).round() as usize } else { 0 };
    let full = full.min(BAR_CELLS);
    format!("{}{}", "█".repeat(full), "░".repeat(BAR_CELLS - full))
}

/// The overloaded path `flow` is predicted on: the busiest, when it makes `ecmp_imbalance`
/// (rocescope_analyzer::ecmp::predicted_imbalance).
fn collision_of(p: Option<&PathPrediction>, flow: usize) -> Option<u16> {
    predicted_imbalance(p?).filter(|c| c.elephants.contains(&flow)).map(|c| c.path)
}

/// The overloaded uplink `flow` was measured on, when it makes `ecmp_imbalance`.
fn uplink_of(u: Option<&UplinkReport>, flow: usize) -> Option<&str> {
    measured_imbalance(u?).filter(|l| l.elephants.contains(&flow)).map(|l| l.name.as_str())
}

/// The pane's lines, each with the flow Enter opens on it (the elephants').
type Lines = Vec<(Line<'static>, Option<usize>)>;

fn elephant_lines(r: &Report, lines: &mut Lines) {
    let el = &r.elephants;
    if el.data_flows == 0 {
        lines.push((Line::from("no data flows: nothing for ECMP to spread"), None));
        return;
    }
    lines.push((
        Line::from(format!(
            "{} data flows, {}: the top {} carry {:.1}%, {} carry {:.0}% of the bytes",
            el.data_flows,
            size(el.data_bytes),
            el.top.len(),
            el.top_share * 100.0,
            el.flows_for_share,
            el.share * 100.0
        )),
        None,
    ));
    let multi = r.points.len() > 1;
    for x in &el.top {
        let at = match r.points.get(usize::from(x.point)) {
            Some(p) if multi => format!(" at {}", p.name),
            _ => String::new(),
        };
        // Measured first: where the uplinks saw it beats where a modelled hash puts it.
        let path = uplink_of(r.ecmp.uplinks.as_ref(), x.flow)
            .map(|u| format!("  on the overloaded uplink {u}"))
            .or_else(|| {
                collision_of(r.ecmp.prediction.as_ref(), x.flow)
                    .map(|p| format!("  on the overloaded path {p} (predicted)"))
            });
        let text = format!(
            "{:<15} → {:<15} QP 0x{:06x} {:>10} {:>5.1}%  port {}{at}{}",
            x.src.to_string(),
            x.dst.to_string(),
            x.dest_qp,
            size(x.bytes),
            x.share * 100.0,
            x.udp_src_port.map_or("- (RoCEv1)".to_string(), |p| p.to_string()),
            path.as_deref().unwrap_or("")
        );
        let style = if path.is_some() { Style::new().fg(Color::Red) } else { Style::new() };
        lines.push((Line::styled(text, style), Some(x.flow)));
    }
}

fn entropy_lines(r: &Report, lines: &mut Vec<Line<'static>>) {
    let pairs: Vec<_> = r.ecmp.host_pairs.iter().filter(|p| p.busy_qps >= 2).take(PAIRS).collect();
    if pairs.is_empty() {
        return;
    }
    lines.push(Line::styled(
        "ECMP entropy (host pairs with busy QPs)",
        Style::new().add_modifier(Modifier::BOLD),
    ));
    for p in pairs {
        let low = p.low_entropy;
        let text = format!("  {}{}", p.summary(), if low { ": ECMP cannot spread them" } else { "" });
        lines.push(Line::styled(text, if low { Style::new().fg(Color::Red) } else { Style::new() }));
    }
}

fn prediction_lines(p: &PathPrediction, lines: &mut Vec<Line<'static>>) {
    let over = p.max_over_mean > IMBALANCE_RATIO;
    lines.push(Line::styled(
        format!(
            "predicted: {} over the {}, {} paths: busiest path {} at {:.2}x the mean, {} idle",
            p.hash, p.key, p.paths, p.busiest, p.max_over_mean, p.idle_paths
        ),
        if over {
            Style::new().fg(Color::Red).add_modifier(Modifier::BOLD)
        } else {
            Style::new().add_modifier(Modifier::BOLD)
        },
    ));
    let max = p.loads.iter().map(|l| l.share).fold(0.0f64, f64::max);
    for l in p.loads.iter().take(BARS) {
        lines.push(Line::from(format!(
            "  path {:<4} {} {:>5.1}%  {} flow(s), {} busy",
            l.path,
            bar(l.share, max),
            l.share * 100.0,
            l.flows,
            l.busy_flows
        )));
    }
    if p.loads.len() > BARS {
        lines.push(Line::from(format!("  ... {} more paths (report --json for all)", p.loads.len() - BARS)));
    }
}

fn uplink_lines(u: &UplinkReport, lines: &mut Vec<Line<'static>>) {
    let over = u.max_over_mean > IMBALANCE_RATIO;
    lines.push(Line::styled(
        format!("measured at the uplinks: the busiest carries {:.2}x the mean", u.max_over_mean),
        if over {
            Style::new().fg(Color::Red).add_modifier(Modifier::BOLD)
        } else {
            Style::new().add_modifier(Modifier::BOLD)
        },
    ));
    let max = u.uplinks.iter().map(|l| l.share).fold(0.0f64, f64::max);
    for l in u.uplinks.iter().take(BARS) {
        lines.push(Line::from(format!(
            "  {:<20} {} {:>5.1}%  {} busy flow(s)",
            l.name,
            bar(l.share, max),
            l.share * 100.0,
            l.busy_flows
        )));
    }
    let fit = &u.hash_fit;
    let text = match (fit.decided, fit.fitting.first()) {
        (false, _) => format!("  which switch hash: too few data flows to tell ({})", fit.flows),
        (true, None) => {
            format!("  which switch hash: none of the {} modelled fits these {} flows", fit.tested, fit.flows)
        }
        (true, Some(h)) => format!(
            "  which switch hash: {} (--ecmp-hash {h} predicts as this switch hashes)",
            fit.fitting.join(", ")
        ),
    };
    lines.push(Line::styled(text, Style::new().add_modifier(Modifier::DIM)));
    for n in &u.unmatched {
        lines.push(Line::styled(
            format!("  {n}: no capture point has this name"),
            Style::new().fg(Color::Yellow),
        ));
    }
}

/// The pane's lines: the elephants (Enter opens one), the ECMP entropy, the paths or
/// uplinks as bars. Every line is a row of the Fabric screen after the stragglers', so `j`,
/// `k`, `PgDn` and `G` reach the last bar however short the terminal (issue 41).
pub(crate) fn lines(r: &Report) -> Lines {
    let mut lines = Lines::new();
    elephant_lines(r, &mut lines);
    let mut rest: Vec<Line<'static>> = Vec::new();
    entropy_lines(r, &mut rest);
    if let Some(p) = &r.ecmp.prediction {
        prediction_lines(p, &mut rest);
    }
    if let Some(u) = &r.ecmp.uplinks {
        uplink_lines(u, &mut rest);
    }
    if r.ecmp.prediction.is_none() && r.ecmp.uplinks.is_none() && r.elephants.busy_flows > 0 {
        rest.push(Line::styled(
            "(--ecmp-paths N predicts where a switch's hash puts them; --uplinks A,B,... measures it)",
            Style::new().add_modifier(Modifier::DIM),
        ));
    }
    lines.extend(rest.into_iter().map(|l| (l, None)));
    lines
}

/// Draw the pane into `area` with line `selected` (of [`lines`]; none when `None`) marked
/// and scrolled into view.
pub(crate) fn draw(f: &mut Frame<'_>, r: &Report, selected: Option<usize>, area: Rect) {
    let all = lines(r);
    let total = all.len();
    let inner = usize::from(area.height.saturating_sub(2)).max(1);
    let first = selected.map_or(0, |s| (s + 1).saturating_sub(inner));
    let shown: Vec<Line<'static>> = all
        .into_iter()
        .enumerate()
        .skip(first)
        .take(inner)
        .map(|(i, (line, _))| {
            let sel = Some(i) == selected;
            let mut spans = vec![Span::raw(if sel { "> " } else { "  " })];
            spans.extend(line.spans);
            let style = if sel { line.style.add_modifier(Modifier::REVERSED) } else { line.style };
            Line::from(spans).style(style)
        })
        .collect();
    // Lines past the pane's end: say how far down it is.
    let more = if total > inner {
        format!(" line {} of {total}: j, k, PgDn, G ", selected.map_or(1, |s| s + 1))
    } else {
        String::new()
    };
    f.render_widget(
        Paragraph::new(shown)
            .block(Block::bordered().title(" elephants and ECMP; Enter: QP detail ").title_bottom(more)),
        area,
    );
}
