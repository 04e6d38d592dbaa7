//! A job's NCCL environment, read from a file: `env | grep NCCL` or `printenv` output
//! (`NCCL_IB_TC=106`), shell lines (`export NCCL_IB_TC="106"`, `NCCL_IB_TC=106 python
//! train.py`), bash's `export -p` (`declare -x NCCL_IB_TC="106"`), `/proc/PID/environ`
//! (NUL-separated) and NCCL's own config file (`/etc/nccl.conf`, `~/.nccl.conf`: `KEY=VALUE`
//! lines). Comments and blank lines are skipped, other variables ignored; every
//! `NCCL_IB_*` assignment is kept (the last one of a name wins, as in a shell), known or
//! not. A line that names an `NCCL_IB_*` variable but is no assignment, or a number that is
//! no number, is an error naming the line: a typo must not be checked as the default.
//!
//! NCCL reads its numbers with `strtoll(value, NULL, 0)` (NVIDIA/nccl `src/misc/param.cc`
//! `ncclLoadParam`), so `0x6a` is 106 and `010` is 8: [`parse_int`] reads them the same way,
//! but refuses what strtoll would silently read as 0 or cut short (`abc`, `106abc`).
//!
//! The NCCL version, which sets some defaults (NCCL_IB_TIMEOUT 14/18/20, NCCL_IB_GID_INDEX 0
//! or auto), may be given in the file as a comment: `# nccl 2.23.4`, or the line NCCL prints
//! with `NCCL_DEBUG=INFO`, `NCCL version 2.23.4+cuda12.6` (also as a comment).

use serde::Serialize;
use std::fmt;

/// One `NCCL_IB_*` assignment.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct EnvVar {
    /// The variable (`NCCL_IB_TC`).
    pub name: String,
    /// Its value as NCCL sees it: shell quotes removed.
    pub value: String,
    /// The line that set it (from 1): the last one, when it is set more than once.
    pub line: usize,
    /// Earlier lines that set it too (the last assignment wins). Absent when none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub earlier_lines: Vec<usize>,
}

impl EnvVar {
    /// Its value as a number, as NCCL reads it ([`parse_int`]); `None` when empty (NCCL
    /// then uses its default) or not a number (refused by [`parse`] for the variables
    /// checked).
    pub fn int(&self) -> Option<i64> {
        parse_int(&self.value)
    }
}

/// An NCCL version (`2.23.4`; the patch level may be unknown).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NcclVersion {
    /// Major (2).
    pub major: u32,
    /// Minor (23).
    pub minor: u32,
    /// Patch (4), when given.
    pub patch: Option<u32>,
}

impl NcclVersion {
    /// `2.23`, `2.23.4`, `v2.23.4-1`, `2.23.4+cuda12.6`: the numbers before any suffix.
    pub fn parse(s: &str) -> Option<NcclVersion> {
        let s = s.trim().trim_start_matches(['v', 'V']);
        let end = s.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(s.len());
        let mut parts = s.get(..end)?.split('.').filter(|p| !p.is_empty());
        let major = parts.next()?.parse().ok()?;
        let minor = parts.next()?.parse().ok()?;
        let patch = parts.next().and_then(|p| p.parse().ok());
        Some(NcclVersion { major, minor, patch })
    }

    /// At least `major.minor` (the patch level does not matter to any default used here).
    pub fn at_least(self, major: u32, minor: u32) -> bool {
        (self.major, self.minor) >= (major, minor)
    }
}

impl fmt::Display for NcclVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.patch {
            Some(p) => write!(f, "{}.{}.{p}", self.major, self.minor),
            None => write!(f, "{}.{}", self.major, self.minor),
        }
    }
}

impl Serialize for NcclVersion {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// The `NCCL_IB_*` settings of one job, as a file gave them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct NcclEnv {
    /// The `NCCL_IB_*` assignments, in the order of their first appearance.
    pub vars: Vec<EnvVar>,
    /// The NCCL version a comment in the file named, if any.
    pub version: Option<NcclVersion>,
    /// `NCCL_*` assignments other than `NCCL_IB_*` (not checked; counted to tell an
    /// environment that sets none of the IB variables from a file that is no environment).
    pub other_nccl: usize,
}

impl NcclEnv {
    /// The assignment of `name`, if the file has one.
    pub fn get(&self, name: &str) -> Option<&EnvVar> {
        self.vars.iter().find(|v| v.name == name)
    }

    /// Set `name` to `value` as line `line` did (the last assignment wins).
    fn set(&mut self, name: &str, value: String, line: usize) {
        match self.vars.iter_mut().find(|v| v.name == name) {
            Some(v) => {
                v.earlier_lines.push(v.line);
                v.value = value;
                v.line = line;
            }
            None => self.vars.push(EnvVar { name: name.to_string(), value, line, earlier_lines: Vec::new() }),
        }
    }
}

/// Why an environment file could not be read: the line (from 1; 0 for the whole file) and
/// what is wrong with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EnvError {
    /// The line.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for EnvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            f.write_str(&self.message)
        } else {
            write!(f, "line {}: {}", self.line, self.message)
        }
    }
}

impl std::error::Error for EnvError {}

/// The variables whose values must be numbers (NCCL reads them with strtoll).
const NUMERIC: &[&str] = &[
    "NCCL_IB_TC",
    "NCCL_IB_FIFO_TC",
    "NCCL_IB_SL",
    "NCCL_IB_TIMEOUT",
    "NCCL_IB_RETRY_CNT",
    "NCCL_IB_GID_INDEX",
    "NCCL_IB_ROCE_VERSION_NUM",
    "NCCL_IB_QPS_PER_CONNECTION",
    "NCCL_IB_SPLIT_DATA_ON_QPS",
    "NCCL_IB_ADAPTIVE_ROUTING",
    "NCCL_IB_AR_THRESHOLD",
    "NCCL_IB_PKEY",
    "NCCL_IB_DISABLE",
];

/// A number as NCCL's `strtoll(value, NULL, 0)` reads it: optional sign, then `0x` hex, a
/// leading `0` octal, or decimal. Unlike strtoll it refuses a value with no digits (strtoll
/// gives 0 and NCCL takes it) or with anything after the number but blanks, and `None`
/// says so (or that the value is empty: NCCL's default).
pub fn parse_int(s: &str) -> Option<i64> {
    let t = s.trim();
    let (neg, body) = match t.as_bytes().first() {
        Some(b'-') => (true, t.get(1..)?),
        Some(b'+') => (false, t.get(1..)?),
        _ => (false, t),
    };
    let (digits, radix) = if let Some(h) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        (h, 16)
    } else if body.len() > 1 && body.starts_with('0') {
        (body.get(1..)?, 8)
    } else {
        (body, 10)
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let v = i64::from_str_radix(digits, radix).ok()?;
    Some(if neg { -v } else { v })
}

/// One line split into shell words, quotes removed; an unquoted `#` at the start of a word
/// begins a comment. `Err` for an unterminated quote.
fn words(line: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => {
                if in_word {
                    out.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            '#' if !in_word => break,
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(ch) => cur.push(ch),
                        None => return Err("a quote (') is not closed".into()),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(ch @ ('"' | '\\' | '$' | '`')) => cur.push(ch),
                            Some(ch) => {
                                cur.push('\\');
                                cur.push(ch);
                            }
                            None => return Err("a quote (\") is not closed".into()),
                        },
                        Some(ch) => cur.push(ch),
                        None => return Err("a quote (\") is not closed".into()),
                    }
                }
            }
            '\\' => {
                in_word = true;
                if let Some(ch) = chars.next() {
                    cur.push(ch);
                }
            }
            _ => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        out.push(cur);
    }
    Ok(out)
}

/// A shell variable name.
fn is_name(s: &str) -> bool {
    let mut c = s.chars();
    c.next().is_some_and(|f| f.is_ascii_alphabetic() || f == '_')
        && c.all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
}

/// The version a comment names: `# nccl 2.23.4`, `# NCCL version 2.23.4+cuda12.6` (also
/// with a log prefix before `NCCL version`).
fn version_comment(comment: &str) -> Option<NcclVersion> {
    let lower = comment.to_ascii_lowercase();
    lower.match_indices("nccl").find_map(|(at, _)| {
        let rest = lower.get(at + 4..)?.trim_start();
        let rest = rest.strip_prefix("version").unwrap_or(rest).trim_start();
        let rest = rest.strip_prefix(':').unwrap_or(rest).trim_start();
        rest.starts_with(|c: char| c.is_ascii_digit() || c == 'v').then(|| NcclVersion::parse(rest)).flatten()
    })
}

/// Read an environment file (see the module's documentation for the forms).
pub fn parse(text: &str) -> Result<NcclEnv, EnvError> {
    let mut env = NcclEnv::default();
    // /proc/PID/environ separates its entries with NUL.
    for (i, raw) in text.split(['\n', '\0']).enumerate() {
        let line_no = i + 1;
        let line = raw.trim_end_matches('\r').trim();
        if let Some(comment) = line.strip_prefix('#') {
            if let Some(v) = version_comment(comment) {
                env.version = Some(v);
            }
            continue;
        }
        if line.is_empty() {
            continue;
        }
        let err = |message: String| EnvError { line: line_no, message };
        let w = words(line).map_err(&err)?;
        let mut rest = w.as_slice();
        // `export A=1`, `declare -x A="1"`, `env A=1 cmd`.
        while let Some((first, tail)) = rest.split_first() {
            match first.as_str() {
                "export" | "env" => rest = tail,
                "declare" | "typeset" => {
                    rest = tail;
                    while rest.first().is_some_and(|f| f.starts_with('-')) {
                        rest = rest.get(1..).unwrap_or_default();
                    }
                }
                _ => break,
            }
        }
        let mut assigned = false;
        for (k, word) in rest.iter().enumerate() {
            let Some((name, value)) = word.split_once('=').filter(|(n, _)| is_name(n)) else {
                if assigned {
                    break; // the command the assignments are for
                }
                if word.starts_with("NCCL_IB_") || (k == 0 && word.starts_with("NCCL_")) {
                    let spaced = rest.get(k + 1).is_some_and(|n| n.starts_with('='));
                    return Err(err(if spaced {
                        format!(
                            "`{line}`: no spaces around `=` (a shell runs this as a command, and NCCL's config file reads a variable named `{word} `); write {word}=VALUE"
                        )
                    } else {
                        format!("`{line}` is not an assignment NAME=VALUE")
                    }));
                }
                break;
            };
            assigned = true;
            if name.starts_with("NCCL_IB_") {
                check_value(name, value).map_err(err)?;
                env.set(name, value.to_string(), line_no);
            } else if name.starts_with("NCCL_") {
                env.other_nccl += 1;
            }
        }
    }
    if env.vars.is_empty() && env.other_nccl == 0 {
        return Err(EnvError {
            line: 0,
            message: "no NCCL_* assignment (NAME=VALUE) in it: give `env | grep NCCL`, `export -p` or a shell script's lines".into(),
        });
    }
    Ok(env)
}

/// A value NCCL could not read the way the file meant it.
fn check_value(name: &str, value: &str) -> Result<(), String> {
    if value.trim().is_empty() {
        return Ok(()); // NCCL uses its default
    }
    if NUMERIC.contains(&name) && parse_int(value).is_none() {
        let lead: String = value.trim().chars().take_while(|c| c.is_ascii_digit()).collect();
        let reads = if lead.is_empty() {
            "strtoll reads no digits, so NCCL would take 0".to_string()
        } else {
            format!("NCCL would read only {lead} of it")
        };
        return Err(format!(
            "{name}={value:?} is not a number ({reads}; NCCL reads values with strtoll: decimal, 0x hex or 0 octal)"
        ));
    }
    if name == "NCCL_IB_ADDR_FAMILY" && !matches!(value.trim(), "AF_INET" | "AF_INET6") {
        return Err(format!("{name}={value:?}: NCCL knows AF_INET and AF_INET6"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_as_strtoll_base_0_reads_them() {
        assert_eq!(parse_int("106"), Some(106));
        assert_eq!(parse_int(" 0x6a "), Some(106));
        assert_eq!(parse_int("0X6A"), Some(106));
        assert_eq!(parse_int("010"), Some(8));
        assert_eq!(parse_int("0"), Some(0));
        assert_eq!(parse_int("-1"), Some(-1));
        assert_eq!(parse_int("+7"), Some(7));
        for bad in ["", "abc", "106abc", "0x", "08", "1 2", "99999999999999999999"] {
            assert_eq!(parse_int(bad), None, "{bad}");
        }
    }

    #[test]
    fn every_dump_form_gives_the_same_assignment() {
        let forms = [
            "NCCL_IB_TC=106",
            "export NCCL_IB_TC=106",
            "export NCCL_IB_TC=\"106\"",
            "declare -x NCCL_IB_TC=\"106\"",
            "NCCL_IB_TC='106'",
            "  NCCL_IB_TC=106   # the RoCE class\r",
            "NCCL_IB_TC=106 NCCL_DEBUG=INFO python train.py --tc 3",
            "env NCCL_IB_TC=106 torchrun x.py",
            "NCCL_DEBUG=INFO\0NCCL_IB_TC=106\0",
        ];
        for f in forms {
            let env = parse(f).unwrap_or_else(|e| panic!("{f:?}: {e}"));
            let tc = env.get("NCCL_IB_TC").unwrap_or_else(|| panic!("{f:?}"));
            assert_eq!((tc.value.as_str(), tc.int()), ("106", Some(106)), "{f:?}");
        }
    }

    #[test]
    fn comments_other_variables_and_repeats() {
        let text = "# job 42\n\nPATH=/usr/bin\nNCCL_DEBUG=INFO\nNCCL_IB_TC=0x68\nNCCL_IB_HCA=mlx5_0:1,mlx5_1:1\nNCCL_IB_TIMEOUT=22\nexport NCCL_IB_TIMEOUT=020\nls -l\n";
        let env = parse(text).unwrap();
        let names: Vec<&str> = env.vars.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(names, ["NCCL_IB_TC", "NCCL_IB_HCA", "NCCL_IB_TIMEOUT"]);
        assert_eq!(env.get("NCCL_IB_TC").and_then(EnvVar::int), Some(104));
        let t = env.get("NCCL_IB_TIMEOUT").unwrap();
        assert_eq!(
            (t.int(), t.line, t.earlier_lines.as_slice()),
            (Some(16), 8, &[7][..]),
            "octal 020, last wins"
        );
        assert_eq!(env.other_nccl, 1);
        assert_eq!(env.version, None);
        // An empty value is NCCL's default.
        let env = parse("NCCL_IB_TC=\n").unwrap();
        assert_eq!(env.get("NCCL_IB_TC").map(EnvVar::int), Some(None));
    }

    #[test]
    fn a_version_comment_sets_the_version() {
        let env = parse("# nccl 2.23\nNCCL_IB_TC=106\n").unwrap();
        assert_eq!(env.version, NcclVersion::parse("2.23"));
        let env = parse("# host1:1234 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\nNCCL_IB_TC=1\n").unwrap();
        assert_eq!(env.version.map(|v| v.to_string()).as_deref(), Some("2.21.5"));
        assert!(env.version.is_some_and(|v| v.at_least(2, 21) && !v.at_least(2, 22)));
        assert_eq!(parse("# not a version: nccl rocks\nNCCL_IB_TC=1\n").unwrap().version, None);
        assert_eq!(NcclVersion::parse("v2.30.7-1").map(|v| v.to_string()).as_deref(), Some("2.30.7"));
        assert_eq!(NcclVersion::parse("two"), None);
    }

    #[test]
    fn bad_lines_are_errors_naming_the_line() {
        let cases = [
            (
                "NCCL_IB_TC=1\nNCCL_IB_TC=abc\n",
                2,
                "NCCL_IB_TC=\"abc\" is not a number (strtoll reads no digits",
            ),
            ("NCCL_IB_TIMEOUT=22ms\n", 1, "NCCL would read only 22 of it"),
            ("NCCL_IB_TC = 106\n", 1, "no spaces around `=`"),
            ("NCCL_IB_TC: 106\n", 1, "is not an assignment NAME=VALUE"),
            ("export NCCL_IB_TC=\"106\n", 1, "a quote (\") is not closed"),
            ("NCCL_IB_ADDR_FAMILY=inet6\n", 1, "NCCL knows AF_INET and AF_INET6"),
            ("- name: NCCL_IB_TC\n  value: \"106\"\n", 0, "no NCCL_* assignment"),
            ("", 0, "no NCCL_* assignment"),
        ];
        for (text, line, want) in cases {
            let e = parse(text).expect_err(text);
            assert_eq!(e.line, line, "{text:?}: {e}");
            assert!(e.to_string().contains(want), "{text:?}: {e}");
        }
        // Unknown NCCL_IB_* variables are kept whatever their value.
        let env = parse("NCCL_IB_SOMETHING_NEW=fast\n").unwrap();
        assert_eq!(env.get("NCCL_IB_SOMETHING_NEW").map(|v| v.value.as_str()), Some("fast"));
    }
}
