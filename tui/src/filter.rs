//! Display filters: one small language with two vocabularies. In the TUI (typed after `/`) a
//! filter picks **connections**, the rows of the QPs screen ([`Filter`] over a [`Row`]); given
//! to `rocescope decode -Y` it picks single decoded **packets** ([`PacketFilter`] over a
//! [`rocescope_decoder::Packet`]). The grammar, the parser and the evaluator are shared; each
//! context has its own fields and words, and a name that belongs to the other context is a
//! parse error that says so and lists what this one offers.
//!
//! # Grammar
//!
//! ```text
//! filter := alt (("or" | "||") alt)*
//! alt    := unary (("and" | "&&") unary)*
//! unary  := ("not" | "!") unary  |  "(" filter ")"  |  term
//! term   := WORD  |  FIELD OP VALUE
//! OP     := "=" | "==" | "!=" | ">" | ">=" | "<" | "<="
//! ```
//!
//! `not` binds tighter than `and`, and `and` tighter than `or`: `nak or ce and not cnp` reads
//! `nak or (ce and (not cnp))`. Keywords, fields and words are case-insensitive; spaces around
//! operators are optional (`qp = 0x12` is `qp=0x12`). Numbers are decimal or `0x` hex. An
//! empty filter is no filter (everything passes).
//!
//! A field with several values (a connection's two QPs or the DSCPs it carried, a packet's
//! VLAN IDs) compares true when any value does: `dscp!=26` picks connections with some packet
//! not marked 26, `not dscp=26` those with none marked 26. A field the item does not have (the
//! PSN of a PFC frame, the PCP of an untagged frame) compares false whatever the operator:
//! `psn!=5` does not pick PFC frames, `not psn=5` does.
//!
//! # Connections (the TUI's `/`)
//!
//! | term | picks connections |
//! |---|---|
//! | `qp=N` | either QP is N (`=` only; `not qp=N` for the opposite) |
//! | `ip=ADDR` | either end is ADDR (`=` only) |
//! | `pkts`, `gaps`, `retx`, `naks`, `rnr`, `cnps` `OP N` | packets, PSN gaps, retransmissions (any cause), NAKs (not RNR), RNR NAKs, CNPs |
//! | `ce OP N` | CE-marked share of the packets, in percent |
//! | `dscp`, `pcp` `OP N` | a DSCP / 802.1p PCP value seen |
//! | `nak`, `rnr`, `cnp`, `ce` | has NAKs, RNR NAKs, CNPs, CE marks |
//! | `loss` | lost packets, as the report counts them: PSN gaps (network or capture) or NAK / timeout resends; RNR retries (receiver not ready) are not loss |
//! | `critical`, `warning` | worst finding |
//!
//! # Packets (`rocescope decode -Y`)
//!
//! RoCE fields and words read whatever decoded, also from a malformed frame whose BTH did.
//!
//! | term | picks packets |
//! |---|---|
//! | `qp OP N` | BTH destination QP |
//! | `psn OP N` | BTH PSN |
//! | `opcode OP N` | BTH opcode as a number (`opcode=0x0a`, `opcode<0x20` for RC) |
//! | `opcode=NAME` | opcode by name: a case-insensitive part of its name, `_` for a space (`opcode=read_request`, `opcode=write`, `opcode=acknowledge`, `opcode=ud_send`); `=` and `!=` only; 0x40-0x5F are named as Mellanox DC unless [`PacketFilter::with_opcode_options`] says RD |
//! | `ip=ADDR` | source or destination IP, for RoCEv1 the GRH GIDs (`=` only) |
//! | `src=ADDR`, `dst=ADDR` | source / destination (`=` and `!=`) |
//! | `dscp OP N`, `ecn OP N` | IP (RoCEv1: GRH traffic class) DSCP / ECN; `ecn` also takes `not-ect`, `ect1`, `ect0`, `ce` |
//! | `pcp OP N` | 802.1p priority of the innermost VLAN tag |
//! | `vlan OP N` | VLAN ID of any tag |
//! | `len OP N` | frame length in bytes (on the wire when the caller gives it, else as captured) |
//! | `roce` | RoCE (v1 or v2) that decoded completely |
//! | `v1`, `v2` | RoCE version |
//! | `nak`, `rnr` | AETH NAK (any code but RNR), AETH RNR NAK |
//! | `ack` | Acknowledge with a positive ACK |
//! | `cnp` | congestion notification (opcode 0x81, or 0x80) |
//! | `ce` | ECN Congestion Experienced |
//! | `fecn`, `becn`, `ackreq` | BTH FECN, BECN, AckReq bit set |
//! | `icrc` | ICRC checked and bad |
//! | `malformed` | to the RoCE port (or EtherType 0x8915) but not decoded completely |
//! | `pfc`, `pause` | 802.1Qbb PFC, 802.3x PAUSE |
//!
//! Examples: `nak or rnr`, `qp=0x32 and psn>=100 and psn<110`, `ip=10.0.0.1 and not ack`,
//! `cnp or ce`, `pfc and pcp=3`, `roce and not (dscp=26)`, `opcode=read_request and len>1000`.

use rocescope_decoder::ext::AethKind;
use rocescope_decoder::{IcrcStatus, MacControl, Opcode, OpcodeOptions, Packet, RoceVersion};
use std::net::IpAddr;

/// What a connection filter is matched against: one connection's aggregated figures.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Row {
    /// Both QPs.
    pub qps: Vec<u32>,
    /// Both ends.
    pub ips: Vec<String>,
    /// Packets.
    pub pkts: f64,
    /// PSN gaps: packets seen after later ones, lost or merely late.
    pub gaps: f64,
    /// Of those gaps, the ones the report calls loss (network or probable capture loss; not
    /// those filled by a late packet).
    pub loss_gaps: f64,
    /// Retransmissions, every cause.
    pub retx: f64,
    /// Of the retransmissions, those that are not loss: retries after an RNR NAK (receiver
    /// not ready) and go-back-N that a NAK for a late packet provoked.
    pub retx_not_loss: f64,
    /// NAKs (all codes but RNR).
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

/// Fields of connection filters (they take an operator and a value).
pub const CONNECTION_FIELDS: &[&str] =
    &["qp", "ip", "pkts", "gaps", "retx", "naks", "rnr", "ce", "cnps", "dscp", "pcp"];
/// Words of connection filters (they stand alone).
pub const CONNECTION_WORDS: &[&str] = &["nak", "rnr", "ce", "loss", "cnp", "critical", "warning"];
/// Fields of packet filters.
pub const PACKET_FIELDS: &[&str] = &[
    "qp", "psn", "opcode", "ip", "src", "dst", "dscp", "ecn", "pcp", "vlan", "len", "sport", "dport",
    "syndrome", "frame", "time", "dscp4", "ecn4", "dscp6", "ecn6",
];

/// One field under its names: Wireshark's, the JSON output's (`decode -e`, docs/decode-json.md)
/// and the display filter's short one. `-Y` and `-e` take any of them (docs/decode.md has the
/// table); an empty name is one the field does not have there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FieldName {
    /// Wireshark's display filter name.
    pub wireshark: &'static str,
    /// The dotted JSON path (`-e`); empty for a filter-only field.
    pub json: &'static str,
    /// The display filter's name (a field, or a word for a flag); empty for `-e` only.
    pub short: &'static str,
}

/// Every field known under more than one name.
pub const FIELD_NAMES: &[FieldName] = &[
    FieldName { wireshark: "frame.number", json: "frame", short: "frame" },
    FieldName { wireshark: "frame.time_relative", json: "time_relative", short: "time" },
    FieldName { wireshark: "frame.len", json: "len", short: "len" },
    FieldName { wireshark: "frame.cap_len", json: "caplen", short: "" },
    FieldName { wireshark: "eth.src", json: "eth.src", short: "" },
    FieldName { wireshark: "eth.dst", json: "eth.dst", short: "" },
    FieldName { wireshark: "vlan.id", json: "vlan.id", short: "vlan" },
    FieldName { wireshark: "vlan.priority", json: "vlan.pcp", short: "pcp" },
    FieldName { wireshark: "ip.src", json: "ip.src", short: "src" },
    FieldName { wireshark: "ip.dst", json: "ip.dst", short: "dst" },
    FieldName { wireshark: "ip.addr", json: "", short: "ip" },
    FieldName { wireshark: "ipv6.src", json: "ip.src", short: "src" },
    FieldName { wireshark: "ipv6.dst", json: "ip.dst", short: "dst" },
    FieldName { wireshark: "ipv6.addr", json: "", short: "ip" },
    FieldName { wireshark: "", json: "ip.dscp", short: "dscp" },
    FieldName { wireshark: "", json: "ip.ecn", short: "ecn" },
    FieldName { wireshark: "ip.dsfield.dscp", json: "ip.dscp", short: "dscp4" },
    FieldName { wireshark: "ip.dsfield.ecn", json: "ip.ecn", short: "ecn4" },
    FieldName { wireshark: "ipv6.tclass.dscp", json: "ip.dscp", short: "dscp6" },
    FieldName { wireshark: "ipv6.tclass.ecn", json: "ip.ecn", short: "ecn6" },
    FieldName { wireshark: "ip.ttl", json: "ip.ttl", short: "" },
    FieldName { wireshark: "udp.srcport", json: "udp.sport", short: "sport" },
    FieldName { wireshark: "udp.dstport", json: "udp.dport", short: "dport" },
    FieldName { wireshark: "infiniband.bth.opcode", json: "bth.opcode", short: "opcode" },
    FieldName { wireshark: "infiniband.bth.destqp", json: "bth.dqpn", short: "qp" },
    FieldName { wireshark: "infiniband.bth.psn", json: "bth.psn", short: "psn" },
    FieldName { wireshark: "infiniband.bth.pkey", json: "bth.pkey", short: "" },
    FieldName { wireshark: "infiniband.bth.fecn", json: "bth.fecn", short: "fecn" },
    FieldName { wireshark: "infiniband.bth.becn", json: "bth.becn", short: "becn" },
    FieldName { wireshark: "infiniband.bth.ackreq", json: "bth.ackreq", short: "ackreq" },
    FieldName { wireshark: "infiniband.aeth.syndrome", json: "aeth.syndrome", short: "syndrome" },
    FieldName { wireshark: "infiniband.aeth.msn", json: "aeth.msn", short: "" },
    FieldName { wireshark: "infiniband.reth.va", json: "reth.va", short: "" },
    FieldName { wireshark: "infiniband.reth.r_key", json: "reth.rkey", short: "" },
    FieldName { wireshark: "infiniband.reth.dma_length", json: "reth.dmalen", short: "" },
    FieldName { wireshark: "infiniband.invariant.crc", json: "icrc.value", short: "" },
];

/// The display filter's name for `name` given under another (Wireshark's or the JSON's), if
/// it has one.
pub fn short_name(name: &str) -> Option<&'static str> {
    FIELD_NAMES
        .iter()
        .find(|f| !f.short.is_empty() && ((!f.wireshark.is_empty() && f.wireshark == name) || f.json == name))
        .map(|f| f.short)
}

/// The JSON path (`-e`) for `name` given under another (Wireshark's or the filter's), if it
/// has one.
pub fn json_name(name: &str) -> Option<&'static str> {
    FIELD_NAMES
        .iter()
        .find(|f| !f.json.is_empty() && ((!f.wireshark.is_empty() && f.wireshark == name) || f.short == name))
        .map(|f| f.json)
}
/// Words of packet filters.
pub const PACKET_WORDS: &[&str] = &[
    "roce",
    "v1",
    "v2",
    "nak",
    "rnr",
    "ack",
    "cnp",
    "ce",
    "fecn",
    "becn",
    "ackreq",
    "icrc",
    "malformed",
    "pfc",
    "pause",
    "infiniband",
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Eq,
    Ne,
    Gt,
    Ge,
    Lt,
    Le,
}

impl Op {
    fn holds(self, a: f64, b: f64) -> bool {
        match self {
            Op::Eq => a == b,
            Op::Ne => a != b,
            Op::Gt => a > b,
            Op::Ge => a >= b,
            Op::Lt => a < b,
            Op::Le => a <= b,
        }
    }

    fn text(self) -> &'static str {
        match self {
            Op::Eq => "=",
            Op::Ne => "!=",
            Op::Gt => ">",
            Op::Ge => ">=",
            Op::Lt => "<",
            Op::Le => "<=",
        }
    }
}

/// A value that may be absent compares false whatever the operator.
fn holds_opt(v: Option<f64>, op: Op, n: f64) -> bool {
    v.is_some_and(|v| op.holds(v, n))
}

/// The boolean structure both contexts share.
#[derive(Clone, Debug, PartialEq)]
enum Expr<T> {
    Term(T),
    Not(Box<Expr<T>>),
    All(Vec<Expr<T>>),
    Any(Vec<Expr<T>>),
}

impl<T> Expr<T> {
    fn eval(&self, term: &impl Fn(&T) -> bool) -> bool {
        match self {
            Expr::Term(t) => term(t),
            Expr::Not(e) => !e.eval(term),
            Expr::All(v) => v.iter().all(|e| e.eval(term)),
            Expr::Any(v) => v.iter().any(|e| e.eval(term)),
        }
    }

    fn for_each_term_mut(&mut self, f: &mut impl FnMut(&mut T)) {
        match self {
            Expr::Term(t) => f(t),
            Expr::Not(e) => e.for_each_term_mut(f),
            Expr::All(v) | Expr::Any(v) => v.iter_mut().for_each(|e| e.for_each_term_mut(f)),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Tok<'a> {
    Open,
    Close,
    Not,
    And,
    Or,
    Op(Op),
    Atom(&'a str),
}

fn show(t: Tok<'_>) -> String {
    match t {
        Tok::Open => "(".into(),
        Tok::Close => ")".into(),
        Tok::Not => "not".into(),
        Tok::And => "and".into(),
        Tok::Or => "or".into(),
        Tok::Op(op) => op.text().into(),
        Tok::Atom(a) => format!("{a:?}"),
    }
}

/// Characters that end an atom (a name or a value).
const PUNCT: &str = "()!=<>&|";

fn lex(text: &str) -> Result<Vec<Tok<'_>>, String> {
    let mut toks = Vec::new();
    let mut rest = text.trim_start();
    while let Some(c) = rest.chars().next() {
        let two = rest.get(..2).unwrap_or("");
        let (tok, len) = match (c, two) {
            (_, "!=") => (Tok::Op(Op::Ne), 2),
            (_, ">=") => (Tok::Op(Op::Ge), 2),
            (_, "<=") => (Tok::Op(Op::Le), 2),
            (_, "==") => (Tok::Op(Op::Eq), 2),
            (_, "&&") => (Tok::And, 2),
            (_, "||") => (Tok::Or, 2),
            ('=', _) => (Tok::Op(Op::Eq), 1),
            ('>', _) => (Tok::Op(Op::Gt), 1),
            ('<', _) => (Tok::Op(Op::Lt), 1),
            ('!', _) => (Tok::Not, 1),
            ('(', _) => (Tok::Open, 1),
            (')', _) => (Tok::Close, 1),
            ('&' | '|', _) => return Err(format!("a lone {c:?}: write and (&&) or or (||)")),
            _ => {
                let len = rest.find(|c: char| c.is_whitespace() || PUNCT.contains(c)).unwrap_or(rest.len());
                let atom = rest.get(..len).unwrap_or(rest);
                let tok = match atom.to_ascii_lowercase().as_str() {
                    "and" => Tok::And,
                    "or" => Tok::Or,
                    "not" => Tok::Not,
                    _ => Tok::Atom(atom),
                };
                (tok, len)
            }
        };
        toks.push(tok);
        rest = rest.get(len..).unwrap_or("").trim_start();
    }
    Ok(toks)
}

/// One context's terms: how names become terms.
trait Vocab: Sized {
    /// What the filter picks, for messages ("connection", "packet").
    const WHAT: &'static str;
    /// Names that take an operator and a value.
    const FIELDS: &'static [&'static str];
    /// Names that stand alone.
    const WORDS: &'static [&'static str];
    /// A few terms that parse, for the "not a term" hint.
    const EXAMPLE: &'static str;
    /// The term for a word (`w` lower-case, one of `WORDS`).
    fn word(w: &str) -> Option<Self>;
    /// The term for a comparison (`f` lower-case, one of `FIELDS`).
    fn field(f: &str, op: Op, v: &str) -> Result<Self, String>;
    /// This vocabulary's name for `name` given under another ([`FIELD_NAMES`]).
    fn canonical(_name: &str) -> Option<&'static str> {
        None
    }
}

/// The contexts, for saying where a name from the other one belongs.
const CONTEXTS: [(&str, &[&str], &[&str]); 2] =
    [("connection", CONNECTION_FIELDS, CONNECTION_WORDS), ("packet", PACKET_FIELDS, PACKET_WORDS)];

fn vocabulary<V: Vocab>() -> String {
    format!("{} fields: {}; words: {}", V::WHAT, V::FIELDS.join(", "), V::WORDS.join(", "))
}

/// A name that is not in `V`: where it belongs instead, if anywhere.
fn elsewhere<V: Vocab>(name: &str, as_field: bool) -> Option<String> {
    let (ctx, fields, words) = CONTEXTS.iter().find(|(ctx, ..)| *ctx != V::WHAT)?;
    let kind = if fields.contains(&name) && (as_field || !words.contains(&name)) {
        "field"
    } else if words.contains(&name) {
        "word"
    } else {
        return None;
    };
    Some(format!("{name:?} is a {ctx} {kind}, not valid for {}s ({})", V::WHAT, vocabulary::<V>()))
}

/// How deep parentheses and `not`s may nest: far beyond any filter a person writes, and far
/// below what would exhaust the stack (a paste of thousands of `(` or `!` aborted the
/// process: docs/reliability.md).
pub const MAX_DEPTH: usize = 64;

struct Parser<'a> {
    toks: Vec<Tok<'a>>,
    pos: usize,
    /// Parentheses and `not`s open around the term being read.
    depth: usize,
}

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<Tok<'a>> {
        self.toks.get(self.pos).copied()
    }

    fn next(&mut self) -> Option<Tok<'a>> {
        let t = self.peek();
        self.pos += 1;
        t
    }

    fn eat(&mut self, t: Tok<'_>) -> bool {
        let yes = self.peek() == Some(t);
        if yes {
            self.pos += 1;
        }
        yes
    }

    fn or<V: Vocab>(&mut self, after: &str) -> Result<Expr<V>, String> {
        let mut alts = vec![self.and::<V>(after)?];
        while self.eat(Tok::Or) {
            alts.push(self.and::<V>("or")?);
        }
        Ok(if alts.len() == 1 { alts.remove(0) } else { Expr::Any(alts) })
    }

    fn and<V: Vocab>(&mut self, after: &str) -> Result<Expr<V>, String> {
        let mut all = vec![self.unary::<V>(after)?];
        while self.eat(Tok::And) {
            all.push(self.unary::<V>("and")?);
        }
        Ok(if all.len() == 1 { all.remove(0) } else { Expr::All(all) })
    }

    fn unary<V: Vocab>(&mut self, after: &str) -> Result<Expr<V>, String> {
        let t = self.next();
        if matches!(t, Some(Tok::Not | Tok::Open)) {
            self.depth += 1;
            if self.depth > MAX_DEPTH {
                return Err(format!("the filter nests deeper than {MAX_DEPTH} (parentheses and not)"));
            }
        }
        let e = self.unary_of::<V>(t, after);
        if matches!(t, Some(Tok::Not | Tok::Open)) {
            self.depth -= 1;
        }
        e
    }

    fn unary_of<V: Vocab>(&mut self, t: Option<Tok<'a>>, after: &str) -> Result<Expr<V>, String> {
        match t {
            None => Err(format!("empty term after {after}")),
            Some(Tok::Not) => Ok(Expr::Not(Box::new(self.unary::<V>("not")?))),
            Some(Tok::Open) => {
                let e = self.or::<V>("(")?;
                if self.eat(Tok::Close) {
                    Ok(e)
                } else {
                    Err(match self.peek() {
                        None => "missing )".into(),
                        Some(t) => format!("expected and, or or ) before {}", show(t)),
                    })
                }
            }
            Some(Tok::Atom(a)) => self.term::<V>(a).map(Expr::Term),
            Some(t) => Err(format!("expected a term after {after}, found {}", show(t))),
        }
    }

    fn term<V: Vocab>(&mut self, a: &str) -> Result<V, String> {
        let lower = a.to_ascii_lowercase();
        // Wireshark's names and the JSON output's (`ip.dsfield.dscp`, `bth.psn`) are the
        // short ones.
        let name = V::canonical(&lower).unwrap_or(lower.as_str());
        if let Some(Tok::Op(op)) = self.peek() {
            self.pos += 1;
            let Some(Tok::Atom(v)) = self.next() else {
                return Err(format!("{a}{} needs a value", op.text()));
            };
            if V::FIELDS.contains(&name) {
                return V::field(name, op, v);
            }
            // A flag under a field's name (`infiniband.bth.fecn == 1`): the word.
            if V::WORDS.contains(&name) && name != lower && op == Op::Eq && matches!(v, "1" | "true" | "True")
            {
                return V::word(name).ok_or_else(|| format!("unknown word {a:?}"));
            }
            if V::WORDS.contains(&name) {
                return Err(format!(
                    "{name:?} is a word in {} filters: use it alone ({})",
                    V::WHAT,
                    vocabulary::<V>()
                ));
            }
            return Err(elsewhere::<V>(name, true)
                .unwrap_or_else(|| format!("unknown field {a:?} (try {})", V::FIELDS.join(", "))));
        }
        if V::WORDS.contains(&name) {
            return V::word(name).ok_or_else(|| format!("unknown word {a:?}"));
        }
        if V::FIELDS.contains(&name) {
            return Err(format!("{name} needs a comparison, like {name}=1 or {name}>0"));
        }
        Err(elsewhere::<V>(name, false).unwrap_or_else(|| format!("not a term: {a:?} (try {})", V::EXAMPLE)))
    }
}

fn parse<V: Vocab>(text: &str) -> Result<Option<Expr<V>>, String> {
    let toks = lex(text)?;
    if toks.is_empty() {
        return Ok(None);
    }
    let mut p = Parser { toks, pos: 0, depth: 0 };
    let e = p.or::<V>("the start")?;
    match p.peek() {
        None => Ok(Some(e)),
        Some(Tok::Close) => Err("a ) without its (".into()),
        Some(t) => Err(format!("expected and or or before {}", show(t))),
    }
}

fn number(s: &str) -> Option<f64> {
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok().map(|v| v as f64),
        None => s.parse::<f64>().ok().filter(|v| v.is_finite()),
    }
}

fn need_number(v: &str) -> Result<f64, String> {
    number(v).ok_or_else(|| format!("not a number: {v:?}"))
}

fn address(v: &str) -> Result<IpAddr, String> {
    v.parse().map_err(|_| format!("not an IP address: {v:?}"))
}

fn eq_only(f: &str, op: Op, v: &str) -> Result<(), String> {
    if op == Op::Eq {
        Ok(())
    } else {
        Err(format!("{f} takes = only (for the opposite: not {f}={v})"))
    }
}

// ---------------------------------------------------------------------------------------
// Connections.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RowNum {
    Pkts,
    Gaps,
    Retx,
    Naks,
    Rnr,
    Ce,
    Cnps,
    Dscp,
    Pcp,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RowWord {
    Nak,
    Rnr,
    Ce,
    Loss,
    Cnp,
    Critical,
    Warning,
}

#[derive(Clone, Debug, PartialEq)]
enum RowTerm {
    Qp(u32),
    Ip(IpAddr),
    Num(RowNum, Op, f64),
    Word(RowWord),
}

impl Vocab for RowTerm {
    const WHAT: &'static str = "connection";
    const FIELDS: &'static [&'static str] = CONNECTION_FIELDS;
    const WORDS: &'static [&'static str] = CONNECTION_WORDS;
    const EXAMPLE: &'static str = "qp=0x12, ip=10.0.0.3, ce>0, nak";

    fn word(w: &str) -> Option<Self> {
        Some(RowTerm::Word(match w {
            "nak" => RowWord::Nak,
            "rnr" => RowWord::Rnr,
            "ce" => RowWord::Ce,
            "loss" => RowWord::Loss,
            "cnp" => RowWord::Cnp,
            "critical" => RowWord::Critical,
            "warning" => RowWord::Warning,
            _ => return None,
        }))
    }

    fn field(f: &str, op: Op, v: &str) -> Result<Self, String> {
        let num = match f {
            "qp" => {
                eq_only(f, op, v)?;
                return number(v)
                    .filter(|n| n.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(n))
                    .map(|n| RowTerm::Qp(n as u32))
                    .ok_or_else(|| format!("not a QP number: {v:?}"));
            }
            "ip" => {
                eq_only(f, op, v)?;
                return address(v).map(RowTerm::Ip);
            }
            "pkts" => RowNum::Pkts,
            "gaps" => RowNum::Gaps,
            "retx" => RowNum::Retx,
            "naks" => RowNum::Naks,
            "rnr" => RowNum::Rnr,
            "ce" => RowNum::Ce,
            "cnps" => RowNum::Cnps,
            "dscp" => RowNum::Dscp,
            "pcp" => RowNum::Pcp,
            _ => return Err(format!("unknown field {f:?}")),
        };
        Ok(RowTerm::Num(num, op, need_number(v)?))
    }
}

fn row_matches(t: &RowTerm, r: &Row) -> bool {
    match t {
        RowTerm::Qp(q) => r.qps.contains(q),
        // Compared as addresses, so `fe80::0:1` finds `fe80::1`; RoCEv1 ends are GIDs.
        RowTerm::Ip(a) => r.ips.iter().any(|i| i.parse::<IpAddr>().is_ok_and(|i| i == *a)),
        RowTerm::Word(w) => match w {
            RowWord::Nak => r.naks > 0.0,
            RowWord::Rnr => r.rnr > 0.0,
            RowWord::Ce => r.ce > 0.0,
            // As the report means it: gaps (network or capture) and NAK / timeout resends.
            // RNR retries resend what the receiver was not ready for: nothing was lost.
            RowWord::Loss => r.loss_gaps > 0.0 || r.retx - r.retx_not_loss > 0.0,
            RowWord::Cnp => r.cnps > 0.0,
            RowWord::Critical => r.health == "critical",
            RowWord::Warning => r.health == "warning",
        },
        RowTerm::Num(f, op, n) => {
            let one = |v: f64| op.holds(v, *n);
            match f {
                RowNum::Dscp => r.dscp.iter().any(|v| one(f64::from(*v))),
                RowNum::Pcp => r.pcp.iter().any(|v| one(f64::from(*v))),
                RowNum::Pkts => one(r.pkts),
                RowNum::Gaps => one(r.gaps),
                RowNum::Retx => one(r.retx),
                RowNum::Naks => one(r.naks),
                RowNum::Rnr => one(r.rnr),
                RowNum::Ce => one(r.ce),
                RowNum::Cnps => one(r.cnps),
            }
        }
    }
}

/// A parsed connection filter (the TUI's `/`).
#[derive(Clone, Debug, PartialEq)]
pub struct Filter(Expr<RowTerm>);

impl Filter {
    /// Parse `text`; an empty text is no filter. The error says what is wrong and, for an
    /// unknown name, what the connection context offers.
    pub fn parse(text: &str) -> Result<Option<Filter>, String> {
        Ok(parse::<RowTerm>(text)?.map(Filter))
    }

    /// Whether `row` passes.
    pub fn matches(&self, row: &Row) -> bool {
        self.0.eval(&|t| row_matches(t, row))
    }
}

// ---------------------------------------------------------------------------------------
// Packets.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PacketNum {
    Qp,
    Psn,
    Opcode,
    Dscp,
    Ecn,
    Pcp,
    Vlan,
    Len,
    Sport,
    Dport,
    Syndrome,
    Frame,
    Time,
    Dscp4,
    Dscp6,
    Ecn4,
    Ecn6,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Side {
    Either,
    Src,
    Dst,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PacketWord {
    Roce,
    V1,
    V2,
    Nak,
    Rnr,
    Ack,
    Cnp,
    Ce,
    Fecn,
    Becn,
    AckReq,
    Icrc,
    Malformed,
    Pfc,
    Pause,
    /// Wireshark's `infiniband`: RoCE the dissector ran on, well-formed or not.
    Infiniband,
}

/// The opcodes whose names contain a pattern, as a 256-bit set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct OpcodeSet([u64; 4]);

impl OpcodeSet {
    fn named(pattern: &str, opts: OpcodeOptions) -> OpcodeSet {
        let mut set = [0u64; 4];
        for b in 0..=255u8 {
            if Opcode(b).name(opts).to_ascii_lowercase().contains(pattern) {
                set[usize::from(b >> 6)] |= 1 << (b & 63);
            }
        }
        OpcodeSet(set)
    }

    fn contains(self, b: u8) -> bool {
        self.0[usize::from(b >> 6)] & (1 << (b & 63)) != 0
    }

    fn is_empty(self) -> bool {
        self.0 == [0; 4]
    }
}

#[derive(Clone, Debug, PartialEq)]
enum PacketTerm {
    Num(PacketNum, Op, f64),
    /// `opcode=NAME` (or `!=`): the pattern as typed (lower-case, spaces for `_`) and the
    /// opcodes it names.
    OpcodeName(String, Op, OpcodeSet),
    Addr(Side, Op, IpAddr),
    Word(PacketWord),
}

impl Vocab for PacketTerm {
    const WHAT: &'static str = "packet";
    const FIELDS: &'static [&'static str] = PACKET_FIELDS;
    const WORDS: &'static [&'static str] = PACKET_WORDS;
    const EXAMPLE: &'static str = "qp=0x12, ip=10.0.0.3, psn>100, opcode=read_request, nak, ce, pfc";

    fn canonical(name: &str) -> Option<&'static str> {
        short_name(name)
    }

    fn word(w: &str) -> Option<Self> {
        Some(PacketTerm::Word(match w {
            "roce" => PacketWord::Roce,
            "v1" => PacketWord::V1,
            "v2" => PacketWord::V2,
            "nak" => PacketWord::Nak,
            "rnr" => PacketWord::Rnr,
            "ack" => PacketWord::Ack,
            "cnp" => PacketWord::Cnp,
            "ce" => PacketWord::Ce,
            "fecn" => PacketWord::Fecn,
            "becn" => PacketWord::Becn,
            "ackreq" => PacketWord::AckReq,
            "icrc" => PacketWord::Icrc,
            "malformed" => PacketWord::Malformed,
            "pfc" => PacketWord::Pfc,
            "pause" => PacketWord::Pause,
            "infiniband" => PacketWord::Infiniband,
            _ => return None,
        }))
    }

    fn field(f: &str, op: Op, v: &str) -> Result<Self, String> {
        let num = match f {
            "ip" => {
                eq_only(f, op, v)?;
                return address(v).map(|a| PacketTerm::Addr(Side::Either, op, a));
            }
            "src" | "dst" => {
                if !matches!(op, Op::Eq | Op::Ne) {
                    return Err(format!("{f} takes = or != only"));
                }
                let side = if f == "src" { Side::Src } else { Side::Dst };
                return address(v).map(|a| PacketTerm::Addr(side, op, a));
            }
            "opcode" if number(v).is_none() => {
                if !matches!(op, Op::Eq | Op::Ne) {
                    return Err(format!("opcode{}{v} compares a name: use = or != (or a number)", op.text()));
                }
                let pattern = v.to_ascii_lowercase().replace(['_', '-'], " ");
                let set = OpcodeSet::named(&pattern, OpcodeOptions::default());
                // Named under either reading of 0x40-0x5F: `rd_ack` is fine for a decode
                // that is told `--no-dc` later (`with_opcode_options`).
                if set.is_empty() && OpcodeSet::named(&pattern, OpcodeOptions { dc: false }).is_empty() {
                    return Err(format!(
                        "no opcode name contains {v:?} (try a number such as 0x0a, or part of a name: send, write_only, read_request, acknowledge, cnp)"
                    ));
                }
                return Ok(PacketTerm::OpcodeName(pattern, op, set));
            }
            "dscp4" | "dscp6" | "ecn4" | "ecn6" => {
                // Wireshark's `ip.dsfield.*` (IPv4 only) and `ipv6.tclass.*` (IPv6 only).
                let v4 = f.ends_with('4');
                let num = match (f.starts_with("dscp"), v4) {
                    (true, true) => PacketNum::Dscp4,
                    (true, false) => PacketNum::Dscp6,
                    (false, true) => PacketNum::Ecn4,
                    (false, false) => PacketNum::Ecn6,
                };
                return Ok(PacketTerm::Num(num, op, need_number(v)?));
            }
            "ecn" => {
                let n = match v.to_ascii_lowercase().as_str() {
                    "not-ect" | "notect" | "not_ect" => 0.0,
                    "ect1" | "ect(1)" => 1.0,
                    "ect0" | "ect(0)" => 2.0,
                    "ce" => 3.0,
                    _ => number(v).ok_or_else(|| {
                        format!("not an ECN value: {v:?} (0-3, or not-ect, ect1, ect0, ce)")
                    })?,
                };
                return Ok(PacketTerm::Num(PacketNum::Ecn, op, n));
            }
            "qp" => PacketNum::Qp,
            "psn" => PacketNum::Psn,
            "opcode" => PacketNum::Opcode,
            "dscp" => PacketNum::Dscp,
            "pcp" => PacketNum::Pcp,
            "vlan" => PacketNum::Vlan,
            "len" => PacketNum::Len,
            "sport" => PacketNum::Sport,
            "dport" => PacketNum::Dport,
            "syndrome" => PacketNum::Syndrome,
            "frame" => PacketNum::Frame,
            "time" => PacketNum::Time,
            _ => return Err(format!("unknown field {f:?}")),
        };
        Ok(PacketTerm::Num(num, op, need_number(v)?))
    }
}

/// Source and destination: the IP header's, or for RoCEv1 the GRH's GIDs (as the analyzer
/// keys flows).
fn addresses(p: &Packet<'_>) -> Option<(IpAddr, IpAddr)> {
    if let Some(ip) = &p.ip {
        return Some((ip.src(), ip.dst()));
    }
    let g = p.roce.as_ref()?.grh?;
    Some((IpAddr::V6(g.sgid()), IpAddr::V6(g.dgid())))
}

/// The TOS / traffic-class byte: the IP header's, or for RoCEv1 the GRH's.
fn traffic_class(p: &Packet<'_>) -> Option<u8> {
    match &p.ip {
        Some(ip) => Some(ip.tos()),
        None => p.roce.as_ref()?.grh.map(|g| g.tclass()),
    }
}

/// Where a frame sits in its capture, for `frame` and `time` terms.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FramePlace {
    /// 1-based frame number.
    pub number: u64,
    /// Time since the capture's first frame, ns.
    pub rel_ns: i64,
}

fn packet_matches(t: &PacketTerm, p: &Packet<'_>, len: u64, place: Option<FramePlace>) -> bool {
    let roce = p.roce.as_ref();
    let aeth = || roce.and_then(|r| r.ext.aeth).map(|a| a.kind());
    match t {
        PacketTerm::Num(f, op, n) => {
            let v = match f {
                PacketNum::Vlan => return p.vlans.as_slice().iter().any(|t| op.holds(f64::from(t.vid), *n)),
                PacketNum::Qp => roce.map(|r| f64::from(r.bth.dest_qp())),
                PacketNum::Psn => roce.map(|r| f64::from(r.bth.psn())),
                PacketNum::Opcode => roce.map(|r| f64::from(r.bth.opcode().0)),
                PacketNum::Dscp => traffic_class(p).map(|t| f64::from(t >> 2)),
                PacketNum::Ecn => traffic_class(p).map(|t| f64::from(t & 3)),
                PacketNum::Pcp => p.vlans.pcp().map(f64::from),
                PacketNum::Len => Some(len as f64),
                PacketNum::Sport => p.udp.as_ref().map(|u| f64::from(u.source_port())),
                PacketNum::Dport => p.udp.as_ref().map(|u| f64::from(u.destination_port())),
                PacketNum::Syndrome => roce.and_then(|r| r.ext.aeth).map(|a| f64::from(a.syndrome())),
                PacketNum::Frame => place.map(|f| f.number as f64),
                PacketNum::Time => place.map(|f| f.rel_ns as f64 / 1e9),
                PacketNum::Dscp4 | PacketNum::Ecn4 | PacketNum::Dscp6 | PacketNum::Ecn6 => {
                    let want = if matches!(f, PacketNum::Dscp4 | PacketNum::Ecn4) { 4 } else { 6 };
                    let tos = p.ip.as_ref().filter(|ip| ip.version() == want).map(|ip| ip.tos());
                    let dscp = matches!(f, PacketNum::Dscp4 | PacketNum::Dscp6);
                    tos.map(|t| f64::from(if dscp { t >> 2 } else { t & 3 }))
                }
            };
            holds_opt(v, *op, *n)
        }
        PacketTerm::OpcodeName(_, op, set) => {
            roce.is_some_and(|r| set.contains(r.bth.opcode().0) == (*op == Op::Eq))
        }
        PacketTerm::Addr(side, op, a) => addresses(p).is_some_and(|(s, d)| match side {
            Side::Either => s == *a || d == *a,
            Side::Src => (s == *a) == (*op == Op::Eq),
            Side::Dst => (d == *a) == (*op == Op::Eq),
        }),
        PacketTerm::Word(w) => match w {
            PacketWord::Roce => p.roce_ok().is_some(),
            PacketWord::V1 => roce.is_some_and(|r| r.version == RoceVersion::V1),
            PacketWord::V2 => roce.is_some_and(|r| r.version == RoceVersion::V2),
            PacketWord::Nak => aeth() == Some(AethKind::Nak),
            PacketWord::Rnr => aeth() == Some(AethKind::RnrNak),
            PacketWord::Ack => aeth() == Some(AethKind::Ack) && roce.is_some_and(|r| r.bth.opcode().is_ack()),
            PacketWord::Cnp => roce.is_some_and(|r| r.bth.opcode().is_cnp()),
            PacketWord::Ce => traffic_class(p).is_some_and(|t| t & 3 == 3),
            PacketWord::Fecn => roce.is_some_and(|r| r.bth.fecn()),
            PacketWord::Becn => roce.is_some_and(|r| r.bth.becn()),
            PacketWord::AckReq => roce.is_some_and(|r| r.bth.ack_req()),
            PacketWord::Icrc => roce.is_some_and(|r| r.icrc.status == IcrcStatus::Invalid),
            PacketWord::Malformed => p.is_malformed_roce(),
            PacketWord::Pfc => matches!(p.mac_control, Some(MacControl::Pfc(_))),
            PacketWord::Pause => matches!(p.mac_control, Some(MacControl::Pause(_))),
            PacketWord::Infiniband => roce.is_some() || p.is_malformed_roce(),
        },
    }
}

/// A parsed packet filter (`rocescope decode -Y`): the module documentation lists its terms.
#[derive(Clone, Debug, PartialEq)]
pub struct PacketFilter(Expr<PacketTerm>);

impl PacketFilter {
    /// Parse `text`; an empty text is no filter. The error says what is wrong and, for an
    /// unknown name, what the packet context offers (a connection-only name such as `gaps`
    /// or `loss` is named as such).
    pub fn parse(text: &str) -> Result<Option<PacketFilter>, String> {
        Ok(parse::<PacketTerm>(text)?.map(PacketFilter))
    }

    /// Read opcode names (`opcode=NAME`) as the decoder was told to: 0x40-0x5F are Mellanox
    /// DC by default, IBTA Reliable Datagram with `dc: false` (`--no-dc`).
    pub fn with_opcode_options(mut self, opts: OpcodeOptions) -> Self {
        self.0.for_each_term_mut(&mut |t| {
            if let PacketTerm::OpcodeName(pattern, _, set) = t {
                *set = OpcodeSet::named(pattern, opts);
            }
        });
        self
    }

    /// Whether `p` passes; `len` compares the captured length (`p.data`).
    pub fn matches(&self, p: &Packet<'_>) -> bool {
        self.matches_frame(p, p.data.len() as u64)
    }

    /// Whether `p` passes, `len` comparing `wire_len`: the frame's length on the wire (the
    /// capture record's original length), which a snap length may have cut `p.data` short of.
    pub fn matches_frame(&self, p: &Packet<'_>, wire_len: u64) -> bool {
        self.0.eval(&|t| packet_matches(t, p, wire_len, None))
    }

    /// As [`PacketFilter::matches_frame`], with the frame's number and time in its capture
    /// for `frame` and `time` terms (which match nothing without them).
    pub fn matches_at(&self, p: &Packet<'_>, wire_len: u64, place: FramePlace) -> bool {
        self.0.eval(&|t| packet_matches(t, p, wire_len, Some(place)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rocescope_decoder::{decode, DecodeOptions, LinkType};

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

    fn rows(text: &str, r: &Row) -> bool {
        Filter::parse(text).unwrap().unwrap().matches(r)
    }

    #[test]
    fn parses_and_matches() {
        let f = Filter::parse("qp=0x12 and ce>0").unwrap().unwrap();
        assert!(f.matches(&row()));
        assert!(!rows("qp=0x13", &row()));
        assert!(rows("ip=10.0.0.3", &row()));
        assert!(rows("nak", &row()));
        assert!(!rows("rnr", &row()));
        assert!(rows("rnr or dscp=26", &row()));
        assert!(rows("pkts>=100 and critical", &row()));
        assert!(Filter::parse("   ").unwrap().is_none());
        // Spaces around operators, keywords in any case.
        assert!(rows("qp = 0x12 AND ce > 0", &row()));
        assert!(rows("NAK && ce>1 || rnr", &row()));
    }

    #[test]
    fn not_and_parentheses() {
        let r = row();
        assert!(!rows("not nak", &r));
        assert!(rows("!rnr", &r));
        assert!(rows("! rnr and nak", &r));
        // `not` binds tighter than `and`, `and` tighter than `or`.
        assert!(rows("rnr and nak or ce>2", &r));
        assert!(!rows("rnr and (nak or ce>2)", &r));
        assert!(rows("not (rnr or qp=0x99)", &r));
        assert!(!rows("not (nak or rnr)", &r));
        assert!(rows("((nak))", &r));
        assert!(rows("not not nak", &r));
        // `!=` on a multi-valued field: any value differs; `not =`: none equals.
        let mixed = Row { dscp: vec![0, 26], ..row() };
        assert!(rows("dscp!=26", &mixed));
        assert!(!rows("not dscp=26", &mixed));
        assert!(!rows("dscp!=26", &row()));
    }

    #[test]
    fn ip_compares_addresses() {
        let r = Row { ips: vec!["fe80::25".into(), "fe80::26".into()], ..row() };
        assert!(rows("ip=fe80:0::25", &r));
        assert!(!rows("ip=fe80::27", &r));
    }

    #[test]
    fn loss_is_lost_gaps_or_loss_resends_not_rnr_retries_or_reordering() {
        let rnr_only = Row { retx: 1.0, retx_not_loss: 1.0, rnr: 1.0, ..Row::default() };
        assert!(!rows("loss", &rnr_only), "an RNR retry is not loss");
        assert!(rows("retx>0 and rnr", &rnr_only), "but it is a retransmission");
        let nak_resent = Row { retx: 3.0, gaps: 1.0, loss_gaps: 1.0, ..Row::default() };
        assert!(rows("loss", &nak_resent));
        let timeout = Row { retx: 2.0, retx_not_loss: 1.0, ..Row::default() };
        assert!(rows("loss", &timeout), "a resend beyond the RNR retries is loss");
        let capture_gap = Row { gaps: 1.0, loss_gaps: 1.0, ..Row::default() };
        assert!(rows("loss", &capture_gap));
        let reordered = Row { gaps: 40.0, ..Row::default() };
        assert!(!rows("loss", &reordered), "gaps late packets filled are not loss");
        assert!(rows("gaps>0", &reordered));
        let spurious = Row { gaps: 1.0, retx: 3.0, retx_not_loss: 3.0, ..Row::default() };
        assert!(!rows("loss", &spurious), "go-back-N after a spurious NAK resent nothing lost");
    }

    #[test]
    fn errors_say_why() {
        assert!(Filter::parse("qpx=1").unwrap_err().contains("unknown field"));
        assert!(Filter::parse("ip=banana").unwrap_err().contains("not an IP"));
        assert!(Filter::parse("ce>lots").unwrap_err().contains("not a number"));
        assert!(Filter::parse("qp>1").unwrap_err().contains("= only"));
        assert_eq!(Filter::parse("nak and").unwrap_err(), "empty term after and");
        assert_eq!(Filter::parse("nak or").unwrap_err(), "empty term after or");
        assert!(Filter::parse("frobnicate").unwrap_err().contains("not a term"));
        assert_eq!(Filter::parse("(nak").unwrap_err(), "missing )");
        assert_eq!(Filter::parse("nak)").unwrap_err(), "a ) without its (");
        assert_eq!(Filter::parse("nak ce").unwrap_err(), "expected and or or before \"ce\"");
        assert_eq!(Filter::parse("and nak").unwrap_err(), "expected a term after the start, found and");
        assert_eq!(Filter::parse("()").unwrap_err(), "expected a term after (, found )");
        assert!(Filter::parse("nak>").unwrap_err().contains("needs a value"));
        assert!(Filter::parse("pkts").unwrap_err().contains("needs a comparison"));
        assert!(Filter::parse("loss=1").unwrap_err().contains("is a word in connection filters"));
        assert!(Filter::parse("nak & ce").unwrap_err().contains("lone '&'"));
    }

    #[test]
    fn a_name_from_the_other_context_is_named_as_such() {
        let e = Filter::parse("psn>3").unwrap_err();
        assert!(e.starts_with("\"psn\" is a packet field, not valid for connections"), "{e}");
        assert!(e.contains(&CONNECTION_FIELDS.join(", ")) && e.contains(&CONNECTION_WORDS.join(", ")), "{e}");
        let e = Filter::parse("pfc").unwrap_err();
        assert!(e.starts_with("\"pfc\" is a packet word, not valid for connections"), "{e}");
        for t in ["gaps>0", "retx>1", "pkts>=10", "naks=1", "cnps>0"] {
            let e = PacketFilter::parse(t).unwrap_err();
            assert!(e.contains("is a connection field, not valid for packets"), "{t}: {e}");
            assert!(e.contains(&PACKET_FIELDS.join(", ")) && e.contains(&PACKET_WORDS.join(", ")), "{e}");
        }
        for t in ["loss", "critical", "warning"] {
            let e = PacketFilter::parse(t).unwrap_err();
            assert!(e.contains("is a connection word, not valid for packets"), "{t}: {e}");
        }
        // `ce` is a number for connections (CE percent) and a word for packets.
        let e = PacketFilter::parse("ce>1").unwrap_err();
        assert!(e.contains("\"ce\" is a word in packet filters"), "{e}");
        assert!(PacketFilter::parse("ce").is_ok() && Filter::parse("ce>1").is_ok());
    }

    #[test]
    fn every_listed_name_parses() {
        for w in CONNECTION_WORDS {
            assert!(Filter::parse(w).is_ok(), "{w}");
        }
        for f in CONNECTION_FIELDS {
            let v = if *f == "ip" { "10.0.0.1" } else { "1" };
            assert!(Filter::parse(&format!("{f}={v}")).is_ok(), "{f}");
        }
        for w in PACKET_WORDS {
            assert!(PacketFilter::parse(w).is_ok(), "{w}");
        }
        for f in PACKET_FIELDS {
            let v = if matches!(*f, "ip" | "src" | "dst") { "10.0.0.1" } else { "1" };
            assert!(PacketFilter::parse(&format!("{f}={v}")).is_ok(), "{f}");
        }
    }

    #[test]
    fn packet_field_values_are_checked() {
        assert!(PacketFilter::parse("ip!=10.0.0.1").unwrap_err().contains("= only"));
        assert!(PacketFilter::parse("src>10.0.0.1").unwrap_err().contains("= or != only"));
        assert!(PacketFilter::parse("opcode=frobnicate").unwrap_err().contains("no opcode name contains"));
        assert!(PacketFilter::parse("opcode>write").unwrap_err().contains("compares a name"));
        assert!(PacketFilter::parse("ecn=lots").unwrap_err().contains("not an ECN value"));
        assert!(PacketFilter::parse("psn>x").unwrap_err().contains("not a number"));
    }

    /// A RoCEv2 frame built by hand: Ethernet, an 802.1Q tag with PCP 3 and VID 100, IPv4
    /// (DSCP 26, ECN `ecn`), UDP to 4791, a BTH and an AETH with `syndrome`.
    fn ack_frame(opcode: u8, syndrome: u8, ecn: u8) -> Vec<u8> {
        let mut f = vec![0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1, 0x81, 0x00, 0x60, 0x64, 0x08, 0x00];
        let ib = 12 + 4 + 4; // BTH, AETH, ICRC
        let ip_len = 20 + 8 + ib;
        f.extend_from_slice(&[0x45, (26 << 2) | ecn, 0, ip_len as u8, 0, 0, 0x40, 0, 64, 17, 0, 0]);
        f.extend_from_slice(&[10, 0, 0, 2, 10, 0, 0, 1]);
        f.extend_from_slice(&[0xc0, 0x00, 0x12, 0xb7, 0, (8 + ib) as u8, 0, 0]);
        // BTH: opcode, flags, pkey, FECN|BECN byte, dest QP 0x000031, AckReq, PSN 7.
        f.extend_from_slice(&[opcode, 0, 0xff, 0xff, 0x80, 0, 0, 0x31, 0x80, 0, 0, 7]);
        f.extend_from_slice(&[syndrome, 0, 0, 1]);
        f.extend_from_slice(&[0, 0, 0, 0]);
        f
    }

    fn pick(text: &str, frame: &[u8]) -> bool {
        let p = decode(LinkType::ETHERNET, frame, &DecodeOptions { check_icrc: false, ..Default::default() });
        assert!(p.error.is_none(), "{:?}", p.error);
        PacketFilter::parse(text).unwrap().unwrap().matches(&p)
    }

    #[test]
    fn packet_terms_on_a_built_frame() {
        let nak = ack_frame(0x11, 0x60, 3);
        for yes in [
            "nak",
            "qp=0x31",
            "qp=49",
            "psn=7",
            "psn>=7 and psn<8",
            "opcode=0x11",
            "opcode=acknowledge",
            "opcode=rc_ack",
            "opcode!=send",
            "ip=10.0.0.1",
            "ip=10.0.0.2",
            "src=10.0.0.2 and dst=10.0.0.1",
            "dst!=10.0.0.9",
            "dscp=26",
            "ecn=ce",
            "ecn=3",
            "ce",
            "pcp=3",
            "vlan=100",
            "len=66",
            "v2",
            "roce",
            "fecn",
            "ackreq",
            "not becn",
            "not (rnr or ack or cnp or pfc or pause or v1 or icrc or malformed)",
        ] {
            assert!(pick(yes, &nak), "{yes} should pick the NAK");
        }
        for no in ["rnr", "ack", "qp=0x32", "opcode=0x10", "opcode=write", "src=10.0.0.1", "pcp=0", "len>66"]
        {
            assert!(!pick(no, &nak), "{no} should not pick the NAK");
        }
        let rnr = ack_frame(0x11, 0x2e, 2);
        assert!(pick("rnr and not nak and not ce and ecn=ect0", &rnr));
        let ack = ack_frame(0x11, 0x1f, 0);
        assert!(pick("ack and ecn=not-ect and not nak", &ack));
        // A READ response carries an ACK syndrome but is not an Acknowledge.
        let read_resp = ack_frame(0x10, 0x1f, 0);
        assert!(!pick("ack", &read_resp) && pick("opcode=read_response", &read_resp));
    }

    #[test]
    fn absent_fields_compare_false() {
        // A frame with no IP, no RoCE: an empty Ethernet frame of another EtherType.
        let other = [0u8; 60];
        let p = decode(LinkType::ETHERNET, &other, &DecodeOptions::default());
        let f = |t: &str| PacketFilter::parse(t).unwrap().unwrap().matches(&p);
        for t in ["psn!=5", "qp!=1", "dscp!=26", "src!=10.0.0.1", "opcode!=send", "pcp!=3", "vlan!=1"] {
            assert!(!f(t), "{t}");
        }
        assert!(f("not psn=5") && f("len=60") && f("not roce"));
        assert!(PacketFilter::parse("len=60").unwrap().unwrap().matches_frame(&p, 60));
        assert!(!PacketFilter::parse("len=60").unwrap().unwrap().matches_frame(&p, 1500));
    }

    fn opcode_set(f: &PacketFilter) -> OpcodeSet {
        match &f.0 {
            Expr::Term(PacketTerm::OpcodeName(_, _, set)) => *set,
            other => panic!("not an opcode name: {other:?}"),
        }
    }

    #[test]
    fn opcode_names_follow_the_decoder_options() {
        // 0x51 is a DC Acknowledge by default and an RD one with --no-dc.
        let dc = PacketFilter::parse("opcode=dc_ack").unwrap().unwrap();
        assert!(
            opcode_set(&dc).contains(0x51) && !opcode_set(&dc).contains(0x52),
            "not DC Atomic Acknowledge"
        );
        assert!(!opcode_set(&dc).contains(0x11));
        assert!(opcode_set(&dc.with_opcode_options(OpcodeOptions { dc: false })).is_empty());
        let rd = PacketFilter::parse("opcode=rd_ack").unwrap().unwrap();
        assert!(opcode_set(&rd).is_empty(), "RD names are not the default");
        let rd = rd.with_opcode_options(OpcodeOptions { dc: false });
        assert!(opcode_set(&rd).contains(0x51) && !opcode_set(&rd).contains(0x11));
    }
}
