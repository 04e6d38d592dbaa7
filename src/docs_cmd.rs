//! `rocescope completions SHELL` and `rocescope man`: generated from the command line's
//! definition (clap_complete, clap_mangen), so they never drift from it.

use crate::cli::{Cli, CompletionsArgs, ManArgs};
use crate::stdio;
use anyhow::Context;
use clap::CommandFactory;
use rocescope_capture::text;
use std::process::ExitCode;

/// Print the completion script for one shell.
pub fn completions(args: &CompletionsArgs) -> anyhow::Result<ExitCode> {
    let mut cmd = Cli::command();
    let mut buf = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "rocescope", &mut buf);
    write_stdout(&buf)
}

/// Print rocescope.1, or write a page per command into `--dir`.
pub fn man(args: &ManArgs) -> anyhow::Result<ExitCode> {
    let cmd = Cli::command();
    let Some(dir) = &args.dir else {
        let mut buf = Vec::new();
        clap_mangen::Man::new(cmd).render(&mut buf)?;
        return write_stdout(&buf);
    };
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", text::path(dir)))?;
    clap_mangen::generate_to(cmd, dir)
        .with_context(|| format!("cannot write man pages into {}", text::path(dir)))?;
    Ok(ExitCode::SUCCESS)
}

/// Write to stdout; a closed pipe (`| head`) is not an error.
fn write_stdout(buf: &[u8]) -> anyhow::Result<ExitCode> {
    stdio::out(buf).context("writing output")?;
    Ok(ExitCode::SUCCESS)
}
