//! Communication Manager MADs on QP1 (GSI): REQ and REP carry each side's local QPN and
//! starting PSN, which pairs the two directions of an RC connection (reference §1.10 "QP
//! pairing"; Wireshark parses the same fields). Offsets are from the MAD data, after the
//! 24-byte MAD header, and were checked against tshark on write.pcap.

/// Management class of the Communication Manager.
pub const MGMT_CLASS_CM: u8 = 0x07;
/// CM attribute: ConnectRequest.
pub const ATTR_REQ: u16 = 0x0010;
/// CM attribute: ConnectReply.
pub const ATTR_REP: u16 = 0x0013;
/// CM attribute: DisconnectRequest.
pub const ATTR_DREQ: u16 = 0x0015;

/// A CM DREQ's Remote QPN (the QP of the side it is sent to; IBA 12.6.10, data bytes 8-10,
/// as tshark shows it on rping_3072_faillire.pcapng): the connection is being torn down.
/// `None` for anything else.
pub fn dreq_remote_qpn(mad: &[u8]) -> Option<u32> {
    if *mad.get(1)? != MGMT_CLASS_CM || u16::from_be_bytes(mad.get(16..18)?.try_into().ok()?) != ATTR_DREQ {
        return None;
    }
    be24(mad.get(24..)?, 8)
}

/// What a CM MAD says about the connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CmMessage {
    /// REQ or REP.
    pub attribute: u16,
    /// Transaction ID shared by a REQ and its REP.
    pub transaction_id: u64,
    /// The sender's local QPN.
    pub local_qpn: u32,
    /// The starting PSN it gives.
    pub starting_psn: u32,
    /// REQ only: the primary path's local ACK timeout exponent t (ACK timeout 4.096 µs ×
    /// 2^t; IBA 12.7.34 "Primary Local ACK Timeout", the high 5 bits of REQ data byte 95).
    pub local_ack_timeout: Option<u8>,
}

fn be24(b: &[u8], at: usize) -> Option<u32> {
    let s = b.get(at..at + 3)?;
    Some(u32::from(s[0]) << 16 | u32::from(s[1]) << 8 | u32::from(s[2]))
}

/// Parse a UD payload as a CM REQ or REP; `None` for anything else or a short MAD.
pub fn parse(mad: &[u8]) -> Option<CmMessage> {
    let class = *mad.get(1)?;
    if class != MGMT_CLASS_CM {
        return None;
    }
    let tid = u64::from_be_bytes(mad.get(8..16)?.try_into().ok()?);
    let attribute = u16::from_be_bytes(mad.get(16..18)?.try_into().ok()?);
    let data = mad.get(24..)?;
    let (qpn_at, psn_at) = match attribute {
        ATTR_REQ => (32, 44),
        ATTR_REP => (12, 20),
        _ => return None,
    };
    Some(CmMessage {
        attribute,
        transaction_id: tid,
        local_qpn: be24(data, qpn_at)?,
        starting_psn: be24(data, psn_at)?,
        local_ack_timeout: if attribute == ATTR_REQ { data.get(95).map(|b| b >> 3) } else { None },
    })
}
