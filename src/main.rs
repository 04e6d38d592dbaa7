//! `rocescope`: capture and analyse RoCEv2 traffic from a terminal.
//!
//! Subcommands live in their own modules; this file parses the command line and maps
//! failures to exit codes (one table for every command: [`exit`]). Output goes through [`stdio`], not
//! `println!` or `eprintln!`, which panic when the output fails.

mod capture_cmd;
mod cli;
mod compare_cmd;
mod decode_cmd;
mod divided;
mod docs_cmd;
mod driver;
mod exit;
mod export_cmd;
mod held;
mod input;
mod interfaces_cmd;
mod output;
mod pipelined;
mod progress;
mod report_cmd;
mod signals;
mod stdio;
mod trace_out;
mod tui_cmd;
mod window;

use clap::Parser;
// The outputs live in their own library crate (rocescope-output), under their old names here.
use rocescope_output::{metrics, parquet as parquet_out, tmpfile};
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        // Help, version, and usage errors; written by clap, their failures handled here.
        Err(e) => return stdio::exit_status(stdio::clap_exit(&e)),
    };
    // Files given without -r are inputs, as tcpdump -r and tshark -r read them.
    let top = cli.command.is_none();
    let source = match cli.command.as_mut() {
        Some(c) => c.source_mut(),
        None => Some(&mut cli.tui.source),
    };
    if let Some(Err(msg)) = source.map(|s| s.take_files(top)) {
        let mut cmd = <cli::Cli as clap::CommandFactory>::command();
        let e = cmd.error(clap::error::ErrorKind::UnknownArgument, msg);
        return stdio::exit_status(stdio::clap_exit(&e));
    }
    if let Some(d) = cli.command.as_ref().map_or(Some(&cli.tui.decoder), cli::Command::decoder) {
        if let Err(msg) = d.check() {
            let mut cmd = <cli::Cli as clap::CommandFactory>::command();
            let e = cmd.error(clap::error::ErrorKind::TooManyValues, msg);
            return stdio::exit_status(stdio::clap_exit(&e));
        }
    }
    // An output that is also an input: refused before anything is written.
    if let Some(msg) = cli.command.as_ref().and_then(cli::Command::output_is_input) {
        let mut cmd = <cli::Cli as clap::CommandFactory>::command();
        let e = cmd.error(clap::error::ErrorKind::ArgumentConflict, msg);
        return stdio::exit_status(stdio::clap_exit(&e));
    }
    // A --from/--to window that cannot hold a frame: a usage error before anything is read.
    let window =
        cli.command.as_ref().map_or(Some(&cli.tui.source), cli::Command::source).map(cli::SourceArgs::window);
    if let Some(Err(msg)) = window.map(|w| w.check()) {
        let mut cmd = <cli::Cli as clap::CommandFactory>::command();
        let e = cmd.error(clap::error::ErrorKind::ArgumentConflict, msg);
        return stdio::exit_status(stdio::clap_exit(&e));
    }
    // `compare`: two sides and a gate that reads, or a usage error.
    if let Some(cli::Command::Compare(a)) = &cli.command {
        if let Err(msg) = a.sides().and_then(|_| a.gate().map(|_| ())) {
            let mut cmd = <cli::Cli as clap::CommandFactory>::command();
            cmd.build();
            let mut sub = cmd.find_subcommand("compare").cloned().unwrap_or(cmd);
            let e = sub.error(clap::error::ErrorKind::ValueValidation, msg);
            return stdio::exit_status(stdio::clap_exit(&e));
        }
    }
    if cli.list_interfaces {
        return finish(interfaces_cmd::run(&cli::InterfacesArgs { json: false }));
    }
    if let Some(source) = cli.command.as_ref().map_or(Some(&cli.tui.source), cli::Command::source) {
        let bare = cli.command.is_none() && std::env::args_os().len() == 1;
        if !bare && source.read.is_empty() && source.interface.is_none() && source.sflow.is_none() {
            let mut cmd = <cli::Cli as clap::CommandFactory>::command();
            cmd.build();
            let name = cli.command.as_ref().map(cli::Command::name);
            let mut cmd = match name.and_then(|n| cmd.find_subcommand(n)) {
                Some(sub) => sub.clone(),
                None => cmd,
            };
            let e = cmd.error(
                clap::error::ErrorKind::MissingRequiredArgument,
                "give a capture file (-r FILE) or an interface (-i IFACE); `rocescope -D` lists the interfaces",
            );
            return stdio::exit_status(stdio::clap_exit(&e));
        }
    }
    let result = match cli.command {
        None if cli.tui.source.read.is_empty()
            && cli.tui.source.interface.is_none()
            && cli.tui.source.sflow.is_none() =>
        {
            // Usage: status 2 whether or not the help could be written.
            let printed = <cli::Cli as clap::CommandFactory>::command()
                .print_help()
                .and_then(|()| std::io::Write::flush(&mut std::io::stdout()));
            match printed {
                Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                    stdio::note!("rocescope: writing the help to standard output: {e}");
                }
                _ => {}
            }
            return ExitCode::from(exit::USAGE);
        }
        None if std::io::IsTerminal::is_terminal(&std::io::stdout()) => tui_cmd::run(&cli.tui),
        None => report_cmd::run(&cli::ReportArgs {
            source: cli.tui.source,
            json: false,
            quiet: false,
            fail_on: cli::FailOn::Audit,
            max_connections: 50,
            parquet: None,
            trace: None,
            trace_max_events: rocescope_output::trace::DEFAULT_MAX_EVENTS,
            html: None,
            threads: None,
            counters: cli.tui.counters,
            counters_host: cli.tui.counters_host,
            nccl: Default::default(),
            progress: cli::ProgressArgs::from_env(),
            analysis: cli.tui.analysis,
            decoder: cli.tui.decoder,
        }),
        Some(cli::Command::Decode(args)) => decode_cmd::run(&args),
        Some(cli::Command::Capture(args)) => capture_cmd::run(&args),
        Some(cli::Command::Interfaces(args)) => interfaces_cmd::run(&args),
        Some(cli::Command::Report(args)) => report_cmd::run(&args),
        Some(cli::Command::Tui(args)) => tui_cmd::run(&args),
        Some(cli::Command::Export(args)) => export_cmd::run(&args),
        Some(cli::Command::Compare(args)) => compare_cmd::run(&args),
        Some(cli::Command::Completions(args)) => docs_cmd::completions(&args),
        Some(cli::Command::Man(args)) => docs_cmd::man(&args),
    };
    finish(result)
}

/// Map a command's result to the exit status (1, or 2 for a [`window::Usage`] error),
/// printing the error (and its causes) once, its control characters escaped. A message that
/// could not be written to standard error makes a success status 1 ([`stdio::exit_status`]).
fn finish(result: anyhow::Result<ExitCode>) -> ExitCode {
    match result {
        Ok(code) => stdio::exit_status(code),
        Err(e) => {
            // stderr may be closed or full: nothing more can be said then.
            stdio::note!("rocescope: {e:#}");
            // A usage error found while running (a window that holds no frame): 2, as for a
            // bad option.
            if let Some(signals::Interrupted(sig)) = e.downcast_ref::<signals::Interrupted>() {
                // Cut short by a signal: 128 + its number, as a shell says.
                return ExitCode::from(u8::try_from(128 + sig).unwrap_or(130));
            }
            ExitCode::from(if e.downcast_ref::<window::Usage>().is_some() { exit::USAGE } else { exit::READ })
        }
    }
}
