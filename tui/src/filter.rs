//! The display filter typed after `/`: terms joined by `and` / `or` (and binds tighter).
//!
//! Terms: `qp=0x12` (either QP of the connection), `ip=10.0.0.3` (either end), comparisons on
//! `pkts`, `gaps`, `retx`, `naks`, `rnr`, `ce` (percent), `cnps`, `dscp`, `pcp` with `=`, `!=`,
//! `>`, `>=`, `<`, `<=`; and words: `nak`, `rnr`, `ce`, `loss` (gaps or resends), `cnp`,
//! `critical`, `warning`.

/// What a filter is matched against: one connection's aggregated figures.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Row {
    /// Both QPs.
    pub qps: Vec<u32>,
    /// Both ends.
    pub ips: Vec<String>,
    /// Packets.
    pub pkts: f64,
    /// PSN gaps.
    pub gaps: f64,
    /// Retransmissions.
    pub retx: f64,
    /// NAKs (all codes).
    pub naks: f64,
    /// RNR NAKs.
    pub rnr: f64,
    /// CE percent.
    pub ce: f64,
    /// CNPs.
    pub cnps: f64,
    /// DSCP values.
    pub dscp: Vec<u8>,
    /// PCP values.
    pub pcp: Vec<u8>,
    /// Worst finding.
    pub health: &'static str,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Op {
    Eq,
    Ne,
    Gt,
    Ge,
    Lt,
    Le,
}

#[derive(Clone, Debug, PartialEq)]
enum Term {
    Qp(u32),
    Ip(String),
    Cmp(&'static str, Op, f64),
    Word(&'static str),
}

/// A parsed filter: an OR of ANDs.
#[derive(Clone, Debug, PartialEq)]
pub struct Filter(Vec<Vec<Term>>);

fn number(s: &str) -> Option<f64> {
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok().map(|v| v as f64),
        None => s.parse().ok(),
    }
}

const FIELDS: &[&str] = &["pkts", "gaps", "retx", "naks", "rnr", "ce", "cnps", "dscp", "pcp", "qp", "ip"];
const WORDS: &[&str] = &["nak", "rnr", "ce", "loss", "cnp", "critical", "warning"];

fn term(t: &str) -> Result<Term, String> {
    if let Some(w) = WORDS.iter().find(|w| **w == t) {
        return Ok(Term::Word(w));
    }
    for (sym, op) in
        [("!=", Op::Ne), (">=", Op::Ge), ("<=", Op::Le), ("=", Op::Eq), (">", Op::Gt), ("<", Op::Lt)]
    {
        if let Some((k, v)) = t.split_once(sym) {
            let (k, v) = (k.trim(), v.trim());
            let field = FIELDS
                .iter()
                .find(|f| **f == k)
                .ok_or_else(|| format!("unknown field {k:?} (try {})", FIELDS.join(", ")))?;
            return match *field {
                "qp" if op == Op::Eq => {
                    number(v).map(|n| Term::Qp(n as u32)).ok_or_else(|| format!("not a QP number: {v:?}"))
                }
                "ip" if op == Op::Eq => {
                    if v.parse::<std::net::IpAddr>().is_ok() {
                        Ok(Term::Ip(v.to_string()))
                    } else {
                        Err(format!("not an IP address: {v:?}"))
                    }
                }
                "qp" | "ip" => Err(format!("{k} takes = only")),
                f => number(v).map(|n| Term::Cmp(f, op, n)).ok_or_else(|| format!("not a number: {v:?}")),
            };
        }
    }
    Err(format!("not a term: {t:?} (try qp=0x12, ip=10.0.0.3, ce>0, nak)"))
}

impl Filter {
    /// Parse `text`; an empty text is no filter.
    pub fn parse(text: &str) -> Result<Option<Filter>, String> {
        let text = text.trim();
        if text.is_empty() {
            return Ok(None);
        }
        let mut ors = Vec::new();
        for alt in text.split(" or ") {
            let mut ands = Vec::new();
            for t in alt.split(" and ") {
                let t = t.trim();
                if t.is_empty() {
                    return Err("empty term around and/or".into());
                }
                ands.push(term(t)?);
            }
            ors.push(ands);
        }
        Ok(Some(Filter(ors)))
    }

    /// Whether `row` passes.
    pub fn matches(&self, row: &Row) -> bool {
        self.0.iter().any(|ands| ands.iter().all(|t| term_matches(t, row)))
    }
}

fn term_matches(t: &Term, r: &Row) -> bool {
    match t {
        Term::Qp(q) => r.qps.contains(q),
        Term::Ip(ip) => r.ips.iter().any(|i| i == ip),
        Term::Word(w) => match *w {
            "nak" => r.naks > 0.0,
            "rnr" => r.rnr > 0.0,
            "ce" => r.ce > 0.0,
            "loss" => r.gaps > 0.0 || r.retx > 0.0,
            "cnp" => r.cnps > 0.0,
            "critical" => r.health == "critical",
            _ => r.health == "warning",
        },
        Term::Cmp(f, op, n) => {
            let values: Vec<f64> = match *f {
                "dscp" => r.dscp.iter().map(|v| f64::from(*v)).collect(),
                "pcp" => r.pcp.iter().map(|v| f64::from(*v)).collect(),
                "pkts" => vec![r.pkts],
                "gaps" => vec![r.gaps],
                "retx" => vec![r.retx],
                "naks" => vec![r.naks],
                "rnr" => vec![r.rnr],
                "ce" => vec![r.ce],
                _ => vec![r.cnps],
            };
            values.iter().any(|v| match op {
                Op::Eq => v == n,
                Op::Ne => v != n,
                Op::Gt => v > n,
                Op::Ge => v >= n,
                Op::Lt => v < n,
                Op::Le => v <= n,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row() -> Row {
        Row {
            qps: vec![0x12, 0x11],
            ips: vec!["10.0.0.1".into(), "10.0.0.3".into()],
            pkts: 100.0,
            ce: 2.5,
            naks: 1.0,
            dscp: vec![26],
            health: "critical",
            ..Default::default()
        }
    }

    #[test]
    fn parses_and_matches() {
        let f = Filter::parse("qp=0x12 and ce>0").unwrap().unwrap();
        assert!(f.matches(&row()));
        assert!(!Filter::parse("qp=0x13").unwrap().unwrap().matches(&row()));
        assert!(Filter::parse("ip=10.0.0.3").unwrap().unwrap().matches(&row()));
        assert!(Filter::parse("nak").unwrap().unwrap().matches(&row()));
        assert!(!Filter::parse("rnr").unwrap().unwrap().matches(&row()));
        assert!(Filter::parse("rnr or dscp=26").unwrap().unwrap().matches(&row()));
        assert!(Filter::parse("pkts>=100 and critical").unwrap().unwrap().matches(&row()));
        assert!(Filter::parse("   ").unwrap().is_none());
    }

    #[test]
    fn errors_say_why() {
        assert!(Filter::parse("qpx=1").unwrap_err().contains("unknown field"));
        assert!(Filter::parse("ip=banana").unwrap_err().contains("not an IP"));
        assert!(Filter::parse("ce>lots").unwrap_err().contains("not a number"));
        assert!(Filter::parse("qp>1").unwrap_err().contains("= only"));
        assert!(
            Filter::parse("nak and").unwrap_err().contains("empty term") || Filter::parse("nak and").is_err()
        );
        assert!(Filter::parse("frobnicate").unwrap_err().contains("not a term"));
    }
}
