//! `rocescope interfaces`: like `tcpdump -D`, with a note on RoCE visibility.

use crate::cli::InterfacesArgs;
use crate::stdio;
use anyhow::Context;
use rocescope_capture::text::escape;
use std::fmt::Write;
use std::process::ExitCode;

/// Run the command. A closed pipe (`| head`) ends it quietly.
pub fn run(args: &InterfacesArgs) -> anyhow::Result<ExitCode> {
    let list = rocescope_capture::interfaces::list()?;
    let mut text = String::new();
    if args.json {
        let v: Vec<serde_json::Value> = list
            .iter()
            .map(|i| {
                serde_json::json!({"name": i.name, "description": i.description, "up": i.up, "running": i.running,
                    "loopback": i.loopback, "addresses": i.addresses, "roce": i.roce_note})
            })
            .collect();
        let _ = writeln!(text, "{}", stdio::json_safe(&serde_json::Value::Array(v).to_string()));
    } else {
        for (n, i) in list.iter().enumerate() {
            let mut flags = Vec::new();
            if i.up {
                flags.push("Up");
            }
            if i.running {
                flags.push("Running");
            }
            if i.loopback {
                flags.push("Loopback");
            }
            // Interface names may hold control characters (Linux refuses only '/', ':' and
            // white space): escaped, as every name printed.
            let desc = i.description.as_deref().map(|d| format!(" ({})", escape(d))).unwrap_or_default();
            let _ = writeln!(text, "{}.{}{} [{}]", n + 1, escape(&i.name), desc, flags.join(", "));
            if !i.addresses.is_empty() {
                let _ = writeln!(text, "    addresses: {}", escape(&i.addresses.join(", ")));
            }
            let _ = writeln!(text, "    RoCE: {}", escape(&i.roce_note));
        }
    }
    stdio::out(text.as_bytes()).context("writing the interface list")?;
    Ok(ExitCode::SUCCESS)
}
