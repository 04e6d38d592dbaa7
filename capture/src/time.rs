//! Timestamps: pcapng timestamp resolutions turned into nanoseconds exactly, and UTC
//! formatting of nanoseconds since the epoch, without a date library.

/// Timestamp units per second that a pcapng `if_tsresol` byte states, or `None` when the
/// resolution cannot be represented (finer than 10^-19 s or 2^-63 s: the units per second
/// would not fit 64 bits). The top bit chooses the base: clear, the unit is 10^-n s
/// (`6`, the default, is microseconds; `9` nanoseconds); set, the unit is 2^-n s (`0x94` is
/// 2^-20 s, about 0.95 µs).
///
/// ```
/// use rocescope_capture::time::units_per_second;
/// assert_eq!(units_per_second(6), Some(1_000_000));
/// assert_eq!(units_per_second(9), Some(1_000_000_000));
/// assert_eq!(units_per_second(0x94), Some(1 << 20));
/// assert_eq!(units_per_second(0x80), Some(1));
/// assert_eq!((units_per_second(19), units_per_second(20)), (Some(10_000_000_000_000_000_000), None));
/// assert_eq!((units_per_second(0x80 | 63), units_per_second(0x80 | 64)), (Some(1 << 63), None));
/// ```
pub fn units_per_second(if_tsresol: u8) -> Option<u64> {
    let exponent = u32::from(if_tsresol & 0x7f);
    if if_tsresol & 0x80 == 0 {
        10u64.checked_pow(exponent)
    } else {
        1u64.checked_shl(exponent).filter(|_| exponent < 64)
    }
}

/// `units` timestamp units (of `units_per_second` to the second) in nanoseconds, rounded
/// down as tshark's `frame.time_epoch` is: integer arithmetic throughout (no float, so no
/// drift however large the count), exact for every decimal and binary resolution.
/// `units_per_second` 0 is treated as 1.
///
/// ```
/// use rocescope_capture::time::units_to_ns;
/// assert_eq!(units_to_ns(1_750_000_000_123_456, 1_000_000), 1_750_000_000_123_456_000);
/// // 2^-20 s units: 3 units are 2.861 µs (2861.0228... ns, rounded down).
/// assert_eq!(units_to_ns((1_750_000_000 << 20) + 3, 1 << 20), 1_750_000_000_000_002_861);
/// // Picoseconds (10^-12 s) are cut to nanoseconds.
/// assert_eq!(units_to_ns(1_999, 1_000_000_000_000), 1);
/// ```
pub fn units_to_ns(units: u64, units_per_second: u64) -> i128 {
    match units_per_second {
        // The common resolutions without a 128-bit division per packet.
        1_000_000_000 => i128::from(units),
        1_000_000 => i128::from(units) * 1000,
        u => i128::from(units) * 1_000_000_000 / i128::from(u.max(1)),
    }
}

/// (year, month, day, hour, minute, second, nanosecond) in UTC.
pub fn civil(ns: i64) -> (i64, u32, u32, u32, u32, u32, u32) {
    let secs = ns.div_euclid(1_000_000_000);
    let frac = ns.rem_euclid(1_000_000_000) as u32;
    let days = secs.div_euclid(86_400);
    let tod = secs.rem_euclid(86_400) as u32;
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d, tod / 3600, (tod / 60) % 60, tod % 60, frac)
}

/// `2025-06-25 03:40:07.234691000 UTC`.
pub fn utc(ns: i64) -> String {
    let (y, m, d, hh, mm, ss, frac) = civil(ns);
    format!("{y:04}-{m:02}-{d:02} {hh:02}:{mm:02}:{ss:02}.{frac:09} UTC")
}

/// `20250625034007`, for file names.
pub fn utc_compact(ns: i64) -> String {
    let (y, m, d, hh, mm, ss, _) = civil(ns);
    format!("{y:04}{m:02}{d:02}{hh:02}{mm:02}{ss:02}")
}

/// Now, in nanoseconds since the epoch.
pub fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::{units_per_second, units_to_ns};

    #[test]
    fn every_resolution_converts_exactly() {
        // Decimal: 10^-n s for n in 0..=19; binary: 2^-n s for n in 0..=63. One second and
        // the last unit before the next second land exactly where integer arithmetic says.
        for code in (0u8..=19).chain((0u8..=63).map(|n| 0x80 | n)) {
            let per_s = units_per_second(code).expect("representable");
            let secs = 1_750_000_000u64;
            if let Some((units, last)) =
                secs.checked_mul(per_s).and_then(|u| Some((u, u.checked_add(per_s - 1)?)))
            {
                assert_eq!(units_to_ns(units, per_s), i128::from(secs) * 1_000_000_000, "{code:#x}");
                let want = i128::from(secs) * 1_000_000_000
                    + (i128::from(per_s - 1) * 1_000_000_000) / i128::from(per_s);
                assert_eq!(units_to_ns(last, per_s), want, "{code:#x}");
            }
            // The largest count any resolution can carry never overflows.
            assert!(units_to_ns(u64::MAX, per_s) >= 0);
        }
        // 0x94 (2^-20 s, as some NICs and capture cards write): units are 953.67431640625 ns.
        assert_eq!(units_to_ns(1, 1 << 20), 953);
        assert_eq!(units_to_ns(1 << 20, 1 << 20), 1_000_000_000);
        assert_eq!(units_to_ns((1 << 20) + 1_048_575, 1 << 20), 1_999_999_046);
        // A resolution that cannot be represented is refused, never wrapped.
        for code in [20u8, 0x7f, 0x80 | 64, 0xff] {
            assert_eq!(units_per_second(code), None, "{code:#x}");
        }
    }

    #[test]
    fn dates() {
        assert_eq!(super::utc(0), "1970-01-01 00:00:00.000000000 UTC");
        assert_eq!(super::utc(1_750_822_807_234_691_000), "2025-06-25 03:40:07.234691000 UTC");
        assert_eq!(super::utc_compact(951_782_400_000_000_000), "20000229000000");
        assert_eq!(super::utc(-1), "1969-12-31 23:59:59.999999999 UTC");
    }
}
