//! The text report's ELEPHANTS, ECMP ENTROPY, ECMP PATHS and UPLINKS sections
//! (docs/verdicts.md "ECMP"): shown when there is a busy flow (1 MiB or more) or when
//! `--ecmp-paths` or `--uplinks` asked for them, so small captures read as before.

use rocescope_analyzer::ecmp::{EcmpReport, ElephantsReport, BUSY_MIN_BYTES};
use rocescope_analyzer::report::StreamedReport;
use rocescope_analyzer::Report;
use rocescope_capture::text::escape;
use std::fmt::Write;

/// Lines per list (elephants, host pairs).
const LINES: usize = 5;

use rocescope_analyzer::ecmp::size_text as size;

/// `QP 0x000101 10.0.0.1 → 10.0.0.2` for flow `id` of the report.
fn qp(sr: &StreamedReport<'_>, id: usize, multi: bool) -> String {
    let r = &sr.report;
    match sr.flow(id) {
        Some(f) => {
            let at = match r.points.get(usize::from(f.point)) {
                Some(p) if multi => format!(" at {}", escape(&p.name)),
                _ => String::new(),
            };
            format!("QP 0x{:06x} {} → {}{at}", f.dest_qp, f.src, f.dst)
        }
        None => format!("flow {id}"),
    }
}

/// Every section that applies.
pub fn ecmp_lines(o: &mut String, sr: &StreamedReport<'_>) {
    let r = &sr.report;
    let e = &r.ecmp;
    if r.elephants.busy_flows == 0 && e.prediction.is_none() && e.uplinks.is_none() {
        return;
    }
    let multi = r.points.len() > 1;
    elephant_lines(o, r, multi);
    entropy_lines(o, e, multi, r);
    path_lines(o, sr, multi);
    uplink_lines(o, sr);
}

fn elephant_lines(o: &mut String, r: &Report, multi: bool) {
    let el: &ElephantsReport = &r.elephants;
    let _ = writeln!(
        o,
        "\nELEPHANTS ({} data flows, {}; the top {} carry {:.1}%, {} flow(s) carry {:.0}%; busy: {} MiB or more)",
        el.data_flows,
        size(el.data_bytes),
        el.top.len(),
        el.top_share * 100.0,
        el.flows_for_share,
        el.share * 100.0,
        BUSY_MIN_BYTES >> 20
    );
    if el.top.len() > LINES {
        // The header's share is the top list's: say that only its head follows (issue 41).
        let _ =
            writeln!(o, "  the {LINES} largest of those {} (all {} in --json):", el.top.len(), el.top.len());
    }
    for x in el.top.iter().take(LINES) {
        let _ = writeln!(
            o,
            "  {} → {} QP 0x{:06x}{}: {} ({:.1}%), UDP source port {}",
            x.src,
            x.dst,
            x.dest_qp,
            match r.points.get(usize::from(x.point)) {
                Some(p) if multi => format!(" at {}", escape(&p.name)),
                _ => String::new(),
            },
            size(x.bytes),
            x.share * 100.0,
            x.udp_src_port.map_or("- (RoCEv1)".to_string(), |p| p.to_string())
        );
    }
}

fn entropy_lines(o: &mut String, e: &EcmpReport, multi: bool, r: &Report) {
    let pairs: Vec<_> = e.host_pairs.iter().filter(|p| p.busy_qps >= 2).take(LINES).collect();
    if pairs.is_empty() {
        return;
    }
    let _ = writeln!(
        o,
        "\nECMP ENTROPY (host pairs with busy QPs: their UDP source ports, and the entropy of their bytes over the ports)"
    );
    for p in pairs {
        let at = match r.points.get(usize::from(p.point)) {
            Some(x) if multi => format!("{}: ", escape(&x.name)),
            _ => String::new(),
        };
        let _ = writeln!(o, "  {at}{}", p.summary());
    }
}

fn path_lines(o: &mut String, sr: &StreamedReport<'_>, multi: bool) {
    let r = &sr.report;
    let Some(p) = &r.ecmp.prediction else { return };
    let _ = writeln!(
        o,
        "\nECMP PATHS (predicted: {} over the {}, {} paths; holds only if the switch hashes so)",
        p.hash, p.key, p.paths
    );
    for l in p.loads.iter().take(16) {
        let _ = writeln!(
            o,
            "  path {:<3} {:>10} ({:>5.1}%), {} flow(s), {} busy",
            l.path,
            size(l.bytes),
            l.share * 100.0,
            l.flows,
            l.busy_flows
        );
    }
    if p.loads.len() > 16 {
        let _ = writeln!(o, "  ... {} more paths (--json for all)", p.loads.len() - 16);
    }
    let _ =
        writeln!(o, "  busiest path {}: {:.2}x the mean; {} idle", p.busiest, p.max_over_mean, p.idle_paths);
    for c in p.collisions.iter().take(LINES) {
        let names: Vec<String> = c.elephants.iter().take(4).map(|i| qp(sr, *i, multi)).collect();
        let _ = writeln!(o, "  path {} holds {} elephants: {}", c.path, c.busy_flows, names.join(", "));
    }
}

fn uplink_lines(o: &mut String, sr: &StreamedReport<'_>) {
    let r = &sr.report;
    let Some(u) = &r.ecmp.uplinks else { return };
    let _ =
        writeln!(o, "\nUPLINKS (measured at the capture points --uplinks names: RoCE bytes each carried)");
    for l in &u.uplinks {
        let names: Vec<String> = l.elephants.iter().take(3).map(|i| qp(sr, *i, false)).collect();
        let _ = writeln!(
            o,
            "  {:<24} {:>10} ({:>5.1}%), {} busy flow(s){}",
            escape(&l.name).to_string(),
            size(l.bytes),
            l.share * 100.0,
            l.busy_flows,
            if names.is_empty() { String::new() } else { format!(": {}", names.join(", ")) }
        );
    }
    for n in &u.unmatched {
        let _ = writeln!(o, "  {}: no capture point has this name", escape(n));
    }
    let fit = &u.hash_fit;
    if u.uplinks.len() >= 2 {
        let line = if !fit.decided {
            format!(
                "  which switch hash: too few data flows to tell ({}; {} beyond the uplinks needed)",
                fit.flows,
                rocescope_analyzer::ecmp::FIT_MIN_FLOWS_OVER_UPLINKS
            )
        } else if fit.fitting.is_empty() {
            format!(
                "  which switch hash: none of the {} modelled (seed 0) places these {} flows as measured",
                fit.tested, fit.flows
            )
        } else {
            format!(
                "  which switch hash: {} place(s) these {} flows as measured: --ecmp-hash {} predicts as this switch hashes",
                fit.fitting.join(", "),
                fit.flows,
                fit.fitting.first().map_or("", String::as_str)
            )
        };
        let _ = writeln!(o, "{line}");
    }
    if u.uplinks.len() >= 2 {
        let busy: Vec<f64> = u.max_over_mean_bins.iter().copied().filter(|x| *x > 0.0).collect();
        let worst = busy.iter().copied().fold(0.0f64, f64::max);
        let _ = writeln!(
            o,
            "  busiest/mean {:.2} over the capture; per {} bin: worst {:.2}, {} of {} bins with traffic over 1.5",
            u.max_over_mean,
            rocescope_analyzer::incast::width_text(u.bin_ns),
            worst,
            busy.iter().filter(|x| **x > rocescope_analyzer::ecmp::IMBALANCE_RATIO).count(),
            busy.len()
        );
    }
}
