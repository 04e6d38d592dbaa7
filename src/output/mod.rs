//! Output formats for decoded frames. Everything printed comes from numeric fields or
//! fixed strings: bytes from the wire are never written raw to the terminal.

pub mod json;
pub mod report_text;
pub mod summary;
pub mod verbose;

use rocescope_capture::Record;
use rocescope_decoder::{DecodeOptions, Packet};

/// A decoded frame with its capture record and position, as the printers see it.
pub struct Frame<'a> {
    /// 1-based frame number.
    pub number: u64,
    /// The capture record.
    pub record: &'a Record<'a>,
    /// The decoded packet.
    pub packet: &'a Packet<'a>,
    /// Nanoseconds since the first frame.
    pub rel_ns: i64,
    /// The decoder settings (for opcode names).
    pub opts: &'a DecodeOptions,
}

/// `aa:bb:cc:dd:ee:ff`.
pub fn mac(m: &[u8; 6]) -> String {
    rocescope_decoder::link::mac_string(m)
}

/// An RNR timer in microseconds as milliseconds with two decimals, e.g. `1.28ms`.
pub fn rnr_ms(us: u32) -> String {
    format!("{}.{:02}ms", us / 1000, (us % 1000) / 10)
}

/// `seconds.nanoseconds` relative time.
pub fn rel_time(ns: i64) -> String {
    let sign = if ns < 0 { "-" } else { "" };
    let a = ns.unsigned_abs();
    format!("{sign}{}.{:09}", a / 1_000_000_000, a % 1_000_000_000)
}

/// UTC date and time with nanoseconds, e.g. `2025-06-25 03:40:07.234689000 UTC`.
pub fn utc(ns: i64) -> String {
    let secs = ns.div_euclid(1_000_000_000);
    let frac = ns.rem_euclid(1_000_000_000);
    let days = secs.div_euclid(86_400);
    let tod = secs.rem_euclid(86_400);
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}.{frac:09} UTC", tod / 3600, (tod / 60) % 60, tod % 60)
}

#[cfg(test)]
mod tests {
    #[test]
    fn utc_dates() {
        assert_eq!(super::utc(0), "1970-01-01 00:00:00.000000000 UTC");
        assert_eq!(super::utc(1_750_822_807_234_691_000), "2025-06-25 03:40:07.234691000 UTC");
        assert_eq!(super::rel_time(1_500_000_001), "1.500000001");
    }
}
