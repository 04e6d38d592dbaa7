//! `rocescope`: capture and analyse RoCEv2 traffic from a terminal.
//!
//! Subcommands live in their own modules; this file parses the command line and maps
//! failures to exit codes (0 success, 1 error, 2 usage).

mod capture_cmd;
mod cli;
mod decode_cmd;
mod driver;
mod export_cmd;
mod interfaces_cmd;
mod metrics;
mod output;
mod report_cmd;
mod tui_cmd;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    let result = match cli.command {
        None if cli.tui.source.read.is_empty() && cli.tui.source.interface.is_none() => {
            let _ = <cli::Cli as clap::CommandFactory>::command().print_help();
            return ExitCode::from(2);
        }
        None if std::io::IsTerminal::is_terminal(&std::io::stdout()) => tui_cmd::run(&cli.tui),
        None => report_cmd::run(&cli::ReportArgs {
            source: cli.tui.source,
            json: false,
            max_connections: 50,
            analysis: cli.tui.analysis,
            decoder: cli.tui.decoder,
        }),
        Some(cli::Command::Decode(args)) => decode_cmd::run(&args),
        Some(cli::Command::Capture(args)) => capture_cmd::run(&args),
        Some(cli::Command::Interfaces(args)) => interfaces_cmd::run(&args),
        Some(cli::Command::Report(args)) => report_cmd::run(&args),
        Some(cli::Command::Tui(args)) => tui_cmd::run(&args),
        Some(cli::Command::Export(args)) => export_cmd::run(&args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("rocescope: {e:#}");
            ExitCode::from(1)
        }
    }
}
