//! `decode -T fields -e FIELD ...`: chosen fields of each frame, one line per frame, as
//! tshark's `-T fields`. Field names are the keys of the JSON output (docs/decode-json.md),
//! dotted for nested ones (`ip.src`, `bth.psn`, `vlan.pcp`); the list of valid names comes
//! from `docs/decode.schema.json`, so the two cannot disagree. Wireshark's names
//! (`infiniband.bth.psn`, `ip.dsfield.dscp`, `frame.time_relative`) and the display filter's
//! (`psn`, `dscp`, `qp`) name the same fields ([`rocescope_tui::filter::FIELD_NAMES`], the
//! table `-Y` reads too); a field of both ends (`ip.addr`, `eth.addr`) prints both, in
//! tshark's order.

use serde_json::Value;

/// How repeated values of one field (VLAN tags, PFC quanta) are printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Occurrence {
    /// The first only.
    First,
    /// The last only.
    Last,
    /// All of them, joined by the aggregator.
    All,
}

/// The fields and their formatting.
#[derive(Clone, Debug)]
pub struct Fields {
    names: Vec<String>,
    /// Each field's JSON paths: one, or two for a field of both ends (`ip.addr`).
    paths: Vec<Vec<Vec<String>>>,
    /// How each field is shown: under a Wireshark name, as tshark shows it.
    views: Vec<View>,
    separator: String,
    aggregator: String,
    occurrence: Occurrence,
    /// Print the names as the first line.
    pub header: bool,
}

/// The time since the capture's first frame (Wireshark's `frame.time_relative`), in seconds
/// with nine decimals: not in the JSON output, added to each frame's object for `-e`.
pub const TIME_RELATIVE: &str = "time_relative";

impl Fields {
    /// Whether a field needs [`TIME_RELATIVE`] in the frame's object.
    pub fn wants_time_relative(&self) -> bool {
        self.paths.iter().flatten().any(|p| p.len() == 1 && p[0] == TIME_RELATIVE)
    }
}

/// A field asked for by its Wireshark name is shown as tshark shows it, where our JSON
/// differs: `ip.*` only for IPv4 (`ipv6.*` only for IPv6: our `ip` object holds both), `vlan.*`
/// only for 802.1Q tags (an 802.1ad S-tag is tshark's `ieee8021ad`), the destination QP,
/// RETH address and key and the ICRC (read big-endian) in hex, BTH bits as 0 and 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum View {
    Ours,
    Ipv4,
    Ipv6,
    Dot1q,
    QpHex,
    /// A number in hex of this many digits.
    Hex(usize),
    /// The ICRC word, read big-endian, in hex.
    IcrcHex,
    /// `true`/`false` as 1/0.
    Bit,
}

impl View {
    /// The view for a field asked for as `name`. A Wireshark name that is also one of our
    /// JSON paths (`ip.src`, `vlan.id`, `eth.src`) is ours: it keeps its documented meaning.
    fn of(name: &str) -> View {
        let wireshark =
            rocescope_tui::filter::FIELD_NAMES.iter().any(|f| f.wireshark == name && f.json != name);
        match name {
            _ if !wireshark => View::Ours,
            "infiniband.bth.destqp" => View::QpHex,
            "infiniband.reth.va" => View::Hex(16),
            "infiniband.reth.r_key" => View::Hex(8),
            "infiniband.invariant.crc" => View::IcrcHex,
            "infiniband.bth.a" | "infiniband.bth.fecn" | "infiniband.bth.becn" => View::Bit,
            n if n.starts_with("ip.") => View::Ipv4,
            n if n.starts_with("ipv6.") => View::Ipv6,
            n if n.starts_with("vlan.") => View::Dot1q,
            _ => View::Ours,
        }
    }
}

/// Every field name the schema knows (`frame`, `ip.src`, `bth.psn`, ...).
pub fn known() -> Vec<String> {
    let schema: Value =
        serde_json::from_str(include_str!("../../docs/decode.schema.json")).unwrap_or_default();
    let mut out = Vec::new();
    fn walk(prefix: &str, s: &Value, out: &mut Vec<String>) {
        let s = if s["type"] == "array" { &s["items"] } else { s };
        // A frame object inside a frame (an sFlow sample's decoded header) is not a field.
        if s["$ref"] == "#" {
            return;
        }
        match s.get("properties").and_then(Value::as_object) {
            Some(props) if !props.is_empty() => {
                for (k, v) in props {
                    let name = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                    walk(&name, v, out);
                }
            }
            _ if !prefix.is_empty() => out.push(prefix.to_string()),
            _ => {}
        }
    }
    walk("", &schema, &mut out);
    out
}

impl Fields {
    /// Check the names (`-e`) and parse the options (`-E`, tshark's syntax).
    pub fn new(names: &[String], opts: &[String]) -> Result<Fields, String> {
        if names.is_empty() {
            return Err("-T fields needs at least one -e FIELD (e.g. -e frame -e ip.src -e bth.psn)".into());
        }
        let known = known();
        // Another name for a field: its JSON path.
        let path_of = |n: &str| -> String {
            if known.iter().any(|k| k == n) {
                return n.to_string();
            }
            rocescope_tui::filter::json_name(n).map_or_else(|| n.to_string(), str::to_string)
        };
        for n in names {
            for n in path_of(n).split(',') {
                let n = &n.to_string();
                if known.contains(n) || n == TIME_RELATIVE {
                    continue;
                }
                let near: Vec<&str> = known
                    .iter()
                    .filter(|k| k.split('.').next_back() == n.split('.').next_back())
                    .map(String::as_str)
                    .collect();
                let hint = if near.is_empty() {
                    String::new()
                } else {
                    format!(" (did you mean {}?)", near.join(", "))
                };
                let ws: Vec<&str> = rocescope_tui::filter::wireshark_names().collect();
                return Err(format!(
                    "unknown field {n:?}{hint}; the fields are: {}; and Wireshark's names: {}",
                    known.join(", "),
                    ws.join(", ")
                ));
            }
        }
        let mut f = Fields {
            names: names.to_vec(),
            paths: names
                .iter()
                .map(|n| path_of(n).split(',').map(|p| p.split('.').map(str::to_owned).collect()).collect())
                .collect(),
            views: names.iter().map(|n| View::of(n)).collect(),
            separator: "\t".into(),
            aggregator: ",".into(),
            occurrence: Occurrence::All,
            header: false,
        };
        for o in opts {
            let (k, v) = o.split_once('=').ok_or_else(|| format!("-E {o:?}: expected OPTION=VALUE"))?;
            let text = |v: &str| match v {
                "/t" => "\t".to_string(),
                "/s" => " ".to_string(),
                v => v.to_string(),
            };
            match k {
                "header" => f.header = matches!(v, "y" | "yes" | "true" | "1"),
                "separator" => f.separator = text(v),
                "aggregator" => f.aggregator = text(v),
                "occurrence" => {
                    f.occurrence = match v {
                        "f" | "first" => Occurrence::First,
                        "l" | "last" => Occurrence::Last,
                        "a" | "all" => Occurrence::All,
                        _ => return Err(format!("-E occurrence={v}: use f (first), l (last) or a (all)")),
                    }
                }
                _ => {
                    return Err(format!("-E {k}: unknown option (header, separator, aggregator, occurrence)"))
                }
            }
        }
        Ok(f)
    }

    /// The header line.
    pub fn header_line(&self) -> String {
        self.names.join(&self.separator)
    }

    /// One frame's line (without the newline) from its JSON object.
    pub fn line(&self, frame: &Value, out: &mut String) {
        for (i, paths) in self.paths.iter().enumerate() {
            if i > 0 {
                out.push_str(&self.separator);
            }
            let mut values = Vec::new();
            let view = self.views.get(i).copied().unwrap_or(View::Ours);
            let version = || frame.get("ip").and_then(|ip| ip.get("version")).and_then(Value::as_u64);
            for path in paths {
                match view {
                    View::Ipv4 if version() != Some(4) => {}
                    View::Ipv6 if version() != Some(6) => {}
                    View::Dot1q => {
                        // tshark's `vlan`: the 802.1Q (TPID 0x8100) tags only.
                        let tags = frame.get("vlan").and_then(Value::as_array).into_iter().flatten();
                        for t in tags.filter(|t| t.get("tpid").and_then(Value::as_u64) == Some(0x8100)) {
                            collect(t, path.get(1..).unwrap_or(&[]), &mut values);
                        }
                    }
                    _ => collect(frame, path, &mut values),
                }
            }
            for v in &mut values {
                let n = v.parse::<u64>();
                *v = match (view, n) {
                    (View::QpHex, Ok(q)) => format!("0x{q:06x}"),
                    (View::Hex(w), Ok(x)) => format!("0x{x:0w$x}"),
                    (View::IcrcHex, Ok(x)) => format!("0x{:08x}", (x as u32).swap_bytes()),
                    (View::Bit, _) if v.as_str() == "true" => "1".into(),
                    (View::Bit, _) if v.as_str() == "false" => "0".into(),
                    _ => continue,
                };
            }
            let chosen: &[String] = match (self.occurrence, values.len()) {
                (_, 0) => &[],
                (Occurrence::First, _) => &values[..1],
                (Occurrence::Last, n) => &values[n - 1..],
                (Occurrence::All, _) => &values,
            };
            out.push_str(&chosen.join(&self.aggregator));
        }
    }
}

/// The values at `path` under `v`, through arrays (a VLAN stack, the PFC quanta).
fn collect(v: &Value, path: &[String], out: &mut Vec<String>) {
    match (v, path.split_first()) {
        (Value::Array(items), _) => items.iter().for_each(|x| collect(x, path, out)),
        (Value::Object(m), Some((k, rest))) => {
            if let Some(x) = m.get(k) {
                collect(x, rest, out)
            }
        }
        (Value::String(s), None) => out.push(s.clone()),
        (Value::Null, None) => {}
        (Value::Object(_), None) => out.push(String::new()),
        (x, None) => out.push(x.to_string()),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_come_from_the_schema_and_values_from_the_json() {
        let k = known();
        for n in [
            "frame",
            "ts",
            "ts_ns",
            "ip.src",
            "bth.psn",
            "bth.opcode_name",
            "aeth.nak",
            "vlan.pcp",
            "pfc.quanta",
        ] {
            assert!(k.contains(&n.to_string()), "{n} in {k:?}");
        }
        // The filter's short name is the same field (one namespace).
        assert!(Fields::new(&["psn".into()], &[]).is_ok());
        assert!(Fields::new(&["seq".into()], &[]).unwrap_err().contains("unknown field"));
        assert!(Fields::new(&[], &[]).is_err());
        let v: Value = serde_json::from_str(
            r#"{"frame":3,"ip":{"src":"10.0.0.1"},"vlan":[{"pcp":3},{"pcp":5}],"bth":{"psn":7,"se":false}}"#,
        )
        .unwrap();
        let names: Vec<String> =
            ["frame", "ip.src", "vlan.pcp", "aeth.nak", "bth.se"].map(String::from).to_vec();
        let mut s = String::new();
        Fields::new(&names, &[]).unwrap().line(&v, &mut s);
        assert_eq!(s, "3\t10.0.0.1\t3,5\t\tfalse");
        let f =
            Fields::new(&names, &["separator=,".into(), "occurrence=l".into(), "header=y".into()]).unwrap();
        s.clear();
        f.line(&v, &mut s);
        assert_eq!(s, "3,10.0.0.1,5,,false");
        assert!(f.header);
        assert_eq!(f.header_line(), "frame,ip.src,vlan.pcp,aeth.nak,bth.se");
        assert!(Fields::new(&names, &["occurrence=x".into()]).is_err());
        assert!(Fields::new(&names, &["bogus".into()]).is_err());
    }
}

#[cfg(test)]
mod wireshark_views {
    use super::*;

    /// Wireshark's names print as tshark prints them: both ends of `*.addr` (tshark's order),
    /// RETH address and key and the ICRC in hex (the ICRC read big-endian), BTH bits as 0/1.
    #[test]
    fn both_ends_and_tsharks_formats() {
        let v: Value = serde_json::from_str(
            r#"{"frame":1,"eth":{"src":"02:00:00:00:00:01","dst":"02:00:00:00:00:02"},
            "ip":{"version":4,"src":"10.0.0.2","dst":"10.0.0.1","id":4660},
            "bth":{"ackreq":true,"fecn":false},"reth":{"va":139637980823552,"rkey":4660},
            "icrc":{"value":1761941418}}"#,
        )
        .unwrap();
        let names: Vec<String> = [
            "eth.addr",
            "ip.addr",
            "ipv6.addr",
            "infiniband.bth.a",
            "infiniband.bth.fecn",
            "infiniband.reth.va",
            "infiniband.reth.r_key",
            "infiniband.invariant.crc",
            "ip.id",
            "ip",
            "bth.ackreq",
        ]
        .map(String::from)
        .to_vec();
        let mut s = String::new();
        Fields::new(&names, &[]).unwrap().line(&v, &mut s);
        assert_eq!(
            s,
            "02:00:00:00:00:02,02:00:00:00:00:01\t10.0.0.2,10.0.0.1\t\t1\t0\t0x00007f00003e8000\t0x00001234\t0xaa170569\t4660\t10.0.0.2,10.0.0.1\ttrue"
        );
        let e = Fields::new(&["tcp.port".into()], &[]).unwrap_err();
        assert!(e.contains("Wireshark's names: frame.number") && e.contains("eth.addr"), "{e}");
    }
}

#[cfg(test)]
mod names {
    use super::*;

    #[test]
    fn every_other_name_of_a_field_is_one_the_schema_knows() {
        let known = known();
        let joined = |f: &Fields| -> Vec<String> {
            f.paths.iter().map(|p| p.iter().map(|p| p.join(".")).collect::<Vec<_>>().join(",")).collect()
        };
        // Every name `-Y` takes under the table, `-e` takes too (and the reverse:
        // tui::filter's tests parse every Wireshark name).
        for f in rocescope_tui::filter::FIELD_NAMES {
            assert!(!f.json.is_empty(), "{f:?} has no JSON path");
            for path in f.json.split(',') {
                assert!(path == TIME_RELATIVE || known.iter().any(|k| k == path), "{f:?}");
            }
            for name in [f.wireshark, f.short].into_iter().filter(|n| !n.is_empty()) {
                let by_name = Fields::new(&[name.to_string()], &[]).expect(name);
                assert!(
                    by_name.paths[0]
                        .iter()
                        .all(|p| known.contains(&p.join(".")) || p.join(".") == TIME_RELATIVE),
                    "{name}"
                );
            }
            if !f.wireshark.is_empty() {
                let by_ws = Fields::new(&[f.wireshark.to_string()], &[]).expect(f.wireshark);
                assert_eq!(joined(&by_ws), [f.json]);
            }
        }
        let f =
            Fields::new(&["psn".into(), "qp".into(), "frame.time_relative".into(), "ip.addr".into()], &[])
                .unwrap();
        assert_eq!(joined(&f), ["bth.psn", "bth.dqpn", TIME_RELATIVE, "ip.src,ip.dst"]);
        assert_eq!(f.header_line(), "psn\tqp\tframe.time_relative\tip.addr");
        assert!(f.wants_time_relative());
    }
}
