//! The exit statuses of every command, in one table: the same number means the same thing in
//! every command, so a pipeline gates on `report` and `compare` alike.
//!
//! [`ROWS`] is the one hand-written copy of the table. Every command's `--help` and man page
//! print it ([`help_table`]), and README.md's "Exit status" table is held to it, row for row,
//! by a test here (`tests/exit_status.rs` checks each command's `--help` and man page against
//! the README's rows).

/// Done: analysed, compared, decoded, captured; nothing failed the run.
pub const OK: u8 = 0;
/// Could not read (or write): no such file, no permission, not a capture, a capture cut
/// short, an option's file that is not what it should be.
pub const READ: u8 = 1;
/// Usage: an unknown option, a value out of range, a window with no frame.
pub const USAGE: u8 = 2;
/// `report`: the QoS audit found violations of the expectations the user gave.
pub const VIOLATIONS: u8 = 3;
/// The gate: `report` found a finding, `compare` made a verdict, at or above `--fail-on`.
pub const GATE: u8 = 4;
/// `compare`: nothing to compare (neither side holds any RoCE): never a pass.
pub const NOTHING: u8 = 5;

/// One row of the table: the status (or statuses) and when a command exits with it, in
/// Markdown (code in backticks), as README.md shows it.
pub struct Row {
    /// The status, or two that mean the same (`130, 143`).
    pub status: &'static str,
    /// When a command exits with it.
    pub when: &'static str,
}

/// The table: README.md shows it as it is, `--help` and the man pages without the backticks.
pub const ROWS: &[Row] = &[
    Row {
        status: "0",
        when: "done: analysed, compared, decoded or captured; nothing failed the run (findings alone do \
               not, unless `--fail-on` says so)",
    },
    Row {
        status: "1",
        when: "could not read or write: no such file, no permission, not a capture, a capture cut short \
               (what was read is still reported), a `--counters`, `--nccl-env` or `--baseline` file that \
               is not one (the error names the line), a `compare` side that cannot be read",
    },
    Row {
        status: "2",
        when: "usage: an unknown option or a value out of range; a `--from`/`--to` window that holds no \
               frame of the capture (`--from` not before `--to`, or the window outside the capture: the \
               message says when the capture's frames are)",
    },
    Row {
        status: "3",
        when: "`report`: the QoS audit found violations of the expectations you gave (`--expect-*`, \
               `--lossless`, `--baseline`); an audit given expectations that saw no RoCE is one (it \
               checked nothing). A pause on a priority no RoCE uses is listed as a violation without \
               expectations, but fails the run only when `--lossless` leaves that priority out; \
               `--fail-on never` makes it 0",
    },
    Row {
        status: "4",
        when: "the gate: `report` found a finding at or above `--fail-on` (`critical`, `warning`, or \
               `info` for any; checked before 3), `compare` made a verdict at or above its `--fail-on` \
               (`warning` by default)",
    },
    Row {
        status: "5",
        when: "`compare`: nothing to compare, neither side holds any RoCE (never a pass, whatever \
               `--fail-on`)",
    },
    Row {
        status: "130, 143",
        when: "cut short by Ctrl-C (SIGINT) or SIGTERM: `report` writes the report of the frames read, \
               marked partial on its first line (`interrupted` in the JSON), as tcpdump does; `decode`, \
               `capture` and `export` stop cleanly; `compare` gives no verdict from a side half read and \
               says so; the terminal UI restores the terminal",
    },
];

/// The first line of the table in `--help` and the man pages.
pub const HELP_TITLE: &str = "Exit status (the same in every command; README \"Exit status\"):";

/// Columns of `--help`'s table: the text wraps at this width.
const HELP_WIDTH: usize = 92;
/// Where a row's text starts in `--help`'s table.
const HELP_INDENT: usize = 11;

/// The table as every command's `--help` and man page print it (`after_long_help`): the rows
/// of [`ROWS`] without backticks, each wrapped at 92 columns under a hanging indent.
pub fn help_table() -> String {
    let mut out = String::from(HELP_TITLE);
    for row in ROWS {
        out.push('\n');
        let mut line = format!("  {:<width$}", row.status, width = HELP_INDENT - 2);
        let mut fresh = true;
        for word in row.when.split_whitespace() {
            let word = word.replace('`', "");
            if !fresh && line.chars().count() + 1 + word.chars().count() > HELP_WIDTH {
                out.push_str(line.trim_end());
                out.push('\n');
                line = " ".repeat(HELP_INDENT);
                fresh = true;
            }
            if !fresh {
                line.push(' ');
            }
            line.push_str(&word);
            fresh = false;
        }
        out.push_str(line.trim_end());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table in Markdown, as README.md's "Exit status" section holds it.
    fn markdown_table() -> String {
        let mut out = String::from("| status | when |\n|---|---|\n");
        for row in ROWS {
            out.push_str(&format!("| {} | {} |\n", row.status, row.when));
        }
        out
    }

    /// README.md's table is this one, row for row: the one hand-written copy is [`ROWS`].
    #[test]
    fn the_readme_table_is_the_rows() {
        let readme = include_str!("../README.md");
        let table = markdown_table();
        assert!(
            readme.contains(&table),
            "README.md's \"Exit status\" table differs from src/exit.rs's ROWS; it should read:\n{table}"
        );
        assert_eq!(readme.matches("| status | when |").count(), 1, "the table is in the README once");
    }

    #[test]
    fn the_help_table_wraps_every_row_whole() {
        let help = help_table();
        assert!(help.starts_with(HELP_TITLE));
        assert!(help.lines().all(|l| l.chars().count() <= HELP_WIDTH), "{help}");
        assert!(!help.contains('`'));
        let flat = help.split_whitespace().collect::<Vec<_>>().join(" ");
        for row in ROWS {
            let want = format!("{} {}", row.status, row.when.replace('`', ""));
            let want = want.split_whitespace().collect::<Vec<_>>().join(" ");
            assert!(flat.contains(&want), "{want}\nnot in\n{help}");
        }
        // Each row starts a line of its own at the left, its status in the first column.
        for row in ROWS {
            assert!(help.lines().any(|l| l.starts_with(&format!("  {} ", row.status))), "{}", row.status);
        }
    }

    /// Statuses named in the table are the constants above.
    #[test]
    fn the_rows_are_the_statuses() {
        let named: Vec<&str> = ROWS.iter().flat_map(|r| r.status.split(", ")).collect();
        for code in [OK, READ, USAGE, VIOLATIONS, GATE, NOTHING] {
            assert!(named.contains(&code.to_string().as_str()), "{code}");
        }
        assert!(named.contains(&"130") && named.contains(&"143"));
    }
}
