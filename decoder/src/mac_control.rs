//! MAC Control frames (EtherType 0x8808): 802.1Qbb PFC (opcode 0x0101) and 802.3x PAUSE
//! (opcode 0x0001). Layouts and checks from reference §1.8.

use crate::wire::fixed;

/// The reserved multicast address both frames must be sent to.
pub const PAUSE_DST: [u8; 6] = [0x01, 0x80, 0xC2, 0x00, 0x00, 0x01];
/// MAC Control opcode for 802.3x PAUSE.
pub const OPCODE_PAUSE: u16 = 0x0001;
/// MAC Control opcode for PFC (class-based flow control).
pub const OPCODE_PFC: u16 = 0x0101;

/// A decoded MAC Control frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MacControl {
    /// 802.3x PAUSE: one pause time for the whole link.
    Pause(Pause),
    /// 802.1Qbb PFC: a class-enable vector and eight per-priority pause times.
    Pfc(Pfc),
    /// Another MAC Control opcode (kept, not decoded).
    Other {
        /// The opcode.
        opcode: u16,
    },
}

/// 802.3x PAUSE.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pause {
    /// Pause time in quanta of 512 bit times; 0 resumes.
    pub quanta: u16,
    /// The destination MAC was not 01:80:c2:00:00:01.
    pub bad_dst: bool,
}

/// 802.1Qbb PFC.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pfc {
    /// The 16-bit priority-enable vector as sent (upper byte must be 0).
    pub enable_vector: u16,
    /// Pause quanta for priorities 0..7, priority 0 first.
    pub quanta: [u16; 8],
    /// The destination MAC was not 01:80:c2:00:00:01.
    pub bad_dst: bool,
}

impl Pfc {
    /// The low byte of the vector: bit n enables priority n.
    pub const fn enable(&self) -> u8 {
        (self.enable_vector & 0xFF) as u8
    }
    /// The upper byte of the vector is not zero (Wireshark: "8 MSbs of ENBV must be 0").
    pub const fn bad_enable_upper(&self) -> bool {
        self.enable_vector & 0xFF00 != 0
    }
    /// Whether priority `p` is enabled in this frame.
    pub const fn enabled(&self, p: u8) -> bool {
        p < 8 && self.enable() & (1 << p) != 0
    }
    /// Emit the 46-byte MAC Control payload (opcode, vector, quanta, zero pad).
    pub fn emit_payload(&self) -> [u8; 46] {
        let mut b = [0u8; 46];
        b[0..2].copy_from_slice(&OPCODE_PFC.to_be_bytes());
        b[2..4].copy_from_slice(&self.enable_vector.to_be_bytes());
        for (slot, q) in b[4..20].chunks_exact_mut(2).zip(self.quanta) {
            slot.copy_from_slice(&q.to_be_bytes());
        }
        b
    }
}

impl Pause {
    /// Emit the 46-byte MAC Control payload.
    pub fn emit_payload(&self) -> [u8; 46] {
        let mut b = [0u8; 46];
        b[0..2].copy_from_slice(&OPCODE_PAUSE.to_be_bytes());
        b[2..4].copy_from_slice(&self.quanta.to_be_bytes());
        b
    }
}

/// Nanoseconds paused for `quanta` at `link_bps` (quanta x 512 bit times; reference §1.8).
pub fn quanta_to_ns(quanta: u16, link_bps: u64) -> u64 {
    if link_bps == 0 {
        return 0;
    }
    (u64::from(quanta) * 512 * 1_000_000_000) / link_bps
}

/// Parse a MAC Control body. `dst` is the Ethernet destination, when the link has one.
/// Returns `Err(needed)` when the body is too short for its opcode.
pub fn parse(body: &[u8], dst: Option<[u8; 6]>) -> Result<MacControl, usize> {
    let bad_dst = dst.is_some_and(|d| d != PAUSE_DST);
    let (rest, op) = fixed::<2>(body).map_err(|_| 2usize)?;
    let opcode = u16::from_be_bytes(*op);
    match opcode {
        OPCODE_PAUSE => {
            let (_, q) = fixed::<2>(rest).map_err(|_| 4usize)?;
            Ok(MacControl::Pause(Pause { quanta: u16::from_be_bytes(*q), bad_dst }))
        }
        OPCODE_PFC => {
            let (_, b) = fixed::<18>(rest).map_err(|_| 20usize)?;
            let mut quanta = [0u16; 8];
            for (q, w) in quanta.iter_mut().zip(b[2..].chunks_exact(2)) {
                *q = u16::from_be_bytes([w.first().copied().unwrap_or(0), w.last().copied().unwrap_or(0)]);
            }
            Ok(MacControl::Pfc(Pfc { enable_vector: u16::from_be_bytes([b[0], b[1]]), quanta, bad_dst }))
        }
        _ => Ok(MacControl::Other { opcode }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pfc_fixture() {
        let body = hex::decode(concat!(
            "0101", // opcode: PFC
            "0008", // class-enable vector: priority 3
            "0000", "0000", "0000", "ffff", // quanta for priorities 0..3
            "0000", "0000", "0000", "0000", // priorities 4..7
        ))
        .unwrap();
        let MacControl::Pfc(p) = parse(&body, Some(PAUSE_DST)).unwrap() else { panic!() };
        assert!(p.enabled(3) && !p.enabled(2));
        assert_eq!(p.quanta[3], 0xffff);
        assert!(!p.bad_dst && !p.bad_enable_upper());
        assert_eq!(&p.emit_payload()[..20], &body[..]);
    }

    #[test]
    fn pause_and_flags() {
        let MacControl::Pause(p) = parse(&[0, 1, 0x12, 0x34], Some([0xff; 6])).unwrap() else { panic!() };
        assert_eq!(p.quanta, 0x1234);
        assert!(p.bad_dst);
        let MacControl::Pfc(p) =
            parse(&[1, 1, 0x01, 0x08, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], None).unwrap()
        else {
            panic!()
        };
        assert!(p.bad_enable_upper());
        assert_eq!(parse(&[1, 1, 0], None), Err(20));
        assert_eq!(parse(&[0, 9], None), Ok(MacControl::Other { opcode: 9 }));
    }

    #[test]
    fn quanta_conversion() {
        // 5.12 ns per quantum at 100G; 51.2 ns at 10G; 65535 quanta ≈ 335.5 µs at 100G.
        assert_eq!(quanta_to_ns(1000, 100_000_000_000), 5120);
        assert_eq!(quanta_to_ns(10, 10_000_000_000), 512);
        assert_eq!(quanta_to_ns(65535, 100_000_000_000), 335_539);
        assert_eq!(quanta_to_ns(65535, 40_000_000_000), 838_848);
        assert_eq!(quanta_to_ns(5, 0), 0);
    }
}
