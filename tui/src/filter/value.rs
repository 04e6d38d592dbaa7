//! Values in a display filter: what is typed after an operator or in a set (numbers, MAC
//! addresses, IP addresses and subnets), what a packet has for a field, and how the two
//! compare, as Wireshark compares them.

use super::Op;
use std::cmp::Ordering;
use std::net::IpAddr;

/// A value typed in a filter.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Lit {
    /// A number; `int` when it is a whole number that fits 64 bits, compared exactly (a
    /// 64-bit RETH address is not an `f64`).
    Num { f: f64, int: Option<u64> },
    /// A MAC address.
    Mac([u8; 6]),
    /// An address and its prefix length: the address's whole length for one address, less
    /// for a subnet (`10.0.0.0/24`, `fd00::/64`).
    Net(IpAddr, u8),
}

impl Lit {
    /// A number.
    pub(crate) fn num(f: f64) -> Lit {
        let int = (f >= 0.0 && f.fract() == 0.0 && f < 18_446_744_073_709_551_616.0).then_some(f as u64);
        Lit::Num { f, int }
    }
}

/// One value a packet has for a field.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Got {
    /// A whole number.
    Int(u64),
    /// A number with a fraction (seconds).
    Num(f64),
    /// A MAC address.
    Mac([u8; 6]),
    /// An IP address.
    Ip(IpAddr),
}

/// One member of a set (`in {...}`): a value, or a range of them, both ends included.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Item {
    One(Lit),
    Range(Lit, Lit),
}

/// A number: decimal (with a fraction for seconds) or `0x` hex; Wireshark's `True` and
/// `False` are 1 and 0.
pub(crate) fn number(s: &str) -> Option<f64> {
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok().map(|v| v as f64),
        None if s.eq_ignore_ascii_case("true") => Some(1.0),
        None if s.eq_ignore_ascii_case("false") => Some(0.0),
        None => s.parse::<f64>().ok().filter(|v| v.is_finite()),
    }
}

/// A number as [`Lit::Num`], exact for whole numbers in hex or decimal.
pub(crate) fn number_lit(s: &str) -> Option<Lit> {
    let int = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse::<u64>().ok(),
    };
    match int {
        Some(i) => Some(Lit::Num { f: i as f64, int: Some(i) }),
        None => number(s).map(Lit::num),
    }
}

/// A MAC address as Wireshark reads one: six bytes of hex digits separated by `:`, `-` or
/// `.` (`01:80:c2:00:00:01`, `01-80-c2-00-00-01`), or three groups of four (`0180.c200.0001`).
pub(crate) fn mac(s: &str) -> Option<[u8; 6]> {
    let parts: Vec<&str> = s.split([':', '-', '.']).collect();
    let hex = |p: &str, n: usize| (1..=n).contains(&p.len()) && p.bytes().all(|b| b.is_ascii_hexdigit());
    let mut m = [0u8; 6];
    match parts.len() {
        6 if parts.iter().all(|p| hex(p, 2)) => {
            for (b, p) in m.iter_mut().zip(&parts) {
                *b = u8::from_str_radix(p, 16).ok()?;
            }
        }
        3 if parts.iter().all(|p| p.len() == 4 && hex(p, 4)) => {
            for (i, p) in parts.iter().enumerate() {
                let w = u16::from_str_radix(p, 16).ok()?.to_be_bytes();
                m[2 * i] = w[0];
                m[2 * i + 1] = w[1];
            }
        }
        _ => return None,
    }
    Some(m)
}

/// An address, or a subnet in CIDR notation (`10.0.0.0/24`, `fd00::/64`).
pub(crate) fn net(s: &str) -> Result<(IpAddr, u8), String> {
    let (addr, len) = match s.split_once('/') {
        Some((a, l)) => (a, Some(l)),
        None => (s, None),
    };
    let a: IpAddr = addr.parse().map_err(|_| format!("not an IP address: {s:?}"))?;
    let full = if a.is_ipv4() { 32 } else { 128 };
    let len = match len {
        None => full,
        Some(l) => l.parse::<u8>().ok().filter(|l| *l <= full).ok_or_else(|| {
            format!(
                "not a prefix length: {s:?} (0-{full} after the / of an IPv{} subnet)",
                if full == 32 { 4 } else { 6 }
            )
        })?,
    };
    Ok((a, len))
}

fn bits(a: IpAddr) -> u128 {
    match a {
        IpAddr::V4(a) => u128::from(u32::from(a)),
        IpAddr::V6(a) => u128::from(a),
    }
}

/// Whether `a` is in the subnet `n/len` (the same family only).
pub(crate) fn in_net(a: IpAddr, n: IpAddr, len: u8) -> bool {
    if a.is_ipv4() != n.is_ipv4() {
        return false;
    }
    let width = if a.is_ipv4() { 32 } else { 128 };
    let shift = u32::from(width - len.min(width));
    let keep = |x: u128| x.checked_shr(shift).unwrap_or(0);
    keep(bits(a)) == keep(bits(n))
}

/// Whether a packet's value compares true with a typed one; `!=` is "not equal" here (the
/// filter's `!=` over a packet's values is "none equal", [`super`]).
pub(crate) fn holds(got: Got, op: Op, lit: &Lit) -> bool {
    match (got, lit) {
        (Got::Int(a), Lit::Num { int: Some(b), .. }) => op.holds_ord(a.cmp(b)),
        (Got::Int(a), Lit::Num { f, .. }) => op.holds(a as f64, *f),
        (Got::Num(a), Lit::Num { f, .. }) => op.holds(a, *f),
        (Got::Mac(a), Lit::Mac(b)) => op.holds_ord(a.cmp(b)),
        (Got::Ip(a), Lit::Net(n, len)) => match op {
            Op::Eq => in_net(a, *n, *len),
            Op::Ne => !in_net(a, *n, *len),
            // Addresses order as numbers, within a family (Wireshark's `ip.src > 10.0.0.1`).
            _ => a.is_ipv4() == n.is_ipv4() && op.holds_ord(bits(a).cmp(&bits(*n))),
        },
        _ => false,
    }
}

/// Whether a packet's value is a member of a set item.
pub(crate) fn in_item(got: Got, item: &Item) -> bool {
    match item {
        Item::One(l) => holds(got, Op::Eq, l),
        Item::Range(lo, hi) => holds(got, Op::Ge, lo) && holds(got, Op::Le, hi),
    }
}

/// A packet's values for one field: none (the frame lacks it), one, or a few (both ends of
/// `ip.addr`, the VLAN IDs of a stack of tags). Fixed capacity: no allocation per packet.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Vals {
    v: [Got; 4],
    n: usize,
}

impl Vals {
    pub(crate) const NONE: Vals = Vals { v: [Got::Int(0); 4], n: 0 };

    /// One value, or none.
    pub(crate) fn of(g: Option<Got>) -> Vals {
        let mut v = Vals::NONE;
        v.extend(g);
        v
    }

    /// Add values (beyond four: dropped; no field has more).
    pub(crate) fn extend(&mut self, gs: impl IntoIterator<Item = Got>) {
        for g in gs {
            if let Some(slot) = self.v.get_mut(self.n) {
                *slot = g;
                self.n += 1;
            }
        }
    }

    pub(crate) fn as_slice(&self) -> &[Got] {
        self.v.get(..self.n).unwrap_or(&[])
    }
}

/// A comparison over a packet's values as Wireshark makes it: `!=` holds when the frame has
/// the field and no value equals (`ip.addr != 10.0.0.1`: neither end is 10.0.0.1); every
/// other operator when some value does (`ip.addr == 10.0.0.1`: either end is).
pub(crate) fn compare(vals: &Vals, op: Op, lit: &Lit) -> bool {
    let v = vals.as_slice();
    match op {
        Op::Ne => !v.is_empty() && v.iter().all(|g| !holds(*g, Op::Eq, lit)),
        _ => v.iter().any(|g| holds(*g, op, lit)),
    }
}

/// Whether some value is in the set.
pub(crate) fn member(vals: &Vals, items: &[Item]) -> bool {
    vals.as_slice().iter().any(|g| items.iter().any(|i| in_item(*g, i)))
}

impl Op {
    pub(crate) fn holds_ord(self, o: Ordering) -> bool {
        match self {
            Op::Eq => o == Ordering::Equal,
            Op::Ne => o != Ordering::Equal,
            Op::Gt => o == Ordering::Greater,
            Op::Ge => o != Ordering::Less,
            Op::Lt => o == Ordering::Less,
            Op::Le => o != Ordering::Greater,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn macs_in_wiresharks_spellings() {
        let want = Some([0x01, 0x80, 0xc2, 0, 0, 0x01]);
        for s in
            ["01:80:c2:00:00:01", "01-80-C2-00-00-01", "01.80.c2.00.00.01", "0180.c200.0001", "1:80:c2:0:0:1"]
        {
            assert_eq!(mac(s), want, "{s}");
        }
        for s in
            ["01:80:c2:00:00", "01:80:c2:00:00:01:02", "0180c2000001", "01:80:c2:00:00:zz", "018.0c2.0001"]
        {
            assert_eq!(mac(s), None, "{s}");
        }
    }

    #[test]
    fn subnets_hold_their_addresses_only() {
        let (n, len) = net("172.17.242.0/24").unwrap();
        assert!(in_net("172.17.242.47".parse().unwrap(), n, len));
        assert!(!in_net("172.17.243.1".parse().unwrap(), n, len));
        assert!(!in_net("::ffff:172.17.242.47".parse().unwrap(), n, len), "another family");
        let (n, len) = net("fd00::/64").unwrap();
        assert!(in_net("fd00::2".parse().unwrap(), n, len) && !in_net("fd01::2".parse().unwrap(), n, len));
        let (n, len) = net("0.0.0.0/0").unwrap();
        assert!(in_net("10.0.0.1".parse().unwrap(), n, len));
        let (n, len) = net("10.0.0.1").unwrap();
        assert_eq!(len, 32);
        assert!(in_net("10.0.0.1".parse().unwrap(), n, len) && !in_net("10.0.0.2".parse().unwrap(), n, len));
        assert!(net("10.0.0.0/33").unwrap_err().contains("prefix length"));
        assert!(net("fd00::/129").is_err() && net("banana/8").is_err());
    }

    #[test]
    fn whole_numbers_compare_exactly() {
        let a = 0x7f12_3456_789a_bcde_u64;
        let lit = number_lit("0x7f123456789abcde").unwrap();
        assert!(holds(Got::Int(a), Op::Eq, &lit));
        assert!(!holds(Got::Int(a + 1), Op::Eq, &lit), "an f64 would call these equal");
        assert!(holds(Got::Num(0.06), Op::Gt, &number_lit("0.05").unwrap()));
        assert_eq!(number("True"), Some(1.0));
        assert_eq!(number("false"), Some(0.0));
    }

    #[test]
    fn not_equal_is_none_equal_and_needs_the_field() {
        let mut ends = Vals::NONE;
        ends.extend([Got::Int(1), Got::Int(2)]);
        let one = Lit::num(1.0);
        assert!(compare(&ends, Op::Eq, &one));
        assert!(!compare(&ends, Op::Ne, &one), "one end equals");
        assert!(compare(&ends, Op::Ne, &Lit::num(3.0)));
        assert!(!compare(&Vals::NONE, Op::Ne, &one), "a frame without the field");
        assert!(member(&ends, &[Item::Range(Lit::num(2.0), Lit::num(5.0))]));
        assert!(!member(&ends, &[Item::One(Lit::num(3.0)), Item::Range(Lit::num(4.0), Lit::num(9.0))]));
    }
}
