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
//! term   := WORD  |  FIELD OP VALUE  |  FIELD "in" "{" MEMBER+ "}"  |  WIRESHARK-FIELD
//! OP     := "=" | "==" | "!=" | ">" | ">=" | "<" | "<="  (or eq, ne, gt, ge, lt, le)
//! MEMBER := VALUE  |  VALUE ".." VALUE     (members separated by spaces or commas)
//! ```
//!
//! `not` binds tighter than `and`, and `and` tighter than `or`: `nak or ce and not cnp` reads
//! `nak or (ce and (not cnp))`. Keywords, fields and words are case-insensitive; spaces around
//! operators are optional (`qp = 0x12` is `qp=0x12`). Numbers are decimal or `0x` hex
//! (`True`/`False` are 1/0); addresses take a CIDR prefix (`ip=10.0.0.0/24`, `ip=fd00::/64`),
//! which `=` reads as "in the subnet". An empty filter is no filter (everything passes).
//!
//! A connection field with several values (its two QPs, the DSCPs it carried) compares true
//! when any value does: `dscp!=26` picks connections with some packet not marked 26, `not
//! dscp=26` those with none marked 26. A packet field with several values (`ip` and
//! Wireshark's `ip.addr`, `eth.addr`: both ends; `vlan`: every tag) follows Wireshark: `!=` is
//! true when no value equals (`ip.addr != 10.0.0.1`: neither end is 10.0.0.1), the other
//! operators and `in` when some value does. A field the item does not have (the PSN of a PFC
//! frame, the PCP of an untagged frame) compares false whatever the operator: `psn!=5` does
//! not pick PFC frames, `not psn=5` does.
//!
//! # Connections (the TUI's `/`)
//!
//! | term | picks connections |
//! |---|---|
//! | `qp=N` | either QP is N (`=` only; `not qp=N` for the opposite) |
//! | `ip=ADDR` | either end is ADDR, or in the subnet ADDR/N (`=` only) |
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
//! Wireshark's field names ([`FIELD_NAMES`], docs/decode.md) are fields here too and mean
//! what they mean in Wireshark: `ip.src` and `ip.ttl` read IPv4 headers only, `ipv6.addr`
//! IPv6 headers only (not a RoCEv1 GRH, which the short `ip` reads), `eth.addr` either MAC,
//! `infiniband.bth.a == 1` the AckReq bit; one named alone picks the frames that have it
//! (`infiniband.bth.psn`: every frame with a BTH). Sets: `infiniband.bth.opcode in {17 18}`,
//! `udp.srcport in {49152..49200}`, `ip.addr in {10.0.0.1, 10.0.0.5..10.0.0.9}`. Not taken:
//! Wireshark's `contains`, `matches`, slices, functions, `===`/`!==`, layer numbers (`#2`)
//! and octal numbers.
//!
//! | term | picks packets |
//! |---|---|
//! | `qp OP N` | BTH destination QP |
//! | `psn OP N` | BTH PSN |
//! | `opcode OP N` | BTH opcode as a number (`opcode=0x0a`, `opcode<0x20` for RC) |
//! | `opcode=NAME` | opcode by name: a case-insensitive part of its name, `_` for a space (`opcode=read_request`, `opcode=write`, `opcode=acknowledge`, `opcode=ud_send`); `=` and `!=` only; 0x40-0x5F are named as Mellanox DC unless [`PacketFilter::with_opcode_options`] says RD |
//! | `ip OP ADDR` | source or destination IP, for RoCEv1 the GRH GIDs; `ip!=ADDR`: neither |
//! | `src OP ADDR`, `dst OP ADDR` | source / destination; `<`, `>` order addresses as numbers |
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
//! `cnp or ce`, `pfc and pcp=3`, `roce and not (dscp=26)`, `opcode=read_request and len>1000`,
//! `eth.src == 02:00:00:00:00:07 and pfc`, `ip.addr == 172.17.242.0/24 and ip.ttl < 64`.

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

mod names;
mod packet;
mod value;

pub use names::{json_name, short_name, wireshark_names, FieldName, FIELD_NAMES};
pub use packet::{FramePlace, PacketFilter};

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
pub(crate) enum Op {
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
    /// `in`, before a set.
    In,
    /// `{` and `}` around a set, `,` between its members.
    OpenSet,
    CloseSet,
    Comma,
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
        Tok::In => "in".into(),
        Tok::OpenSet => "{".into(),
        Tok::CloseSet => "}".into(),
        Tok::Comma => ",".into(),
        Tok::Atom(a) => format!("{a:?}"),
    }
}

/// Characters that end an atom (a name or a value).
const PUNCT: &str = "()!=<>&|{},";

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
            ('{', _) => (Tok::OpenSet, 1),
            ('}', _) => (Tok::CloseSet, 1),
            (',', _) => (Tok::Comma, 1),
            ('&' | '|', _) => return Err(format!("a lone {c:?}: write and (&&) or or (||)")),
            _ => {
                let len = rest.find(|c: char| c.is_whitespace() || PUNCT.contains(c)).unwrap_or(rest.len());
                let atom = rest.get(..len).unwrap_or(rest);
                let tok = match atom.to_ascii_lowercase().as_str() {
                    "and" => Tok::And,
                    "or" => Tok::Or,
                    "not" => Tok::Not,
                    "in" => Tok::In,
                    // Wireshark's English comparisons.
                    "eq" => Tok::Op(Op::Eq),
                    "ne" => Tok::Op(Op::Ne),
                    "gt" => Tok::Op(Op::Gt),
                    "ge" => Tok::Op(Op::Ge),
                    "lt" => Tok::Op(Op::Lt),
                    "le" => Tok::Op(Op::Le),
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
    /// Whether `f` (lower-case, canonical) takes an operator and a value.
    fn is_field(f: &str) -> bool {
        Self::FIELDS.contains(&f)
    }
    /// The term for `f in {...}`: each member a value or a range (`a..b`).
    fn members(f: &str, _items: &[(&str, Option<&str>)]) -> Result<Self, String> {
        Err(format!("{f} in {{...}}: sets are for packet filters (decode -Y, the Packets screen)"))
    }
    /// The term for a field named alone, which Wireshark reads as "the frame has it".
    fn present(_f: &str) -> Option<Self> {
        None
    }
    /// More names this vocabulary takes, for messages (after its fields and words).
    fn more_names() -> String {
        String::new()
    }
}

/// The contexts, for saying where a name from the other one belongs.
const CONTEXTS: [(&str, &[&str], &[&str]); 2] =
    [("connection", CONNECTION_FIELDS, CONNECTION_WORDS), ("packet", PACKET_FIELDS, PACKET_WORDS)];

fn vocabulary<V: Vocab>() -> String {
    format!("{} fields: {}; words: {}{}", V::WHAT, V::FIELDS.join(", "), V::WORDS.join(", "), V::more_names())
}

/// A name that is not in `V`: where it belongs instead, if anywhere.
fn elsewhere<V: Vocab>(name: &str, as_field: bool) -> Option<String> {
    let (ctx, fields, words) = CONTEXTS.iter().find(|(ctx, ..)| *ctx != V::WHAT)?;
    // Wireshark's names are packet fields.
    let wireshark = *ctx == "packet" && names::by_wireshark(name).is_some();
    let kind = if (fields.contains(&name) || wireshark) && (as_field || !words.contains(&name)) {
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
        // vocabulary's own.
        let name = V::canonical(&lower).unwrap_or(lower.as_str());
        let unknown = || {
            elsewhere::<V>(name, true)
                .unwrap_or_else(|| format!("unknown field {a:?} ({})", vocabulary::<V>()))
        };
        match self.peek() {
            Some(Tok::Op(op)) => {
                self.pos += 1;
                let Some(Tok::Atom(v)) = self.next() else {
                    return Err(format!("{a}{} needs a value", op.text()));
                };
                if V::is_field(name) {
                    return V::field(name, op, v);
                }
                // A flag under its JSON path (`bth.fecn == 1`): the word.
                if V::WORDS.contains(&name) && name != lower && op == Op::Eq && number(v) == Some(1.0) {
                    return V::word(name).ok_or_else(|| format!("unknown word {a:?}"));
                }
                if V::WORDS.contains(&name) {
                    return Err(format!(
                        "{name:?} is a word in {} filters: use it alone ({})",
                        V::WHAT,
                        vocabulary::<V>()
                    ));
                }
                Err(unknown())
            }
            Some(Tok::In) => {
                self.pos += 1;
                let items = self.set(a)?;
                if V::is_field(name) {
                    V::members(name, &items)
                } else {
                    Err(unknown())
                }
            }
            _ => {
                if V::WORDS.contains(&name) {
                    return V::word(name).ok_or_else(|| format!("unknown word {a:?}"));
                }
                if let Some(t) = V::present(name) {
                    return Ok(t);
                }
                if V::is_field(name) {
                    return Err(format!("{name} needs a comparison, like {name}=1 or {name}>0"));
                }
                // A dotted name that is not an address: a Wireshark field we do not know.
                if name.contains('.') && name.starts_with(|c: char| c.is_ascii_alphabetic()) {
                    return Err(unknown());
                }
                Err(elsewhere::<V>(name, false)
                    .unwrap_or_else(|| format!("not a term: {a:?} (try {})", V::EXAMPLE)))
            }
        }
    }

    /// The members of `{...}` after `field in`: values or ranges (`a..b`, `a .. b`),
    /// separated by spaces or commas.
    fn set(&mut self, field: &str) -> Result<Vec<(&'a str, Option<&'a str>)>, String> {
        if !self.eat(Tok::OpenSet) {
            return Err(format!("{field} in needs a set: {field} in {{1 2 5..9}}"));
        }
        // Values and range marks, in order: `4430..4434` is three of them.
        let mut parts: Vec<Option<&'a str>> = Vec::new();
        loop {
            match self.next() {
                Some(Tok::CloseSet) => break,
                Some(Tok::Comma) => {}
                Some(Tok::Atom(mut v)) => {
                    while let Some((lo, hi)) = v.split_once("..") {
                        if !lo.is_empty() {
                            parts.push(Some(lo));
                        }
                        parts.push(None);
                        v = hi;
                    }
                    if !v.is_empty() {
                        parts.push(Some(v));
                    }
                }
                None => return Err(format!("{field} in {{...}}: missing }}")),
                Some(t) => return Err(format!("{field} in {{...}}: expected a value, found {}", show(t))),
            }
        }
        let mut items = Vec::new();
        let mut it = parts.into_iter().peekable();
        while let Some(p) = it.next() {
            let Some(lo) = p else {
                return Err(format!("{field} in {{...}}: a range needs a value before .."));
            };
            if it.peek() == Some(&None) {
                it.next();
                let Some(Some(hi)) = it.next() else {
                    return Err(format!("{field} in {{...}}: a range needs a value after .."));
                };
                items.push((lo, Some(hi)));
            } else {
                items.push((lo, None));
            }
        }
        if items.is_empty() {
            return Err(format!("{field} in {{}}: an empty set"));
        }
        Ok(items)
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

use value::number;

fn need_number(v: &str) -> Result<f64, String> {
    number(v).ok_or_else(|| format!("not a number: {v:?}"))
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
    /// An end in the subnet (a whole address for one address).
    Ip(IpAddr, u8),
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
                return value::net(v).map(|(a, len)| RowTerm::Ip(a, len));
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
        RowTerm::Ip(a, len) => {
            r.ips.iter().any(|i| i.parse::<IpAddr>().is_ok_and(|i| value::in_net(i, *a, *len)))
        }
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
        let e = |t: &str| PacketFilter::parse(t).unwrap_err();
        assert!(e("ip.src == fe80::1").contains("takes IPv4 addresses"));
        assert!(e("ipv6.addr == 10.0.0.1").contains("takes IPv6 addresses"));
        assert!(e("eth.src == 02:00:00:00:01").contains("not a MAC address"));
        assert!(e("ip.addr > 10.0.0.0/24").contains("a subnet takes == or !="));
        assert!(e("ip=10.0.0.0/40").contains("not a prefix length"));
        assert!(e("ip.addr in {10.0.0.0/24..10.0.0.9}").contains("not subnets"));
        assert!(e("psn in {}").contains("an empty set"));
        assert!(e("psn in {1..}").contains("a value after .."));
        assert!(e("psn in {..3}").contains("a value before .."));
        assert!(e("psn in 1").contains("needs a set"));
        assert!(e("psn in {1 2").contains("missing }"));
        assert!(e("psn in {1 (2}").contains("expected a value, found ("));
        assert!(e("psn in {1 x}").contains("not a number"));
        assert!(Filter::parse("qp in {1 2}").unwrap_err().contains("sets are for packet filters"));
        assert!(PacketFilter::parse("opcode=frobnicate").unwrap_err().contains("no opcode name contains"));
        assert!(PacketFilter::parse("opcode>write").unwrap_err().contains("compares a name"));
        assert!(PacketFilter::parse("ecn=lots").unwrap_err().contains("not an ECN value"));
        assert!(PacketFilter::parse("psn>x").unwrap_err().contains("not a number"));
    }

    #[test]
    fn an_unknown_name_lists_wiresharks_names_that_work() {
        for t in ["tcp.port == 80", "tcp.port", "udp.port in {4791}", "ip.hdr_len > 5"] {
            let e = PacketFilter::parse(t).unwrap_err();
            assert!(e.starts_with("unknown field"), "{t}: {e}");
            for name in wireshark_names().chain(["psn", "nak"]) {
                assert!(e.contains(name), "{t}: {name} missing from {e}");
            }
        }
        // In the connection context a Wireshark name is said to be a packet field.
        let e = Filter::parse("ip.ttl < 64").unwrap_err();
        assert!(e.starts_with("\"ip.ttl\" is a packet field, not valid for connections"), "{e}");
    }

    #[test]
    fn sets_take_spaces_or_commas_and_ranges() {
        let p = |t: &str| PacketFilter::parse(t).unwrap().unwrap();
        assert_eq!(p("infiniband.bth.opcode in {17 18}"), p("infiniband.bth.opcode in {17,18}"));
        assert_eq!(p("psn in {1 5..9}"), p("psn in { 1, 5 .. 9 }"));
        assert_eq!(p("psn in {5..9}"), p("psn in {5.. 9}"));
        assert_eq!(p("ip.addr == 10.0.0.1"), p("ip.addr eq 10.0.0.1"));
        assert_eq!(p("psn ge 3 && psn lt 9"), p("psn >= 3 and psn < 9"));
        let subnet = |t: &str, r: &Row| Filter::parse(t).unwrap().unwrap().matches(r);
        assert!(subnet("ip=10.0.0.0/30", &row()) && !subnet("ip=10.0.0.4/30", &row()));
    }

    #[test]
    fn wireshark_names_on_a_built_frame() {
        // Ethernet 02:..:01 -> 02:..:02, IPv4 10.0.0.2 -> 10.0.0.1 (TTL 64, ID 0), BTH opcode
        // 0x11 with FECN and AckReq, P_Key 0xffff, PSN 7; AETH MSN 1.
        let nak = ack_frame(0x11, 0x60, 3);
        for yes in [
            "eth.src == 02:00:00:00:00:01",
            "eth.dst == 02-00-00-00-00-02",
            "eth.addr == 0200.0000.0001 && eth.addr == 02:00:00:00:00:02",
            "eth.addr != 02:00:00:00:00:09",
            "eth.src < 02:00:00:00:00:02",
            "eth.src",
            "ip.ttl == 64 and ip.id == 0 and ip.ttl",
            "ip.addr == 10.0.0.0/24",
            "ip.addr == 10.0.0.1/32",
            "ip.src == 10.0.0.2 && ip.dst == 10.0.0.1",
            "ip.src == 10.0.0.3/31",
            "ip.addr != 10.0.0.9",
            "ip.addr != 10.0.1.0/24",
            "ip.src > 10.0.0.1 and ip.dst le 10.0.0.1",
            "ip.addr in {10.0.0.5 10.0.0.1}",
            "ip.src in {10.0.0.1..10.0.0.3}",
            "infiniband.bth.a == 1",
            "infiniband.bth.a == True",
            "infiniband.bth.a != 0",
            "infiniband.bth.a",
            "infiniband.bth.fecn == 1 and infiniband.bth.becn == 0",
            "infiniband.bth.opcode in {17 18}",
            "infiniband.bth.opcode in {0x10,0x11}",
            "infiniband.bth.opcode in {16..17}",
            "infiniband.bth.psn in {1 5..9}",
            "infiniband.bth.p_key == 0xffff and bth.pkey == 65535",
            "infiniband.aeth.msn == 1 and infiniband.aeth.syndrome == 0x60",
            "frame.cap_len == 66 and caplen == 66",
            "ip=10.0.0.0/30 and src!=10.0.0.0/31",
            "psn eq 7",
            "vlan.id in {99..101}",
        ] {
            assert!(pick(yes, &nak), "{yes} should pick the NAK");
        }
        for no in [
            "eth.src == 02:00:00:00:00:02",
            "eth.addr == 02:00:00:00:00:03",
            "ip.addr != 10.0.0.1",
            "ip.addr != 10.0.0.0/24",
            "ip.src == 10.0.0.0/31",
            "ip.src > 10.0.0.2",
            "ip.addr in {10.0.0.3..10.0.0.9}",
            "ipv6.src",
            "ipv6.addr == ::/0",
            "ip.ttl == 63",
            "infiniband.bth.a == 0",
            "infiniband.bth.a == False",
            "infiniband.bth.becn == 1",
            "infiniband.bth.opcode in {16 18}",
            "infiniband.reth.va",
            "infiniband.reth.va == 0",
            "psn in {1..6, 8}",
        ] {
            assert!(!pick(no, &nak), "{no} should not pick the NAK");
        }
    }

    #[test]
    fn wireshark_fields_a_frame_lacks_match_no_comparison() {
        // No IP, no RoCE: an Ethernet frame of EtherType 0 from and to 00:00:00:00:00:00.
        let other = [0u8; 60];
        let p = decode(LinkType::ETHERNET, &other, &DecodeOptions::default());
        let f = |t: &str| PacketFilter::parse(t).unwrap().unwrap().matches(&p);
        for t in [
            "ip.addr != 10.0.0.1",
            "ip.ttl != 1",
            "infiniband.bth.a != 1",
            "ip.src",
            "ip.addr in {0.0.0.0/0}",
        ] {
            assert!(!f(t), "{t}");
        }
        for t in ["not ip.ttl == 1", "eth.src", "eth.addr == 00:00:00:00:00:00", "not infiniband.bth.a"] {
            assert!(f(t), "{t}");
        }
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
}
