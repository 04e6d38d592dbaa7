//! Direction (docs/verdicts.md "Change verdicts"): with expectations (`--expect-*`,
//! `--lossless`, `--baseline`), a mark or class that moved toward the expected value is
//! a fix (INFO), one that moved away a fault (at least WARNING). A rollback of a bad
//! re-marking must pass the gate it would fail the other way round.

use crate::report::Severity;

/// Which way a change went with respect to what is expected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// The values that arrived are expected and the ones that left were not.
    Toward,
    /// A value that arrived is not expected.
    Away,
    /// Nothing is expected of this class (or the change is neither).
    Unknown,
}

impl Direction {
    /// The direction of a move from `gone` to `new` given the `expected` values.
    pub fn of(gone: &[u8], new: &[u8], expected: Option<&[u8]>) -> Direction {
        let Some(e) = expected.filter(|e| !e.is_empty()) else { return Direction::Unknown };
        if !new.is_empty() && new.iter().all(|v| e.contains(v)) && !gone.iter().any(|v| e.contains(v)) {
            Direction::Toward
        } else if new.iter().any(|v| !e.contains(v)) {
            Direction::Away
        } else {
            Direction::Unknown
        }
    }

    /// The direction a verdict resting on weak evidence (flows with several values, which
    /// cannot say which class carries which) may use: a fix stays a fix, a move away is not
    /// raised to a WARNING on it.
    pub fn weak(self) -> Direction {
        if self == Direction::Away {
            Direction::Unknown
        } else {
            self
        }
    }

    /// The severity of a verdict the rule alone would give `sev`: INFO toward the
    /// expectation, at least WARNING away from it.
    pub fn severity(self, sev: Severity) -> Severity {
        match self {
            Direction::Toward => Severity::Info,
            Direction::Away => sev.min(Severity::Warning),
            Direction::Unknown => sev,
        }
    }

    /// The words a verdict adds: `: fixed, DSCP 48 is the one expected`, or `, away from
    /// the expected DSCP 26`.
    pub fn words(self, what: &str, expected: &[u8]) -> String {
        let list = expected.iter().map(u8::to_string).collect::<Vec<_>>().join(",");
        match self {
            Direction::Toward => format!(": fixed, {what} {list} is what is expected"),
            Direction::Away => format!(", away from the expected {what} {list}"),
            Direction::Unknown => String::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toward_away_unknown() {
        assert_eq!(Direction::of(&[0], &[48], Some(&[48])), Direction::Toward);
        assert_eq!(Direction::of(&[48], &[0], Some(&[48])), Direction::Away);
        assert_eq!(Direction::of(&[0], &[48], None), Direction::Unknown);
        assert_eq!(Direction::Toward.severity(Severity::Critical), Severity::Info);
        assert_eq!(Direction::Away.severity(Severity::Info), Severity::Warning);
        assert_eq!(Direction::Away.severity(Severity::Critical), Severity::Critical);
        assert_eq!(Direction::Away.weak().severity(Severity::Info), Severity::Info);
        assert_eq!(Direction::Toward.weak(), Direction::Toward);
        assert_eq!(Direction::Toward.words("DSCP", &[48]), ": fixed, DSCP 48 is what is expected");
        assert_eq!(Direction::Away.words("DSCP", &[26]), ", away from the expected DSCP 26");
    }
}
