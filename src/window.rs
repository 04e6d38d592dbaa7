//! Time windows: `--from T` and `--to T` (every command that reads packets) and `compare
//! --split-at T`. A time is absolute (RFC 3339 with its zone, `2026-12-06T10:00:00.5Z`, or
//! seconds since the epoch, `1733480000.25`) or relative to the first frame of all the inputs
//! (`+1.5s`, `+250ms`, `+90us`, `+2` for seconds). `--from` is inclusive, `--to` exclusive.
//! The pump ([`crate::driver::pump`]) skips the frames outside the window before a command
//! sees them and counts them, so nothing is lost silently; the report says the window it was
//! made over (`summary.window`).

use rocescope_analyzer::report::Window as WindowReport;
use rocescope_capture::time::utc;

/// Nanoseconds in a second.
const NS: i128 = 1_000_000_000;

/// What the user asked to be a usage error found only while running (a window that holds
/// no frame): `main` ends the run with status 2 and the message, as for a bad option.
#[derive(Debug)]
pub struct Usage(pub String);

impl std::fmt::Display for Usage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Usage {}

/// A time as given on the command line, and what it means.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimeArg {
    /// The text given (for messages and the report's `summary.window`).
    pub text: String,
    /// Its meaning.
    pub at: At,
}

/// An instant: absolute, or after the first frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum At {
    /// Nanoseconds since the epoch.
    Epoch(i64),
    /// Nanoseconds after the first frame of all the inputs.
    AfterFirst(i64),
}

impl TimeArg {
    /// The instant, `first_ns` being the first frame's time.
    pub fn resolve(&self, first_ns: i64) -> i64 {
        match self.at {
            At::Epoch(t) => t,
            At::AfterFirst(d) => first_ns.saturating_add(d),
        }
    }
}

/// The message of a time that does not parse.
fn bad_time(s: &str, why: &str) -> String {
    format!(
        "{s:?} is not a time{why}: give +1.5s, +250ms, +90us or +2 (after the first frame), \
         2026-12-06T10:00:00.5Z (RFC 3339, with its zone) or 1733480000.25 (seconds since the epoch)"
    )
}

/// Parse `--from`, `--to` or `--split-at`: `+TIME` after the first frame (units `ns`, `us`
/// or `µs`, `ms`, `s`; none is seconds), RFC 3339, or epoch seconds. Decimals are read
/// exactly (no float: an epoch time in ns is past what a double holds exactly), cut to the
/// nanosecond.
pub fn parse_time(s: &str) -> Result<TimeArg, String> {
    let t = s.trim();
    let at = if let Some(rel) = t.strip_prefix('+') {
        let (num, unit) = split_unit(rel);
        let unit = unit_ns(unit).ok_or_else(|| bad_time(s, &format!(" (unknown unit {unit:?})")))?;
        At::AfterFirst(decimal_ns(num, unit).ok_or_else(|| bad_time(s, ""))?)
    } else if t.bytes().all(|b| b.is_ascii_digit() || b == b'.') && !t.is_empty() {
        At::Epoch(decimal_ns(t, NS).ok_or_else(|| bad_time(s, ""))?)
    } else if t.len() >= 10 && t.as_bytes().get(4) == Some(&b'-') {
        At::Epoch(rfc3339(t).map_err(|why| bad_time(s, &format!(" ({why})")))?)
    } else {
        return Err(bad_time(s, ""));
    };
    Ok(TimeArg { text: t.to_string(), at })
}

/// `1.5ms` → (`1.5`, `ms`).
fn split_unit(s: &str) -> (&str, &str) {
    let at = s.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(s.len());
    (&s[..at], s[at..].trim())
}

/// Nanoseconds per unit.
fn unit_ns(unit: &str) -> Option<i128> {
    match unit {
        "" | "s" => Some(NS),
        "ms" => Some(1_000_000),
        "us" | "µs" => Some(1_000),
        "ns" => Some(1),
        _ => None,
    }
}

/// `DIGITS[.DIGITS]` times `unit` ns, exactly, cut to the nanosecond; `None` for anything
/// else or past the range of i64 nanoseconds (the year 2262).
fn decimal_ns(num: &str, unit: i128) -> Option<i64> {
    let (int, frac) = num.split_once('.').unwrap_or((num, ""));
    let digits = |d: &str| d.bytes().all(|b| b.is_ascii_digit());
    if int.is_empty() || !digits(int) || !digits(frac) || int.len() > 20 {
        return None;
    }
    let whole: i128 = int.parse().ok()?;
    let mut ns = whole.checked_mul(unit)?;
    // Digits past the nanosecond count for nothing (at most 9 + the unit's own 0-9).
    let mut scale = unit;
    for d in frac.bytes().take(18) {
        scale /= 10;
        ns += i128::from(d - b'0') * scale;
    }
    i64::try_from(ns).ok()
}

/// Days from 1970-01-01 to a civil date (Howard Hinnant's `days_from_civil`).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = i64::from((m + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// `YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)` (RFC 3339; `t` or a space for `T`, `z` for `Z`)
/// as ns since the epoch, or why not.
fn rfc3339(s: &str) -> Result<i64, String> {
    let b = s.as_bytes();
    let num = |from: usize, len: usize| -> Option<u32> {
        let part = s.get(from..from + len)?;
        part.bytes().all(|c| c.is_ascii_digit()).then(|| part.parse().ok()).flatten()
    };
    let at = |i: usize, c: &[u8]| b.get(i).is_some_and(|x| c.contains(x));
    let shape = "the form is 2026-12-06T10:00:00Z";
    let (Some(y), Some(mo), Some(d)) = (num(0, 4), num(5, 2), num(8, 2)) else { return Err(shape.into()) };
    if !(at(4, b"-") && at(7, b"-") && at(10, b"Tt ") && at(13, b":") && at(16, b":")) {
        return Err(shape.into());
    }
    let (Some(h), Some(mi), Some(sec)) = (num(11, 2), num(14, 2), num(17, 2)) else {
        return Err(shape.into());
    };
    let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    let month_days = [31, if leap { 29 } else { 28 }, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    let valid_day =
        mo.checked_sub(1).and_then(|i| month_days.get(i as usize)).is_some_and(|&n| (1..=n).contains(&d));
    if !valid_day || h > 23 || mi > 59 || sec > 59 {
        return Err("no such date or time".into());
    }
    let mut rest = &s[19..];
    let mut frac_ns: i128 = 0;
    if let Some(f) = rest.strip_prefix('.') {
        let len = f.bytes().take_while(u8::is_ascii_digit).count();
        if len == 0 {
            return Err(shape.into());
        }
        frac_ns = i128::from(decimal_ns(&format!("0.{}", &f[..len]), NS).unwrap_or(0));
        rest = &f[len..];
    }
    let offset_s: i64 = match rest.as_bytes() {
        [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), ..] if rest.len() == 6 && at(s.len() - 3, b":") => {
            let (Some(oh), Some(om)) = (num(s.len() - 5, 2), num(s.len() - 2, 2)) else {
                return Err(shape.into());
            };
            if oh > 23 || om > 59 {
                return Err("no such zone offset".into());
            }
            let o = i64::from(oh * 3600 + om * 60);
            if *sign == b'+' {
                o
            } else {
                -o
            }
        }
        [] => return Err("give its zone: Z for UTC, or an offset like +01:00".into()),
        _ => return Err(shape.into()),
    };
    let secs = days_from_civil(i64::from(y), mo, d) * 86_400 + i64::from(h * 3600 + mi * 60 + sec) - offset_s;
    i64::try_from(i128::from(secs) * NS + frac_ns).map_err(|_| "past the year 2262".to_string())
}

/// `--from` and `--to` together.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Window {
    /// First instant (inclusive).
    pub from: Option<TimeArg>,
    /// End (exclusive).
    pub to: Option<TimeArg>,
}

/// A window resolved against the first frame: ns since the epoch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Bounds {
    /// Inclusive; `None` unbounded.
    pub start: Option<i64>,
    /// Exclusive; `None` unbounded.
    pub end: Option<i64>,
}

impl Bounds {
    /// Whether a frame at `ts` is in the window.
    pub fn holds(&self, ts: i64) -> bool {
        self.start.is_none_or(|s| ts >= s) && self.end.is_none_or(|e| ts < e)
    }
}

impl Window {
    /// Whether either end is given.
    pub fn is_set(&self) -> bool {
        self.from.is_some() || self.to.is_some()
    }

    /// `--from` not before `--to` is a usage error, said before anything is read when both
    /// are of one kind (absolute, or relative); mixed, it shows once the first frame
    /// resolves them (an empty window: [`empty_window`]).
    pub fn check(&self) -> Result<(), String> {
        let (Some(f), Some(t)) = (&self.from, &self.to) else { return Ok(()) };
        let ordered = match (f.at, t.at) {
            (At::Epoch(a), At::Epoch(b)) | (At::AfterFirst(a), At::AfterFirst(b)) => a < b,
            _ => true,
        };
        if ordered {
            Ok(())
        } else {
            Err(format!(
                "--from {} is not before --to {}: the window would hold no frame (--from is inclusive, --to exclusive)",
                f.text, t.text
            ))
        }
    }

    /// The window, the first frame's time being `first_ns`.
    pub fn bounds(&self, first_ns: i64) -> Bounds {
        Bounds {
            start: self.from.as_ref().map(|t| t.resolve(first_ns)),
            end: self.to.as_ref().map(|t| t.resolve(first_ns)),
        }
    }

    /// What the report says of it (`summary.window`): resolved once a frame was read.
    pub fn report(&self, bounds: Option<Bounds>, frames_outside: u64) -> WindowReport {
        WindowReport {
            from: self.from.as_ref().map(|t| t.text.clone()),
            to: self.to.as_ref().map(|t| t.text.clone()),
            start_ns: bounds.and_then(|b| b.start),
            end_ns: bounds.and_then(|b| b.end),
            frames_outside,
        }
    }
}

/// `from +1s (2026-12-06 10:00:01.000000000 UTC) to ...`: a window in words.
pub fn describe(w: &WindowReport) -> String {
    // The instant in UTC beside a relative or epoch time; an RFC 3339 time is readable as it is.
    let end = |flag: &str, text: &Option<String>, ns: Option<i64>| -> Option<String> {
        let text = rocescope_capture::text::escape(text.as_deref()?).to_string();
        Some(match ns {
            Some(ns) if !text.contains('-') => format!("{flag} {text} ({})", utc(ns)),
            _ => format!("{flag} {text}"),
        })
    };
    let parts: Vec<String> =
        [end("from", &w.from, w.start_ns), end("to", &w.to, w.end_ns)].into_iter().flatten().collect();
    parts.join(" ")
}

/// The message for a window that holds none of the frames read (`frames` in it, `outside`
/// not, the frames read from `span.0` to `span.1`), or `None` when it holds some or nothing
/// was read at all (an empty capture says so itself).
pub fn empty_window(w: &WindowReport, frames: u64, span: Option<(i64, i64)>) -> Option<String> {
    if frames > 0 || w.frames_outside == 0 {
        return None;
    }
    let (first, last) = span?;
    Some(format!(
        "no frame in the window {}: the capture's {} frame(s) run from {} to {} (+0 s to +{:.6} s)",
        describe(w),
        w.frames_outside,
        utc(first),
        utc(last),
        (last - first) as f64 / 1e9
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> At {
        parse_time(s).unwrap_or_else(|e| panic!("{e}")).at
    }

    #[test]
    fn relative_times() {
        assert_eq!(at("+1.5s"), At::AfterFirst(1_500_000_000));
        assert_eq!(at("+250ms"), At::AfterFirst(250_000_000));
        assert_eq!(at("+90us"), At::AfterFirst(90_000));
        assert_eq!(at("+90µs"), At::AfterFirst(90_000));
        assert_eq!(at("+2"), At::AfterFirst(2_000_000_000));
        assert_eq!(at("+0.000000001"), At::AfterFirst(1));
        assert_eq!(at("+12ns"), At::AfterFirst(12));
        assert_eq!(at("+0"), At::AfterFirst(0));
        for bad in ["+", "+s", "+1.5h", "+-1s", "+1e3", "+.5s", "+1..2s", "+NaNs", "+99999999999s"] {
            assert!(parse_time(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn absolute_times_are_exact() {
        assert_eq!(at("1733480000.25"), At::Epoch(1_733_480_000_250_000_000));
        assert_eq!(at("1733480000.123456789"), At::Epoch(1_733_480_000_123_456_789));
        assert_eq!(at("1733480000"), At::Epoch(1_733_480_000_000_000_000));
        // 2024-12-06T10:13:20Z is 1733480000.
        assert_eq!(at("2024-12-06T10:13:20Z"), At::Epoch(1_733_480_000_000_000_000));
        assert_eq!(at("2024-12-06T10:13:20.25Z"), At::Epoch(1_733_480_000_250_000_000));
        assert_eq!(at("2024-12-06t11:13:20.25+01:00"), At::Epoch(1_733_480_000_250_000_000));
        assert_eq!(at("2024-12-06 05:13:20.25-05:00"), At::Epoch(1_733_480_000_250_000_000));
        assert_eq!(at("1970-01-01T00:00:00Z"), At::Epoch(0));
        assert_eq!(at("2000-02-29T00:00:00z"), At::Epoch(951_782_400_000_000_000));
        // The same instant as the capture crate prints it.
        if let At::Epoch(ns) = at("2026-12-06T10:00:00.5Z") {
            assert_eq!(utc(ns), "2026-12-06 10:00:00.500000000 UTC");
        }
        for bad in [
            "2026-12-06T10:00:00",
            "2026-12-06",
            "2026-02-30T10:00:00Z",
            "2026-13-01T10:00:00Z",
            "2026-12-06T24:00:00Z",
            "2026-12-06T10:00:00.Z",
            "2026-12-06T10:00:00+1:00",
            "2300-01-01T00:00:00Z",
            "yesterday",
            "-5s",
            "",
        ] {
            let e = parse_time(bad).unwrap_err();
            assert!(e.contains("is not a time"), "{bad}: {e}");
        }
        assert!(parse_time("2026-12-06T10:00:00").unwrap_err().contains("give its zone"));
    }

    #[test]
    fn windows_resolve_and_check() {
        let w = |f: &str, t: &str| Window { from: parse_time(f).ok(), to: parse_time(t).ok() };
        assert!(w("+2s", "+1s").check().is_err());
        assert!(w("+1s", "+1s").check().is_err());
        assert!(w("1733480001", "1733480000.5").check().is_err());
        assert!(w("+1s", "+2s").check().is_ok());
        // Mixed kinds are told apart only once the first frame is known.
        assert!(w("1733480001", "+1s").check().is_ok());
        let b = w("+1s", "+2s").bounds(10_000_000_000);
        assert_eq!(b, Bounds { start: Some(11_000_000_000), end: Some(12_000_000_000) });
        assert!(b.holds(11_000_000_000) && !b.holds(12_000_000_000) && !b.holds(10_999_999_999));
        let open = Window { from: None, to: parse_time("+1s").ok() }.bounds(0);
        assert!(open.holds(i64::MIN) && !open.holds(1_000_000_000));
    }
}
