//! `rocescope completions SHELL` and `rocescope man`: generated from the command line's
//! definition (clap_complete, clap_mangen), so they never drift from it.

use crate::cli::{Cli, CompletionsArgs, ManArgs};
use crate::stdio;
use crate::tmpfile::Temp;
use anyhow::Context;
use clap::CommandFactory;
use rocescope_capture::text;
use std::io::Write;
use std::path::Path;
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
    crate::tmpfile::remove_dead_leftovers(dir, "rocescope", ".tmp");
    // As clap_mangen::generate_to names and lists the pages, but each written under a
    // temporary name and renamed into place: a symlink planted at a page's name is replaced,
    // never written through (docs/reliability.md).
    let mut cmd = cmd.disable_help_subcommand(true);
    cmd.build();
    write_pages(&cmd, dir).with_context(|| format!("cannot write man pages into {}", text::path(dir)))?;
    Ok(ExitCode::SUCCESS)
}

/// Write the page of `cmd` and of each of its visible subcommands into `dir`.
fn write_pages(cmd: &clap::Command, dir: &Path) -> anyhow::Result<()> {
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        write_pages(sub, dir)?;
    }
    let man = clap_mangen::Man::new(cmd.clone());
    let name = man.get_filename();
    let mut page = Vec::new();
    man.render(&mut page)?;
    let mut temp = Temp::create(dir, &name, ".tmp")
        .with_context(|| format!("cannot create a temporary file in {}", text::path(dir)))?;
    temp.file.write_all(&page).with_context(|| format!("cannot write {}", text::path(&temp.path)))?;
    let to = dir.join(&name);
    temp.persist(&to).with_context(|| format!("cannot write {}", text::path(&to)))?;
    Ok(())
}

/// Write to stdout; a closed pipe (`| head`) is not an error.
fn write_stdout(buf: &[u8]) -> anyhow::Result<ExitCode> {
    stdio::out(buf).context("writing output")?;
    Ok(ExitCode::SUCCESS)
}
