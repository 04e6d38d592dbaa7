//! `rocescope`: capture and analyse RoCEv2 traffic from a terminal.
//!
//! Subcommands live in their own modules; this file parses the command line and maps
//! failures to exit codes (0 success, 1 error, 2 usage).

mod capture_cmd;
mod cli;
mod decode_cmd;
mod driver;
mod interfaces_cmd;
mod output;
mod report_cmd;
mod tui_cmd;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    let result = match cli.command {
        cli::Command::Decode(args) => decode_cmd::run(&args),
        cli::Command::Capture(args) => capture_cmd::run(&args),
        cli::Command::Interfaces(args) => interfaces_cmd::run(&args),
        cli::Command::Report(args) => report_cmd::run(&args),
        cli::Command::Tui(args) => tui_cmd::run(&args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("rocescope: {e:#}");
            ExitCode::from(1)
        }
    }
}
