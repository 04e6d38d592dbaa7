//! `decode -T fields -e FIELD ...`: chosen fields of each frame, one line per frame, as
//! tshark's `-T fields`. Field names are the keys of the JSON output (docs/decode-json.md),
//! dotted for nested ones (`ip.src`, `bth.psn`, `vlan.pcp`); the list of valid names comes
//! from `docs/decode.schema.json`, so the two cannot disagree.

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
    separator: String,
    aggregator: String,
    occurrence: Occurrence,
    /// Print the names as the first line.
    pub header: bool,
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
        for n in names {
            if !known.contains(n) {
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
            paths: names.iter().map(|n| n.split('.').map(str::to_owned).collect()).collect(),
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
            collect(frame, path, &mut values);
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
        assert!(Fields::new(&["psn".into()], &[]).unwrap_err().contains("bth.psn"));
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
