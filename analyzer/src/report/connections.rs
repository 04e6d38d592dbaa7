//! The connections' section of the report: each QP pair once (its two flows), then the
//! flows no partner was found for. Each connection is built from its flows when asked for
//! ([`at`]): a streamed report writes them one at a time instead of holding a list of them
//! (96 bytes a connection, 9.6 MB at 100,000 QPs; issue 39).

use super::*;

/// The connection whose first flow is `i`, with the health of its worst flow (`flow_worst`:
/// each flow's worst finding); `None` when flow `i` is the second of its pair (its
/// connection is its partner's) or no flow.
pub(super) fn at(a: &Analyzer, i: usize, flow_worst: &[Option<Severity>]) -> Option<Connection> {
    let f = a.flows.get(i)?;
    let worst = |ids: &[usize]| -> &'static str {
        health_name(ids.iter().filter_map(|i| flow_worst.get(*i).copied().flatten()).min())
    };
    Some(match f.partner() {
        Some(p) if p < i => return None,
        Some(p) => {
            let g = a.flows.get(p);
            Connection {
                point: f.key.point,
                a: f.key.src,
                b: f.key.dst,
                a_qpn: g.map(|g| g.key.dest_qp),
                b_qpn: f.key.dest_qp,
                flows: ConnFlows::two(i, p),
                pairing: Word::new(f.pairing().map_or("none", |p| p.name())),
                packets: f.packets() + g.map_or(0, |g| g.packets()),
                bytes: f.bytes() + g.map_or(0, |g| g.bytes()),
                health: Word::new(worst(&[i, p])),
            }
        }
        None => Connection {
            point: f.key.point,
            a: f.key.src,
            b: f.key.dst,
            a_qpn: None,
            b_qpn: f.key.dest_qp,
            flows: ConnFlows::one(i),
            pairing: Word::new("none"),
            packets: f.packets(),
            bytes: f.bytes(),
            health: Word::new(worst(&[i])),
        },
    })
}

/// How many connections there are: the flows but the second of each pair.
pub(super) fn count(a: &Analyzer) -> usize {
    a.flows.iter().enumerate().filter(|(i, f)| f.partner().is_none_or(|p| p > *i)).count()
}

/// The connections in the report's order, built one at a time.
pub(super) fn iter<'a>(
    a: &'a Analyzer,
    flow_worst: &'a [Option<Severity>],
) -> impl Iterator<Item = Connection> + 'a {
    (0..a.flows.len()).filter_map(move |i| at(a, i, flow_worst))
}

/// The connections as a list (the report built whole).
pub(super) fn connections(a: &Analyzer, flow_worst: &[Option<Severity>]) -> Vec<Connection> {
    // Counted first: a growing `Vec` of 100k connections left a quarter of its room empty.
    let mut connections = Vec::with_capacity(count(a));
    connections.extend(iter(a, flow_worst));
    connections
}

/// The first `n` connections worst first ([`health_rank`]), then the most packets first,
/// ties in the report's order (what a stable sort of the whole list gives), ranked in a
/// list of 24 bytes a connection instead of the connections themselves (96 bytes).
pub(super) fn worst_first(a: &Analyzer, flow_worst: &[Option<Severity>], n: usize) -> Vec<Connection> {
    let mut ranked: Vec<(u8, std::cmp::Reverse<u64>, usize)> = iter(a, flow_worst)
        .map(|c| {
            (
                health_rank(c.health.as_str()),
                std::cmp::Reverse(c.packets),
                c.flows.first().copied().unwrap_or(0),
            )
        })
        .collect();
    // Keys are distinct (a connection's first flow is its own), so an unstable sort gives
    // the stable order; connections are in the order of their first flows.
    ranked.sort_unstable();
    ranked.into_iter().take(n).filter_map(|(_, _, i)| at(a, i, flow_worst)).collect()
}
