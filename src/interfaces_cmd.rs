//! `rocescope interfaces`: like `tcpdump -D`, with a note on RoCE visibility.

use crate::cli::InterfacesArgs;
use std::process::ExitCode;

/// Run the command.
pub fn run(args: &InterfacesArgs) -> anyhow::Result<ExitCode> {
    let list = rocescope_capture::interfaces::list()?;
    if args.json {
        let v: Vec<serde_json::Value> = list
            .iter()
            .map(|i| {
                serde_json::json!({"name": i.name, "description": i.description, "up": i.up, "running": i.running,
                    "loopback": i.loopback, "addresses": i.addresses, "roce": i.roce_note})
            })
            .collect();
        println!("{}", serde_json::Value::Array(v));
        return Ok(ExitCode::SUCCESS);
    }
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
        let desc = i.description.as_deref().map(|d| format!(" ({d})")).unwrap_or_default();
        println!("{}.{}{} [{}]", n + 1, i.name, desc, flags.join(", "));
        if !i.addresses.is_empty() {
            println!("    addresses: {}", i.addresses.join(", "));
        }
        println!("    RoCE: {}", i.roce_note);
    }
    Ok(ExitCode::SUCCESS)
}
