//! The connections' section of the report: each QP pair once (its two flows), then the
//! flows no partner was found for.

use super::*;

/// The connections, with the health of their worst flow (`flow_worst`: each flow's worst
/// finding).
pub(super) fn connections(a: &Analyzer, flow_worst: &[Option<Severity>]) -> Vec<Connection> {
    let worst = |ids: &[usize]| -> &'static str {
        health_name(ids.iter().filter_map(|i| flow_worst.get(*i).copied().flatten()).min())
    };
    // Counted first: a growing `Vec` of 100k connections left a quarter of its room empty.
    let count = a.flows.iter().enumerate().filter(|(i, f)| f.partner().is_none_or(|p| p > *i)).count();
    let mut connections = Vec::with_capacity(count);
    for (i, f) in a.flows.iter().enumerate() {
        match f.partner() {
            Some(p) if p < i => continue,
            Some(p) => {
                let g = a.flows.get(p);
                let ids = [i, p];
                connections.push(Connection {
                    point: f.key.point,
                    a: f.key.src,
                    b: f.key.dst,
                    a_qpn: g.map(|g| g.key.dest_qp),
                    b_qpn: f.key.dest_qp,
                    flows: ConnFlows::two(i, p),
                    pairing: Word::new(f.pairing.map_or("none", |p| p.name())),
                    packets: f.packets() + g.map_or(0, |g| g.packets()),
                    bytes: f.bytes() + g.map_or(0, |g| g.bytes()),
                    health: Word::new(worst(&ids)),
                });
            }
            None => connections.push(Connection {
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
            }),
        }
    }

    connections
}
