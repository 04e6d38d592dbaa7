//! A job's NCCL environment, read from a file: `env | grep NCCL` or `printenv` output
//! (`NCCL_IB_TC=106`), shell lines (`export NCCL_IB_TC="106"`, `NCCL_IB_TC=106 python
//! train.py`), bash's `export -p` (`declare -x NCCL_IB_TC="106"`), `/proc/PID/environ`
//! (NUL-separated) and NCCL's own config file (`/etc/nccl.conf`, `~/.nccl.conf`: `KEY=VALUE`
//! lines). Comments and blank lines are skipped, other variables ignored; every
//! `NCCL_IB_*` assignment is kept (the last one of a name wins, as in a shell; `unset NAME`
//! removes it), known or not. `declare -x NAME` with no value (`export -p`'s line for a
//! variable exported but never set) sets nothing. A line that names an `NCCL_IB_*` variable
//! but is no assignment, or a number that is no number, is an error naming the line: a typo
//! must not be checked as the default.
//!
//! NCCL reads its numbers with `strtoll(value, NULL, 0)` (NVIDIA/nccl `src/misc/param.cc`
//! `ncclLoadParam`), so `0x6a` is 106 and `010` is 8: [`parse_int`] reads them the same way,
//! but refuses what strtoll would silently read as 0 or cut short (`abc`, `106abc`), or
//! what is out of range (strtoll sets ERANGE and NCCL takes its default).
//!
//! NCCL's config file ([`FileKind::NcclConf`]) is read by NCCL without removing quotes
//! (NVIDIA/nccl `setEnvFile`): there `NCCL_IB_TC="106"` is the text `"106"`, in which
//! strtoll reads no digits, so NCCL uses 0. Such a value is kept as NCCL sees it, quotes and
//! all ([`EnvVar::conf_quoted`]), read as 0, and the check says so.
//!
//! The NCCL version, which sets some defaults (NCCL_IB_TIMEOUT 14/18/20, NCCL_IB_GID_INDEX 0
//! or auto), may be given in the file as a comment: `# nccl 2.23.4`, or the line NCCL prints
//! with `NCCL_DEBUG=INFO`, `NCCL version 2.23.4+cuda12.6` (also as a comment).

pub use rocescope_model::nccl::NcclVersion;
use rustc_hash::FxHashMap;
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
    /// Set in NCCL's config file with quotes (`NCCL_IB_TC="106"`), which NCCL keeps: `value`
    /// is then the quoted text, and a number in it reads as 0 (strtoll reads no digits in
    /// `"106"`, and sets no error, so NCCL takes the 0).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub conf_quoted: bool,
}

impl EnvVar {
    /// Its value as a number, as NCCL reads it ([`parse_int`]); `None` when empty (NCCL
    /// then uses its default) or not a number (refused by [`parse`] for the variables
    /// checked). A quoted value in NCCL's config file is 0 ([`EnvVar::conf_quoted`]).
    pub fn int(&self) -> Option<i64> {
        if self.conf_quoted && !self.value.is_empty() {
            return Some(0);
        }
        parse_int(&self.value)
    }

    /// For a value NCCL's config file keeps quoted: what NCCL makes of it, in words.
    pub fn conf_quote_note(&self) -> Option<String> {
        self.conf_quoted.then(|| {
            let bare = self.value.get(1..self.value.len().saturating_sub(1)).unwrap_or_default();
            format!(
                "line {}: NCCL's config file keeps quotes, so NCCL reads {} as the text {} (a number there is 0: strtoll reads no digits in it); write {}={bare} to set {bare}",
                self.line, self.name, self.value, self.name
            )
        })
    }
}

/// What kind of file the environment came from: how NCCL reads its values.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FileKind {
    /// An environment dump or shell lines: the shell removes quotes.
    #[default]
    Shell,
    /// NCCL's own config file (`/etc/nccl.conf`, `~/.nccl.conf`, `NCCL_CONF_FILE`): NCCL
    /// takes the text after `=` as it is, quotes included (NVIDIA/nccl `setEnvFile`).
    NcclConf,
}

impl FileKind {
    /// The kind a file's path names: `nccl.conf` or `.nccl.conf` (in any directory) is
    /// NCCL's config file, anything else an environment dump.
    pub fn of_path(path: &str) -> FileKind {
        let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
        if matches!(name, "nccl.conf" | ".nccl.conf") {
            FileKind::NcclConf
        } else {
            FileKind::Shell
        }
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
    /// Each variable's place in `vars`, for [`NcclEnv::get`] (one look-up, where a search of
    /// `vars` per variable made a file of N variables cost N²: 60,000 lines took 24-38 s).
    #[serde(skip)]
    index: FxHashMap<String, usize>,
}

impl NcclEnv {
    /// The assignment of `name`, if the file has one.
    pub fn get(&self, name: &str) -> Option<&EnvVar> {
        if self.index.len() == self.vars.len() {
            self.index.get(name).and_then(|&i| self.vars.get(i))
        } else {
            // `vars` changed since it was read: the index does not cover it.
            self.vars.iter().find(|v| v.name == name)
        }
    }
}

/// The assignments as a file is read: a variable unset leaves its place empty (an `unset`
/// costs one look-up, not a pass over every variable), and the places are closed up once
/// the file is read.
#[derive(Default)]
struct Assignments {
    vars: Vec<Option<EnvVar>>,
    index: FxHashMap<String, usize>,
}

impl Assignments {
    /// Set `name` to `value` as line `line` did (the last assignment wins).
    fn set(&mut self, name: &str, value: String, line: usize, conf_quoted: bool) {
        match self.index.get(name).and_then(|&i| self.vars.get_mut(i)).and_then(Option::as_mut) {
            Some(v) => {
                v.earlier_lines.push(v.line);
                v.value = value;
                v.line = line;
                v.conf_quoted = conf_quoted;
            }
            None => {
                self.index.insert(name.to_string(), self.vars.len());
                self.vars.push(Some(EnvVar {
                    name: name.to_string(),
                    value,
                    line,
                    earlier_lines: Vec::new(),
                    conf_quoted,
                }));
            }
        }
    }

    /// `unset name`: NCCL sees no such variable after it (set again, it comes last).
    fn unset(&mut self, name: &str) {
        if let Some(i) = self.index.remove(name) {
            if let Some(slot) = self.vars.get_mut(i) {
                *slot = None;
            }
        }
    }

    /// The variables left, in order, and where each is.
    fn into_env(self, version: Option<NcclVersion>, other_nccl: usize) -> NcclEnv {
        let vars: Vec<EnvVar> = self.vars.into_iter().flatten().collect();
        let index = vars.iter().enumerate().map(|(i, v)| (v.name.clone(), i)).collect();
        NcclEnv { vars, version, other_nccl, index }
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
/// gives 0 and NCCL takes it), with anything after the number but blanks, or out of range
/// (strtoll sets ERANGE and NCCL takes its default), and `None` says so (or that the value
/// is empty: NCCL's default). [`strtoll_reads`] says what strtoll makes of a refused one.
pub fn parse_int(s: &str) -> Option<i64> {
    let r = strtoll(s);
    (r.rest.trim().is_empty() && r.digits && !r.out_of_range).then_some(r.value)
}

/// What `strtoll(s, &end, 0)` does: the value, whether it read any digit, whether the
/// number was out of range (ERANGE, the value then `LLONG_MAX` or `LLONG_MIN`), and the
/// text after the number.
struct Strtoll<'a> {
    value: i64,
    digits: bool,
    out_of_range: bool,
    read: &'a str,
    rest: &'a str,
}

/// glibc's `strtoll(s, &end, 0)`: leading blanks skipped, optional sign, `0x` hex (when a
/// hex digit follows), a leading `0` octal, else decimal; it stops at the first character
/// that is no digit of the base.
fn strtoll(s: &str) -> Strtoll<'_> {
    let t = s.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    let start = s.len() - t.len();
    let (neg, after_sign) = match t.as_bytes().first() {
        Some(b'-') => (true, 1),
        Some(b'+') => (false, 1),
        _ => (false, 0),
    };
    let body = t.get(after_sign..).unwrap_or_default();
    let hex = (body.starts_with("0x") || body.starts_with("0X"))
        && body.as_bytes().get(2).is_some_and(u8::is_ascii_hexdigit);
    let (skip, radix) = if hex {
        (2, 16)
    } else if body.starts_with('0') {
        (0, 8)
    } else {
        (0, 10)
    };
    let digits = body.get(skip..).unwrap_or_default();
    let n = digits.find(|c: char| !c.is_digit(radix)).unwrap_or(digits.len());
    let mut mag: i128 = 0;
    let mut out_of_range = false;
    for c in digits.get(..n).unwrap_or_default().chars() {
        mag = mag * i128::from(radix) + i128::from(c.to_digit(radix).unwrap_or(0));
        if mag > i128::from(i64::MAX) + 1 {
            out_of_range = true;
            mag = i128::from(i64::MAX) + 1;
        }
    }
    let signed = if neg { -mag } else { mag };
    let bound = if neg { i64::MIN } else { i64::MAX };
    let value = match i64::try_from(signed) {
        Ok(v) if !out_of_range => v,
        _ => {
            out_of_range = true;
            bound
        }
    };
    let end = start + after_sign + skip + n;
    let (read, rest) = if n == 0 {
        ("", s.get(start..).unwrap_or_default())
    } else {
        (s.get(start..end).unwrap_or_default(), s.get(end..).unwrap_or_default())
    };
    Strtoll { value, digits: n > 0, out_of_range, read, rest }
}

/// What NCCL makes of a value [`parse_int`] refuses, in words: no digits (0), a number cut
/// short (the part strtoll reads), or out of range (the default).
pub fn strtoll_reads(s: &str) -> String {
    let r = strtoll(s);
    if r.out_of_range {
        return format!(
            "strtoll gives {} and sets ERANGE, so NCCL ignores the value and uses its default (it logs \"Invalid value … using default\")",
            if r.value < 0 { "LLONG_MIN" } else { "LLONG_MAX" }
        );
    }
    if !r.digits {
        return "strtoll reads no digits, so NCCL would take 0".to_string();
    }
    let octal = if r.read.trim_start_matches(['-', '+']).starts_with('0')
        && !r.read.contains(['x', 'X'])
        && r.rest.starts_with(|c: char| c.is_ascii_digit())
    {
        " (a leading 0 makes it octal, where 8 and 9 are no digits)"
    } else {
        ""
    };
    format!(
        "strtoll reads only {:?} of it{octal} and stops at {:?}, so NCCL would take {}",
        r.read, r.rest, r.value
    )
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

/// Read an environment dump or shell lines (see the module's documentation for the forms):
/// [`parse_as`] a [`FileKind::Shell`] file.
pub fn parse(text: &str) -> Result<NcclEnv, EnvError> {
    parse_as(text, FileKind::Shell)
}

/// Read an environment file of `kind` (see the module's documentation for the forms).
pub fn parse_as(text: &str, kind: FileKind) -> Result<NcclEnv, EnvError> {
    let mut env = Assignments::default();
    let (mut version, mut other_nccl) = (None, 0usize);
    // An NCCL_* variable named anywhere (assigned, declared with no value, unset).
    let mut seen = false;
    // /proc/PID/environ separates its entries with NUL.
    for (i, raw) in text.split(['\n', '\0']).enumerate() {
        let line_no = i + 1;
        let line = raw.trim_end_matches('\r').trim();
        if let Some(comment) = line.strip_prefix('#') {
            if let Some(v) = version_comment(comment) {
                version = Some(v);
            }
            continue;
        }
        if line.is_empty() {
            continue;
        }
        let err = |message: String| EnvError { line: line_no, message };
        let w = words(line).map_err(&err)?;
        let mut rest = w.as_slice();
        // `unset A B`: the variables are gone (the last line wins, as for assignments).
        if let Some(("unset", names)) = rest.split_first().map(|(f, t)| (f.as_str(), t)) {
            for n in names.iter().filter(|n| !n.starts_with('-')) {
                seen |= n.starts_with("NCCL_");
                env.unset(n);
            }
            continue;
        }
        // `export A=1`, `declare -x A="1"`, `env A=1 cmd`.
        let mut declared = false;
        while let Some((first, tail)) = rest.split_first() {
            match first.as_str() {
                "export" | "env" => {
                    declared |= first == "export";
                    rest = tail;
                }
                "declare" | "typeset" => {
                    declared = true;
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
                // `declare -x A` (`export -p`'s line for a variable exported but not set),
                // `export A`: no value, nothing set.
                if declared && is_name(word) && !rest.get(k + 1).is_some_and(|n| n.starts_with('=')) {
                    seen |= word.starts_with("NCCL_");
                    continue;
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
            seen |= name.starts_with("NCCL_");
            if name.starts_with("NCCL_IB_") {
                let raw = conf_quoted(line, name, kind);
                let value = raw.unwrap_or(value);
                if raw.is_none() {
                    check_value(name, value).map_err(err)?;
                }
                env.set(name, value.to_string(), line_no, raw.is_some());
            } else if name.starts_with("NCCL_") {
                other_nccl += 1;
            }
        }
    }
    if !seen {
        return Err(EnvError {
            line: 0,
            message: "no NCCL_* assignment (NAME=VALUE) in it: give `env | grep NCCL`, `export -p` or a shell script's lines".into(),
        });
    }
    Ok(env.into_env(version, other_nccl))
}

/// In NCCL's config file, a value of `name` written in quotes: the rest of the line after
/// `name=`, quotes and all, as NCCL's reader takes it (`None` for an unquoted value, or
/// another kind of file).
fn conf_quoted<'a>(line: &'a str, name: &str, kind: FileKind) -> Option<&'a str> {
    if kind != FileKind::NcclConf {
        return None;
    }
    let at = line.find(&format!("{name}="))? + name.len() + 1;
    let raw = line.get(at..)?.trim_end();
    raw.starts_with(['"', '\'']).then_some(raw)
}

/// A value NCCL could not read the way the file meant it.
fn check_value(name: &str, value: &str) -> Result<(), String> {
    if value.trim().is_empty() {
        return Ok(()); // NCCL uses its default
    }
    if NUMERIC.contains(&name) && parse_int(value).is_none() {
        let reads = strtoll_reads(value);
        if strtoll(value).out_of_range {
            return Err(format!("{name}={value:?} is out of range: {reads}"));
        }
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
    fn a_declared_variable_with_no_value_sets_nothing_and_unset_removes_one() {
        // `export -p` prints an exported but unset variable as `declare -x NAME`.
        let text = "declare -x HOME=\"/root\"\ndeclare -x NCCL_IB_HCA\ndeclare -x NCCL_IB_TC=\"106\"\nexport NCCL_IB_SL\n";
        let env = parse(text).unwrap_or_else(|e| panic!("{e}"));
        let names: Vec<&str> = env.vars.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(names, ["NCCL_IB_TC"]);
        // An NCCL variable declared with no value is still an NCCL environment.
        assert!(parse("declare -x NCCL_IB_HCA\n").is_ok_and(|e| e.vars.is_empty()));
        // `unset` after an assignment removes it; a later assignment sets it again.
        let env = parse("export NCCL_IB_TC=106\nexport NCCL_IB_SL=3\nunset NCCL_IB_TC\n").unwrap();
        assert_eq!(env.get("NCCL_IB_TC"), None);
        assert_eq!(env.get("NCCL_IB_SL").and_then(EnvVar::int), Some(3));
        let env = parse("NCCL_IB_TC=106\nunset -v NCCL_IB_TC NCCL_IB_SL\nNCCL_IB_TC=104\n").unwrap();
        let tc = env.get("NCCL_IB_TC").unwrap();
        assert_eq!((tc.int(), tc.line, tc.earlier_lines.as_slice()), (Some(104), 3, &[][..]));
        assert!(parse("NCCL_IB_TC=106\nunset NCCL_IB_TC\n").is_ok_and(|e| e.vars.is_empty()));
        // Still an error: a bare name with no declare/export before it.
        assert!(parse("NCCL_IB_HCA\n").is_err());
    }

    #[test]
    fn a_quoted_value_in_ncclconf_is_kept_as_nccl_reads_it() {
        assert_eq!(FileKind::of_path("/etc/nccl.conf"), FileKind::NcclConf);
        assert_eq!(FileKind::of_path("/home/u/.nccl.conf"), FileKind::NcclConf);
        assert_eq!(FileKind::of_path("job.env"), FileKind::Shell);
        let text = "NCCL_IB_TC=\"106\"\nNCCL_IB_TIMEOUT=22\nNCCL_IB_HCA='mlx5_0'\n";
        let env = parse_as(text, FileKind::NcclConf).unwrap();
        let tc = env.get("NCCL_IB_TC").unwrap();
        assert_eq!((tc.value.as_str(), tc.conf_quoted, tc.int()), ("\"106\"", true, Some(0)));
        assert!(tc.conf_quote_note().is_some_and(|n| n.contains("line 1") && n.contains("NCCL_IB_TC=106")));
        let to = env.get("NCCL_IB_TIMEOUT").unwrap();
        assert_eq!((to.conf_quoted, to.int(), to.conf_quote_note()), (false, Some(22), None));
        assert_eq!(env.get("NCCL_IB_HCA").map(|v| v.value.as_str()), Some("'mlx5_0'"));
        // The same line in a shell dump: the shell removes the quotes.
        let tc = parse(text).unwrap().get("NCCL_IB_TC").cloned().unwrap();
        assert_eq!((tc.value.as_str(), tc.conf_quoted, tc.int()), ("106", false, Some(106)));
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
            ("NCCL_IB_TIMEOUT=22ms\n", 1, "strtoll reads only \"22\" of it and stops at \"ms\", so NCCL would take 22"),
            (
                "NCCL_IB_TC=1\nNCCL_IB_TC=08\n",
                2,
                "strtoll reads only \"0\" of it (a leading 0 makes it octal, where 8 and 9 are no digits) and stops at \"8\", so NCCL would take 0",
            ),
            ("NCCL_IB_TC=0x6g\n", 1, "reads only \"0x6\" of it and stops at \"g\", so NCCL would take 6"),
            (
                "NCCL_DEBUG=INFO\nNCCL_IB_TC=99999999999999999999\n",
                2,
                "NCCL_IB_TC=\"99999999999999999999\" is out of range: strtoll gives LLONG_MAX and sets ERANGE, so NCCL ignores the value and uses its default",
            ),
            ("NCCL_IB_SL=-99999999999999999999\n", 1, "strtoll gives LLONG_MIN and sets ERANGE"),
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
        // No message claims NCCL reads the whole refused value.
        for (text, not) in
            [("NCCL_IB_TC=08\n", "\"08\" of it"), ("NCCL_IB_TC=99999999999999999999\n", "would take")]
        {
            let e = parse(text).expect_err(text).to_string();
            assert!(!e.contains(not), "{text:?}: {e}");
        }
        // Unknown NCCL_IB_* variables are kept whatever their value.
        let env = parse("NCCL_IB_SOMETHING_NEW=fast\n").unwrap();
        assert_eq!(env.get("NCCL_IB_SOMETHING_NEW").map(|v| v.value.as_str()), Some("fast"));
    }
}
