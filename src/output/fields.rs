//! `decode -T fields -e FIELD ...`: chosen fields of each frame, one line per frame, as
//! tshark's `-T fields`. Field names are the keys of the JSON output (docs/decode-json.md),
//! dotted for nested ones (`ip.src`, `bth.psn`, `vlan.pcp`); the list of valid names comes
//! from `docs/decode.schema.json`, so the two cannot disagree. Wireshark's names
//! (`infiniband.bth.psn`, `ip.dsfield.dscp`, `frame.time_relative`) and the display filter's
//! (`psn`, `dscp`, `qp`) name the same fields ([`rocescope_tui::filter::FIELD_NAMES`]).

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
    paths: Vec<Vec<String>>,
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
        self.paths.iter().any(|p| p.len() == 1 && p[0] == TIME_RELATIVE)
    }
}

/// A field asked for by its Wireshark name is shown as tshark shows it, where our JSON
/// differs: `ip.*` only for IPv4 (`ipv6.*` only for IPv6: our `ip` object holds both), `vlan.*`
/// only for 802.1Q tags (an 802.1ad S-tag is tshark's `ieee8021ad`), the destination QP in hex.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum View {
    Ours,
    Ipv4,
    Ipv6,
    Dot1q,
    QpHex,
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
            let n = &path_of(n);
            if !known.contains(n) && n != TIME_RELATIVE {
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
                return Err(format!("unknown field {n:?}{hint}; the fields are: {}", known.join(", ")));
            }
        }
        let mut f = Fields {
            names: names.to_vec(),
            paths: names.iter().map(|n| path_of(n).split('.').map(str::to_owned).collect()).collect(),
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
        for (i, path) in self.paths.iter().enumerate() {
            if i > 0 {
                out.push_str(&self.separator);
            }
            let mut values = Vec::new();
            let view = self.views.get(i).copied().unwrap_or(View::Ours);
            let version = || frame.get("ip").and_then(|ip| ip.get("version")).and_then(Value::as_u64);
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
            if view == View::QpHex {
                for v in &mut values {
                    if let Ok(q) = v.parse::<u32>() {
                        *v = format!("0x{q:06x}");
                    }
                }
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
mod names {
    use super::*;

    #[test]
    fn every_other_name_of_a_field_is_one_the_schema_knows() {
        let known = known();
        for f in rocescope_tui::filter::FIELD_NAMES {
            assert!(
                f.json.is_empty() || f.json == TIME_RELATIVE || known.iter().any(|k| k == f.json),
                "{f:?}"
            );
            if !f.json.is_empty() && !f.wireshark.is_empty() {
                let by_ws = Fields::new(&[f.wireshark.to_string()], &[]).expect(f.wireshark);
                assert_eq!(by_ws.paths[0].join("."), f.json);
            }
        }
        let f = Fields::new(&["psn".into(), "qp".into(), "frame.time_relative".into()], &[]).unwrap();
        assert_eq!(
            f.paths.iter().map(|p| p.join(".")).collect::<Vec<_>>(),
            ["bth.psn", "bth.dqpn", TIME_RELATIVE]
        );
        assert_eq!(f.header_line(), "psn\tqp\tframe.time_relative");
        assert!(f.wants_time_relative());
    }
}
