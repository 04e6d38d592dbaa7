//! The exit statuses of every command, in one table (README "Exit status", every command's
//! `--help` and man page): the same number means the same thing in every command, so a
//! pipeline gates on `report` and `compare` alike.

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

/// The table, as `--help` and the man pages print it.
pub const TABLE: &str = "Exit status (the same in every command; README \"Exit status\"):
  0        done: analysed, compared, decoded or captured; nothing failed the run
  1        could not read or write: no such file, no permission, not a capture, a capture cut
           short (what was read is still reported), a --counters, --nccl-env or --baseline
           file that is not one (the error names the line), a side compare cannot read
  2        usage: an unknown option, a value out of range, a window with no frame
  3        report: the QoS audit found violations of the expectations given (--expect-*,
           --lossless, --baseline), or saw no RoCE to check them on (not with --fail-on never)
  4        the gate: report found a finding, compare made a verdict, at or above --fail-on
           (report: --fail-on critical, warning or info; compare: warning by default)
  5        compare: nothing to compare, neither side holds any RoCE (never a pass,
           whatever --fail-on)
  130/143  cut short by SIGINT/SIGTERM: report, decode, capture and export write what they
           read (a report marked partial), compare gives no verdict (it says so), the
           terminal UI restores the terminal";
