//! UTC formatting for timestamps in nanoseconds since the epoch, without a date library.

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
    #[test]
    fn dates() {
        assert_eq!(super::utc(0), "1970-01-01 00:00:00.000000000 UTC");
        assert_eq!(super::utc(1_750_822_807_234_691_000), "2025-06-25 03:40:07.234691000 UTC");
        assert_eq!(super::utc_compact(951_782_400_000_000_000), "20000229000000");
        assert_eq!(super::utc(-1), "1969-12-31 23:59:59.999999999 UTC");
    }
}
