//! The page's file: created (under a temporary name) before any frame is read, so a
//! directory that cannot be written is said at once, and renamed into place only once the
//! page is whole ([`crate::tmpfile`]).

use crate::tmpfile::Temp;
use std::io::Write;
use std::path::{Path, PathBuf};

/// `report --html FILE` being written.
pub struct HtmlFile {
    temp: Temp,
    to: PathBuf,
}

impl HtmlFile {
    /// Start writing `path`: a temporary file in its directory (the current one for a bare
    /// name). The error names the file.
    pub fn create(path: &Path) -> anyhow::Result<HtmlFile> {
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if name.is_empty() {
            anyhow::bail!("cannot write the HTML report {}: not a file name", display(path));
        }
        crate::tmpfile::remove_dead_leftovers(dir, &name, ".tmp");
        let temp = Temp::create(dir, &name, ".tmp")
            .map_err(|e| anyhow::anyhow!("cannot write the HTML report {}: {e}", display(path)))?;
        Ok(HtmlFile { temp, to: path.to_path_buf() })
    }

    /// Write the page and give the file its name. The error names the file; no partial
    /// file is left under it.
    pub fn finish(mut self, page: &str) -> anyhow::Result<()> {
        let written = self.temp.file.write_all(page.as_bytes()).and_then(|()| self.temp.file.flush());
        let to = self.to;
        written
            .and_then(|()| self.temp.persist(&to))
            .map_err(|e| anyhow::anyhow!("cannot write the HTML report {}: {e}", display(&to)))
    }
}

fn display(p: &Path) -> String {
    rocescope_capture::text::path(p)
}
