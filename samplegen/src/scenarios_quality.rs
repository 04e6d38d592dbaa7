//! What a report must say about the capture and the marking before any verdict on the
//! fabric (issue 37): a capture that holds a small share of the traffic (said once, at the
//! top), and two ends of a connection that mark their RoCE differently with no expectation
//! given (not "clean").

use crate::fabric::{Conn, Gen, Host, Req};
use rocescope_decoder::build::ExtRepr;
use rocescope_decoder::Opcode;

/// QPs in the sampled-looking capture.
const SAMPLED_QPS: u8 = 4;
/// PSNs each of them sends.
const SAMPLED_PSNS: u32 = 160;
/// The capture keeps one request packet in this many.
const KEEP_ONE_IN: u32 = 8;

/// A lossy mirror that keeps one request packet in eight on four busy QPs (and one ACK in
/// four of what it keeps): every QP shows a PSN gap of 7 before each packet it holds, never
/// NAKed nor resent. The report says once that the capture holds about 13% of the traffic
/// (`summary.capture_quality`) and makes one capture-wide `capture_loss` finding, not one
/// per QP.
pub fn sampled_capture(g: &mut Gen) {
    let mut conns: Vec<Conn> = (0..SAMPLED_QPS)
        .map(|i| Conn::new(Host::v4(71), Host::v4(72), 0x700 + u32::from(i), 0x780 + u32::from(i), 5000))
        .collect();
    for k in 0..SAMPLED_PSNS {
        for (i, c) in conns.iter_mut().enumerate() {
            if k % KEEP_ONE_IN != 0 {
                g.lose(c);
                continue;
            }
            let psn = g.request(c, Opcode::RC_SEND_ONLY, ExtRepr::default(), 1024, true, Req::New);
            if k == KEEP_ONE_IN && i == 0 {
                g.event("capture_loss", format!("PSN {psn} arrives after 7 PSNs the capture never held"));
            }
            if k > 0 {
                g.expect_gap(c, u64::from(KEEP_ONE_IN - 1), true);
            }
            c.msn += 1;
            if (k / KEEP_ONE_IN) % 4 == 0 {
                g.wait_ns(2_000);
                g.ack(c, psn);
            }
        }
        g.wait_ns(400);
    }
    g.expect_finding("capture_loss", "info", None);
}

/// Two hosts with three connections each way: 10.0.0.73 marks everything it sends DSCP 26
/// (priority 3), 10.0.0.74 DSCP 0 (priority 0), its data and its ACKs alike. No expectation
/// given: the audit is "not audited", and one `marking_inconsistent` WARNING names both ends.
pub fn marking_ends(g: &mut Gen) {
    let (a, b) = (Host::v4(73), Host::v4(74));
    let mut conns: Vec<(Conn, u8, u8)> = (0..3u32)
        .flat_map(|i| {
            [
                (Conn::new(a, b, 0x730 + i, 0x740 + i, 100 + i * 1000), 26, 0),
                (Conn::new(b, a, 0x750 + i, 0x760 + i, 9000 + i * 1000), 0, 26),
            ]
        })
        .collect();
    for round in 0..4 {
        for (c, req_dscp, ack_dscp) in conns.iter_mut() {
            c.dscp = *req_dscp;
            let psn = g.request(c, Opcode::RC_SEND_ONLY, ExtRepr::default(), 2048, true, Req::New);
            c.msn += 1;
            g.wait_ns(2_000);
            c.dscp = *ack_dscp;
            g.ack(c, psn);
            if round == 0 && *ack_dscp == 0 {
                g.event(
                    "dscp_violation",
                    "10.0.0.74 ACKs on DSCP 0 what 10.0.0.73 sent on DSCP 26".to_string(),
                );
            }
            g.wait_us(5);
        }
    }
    g.expect_finding("marking_inconsistent", "warning", None);
}
