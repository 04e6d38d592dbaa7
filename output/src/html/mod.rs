//! The report as one self-contained HTML page (`report --html FILE`, docs/html-report.md):
//! the verdict and the findings first, then charts of the fabric's time series, the
//! iteration rhythm, the ECMP paths, the QoS audit and the top QPs, readable offline years
//! later in any browser.
//!
//! Everything is in the file: inline SVG drawn with `plotters` ([`charts`]), one inline
//! stylesheet, no script, no font, no image or link to fetch; a Content-Security-Policy
//! meta tag (`default-src 'none'`) says so to the browser too. The page is made from the
//! figures of the report `--json` writes (the same [`StreamedReport`], nothing
//! recomputed), and each chart carries the values it plots as `data-*` attributes (the
//! `id`s and attributes are listed in docs/html-report.md), so a test or a script can read
//! them back and compare them with the JSON.
//!
//! The page is built once the capture is read: nothing here runs per frame.

pub mod charts;
mod fabric;
mod file;
mod page;
mod qps;
mod tables;
mod timeline;

pub use file::HtmlFile;

use rocescope_analyzer::report::StreamedReport;

/// How many connections the top QPs section shows (the worst first, as the text report
/// lists them), each with its flows.
pub const TOP_CONNECTIONS: usize = 10;

/// The page for `report`. `source` names the capture (or captures, or interface) as the
/// text report's first line does.
pub fn render(report: &StreamedReport<'_>, source: &str) -> String {
    page::build(report, source)
}
